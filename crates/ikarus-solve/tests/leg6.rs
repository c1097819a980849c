//! The six-joint leg against forward-kinematics ground truth.
//!
//! Targets are made by forward kinematics of random joint angles inside the limits, so they
//! are reachable by construction; every solution is checked by running FK again, with the
//! leg's own [`forward`] (quaternion products, independent of the solver's formulas) and with
//! `ikarus_core::fk` on skeletons built in code with the dimensions of the Unitree G1 and of
//! `simple_humanoid.urdf`.

#![allow(clippy::disallowed_methods)]
// tests read the shared data files

// Joint origins and limits are copied from the URDF files digit for digit (0.5236 is the file's
// value, not π/6), so that they can be checked against them.
#![allow(clippy::unreadable_literal, clippy::approx_constant)]

mod common;
#[path = "common/g1_leg.rs"]
mod g1_leg;

use common::pose_task;
use g1_leg::{g1_leg, g1_limits, g1_points};
use ikarus_testdata::assert::rotation_angle;
use ikarus_testdata::{Draw, Rng};
use std::f64::consts::PI;

use ikarus_core::glam::{DMat3, DQuat, DVec3};
use ikarus_core::{ModelPose, Skeleton, SkeletonBuilder, Transform, fk};
use ikarus_solve::leg6::{
    Contact, HipOrder, Leg6Angles, Leg6Chain, Leg6ChainError, Leg6Joints, Leg6Limits, Leg6Output,
    Leg6Params, Leg6Status, Leg6Target, Y_UP_FROM_LEG, forward, solve, solve_chain, solve_contact,
    solve_level, solve_pose, solve_slice,
};
use ikarus_testdata::limits::hinge;

const TOLERANCE: f64 = 1e-9;

/// Random joint angles inside `limits` (and π), the knee at least `knee_min`.
trait DrawAngles {
    fn angles(&mut self, limits: &Leg6Limits, knee_min: f64) -> Leg6Angles;
}

impl DrawAngles for Rng {
    fn angles(&mut self, limits: &Leg6Limits, knee_min: f64) -> Leg6Angles {
        let (lo, hi) = (limits.min.to_array(), limits.max.to_array());
        let mut a = [0.0; 6];
        for i in 0..6 {
            let lo = if i == 3 { lo[i].max(knee_min) } else { lo[i] };
            a[i] = self.range(lo.max(-PI), hi[i].min(PI));
        }
        Leg6Angles::from_array(a)
    }
}

/// Largest difference between two angle sets, modulo 2π.
fn angle_difference(a: &Leg6Angles, b: &Leg6Angles) -> f64 {
    a.to_array()
        .iter()
        .zip(b.to_array())
        .map(|(x, y)| ((x - y + PI).rem_euclid(2.0 * PI) - PI).abs())
        .fold(0.0, f64::max)
}

/// Worst errors over a run.
#[derive(Default)]
struct Worst {
    position: f64,
    rotation: f64,
    count: usize,
}

impl Worst {
    fn add(&mut self, position: f64, rotation: f64) {
        self.position = self.position.max(position);
        self.rotation = self.rotation.max(rotation);
        self.count += 1;
    }

    fn check(&self, what: &str) {
        eprintln!(
            "{what}: {} solves, worst position error {:.2e} m, worst rotation error {:.2e} rad",
            self.count, self.position, self.rotation
        );
        assert!(self.position <= TOLERANCE, "{what}: {}", self.position);
        assert!(self.rotation <= TOLERANCE, "{what}: {}", self.rotation);
    }
}

/// Generic ranges for the made-up legs: yaw, roll, pitch, knee, ankle pitch, ankle roll.
fn generic_limits() -> Leg6Limits {
    Leg6Limits::from_ranges([
        (-1.0, 1.0),
        (-0.6, 0.6),
        (-2.0, 0.6),
        (0.0, 2.6),
        (-1.2, 1.0),
        (-0.6, 0.6),
    ])
}

/// A seed-003 leg: yaw–roll–pitch hip, the leg's sagittal plane 3 cm outside the hip roll
/// axis (the seed's `W`), ankle axes meeting 6 cm above the sole.
fn seed_leg() -> Leg6Params {
    Leg6Params {
        thigh: DVec3::new(0.0, 0.03, -0.32),
        ..Leg6Params::new(DVec3::new(0.0, 0.07, -0.09), 0.32, 0.3, 0.06)
    }
    .with_limits(generic_limits())
}

/// A leg with every offset the closed form covers: knee set forward, lateral offsets on all
/// three links, an ankle roll axis below and ahead of the pitch axis, a sole point off centre.
fn offset_leg(order: HipOrder) -> Leg6Params {
    Leg6Params {
        hip: DVec3::new(0.01, 0.08, -0.1),
        thigh: DVec3::new(0.02, 0.01, -0.32),
        shank: DVec3::new(-0.015, -0.005, -0.29),
        ankle: DVec3::new(0.01, 0.004, -0.03),
        sole: DVec3::new(0.03, -0.01, -0.05),
        heel: 0.07,
        toe: 0.15,
        hip_order: order,
        limits: generic_limits(),
    }
}

/// The right leg of `simple_humanoid.urdf`: `RLEG_HIP_R` at (0, −0.09, 0) from `BODY`, axis x,
/// [−0.349066, 1.570796]; `RLEG_HIP_P` (0, 0, 0), axis y, [−0.5236, 0.5236]; `RLEG_HIP_Y`
/// (0, 0, −0.3535), axis z, [−2.095, 0.7]; `RLEG_KNEE` (0, 0, 0), axis y, [0, 2.618];
/// `RLEG_ANKLE_P` (0, 0, −0.3), axis y, [0, 2.618]; `RLEG_ANKLE_R` (0, 0, 0), axis x,
/// [−1.27, 0.68]. The file has no foot geometry: the sole point is the ankle.
fn simple_humanoid_limits() -> Leg6Limits {
    Leg6Limits::from_ranges([
        (-2.095, 0.7),
        (-0.349_065_850_399, 1.570_796_326_79),
        (-0.5236, 0.5236),
        (0.0, 2.618),
        (0.0, 2.618),
        (-1.27, 0.68),
    ])
}

