//! Aim IK against forward-kinematics ground truth: every check applies the correction to a
//! `LocalPose`, runs FK from scratch and measures in model space the angle between the joint's
//! actual line of sight (from its eye point) and the direction to the target.
//!
//! Random rigs hang below a root that carries one of six parent transforms (identity,
//! translated, rotated, uniform scale, non-uniform scale, mirrored); a quarter of them also give
//! the aimed joint its own non-uniform scale. The line of sight (`forward`, `up`, `offset`) is
//! in the joint's local frame, so its model-space image is `model_from_joint` of it.

use ikarus_testdata::assert::{model_of, normal_part, rotation_gap};
use ikarus_testdata::transforms::{parent_transforms, rooted};
use ikarus_testdata::{Draw, Rng};
use std::f64::consts::PI;

use ikarus_core::glam::{DAffine3, DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{JointId, LocalPose, ModelPose, Skeleton, Transform};
use ikarus_solve::aim::{
    AimChain, AimChainError, AimInput, AimOutput, AimSettings, AimStatus, MultiAimChain, Pole,
    solve, solve_chain, solve_chain_multi, solve_slice,
};
use ikarus_testdata::limits::swing_twist_y;

mod common;

const TOLERANCE: f64 = 1e-9;

/// root (parent transform) → joint (random offset, rest rotation, sometimes its own scale) →
/// child, with a random line of sight on the joint.
struct Rig {
    skeleton: Skeleton,
    chain: AimChain,
}

impl Rig {
    /// `offset`: whether the line of sight starts away from the joint.
    fn random(rng: &mut Rng, parent: Transform, offset: bool) -> Self {
        let scale = if rng.unit() < 0.25 {
            DVec3::new(
                rng.range(0.5, 2.0),
                rng.range(0.5, 2.0),
                rng.range(0.5, 2.0),
            )
        } else {
            DVec3::ONE
        };
        let mut builder = rooted(parent);
        builder
            .joint(
                "joint",
                Some("root"),
                Transform {
                    translation: rng.in_ball() * 0.5,
                    rotation: rng.rotation(),
                    scale,
                },
            )
            .joint(
                "child",
                Some("joint"),
                Transform::from_translation(rng.in_ball()),
            );
        let skeleton = builder.build().unwrap();
        let forward = rng.direction();
        let up = loop {
            let up = rng.direction();
            if up.cross(forward).length() > 0.2 {
                break up;
            }
        };
        let offset = if offset {
            rng.in_ball() * 0.3
        } else {
            DVec3::ZERO
        };
        let joint = skeleton.joint("joint").unwrap();
        let chain = AimChain::new(&skeleton, joint, forward, up, offset).unwrap();
        Self { skeleton, chain }
    }

    fn random_pose(&self, rng: &mut Rng) -> LocalPose {
        let mut pose = self.skeleton.rest_pose();
        pose[self.chain.joint].rotation = rng.rotation();
        pose
    }

    /// The kernel's input for aiming this rig from `pose` (whose model is `model`).
    fn input(&self, pose: &LocalPose, model: &ModelPose, target: DVec3, pole: Pole) -> AimInput {
        self.chain.input(&self.skeleton, pose, model, target, pole)
    }

    /// `solve_chain` on this rig under `settings`, writing `pose`.
    fn solve(
        &self,
        target: DVec3,
        pole: Pole,
        settings: &AimSettings,
        pose: &mut LocalPose,
    ) -> AimOutput {
        let Self { skeleton, chain } = self;
        let mut model = ModelPose::new(skeleton);
        solve_chain(skeleton, chain, target, pole, settings, pose, &mut model)
    }

    /// `model_from_joint` without the joint's own scale (the frame the correction turns in).
    fn turning_frame(&self, model: &ModelPose, pose: &LocalPose) -> DAffine3 {
        model[self.chain.joint] * DAffine3::from_scale(pose[self.chain.joint].scale.recip())
    }

    /// The eye's distance from the joint in the turning frame.
    fn eye_radius(&self, pose: &LocalPose) -> f64 {
        (pose[self.chain.joint].scale * self.chain.offset).length()
    }

    /// A random rig under `parent` (with an eye offset when `offset`), a random pose of it, the
    /// pose's model, and a target outside the eye's sphere (0.1 to 2 beyond its radius in the
    /// turning frame), drawn in that order.
    fn random_case(
        rng: &mut Rng,
        parent: Transform,
        offset: bool,
    ) -> (Self, LocalPose, ModelPose, DVec3) {
        let rig = Self::random(rng, parent, offset);
        let pose = rig.random_pose(rng);
        let model = model_of(&rig.skeleton, &pose);
        let radius = rig.eye_radius(&pose);
        let target = rig
            .turning_frame(&model, &pose)
            .transform_point3(rng.direction() * (radius + rng.range(0.1, 2.0)));
        (rig, pose, model, target)
    }
}

/// Runs `check` on `cases` random cases under each parent transform (the parent's name, the
/// generator for further draws, and [`Rig::random_case`]'s rig, pose, model and target, with
/// an eye offset in every second case), all drawn from one `Rng(seed)`.
fn for_random_cases(
    seed: u64,
    cases: usize,
    mut check: impl FnMut(&str, &mut Rng, Rig, LocalPose, ModelPose, DVec3),
) {
    let mut rng = Rng(seed);
    for (name, parent) in parent_transforms() {
        for n in 0..cases {
            let (rig, pose, model, target) = Rig::random_case(&mut rng, parent, n % 2 == 0);
            check(name, &mut rng, rig, pose, model, target);
        }
    }
}

/// The default settings but for `twist_angle` and `weight`.
fn settings(twist_angle: f64, weight: f64) -> AimSettings {
    AimSettings {
        twist_angle,
        weight,
        ..AimSettings::default()
    }
}

/// The line of sight of `chain` in model space after FK: eye point, direction, up axis.
fn sight(model: &ModelPose, chain: &AimChain) -> (DVec3, DVec3, DVec3) {
    let m = model[chain.joint];
    (
        m.transform_point3(chain.offset),
        m.transform_vector3(chain.forward),
        m.transform_vector3(chain.up),
    )
}

/// Angle between `direction` and `to` (accurate near zero, unlike `acos`).
fn angle(direction: DVec3, to: DVec3) -> f64 {
    direction.cross(to).length().atan2(direction.dot(to))
}

/// How far the line of sight misses the target, radians.
fn miss(model: &ModelPose, chain: &AimChain, target: DVec3) -> f64 {
    let (eye, forward, _) = sight(model, chain);
    angle(forward, target - eye)
}

/// How far (sine of the angle) `up` lies off the plane spanned by `line` and `pole`, and
/// whether it is on the pole's side; `None` when the plane or the side is ill-conditioned.
fn pole_plane_error(up: DVec3, line: DVec3, pole: DVec3) -> Option<(f64, bool)> {
    let normal = line.cross(pole);
    if normal.length() < 0.1 * line.length() * pole.length() {
        return None; // pole nearly along the line: the plane is ill-conditioned
    }
    let off_plane = up.normalize().dot(normal.normalize()).abs();
    let up_n = normal_part(up, line);
    if up_n.length() < 1e-6 * up.length() {
        return None;
    }
    Some((off_plane, up_n.dot(normal_part(pole, line)) > 0.0))
}

fn pole_direction(pole: Pole, joint: DVec3) -> DVec3 {
    match pole {
        Pole::Vector(v) => v,
        Pole::Hint(h) => h - joint,
    }
}

/// 100,000 random targets outside the offset sphere from random poses of random rigs under
/// `parent` (every third without an offset, every second with a hint instead of a pole
/// vector): the line of sight passes through the target, the up axis lies in the plane of the
/// joint→target line and the pole, on the pole's side.
fn aims_at_random_targets(parent_name: &str, parent: Transform, seed: u64) {
    let mut rng = Rng(seed);
    let settings = AimSettings::default();
    let (mut worst_miss, mut worst_plane): (f64, f64) = (0.0, 0.0);
    let mut plane_checks = 0;
    for r in 0..1000 {
        let rig = Rig::random(&mut rng, parent, r % 3 != 0);
        let mut model = ModelPose::new(&rig.skeleton);
        for k in 0..100 {
            let mut pose = rig.random_pose(&mut rng);
            let before = model_of(&rig.skeleton, &pose);
            let frame = rig.turning_frame(&before, &pose);
            let radius = rig.eye_radius(&pose);
            let distance = rng.range(radius * 1.001 + 0.01, radius + 3.0);
            let target = frame.transform_point3(rng.direction() * distance);
            let joint = before.position(rig.chain.joint);
            let pole = if k % 2 == 0 {
                Pole::Vector(rng.direction())
            } else {
                Pole::Hint(joint + rng.direction() * rng.range(0.1, 3.0))
            };
            let Rig { skeleton, chain } = &rig;
            let out = solve_chain(
                skeleton, chain, target, pole, &settings, &mut pose, &mut model,
            );
            assert!(out.reached, "{parent_name}: target reported unreached");
            assert!(!out.limited, "{parent_name}: free joint reported limited");
            let after = model_of(&rig.skeleton, &pose);
            assert_eq!(after, model, "{parent_name}: model pose not updated");
            let error = miss(&after, &rig.chain, target);
            worst_miss = worst_miss.max(error);
            assert!(
                error < TOLERANCE,
                "{parent_name}: line of sight misses by {error} rad"
            );
            assert_eq!(after.position(rig.chain.joint), joint, "joint moved");
            let (_, _, up) = sight(&after, &rig.chain);
            if let Some((off_plane, pole_side)) =
                pole_plane_error(up, target - joint, pole_direction(pole, joint))
            {
                plane_checks += 1;
                worst_plane = worst_plane.max(off_plane);
                assert!(
                    off_plane < TOLERANCE,
                    "{parent_name}: up {off_plane} off the pole plane"
                );
                assert!(pole_side, "{parent_name}: up faces away from the pole");
            }
            assert!(pose.is_finite());
        }
    }
    assert!(plane_checks > 90_000, "{plane_checks}");
    eprintln!(
        "{parent_name}: worst miss over 100,000 targets {worst_miss:e} rad, worst up off the \
         pole plane {worst_plane:e}"
    );
}

ikarus_testdata::test_under_each_parent!(aims_at_random_targets:
    aims_at_100k_random_targets_identity_parent,
    aims_at_100k_random_targets_translated_parent,
    aims_at_100k_random_targets_rotated_parent,
    aims_at_100k_random_targets_uniformly_scaled_parent,
    aims_at_100k_random_targets_non_uniformly_scaled_parent,
    aims_at_100k_random_targets_mirrored_parent,
);

#[test]
fn twist_turns_the_up_axis_by_the_twist_angle_about_the_aim_line() {
    for_random_cases(7, 500, |name, rng, rig, pose, before, target| {
        let joint = before.position(rig.chain.joint);
        let pole = Pole::Vector(rng.direction());
        let twist = rng.range(-3.0, 3.0);
        let up_with = |twist_angle: f64| {
            let mut p = pose.clone();
            let out = rig.solve(target, pole, &settings(twist_angle, 1.0), &mut p);
            assert!(out.reached);
            let after = model_of(&rig.skeleton, &p);
            assert!(miss(&after, &rig.chain, target) < TOLERANCE);
            normal_part(sight(&after, &rig.chain).2, target - joint)
        };
        let plain = up_with(0.0);
        let twisted = up_with(twist);
        if plain.length() < 1e-3 {
            return; // up along the line: no roll to measure
        }
        let what = format!("{name}: the up axis");
        common::assert_turned_by(plain, twisted, target - joint, twist, &what);
    });
}

#[test]
fn weight_blends_the_correction_from_identity() {
    for_random_cases(8, 2000, |name, rng, rig, pose, model, target| {
        let input = rig.input(&pose, &model, target, Pole::Vector(rng.direction()));
        let with = |weight| solve(&input, &settings(0.0, weight));
        let full = common::assert_weight_clamped(name, with, &AimOutput::IDENTITY, -0.5, 2.0);
        assert!(full.reached, "{name}");
        let half = with(0.5);
        assert!(!half.reached && !half.limited, "{name}");
        let (full_angle, half_angle) = (
            full.correction.angle_between(DQuat::IDENTITY),
            half.correction.angle_between(DQuat::IDENTITY),
        );
        assert!(
            (half_angle - 0.5 * full_angle).abs() < 1e-7,
            "{name}: half weight turned {half_angle} of {full_angle}"
        );
        // Same axis: half twice is the full turn.
        let gap = rotation_gap(half.correction * half.correction, full.correction);
        assert!(gap < 1e-12, "{name}: {gap}");
        let quarter = with(0.25);
        let gap = rotation_gap(quarter.correction * quarter.correction, half.correction);
        assert!(gap < 1e-12, "{name}: {gap}");

        // Weight 0 leaves the pose alone through the chain too.
        let mut p = pose.clone();
        let out = rig.solve(target, Pole::Vector(DVec3::Y), &settings(0.0, 0.0), &mut p);
        assert!(!out.reached);
        assert_eq!(p, pose);
    });
}

#[test]
fn cone_limit_keeps_forward_within_the_angle_of_its_rest_direction() {
    let (mut limited_count, mut free_count) = (0, 0);
    for_random_cases(9, 2000, |name, rng, rig, mut pose, before, target| {
        let pole = Pole::Vector(rng.direction());
        let max_angle = rng.range(0.05, 2.5);
        let j = rig.chain.joint;
        // Forward in the parent's frame (before the joint's own scale is applied there:
        // rotations only), at rest and now.
        let scale = pose[j].scale;
        let forward_parent = |rotation: DQuat| rotation * (scale * rig.chain.forward);
        let rest_forward = forward_parent(rig.skeleton.rest(j).rotation);

        // Where the unconstrained solve would point the forward axis.
        let free = solve(
            &rig.input(&pose, &before, target, pole),
            &AimSettings::default(),
        );
        let free_angle = angle(
            forward_parent(pose[j].rotation * free.correction),
            rest_forward,
        );
        if (free_angle - max_angle).abs() < 1e-6 {
            return;
        }
        let settings = AimSettings {
            max_angle,
            ..AimSettings::default()
        };
        let out = rig.solve(target, pole, &settings, &mut pose);
        let after_angle = angle(forward_parent(pose[j].rotation), rest_forward);
        assert!(
            after_angle <= max_angle + TOLERANCE,
            "{name}: forward {after_angle} from rest, cone {max_angle}"
        );
        let after = model_of(&rig.skeleton, &pose);
        let error = miss(&after, &rig.chain, target);
        if free_angle > max_angle {
            limited_count += 1;
            assert!(out.limited && !out.reached, "{name}: {out:?}");
            assert!(
                (after_angle - max_angle).abs() < TOLERANCE,
                "{name}: clamped to {after_angle}, not onto the rim {max_angle}"
            );
            assert!(error > 1e-7, "{name}: limited yet on target");
        } else {
            free_count += 1;
            assert!(out.reached && !out.limited, "{name}: {out:?}");
            assert!(error < TOLERANCE, "{name}: {error}");
        }
    });
    assert!(limited_count > 2000 && free_count > 2000);
}

/// A head-like joint with a swing–twist limit (twist about +Y, forward +Z).
fn limited_head(parent: Transform) -> (Skeleton, AimChain) {
    let mut builder = rooted(parent);
    builder.limited_joint(
        "head",
        Some("root"),
        Transform::from_translation_rotation(
            DVec3::new(0.0, 1.5, 0.0),
            DQuat::from_rotation_x(0.1),
        ),
        swing_twist_y((-0.5, 0.6), (-0.4, 0.4), (-0.7, 0.7)),
    );
    let skeleton = builder.build().unwrap();
    let head = skeleton.joint("head").unwrap();
    let chain = AimChain::new(
        &skeleton,
        head,
        DVec3::Z,
        DVec3::Y,
        DVec3::new(0.0, 0.07, 0.08),
    )
    .unwrap();
    (skeleton, chain)
}

#[test]
fn joint_limits_hold_and_report_when_they_clamp_the_aim() {
    let mut rng = Rng(10);
    let (mut clamped, mut free) = (0, 0);
    for (name, parent) in parent_transforms() {
        let (skeleton, chain) = limited_head(parent);
        let j = chain.joint;
        let limit = skeleton.limit(j).clone();
        let rest = skeleton.rest(j).rotation;
        let mut model = ModelPose::new(&skeleton);
        for _ in 0..3000 {
            let mut pose = skeleton.rest_pose();
            let before = model_of(&skeleton, &pose);
            let eye = before[j].transform_point3(chain.offset);
            // Half all around, half within about 35° of straight ahead.
            let direction = if rng.unit() < 0.5 {
                rng.direction()
            } else {
                (DVec3::Z + rng.in_ball() * 0.6).normalize()
            };
            let target = eye + before[j].transform_vector3(direction) * rng.range(0.5, 3.0);
            let pole = Pole::Vector(before[j].transform_vector3(DVec3::Y));
            let free_solve = solve(
                &chain.input(&skeleton, &pose, &before, target, pole),
                &AimSettings::default(),
            );
            let wanted = rest.inverse() * pose[j].rotation * free_solve.correction;
            let out = solve_chain(
                &skeleton,
                &chain,
                target,
                pole,
                &AimSettings::default(),
                &mut pose,
                &mut model,
            );
            let delta = rest.inverse() * pose[j].rotation;
            assert!(limit.violation(delta) < TOLERANCE, "{name}: left the limit");
            assert_eq!(out.limited, !limit.contains(wanted), "{name}");
            let after = model_of(&skeleton, &pose);
            let error = miss(&after, &chain, target);
            if out.limited {
                clamped += 1;
                assert_eq!(out.reached, error < TOLERANCE, "{name}: {error}");
            } else {
                free += 1;
                assert!(out.reached && error < TOLERANCE, "{name}: {error}");
            }
            // The correction reported is the one applied.
            let applied = skeleton.rest_pose()[j].rotation * out.correction;
            assert!(rotation_gap(applied, pose[j].rotation) < 1e-12);
        }
    }
    assert!(clamped > 3000 && free > 3000, "{clamped} {free}");

    // Explicit cases: a target far to the side clamps; one just ahead does not.
    let (skeleton, chain) = limited_head(Transform::IDENTITY);
    let mut model = ModelPose::new(&skeleton);
    for (target, limited) in [
        (DVec3::new(3.0, 1.6, 0.0), true),
        (DVec3::new(0.2, 1.7, 2.0), false),
    ] {
        let mut pose = skeleton.rest_pose();
        let out = solve_chain(
            &skeleton,
            &chain,
            target,
            Pole::Vector(DVec3::Y),
            &AimSettings::default(),
            &mut pose,
            &mut model,
        );
        assert_eq!(out.limited, limited, "{target}");
        assert_eq!(out.reached, !limited, "{target}");
        assert!(skeleton.limit_violation(&pose).is_none());
    }
}

#[test]
fn targets_inside_the_offset_sphere_bring_the_ray_as_close_as_possible() {
    let mut rng = Rng(11);
    let mut count = 0;
    for (name, parent) in parent_transforms() {
        for _ in 0..3000 {
            let rig = Rig::random(&mut rng, parent, true);
            let mut pose = rig.random_pose(&mut rng);
            let before = model_of(&rig.skeleton, &pose);
            let frame = rig.turning_frame(&before, &pose);
            let j = rig.chain.joint;
            let scale = pose[j].scale;
            // The eye and forward axis in the turning frame.
            let o = scale * rig.chain.offset;
            let f = (scale * rig.chain.forward).normalize();
            let radius = o.length();
            if radius < 0.02 {
                continue;
            }
            // The ray's point closest to the joint: its distance bounds how close any rotation
            // can bring the ray to a target nearer the joint.
            let s_closest = (-o.dot(f)).max(0.0);
            let nearest = (o + f * s_closest).length();
            let distance = nearest * rng.range(0.05, 0.99);
            let t = rng.direction() * distance;
            let target = frame.transform_point3(t);
            let out = rig.solve(
                target,
                Pole::Vector(rng.direction()),
                &AimSettings::default(),
                &mut pose,
            );
            assert!(!out.reached, "{name}: unreachable target reported reached");
            assert!(pose.is_finite());
            // Back in the (unchanged) turning frame: the gap from the target to the ray.
            let after = model_of(&rig.skeleton, &pose);
            let joint_from_model = frame.inverse();
            let (eye, forward, _) = sight(&after, &rig.chain);
            let eye = joint_from_model.transform_point3(eye);
            let forward = joint_from_model.transform_vector3(forward).normalize();
            let s = (t - eye).dot(forward).max(0.0);
            let gap = (eye + forward * s - t).length();
            assert!(
                (gap - (nearest - distance)).abs() < TOLERANCE,
                "{name}: ray {gap} from the target, {} is possible",
                nearest - distance
            );
            count += 1;
        }
    }
    assert!(count > 15_000);
}

#[test]
fn crossing_the_offset_sphere_does_not_pop() {
    let mut rng = Rng(12);
    let mut checked = 0;
    for _ in 0..2000 {
        let offset = rng.in_ball() * 0.3;
        let forward = rng.direction();
        let along = forward.dot(offset);
        // The reach boundary: |o| when the eye looks outwards, |c| when it looks inwards.
        let boundary = if along > 0.0 {
            offset.length()
        } else {
            (offset - forward * along).length()
        };
        if boundary < 0.01 {
            continue;
        }
        let direction = rng.direction();
        let up = forward.any_orthonormal_vector();
        let with = |distance: f64| {
            solve(
                &AimInput {
                    target: direction * distance,
                    pole: Pole::Vector(rng_free_pole(direction)),
                    forward,
                    up,
                    offset,
                    ..AimInput::default()
                },
                &AimSettings::default(),
            )
        };
        // Continuous, though only like a square root where the ray grazes the sphere.
        let inside = with(boundary * (1.0 - 1e-12));
        let outside = with(boundary * (1.0 + 1e-12));
        assert!(outside.reached && !inside.reached);
        // Where the roll is well conditioned (up across the line; otherwise a tiny change of
        // the aim turns the roll, and the line of sight with it, a lot, target near or far).
        let up_across = normal_part(outside.correction * up, direction).length();
        if up_across > 0.1 {
            let gap = rotation_gap(inside.correction, outside.correction);
            assert!(gap < 1e-4, "{gap}");
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked}");
}

/// A pole well away from `direction`.
fn rng_free_pole(direction: DVec3) -> DVec3 {
    if direction.y.abs() < 0.9 {
        DVec3::Y
    } else {
        DVec3::X
    }
}

#[test]
fn humanoid_head_and_eyes_look_at_a_point() {
    let skeleton = builtin_humanoid();
    let j = |n| skeleton.joint(n).unwrap();
    let (head, left_eye, right_eye) = (j("head"), j("leftEye"), j("rightEye"));
    // The head's line of sight starts between the eyes.
    let rest = model_of(&skeleton, &skeleton.rest_pose());
    let between = 0.5 * (rest.position(left_eye) + rest.position(right_eye)) - rest.position(head);
    let head_chain = AimChain::new(&skeleton, head, DVec3::Z, DVec3::Y, between).unwrap();
    let eyes = [left_eye, right_eye]
        .map(|eye| AimChain::new(&skeleton, eye, DVec3::Z, DVec3::Y, DVec3::ZERO).unwrap());
    let mut rng = Rng(13);
    let mut model = ModelPose::new(&skeleton);
    for _ in 0..3000 {
        let mut pose = skeleton.rest_pose();
        let target = rest.position(head)
            + DVec3::new(
                rng.range(-0.6, 0.6),
                rng.range(-0.3, 0.3),
                rng.range(0.8, 3.0),
            );
        let pole = Pole::Vector(DVec3::Y);
        let settings = AimSettings::default();
        let out = solve_chain(
            &skeleton,
            &head_chain,
            target,
            pole,
            &settings,
            &mut pose,
            &mut model,
        );
        assert!(out.reached && !out.limited, "{target}: {out:?}");
        let after = model_of(&skeleton, &pose);
        assert!(miss(&after, &head_chain, target) < TOLERANCE);
        let (_, _, up) = sight(&after, &head_chain);
        let (off_plane, pole_side) =
            pole_plane_error(up, target - after.position(head), DVec3::Y).unwrap();
        assert!(off_plane < TOLERANCE && pole_side);
        // Then each eye converges on the target. Their roll is locked (twist range 0), which
        // the limit removes without moving the line of sight.
        for eye in &eyes {
            let out = solve_chain(
                &skeleton, eye, target, pole, &settings, &mut pose, &mut model,
            );
            assert!(out.reached, "{target}: {out:?}");
            let after = model_of(&skeleton, &pose);
            assert!(miss(&after, eye, target) < TOLERANCE);
        }
        let after = model_of(&skeleton, &pose);
        for eye in &eyes {
            assert!(miss(&after, eye, target) < TOLERANCE);
        }
        assert!(miss(&after, &head_chain, target) < TOLERANCE);
        assert!(skeleton.limit_violation(&pose).is_none());
    }
}

fn humanoid_spine_neck_head(offset: DVec3, weights: [f64; 3]) -> (Skeleton, MultiAimChain) {
    let skeleton = builtin_humanoid();
    let j = |n| skeleton.joint(n).unwrap();
    let eye = AimChain::new(&skeleton, j("head"), DVec3::Z, DVec3::Y, offset).unwrap();
    let chain = MultiAimChain::new(
        &skeleton,
        &[
            (j("spine"), weights[0]),
            (j("neck"), weights[1]),
            (j("head"), weights[2]),
        ],
        eye,
    )
    .unwrap();
    (skeleton, chain)
}

/// `solve_chain_multi` from the rest pose with default settings and the pole +Y: the pose it
/// writes and the status (`model` is left at the pose's FK).
fn multi_from_rest(
    skeleton: &Skeleton,
    chain: &MultiAimChain,
    target: DVec3,
    model: &mut ModelPose,
) -> (LocalPose, AimStatus) {
    let mut pose = skeleton.rest_pose();
    let status = solve_chain_multi(
        skeleton,
        chain,
        target,
        Pole::Vector(DVec3::Y),
        &AimSettings::default(),
        &mut pose,
        model,
    );
    (pose, status)
}

#[test]
fn humanoid_spine_neck_head_share_a_turn_by_their_weights() {
    // Eye on the spine's vertical axis, target level with it: every joint turns about +Y.
    let (skeleton, chain) = humanoid_spine_neck_head(DVec3::new(0.0, 0.07, 0.0), [0.3, 0.5, 1.0]);
    let rest = model_of(&skeleton, &skeleton.rest_pose());
    let head = chain.eye().joint;
    let eye = rest.position(head) + chain.eye().offset;
    let mut model = ModelPose::new(&skeleton);
    for yaw in [-1.0_f64, -0.3, 0.2, 1.0] {
        let target = eye + DVec3::new(yaw.sin(), 0.0, yaw.cos()) * 2.0;
        let (pose, status) = multi_from_rest(&skeleton, &chain, target, &mut model);
        assert!(status.reached && !status.limited, "{status:?}");
        let expected = [0.3 * yaw, 0.35 * yaw, 0.35 * yaw];
        for (&joint, expected) in chain.joints().iter().zip(expected) {
            let gap = rotation_gap(pose[joint].rotation, DQuat::from_rotation_y(expected));
            assert!(gap < 1e-12, "{}: {gap}", skeleton.name(joint));
        }
        let after = model_of(&skeleton, &pose);
        assert_eq!(after, model);
        assert!(miss(&after, chain.eye(), target) < TOLERANCE);
    }
}

#[test]
fn humanoid_spine_neck_head_end_on_target_within_limits() {
    let (skeleton, chain) = humanoid_spine_neck_head(DVec3::new(0.0, 0.07, 0.08), [0.2, 0.4, 1.0]);
    let rest = model_of(&skeleton, &skeleton.rest_pose());
    let head = chain.eye().joint;
    let mut rng = Rng(14);
    let mut model = ModelPose::new(&skeleton);
    let (mut reached, mut limited) = (0, 0);
    for n in 0..3000 {
        let wide = n % 3 == 0;
        let reach = if wide { 3.0 } else { 0.8 };
        let target = rest.position(head)
            + DVec3::new(
                rng.range(-reach, reach),
                rng.range(-0.4, 0.6),
                rng.range(if wide { -2.0 } else { 0.8 }, 3.0),
            );
        let (pose, status) = multi_from_rest(&skeleton, &chain, target, &mut model);
        let after = model_of(&skeleton, &pose);
        assert_eq!(after, model);
        assert!(skeleton.limit_violation(&pose).is_none(), "{target}");
        let error = miss(&after, chain.eye(), target);
        assert_eq!(status.reached, error < TOLERANCE, "{target}: {error}");
        if status.limited {
            limited += 1;
        } else {
            assert!(status.reached, "{target}");
        }
        if status.reached {
            reached += 1;
            let up = sight(&after, chain.eye()).2;
            if let Some((off_plane, pole_side)) =
                pole_plane_error(up, target - after.position(head), DVec3::Y)
            {
                assert!(off_plane < TOLERANCE && pole_side, "{target}");
            }
        }
        // Every joint of the chain took part.
        if !wide {
            for &joint in chain.joints() {
                assert!(pose[joint].rotation.angle_between(DQuat::IDENTITY) > 1e-6);
            }
        }
    }
    assert!(reached > 2000 && limited > 300, "{reached} {limited}");
}

#[test]
fn multi_chain_with_partial_last_weight_falls_short() {
    let (skeleton, chain) = humanoid_spine_neck_head(DVec3::new(0.0, 0.07, 0.08), [0.2, 0.4, 0.5]);
    let rest = model_of(&skeleton, &skeleton.rest_pose());
    let target = rest.position(chain.eye().joint) + DVec3::new(0.5, 0.1, 1.0);
    let mut model = ModelPose::new(&skeleton);
    let (_, status) = multi_from_rest(&skeleton, &chain, target, &mut model);
    assert!(!status.reached);
    assert!(miss(&model, chain.eye(), target) > 1e-3);
}

/// A plain input for the degenerate cases: joint at the origin looking along +Z.
fn plain_input() -> AimInput {
    AimInput {
        target: DVec3::new(0.3, 0.4, 2.0),
        offset: DVec3::new(0.0, 0.1, 0.2),
        ..AimInput::default()
    }
}

fn assert_unit(out: &AimOutput, what: &str) {
    assert!(out.correction.is_finite(), "{what}: {out:?}");
    assert!(
        (out.correction.length() - 1.0).abs() < 1e-12,
        "{what}: {out:?}"
    );
}

#[test]
fn invalid_input_gives_identity_and_never_nan() {
    let settings = AimSettings::default();
    let base = plain_input();
    let mut invalid = vec![
        AimInput {
            target: DVec3::ZERO,
            ..base
        },
        AimInput {
            target: DVec3::ZERO,
            offset: DVec3::ZERO,
            ..base
        },
        AimInput {
            forward: DVec3::ZERO,
            ..base
        },
        AimInput {
            up: DVec3::ZERO,
            ..base
        },
        AimInput {
            joint: DAffine3::from_scale(DVec3::new(1.0, 0.0, 1.0)),
            ..base
        },
        AimInput {
            cone_axis: Some(DVec3::ZERO),
            ..base
        },
    ];
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let v = DVec3::new(0.5, bad, 0.2);
        invalid.extend([
            AimInput { target: v, ..base },
            AimInput {
                pole: Pole::Vector(v),
                ..base
            },
            AimInput {
                pole: Pole::Hint(v),
                ..base
            },
            AimInput { forward: v, ..base },
            AimInput { up: v, ..base },
            AimInput { offset: v, ..base },
            AimInput {
                joint: DAffine3::from_translation(v),
                ..base
            },
            AimInput {
                joint: DAffine3::from_scale(DVec3::new(1.0, bad, 1.0)),
                ..base
            },
            AimInput {
                cone_axis: Some(v),
                ..base
            },
        ]);
    }
    let cone = AimSettings {
        max_angle: 0.5,
        ..settings
    };
    for input in &invalid {
        for settings in [settings, cone] {
            let out = solve(input, &settings);
            let cone_unused = settings.max_angle >= PI && input.cone_axis.is_some();
            if cone_unused {
                continue; // the cone axis is not read without a cone
            }
            assert_eq!(out, AimOutput::IDENTITY, "{input:?}");
        }
    }
}

#[test]
fn invalid_settings_give_identity() {
    let settings = AimSettings::default();
    let base = plain_input();
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for settings in [
            AimSettings {
                twist_angle: bad,
                ..settings
            },
            AimSettings {
                weight: f64::NAN,
                ..settings
            },
            AimSettings {
                max_angle: f64::NAN,
                ..settings
            },
        ] {
            assert_eq!(solve(&base, &settings), AimOutput::IDENTITY, "{settings:?}");
        }
    }
    // Infinite weight is full weight, infinite cone no cone.
    let full = solve(&base, &settings);
    assert!(full.reached);
    for settings in [
        AimSettings {
            weight: f64::INFINITY,
            ..settings
        },
        AimSettings {
            max_angle: f64::INFINITY,
            ..settings
        },
    ] {
        assert_eq!(solve(&base, &settings), full);
    }
}

