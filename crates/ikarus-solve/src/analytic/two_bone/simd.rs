//! [`solve_slice`](super::solve_slice)'s kernel: the two-bone closed form on as many problems
//! at once as the dispatched instruction set holds (1, 4 with AVX2, 8 with AVX-512).
//!
//! The kernel is [`solve_unchecked`](super::solve_unchecked)'s common path written with
//! [`lanes`](crate::linalg::lanes) types: the same IEEE operations in the same order, branches turned
//! into selects that pick the value the scalar branch would compute. So every lane it keeps has
//! the bits of [`solve`](super::solve) for that problem (a test checks it). Lanes that would
//! take a rarer branch — a joint singular or not finite, a chain that cannot flex, a frame with
//! no plane, a result that is not finite — are flagged and re-solved by the scalar function.

#![allow(clippy::inline_always)] // the kernel must be compiled inside the dispatched function

use glam::DQuat;
use pulp::{Simd, WithSimd, bytemuck};

use super::{DEGENERATE, Pole, REACH_TOLERANCE, TwoBoneInput, TwoBoneOutput, TwoBoneSettings};
use crate::linalg::lanes::{Lanes, Mat3, Vec3};

/// Values gathered per problem: start matrix (9) and translation (3), mid matrix (9) and
/// translation (3), end translation (3), target (3), pole vector (3), hinge axis (3).
pub(super) const FIELDS: usize = 36;

/// Values computed per problem: two quaternions and `reached` (1 or 0).
pub(super) const RESULTS: usize = 9;

/// The batch as a [`WithSimd`] operation.
pub(super) struct Batch<'a> {
    pub inputs: &'a [TwoBoneInput],
    pub settings: &'a TwoBoneSettings,
    pub outputs: &'a mut [TwoBoneOutput],
}

impl WithSimd for Batch<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let lanes = S::F64_LANES;
        let twist = (self.settings.twist_angle != 0.0).then(|| self.settings.twist_angle.sin_cos());
        // Two gather buffers: the next chunk is written while the current one is read, so
        // the registers are loaded after their lane-by-lane stores have retired (a load that
        // spans stores still in flight cannot be forwarded and waits for them).
        let mut gathered = [[simd.splat_f64s(0.0); FIELDS]; 2];
        let mut results = [simd.splat_f64s(0.0); RESULTS];
        let mut inputs = self.inputs.chunks_exact(lanes);
        let mut outputs = self.outputs.chunks_exact_mut(lanes);
        let count = inputs.len();
        if let Some(first) = inputs.clone().next() {
            gather::<S>(first, &mut gathered[0]);
        }
        for (index, (chunk, out)) in (&mut inputs).zip(&mut outputs).enumerate() {
            let [even, odd] = &mut gathered;
            let (current, next) = if index % 2 == 0 {
                (&*even, odd)
            } else {
                (&*odd, even)
            };
            if index + 1 < count {
                gather::<S>(&self.inputs[(index + 1) * lanes..][..lanes], next);
            }
            let fallback = kernel(simd, current, twist, &mut results);
            scatter::<S>(&results, fallback, chunk, self.settings, out);
        }
        for (input, output) in inputs.remainder().iter().zip(outputs.into_remainder()) {
            *output = fallback_solve(input, self.settings);
        }
    }
}

/// Problem `lane`'s values into lane `lane` of each gathered register.
#[inline(always)]
fn gather<S: Simd>(chunk: &[TwoBoneInput], gathered: &mut [S::f64s; FIELDS]) {
    let lanes = S::F64_LANES;
    let flat: &mut [f64] = bytemuck::cast_slice_mut(gathered.as_mut_slice());
    for (lane, input) in chunk[..lanes].iter().enumerate() {
        let origin = input.start_joint.translation;
        let pole = match input.pole {
            Pole::Vector(v) => v,
            Pole::Hint(h) => h - origin,
        };
        let values = [
            input.start_joint.matrix3.x_axis,
            input.start_joint.matrix3.y_axis,
            input.start_joint.matrix3.z_axis,
            origin,
            input.mid_joint.matrix3.x_axis,
            input.mid_joint.matrix3.y_axis,
            input.mid_joint.matrix3.z_axis,
            input.mid_joint.translation,
            input.end_joint.translation,
            input.target,
            pole,
            input.mid_axis,
        ];
        for (index, value) in values.iter().enumerate() {
            flat[(3 * index) * lanes + lane] = value.x;
            flat[(3 * index + 1) * lanes + lane] = value.y;
            flat[(3 * index + 2) * lanes + lane] = value.z;
        }
    }
}

