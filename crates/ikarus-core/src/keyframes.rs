//! Keyframe interpolation of whole postures: piecewise slerp, or Shoemake's squad (the
//! spherical analogue of a Catmull–Rom spline) with a matching cubic for translations and
//! scales.
//!
//! ## Conventions
//!
//! Times in seconds, key times strictly increasing and not necessarily uniform. `log` of a unit
//! quaternion is the pure quaternion `axis · angle/2` (half the rotation vector) and `exp` its
//! inverse. Each joint's key quaternions are first put in one hemisphere (a key's sign is
//! flipped when its dot product with the previous key is negative), so keys `q` and `−q` do not
//! make the joint spin.
//!
//! ## Squad
//!
//! Between keys `qᵢ` at `tᵢ` and `qᵢ₊₁` at `tᵢ₊₁`, with `u = (t − tᵢ)/hᵢ`, `hᵢ = tᵢ₊₁ − tᵢ`:
//!
//! `squad(u) = slerp(slerp(qᵢ, qᵢ₊₁, u), slerp(aᵢ, bᵢ₊₁, u), 2u(1 − u))`
//!
//! where `slerp(p, q, u) = p exp(u log(p⁻¹q))` (no sign flip: the inner points are near their
//! keys). With `L⁺ = log(qᵢ⁻¹qᵢ₊₁)`, `L⁻ = log(qᵢ⁻¹qᵢ₋₁)` and the key's velocity (half rotation
//! vector per second, in the key's frame) `vᵢ = (L⁺ − L⁻)/(tᵢ₊₁ − tᵢ₋₁)`, the inner points are
//!
//! `aᵢ = qᵢ exp((hᵢ vᵢ − L⁺)/2)` (leaving `qᵢ`) and `bᵢ = qᵢ exp(−(L⁻ + hᵢ₋₁ vᵢ)/2)` (arriving),
//!
//! which make the angular velocity at `tᵢ` equal `2vᵢ` from both sides. For uniform times both
//! reduce to Shoemake's `sᵢ = qᵢ exp(−(L⁺ + L⁻)/4)`. The first and last keys take `a₀ = q₀`,
//! `bₙ = qₙ` (the end velocity is that of the slerp to the neighbour), so two keys give plain
//! slerp. Translations and scales follow the cubic Hermite curve with the same velocities:
//! `(pᵢ₊₁ − pᵢ₋₁)/(tᵢ₊₁ − tᵢ₋₁)` inside (Catmull–Rom for uniform times) and the chord at the ends
//! (two keys: linear).
//!
//! Reference: K. Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985; E. B.
//! Dam, M. Koch, M. Lillholm, "Quaternions, interpolation and animation", 1998, §6.

use glam::{DQuat, DVec3};

use crate::trajectory::TrajectoryError;
use crate::{LocalPose, Transform};

/// How keyframes are interpolated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Interpolation {
    /// Slerp of rotations and lerp of translations and scales between neighbouring keys:
    /// continuous, but the velocity jumps at every key.
    Slerp,
    /// Squad of rotations and the matching cubic for translations and scales: continuous
    /// velocity through every key. Default.
    #[default]
    Squad,
}

/// One joint at one key, with the tangent data of both neighbouring segments.
#[derive(Clone, Copy, Debug, PartialEq)]
struct JointKey {
    /// The key's rotation, sign aligned with the previous key.
    rotation: DQuat,
    /// Squad inner point of the segment leaving this key.
    leaving: DQuat,
    /// Squad inner point of the segment arriving at this key.
    arriving: DQuat,
    translation: DVec3,
    scale: DVec3,
    /// Translation velocity at the key, metres per second.
    translation_velocity: DVec3,
    /// Scale velocity at the key, per second.
    scale_velocity: DVec3,
}

/// Key postures at increasing times, interpolated by [`Interpolation`].
///
/// Built once; [`Keyframes::sample`] allocates nothing.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyframes {
    times: Vec<f64>,
    joint_count: usize,
    /// `keys[k * joint_count + j]`: joint `j` at key `k`.
    keys: Vec<JointKey>,
    interpolation: Interpolation,
}

