//! Two-bone IK against forward-kinematics ground truth: every check applies the corrections to
//! a `LocalPose`, runs FK from scratch and measures model-space positions.
//!
//! Random rigs hang below a root that carries one of six parent transforms (identity,
//! translated, rotated, uniform scale, non-uniform scale, mirrored). With non-uniform scale,
//! "reached" means the end joint's model-space position equals the target; distances such as
//! the full reach are those of the start joint's space (model space seen through the inverse of
//! `model_from_start`), where the bones keep their lengths.

mod common;

use common::{CMU_TO_METRES, cmu_jump};
use ikarus_testdata::assert::{model_of, normal_part, rotation_gap};
use ikarus_testdata::transforms::{parent_transforms, rooted};
use ikarus_testdata::{Draw, Rng};
use std::f64::consts::PI;

use ikarus_core::glam::{DAffine3, DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, Transform};
use ikarus_solve::two_bone::{
    Pole, TwoBoneChain, TwoBoneChainError, TwoBoneInput, TwoBoneOutput, TwoBoneSettings,
    recover_pole, solve, solve_chain, solve_slice,
};

const TOLERANCE: f64 = 1e-9;

/// root (parent transform) → start → mid → end with random offsets and rest rotations.
struct Rig {
    skeleton: Skeleton,
    chain: TwoBoneChain,
    l1: f64,
    l2: f64,
}

impl Rig {
    /// `solve_chain` on this rig under `settings`, writing `pose`: whether the target was
    /// reached.
    fn solve(
        &self,
        target: DVec3,
        pole: Pole,
        settings: &TwoBoneSettings,
        pose: &mut LocalPose,
    ) -> bool {
        let mut model = ModelPose::new(&self.skeleton);
        solve_chain(
            &self.skeleton,
            &self.chain,
            target,
            pole,
            settings,
            pose,
            &mut model,
        )
    }

    /// The kernel's input for this rig from `pose` (whose model is `model`).
    fn input(
        &self,
        pose: &LocalPose,
        model: &ModelPose,
        target: DVec3,
        pole: Pole,
    ) -> TwoBoneInput {
        self.chain.input(&self.skeleton, pose, model, target, pole)
    }

    fn random(rng: &mut Rng, parent: Transform, l1: f64, l2: f64) -> Self {
        let mid_rotation = rng.rotation();
        let to_mid = rng.direction();
        let to_end = rng.direction();
        let mut builder = rooted(parent);
        builder
            .joint(
                "start",
                Some("root"),
                Transform::from_translation_rotation(rng.in_ball() * 0.5, rng.rotation()),
            )
            .joint(
                "mid",
                Some("start"),
                Transform::from_translation_rotation(to_mid * l1, mid_rotation),
            )
            .joint("end", Some("mid"), Transform::from_translation(to_end * l2));
        let skeleton = builder.build().unwrap();
        // Hinge axis normal to both bones, in the mid joint's (rest) frame, either sign.
        let upper = mid_rotation.inverse() * to_mid;
        let axis = upper
            .cross(to_end)
            .try_normalize()
            .unwrap_or_else(|| upper.any_orthonormal_vector());
        let axis = if rng.unit() < 0.5 { axis } else { -axis };
        let j = |name| skeleton.joint(name).unwrap();
        let chain = TwoBoneChain::new(&skeleton, j("start"), j("mid"), j("end"), axis).unwrap();
        Self {
            skeleton,
            chain,
            l1,
            l2,
        }
    }

    /// A random rig with both bone lengths drawn from `[shortest, longest)`.
    fn with_random_lengths(rng: &mut Rng, parent: Transform, shortest: f64, longest: f64) -> Self {
        let l1 = rng.range(shortest, longest);
        let l2 = rng.range(shortest, longest);
        Self::random(rng, parent, l1, l2)
    }

    /// A random current pose: any start rotation, the mid joint turned about its hinge by any
    /// angle (possibly hyperextended).
    fn random_pose(&self, rng: &mut Rng) -> LocalPose {
        let mut pose = self.skeleton.rest_pose();
        pose[self.chain.start].rotation = rng.rotation();
        let rest = self.skeleton.rest(self.chain.mid).rotation;
        pose[self.chain.mid].rotation =
            rest * DQuat::from_axis_angle(self.chain.mid_axis, rng.range(-PI, PI));
        pose
    }
}