#[test]
fn degenerate_poles_and_axes_still_aim() {
    let settings = AimSettings::default();
    let base = plain_input();
    let eye_ray_hits = |input: &AimInput, out: &AimOutput| {
        let eye = out.correction * input.offset;
        angle(out.correction * input.forward, input.target - eye) < TOLERANCE
    };
    // Pole along the joint→target line, zero pole, hint at the joint: no roll preference.
    for pole in [
        Pole::Vector(base.target),
        Pole::Vector(-base.target * 3.0),
        Pole::Vector(DVec3::ZERO),
        Pole::Hint(DVec3::ZERO),
        Pole::Hint(base.target * 2.0),
    ] {
        let input = AimInput { pole, ..base };
        let out = solve(&input, &settings);
        assert_unit(&out, "pole");
        assert!(out.reached && eye_ray_hits(&input, &out), "{pole:?}");
    }
    // Up parallel to forward (no offset: up ends on the line).
    for up in [DVec3::Z, -DVec3::Z * 0.1] {
        let input = AimInput {
            up,
            offset: DVec3::ZERO,
            ..base
        };
        let out = solve(&input, &settings);
        assert_unit(&out, "up");
        assert!(out.reached && eye_ray_hits(&input, &out));
    }
    for (what, target, offset, forward, reached) in [
        // Target straight behind: half a turn.
        ("behind", -DVec3::Z * 2.0, DVec3::ZERO, base.forward, true),
        // A ray through the joint crosses every sphere about it: any target is reachable,
        // even one nearer than the eye.
        (
            "through the joint",
            DVec3::X * 0.05,
            -DVec3::Z * 0.2,
            base.forward,
            true,
        ),
        // An eye looking sideways cannot see a target nearer the joint than its ray passes.
        (
            "sideways",
            DVec3::X * 0.05,
            -DVec3::Z * 0.2,
            DVec3::X,
            false,
        ),
    ] {
        let input = AimInput {
            target,
            offset,
            forward,
            ..base
        };
        let out = solve(&input, &settings);
        assert_unit(&out, what);
        if reached {
            assert!(out.reached && eye_ray_hits(&input, &out), "{what}");
        } else {
            assert!(!out.reached, "{what}");
        }
    }
    // Tiny and huge scales.
    for scale in [1e-150, 1e150] {
        let input = AimInput {
            target: base.target * scale,
            offset: base.offset * scale,
            ..base
        };
        let out = solve(&input, &settings);
        assert_unit(&out, "scale");
        assert!(out.reached && eye_ray_hits(&input, &out), "{scale}");
    }
    // Cone of zero: the forward axis stays put, whatever the target.
    let out = solve(
        &base,
        &AimSettings {
            max_angle: 0.0,
            ..settings
        },
    );
    assert!(out.limited && !out.reached);
    assert!(angle(out.correction * base.forward, base.forward) < TOLERANCE);
    // Cone axis opposite the aim.
    let out = solve(
        &AimInput {
            cone_axis: Some(-base.target),
            offset: DVec3::ZERO,
            ..base
        },
        &AimSettings {
            max_angle: 0.3,
            ..settings
        },
    );
    assert_unit(&out, "cone");
    assert!(out.limited);
}

