//! The rotation that best turns a set of weighted vectors onto their targets (Wahba's problem),
//! about a free axis or about a fixed one. CCD uses it at every joint.

use glam::{DMat3, DQuat, DVec3, DVec4};

/// Accumulates weighted pairs `(from, to)` and returns the rotation `R` maximising
/// `Σ w · to · (R from)`.
#[derive(Clone, Copy, Debug)]
pub struct Alignment {
    /// `Σ w · to ⊗ from` (the attitude profile matrix).
    profile: DMat3,
    /// `Σ w · |to| · |from|`, an upper bound of the objective.
    bound: f64,
    pairs: u32,
    first: (DVec3, DVec3),
}

impl Default for Alignment {
    fn default() -> Self {
        Self::new()
    }
}

impl Alignment {
    /// No pairs yet.
    pub fn new() -> Self {
        Self {
            profile: DMat3::ZERO,
            bound: 0.0,
            pairs: 0,
            first: (DVec3::ZERO, DVec3::ZERO),
        }
    }

    /// Adds a pair with weight `weight ≥ 0`.
    pub fn add(&mut self, from: DVec3, to: DVec3, weight: f64) {
        // A vector of (almost) zero length has no direction to align.
        let (from_length, to_length) = (from.length(), to.length());
        let tiny = 1e-12 * from_length.max(to_length);
        if weight.is_nan() || weight <= 0.0 || from_length <= tiny || to_length <= tiny {
            return;
        }
        self.bound += weight * from_length * to_length;
        match self.pairs {
            // One pair is kept as it is (the common case is solved without the matrix).
            0 => self.first = (from * weight, to),
            1 => {
                let (f, t) = self.first;
                self.profile = outer(t, f) + outer(to, from * weight);
            }
            _ => self.profile += outer(to, from * weight),
        }
        self.pairs += 1;
    }

    /// The best rotation about a free axis (identity without pairs). One pair gives the
    /// shortest arc; several are solved with Davenport's q-method (largest eigenvector of the
    /// 4×4 K matrix, by shifted power iteration).
    pub fn rotation(&self) -> DQuat {
        match self.pairs {
            0 => DQuat::IDENTITY,
            1 => {
                let (f, t) = self.first;
                let (f, t) = (f.normalize(), t.normalize());
                if f.dot(t) < -1.0 + 1e-12 {
                    // Opposite: any perpendicular axis.
                    DQuat::from_axis_angle(f.any_orthonormal_vector(), std::f64::consts::PI)
                } else {
                    DQuat::from_rotation_arc(f, t)
                }
            }
            _ => self.davenport(),
        }
    }

    /// The best rotation angle about the unit `axis`: `atan2(Σ w n·(f × t), Σ w f⊥·t⊥)`.
    pub fn angle_about(&self, axis: DVec3) -> f64 {
        let (sine, cosine) = if self.pairs == 1 {
            let (f, t) = self.first;
            (axis.dot(f.cross(t)), f.dot(t) - axis.dot(f) * axis.dot(t))
        } else {
            let b = &self.profile;
            let dot = b.x_axis.x + b.y_axis.y + b.z_axis.z;
            (axis.dot(self.cross_sum()), dot - axis.dot(*b * axis))
        };
        // Vectors (nearly) along the axis carry little information about the angle: the best
        // angle swings wildly with tiny target changes while turning moves the effector
        // little. Scale the step down smoothly when the in-plane parts are under 5% of the
        // vectors (a singular wrist), and to zero when they vanish.
        let leverage = (sine * sine + cosine * cosine).sqrt() / self.bound.max(f64::MIN_POSITIVE);
        if leverage <= 1e-12 {
            return 0.0;
        }
        sine.atan2(cosine) * (leverage / 0.05).min(1.0)
    }

    /// `Σ w · from × to`.
    fn cross_sum(&self) -> DVec3 {
        // profile[col j][row i] = Σ w to_i from_j.
        let b = &self.profile;
        DVec3::new(
            b.y_axis.z - b.z_axis.y,
            b.z_axis.x - b.x_axis.z,
            b.x_axis.y - b.y_axis.x,
        )
    }