/// `solve_chain` towards `target` with the pole vector `pole` and the default settings:
/// whether the target was reached.
fn solve_with_pole(
    skeleton: &Skeleton,
    chain: &TwoBoneChain,
    target: DVec3,
    pole: DVec3,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> bool {
    let settings = TwoBoneSettings::default();
    solve_chain(
        skeleton,
        chain,
        target,
        Pole::Vector(pole),
        &settings,
        pose,
        model,
    )
}

/// The default settings but for `twist_angle` and `weight`.
fn settings(twist_angle: f64, weight: f64) -> TwoBoneSettings {
    TwoBoneSettings {
        twist_angle,
        weight,
        ..TwoBoneSettings::default()
    }
}

/// Checks that `mid` lies in the plane through `start` spanned by `aim` and `pole`, on the
/// pole's side (when the chain is bent enough for a side to exist).
fn assert_on_pole_side(start: DVec3, mid: DVec3, aim: DVec3, pole: DVec3, what: &str) {
    let normal = aim.cross(pole);
    if normal.length() < 0.1 * aim.length() * pole.length() {
        return; // pole nearly along the limb: the plane is ill-conditioned
    }
    let off_plane = (mid - start).dot(normal.normalize());
    assert!(
        off_plane.abs() < TOLERANCE,
        "{what}: mid {off_plane} off the pole plane"
    );
    let bend = normal_part(mid - start, aim);
    if bend.length() > 1e-6 {
        assert!(
            bend.dot(normal_part(pole, aim)) > 0.0,
            "{what}: mid bends away from the pole"
        );
    }
}

/// Runs `check` on `rigs` random rigs under each parent transform, bones `shortest` to 1 long
/// ([`Rig::with_random_lengths`]): the parent's name and transform, the generator for further
/// draws, the rig, a random pose of it and the pose's model, all drawn from one `Rng(seed)`.
fn for_random_rigs(
    seed: u64,
    rigs: usize,
    shortest: f64,
    mut check: impl FnMut((&str, Transform), &mut Rng, Rig, LocalPose, ModelPose),
) {
    let mut rng = Rng(seed);
    for (name, parent) in parent_transforms() {
        for _ in 0..rigs {
            let rig = Rig::with_random_lengths(&mut rng, parent, shortest, 1.0);
            let pose = rig.random_pose(&mut rng);
            let model = model_of(&rig.skeleton, &pose);
            check((name, parent), &mut rng, rig, pose, model);
        }
    }
}

/// Asserts that `point` is within [`TOLERANCE`] of `expected`.
fn assert_at(point: DVec3, expected: DVec3, what: &str) {
    assert!((point - expected).length() < TOLERANCE, "{what}: {point}");
}

fn joint_positions(rig: &Rig, model: &ModelPose) -> (DVec3, DVec3, DVec3) {
    let c = &rig.chain;
    (
        model.position(c.start),
        model.position(c.mid),
        model.position(c.end),
    )
}

/// 100,000 random reachable targets from random poses of random rigs under `parent`; every
/// second one uses a hint position instead of a pole vector.
fn reaches_random_targets(parent_name: &str, parent: Transform, seed: u64) {
    let mut rng = Rng(seed);
    let mut worst: f64 = 0.0;
    let settings = TwoBoneSettings::default();
    let mut model = ModelPose::new(&Rig::random(&mut rng, parent, 1.0, 1.0).skeleton);
    for _rig in 0..1000 {
        let rig = Rig::with_random_lengths(&mut rng, parent, 0.05, 1.0);
        for k in 0..100 {
            let mut pose = rig.random_pose(&mut rng);
            let before = model_of(&rig.skeleton, &pose);
            let start_from_model = before[rig.chain.start].inverse();
            let model_from_start = before[rig.chain.start];
            let reach = rng.range((rig.l1 - rig.l2).abs(), rig.l1 + rig.l2);
            let target = model_from_start.transform_point3(rng.direction() * reach);
            let start = before.position(rig.chain.start);
            let pole_direction = rng.direction();
            let pole = if k % 2 == 0 {
                Pole::Vector(pole_direction)
            } else {
                Pole::Hint(start + pole_direction * rng.range(0.1, 3.0))
            };
            let reached = solve_chain(
                &rig.skeleton,
                &rig.chain,
                target,
                pole,
                &settings,
                &mut pose,
                &mut model,
            );
            let after = model_of(&rig.skeleton, &pose);
            let (s, m, e) = joint_positions(&rig, &after);
            let error = (e - target).length();
            worst = worst.max(error);
            assert!(
                error < TOLERANCE,
                "{parent_name}: end {error} m from the target"
            );
            assert!(
                reached,
                "{parent_name}: reachable target reported unreached"
            );
            assert!((s - start).length() < 1e-12, "{parent_name}: start moved");
            // Bone lengths kept (in start space; model space scales them).
            let [m_s, e_s] = [m, e].map(|p| start_from_model.transform_point3(p));
            assert!(
                (m_s.length() - rig.l1).abs() < TOLERANCE,
                "{parent_name}: l1"
            );
            assert!(
                ((e_s - m_s).length() - rig.l2).abs() < TOLERANCE,
                "{parent_name}: l2"
            );
            assert_on_pole_side(start, m, target - start, pole_direction, parent_name);
            assert!(pose.is_finite());
        }
    }
    eprintln!("{parent_name}: worst end error over 100,000 targets {worst:e} m");
}

ikarus_testdata::test_under_each_parent!(reaches_random_targets:
    reaches_100k_random_targets_identity_parent,
    reaches_100k_random_targets_translated_parent,
    reaches_100k_random_targets_rotated_parent,
    reaches_100k_random_targets_uniformly_scaled_parent,
    reaches_100k_random_targets_non_uniformly_scaled_parent,
    reaches_100k_random_targets_mirrored_parent,
);

#[test]
fn twist_turns_the_bend_plane_by_the_twist_angle_in_model_space() {
    for_random_rigs(7, 300, 0.2, |(name, _), rng, rig, pose, before| {
        // Well inside the reach so that the chain is clearly bent.
        let reach = (rig.l1 - rig.l2).abs() + 0.5 * (rig.l1 + rig.l2 - (rig.l1 - rig.l2).abs());
        let target = before[rig.chain.start].transform_point3(rng.direction() * reach);
        let start = before.position(rig.chain.start);
        let pole = Pole::Vector(rng.direction());
        let twist = rng.range(-3.0, 3.0);
        let bend_with = |twist_angle: f64| {
            let mut p = pose.clone();
            assert!(rig.solve(target, pole, &settings(twist_angle, 1.0), &mut p));
            let after = model_of(&rig.skeleton, &p);
            assert!((after.position(rig.chain.end) - target).length() < TOLERANCE);
            normal_part(after.position(rig.chain.mid) - start, target - start)
        };
        let plain = bend_with(0.0);
        let twisted = bend_with(twist);
        let what = format!("{name}: the plane");
        common::assert_turned_by(plain, twisted, target - start, twist, &what);
    });
}

#[test]
fn far_targets_extend_the_arm_straight_at_the_target() {
    for_random_rigs(
        8,
        2000,
        0.05,
        |(name, parent), rng, rig, mut pose, before| {
            let start_from_model = before[rig.chain.start].inverse();
            let full = rig.l1 + rig.l2;
            let distance = full * rng.range(1.0001, 5.0);
            let direction = rng.direction();
            let target = before[rig.chain.start].transform_point3(direction * distance);
            let pole = Pole::Vector(rng.direction());
            let reached = rig.solve(target, pole, &TwoBoneSettings::default(), &mut pose);
            assert!(!reached, "{name}: unreachable target reported reached");
            let after = model_of(&rig.skeleton, &pose);
            let (s, m, e) = joint_positions(&rig, &after);
            // In start space: fully extended along the target direction.
            let [m_s, e_s] = [m, e].map(|p| start_from_model.transform_point3(p));
            assert_at(e_s, direction * full, name);
            assert_at(m_s, direction * rig.l1, name);
            // In model space for the similarity parents: the closest pose, |target − start| − reach.
            if name != "non_uniform_scale" {
                let scale = parent.scale.x.abs();
                let gap = (target - e).length();
                let expected = (target - s).length() - full * scale;
                assert!(
                    (gap - expected).abs() < TOLERANCE,
                    "{name}: gap {gap} vs {expected}"
                );
                let collinear = (m - s).normalize().cross((e - s).normalize()).length();
                assert!(collinear < TOLERANCE, "{name}: arm not straight");
            }
        },
    );
}

#[test]
fn near_targets_fold_the_arm_as_far_as_it_goes() {
    let mut rng = Rng(9);
    for (name, parent) in parent_transforms() {
        for _ in 0..2000 {
            let (l1, l2) = (rng.range(0.3, 1.0), rng.range(0.05, 0.25));
            let (l1, l2) = if rng.unit() < 0.5 { (l1, l2) } else { (l2, l1) };
            let rig = Rig::random(&mut rng, parent, l1, l2);
            let mut pose = rig.random_pose(&mut rng);
            let before = model_of(&rig.skeleton, &pose);
            let start_from_model = before[rig.chain.start].inverse();
            let closest = (l1 - l2).abs();
            let direction = rng.direction();
            let distance = closest * rng.range(0.01, 0.999);
            let target = before[rig.chain.start].transform_point3(direction * distance);
            let reached = rig.solve(
                target,
                Pole::Vector(rng.direction()),
                &TwoBoneSettings::default(),
                &mut pose,
            );
            assert!(!reached, "{name}: too-close target reported reached");
            let after = model_of(&rig.skeleton, &pose);
            let (_, m, e) = joint_positions(&rig, &after);
            let [m_s, e_s] = [m, e].map(|p| start_from_model.transform_point3(p));
            // End on the target ray at the smallest reachable distance; bones folded flat.
            assert_at(e_s, direction * closest, name);
            let fold = m_s.normalize().dot((e_s - m_s).normalize());
            assert!(
                (fold + 1.0).abs() < TOLERANCE,
                "{name}: not folded ({fold})"
            );
        }
    }
}

/// A hand-built arm: start at the origin, mid at +X, end at +2X, hinge about +Z.
fn straight_arm(l1: f64, l2: f64) -> TwoBoneInput {
    TwoBoneInput {
        start_joint: DAffine3::IDENTITY,
        mid_joint: DAffine3::from_translation(DVec3::X * l1),
        end_joint: DAffine3::from_translation(DVec3::X * (l1 + l2)),
        target: DVec3::new(0.5, 0.5, 0.5),
        pole: Pole::Vector(DVec3::Y),
        mid_axis: DVec3::Z,
    }
}

fn assert_finite(out: &TwoBoneOutput, what: &str) {
    assert!(
        out.start_correction.is_finite() && out.mid_correction.is_finite(),
        "{what}: {out:?}"
    );
    assert!(
        (out.start_correction.length() - 1.0).abs() < 1e-12
            && (out.mid_correction.length() - 1.0).abs() < 1e-12,
        "{what}: non-unit correction {out:?}"
    );
}

/// Where the end joint lands under the corrections (rigid chain of `straight_arm`).
fn end_after(input: &TwoBoneInput, out: &TwoBoneOutput) -> DVec3 {
    let a = input.mid_joint.translation;
    let b = input.end_joint.translation - a;
    out.start_correction * (a + out.mid_correction * b)
}

#[test]
fn non_finite_input_gives_identity_and_never_nan() {
    let settings = TwoBoneSettings::default();
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let base = straight_arm(1.0, 1.0);

    // Invalid numbers: identity, not reached.
    let mut invalid = Vec::new();
    for bad in [nan, inf, -inf] {
        let v = DVec3::new(0.5, bad, 0.2);
        invalid.push(TwoBoneInput { target: v, ..base });
        invalid.push(TwoBoneInput {
            pole: Pole::Vector(v),
            ..base
        });
        invalid.push(TwoBoneInput {
            pole: Pole::Hint(v),
            ..base
        });
        invalid.push(TwoBoneInput {
            mid_axis: v,
            ..base
        });
        invalid.push(TwoBoneInput {
            start_joint: DAffine3::from_translation(v),
            ..base
        });
        invalid.push(TwoBoneInput {
            mid_joint: DAffine3::from_scale(DVec3::new(1.0, bad, 1.0)),
            ..base
        });
        invalid.push(TwoBoneInput {
            end_joint: DAffine3::from_translation(v),
            ..base
        });
    }
    invalid.push(TwoBoneInput {
        mid_axis: DVec3::ZERO,
        ..base
    });
    invalid.push(TwoBoneInput {
        start_joint: DAffine3::from_scale(DVec3::new(1.0, 0.0, 1.0)),
        ..base
    });
    for input in &invalid {
        let out = solve(input, &settings);
        assert_eq!(out, TwoBoneOutput::IDENTITY, "{input:?}");
    }
    for bad in [nan, inf, -inf] {
        for settings in [
            TwoBoneSettings {
                twist_angle: bad,
                ..settings
            },
            TwoBoneSettings {
                soften: nan,
                ..settings
            },
            TwoBoneSettings {
                weight: nan,
                ..settings
            },
        ] {
            let out = solve(&base, &settings);
            assert_finite(&out, "bad settings");
            assert!(!out.reached);
        }
    }
}

#[test]
fn target_at_the_start_joint_folds_the_arm() {
    let settings = TwoBoneSettings::default();
    // Reached only when the bones are equal (the end lands on the start joint).
    for (l1, l2, reachable) in [(1.0, 1.0, true), (1.0, 0.4, false)] {
        let input = TwoBoneInput {
            target: DVec3::ZERO,
            ..straight_arm(l1, l2)
        };
        let out = solve(&input, &settings);
        assert_finite(&out, "target at start");
        assert_eq!(out.reached, reachable);
        let end = end_after(&input, &out);
        assert!((end.length() - (l1 - l2).abs()).abs() < TOLERANCE, "{end}");
    }
}

#[test]
fn pole_along_the_limb_still_reaches() {
    let settings = TwoBoneSettings::default();
    // Zero or parallel to start→target: the bend plane stays closest to the current one.
    for pole in [
        Pole::Vector(DVec3::new(1.0, 1.0, 0.0)),
        Pole::Vector(DVec3::new(-2.0, -2.0, 0.0)),
        Pole::Vector(DVec3::ZERO),
        Pole::Hint(DVec3::new(0.7, 0.7, 0.0)),
    ] {
        let input = TwoBoneInput {
            target: DVec3::new(1.0, 1.0, 0.0),
            pole,
            ..straight_arm(1.0, 1.0)
        };
        let out = solve(&input, &settings);
        assert_finite(&out, "pole along the limb");
        assert!(out.reached);
        assert!((end_after(&input, &out) - input.target).length() < TOLERANCE);
    }
}

#[test]
fn zero_length_bones_and_axis_along_a_bone_aim_what_they_can() {
    let settings = TwoBoneSettings::default();
    for (l1, l2) in [(0.0, 1.0), (1.0, 0.0), (0.0, 0.0)] {
        for target in [DVec3::new(0.3, 0.4, 0.5), DVec3::ZERO, DVec3::X] {
            let input = TwoBoneInput {
                target,
                ..straight_arm(l1, l2)
            };
            let out = solve(&input, &settings);
            assert_finite(&out, "zero-length bone");
            let end = end_after(&input, &out);
            let reachable = (target.length() - (l1 + l2)).abs() < 1e-12;
            assert_eq!(out.reached, reachable, "{l1} {l2} {target}");
            if l1 + l2 > 0.0 && target != DVec3::ZERO {
                // A single bone still aims at the target.
                let aim = end.normalize().dot(target.normalize());
                assert!((aim - 1.0).abs() < 1e-12, "{l1} {l2} {target}: {aim}");
            }
        }
    }

    // Hinge axis along a bone: the mid joint cannot change the reach; the start still aims.
    let input = TwoBoneInput {
        mid_axis: DVec3::X,
        target: DVec3::new(0.0, 3.0, 0.0),
        ..straight_arm(1.0, 1.0)
    };
    let out = solve(&input, &settings);
    assert_finite(&out, "axis along the bones");
    assert_eq!(out.mid_correction, ikarus_core::glam::DQuat::IDENTITY);
    assert!(!out.reached);
    assert!((end_after(&input, &out) - DVec3::new(0.0, 2.0, 0.0)).length() < TOLERANCE);
}

#[test]
fn weight_blends_the_corrections_from_identity() {
    for_random_rigs(10, 500, 0.1, |(name, _), rng, rig, pose, model| {
        let reach = rng.range((rig.l1 - rig.l2).abs(), rig.l1 + rig.l2);
        let target = model[rig.chain.start].transform_point3(rng.direction() * reach);
        let input = rig.input(&pose, &model, target, Pole::Vector(rng.direction()));
        let with = |weight| solve(&input, &settings(0.0, weight));
        let full = common::assert_weight_clamped(name, with, &TwoBoneOutput::IDENTITY, -3.0, 7.0);
        assert!(full.reached, "{name}");
        let w = rng.range(0.01, 0.99);
        let part = with(w);
        assert!(!part.reached, "{name}: a partial correction does not reach");
        for (p, f) in [
            (part.start_correction, full.start_correction),
            (part.mid_correction, full.mid_correction),
        ] {
            let expected = DQuat::IDENTITY.slerp(f, w);
            assert!(rotation_gap(p, expected) < 1e-12, "{name}: slerp by {w}");
            let ratio = p.angle_between(DQuat::IDENTITY) / f.angle_between(DQuat::IDENTITY);
            if f.angle_between(DQuat::IDENTITY) > 1e-3 {
                assert!((ratio - w).abs() < 1e-6, "{name}: {ratio} vs {w}");
            }
        }
    });
}

/// End distance from the start (start space) after solving for a target at `distance` along
/// `direction` with the given soften ratio; also checks the end is on the target ray.
fn softened_reach(rig: &Rig, soften: f64, direction: DVec3, distance: f64) -> (f64, bool) {
    let mut pose = rig.skeleton.rest_pose();
    let before = model_of(&rig.skeleton, &pose);
    let model_from_start = before[rig.chain.start];
    let target = model_from_start.transform_point3(direction * distance);
    let settings = TwoBoneSettings {
        soften,
        ..TwoBoneSettings::default()
    };
    let reached = rig.solve(target, Pole::Vector(DVec3::Y), &settings, &mut pose);
    let after = model_of(&rig.skeleton, &pose);
    let end = model_from_start
        .inverse()
        .transform_point3(after.position(rig.chain.end));
    assert!(
        end.normalize().dot(direction) > 1.0 - 1e-12,
        "end off the target ray"
    );
    (end.length(), reached)
}

#[test]
fn soften_slows_the_approach_to_full_extension_continuously_and_monotonically() {
    let mut rng = Rng(11);
    for (name, parent) in parent_transforms() {
        let rig = Rig::random(&mut rng, parent, 0.6, 0.4);
        let direction = rng.direction();
        let full = 1.0;
        for soften in [0.0, 0.5, 0.8, 0.97, 1.0] {
            let da = soften * full;
            let ds = full - da;
            let expected = |x: f64| {
                if x <= da || ds == 0.0 {
                    x.min(full)
                } else {
                    da + ds * (1.0 - (-(x - da) / ds).exp())
                }
            };
            let mut previous = 0.0;
            let steps = 600;
            for i in 0..=steps {
                let x = 0.25 + 2.75 * f64::from(i) / f64::from(steps);
                let (d, reached) = softened_reach(&rig, soften, direction, x);
                assert!(
                    (d - expected(x)).abs() < TOLERANCE,
                    "{name} soften {soften}: x {x} gave {d}, expected {}",
                    expected(x)
                );
                // Reached exactly where the end is not held back: x ≤ da, or x ≤ full without
                // softening.
                let inside = x - expected(x) <= 1e-12;
                assert_eq!(reached, inside, "{name} soften {soften} x {x}");
                assert!(d <= full + 1e-12, "{name}: beyond full reach");
                if soften < 1.0 {
                    // Increasing (strictly until it is within rounding of the full reach);
                    // never farther than the target; slope at most 1.
                    assert!(
                        d >= previous - 1e-15,
                        "{name} soften {soften}: decreasing at {x}"
                    );
                    if full - d > 1e-9 {
                        assert!(d > previous, "{name} soften {soften}: flat at {x}");
                    }
                    assert!(d <= x + TOLERANCE);
                    if i > 0 {
                        assert!(d - previous <= 2.75 / f64::from(steps) + TOLERANCE);
                    }
                    // No snap: just past `da` the chain is still clearly bent.
                    if x > da && x - da < 5.0 * ds {
                        assert!(
                            full - d > 1e-3 * ds,
                            "{name} soften {soften}: snapped at {x}"
                        );
                    }
                }
                previous = d;
            }
            // Slope 1 on both sides of the soft zone's start (C1 join), for soften in (0, 1).
            if soften > 0.0 && soften < 1.0 {
                let h = 1e-6;
                let (below, _) = softened_reach(&rig, soften, direction, da - h);
                let (above, _) = softened_reach(&rig, soften, direction, da + h);
                let slope = (above - below) / (2.0 * h);
                assert!((slope - 1.0).abs() < 1e-4, "{name}: slope {slope} at da");
            }
        }
    }
}

#[test]
fn recover_pole_reproduces_the_solved_bend_plane() {
    for_random_rigs(12, 2000, 0.1, |(name, _), rng, rig, mut pose, before| {
        let (lo, hi) = ((rig.l1 - rig.l2).abs(), rig.l1 + rig.l2);
        let reach = rng.range(lo + 0.05 * (hi - lo), hi - 0.05 * (hi - lo));
        let target = before[rig.chain.start].transform_point3(rng.direction() * reach);
        let start = before.position(rig.chain.start);
        let pole = rng.direction();
        if pole.cross((target - start).normalize()).length() < 0.1 {
            return;
        }
        let settings = TwoBoneSettings::default();
        let chain = &rig.chain;
        assert!(rig.solve(target, Pole::Vector(pole), &settings, &mut pose));
        let (s, m, e) = joint_positions(&rig, &model_of(&rig.skeleton, &pose));
        let recovered = recover_pole(s, m, e).expect("a bent arm has a plane");
        let expected = normal_part(pole, target - start).normalize();
        assert!(
            (recovered - expected).length() < TOLERANCE,
            "{name}: recovered {recovered}, solved with {expected}"
        );
        // Solving again with the recovered pole (vector or hint) leaves the pose alone.
        for pole in [Pole::Vector(recovered), Pole::Hint(s + recovered * 0.7)] {
            let mut again = pose.clone();
            assert!(rig.solve(e, pole, &settings, &mut again));
            for j in [chain.start, chain.mid] {
                let turn = rotation_gap(again[j].rotation, pose[j].rotation);
                assert!(
                    turn < TOLERANCE,
                    "{name}: round trip turned a joint by {turn}"
                );
            }
        }
    });
}

#[test]
fn oblique_hinge_axes_are_solved_exactly_within_their_narrower_reach() {
    let mut rng = Rng(13);
    let parent = Transform::IDENTITY;
    for _ in 0..3000 {
        let rig = Rig::with_random_lengths(&mut rng, parent, 0.1, 1.0);
        let axis = rng.direction();
        let chain = TwoBoneChain::new(
            &rig.skeleton,
            rig.chain.start,
            rig.chain.mid,
            rig.chain.end,
            axis,
        )
        .unwrap();
        let rig = Rig { chain, ..rig };
        // Reach of a hinge about `axis`, from the bones in the mid joint's rest frame.
        let mid_rest = *rig.skeleton.rest(chain.mid);
        let upper = mid_rest.rotation.inverse() * mid_rest.translation;
        let lower = rig.skeleton.rest(chain.end).translation;
        let perp = |v: DVec3| v - axis * v.dot(axis);
        let base = upper.length_squared()
            + lower.length_squared()
            + 2.0 * upper.dot(axis) * lower.dot(axis);
        let rho = perp(upper).length() * perp(lower).length();
        let (lo, hi) = (
            (base - 2.0 * rho).max(0.0).sqrt(),
            (base + 2.0 * rho).sqrt(),
        );
        for far in [false, true] {
            let mut pose = rig.random_pose(&mut rng);
            let before = model_of(&rig.skeleton, &pose);
            let direction = rng.direction();
            let distance = if far {
                hi * rng.range(1.01, 3.0)
            } else {
                rng.range(lo, hi)
            };
            let target = before.position(chain.start) + direction * distance;
            let mut model = ModelPose::new(&rig.skeleton);
            let reached = solve_chain(
                &rig.skeleton,
                &chain,
                target,
                Pole::Vector(rng.direction()),
                &TwoBoneSettings::default(),
                &mut pose,
                &mut model,
            );
            assert_eq!(reached, !far);
            let after = model_of(&rig.skeleton, &pose);
            let end = after.position(chain.end) - after.position(chain.start);
            let expected = direction * distance.min(hi);
            assert!((end - expected).length() < TOLERANCE, "{end} vs {expected}");
            // The mid joint turned about its hinge only.
            let delta = mid_rest.rotation.inverse() * pose[chain.mid].rotation;
            let (x, y, z, _) = delta.into();
            assert!(DVec3::new(x, y, z).cross(axis).length() < 1e-12);
        }
    }
}

#[test]
fn builtin_humanoid_arm_and_leg_bend_the_anatomical_way() {
    let skeleton = builtin_humanoid();
    let mut rng = Rng(14);
    // Elbows point back (−Z), knees forward (+Z).
    for (names, pole) in [
        (["leftUpperArm", "leftLowerArm", "leftHand"], -DVec3::Z),
        (["leftUpperLeg", "leftLowerLeg", "leftFoot"], DVec3::Z),
    ] {
        let [start, mid, end] = names.map(|n| skeleton.joint(n).unwrap());
        let chain = TwoBoneChain::from_hinge(&skeleton, start, mid, end).unwrap();
        let rest = model_of(&skeleton, &skeleton.rest_pose());
        let l1 = (rest.position(mid) - rest.position(start)).length();
        let l2 = (rest.position(end) - rest.position(mid)).length();
        let mut model = ModelPose::new(&skeleton);
        let mut flexed = 0;
        for _ in 0..5000 {
            // From the straight T-pose each time: the degenerate start of every real rig.
            let mut pose = skeleton.rest_pose();
            let s = rest.position(start);
            let target = s + rng.direction() * rng.range((l1 - l2).abs(), l1 + l2);
            let reached = solve_with_pole(&skeleton, &chain, target, pole, &mut pose, &mut model);
            assert!(reached);
            let after = model_of(&skeleton, &pose);
            assert!((after.position(end) - target).length() < TOLERANCE);
            assert_on_pole_side(s, after.position(mid), target - s, pole, names[1]);
            // A pure flexion about the hinge axis, by an angle in [0, π].
            let q = pose[mid].rotation;
            let q = if q.w < 0.0 { -q } else { q };
            let xyz = DVec3::new(q.x, q.y, q.z);
            assert!(xyz.cross(chain.mid_axis).length() < 1e-12, "{}", names[1]);
            assert!(
                xyz.dot(chain.mid_axis) >= -1e-12,
                "{} bent backwards",
                names[1]
            );
            if q.angle_between(DQuat::IDENTITY) <= 150f64.to_radians() {
                assert!(skeleton.limit(mid).violation(q) < 1e-12);
                flexed += 1;
            }
            // The rest of the body did not move.
            for j in skeleton.joints() {
                if !skeleton.is_ancestor_or_self(start, j) {
                    assert_eq!(after.position(j), rest.position(j));
                }
            }
        }
        assert!(
            flexed > 2500,
            "{}: most targets need < 150° of flexion",
            names[1]
        );
    }
}

#[test]
fn cmu_bvh_left_arm_round_trips_and_reaches() {
    let Some(document) = cmu_jump("cmu_bvh_left_arm_round_trips_and_reaches", CMU_TO_METRES) else {
        return;
    };
    let skeleton = &document.skeleton;
    let motion = document.motion.as_ref().unwrap();
    let [start, mid, end] =
        ["LeftArm", "LeftForeArm", "LeftHand"].map(|n| skeleton.joint(n).unwrap());
    let mut rng = Rng(15);
    let mut model = ModelPose::new(skeleton);
    let mut frames = 0;
    for frame in (0..motion.len()).step_by(25) {
        let pose = motion.frame(frame).unwrap().clone();
        let before = model_of(skeleton, &pose);
        let (s, m, e) = (
            before.position(start),
            before.position(mid),
            before.position(end),
        );
        let Some(recovered) = recover_pole(s, m, e) else {
            continue;
        };
        // The elbow's bend axis in its rest frame, from this frame's bend.
        let bend_model = (m - s).cross(e - m);
        if bend_model.length() < 1e-3 * (m - s).length() * (e - m).length() {
            continue;
        }
        frames += 1;
        let axis_current = before.rotation(mid).inverse() * bend_model.normalize();
        let axis_rest = skeleton.rest(mid).rotation.inverse() * (pose[mid].rotation * axis_current);
        let chain = TwoBoneChain::new(skeleton, start, mid, end, axis_rest).unwrap();

        // IK(FK(pose)) with the recovered pole is the pose itself.
        let mut same = pose.clone();
        assert!(solve_with_pole(
            skeleton, &chain, e, recovered, &mut same, &mut model
        ));
        let again = model_of(skeleton, &same);
        for j in skeleton.joints() {
            let moved = (again.position(j) - before.position(j)).length();
            assert!(
                moved < TOLERANCE,
                "frame {frame}: {} moved {moved}",
                skeleton.name(j)
            );
        }

        // Random reachable targets from this real pose.
        let (l1, l2) = ((m - s).length(), (e - m).length());
        for _ in 0..40 {
            let mut p = pose.clone();
            let target = s + rng.direction() * rng.range((l1 - l2).abs(), l1 + l2);
            let pole = rng.direction();
            assert!(solve_with_pole(
                skeleton, &chain, target, pole, &mut p, &mut model
            ));
            let after = model_of(skeleton, &p);
            let error = (after.position(end) - target).length();
            assert!(error < TOLERANCE, "frame {frame}: {error}");
            assert_on_pole_side(s, after.position(mid), target - s, pole, "cmu");
            assert_eq!(after.position(start), s);
        }
    }
    assert!(frames > 50, "only {frames} frames with a bent elbow");
}

/// Rigs under every parent transform with random targets and poles (vectors and hints), and
/// the special cases mixed in: a straight and a folded arm, a target at the start joint, a pole
/// along the target axis, zero-length bones, singular and non-finite joints and targets.
fn batch_inputs(rng: &mut Rng) -> Vec<TwoBoneInput> {
    let mut inputs = Vec::new();
    for (_, parent) in parent_transforms() {
        for i in 0..50 {
            let rig = Rig::with_random_lengths(rng, parent, 0.1, 1.0);
            let pose = rig.random_pose(rng);
            let model = model_of(&rig.skeleton, &pose);
            let start = model.position(rig.chain.start);
            let target = start + rng.in_ball() * (1.2 * (rig.l1 + rig.l2));
            let pole = if i % 3 == 0 {
                Pole::Hint(start + rng.in_ball())
            } else {
                Pole::Vector(rng.direction())
            };
            inputs.push(rig.input(&pose, &model, target, pole));
        }
    }
    let straight = straight_arm(0.4, 0.3);
    let special = [
        straight,
        TwoBoneInput {
            end_joint: DAffine3::from_translation(DVec3::X * 0.1), // folded back
            ..straight
        },
        TwoBoneInput {
            target: DVec3::ZERO,
            ..straight
        },
        TwoBoneInput {
            pole: Pole::Vector(straight.target * 2.0),
            ..straight
        },
        TwoBoneInput {
            mid_joint: DAffine3::IDENTITY,
            ..straight
        },
        TwoBoneInput {
            start_joint: DAffine3::from_scale(DVec3::new(1.0, 0.0, 1.0)),
            ..straight
        },
        TwoBoneInput {
            target: DVec3::new(f64::NAN, 0.0, 0.0),
            ..straight
        },
        TwoBoneInput {
            mid_joint: DAffine3::from_translation(DVec3::new(f64::INFINITY, 0.0, 0.0)),
            ..straight
        },
        TwoBoneInput {
            mid_axis: DVec3::ZERO,
            ..straight
        },
    ];
    // Spread through the batch so that special lanes share registers with ordinary ones.
    for (k, input) in special.into_iter().enumerate() {
        inputs.insert(7 + 37 * k, input);
    }
    inputs
}

#[test]
fn batch_gives_the_bits_of_single_solves() {
    let mut rng = Rng(16);
    let inputs = batch_inputs(&mut rng);
    assert_ne!(inputs.len() % 8, 0, "a tail that fills no register");
    let blended = TwoBoneSettings {
        twist_angle: 0.3,
        soften: 0.9,
        weight: 0.8,
    };
    let twisted = TwoBoneSettings {
        twist_angle: -1.1,
        ..TwoBoneSettings::default()
    };
    let nan_twist = TwoBoneSettings {
        twist_angle: f64::NAN,
        ..TwoBoneSettings::default()
    };
    let past_one = TwoBoneSettings {
        soften: f64::INFINITY,
        weight: 2.0,
        ..TwoBoneSettings::default()
    };
    for settings in [
        TwoBoneSettings::default(),
        twisted,
        blended,
        nan_twist,
        past_one,
    ] {
        let mut outputs = vec![TwoBoneOutput::default(); inputs.len()];
        solve_slice(&inputs, &settings, &mut outputs);
        for (index, (input, output)) in inputs.iter().zip(&outputs).enumerate() {
            assert_eq!(*output, solve(input, &settings), "{index}: {settings:?}");
            assert!(
                output.start_correction.is_finite() && output.mid_correction.is_finite(),
                "{index}"
            );
        }
        // And every length, so that each tail size goes through the scalar remainder.
        for length in 0..=17 {
            let mut short = vec![TwoBoneOutput::default(); length];
            solve_slice(&inputs[..length], &settings, &mut short);
            assert_eq!(short, outputs[..length], "length {length}");
        }
    }
    let reached = inputs
        .iter()
        .filter(|input| solve(input, &TwoBoneSettings::default()).reached)
        .count();
    assert!(reached > inputs.len() / 3, "only {reached} reached");
}

#[test]
fn chains_are_validated_at_construction() {
    let skeleton = builtin_humanoid();
    let j = |n| skeleton.joint(n).unwrap();
    let (upper, lower, hand) = (j("leftUpperArm"), j("leftLowerArm"), j("leftHand"));
    assert!(matches!(
        TwoBoneChain::new(&skeleton, lower, upper, hand, DVec3::Z),
        Err(TwoBoneChainError::NotAChain { .. })
    ));
    assert!(matches!(
        TwoBoneChain::new(&skeleton, upper, lower, j("rightHand"), DVec3::Z),
        Err(TwoBoneChainError::NotAChain { .. })
    ));
    assert!(matches!(
        TwoBoneChain::new(&skeleton, upper, upper, hand, DVec3::Z),
        Err(TwoBoneChainError::NotAChain { .. })
    ));
    assert!(matches!(
        TwoBoneChain::new(&skeleton, upper, lower, JointId::from_index(999), DVec3::Z),
        Err(TwoBoneChainError::UnknownJoint { .. })
    ));
    assert!(matches!(
        TwoBoneChain::new(&skeleton, upper, lower, hand, DVec3::ZERO),
        Err(TwoBoneChainError::BadAxis { .. })
    ));
    assert!(matches!(
        TwoBoneChain::from_hinge(&skeleton, j("leftShoulder"), upper, lower),
        Err(TwoBoneChainError::NoHinge { .. })
    ));
    // Intermediate joints are allowed (shoulder → lower arm skips the upper arm).
    let chain =
        TwoBoneChain::new(&skeleton, j("leftShoulder"), lower, hand, DVec3::Y * 2.0).unwrap();
    assert_eq!(chain.mid_axis, DVec3::Y);
}