fn simple_humanoid_leg() -> Leg6Params {
    Leg6Params::new(DVec3::new(0.0, -0.09, 0.0), 0.3535, 0.3, 0.0)
        .with_hip_order(HipOrder::RollPitchYaw)
        .with_limits(simple_humanoid_limits())
}

/// Every leg of the random tests, with the smallest knee angle sampled (the G1's 5° of
/// hyperextension are outside the one-way closed form).
fn legs() -> Vec<(String, Leg6Params, f64)> {
    let mut legs = vec![
        ("seed".to_owned(), seed_leg(), 0.0),
        ("g1".to_owned(), g1_leg(), 0.0),
        ("simple_humanoid".to_owned(), simple_humanoid_leg(), 0.0),
    ];
    for order in HipOrder::ALL {
        legs.push((format!("offset {order:?}"), offset_leg(order), 0.0));
    }
    legs
}

fn check_pose_solution(
    params: &Leg6Params,
    out: &Leg6Output,
    position: DVec3,
    rotation: DQuat,
    what: &str,
) -> (f64, f64) {
    assert_eq!(out.status, Leg6Status::Reached, "{what}: {out:?}");
    assert!(out.reached);
    assert!(params.limits.contains(&out.angles), "{what}: {out:?}");
    let foot = forward(params, &out.angles);
    let rotation_now = DQuat::from_mat3(&foot.matrix3);
    (
        (foot.translation - position).length(),
        rotation_angle(rotation_now, rotation),
    )
}

#[test]
fn general_form_reproduces_100k_random_reachable_poses() {
    let mut rng = Rng(3);
    let legs = legs();
    let per_leg = 100_000 / legs.len() + 1;
    let mut all = Worst::default();
    for (name, params, knee_min) in &legs {
        let mut worst = Worst::default();
        for _ in 0..per_leg {
            let angles = rng.angles(&params.limits, *knee_min);
            let foot = forward(params, &angles);
            let (position, rotation) = (foot.translation, DQuat::from_mat3(&foot.matrix3));
            let out = solve_pose(params, position, rotation);
            let (p, r) = check_pose_solution(params, &out, position, rotation, name);
            worst.add(p, r);
            all.add(p, r);
        }
        worst.check(name);
    }
    assert!(all.count >= 100_000);
    all.check("general 6-D form, all legs");
}

/// Seed-form targets: level soles (ankle roll = −hip roll, pitches summing to 0) with the
/// ankle below the hip (hip pitch above −1.4 rad), which is what the seed's roll root assumes.
fn level_sample(rng: &mut Rng, params: &Leg6Params) -> (DVec3, f64) {
    loop {
        let mut a = rng.angles(&params.limits, 0.0);
        a.hip_pitch = rng.range(-1.4, params.limits.max.hip_pitch);
        a.ankle_pitch = -(a.hip_pitch + a.knee);
        a.ankle_roll = -a.hip_roll;
        if params.limits.contains(&a) {
            return (forward(params, &a).translation, a.hip_yaw);
        }
    }
}

#[test]
fn seed_form_reproduces_100k_level_targets_and_agrees_with_the_general_form() {
    let mut rng = Rng(30);
    let legs = [
        ("seed", seed_leg()),
        (
            "straight",
            Leg6Params::new(DVec3::new(0.0, 0.1, -0.05), 0.4, 0.38, 0.08)
                .with_limits(generic_limits()),
        ),
    ];
    let mut worst = Worst::default();
    let mut worst_agreement: f64 = 0.0;
    for (name, params) in &legs {
        for _ in 0..50_000 {
            let (position, yaw) = level_sample(&mut rng, params);
            let level = solve_level(params, position, yaw);
            let rotation = DQuat::from_rotation_z(yaw);
            let (p, r) = check_pose_solution(params, &level, position, rotation, name);
            worst.add(p, r);
            let general = solve_pose(params, position, rotation);
            assert!(general.reached, "{name}: {general:?}");
            worst_agreement = worst_agreement.max(angle_difference(&level.angles, &general.angles));
        }
    }
    worst.check("humanoid robot leg level form");
    eprintln!("seed form vs general form: largest angle difference {worst_agreement:.2e} rad");
    assert!(worst_agreement <= TOLERANCE, "{worst_agreement}");
}

#[test]
fn level_form_of_other_hip_orders_is_the_general_form() {
    let params = g1_leg();
    let position = DVec3::new(0.05, 0.13, -0.7);
    let level = solve_level(&params, position, 0.3);
    let pose = solve_pose(&params, position, DQuat::from_rotation_z(0.3));
    assert!(level.reached, "{level:?}");
    assert_eq!(level, pose);
}

#[test]
fn heel_and_toe_contacts_keep_the_contact_point_and_the_pitch() {
    let mut rng = Rng(31);
    let mut worst = Worst::default();
    let mut reached = 0;
    let tries = 20_000;
    // Without limits: pitching a level foot soon runs into the ankle's ranges (tested with
    // the limits elsewhere); here the geometry is what is checked.
    let legs = [seed_leg().with_heel_toe(0.06, 0.14), g1_leg()];
    for limited in legs {
        let params = limited.with_limits(Leg6Limits::NONE);
        for i in 0..tries {
            let (sole, yaw) = level_sample(&mut rng, &limited);
            let level_foot = DQuat::from_rotation_z(yaw);
            let (contact, along, pitch) = if i % 2 == 0 {
                (Contact::Heel, -params.heel, rng.range(-0.6, 0.0))
            } else {
                (Contact::Toe, params.toe, rng.range(0.0, 0.8))
            };
            let point = sole + level_foot * DVec3::new(along, 0.0, 0.0);
            let out = solve_contact(&params, contact, point, yaw, pitch);
            assert!(out.angles.is_finite());
            if !out.reached {
                assert_eq!(out.status, Leg6Status::OutOfReach);
                continue;
            }
            reached += 1;
            let foot = forward(&params, &out.angles);
            let rotation = DQuat::from_mat3(&foot.matrix3);
            let contact_now = foot.translation + rotation * DVec3::new(along, 0.0, 0.0);
            let wanted = DQuat::from_rotation_z(yaw) * DQuat::from_rotation_y(pitch);
            worst.add(
                (contact_now - point).length(),
                rotation_angle(rotation, wanted),
            );
            // The other end of the foot is lifted off the contact's level.
            let other = if contact == Contact::Heel {
                params.toe
            } else {
                -params.heel
            };
            let lifted = foot.translation + rotation * DVec3::new(other, 0.0, 0.0);
            assert!(lifted.z >= point.z - 1e-12, "{lifted} vs {point}");
        }
    }
    worst.check("heel/toe contact");
    assert!(
        reached * 100 > 2 * tries * 95,
        "only {reached} of {} reached",
        2 * tries
    );
}

