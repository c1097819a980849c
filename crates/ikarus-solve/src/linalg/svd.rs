//! A small singular value decomposition on reusable buffers, for the pseudo-inverses of the
//! Jacobian solvers (no allocation once warm).
//!
//! One-sided Jacobi (Hestenes 1958) on the **rows** of a row-major `m × n` matrix `A`: plane
//! rotations mix pairs of rows until all rows are orthogonal, giving `Vᵀ A = B` with `V`
//! (`m × m`) orthogonal and the rows `b_i` of `B` orthogonal. Then `σ_i = |b_i|`,
//! `u_i = b_i / σ_i`, and
//!
//! ```text
//! A = V Σ Uᵀ = Σ_i σ_i v_i u_iᵀ        (v_i: column i of V, in the row space R^m;
//!                                       u_i: a unit vector in the column space R^n)
//! ```
//!
//! Working on rows costs `m(m−1)/2` rotations of length-`n` rows per sweep, which suits
//! Jacobians with few rows (3 per goal) and many columns (3 per ball joint). Singular values
//! come out unsorted. Accuracy: the rotations are Rutishauser's stable form; sweeps stop when
//! every pair of rows is orthogonal to 1e-15 relative, or after 60 sweeps.

/// The decomposition's buffers (see the module docs).
#[derive(Clone, Debug, Default)]
pub struct RowSvd {
    m: usize,
    n: usize,
    /// `B = Vᵀ A`, row-major `m × n`.
    b: Vec<f64>,
    /// `V`, row-major `m × m`.
    v: Vec<f64>,
    /// `σ_i²`.
    sigma2: Vec<f64>,
}

impl RowSvd {
    /// Empty buffers; they size themselves on first use.
    pub fn new() -> Self {
        Self::default()
    }

    /// Decomposes the row-major `m × n` matrix `a`.
    ///
    /// # Panics
    /// When `a` holds fewer than `m × n` entries.
    pub fn decompose(&mut self, a: &[f64], m: usize, n: usize) {
        self.m = m;
        self.n = n;
        self.b.clear();
        self.b.extend_from_slice(&a[..m * n]);
        self.v.clear();
        self.v.resize(m * m, 0.0);
        for i in 0..m {
            self.v[i * m + i] = 1.0;
        }
        self.sweeps(m);
    }

    /// Makes rows `p` and `q` orthogonal; false when they already were.
    fn rotate_pair(&mut self, p: usize, q: usize) -> bool {
        let n = self.n;
        let (mut alpha, mut beta, mut gamma) = (0.0, 0.0, 0.0);
        for k in 0..n {
            let (x, y) = (self.b[p * n + k], self.b[q * n + k]);
            alpha += x * x;
            beta += y * y;
            gamma += x * y;
        }
        if gamma == 0.0 || gamma.abs() <= 1e-15 * (alpha * beta).sqrt() {
            return false;
        }
        let zeta = (beta - alpha) / (2.0 * gamma);
        let t = zeta.signum() / (zeta.abs() + zeta.mul_add(zeta, 1.0).sqrt());
        let c = 1.0 / t.mul_add(t, 1.0).sqrt();
        let s = c * t;
        for k in 0..n {
            let (x, y) = (self.b[p * n + k], self.b[q * n + k]);
            self.b[p * n + k] = c * x - s * y;
            self.b[q * n + k] = s * x + c * y;
        }
        let m = self.m;
        for k in 0..m {
            let (x, y) = (self.v[k * m + p], self.v[k * m + q]);
            self.v[k * m + p] = c * x - s * y;
            self.v[k * m + q] = s * x + c * y;
        }
        true
    }

    /// Decomposes like [`RowSvd::decompose`], starting the rotations from the previous
    /// decomposition's `V` when the shape is the same (`B = V_prevᵀ A`): successive Jacobians of
    /// one solve differ little, so fewer sweeps remain. Call [`RowSvd::reset`] at the start of
    /// a solve so rounding in `V` does not accumulate across solves.
    ///
    /// # Panics
    /// When `a` holds fewer than `m × n` entries.
    pub fn decompose_warm(&mut self, a: &[f64], m: usize, n: usize) {
        if self.m != m || self.n != n || self.v.len() != m * m || self.b.len() != m * n {
            self.decompose(a, m, n);
            return;
        }
        for i in 0..m {
            for c in 0..n {
                self.b[i * n + c] = (0..m).map(|k| self.v[k * m + i] * a[k * n + c]).sum();
            }
        }
        self.sweeps(m);
    }

    /// Forgets the previous `V`, so the next [`RowSvd::decompose_warm`] starts cold.
    pub fn reset(&mut self) {
        self.v.clear();
    }

    /// Jacobi sweeps until every pair of rows is orthogonal, then the singular values.
    fn sweeps(&mut self, m: usize) {
        let n = self.n;
        for _ in 0..60 {
            let mut rotated = false;
            for p in 0..m {
                for q in p + 1..m {
                    rotated |= self.rotate_pair(p, q);
                }
            }
            if !rotated {
                break;
            }
        }
        self.sigma2.clear();
        for i in 0..m {
            let row = &self.b[i * n..(i + 1) * n];
            self.sigma2.push(row.iter().map(|x| x * x).sum());
        }
    }

    /// Rows `m` of the decomposed matrix (the number of singular values).
    pub fn rows(&self) -> usize {
        self.m
    }

    /// Columns `n` of the decomposed matrix.
    pub fn columns(&self) -> usize {
        self.n
    }

    /// Singular value `i` (unsorted).
    pub fn singular_value(&self, i: usize) -> f64 {
        self.sigma2[i].sqrt()
    }

    /// The largest singular value (0 for an empty matrix).
    pub fn largest(&self) -> f64 {
        self.sigma2.iter().copied().fold(0.0, f64::max).sqrt()
    }