impl Keyframes {
    /// Keyframes through `keys` (time in seconds, posture).
    ///
    /// # Errors
    /// Fewer than two keys, times not finite and strictly increasing, postures with different
    /// joint counts, or non-finite postures (a zero quaternion counts as one). Rotations
    /// further than 1e-12 from unit length are normalised.
    pub fn new(
        keys: &[(f64, LocalPose)],
        interpolation: Interpolation,
    ) -> Result<Self, TrajectoryError> {
        let times: Vec<f64> = keys.iter().map(|k| k.0).collect();
        crate::trajectory::check_times(&times)?;
        let joint_count = keys[0].1.len();
        for (index, (_, pose)) in keys.iter().enumerate() {
            crate::trajectory::check_joint_count(index, pose, joint_count)?;
            let zero_rotation = pose.transforms().iter().any(|t| t.rotation.length() == 0.0);
            if !pose.is_finite() || zero_rotation {
                return Err(TrajectoryError::NonFinite { index });
            }
        }
        let mut out: Vec<JointKey> = Vec::with_capacity(keys.len() * joint_count);
        for (k, (_, pose)) in keys.iter().enumerate() {
            for (j, t) in pose.transforms().iter().enumerate() {
                let mut rotation = t.rotation;
                if (rotation.length_squared() - 1.0).abs() > 1e-12 {
                    rotation = rotation.normalize();
                }
                if k > 0 && rotation.dot(out[(k - 1) * joint_count + j].rotation) < 0.0 {
                    rotation = -rotation;
                }
                out.push(JointKey {
                    rotation,
                    leaving: rotation,
                    arriving: rotation,
                    translation: t.translation,
                    scale: t.scale,
                    translation_velocity: DVec3::ZERO,
                    scale_velocity: DVec3::ZERO,
                });
            }
        }
        let mut frames = Self {
            times,
            joint_count,
            keys: out,
            interpolation,
        };
        frames.set_tangents();
        Ok(frames)
    }

    /// Fills the inner points and velocities from the aligned keys.
    fn set_tangents(&mut self) {
        let (n, joints) = (self.times.len(), self.joint_count);
        for k in 0..n {
            for j in 0..joints {
                let key = |k: usize| self.keys[k * joints + j];
                let here = key(k);
                let (before, after) = (k.checked_sub(1), (k + 1 < n).then_some(k + 1));
                let (t_before, t_after) = (
                    before.map_or(self.times[k], |b| self.times[b]),
                    after.map_or(self.times[k], |a| self.times[a]),
                );
                let span = t_after - t_before;
                let (b, a) = (key(before.unwrap_or(k)), key(after.unwrap_or(k)));
                let translation_velocity = (a.translation - b.translation) / span;
                let scale_velocity = (a.scale - b.scale) / span;
                let inverse = here.rotation.conjugate();
                let next = after.map_or(DVec3::ZERO, |_| log(inverse * a.rotation));
                let previous = before.map_or(DVec3::ZERO, |_| log(inverse * b.rotation));
                let velocity = (next - previous) / span;
                let key = &mut self.keys[k * joints + j];
                key.translation_velocity = translation_velocity;
                key.scale_velocity = scale_velocity;
                if let Some(a) = after {
                    let h = self.times[a] - self.times[k];
                    key.leaving = here.rotation * exp((h * velocity - next) / 2.0);
                }
                if let Some(b) = before {
                    let h = self.times[k] - self.times[b];
                    key.arriving = here.rotation * exp(-(previous + h * velocity) / 2.0);
                }
            }
        }
    }

    /// Number of joints of every key.
    pub fn joint_count(&self) -> usize {
        self.joint_count
    }

    /// The key times, seconds.
    pub fn times(&self) -> &[f64] {
        &self.times
    }

    /// Duration from the first to the last key.
    pub fn duration(&self) -> f64 {
        self.times[self.times.len() - 1] - self.times[0]
    }