#[test]
fn targets_out_of_reach_straighten_or_fold_the_leg_towards_them() {
    let mut rng = Rng(32);
    let params = Leg6Params::new(DVec3::new(0.0, 0.08, -0.05), 0.35, 0.3, 0.05);
    for _ in 0..1000 {
        let rotation = rng.rotation();
        let direction = rng.direction();
        // Too far (straight leg) and too close (knee folded) along the same direction.
        for (distance, reach) in [(rng.range(0.66, 3.0), 0.65), (rng.range(0.0, 0.04), 0.05)] {
            let roll_joint = params.hip + direction * distance;
            let position = roll_joint + rotation * params.sole;
            let out = solve_pose(&params, position, rotation);
            assert_eq!(out.status, Leg6Status::OutOfReach, "{distance}");
            assert!(!out.reached && out.angles.is_finite());
            let foot = forward(&params, &out.angles);
            let foot_rotation = DQuat::from_mat3(&foot.matrix3);
            // The foot keeps the asked orientation ...
            assert!(rotation_angle(foot_rotation, rotation) < TOLERANCE);
            // ... and its ankle is as close to the target as the leg allows, towards it.
            let ankle = foot.translation - foot_rotation * params.sole;
            assert!(((ankle - params.hip).length() - reach).abs() < TOLERANCE);
            assert!((ankle - (params.hip + direction * reach)).length() < TOLERANCE);
        }
    }
}

#[test]
fn target_at_the_hip_and_zero_length_links_give_finite_answers() {
    let mut rng = Rng(33);
    // Equal links fold exactly onto the hip: reachable.
    let equal = Leg6Params::new(DVec3::new(0.0, 0.1, 0.0), 0.3, 0.3, 0.0);
    let out = solve_pose(&equal, equal.hip, DQuat::IDENTITY);
    assert!(out.reached, "{out:?}");
    assert!((out.angles.knee - PI).abs() < 1e-12, "{out:?}");
    assert!(forward(&equal, &out.angles).translation.distance(equal.hip) < TOLERANCE);
    // Unequal links cannot.
    let unequal = Leg6Params::new(DVec3::new(0.0, 0.1, 0.0), 0.3, 0.25, 0.04);
    let at_hip = unequal.hip + DVec3::new(0.0, 0.0, -0.04);
    let out = solve_pose(&unequal, at_hip, DQuat::IDENTITY);
    assert_eq!(out.status, Leg6Status::OutOfReach);
    assert!(out.angles.is_finite());
    let level = solve_level(&unequal, at_hip, 0.0);
    assert_eq!(level.status, Leg6Status::OutOfReach);
    assert!(level.angles.is_finite());

    // A zero-length thigh (and then shank): FK(IK) still holds where reachable.
    for (thigh, shank) in [(0.0, 0.4), (0.4, 0.0), (0.0, 0.0)] {
        let params = Leg6Params::new(DVec3::new(0.0, 0.1, 0.0), thigh, shank, 0.05);
        let mut worst = Worst::default();
        for _ in 0..2000 {
            let angles = rng.angles(&generic_limits(), 0.0);
            let foot = forward(&params, &angles);
            let rotation = DQuat::from_mat3(&foot.matrix3);
            for out in [
                solve_pose(&params, foot.translation, rotation),
                solve(
                    &params,
                    &Leg6Target::Pose {
                        position: foot.translation,
                        rotation,
                    },
                ),
            ] {
                let (p, r) = check_pose_solution(&params, &out, foot.translation, rotation, "");
                worst.add(p, r);
            }
            // Elsewhere: out of reach, finite.
            let off = solve_pose(&params, foot.translation + rng.direction() * 0.2, rotation);
            assert!(off.angles.is_finite());
            let level = solve_level(&params, rng.direction(), rng.range(-3.0, 3.0));
            assert!(level.angles.is_finite());
        }
        worst.check(&format!("thigh {thigh}, shank {shank}"));
    }
}