    fn davenport(&self) -> DQuat {
        let b = &self.profile;
        let s = *b + b.transpose();
        let sigma = b.x_axis.x + b.y_axis.y + b.z_axis.z;
        let z = self.cross_sum();
        // K (for the quaternion (v, w) of the rotation) shifted to be positive semidefinite.
        let shift = self.bound;
        let k = [
            [s.x_axis.x - sigma + shift, s.y_axis.x, s.z_axis.x, z.x],
            [s.x_axis.y, s.y_axis.y - sigma + shift, s.z_axis.y, z.y],
            [s.x_axis.z, s.y_axis.z, s.z_axis.z - sigma + shift, z.z],
            [z.x, z.y, z.z, sigma + shift],
        ];
        let mul = |v: DVec4| {
            DVec4::new(
                k[0][0] * v.x + k[0][1] * v.y + k[0][2] * v.z + k[0][3] * v.w,
                k[1][0] * v.x + k[1][1] * v.y + k[1][2] * v.z + k[1][3] * v.w,
                k[2][0] * v.x + k[2][1] * v.y + k[2][2] * v.z + k[2][3] * v.w,
                k[3][0] * v.x + k[3][1] * v.y + k[3][2] * v.z + k[3][3] * v.w,
            )
        };
        // Start from the first pair's shortest arc (close to the answer in CCD), nudged off any
        // exact eigenvector of a smaller eigenvalue.
        let start = {
            let (f, t) = self.first;
            let q = DQuat::from_rotation_arc(f.normalize(), t.normalize());
            DVec4::new(q.x + 1e-3, q.y + 2e-3, q.z + 3e-3, q.w).normalize()
        };
        let mut v = start;
        for _ in 0..64 {
            let next = mul(v);
            let length = next.length();
            if length < 1e-300 {
                return DQuat::IDENTITY;
            }
            let next = next / length;
            let done = (next - v).length_squared() < 1e-28;
            v = next;
            if done {
                break;
            }
        }
        DQuat::from_xyzw(v.x, v.y, v.z, v.w).normalize()
    }
}

/// `a ⊗ b` (column vectors: `a bᵀ`).
fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_pairs_recover_a_known_rotation() {
        let truth = DQuat::from_axis_angle(DVec3::new(0.3, -0.5, 0.8).normalize(), 2.3);
        let mut a = Alignment::new();
        for (i, f) in [
            DVec3::new(1.0, 0.2, -0.3),
            DVec3::new(-0.4, 1.1, 0.5),
            DVec3::new(0.2, -0.7, 0.9),
        ]
        .into_iter()
        .enumerate()
        {
            a.add(f, truth * f, 1.0 + i as f64);
        }
        let q = a.rotation();
        assert!(q.angle_between(truth) < 1e-9, "{q} vs {truth}");
    }

    #[test]
    fn angle_about_an_axis_matches_brute_force() {
        let axis = DVec3::new(0.0, 0.6, 0.8);
        let mut a = Alignment::new();
        let pairs = [
            (DVec3::new(1.0, 0.0, 0.0), DVec3::new(0.0, 1.0, 0.3), 1.0),
            (DVec3::new(0.2, 0.5, -1.0), DVec3::new(0.7, -0.1, 0.4), 2.0),
        ];
        for (f, t, w) in pairs {
            a.add(f, t, w);
        }
        let best = a.angle_about(axis);
        let objective = |angle: f64| {
            let r = DQuat::from_axis_angle(axis, angle);
            pairs.iter().map(|&(f, t, w)| w * t.dot(r * f)).sum::<f64>()
        };
        let brute = (0..100_000)
            .map(|i| -std::f64::consts::PI + f64::from(i) * std::f64::consts::TAU / 100_000.0)
            .max_by(|x, y| objective(*x).total_cmp(&objective(*y)))
            .unwrap();
        assert!((best - brute).abs() < 1e-4, "{best} vs {brute}");
    }
}