/// The kernel's results into `out`; flagged lanes solved by the scalar function.
#[inline(always)]
fn scatter<S: Simd>(
    results: &[S::f64s; RESULTS],
    fallback: u64,
    chunk: &[TwoBoneInput],
    settings: &TwoBoneSettings,
    out: &mut [TwoBoneOutput],
) {
    let lanes = S::F64_LANES;
    let flat: &[f64] = bytemuck::cast_slice(results.as_slice());
    for (lane, output) in out.iter_mut().enumerate() {
        *output = if fallback & (1 << lane) == 0 {
            let [x, y, z, w, mid_x, mid_y, mid_z, mid_w, reached] =
                core::array::from_fn::<f64, RESULTS, _>(|field| flat[field * lanes + lane]);
            TwoBoneOutput {
                start_correction: DQuat::from_xyzw(x, y, z, w),
                mid_correction: DQuat::from_xyzw(mid_x, mid_y, mid_z, mid_w),
                reached: reached != 0.0,
            }
        } else {
            fallback_solve(&chunk[lane], settings)
        };
    }
}

/// The scalar solve, out of line: inlined, it would crowd the kernel's registers.
#[inline(never)]
fn fallback_solve(input: &TwoBoneInput, settings: &TwoBoneSettings) -> TwoBoneOutput {
    super::solve(input, settings)
}

/// Field `index`'s 3-vector.
#[inline(always)]
fn vec3<S: Simd>(simd: S, gathered: &[S::f64s; FIELDS], index: usize) -> Vec3<S> {
    Vec3::new(
        Lanes::new(simd, gathered[3 * index]),
        Lanes::new(simd, gathered[3 * index + 1]),
        Lanes::new(simd, gathered[3 * index + 2]),
    )
}

