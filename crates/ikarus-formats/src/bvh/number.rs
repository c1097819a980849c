//! Decimal number parsing for BVH: a correctly rounded fast path for the short decimals BVH
//! files are made of, falling back to the standard library for everything else.

/// Powers of ten exactly representable in f64.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The value of the decimal digit at `bytes[i]`, `None` past the end or at any other byte.
#[inline]
fn digit_at(bytes: &[u8], i: usize) -> Option<u8> {
    let d = bytes.get(i)?.wrapping_sub(b'0');
    (d <= 9).then_some(d)
}

/// Appends the digit `d` to `mantissa` while it holds fewer than 19 significant digits
/// (`significant` counts them from the first non-zero one); returns `false`, changing nothing,
/// when it is full.
#[inline]
fn push_digit(d: u8, mantissa: &mut u64, significant: &mut u32) -> bool {
    if *significant >= 19 {
        return false;
    }
    *mantissa = *mantissa * 10 + u64::from(d);
    if *mantissa != 0 {
        *significant += 1;
    }
    true
}

/// Parses a decimal number (`[+-]digits[.digits][(e|E)[+-]digits]`, at least one digit, `.5` and
/// `5.` allowed) starting at `start`. Returns the value and the index just past it, or `None`
/// when the bytes there are not such a number. `nan` and `inf` are not numbers here; values that
/// overflow to infinity are returned as infinity for the caller to reject.
#[inline]
pub(crate) fn parse_f64(bytes: &[u8], start: usize) -> Option<(f64, usize)> {
    let mut i = start;
    let negative = take_sign(bytes, &mut i);
    let mut mantissa: u64 = 0;
    let mut significant = 0u32; // significant digits in the mantissa
    let mut dropped = false; // digits beyond 19 significant ones
    let mut exponent: i64 = 0;
    let mut any_digit = false;
    while let Some(d) = digit_at(bytes, i) {
        any_digit = true;
        if !push_digit(d, &mut mantissa, &mut significant) {
            dropped = true;
            exponent += 1;
        }
        i += 1;
    }
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        while let Some(d) = digit_at(bytes, i) {
            any_digit = true;
            if push_digit(d, &mut mantissa, &mut significant) {
                exponent -= 1;
            } else {
                dropped = true;
            }
            i += 1;
        }
    }
    if !any_digit {
        return None;
    }
    if let Some(b'e' | b'E') = bytes.get(i) {
        i += 1;
        let exp_negative = take_sign(bytes, &mut i);
        let digits_start = i;
        let mut e: i64 = 0;
        while let Some(d) = digit_at(bytes, i) {
            e = (e * 10 + i64::from(d)).min(1_000_000);
            i += 1;
        }
        if i == digits_start {
            return None;
        }
        exponent += if exp_negative { -e } else { e };
    }
    // Clinger's fast path: an exact mantissa below 2^53 times an exact power of ten is one
    // correctly rounded operation.
    let value = if !dropped && mantissa < (1 << 53) && (-22..=22).contains(&exponent) {
        let m = mantissa as f64;
        if exponent >= 0 {
            m * POW10[exponent as usize]
        } else {
            m / POW10[(-exponent) as usize]
        }
    } else {
        let text = std::str::from_utf8(&bytes[start..i]).ok()?;
        let parsed: f64 = text.parse().ok()?;
        return Some((parsed, i));
    };
    Some((if negative { -value } else { value }, i))
}

/// Skips an optional `+` or `-` at `*i`; true for `-`.
#[inline]
fn take_sign(bytes: &[u8], i: &mut usize) -> bool {
    match bytes.get(*i) {
        Some(b'-') => {
            *i += 1;
            true
        }
        Some(b'+') => {
            *i += 1;
            false
        }
        _ => false,
    }
}

/// Parses an unsigned decimal integer; `None` unless it is all digits and fits in a `u64`.
pub(crate) fn parse_u64(token: &[u8]) -> Option<u64> {
    if token.is_empty() {
        return None;
    }
    token.iter().try_fold(0u64, |acc, &c| {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        acc.checked_mul(10)?.checked_add(u64::from(d))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_all(s: &str) -> Option<f64> {
        match parse_f64(s.as_bytes(), 0) {
            Some((v, end)) if end == s.len() => Some(v),
            _ => None,
        }
    }

    #[test]
    fn accepts_bvh_number_forms() {
        for (text, value) in [
            ("0", 0.0),
            ("-12.5", -12.5),
            ("+3", 3.0),
            (".0083333", 0.008_333_3),
            ("5.", 5.0),
            ("-3.38756e-05", -3.387_56e-5),
            ("1E3", 1000.0),
            ("0.000000000000000000000000000123", 1.23e-28),
            ("123456789012345678901234567890", 1.234_567_890_123_456_8e29),
        ] {
            assert_eq!(parse_all(text), Some(value), "{text}");
        }
        for bad in [
            "", "-", ".", "e5", "1e", "1e+", "nan", "inf", "--1", "1.2.3",
        ] {
            assert_eq!(parse_all(bad), None, "{bad}");
        }
        assert_eq!(parse_all("1e400"), Some(f64::INFINITY));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"42"), Some(42));
    }

    proptest! {
        #[test]
        fn matches_std_on_random_decimals(v in any::<f64>().prop_filter("finite", |v| v.is_finite()), digits in 0usize..12) {
            for text in [format!("{v}"), format!("{v:e}"), format!("{v:.digits$}"), format!("{:.digits$}", v / 1e6)] {
                let expected: f64 = text.parse().unwrap();
                prop_assert_eq!(parse_all(&text), Some(expected), "{}", text);
            }
        }
    }
}