#[test]
fn nan_and_infinite_input_give_invalid_input_and_zero_angles() {
    let params = seed_leg();
    let good = DVec3::new(0.0, 0.1, -0.6);
    let mut bad_params = params;
    bad_params.thigh.x = f64::NAN;
    let mut unordered = params;
    unordered.limits.min.knee = 3.0;
    let mut nan_limit = params;
    nan_limit.limits.max.hip_yaw = f64::NAN;
    let outputs = [
        solve_pose(&params, DVec3::new(f64::NAN, 0.0, 0.0), DQuat::IDENTITY),
        solve_pose(
            &params,
            DVec3::new(0.0, f64::INFINITY, 0.0),
            DQuat::IDENTITY,
        ),
        solve_pose(&params, good, DQuat::from_xyzw(f64::NAN, 0.0, 0.0, 1.0)),
        solve_pose(&params, good, DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0)),
        solve_pose(
            &params,
            good,
            DQuat::from_xyzw(0.0, 0.0, 0.0, f64::INFINITY),
        ),
        solve_level(&params, good, f64::NAN),
        solve_level(&params, DVec3::splat(f64::NEG_INFINITY), 0.0),
        solve_contact(&params, Contact::Heel, good, 0.0, f64::INFINITY),
        solve_contact(&params, Contact::Toe, DVec3::NAN, 0.0, 0.0),
        solve_pose(&bad_params, good, DQuat::IDENTITY),
        solve_level(&bad_params, good, 0.0),
        solve_pose(&unordered, good, DQuat::IDENTITY),
        solve_level(&nan_limit, good, 0.0),
    ];
    for (i, out) in outputs.iter().enumerate() {
        assert_eq!(*out, Leg6Output::INVALID, "case {i}");
    }
    // Huge but finite input: no NaN.
    for position in [
        DVec3::splat(1e300),
        DVec3::splat(-1e-300),
        DVec3::new(0.0, 0.0, 1e200),
    ] {
        for out in [
            solve_pose(&params, position, DQuat::from_rotation_x(1e10)),
            solve_level(&params, position, 1e300),
            solve_contact(&params, Contact::Toe, position, 1e300, -1e300),
        ] {
            assert!(out.angles.is_finite(), "{position}: {out:?}");
        }
    }
    // An unnormalized rotation is normalized.
    let angles = Leg6Angles::from_array([0.2, 0.1, -0.5, 0.8, -0.3, -0.05]);
    let foot = forward(&params, &angles);
    let rotation = DQuat::from_mat3(&foot.matrix3);
    let out = solve_pose(&params, foot.translation, rotation * 3.0);
    assert!(out.reached);
    assert!(angle_difference(&out.angles, &angles) < TOLERANCE);
}

#[test]
fn limits_clamp_from_the_foot_up_and_report_the_joint() {
    let params = seed_leg();
    // Needs a knee of 2.0 rad; the knee may bend 1.0 only.
    let angles = Leg6Angles::from_array([0.3, 0.1, -1.2, 2.0, -0.7, -0.1]);
    let foot = forward(&params, &angles);
    let rotation = DQuat::from_mat3(&foot.matrix3);
    let mut limited = params;
    limited.limits.max.knee = 1.0;
    let out = solve_pose(&limited, foot.translation, rotation);
    assert_eq!(out.status, Leg6Status::Limited);
    assert!(!out.reached);
    assert_eq!(out.limited, [false, false, false, true, false, false]);
    assert_eq!(out.angles.knee, 1.0);
    assert!(limited.limits.contains(&out.angles));
    // Only lower joints were clamped: the foot keeps its orientation.
    let now = forward(&limited, &out.angles);
    assert!(rotation_angle(DQuat::from_mat3(&now.matrix3), rotation) < TOLERANCE);

    // A hip yaw limit: the yaw is clamped and flagged.
    let mut yaw_limited = params;
    yaw_limited.limits.max.hip_yaw = 0.1;
    let out = solve_pose(&yaw_limited, foot.translation, rotation);
    assert_eq!(out.status, Leg6Status::Limited);
    assert_eq!(out.limited, [true, false, false, false, false, false]);
    assert_eq!(out.angles.hip_yaw, 0.1);
    let level = solve_level(&yaw_limited, foot.translation, 0.3);
    assert!(level.limited[0] && !level.reached);
    assert!(yaw_limited.limits.contains(&level.angles));

    // The hip's second Euler decomposition is used when only it is inside the limits: a G1
    // hip roll past π/2.
    let params = g1_leg();
    let angles = Leg6Angles::from_array([0.4, 2.0, 0.3, 1.0, -0.2, 0.1]);
    let foot = forward(&params, &angles);
    let out = solve_pose(&params, foot.translation, DQuat::from_mat3(&foot.matrix3));
    assert!(out.reached, "{out:?}");
    assert!(
        angle_difference(&out.angles, &angles) < TOLERANCE,
        "{out:?}"
    );
}

#[test]
fn batch_matches_single_solves() {
    let mut rng = Rng(34);
    let params = offset_leg(HipOrder::PitchRollYaw);
    let targets: Vec<Leg6Target> = (0..300)
        .map(|i| {
            let foot = forward(&params, &rng.angles(&params.limits, 0.0));
            match i % 3 {
                0 => Leg6Target::Pose {
                    position: foot.translation,
                    rotation: DQuat::from_mat3(&foot.matrix3),
                },
                1 => Leg6Target::Level {
                    position: foot.translation,
                    yaw: rng.range(-1.0, 1.0),
                },
                _ => Leg6Target::Contact {
                    contact: Contact::Toe,
                    point: foot.translation,
                    yaw: 0.2,
                    pitch: 0.3,
                },
            }
        })
        .collect();
    let mut outputs = vec![Leg6Output::default(); targets.len()];
    solve_slice(&params, &targets, &mut outputs);
    for (target, output) in targets.iter().zip(&outputs) {
        assert_eq!(*output, solve(&params, target));
    }
}

// --- Skeletons built in code ---------------------------------------------------------------

/// One leg joint in the leg frame (x forward, y left, z up), as a URDF gives it.
struct LegJoint {
    name: &'static str,
    origin: DVec3,
    rest: DQuat,
    axis: DVec3,
    range: (f64, f64),
}

/// A +Y-up skeleton (`Y_UP_FROM_LEG`): a `pelvis` root at `pelvis` and the joints in order,
/// each the child of the one before.
fn leg_skeleton(pelvis: Transform, joints: &[LegJoint]) -> Skeleton {
    let m = Y_UP_FROM_LEG;
    let q = DQuat::from_mat3(&m);
    let mut builder = SkeletonBuilder::new();
    builder.joint("pelvis", None, pelvis);
    let mut parent = "pelvis";
    for j in joints {
        builder.limited_joint(
            j.name,
            Some(parent),
            Transform::from_translation_rotation(m * j.origin, q * j.rest * q.inverse()),
            hinge(m * j.axis, j.range.0, j.range.1),
        );
        parent = j.name;
    }
    builder.build().expect("valid leg skeleton")
}

fn joint(name: &'static str, origin: DVec3, axis: DVec3, range: (f64, f64)) -> LegJoint {
    LegJoint {
        name,
        origin,
        rest: DQuat::IDENTITY,
        axis,
        range,
    }
}

