//! Smooth trajectories between postures (seed 002, trajectories): the rest-to-rest motion that
//! minimises the integral of squared angular acceleration, the via-point version, any number of via
//! points, and the quintic minimum-jerk profile.
//!
//! ## Conventions
//!
//! Times in seconds, angles in radians, positions in metres. Postures are [`LocalPose`]s;
//! rotations are interpolated on the **rotation vector relative to the first key** of each joint
//! (`log(q₀⁻¹ q)`, the sign of every key's quaternion chosen nearest to the previous one), which
//! has no Euler folds and is exact for a joint turning about one axis; translations (the root's
//! included) and scales are interpolated per component. [`Parameterisation::Euler`] applies the
//! same profiles to XYZ Euler angles instead, as the seed does, for comparison.
//!
//! ## The scalar problem
//!
//! A value passes through keys `(tₖ, yₖ)` with velocities `v₀` and `vₙ` at the ends (0 for a
//! motion from rest to rest) and minimises `∫ y''(t)² dt`. The minimiser is the cubic spline
//! with those end velocities: Hermite cubics per interval whose knot velocities solve the
//! tridiagonal system that makes the acceleration continuous ([`ViaVelocity::Continuous`]).
//! With no via point it is the seed's `θ(t) = θ₀ + α t²(3T − 2t)/T³`.
//!
//! With one via point the seed prints a closed form for the via velocity `b`
//! ([`ViaVelocity::SeedFormula`]). Its denominators `S(4T + S)` differ from the minimiser's
//! `4T`: for `a = c = 0`, `α = β = 1`, `S = 1`, `T = 2` it gives `b = 4/3` where the continuous,
//! minimal trajectory has `b = 3/2`, and the acceleration then jumps at `S` (from −2/3 to 2/3).
//! It is offered for comparison; the default is the minimiser.
//!
//! [`Profile::MinimumJerk`] replaces the cubic rest-to-rest profile by the quintic
//! `10s³ − 15s⁴ + 6s⁵` (zero velocity and acceleration at both ends), applied per interval
//! between keys, which then stop at every key.

use glam::{DQuat, DVec3, EulerRot};

use crate::{LocalPose, Transform};

/// Which smoothness the trajectory has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Profile {
    /// Minimum integral of squared acceleration (seed 002, trajectories): cubic pieces, continuous
    /// acceleration through via points. Default.
    #[default]
    MinimumAcceleration,
    /// Quintic minimum-jerk profile per interval (stops at every key).
    MinimumJerk,
}

impl Profile {
    /// The profile from rest to rest over the unit interval: position at `s` in `[0, 1]`
    /// (clamped), 0 at `s = 0` and 1 at `s = 1` with zero velocity at both: `3s² − 2s³` (seed
    /// 002's `t²(3T − 2t)/T³` with `T = 1`) or `10s³ − 15s⁴ + 6s⁵`.
    pub fn rest_to_rest(self, s: f64) -> f64 {
        let s = s.clamp(0.0, 1.0);
        match self {
            Self::MinimumAcceleration => s * s * (3.0 - 2.0 * s),
            Self::MinimumJerk => s * s * s * (10.0 - 15.0 * s + 6.0 * s * s),
        }
    }
}

/// How the velocity at via points is chosen for [`Profile::MinimumAcceleration`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum ViaVelocity {
    /// The velocities that make the acceleration continuous: the true minimiser. Default.
    #[default]
    Continuous,
    /// The seed's printed formula for one via point (see the module docs); with more than one
    /// via point, the same formula applied to each via point's neighbours.
    SeedFormula,
}

/// How rotations are parameterised.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Parameterisation {
    /// Rotation vector relative to the first key (no folds). Default.
    #[default]
    RotationVector,
    /// XYZ Euler angles, as the seed (folds at ±90° of the middle angle).
    Euler,
}