    /// The interpolation chosen at construction.
    pub fn interpolation(&self) -> Interpolation {
        self.interpolation
    }

    /// Writes the posture at `time` (seconds on the keys' clock, clamped to the first and last
    /// key; NaN gives the first key) into `out`. At a key's time the output is that key
    /// (rotation up to the sign chosen by hemisphere alignment).
    ///
    /// # Panics
    /// When `out` has another joint count than the keys.
    pub fn sample(&self, time: f64, out: &mut LocalPose) {
        assert_eq!(out.len(), self.joint_count, "pose of another skeleton");
        let last = self.times.len() - 1;
        let time = if time.is_nan() {
            self.times[0]
        } else {
            time.clamp(self.times[0], self.times[last])
        };
        let k = self
            .times
            .partition_point(|&t| t <= time)
            .saturating_sub(1)
            .min(last - 1);
        let h = self.times[k + 1] - self.times[k];
        let u = ((time - self.times[k]) / h).clamp(0.0, 1.0);
        let joints = self.joint_count;
        let starts = &self.keys[k * joints..(k + 1) * joints];
        let ends = &self.keys[(k + 1) * joints..(k + 2) * joints];
        for ((out, p), q) in out.transforms_mut().iter_mut().zip(starts).zip(ends) {
            *out = match self.interpolation {
                Interpolation::Slerp => Transform {
                    translation: lerp(p.translation, q.translation, u),
                    rotation: slerp(p.rotation, q.rotation, u),
                    scale: lerp(p.scale, q.scale, u),
                },
                Interpolation::Squad => Transform {
                    translation: hermite(
                        p.translation,
                        p.translation_velocity * h,
                        q.translation,
                        q.translation_velocity * h,
                        u,
                    ),
                    rotation: slerp(
                        slerp(p.rotation, q.rotation, u),
                        slerp(p.leaving, q.arriving, u),
                        2.0 * u * (1.0 - u),
                    ),
                    scale: hermite(
                        p.scale,
                        p.scale_velocity * h,
                        q.scale,
                        q.scale_velocity * h,
                        u,
                    ),
                },
            };
        }
    }
}

/// `axis · angle/2` of a unit quaternion (the vector part of its logarithm).
pub(crate) fn log(q: DQuat) -> DVec3 {
    let v = DVec3::new(q.x, q.y, q.z);
    let s = v.length();
    if s == 0.0 {
        return DVec3::ZERO;
    }
    v * (s.atan2(q.w) / s)
}

/// The unit quaternion `exp(v)` of a pure quaternion `v`.
pub(crate) fn exp(v: DVec3) -> DQuat {
    let angle = v.length();
    if angle == 0.0 {
        return DQuat::IDENTITY;
    }
    let (sin, cos) = angle.sin_cos();
    let v = v * (sin / angle);
    DQuat::from_xyzw(v.x, v.y, v.z, cos)
}

/// `p exp(u log(p⁻¹q))`, exact at `u = 0` and `u = 1`, without a sign flip.
fn slerp(p: DQuat, q: DQuat, u: f64) -> DQuat {
    if u == 0.0 {
        p
    } else if u == 1.0 {
        q
    } else {
        (p * exp(u * log(p.conjugate() * q))).normalize()
    }
}

/// Exact at `u = 0` and `u = 1`.
fn lerp(a: DVec3, b: DVec3, u: f64) -> DVec3 {
    if u == 1.0 { b } else { a + (b - a) * u }
}

/// Cubic Hermite from `y0` to `y1` with tangents `m0`, `m1` per unit `u`.
fn hermite(y0: DVec3, m0: DVec3, y1: DVec3, m1: DVec3, u: f64) -> DVec3 {
    if u == 1.0 {
        return y1;
    }
    let (u2, u3) = (u * u, u * u * u);
    (2.0 * u3 - 3.0 * u2 + 1.0) * y0
        + (u3 - 2.0 * u2 + u) * m0
        + (-2.0 * u3 + 3.0 * u2) * y1
        + (u3 - u2) * m1
}