/// A mix of ordinary numbers and troublemakers (zeros, tiny, huge, NaN, infinite).
fn garbage(rng: &mut Rng) -> f64 {
    const SPECIALS: [f64; 8] = [
        0.0,
        -0.0,
        1e-300,
        -1e300,
        f64::NAN,
        f64::INFINITY,
        f64::MIN_POSITIVE,
        1.0,
    ];
    if rng.unit() < 0.2 {
        SPECIALS[(rng.next_u64() % SPECIALS.len() as u64) as usize]
    } else {
        rng.range(-2.0, 2.0)
    }
}

fn garbage_vec(rng: &mut Rng) -> DVec3 {
    DVec3::new(garbage(rng), garbage(rng), garbage(rng))
}

#[test]
fn random_garbage_never_panics_or_returns_nan() {
    let mut rng = Rng(15);
    for _ in 0..100_000 {
        let matrix: [f64; 12] = std::array::from_fn(|_| garbage(&mut rng));
        let input = AimInput {
            joint: DAffine3::from_cols_array(&matrix),
            target: garbage_vec(&mut rng),
            pole: Pole::Vector(garbage_vec(&mut rng)),
            forward: garbage_vec(&mut rng),
            up: garbage_vec(&mut rng),
            offset: garbage_vec(&mut rng),
            cone_axis: Some(garbage_vec(&mut rng)),
        };
        let settings = AimSettings {
            twist_angle: garbage(&mut rng),
            weight: garbage(&mut rng),
            max_angle: garbage(&mut rng),
        };
        assert_unit(&solve(&input, &settings), "garbage");
    }
}