/// Why a trajectory cannot be built.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TrajectoryError {
    /// Fewer than two keys. Give a start and an end posture.
    #[error("a trajectory needs at least two keys, got {0}")]
    TooFewKeys(usize),
    /// Key times must be finite and strictly increasing.
    #[error("key {index} at time {time} does not come after the previous key; times must increase")]
    BadTime {
        /// The key.
        index: usize,
        /// Its time.
        time: f64,
    },
    /// Keys have different joint counts.
    #[error("key {index} has {found} joints, the first key {expected}")]
    JointCount {
        /// The key.
        index: usize,
        /// Joints of the first key.
        expected: usize,
        /// Joints of this key.
        found: usize,
    },
    /// A key holds NaN or infinity.
    #[error("key {index} is not finite")]
    NonFinite {
        /// The key.
        index: usize,
    },
}

/// A scalar trajectory through keys: positions, velocities and accelerations at any time.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    times: Vec<f64>,
    values: Vec<f64>,
    velocities: Vec<f64>,
    profile: Profile,
}

impl Curve {
    /// The trajectory through `(times[k], values[k])` with end velocities `start_velocity` and
    /// `end_velocity` (ignored by the minimum-jerk profile, which stops at every key).
    ///
    /// # Errors
    /// Fewer than two keys, mismatched lengths, times not strictly increasing, or non-finite
    /// input.
    pub fn new(
        times: &[f64],
        values: &[f64],
        start_velocity: f64,
        end_velocity: f64,
        profile: Profile,
        via: ViaVelocity,
    ) -> Result<Self, TrajectoryError> {
        check_times(times)?;
        if values.len() != times.len() {
            return Err(TrajectoryError::JointCount {
                index: 0,
                expected: times.len(),
                found: values.len(),
            });
        }
        if let Some(index) = values.iter().position(|v| !v.is_finite()) {
            return Err(TrajectoryError::NonFinite { index });
        }
        if !(start_velocity.is_finite() && end_velocity.is_finite()) {
            return Err(TrajectoryError::NonFinite { index: 0 });
        }
        let velocities = match profile {
            Profile::MinimumJerk => vec![0.0; times.len()],
            Profile::MinimumAcceleration => match via {
                ViaVelocity::Continuous => {
                    continuous_velocities(times, values, start_velocity, end_velocity)
                }
                ViaVelocity::SeedFormula => {
                    seed_velocities(times, values, start_velocity, end_velocity)
                }
            },
        };
        Ok(Self {
            times: times.to_vec(),
            values: values.to_vec(),
            velocities,
            profile,
        })
    }

    /// The knot velocities.
    pub fn knot_velocities(&self) -> &[f64] {
        &self.velocities
    }

    /// Duration from the first to the last key.
    pub fn duration(&self) -> f64 {
        self.times[self.times.len() - 1] - self.times[0]
    }

    /// Position, velocity and acceleration at `time` (clamped to the keys' span).
    pub fn evaluate(&self, time: f64) -> (f64, f64, f64) {
        let last = self.times.len() - 1;
        let time = time.clamp(self.times[0], self.times[last]);
        let k = match self.times.partition_point(|&t| t <= time) {
            0 => 0,
            i => (i - 1).min(last - 1),
        };
        let h = self.times[k + 1] - self.times[k];
        let s = (time - self.times[k]) / h;
        let (y0, y1) = (self.values[k], self.values[k + 1]);
        match self.profile {
            Profile::MinimumJerk => {
                let d = y1 - y0;
                let p = s * s * s * (10.0 - 15.0 * s + 6.0 * s * s);
                let dp = 30.0 * s * s * (1.0 - s) * (1.0 - s);
                let ddp = 60.0 * s * (1.0 - s) * (1.0 - 2.0 * s);
                (y0 + d * p, d * dp / h, d * ddp / (h * h))
            }
            Profile::MinimumAcceleration => {
                let (m0, m1) = (self.velocities[k] * h, self.velocities[k + 1] * h);
                let (s2, s3) = (s * s, s * s * s);
                let value = (2.0 * s3 - 3.0 * s2 + 1.0) * y0
                    + (s3 - 2.0 * s2 + s) * m0
                    + (-2.0 * s3 + 3.0 * s2) * y1
                    + (s3 - s2) * m1;
                let velocity = ((6.0 * s2 - 6.0 * s) * y0
                    + (3.0 * s2 - 4.0 * s + 1.0) * m0
                    + (-6.0 * s2 + 6.0 * s) * y1
                    + (3.0 * s2 - 2.0 * s) * m1)
                    / h;
                let acceleration = ((12.0 * s - 6.0) * y0
                    + (6.0 * s - 4.0) * m0
                    + (-12.0 * s + 6.0) * y1
                    + (6.0 * s - 2.0) * m1)
                    / (h * h);
                (value, velocity, acceleration)
            }
        }
    }
}

