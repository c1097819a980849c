//! The unit tests' reproducible random numbers (xorshift64).

/// xorshift64 state; any non-zero seed.
pub(crate) struct Xorshift(pub u64);

impl Xorshift {
    /// Uniform in `[-1, 1)`, 53 random bits.
    pub(crate) fn signed(&mut self) -> f64 {
        let state = &mut self.0;
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        (*state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}