#[test]
fn batch_matches_single_solves() {
    let mut rng = Rng(16);
    let mut inputs = Vec::new();
    for (_, parent) in parent_transforms() {
        for n in 0..50 {
            let rig = Rig::random(&mut rng, parent, n % 2 == 0);
            let pose = rig.random_pose(&mut rng);
            let model = model_of(&rig.skeleton, &pose);
            let target = model.position(rig.chain.joint) + rng.in_ball() * 2.0;
            inputs.push(rig.input(&pose, &model, target, Pole::Vector(rng.direction())));
        }
    }
    let settings = AimSettings {
        twist_angle: 0.3,
        weight: 0.8,
        max_angle: 1.2,
    };
    let mut outputs = vec![AimOutput::default(); inputs.len()];
    solve_slice(&inputs, &settings, &mut outputs);
    for (input, output) in inputs.iter().zip(&outputs) {
        assert_eq!(*output, solve(input, &settings));
    }
}

#[test]
fn chains_are_validated_at_construction() {
    let skeleton = builtin_humanoid();
    let j = |n| skeleton.joint(n).unwrap();
    let head = j("head");
    let ok = |joint| AimChain::new(&skeleton, joint, DVec3::Z, DVec3::Y, DVec3::ZERO).unwrap();
    assert!(matches!(
        AimChain::new(
            &skeleton,
            JointId::from_index(999),
            DVec3::Z,
            DVec3::Y,
            DVec3::ZERO
        ),
        Err(AimChainError::UnknownJoint { .. })
    ));
    assert!(matches!(
        AimChain::new(&skeleton, head, DVec3::ZERO, DVec3::Y, DVec3::ZERO),
        Err(AimChainError::BadAxis { .. })
    ));
    assert!(matches!(
        AimChain::new(&skeleton, head, DVec3::Z, DVec3::NAN, DVec3::ZERO),
        Err(AimChainError::BadAxis { .. })
    ));
    assert!(matches!(
        AimChain::new(&skeleton, head, DVec3::Z, -DVec3::Z * 2.0, DVec3::ZERO),
        Err(AimChainError::ParallelAxes { .. })
    ));
    assert!(matches!(
        AimChain::new(&skeleton, head, DVec3::Z, DVec3::Y, DVec3::INFINITY),
        Err(AimChainError::BadOffset { .. })
    ));
    let chain = AimChain::new(&skeleton, head, DVec3::Z * 3.0, DVec3::Y * 0.5, DVec3::X).unwrap();
    assert_eq!((chain.forward, chain.up), (DVec3::Z, DVec3::Y));

    let eye = ok(head);
    assert_eq!(
        MultiAimChain::new(&skeleton, &[], eye),
        Err(AimChainError::Empty)
    );
    assert!(matches!(
        MultiAimChain::new(&skeleton, &[(head, 0.5), (j("neck"), 1.0)], eye),
        Err(AimChainError::NotAChain { .. })
    ));
    assert!(matches!(
        MultiAimChain::new(&skeleton, &[(head, 0.5), (head, 1.0)], eye),
        Err(AimChainError::NotAChain { .. })
    ));
    assert!(matches!(
        MultiAimChain::new(&skeleton, &[(j("neck"), 1.0)], ok(j("leftHand"))),
        Err(AimChainError::NotAChain { .. })
    ));
    assert!(matches!(
        MultiAimChain::new(&skeleton, &[(j("neck"), 1.5)], eye),
        Err(AimChainError::BadWeight { .. })
    ));
    assert!(matches!(
        MultiAimChain::new(&skeleton, &[(j("neck"), f64::NAN)], eye),
        Err(AimChainError::BadWeight { .. })
    ));
    assert!(matches!(
        MultiAimChain::new(&skeleton, &[(JointId::from_index(999), 1.0)], eye),
        Err(AimChainError::UnknownJoint { .. })
    ));
    // The eye may sit below the last joint (an eye joint under the head).
    let chain = MultiAimChain::new(
        &skeleton,
        &[(j("neck"), 0.5), (head, 1.0)],
        ok(j("leftEye")),
    )
    .unwrap();
    assert_eq!(chain.joints(), &[j("neck"), head]);
    assert_eq!(chain.weights(), &[0.5, 1.0]);
    assert_eq!(chain.eye().joint, j("leftEye"));
}