/// `pose` (key `index`) has the `expected` number of joints; else the error saying so.
pub(crate) fn check_joint_count(
    index: usize,
    pose: &LocalPose,
    expected: usize,
) -> Result<(), TrajectoryError> {
    if pose.len() != expected {
        return Err(TrajectoryError::JointCount {
            index,
            expected,
            found: pose.len(),
        });
    }
    Ok(())
}

/// At least two times, finite and strictly increasing; else the error naming the first bad one.
pub(crate) fn check_times(times: &[f64]) -> Result<(), TrajectoryError> {
    if times.len() < 2 {
        return Err(TrajectoryError::TooFewKeys(times.len()));
    }
    for (index, pair) in times.windows(2).enumerate() {
        if !(pair[0].is_finite() && pair[1].is_finite() && pair[1] > pair[0]) {
            return Err(TrajectoryError::BadTime {
                index: index + 1,
                time: pair[1],
            });
        }
    }
    Ok(())
}

/// Knot velocities of the clamped cubic spline (continuous acceleration), by the Thomas
/// algorithm on `v_{k−1}/h_{k−1} + 2(1/h_{k−1} + 1/h_k) v_k + v_{k+1}/h_k
/// = 3(d_{k−1}/h_{k−1} + d_k/h_k)`.
fn continuous_velocities(times: &[f64], values: &[f64], v0: f64, vn: f64) -> Vec<f64> {
    let n = times.len();
    let mut v = vec![0.0; n];
    v[0] = v0;
    v[n - 1] = vn;
    if n == 2 {
        return v;
    }
    let h: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    let d: Vec<f64> = (0..n - 1)
        .map(|k| (values[k + 1] - values[k]) / h[k])
        .collect();
    // Unknowns v_1 .. v_{n−2}.
    let m = n - 2;
    let mut diag = vec![0.0; m];
    let mut upper = vec![0.0; m];
    let mut rhs = vec![0.0; m];
    for i in 0..m {
        let k = i + 1;
        diag[i] = 2.0 * (1.0 / h[k - 1] + 1.0 / h[k]);
        upper[i] = 1.0 / h[k];
        rhs[i] = 3.0 * (d[k - 1] / h[k - 1] + d[k] / h[k]);
    }
    rhs[0] -= v0 / h[0];
    rhs[m - 1] -= vn / h[n - 2];
    // Forward sweep (lower[i] = 1 / h[i] couples v_i to v_{i+1}).
    for i in 1..m {
        let factor = (1.0 / h[i]) / diag[i - 1];
        diag[i] -= factor * upper[i - 1];
        rhs[i] -= factor * rhs[i - 1];
    }
    v[m] = rhs[m - 1] / diag[m - 1];
    for i in (0..m - 1).rev() {
        v[i + 1] = (rhs[i] - upper[i] * v[i + 2]) / diag[i];
    }
    v
}

/// The seed's printed via velocity, applied at each via point from its neighbours.
fn seed_velocities(times: &[f64], values: &[f64], v0: f64, vn: f64) -> Vec<f64> {
    let n = times.len();
    let mut v = vec![0.0; n];
    v[0] = v0;
    v[n - 1] = vn;
    for k in 1..n - 1 {
        let (s, t) = (times[k] - times[k - 1], times[k + 1] - times[k - 1]);
        let (alpha, beta) = (values[k] - values[k - 1], values[k + 1] - values[k]);
        let (a, c) = (v[k - 1], if k + 1 == n - 1 { vn } else { 0.0 });
        let q = 4.0 * t + s;
        v[k] = 6.0 * (t - s) / (s * q) * alpha + 6.0 * s / ((t - s) * q) * beta
            - 2.0 * (t - s) / q * a
            - s / q * c;
    }
    v
}