/// The common path of `solve_unchecked` (settings with no softening and full weight) on every
/// lane; returns the lanes to re-solve with the scalar function, one bit each.
///
/// Kept as one function of about 150 lines: one straight-line computation on SIMD lanes, with no
/// calls to compile apart from the dispatched instruction set.
#[allow(clippy::too_many_lines)] // one straight-line computation, as `solve_unchecked`
#[inline(always)]
pub(super) fn kernel<S: Simd>(
    simd: S,
    gathered: &[S::f64s; FIELDS],
    twist: Option<(f64, f64)>,
    results: &mut [S::f64s; RESULTS],
) -> u64 {
    // No closures: each would be compiled apart, without the dispatched instruction set.
    let zero = Lanes::splat(simd, 0.0);
    let half = Lanes::splat(simd, 0.5);
    let one = Lanes::splat(simd, 1.0);
    let two = Lanes::splat(simd, 2.0);
    let degenerate = Lanes::splat(simd, DEGENERATE);
    let start = Mat3 {
        x_axis: vec3(simd, gathered, 0),
        y_axis: vec3(simd, gathered, 1),
        z_axis: vec3(simd, gathered, 2),
    };
    let origin = vec3(simd, gathered, 3);
    let mid_matrix = Mat3 {
        x_axis: vec3(simd, gathered, 4),
        y_axis: vec3(simd, gathered, 5),
        z_axis: vec3(simd, gathered, 6),
    };
    let (mid_at, end_at, target, pole, mid_axis) = (
        vec3(simd, gathered, 7),
        vec3(simd, gathered, 8),
        vec3(simd, gathered, 9),
        vec3(simd, gathered, 10),
        vec3(simd, gathered, 11),
    );

    // Start space through the adjugate, as `adjugate_rows` / `apply_rows`.
    let rows = [
        start.y_axis.cross(start.z_axis),
        start.z_axis.cross(start.x_axis),
        start.x_axis.cross(start.y_axis),
    ];
    let det_start = start.x_axis.dot(rows[0]);
    let det_mid = mid_matrix.determinant();
    let mut keep = det_start.is_normal() & det_mid.is_normal();

    // `unit_or_nan`.
    let axis_length2 = mid_axis.length_squared();
    let axis = (axis_length2 - one)
        .abs()
        .le(Lanes::splat(simd, 1e-12))
        .select3(mid_axis, mid_axis.scale(axis_length2.sqrt().recip()));

    let to_mid = mid_at - origin;
    let mid_to_end = end_at - mid_at;
    let to_target = target - origin;
    // `twist`.
    let pole = match twist {
        None => pole,
        Some((sin, cos)) => {
            let length2 = to_target.length_squared();
            let k = to_target.scale(length2.sqrt().recip());
            let turned =
                pole.scale(Lanes::splat(simd, cos)) + k.cross(pole).scale(Lanes::splat(simd, sin));
            length2.eq(zero).select3(pole, turned)
        }
    };

    let a = apply_rows(&rows, to_mid);
    let b = apply_rows(&rows, mid_to_end);
    let t = apply_rows(&rows, to_target);
    let p = apply_rows(&rows, pole);
    let axis_s = apply_rows(&rows, mid_matrix.mul_vec3(axis));
    let n2 = axis_s.length_squared();

    let a2 = a.length_squared();
    let b2 = b.length_squared();
    let a_n = a.dot(axis_s);
    let b_n = b.dot(axis_s);
    let a_x_b_n = a.cross(b).dot(axis_s);
    let cos_now = a.dot(b) * n2 - a_n * b_n;
    let rho2 = cos_now * cos_now + a_x_b_n * a_x_b_n * n2;
    let size2 = (a2 + b2) * n2;
    let base = size2 + two * a_n * b_n;
    let x2 = t.length_squared();
    let aim2 = x2 * n2;

    let inv_n = n2.sqrt().recip().copysign(det_mid);
    let sin_now = a_x_b_n * n2 * inv_n;
    let half_gap = half * (aim2 - base);
    let tolerance = Lanes::splat(simd, REACH_TOLERANCE) * size2;
    keep = keep & rho2.gt(degenerate * size2 * size2); // flexible
    let within = (half_gap * half_gap).le(rho2);
    let rho = rho2.sqrt();
    let cos_new = within.select(half_gap, rho.copysign(half_gap));
    let sin_new = within.select((rho2 - half_gap * half_gap).sqrt(), zero);
    let in_range = within | half_gap.abs().le(rho + tolerance);

    let inv = rho2.recip();
    let cos_psi = (cos_new * cos_now + sin_new * sin_now) * inv;
    let sin_psi = (sin_new * cos_now - cos_new * sin_now) * inv;
    let flex = cos_psi.ge(zero);
    let k = flex.select(one + cos_psi, one - cos_psi);
    let s = (two * k).sqrt().recip();
    let half_cos = flex.select(k * s, sin_psi * s);
    let half_sin = flex.select(sin_psi * s, k * s);

    let along = axis_s.scale(b_n * inv_n * inv_n);
    let across = axis_s.cross(b).scale(inv_n);
    let e_new = a + along + (b - along).scale(cos_psi) + across.scale(sin_psi);

    let e2 = base + two * cos_new;
    let normal2 =
        sin_new * sin_new + a_n * a_n * (b2 * n2 - b_n * b_n) + b_n * b_n * (a2 * n2 - a_n * a_n)
            - two * a_n * b_n * cos_new;
    let normal_aim = t.cross(p);
    let normal_aim2 = normal_aim.length_squared();
    keep = keep
        & e2.gt(degenerate * size2)
        & (x2 * n2).gt(degenerate * size2)
        & normal2.gt(degenerate * e2 * a2 * n2)
        & normal_aim2.gt(degenerate * x2 * p.length_squared());

    // `rotation_between_frames`, then `DQuat::from_mat3`.
    let scale_u = (n2 / (e2 * x2)).sqrt();
    let scale_v = n2 / (normal2 * normal_aim2).sqrt();
    let normal_now = e_new.cross(a);
    let u = e_new.scale(scale_u);
    let v = normal_now.scale(scale_v);
    let w = e_new.cross(normal_now).scale(scale_u * scale_v);
    let to = [t, normal_aim, t.cross(normal_aim)];
    let start_correction = Mat3 {
        x_axis: column(&to, u.x, v.x, w.x),
        y_axis: column(&to, u.y, v.y, w.y),
        z_axis: column(&to, u.z, v.z, w.z),
    }
    .rotation();
    let values = [
        start_correction.x,
        start_correction.y,
        start_correction.z,
        start_correction.w,
        axis.x * half_sin,
        axis.y * half_sin,
        axis.z * half_sin,
        half_cos,
        in_range.select(one, zero),
    ];
    let mut slot = 0;
    while slot < RESULTS {
        results[slot] = values[slot].value();
        keep = keep & values[slot].is_finite();
        slot += 1;
    }
    (!keep).bits()
}

