//! The one random generator of the tests, benches and runners (splitmix64), and its
//! geometric draws.
//!
//! Every draw below is part of a test's cases: changing one (its algorithm, a threshold, the
//! order of its calls, even `v.normalize()` for `v / v.length()`) changes the cases of every
//! test seeded through it.

use glam::{DQuat, DVec3};

/// A small deterministic random source for tests and benches (splitmix64): the same numbers
/// on every machine, no dependency. The one copy of it outside the solvers' own restarts
/// (`ikarus_solve`'s driver, which cannot depend on test data).
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The next value, uniform in `[0, 1)` on the grid of 2⁻⁵³ (the top 53 bits).
    pub fn unit(&mut self) -> f64 {
        #[allow(clippy::cast_precision_loss)] // 53 bits: exact
        let value = (self.next_u64() >> 11) as f64 / 9_007_199_254_740_992.0;
        value
    }

    /// The next value, uniform in `[lo, hi)`: `lo + (hi − lo) · unit()`.
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    /// `N` draws of [`range`](Self::range)`(-1, 1)`, in order: a point of the cube
    /// `[-1, 1)ᴺ` (`DVec3::from_array`, `DQuat::from_array` in x, y, z, w order).
    pub fn in_cube<const N: usize>(&mut self) -> [f64; N] {
        std::array::from_fn(|_| self.range(-1.0, 1.0))
    }

    /// A point of the unit ball away from its centre: [`in_cube`](Self::in_cube) draws again
    /// until `min_squared < |v|² ≤ 1`; returns the point and `|v|²`.
    pub fn in_ball_above(&mut self, min_squared: f64) -> (DVec3, f64) {
        loop {
            let v = DVec3::from_array(self.in_cube());
            let l = v.length_squared();
            if l > min_squared && l <= 1.0 {
                return (v, l);
            }
        }
    }

    /// True with probability `p` (`unit() < p`).
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Uniform in `lo..=hi` (the next 64 bits modulo the count, so very slightly biased).
    pub fn int(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as usize
    }

    /// The next value, uniform in `[0, 1]`: all 64 bits divided by 2⁶⁴ (rounded to the
    /// nearest double, so 1 itself once in about 2⁵⁴ draws). Another stream than
    /// [`unit`](Self::unit) from the same state; kept for the tests written against it.
    pub fn uniform(&mut self) -> f64 {
        #[allow(clippy::cast_precision_loss)] // 53 bits kept by the division's rounding
        let value = self.next_u64() as f64 / 18_446_744_073_709_551_616.0;
        value
    }

    /// The next value, uniform in `[-1, 1]` (from [`uniform`](Self::uniform)).
    pub fn signed(&mut self) -> f64 {
        2.0 * self.uniform() - 1.0
    }
}

/// Geometric draws on [`Rng`]: points, directions and rotations (a trait, so that a test's
/// own draw of the same name is an ambiguity the compiler reports, never a silent switch).
pub trait Draw {
    /// A point uniform in the unit ball, away from its centre: three [`Rng::range`]`(-1, 1)`
    /// draws, again until `1e-6 < |v|² ≤ 1`.
    fn in_ball(&mut self) -> DVec3;

    /// A unit direction uniform on the sphere: [`in_ball`](Self::in_ball), normalised.
    fn direction(&mut self) -> DVec3;

    /// A rotation uniform over all rotations: four [`Rng::range`]`(-1, 1)` draws (x, y, z, w),
    /// again until `1e-6 < |q|² ≤ 1`, normalised.
    fn rotation(&mut self) -> DQuat;

    /// A rotation about a random axis (three [`Rng::range`]`(-1, 1)` draws, normalised, not
    /// rejected) by an angle uniform in `[-max_angle, max_angle)`, radians.
    fn rotation_up_to(&mut self, max_angle: f64) -> DQuat;
}

impl Draw for Rng {
    fn in_ball(&mut self) -> DVec3 {
        self.in_ball_above(1e-6).0
    }

    fn direction(&mut self) -> DVec3 {
        self.in_ball().normalize()
    }

    fn rotation(&mut self) -> DQuat {
        loop {
            let q = DQuat::from_array(self.in_cube());
            let l2 = q.length_squared();
            if l2 <= 1.0 && l2 > 1e-6 {
                return q.normalize();
            }
        }
    }

    fn rotation_up_to(&mut self, max_angle: f64) -> DQuat {
        let axis = DVec3::from_array(self.in_cube());
        DQuat::from_axis_angle(axis.normalize(), self.range(-max_angle, max_angle))
    }
}

#[cfg(test)]
mod tests {
    use super::Rng;

    #[test]
    fn rng_is_splitmix64() {
        // The published splitmix64 outputs for state 0 (Vigna's reference implementation).
        let mut rng = Rng(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
        // `unit` keeps the top 53 bits, `uniform` all 64 (rounded), from the same state.
        let (mut a, mut b) = (Rng(0), Rng(0));
        // (0xE220A8397B1DCDAF >> 11) / 2^53 and 0xE220A8397B1DCDAF / 2^64, by Python.
        assert_eq!(a.unit(), 0.883_310_808_213_642_6);
        assert_eq!(b.uniform(), 0.883_310_808_213_642_7);
        assert_eq!(Rng(0).range(2.0, 4.0), 2.0 + 2.0 * 0.883_310_808_213_642_6);
    }
}