/// A whole-posture trajectory through key postures: every joint's rotation, translation and
/// scale follows a [`Curve`] per component (rotations on the chosen [`Parameterisation`]).
#[derive(Clone, Debug, PartialEq)]
pub struct PoseTrajectory {
    references: Vec<DQuat>,
    /// Per joint: 3 rotation curves, 3 translation curves, 3 scale curves.
    curves: Vec<[Curve; 9]>,
    parameterisation: Parameterisation,
}

impl PoseTrajectory {
    /// The trajectory through `keys` (time, posture), from rest to rest.
    ///
    /// # Errors
    /// Fewer than two keys, times not strictly increasing, different joint counts, or
    /// non-finite postures.
    pub fn new(
        keys: &[(f64, LocalPose)],
        profile: Profile,
        via: ViaVelocity,
        parameterisation: Parameterisation,
    ) -> Result<Self, TrajectoryError> {
        let times: Vec<f64> = keys.iter().map(|k| k.0).collect();
        check_times(&times)?;
        let joints = keys[0].1.len();
        for (index, (_, pose)) in keys.iter().enumerate() {
            check_joint_count(index, pose, joints)?;
            if !pose.is_finite() {
                return Err(TrajectoryError::NonFinite { index });
            }
        }
        let references: Vec<DQuat> = (0..joints)
            .map(|j| keys[0].1.transforms()[j].rotation)
            .collect();
        let mut curves = Vec::with_capacity(joints);
        for (j, &reference) in references.iter().enumerate() {
            let mut components: [Vec<f64>; 9] = Default::default();
            let mut previous = reference;
            let mut previous_euler: Option<[f64; 3]> = None;
            for (_, pose) in keys {
                let t = &pose.transforms()[j];
                let mut q = t.rotation;
                if q.dot(previous) < 0.0 {
                    q = -q;
                }
                previous = q;
                let r = match parameterisation {
                    Parameterisation::RotationVector => {
                        (reference.conjugate() * q).to_scaled_axis().to_array()
                    }
                    Parameterisation::Euler => {
                        let (x, y, z) = q.to_euler(EulerRot::XYZ);
                        let mut e = [x, y, z];
                        // Unwrap each angle next to the previous key's.
                        if let Some(p) = previous_euler {
                            for i in 0..3 {
                                e[i] = p[i] + wrap(e[i] - p[i]);
                            }
                        }
                        previous_euler = Some(e);
                        e
                    }
                };
                for i in 0..3 {
                    components[i].push(r[i]);
                    components[3 + i].push(t.translation[i]);
                    components[6 + i].push(t.scale[i]);
                }
            }
            let curve = |values: &Vec<f64>| {
                Curve::new(&times, values, 0.0, 0.0, profile, via).expect("checked keys")
            };
            curves.push(std::array::from_fn(|i| curve(&components[i])));
        }
        Ok(Self {
            references,
            curves,
            parameterisation,
        })
    }

    /// Duration from the first to the last key.
    pub fn duration(&self) -> f64 {
        self.curves.first().map_or(0.0, |c| c[0].duration())
    }

    /// Writes the posture at `time` (seconds from the first key; clamped) into `out`, which
    /// must have the keys' joint count.
    ///
    /// # Panics
    /// When `out` has another joint count.
    pub fn sample(&self, time: f64, out: &mut LocalPose) {
        let start = self.curves.first().map_or(0.0, |c| c[0].times[0]);
        for (j, curves) in self.curves.iter().enumerate() {
            let at = |i: usize| curves[i].evaluate(start + time).0;
            let r = DVec3::new(at(0), at(1), at(2));
            let rotation = match self.parameterisation {
                Parameterisation::RotationVector => self.references[j] * DQuat::from_scaled_axis(r),
                Parameterisation::Euler => DQuat::from_euler(EulerRot::XYZ, r.x, r.y, r.z),
            };
            out.transforms_mut()[j] = Transform {
                translation: DVec3::new(at(3), at(4), at(5)),
                rotation: rotation.normalize(),
                scale: DVec3::new(at(6), at(7), at(8)),
            };
        }
    }
}

fn wrap(angle: f64) -> f64 {
    use std::f64::consts::{PI, TAU};
    (angle + PI).rem_euclid(TAU) - PI
}
