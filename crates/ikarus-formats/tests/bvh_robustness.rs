//! The fuzz target's invariant, run in CI: random token soup built from BVH's vocabulary never
//! panics the reader, and whatever parses writes and parses again with the same hierarchy (names
//! as single tokens).
//! Inputs the fuzzer ever finds crashing go into `REGRESSIONS`.

#[path = "common/bvh_round_trip.rs"]
mod bvh_round_trip;

use bvh_round_trip::check;
use ikarus_formats::bvh::{Bvh, BvhReadOptions};
use proptest::prelude::*;
use std::fmt::Write as _;

/// Crashing inputs found by `cargo fuzz run bvh`, then hand-picked edge cases.
const REGRESSIONS: &[&[u8]] = &[
    // Fuzz crash 8c2366f4: a joint name ending in `{` was written back and re-read as the brace.
    b"HIERARCHY\x0aROOT H{\x0a\x09OFFSET 4 0 0\x0a\x09JOINT Spi\x09{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{{\x0a\x09\x09OFFSET 0 10 0\x0a\x09\x09\x0a\x09}\x0a}\x0aMOTION\x0aFrames: 8\x0aFrame Time:\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0c\x0d2",
    b"",
    b"HIERARCHY",
    b"HIERARCHY\nROOT",
    b"HIERARCHY\nROOT a {\nOFFSET 0 0 0\n}\nMOTION\nFrames: 18446744073709551615\nFrame Time: 1\n",
    b"HIERARCHY\nROOT a {\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nMOTION\nFrames: 1\nFrame Time: 1e-320\n5",
    b"HIERARCHY\nROOT a {\nOFFSET 0 0 0\nCHANNELS 1 Xrotation\n}\nMOTION\nFrames: 1\nFrame Time: 1\n1e308",
    b"HIERARCHY\nROOT a {\nOFFSET 1e308 -1e308 0\nCHANNELS 1 Xposition\n}\nMOTION\nFrames: 1\nFrame Time: 1\n1e308",
    b"HIERARCHY\nROOT a_End {\nOFFSET 0 0 0\nJOINT a {\nOFFSET 0 0 0\nEnd Site {\nOFFSET 0 0 0\n}\n}\n}\nMOTION\nFrames: 0\nFrame Time: 1\n",
    b"\xEF\xBB\xBFHIERARCHY\nROOT \xff\xfe {\nOFFSET 0 0 0\n}\nMOTION\nFrames: 0\nFrame Time: 1\n",
    b"HIERARCHY\nROOT a {\nOFFSET 0 0 0\nEnd Site {\nOFFSET 0 0 0\nEnd Site\n",
    b"HIERARCHY\nROOT a\x0b {\nOFFSET 0 0 0\n}\nMOTION\nFrames: 0\nFrame Time: 1\n",
];

#[test]
fn regressions_do_not_panic() {
    for input in REGRESSIONS {
        check(input);
    }
}

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "HIERARCHY",
            "ROOT",
            "JOINT",
            "End",
            "Site",
            "OFFSET",
            "CHANNELS",
            "{",
            "}",
            "MOTION",
            "Frames:",
            "Frame",
            "Time:",
            "Xposition",
            "Yposition",
            "Zposition",
            "Xrotation",
            "Yrotation",
            "Zrotation",
            "0",
            "1",
            "3",
            "6",
            "7",
            "-1",
            "1e400",
            "nan",
            "0.5",
            ".25",
            "-3.38756e-05",
            "\n",
            "\r\n",
            "\t",
            " ",
            "Hips",
            "Hips_End",
        ])
        .prop_map(str::to_owned),
        any::<f64>().prop_map(|v| v.to_string()),
        "[ -~]{0,6}",
    ]
}

fn document() -> impl Strategy<Value = String> {
    // A valid skeleton prefix half the time, so the motion section is reached often.
    (any::<bool>(), prop::collection::vec(token(), 0..80)).prop_map(|(prefix, tokens)| {
        let mut text = if prefix {
            String::from(
                "HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n",
            )
        } else {
            String::new()
        };
        for t in tokens {
            text.push_str(&t);
            text.push(' ');
        }
        text
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn token_soup_never_panics(text in document()) {
        check(text.as_bytes());
    }

    #[test]
    fn valid_files_with_random_values_round_trip(values in prop::collection::vec(-1e6..1e6f64, 9 * 3)) {
        let mut text = String::from("HIERARCHY\nROOT Hips\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\nJOINT Spine\n{\nOFFSET 0 10 0\nCHANNELS 3 Yrotation Zrotation Xrotation\nEnd Site\n{\nOFFSET 0 5 0\n}\n}\n}\nMOTION\nFrames: 3\nFrame Time: 0.25\n");
        for row in values.chunks(9) {
            for v in row {
                write!(text, "{v} ").unwrap();
            }
            text.push('\n');
        }
        let bvh = Bvh::parse(text.as_bytes(), &BvhReadOptions::default()).unwrap();
        prop_assert_eq!(&bvh.values, &values);
        check(text.as_bytes());
    }
}