/// The G1-proportioned leg of [`g1_leg`] as a skeleton (hip pitch, roll, yaw at the hip
/// centre).
fn g1_skeleton(pelvis: Transform) -> Skeleton {
    let [hip, knee, ankle_pitch, ankle_roll, _] = g1_points();
    let l = g1_limits();
    let range = |i: usize| (l.min.to_array()[i], l.max.to_array()[i]);
    leg_skeleton(
        pelvis,
        &[
            joint("left_hip_pitch", hip, DVec3::Y, range(2)),
            joint("left_hip_roll", DVec3::ZERO, DVec3::X, range(1)),
            joint("left_hip_yaw", DVec3::ZERO, DVec3::Z, range(0)),
            joint("left_knee", knee - hip, DVec3::Y, range(3)),
            joint("left_ankle_pitch", ankle_pitch - knee, DVec3::Y, range(4)),
            joint(
                "left_ankle_roll",
                ankle_roll - ankle_pitch,
                DVec3::X,
                range(5),
            ),
        ],
    )
}

const G1_NAMES: [&str; 6] = [
    "left_hip_yaw",
    "left_hip_roll",
    "left_hip_pitch",
    "left_knee",
    "left_ankle_pitch",
    "left_ankle_roll",
];

/// The right leg of `simple_humanoid.urdf` (see [`simple_humanoid_leg`]); the hip yaw joint
/// sits at the knee, on the yaw axis through the hip.
fn simple_humanoid_skeleton(pelvis: Transform) -> Skeleton {
    let l = simple_humanoid_limits();
    let range = |i: usize| (l.min.to_array()[i], l.max.to_array()[i]);
    // Name, origin in the parent, axis, index of the range in the limits.
    let joints = [
        ("RLEG_HIP_R", DVec3::new(0.0, -0.09, 0.0), DVec3::X, 1),
        ("RLEG_HIP_P", DVec3::ZERO, DVec3::Y, 2),
        ("RLEG_HIP_Y", DVec3::new(0.0, 0.0, -0.3535), DVec3::Z, 0),
        ("RLEG_KNEE", DVec3::ZERO, DVec3::Y, 3),
        ("RLEG_ANKLE_P", DVec3::new(0.0, 0.0, -0.3), DVec3::Y, 4),
        ("RLEG_ANKLE_R", DVec3::ZERO, DVec3::X, 5),
    ]
    .map(|(name, origin, axis, i)| joint(name, origin, axis, range(i)));
    leg_skeleton(pelvis, &joints)
}

const SIMPLE_NAMES: [&str; 6] = [
    "RLEG_HIP_Y",
    "RLEG_HIP_R",
    "RLEG_HIP_P",
    "RLEG_KNEE",
    "RLEG_ANKLE_P",
    "RLEG_ANKLE_R",
];

/// The offset leg with awkward joint frames: rest rotations and hinge axes given as the
/// opposite of the leg axes (the adapter flips the angles' signs and ranges).
fn twisted_skeleton(pelvis: Transform) -> Skeleton {
    let p = offset_leg(HipOrder::YawRollPitch);
    let l = p.limits;
    let range = |i: usize| (l.min.to_array()[i], l.max.to_array()[i]);
    let flipped = |i: usize| (-range(i).1, -range(i).0);
    let half_turn_x = DQuat::from_rotation_x(PI);
    let quarter_z = DQuat::from_rotation_z(PI / 2.0);
    leg_skeleton(
        pelvis,
        &[
            LegJoint {
                // Turned upside down at rest: its own −z is the leg's up.
                rest: half_turn_x,
                axis: -DVec3::Z,
                ..joint("yaw", p.hip, DVec3::Z, range(0))
            },
            LegJoint {
                // Undo the half turn so that the children keep the leg's axes.
                rest: half_turn_x.inverse(),
                ..joint("roll", DVec3::ZERO, DVec3::X, range(1))
            },
            joint("pitch", DVec3::ZERO, -DVec3::Y, flipped(2)),
            joint("knee", p.thigh, -DVec3::Y, flipped(3)),
            joint("ankle_pitch", p.shank, DVec3::Y, range(4)),
            LegJoint {
                // A foot frame a quarter turn about up: its −y is the leg's forward.
                rest: quarter_z,
                axis: -DVec3::Y,
                ..joint("ankle_roll", p.ankle, DVec3::X, range(5))
            },
        ],
    )
}

const TWISTED_NAMES: [&str; 6] = ["yaw", "roll", "pitch", "knee", "ankle_pitch", "ankle_roll"];