#[test]
fn multi_chain_with_the_eye_below_the_last_joint_aims_the_eye() {
    let skeleton = builtin_humanoid();
    let j = |n| skeleton.joint(n).unwrap();
    let eye = AimChain::new(&skeleton, j("leftEye"), DVec3::Z, DVec3::Y, DVec3::ZERO).unwrap();
    let chain = MultiAimChain::new(&skeleton, &[(j("neck"), 0.5), (j("head"), 1.0)], eye).unwrap();
    let rest = model_of(&skeleton, &skeleton.rest_pose());
    let mut rng = Rng(17);
    let mut model = ModelPose::new(&skeleton);
    for _ in 0..500 {
        let target = rest.position(j("leftEye"))
            + DVec3::new(
                rng.range(-0.5, 0.5),
                rng.range(-0.3, 0.3),
                rng.range(0.8, 2.0),
            );
        let (pose, status) = multi_from_rest(&skeleton, &chain, target, &mut model);
        assert!(status.reached && !status.limited, "{target}");
        assert!(miss(&model_of(&skeleton, &pose), &eye, target) < TOLERANCE);
        // The eye joint itself did not turn.
        assert_eq!(pose[j("leftEye")].rotation, DQuat::IDENTITY);
    }
}

/// The `aim` kind through `SolverConfig` JSON: the head's line of sight passes through the
/// goal (checked here by FK), and tasks that do not fit are refused.
#[test]
fn aim_kind_solves_a_look_at_task() {
    use ikarus_solve::{Effector, Goal, IkTask, SolveStatus, SolverConfig, solve};
    let skeleton = ikarus_core::humanoid::builtin_humanoid();
    let head = skeleton.joint("head").unwrap();
    let config: SolverConfig =
        serde_json::from_str(r#"{"kind": "aim", "forward": [0, 0, 1], "offset": [0, 0.07, 0.08]}"#)
            .unwrap();
    let mut model = ikarus_core::ModelPose::new(&skeleton);
    ikarus_core::fk::forward_kinematics(&skeleton, &skeleton.rest_pose(), &mut model);
    for target_offset in [
        ikarus_core::glam::DVec3::new(0.3, 0.1, 1.0),
        ikarus_core::glam::DVec3::new(-0.5, -0.3, 0.8),
    ] {
        let target = model.position(head) + target_offset;
        let task = IkTask::from_goal(head, Goal::from_position(target));
        let mut pose = skeleton.rest_pose();
        let report = solve(&skeleton, &task, &config, &mut pose);
        assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
        let mut after = ikarus_core::ModelPose::new(&skeleton);
        ikarus_core::fk::forward_kinematics(&skeleton, &pose, &mut after);
        let m = after.transforms()[head.index()];
        let eye = m.transform_point3(ikarus_core::glam::DVec3::new(0.0, 0.07, 0.08));
        let sight = m.transform_vector3(ikarus_core::glam::DVec3::Z).normalize();
        let angle = (target - eye).angle_between(sight);
        assert!(angle < 1e-9, "{angle}");
        assert!((report.rotation_error - angle).abs() < 1e-9);
        assert!(skeleton.limit_violation(&pose).is_none());
    }
    let both = IkTask::from_effectors(vec![
        Effector::new(
            head,
            Goal::from_position(ikarus_core::glam::DVec3::Z)
        );
        2
    ]);
    let mut pose = skeleton.rest_pose();
    assert_eq!(
        solve(&skeleton, &both, &config, &mut pose).status,
        SolveStatus::InvalidInput
    );
    assert_eq!(pose, skeleton.rest_pose());
}