/// `rows · v`, as `apply_rows`.
#[inline(always)]
fn apply_rows<S: Simd>(rows: &[Vec3<S>; 3], v: Vec3<S>) -> Vec3<S> {
    Vec3::new(rows[0].dot(v), rows[1].dot(v), rows[2].dot(v))
}

/// A column of `rotation_between_frames`' matrix: `to[0]·u + to[1]·v + to[2]·w`.
#[inline(always)]
fn column<S: Simd>(to: &[Vec3<S>; 3], u: Lanes<S>, v: Lanes<S>, w: Lanes<S>) -> Vec3<S> {
    to[0].scale(u) + to[1].scale(v) + to[2].scale(w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DAffine3, DMat3, DVec3};

    /// Rigid and scaled two-bone chains with mostly reachable targets, some far, some with
    /// special cases, as the batch meets them.
    fn problems() -> Vec<TwoBoneInput> {
        let mut rng = crate::test_rng::Xorshift(0x2545_f491_4f6c_dd1d_u64);
        let mut next = || rng.signed();
        let mut inputs = Vec::new();
        for i in 0..203 {
            let mut unit = || DVec3::new(next(), next(), next()).normalize_or(DVec3::X);
            let (axis_a, axis_b, axis_c) = (unit(), unit(), unit());
            let (pole, to_mid, to_end, hinge) = (unit(), unit(), unit(), unit());
            let scale = if i % 5 == 0 {
                DVec3::new(1.0 + 0.5 * next(), 1.0 + 0.5 * next(), 1.0 + 0.5 * next())
            } else {
                DVec3::ONE
            };
            let start_rotation = DMat3::from_axis_angle(axis_a, 3.0 * next());
            let start = DAffine3::from_mat3_translation(
                start_rotation * DMat3::from_diagonal(scale),
                DVec3::new(next(), next(), next()),
            );
            let mid_rotation = DMat3::from_axis_angle(axis_b, 3.0 * next());
            let (l1, l2) = (0.2 + 0.3 * next().abs(), 0.2 + 0.3 * next().abs());
            let mid = DAffine3::from_mat3_translation(
                start.matrix3 * mid_rotation,
                start.transform_point3(to_mid * l1),
            );
            let end = DAffine3::from_translation(mid.transform_point3(to_end * l2));
            let reach = (l1 + l2) * (0.3 + 0.8 * next().abs());
            let target = start.translation + start.matrix3 * (axis_c * reach);
            inputs.push(TwoBoneInput {
                start_joint: start,
                mid_joint: mid,
                end_joint: end,
                target: if i % 41 == 7 {
                    start.translation
                } else {
                    target
                },
                pole: if i % 3 == 0 {
                    Pole::Hint(target + pole)
                } else {
                    Pole::Vector(pole)
                },
                // Mostly normal to both bones (mid space), some oblique, one zero.
                mid_axis: match i % 37 {
                    5 => DVec3::ZERO,
                    0..=3 => hinge * 2.0,
                    _ => (mid_rotation.transpose() * to_mid).cross(to_end) * 2.0,
                },
            });
        }
        inputs
    }

    fn run<S: Simd>(simd: S, inputs: &[TwoBoneInput], settings: &TwoBoneSettings) {
        let mut outputs = vec![TwoBoneOutput::default(); inputs.len()];
        simd.vectorize(Batch {
            inputs,
            settings,
            outputs: &mut outputs,
        });
        for (index, (input, output)) in inputs.iter().zip(&outputs).enumerate() {
            assert_eq!(
                *output,
                super::super::solve(input, settings),
                "{simd:?} problem {index}"
            );
        }
    }

    #[test]
    fn every_instruction_set_gives_the_bits_of_single_solves() {
        let inputs = problems();
        let reached = inputs
            .iter()
            .filter(|input| super::super::solve(input, &TwoBoneSettings::default()).reached)
            .count();
        assert!(reached > inputs.len() / 2, "only {reached} reached");
        for settings in [
            TwoBoneSettings::default(),
            TwoBoneSettings {
                twist_angle: 0.4,
                ..TwoBoneSettings::default()
            },
        ] {
            run(pulp::Scalar::new(), &inputs, &settings);
            #[cfg(target_arch = "x86_64")]
            {
                if let Some(simd) = pulp::x86::V3::try_new() {
                    run(simd, &inputs, &settings);
                }
                if let Some(simd) = pulp::x86::V4::try_new() {
                    run(simd, &inputs, &settings);
                }
            }
        }
    }
}