/// FK of the chain's own params vs FK of the skeleton, then the chain solved from another
/// pose and checked by FK from scratch.
#[allow(clippy::too_many_lines)] // one scenario after another on the same chain
fn check_chain(
    name: &str,
    build: fn(Transform) -> Skeleton,
    names: [&str; 6],
    sole_leg: DVec3,
    expected: &Leg6Params,
) {
    let mut rng = Rng(35);
    let pelvis_rest = Transform::from_translation_rotation(
        DVec3::new(0.0, 0.79, 0.0),
        DQuat::from_rotation_y(0.3),
    );
    let skeleton = build(pelvis_rest);
    let joints = Leg6Joints::from_names(&skeleton, names).expect("leg names");
    let ankle_roll = joints.ankle_roll;
    // The sole offset in the ankle roll joint's frame: the leg-frame offset seen from it.
    let mut model = ModelPose::new(&skeleton);
    fk::forward_kinematics(&skeleton, &skeleton.rest_pose(), &mut model);
    let foot_rest = model.rotation(ankle_roll);
    let sole = foot_rest.inverse() * (DQuat::from_rotation_y(0.3) * (Y_UP_FROM_LEG * sole_leg));
    let chain = Leg6Chain::new(&skeleton, &joints, sole).expect("valid leg chain");

    // The derived params are the leg's, up to rounding.
    let p = chain.params();
    assert_eq!(p.hip_order, expected.hip_order, "{name}");
    for (got, want) in [
        (p.hip, expected.hip),
        (p.thigh, expected.thigh),
        (p.shank, expected.shank),
        (p.ankle, expected.ankle),
        (p.sole, expected.sole),
    ] {
        assert!(got.distance(want) < 1e-12, "{name}: {got} vs {want}");
    }
    assert!(
        angle_difference(&p.limits.min, &expected.limits.min) < 1e-12
            && angle_difference(&p.limits.max, &expected.limits.max) < 1e-12,
        "{name}: {:?}",
        p.limits
    );

    let mut worst_fk = Worst::default();
    let mut worst = Worst::default();
    let mut pose = skeleton.rest_pose();
    let mut fresh = ModelPose::new(&skeleton);
    for i in 0..2000 {
        // The pelvis anywhere, turned any way.
        let pelvis = skeleton.joint("pelvis").expect("pelvis");
        pose[pelvis] = Transform::from_translation_rotation(rng.direction(), rng.rotation());
        let angles = rng.angles(&p.limits, 0.0);
        chain.set_angles(&angles, &mut pose);
        assert!(angle_difference(&chain.angles(&pose), &angles) < 1e-12);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        let position = chain.sole_position(&model);
        let rotation = model.rotation(ankle_roll);

        // The chain's params through `forward` agree with the skeleton's FK.
        let leg = forward(p, &angles);
        let model_from_leg = chain.model_from_leg(&model);
        let leg_rotation = DQuat::from_mat3(&model_from_leg.matrix3);
        let foot_from_leg =
            foot_rest.inverse() * DQuat::from_rotation_y(0.3) * DQuat::from_mat3(&Y_UP_FROM_LEG);
        let via_params = leg_rotation * DQuat::from_mat3(&leg.matrix3) * foot_from_leg.inverse();
        worst_fk.add(
            (model_from_leg.transform_point3(leg.translation) - position).length(),
            rotation_angle(via_params, rotation),
        );

        // Solve from another pose (random angles, or the rest pose).
        let start = rng.angles(&p.limits, 0.0);
        chain.set_angles(
            if i % 2 == 0 {
                &start
            } else {
                &Leg6Angles::ZERO
            },
            &mut pose,
        );
        let target = Leg6Target::Pose { position, rotation };
        let out = solve_chain(&skeleton, &chain, &target, &mut pose, &mut model);
        assert_eq!(out.status, Leg6Status::Reached, "{name}: {out:?}");
        assert_eq!(skeleton.limit_violation(&pose), None, "{name}");
        fk::forward_kinematics(&skeleton, &pose, &mut fresh);
        for j in skeleton.joints() {
            assert!(
                model[j].abs_diff_eq(fresh[j], 1e-12),
                "{name}: updated model"
            );
        }
        worst.add(
            (chain.sole_position(&fresh) - position).length(),
            rotation_angle(fresh.rotation(ankle_roll), rotation),
        );
    }
    worst_fk.check(&format!("{name}: params FK vs skeleton FK"));
    worst.check(&format!("{name}: solve_chain vs ikarus_core::fk"));

    // Level and contact targets through the chain: yaw and pitch relative to the pelvis.
    for i in 0..200 {
        let angles = rng.angles(&p.limits, 0.0);
        pose[skeleton.joint("pelvis").expect("pelvis")] =
            Transform::from_translation_rotation(rng.direction(), rng.rotation());
        chain.set_angles(&angles, &mut pose);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        let target = if i % 2 == 0 {
            Leg6Target::Level {
                position: chain.sole_position(&model),
                yaw: rng.range(-0.5, 0.5),
            }
        } else {
            Leg6Target::Contact {
                contact: Contact::Toe,
                point: chain.sole_position(&model),
                yaw: rng.range(-0.5, 0.5),
                pitch: rng.range(0.0, 0.5),
            }
        };
        let leg_target = chain.leg_target(&model, &target);
        let out = solve_chain(&skeleton, &chain, &target, &mut pose, &mut model);
        assert_eq!(out, solve(p, &leg_target), "{name}");
        if out.reached {
            let (sole, rotation) = leg_target.to_pose(p);
            let leg = forward(p, &out.angles);
            assert!(leg.translation.distance(sole) < TOLERANCE);
            assert!(rotation_angle(DQuat::from_mat3(&leg.matrix3), rotation) < TOLERANCE);
            let model_from_leg = chain.model_from_leg(&model);
            let sole_model = model_from_leg.transform_point3(leg.translation);
            assert!(sole_model.distance(chain.sole_position(&model)) < TOLERANCE);
        }
    }

    // Invalid targets leave the pose alone.
    let before = pose.clone();
    let bad = Leg6Target::Level {
        position: DVec3::NAN,
        yaw: 0.0,
    };
    let out = solve_chain(&skeleton, &chain, &bad, &mut pose, &mut model);
    assert_eq!(out.status, Leg6Status::InvalidInput);
    assert_eq!(pose, before);
}

#[test]
fn chain_on_a_g1_proportioned_leg_matches_skeleton_fk() {
    let mut expected = g1_leg();
    expected.heel = 0.0;
    expected.toe = 0.0;
    check_chain(
        "g1",
        g1_skeleton,
        G1_NAMES,
        DVec3::new(0.0, 0.0, -0.035),
        &expected,
    );
}

#[test]
fn chain_on_the_simple_humanoid_right_leg_matches_skeleton_fk() {
    check_chain(
        "simple_humanoid",
        simple_humanoid_skeleton,
        SIMPLE_NAMES,
        DVec3::ZERO,
        &simple_humanoid_leg(),
    );
}

#[test]
fn chain_with_flipped_axes_and_rest_rotations_matches_skeleton_fk() {
    let mut expected = offset_leg(HipOrder::YawRollPitch);
    expected.heel = 0.0;
    expected.toe = 0.0;
    let sole = expected.sole;
    check_chain(
        "twisted offset leg",
        twisted_skeleton,
        TWISTED_NAMES,
        sole,
        &expected,
    );
}