    /// `V[k][i]`: entry `k` of left singular vector `i` (row space, `R^m`).
    pub fn left(&self, k: usize, i: usize) -> f64 {
        self.v[k * self.m + i]
    }

    /// `σ_i u_i`: right singular vector `i` (column space, `R^n`) times its singular value.
    pub fn scaled_right(&self, i: usize) -> &[f64] {
        &self.b[i * self.n..(i + 1) * self.n]
    }

    /// `Σ_i g(σ_i) · u_i · (v_iᵀ e)` into `out` (length `n`): with `g(σ) = 1/σ` the
    /// pseudo-inverse `A⁺ e`, with `g(σ) = σ/(σ² + λ²)` damped least squares. `g` is called
    /// only for `σ > 0`.
    ///
    /// # Panics
    /// When `e` is shorter than `m` or `out` than `n`.
    pub fn solve(&self, e: &[f64], mut g: impl FnMut(f64) -> f64, out: &mut [f64]) {
        out[..self.n].fill(0.0);
        for i in 0..self.m {
            if self.sigma2[i] <= 0.0 {
                continue;
            }
            let sigma = self.sigma2[i].sqrt();
            let ve: f64 = (0..self.m).map(|k| self.left(k, i) * e[k]).sum();
            // u_i = b_i / σ.
            let scale = g(sigma) * ve / sigma;
            if scale == 0.0 {
                continue;
            }
            for (o, b) in out.iter_mut().zip(self.scaled_right(i)) {
                *o += scale * b;
            }
        }
    }

    /// Removes from `z` (length `n`) its components along the right singular vectors whose
    /// singular value exceeds `cutoff`: `z ← (I − A⁺A) z`, the projection onto the null space
    /// of `A` (with singular values at or below `cutoff` counted as zero).
    ///
    /// # Panics
    /// When `z` is shorter than `n`.
    pub fn project_to_null_space(&self, z: &mut [f64], cutoff: f64) {
        let cutoff2 = cutoff * cutoff;
        for i in 0..self.m {
            if self.sigma2[i] <= cutoff2 || self.sigma2[i] <= 0.0 {
                continue;
            }
            let b = self.scaled_right(i);
            let dot: f64 = b.iter().zip(z.iter()).map(|(x, y)| x * y).sum();
            let scale = dot / self.sigma2[i];
            for (zk, bk) in z.iter_mut().zip(b) {
                *zk -= scale * bk;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reconstruct(svd: &RowSvd) -> Vec<f64> {
        let (m, n) = (svd.rows(), svd.columns());
        let mut a = vec![0.0; m * n];
        for r in 0..m {
            for c in 0..n {
                a[r * n + c] = (0..m)
                    .map(|i| svd.left(r, i) * svd.scaled_right(i)[c])
                    .sum();
            }
        }
        a
    }

    #[test]
    fn reconstructs_and_is_orthogonal_for_wide_tall_and_rank_deficient_matrices() {
        let mut state = 1u64;
        let mut next = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let mut svd = RowSvd::new();
        for (m, n) in [(3, 7), (6, 7), (12, 7), (6, 30), (1, 1), (4, 4)] {
            let mut a: Vec<f64> = (0..m * n).map(|_| next()).collect();
            if m >= 3 {
                // Row 2 = row 0 + row 1: rank deficient.
                for c in 0..n {
                    a[2 * n + c] = a[c] + a[n + c];
                }
            }
            // Cold, then warm from the previous V (same shape: a perturbed matrix).
            svd.decompose(&a, m, n);
            let perturbed: Vec<f64> = a.iter().map(|x| x + 0.01 * next()).collect();
            let mut warm = svd.clone();
            warm.decompose_warm(&perturbed, m, n);
            let back = reconstruct(&warm);
            let err = perturbed
                .iter()
                .zip(&back)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-13, "{m}x{n} warm: reconstruction error {err:e}");
            let back = reconstruct(&svd);
            let err = a
                .iter()
                .zip(&back)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0, f64::max);
            assert!(err < 1e-13, "{m}x{n}: reconstruction error {err:e}");
            for i in 0..m {
                for k in 0..m {
                    let vv: f64 = (0..m).map(|r| svd.left(r, i) * svd.left(r, k)).sum();
                    let expected = if i == k { 1.0 } else { 0.0 };
                    assert!((vv - expected).abs() < 1e-13, "V not orthogonal");
                    if i != k {
                        let bb: f64 = (0..n)
                            .map(|c| svd.scaled_right(i)[c] * svd.scaled_right(k)[c])
                            .sum();
                        assert!(bb.abs() < 1e-12, "rows of B not orthogonal: {bb:e}");
                    }
                }
            }
        }
    }

    #[test]
    fn pseudo_inverse_solves_and_null_space_projection_is_annihilated() {
        // A 2×3 full-row-rank matrix: A A⁺ e = e, and A (I − A⁺A) z = 0.
        let a = [1.0, 2.0, 0.5, -0.3, 0.7, 1.1];
        let mut svd = RowSvd::new();
        svd.decompose(&a, 2, 3);
        let e = [0.4, -0.9];
        let mut x = [0.0; 3];
        svd.solve(&e, |s| 1.0 / s, &mut x);
        for r in 0..2 {
            let ax: f64 = (0..3).map(|c| a[r * 3 + c] * x[c]).sum();
            assert!((ax - e[r]).abs() < 1e-14);
        }
        let mut z = [0.3, -0.2, 0.9];
        svd.project_to_null_space(&mut z, 1e-12);
        for r in 0..2 {
            let az: f64 = (0..3).map(|c| a[r * 3 + c] * z[c]).sum();
            assert!(az.abs() < 1e-14);
        }
    }
}