/// The real G1 left leg of `g1_29dof.urdf` (see [`g1_points`]), with its roll and yaw axes
/// pitched by 0.1749 rad (`tilted`) or not.
fn real_g1_skeleton(tilted: bool) -> Skeleton {
    let pelvis = Transform::from_translation(DVec3::new(0.0, 0.8, 0.0));
    let tilt = DQuat::from_rotation_y(-0.1749);
    let (tilt, untilt) = if tilted {
        (tilt, tilt.inverse())
    } else {
        (DQuat::IDENTITY, DQuat::IDENTITY)
    };
    leg_skeleton(
        pelvis,
        &[
            joint(
                "left_hip_pitch",
                DVec3::new(0.0, 0.064452, -0.1027),
                DVec3::Y,
                (-2.5307, 2.8798),
            ),
            LegJoint {
                rest: tilt,
                ..joint(
                    "left_hip_roll",
                    DVec3::new(0.0, 0.052, -0.030465),
                    DVec3::X,
                    (-0.5236, 2.9671),
                )
            },
            joint(
                "left_hip_yaw",
                DVec3::new(0.025001, 0.0, -0.12412),
                DVec3::Z,
                (-2.7576, 2.7576),
            ),
            LegJoint {
                rest: untilt,
                ..joint(
                    "left_knee",
                    DVec3::new(-0.078273, 0.0021489, -0.17734),
                    DVec3::Y,
                    (-0.087_267, 2.8798),
                )
            },
            joint(
                "left_ankle_pitch",
                DVec3::new(0.0, -9.4445e-5, -0.30001),
                DVec3::Y,
                (-0.87267, 0.5236),
            ),
            joint(
                "left_ankle_roll",
                DVec3::new(0.0, 0.0, -0.017558),
                DVec3::X,
                (-0.2618, 0.2618),
            ),
        ],
    )
}

#[test]
fn chain_rejects_the_real_g1_hip() {
    let skeleton = real_g1_skeleton(true);
    let joints = Leg6Joints::from_names(&skeleton, G1_NAMES).expect("names");
    // (roll and yaw are tilted alike, so it is the ankle roll axis that disagrees with them).
    let err = Leg6Chain::new(&skeleton, &joints, DVec3::ZERO).expect_err("tilted hip");
    assert!(
        matches!(&err, Leg6ChainError::Misaligned { joint, .. } if joint == "left_ankle_roll"),
        "{err}"
    );
    // ... and, untilted, axes that miss each other by 3.6 cm.
    let skeleton = real_g1_skeleton(false);
    let err = Leg6Chain::new(&skeleton, &joints, DVec3::ZERO).expect_err("offset hip");
    let Leg6ChainError::NotSpherical { gap } = err else {
        panic!("{err}");
    };
    assert!((0.02..0.05).contains(&gap), "{gap}");
}

#[test]
fn chain_rejects_wrong_roles_order_and_missing_hinges() {
    let pelvis = Transform::from_translation(DVec3::new(0.0, 0.8, 0.0));
    let skeleton = g1_skeleton(pelvis);
    let j = Leg6Joints::from_names(&skeleton, G1_NAMES).expect("names");
    let refused = |joints: Leg6Joints| Leg6Chain::new(&skeleton, &joints, DVec3::ZERO).unwrap_err();
    let swapped = refused(Leg6Joints {
        hip_yaw: j.hip_roll,
        hip_roll: j.hip_yaw,
        ..j
    });
    assert!(matches!(swapped, Leg6ChainError::Misaligned { .. }));
    let out_of_order = refused(Leg6Joints {
        knee: j.ankle_pitch,
        ankle_pitch: j.knee,
        ..j
    });
    assert!(matches!(out_of_order, Leg6ChainError::NotAChain { .. }));
    let with_pelvis = refused(Leg6Joints {
        hip_yaw: skeleton.joint("pelvis").expect("pelvis"),
        ..j
    });
    assert!(matches!(with_pelvis, Leg6ChainError::NotAChain { .. }));
    assert!(matches!(
        Leg6Joints::from_names(&skeleton, ["nope"; 6]),
        Err(Leg6ChainError::UnknownName { .. })
    ));
    assert!(matches!(
        Leg6Chain::new(&skeleton, &j, DVec3::NAN),
        Err(Leg6ChainError::BadSole { .. })
    ));
    let mut builder = SkeletonBuilder::new();
    builder.joint("pelvis", None, pelvis);
    let mut parent = "pelvis";
    for name in G1_NAMES {
        builder.joint(name, Some(parent), Transform::IDENTITY);
        parent = name;
    }
    let free = builder.build().expect("free leg");
    let j = Leg6Joints::from_names(&free, G1_NAMES).expect("names");
    assert!(matches!(
        Leg6Chain::new(&free, &j, DVec3::ZERO),
        Err(Leg6ChainError::NoHinge { .. })
    ));
}

#[test]
fn y_up_from_leg_is_the_humanoid_convention() {
    // Forward is +Z, left is +X, up is +Y; a proper rotation.
    assert_eq!(Y_UP_FROM_LEG * DVec3::X, DVec3::Z);
    assert_eq!(Y_UP_FROM_LEG * DVec3::Y, DVec3::X);
    assert_eq!(Y_UP_FROM_LEG * DVec3::Z, DVec3::Y);
    assert_eq!(Y_UP_FROM_LEG.determinant(), 1.0);
    assert!(DMat3::from_quat(DQuat::from_mat3(&Y_UP_FROM_LEG)).abs_diff_eq(Y_UP_FROM_LEG, 1e-15));
}

/// The `leg6` kind through `SolverConfig` JSON on the simple humanoid's right leg (hips in
/// roll–pitch–yaw order): goals from random legal poses are reached (position and orientation,
/// measured by FK), a position-only goal keeps the sole level, and the built-in humanoid's
/// leg (swing–twist joints, not six hinges) is refused with a reason.
#[test]
fn leg6_kind_solves_tasks_on_a_hinge_leg() {
    use ikarus_solve::{Goal, IkTask, SolveStatus, SolverConfig, solve};
    let skeleton =
        simple_humanoid_skeleton(Transform::from_translation(DVec3::new(0.0, 0.79, 0.0)));
    let foot = skeleton.joint("RLEG_ANKLE_R").expect("foot");
    let config: SolverConfig = serde_json::from_str(r#"{"kind": "leg6"}"#).unwrap();
    let mut rng = Rng(77);
    let mut model = ModelPose::new(&skeleton);
    let mut converged = 0;
    for _ in 0..200 {
        let mut source = skeleton.rest_pose();
        for joint in skeleton.joints() {
            if let ikarus_core::JointLimit::Hinge(h) = skeleton.limit(joint) {
                let margin = 0.05 * (h.max - h.min);
                let angle = rng.range(h.min + margin, h.max - margin);
                source[joint].rotation =
                    skeleton.rest(joint).rotation * DQuat::from_axis_angle(h.axis, angle);
            }
        }
        fk::forward_kinematics(&skeleton, &source, &mut model);
        let task = pose_task(&model, foot);
        let mut pose = skeleton.rest_pose();
        let report = solve(&skeleton, &task, &config, &mut pose);
        assert!(skeleton.limit_violation(&pose).is_none());
        if report.status == SolveStatus::Converged {
            converged += 1;
            assert!(report.position_error < TOLERANCE && report.rotation_error < TOLERANCE);
        }
    }
    assert!(converged >= 190, "{converged} of 200");

    // Position only: the seed's level sole. Goals from level-sole poses inside this leg's
    // limits (pitches summing to zero, rolls cancelling).
    let joints = Leg6Joints::from_names(&skeleton, SIMPLE_NAMES).expect("names");
    let chain = Leg6Chain::new(&skeleton, &joints, DVec3::ZERO).expect("chain");
    let mut rest = ModelPose::new(&skeleton);
    fk::forward_kinematics(&skeleton, &skeleton.rest_pose(), &mut rest);
    for _ in 0..100 {
        let (knee, ankle, roll) = (
            rng.range(0.0, 0.3),
            rng.range(0.0, 0.2),
            rng.range(-0.3, 0.3),
        );
        let angles = Leg6Angles {
            hip_yaw: 0.0,
            hip_roll: roll,
            hip_pitch: -(knee + ankle),
            knee,
            ankle_pitch: ankle,
            ankle_roll: -roll,
        };
        let mut source = skeleton.rest_pose();
        chain.set_angles(&angles, &mut source);
        fk::forward_kinematics(&skeleton, &source, &mut model);
        assert!(
            rotation_angle(model.rotation(foot), rest.rotation(foot)) < 1e-12,
            "level source"
        );
        let task = IkTask::from_goal(foot, Goal::from_position(model.position(foot)));
        let mut pose = skeleton.rest_pose();
        let report = solve(&skeleton, &task, &config, &mut pose);
        assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        assert!(
            rotation_angle(model.rotation(foot), rest.rotation(foot)) < 1e-9,
            "sole level, facing forward"
        );
    }

    let humanoid = ikarus_core::humanoid::builtin_humanoid();
    let task = IkTask::from_goal(
        humanoid.joint("leftFoot").unwrap(),
        Goal::from_position(DVec3::new(0.1, 0.1, 0.1)),
    );
    let mut pose = humanoid.rest_pose();
    let report = solve(&humanoid, &task, &config, &mut pose);
    assert_eq!(report.status, SolveStatus::InvalidInput);
    assert_eq!(pose, humanoid.rest_pose());
}

/// The `leg6` kind on the right leg of `simple_humanoid.urdf` as the URDF loader builds it
/// (one joint per link, +Z up, hips in roll–pitch–yaw order): 6-D goals from random joint
/// vectors inside the URDF limits are met by the closed form and, as a second method, by
/// Levenberg–Marquardt; both poses are measured by FK and stay inside the limits.
#[test]
fn leg6_kind_solves_the_urdf_simple_humanoid_leg_like_lm() {
    use ikarus_formats::urdf::Urdf;
    use ikarus_solve::{SolveStatus, SolverConfig, measure, solve};
    let Some(dir) = ikarus_testdata::require("urdf", "leg6_kind_on_urdf") else {
        return;
    };
    let text = std::fs::read_to_string(dir.join("simple_humanoid.urdf")).unwrap();
    let robot = Urdf::parse(&text).unwrap();
    let s = &robot.skeleton;
    let chain = robot.chain("BODY", "r_ankle").unwrap();
    assert_eq!(chain.dof(), 6);
    let foot = chain.tip();
    let leg6: SolverConfig = serde_json::from_str(r#"{"kind": "leg6"}"#).unwrap();
    let lm: SolverConfig = serde_json::from_str(r#"{"kind": "lm"}"#).unwrap();
    let mut rng = Rng(2026);
    let mut model = ModelPose::new(s);
    let (mut closed, mut numeric) = (0, 0);
    for _ in 0..200 {
        let q: Vec<f64> = chain
            .lower()
            .iter()
            .zip(chain.upper())
            .map(|(&l, &u)| rng.range(l + 0.05 * (u - l), u - 0.05 * (u - l)))
            .collect();
        let mut source = s.rest_pose();
        chain.set_q(s, &q, &mut source).unwrap();
        fk::forward_kinematics(s, &source, &mut model);
        let task = pose_task(&model, foot);
        for (config, count) in [(&leg6, &mut closed), (&lm, &mut numeric)] {
            let mut pose = s.rest_pose();
            let report = solve(s, &task, config, &mut pose);
            // The leg's joints stay inside their URDF limits (the URDF's zero pose puts some
            // arm joints outside theirs; the leg solve leaves those alone).
            let mut solved = [0.0; 6];
            chain.q_from_pose(s, &pose, &mut solved);
            assert!(chain.within_limits(&solved, 1e-9), "{config:?}: {solved:?}");
            assert_eq!(
                measure(s, &task, &pose),
                (report.position_error, report.rotation_error)
            );
            *count += usize::from(report.status == SolveStatus::Converged);
        }
    }
    // Measured: the closed form 200 of 200 (every goal came from a legal pose, and the closed
    // form's branch inside the limits exists), LM 200 of 200.
    assert!(closed >= 195, "leg6 {closed} of 200");
    assert!(numeric >= 195, "lm {numeric} of 200");
}
