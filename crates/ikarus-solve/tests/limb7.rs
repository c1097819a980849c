//! 7-DOF limb IK (seed 000, 7-DOF limb) against ground truth: an independent forward kinematics
//! written here from affine products, the skeleton's own FK for chains, and the seed's formulas.

mod common;

use common::{CMU_TO_METRES, cmu_jump};
use ikarus_testdata::assert::{model_of, rotation_angle};
use ikarus_testdata::transforms::rooted;
use ikarus_testdata::{Draw, Rng};
use std::f64::consts::{FRAC_PI_2, PI, TAU};

use ikarus_core::glam::{DAffine3, DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Skeleton, Transform};
use ikarus_solve::limb7::{
    Limb7, Limb7Chain, Limb7ChainError, Limb7Error, Limb7Geometry, Limb7Goal, Limb7Limits,
    Limb7Report, Limb7Solution, SwivelInterval, SwivelPolicy, solve_chain, solve_slice,
};

const TOLERANCE: f64 = 1e-9;

/// The built-in humanoid and its left arm as a chain: upper arm, lower arm, hand.
fn humanoid_left_arm() -> (Skeleton, Limb7Chain, [JointId; 3]) {
    let skeleton = builtin_humanoid();
    let [s, e, w] =
        ["leftUpperArm", "leftLowerArm", "leftHand"].map(|n| skeleton.joint(n).unwrap());
    let chain = Limb7Chain::new(&skeleton, s, e, w).unwrap();
    (skeleton, chain, [s, e, w])
}

/// `solve_chain` at a fixed `swivel`, for a chain and goal known to be valid.
fn solve_at_swivel(
    skeleton: &Skeleton,
    chain: &Limb7Chain,
    goal: &Limb7Goal,
    swivel: f64,
    pose: &mut LocalPose,
    model: &mut ModelPose,
) -> Limb7Report {
    solve_chain(
        skeleton,
        chain,
        goal,
        SwivelPolicy::Fixed(swivel),
        pose,
        model,
    )
    .unwrap()
}

/// Draws of this file's own: a unit direction divided by its length (not glam's `normalize`,
/// which multiplies by the reciprocal and so rounds differently: the cases depend on it).
trait LimbDraw {
    fn unit_vector(&mut self) -> DVec3;
}

impl LimbDraw for Rng {
    fn unit_vector(&mut self) -> DVec3 {
        let v = self.in_ball();
        v / v.length_squared().sqrt()
    }
}

/// A random limb: random bone vectors, frames, axis (not along a bone), range and reference.
fn random_geometry(rng: &mut Rng) -> Limb7Geometry {
    loop {
        let lo = rng.range(-PI, 0.5);
        let hi = (lo + rng.range(0.3, TAU)).min(PI);
        let g = Limb7Geometry {
            upper: rng.unit_vector() * rng.range(0.1, 1.0),
            elbow_frame: rng.rotation(),
            elbow_axis: rng.unit_vector() * rng.range(0.5, 2.0),
            elbow_range: [lo, hi],
            lower: rng.unit_vector() * rng.range(0.1, 1.0),
            wrist_frame: rng.rotation(),
            swivel_reference: rng.unit_vector(),
        };
        if Limb7::new(g).is_ok() {
            return g;
        }
    }
}

/// Independent FK: `limb_from_wrist` as a product of affine maps (shoulder rotation, upper bone,
/// elbow frame, hinge, lower bone, wrist frame, wrist rotation). Returns the elbow and wrist
/// transforms.
fn fk_affine(
    g: &Limb7Geometry,
    shoulder: DQuat,
    elbow_angle: f64,
    wrist: DQuat,
) -> (DAffine3, DAffine3) {
    let elbow = DAffine3::from_quat(shoulder)
        * DAffine3::from_translation(g.upper)
        * DAffine3::from_quat(g.elbow_frame)
        * DAffine3::from_axis_angle(g.elbow_axis.normalize(), elbow_angle);
    let wrist = elbow
        * DAffine3::from_translation(g.lower)
        * DAffine3::from_quat(g.wrist_frame)
        * DAffine3::from_quat(wrist);
    (elbow, wrist)
}

/// Rotation of an affine made of rotations and translations only.
fn rotation_of(m: &DAffine3) -> DQuat {
    DQuat::from_mat3(&m.matrix3).normalize()
}

fn angle_gap(a: f64, b: f64) -> f64 {
    let d = (a - b).rem_euclid(TAU);
    d.min(TAU - d)
}

fn assert_finite(s: &Limb7Solution) {
    assert!(s.shoulder.is_finite() && s.elbow_hinge.is_finite() && s.elbow_angle.is_finite());
    assert!(s.swivel.is_finite());
    assert!(s.wrist.is_none_or(DQuat::is_finite));
}

/// FK(IK(target)) on 100,000 random reachable poses of random limbs: position and orientation
/// reproduced, the elbow inside its range, the swivel recovered, and — with the pose's own
/// swivel and elbow angle as hint — the original joint rotations returned.
#[test]
fn reproduces_100k_random_reachable_poses() {
    let mut rng = Rng(7);
    let (mut worst_position, mut worst_rotation, mut worst_swivel) = (0.0_f64, 0.0_f64, 0.0_f64);
    for i in 0..100_000 {
        let g = random_geometry(&mut rng);
        let limb = Limb7::new(g).unwrap();
        let scale = g.upper.length() + g.lower.length();
        let (q, theta, wrist) = (
            rng.rotation(),
            rng.range(g.elbow_range[0], g.elbow_range[1]),
            rng.rotation(),
        );
        let (_, wrist_frame) = fk_affine(&g, q, theta, wrist);
        let (target, orientation) = (wrist_frame.translation, rotation_of(&wrist_frame));
        assert!(limb.is_reachable(target), "sample {i}");

        // A random swivel: the goal is met and the swivel comes back.
        let swivel = rng.range(-PI, PI);
        let s = limb
            .solve_pose(target, orientation, swivel, Some(theta))
            .unwrap();
        assert_finite(&s);
        assert!(s.reached, "sample {i}");
        let [lo, hi] = g.elbow_range;
        assert!(s.elbow_angle >= lo - 1e-12 && s.elbow_angle <= hi + 1e-12);
        let (elbow_m, wrist_m) = fk_affine(&g, s.shoulder, s.elbow_angle, s.wrist.unwrap());
        worst_position = worst_position.max((wrist_m.translation - target).length() / scale);
        worst_rotation = worst_rotation.max(rotation_angle(rotation_of(&wrist_m), orientation));
        worst_swivel = worst_swivel.max(angle_gap(
            limb.swivel_from_pose(s.shoulder, s.elbow_angle),
            swivel,
        ));
        if let Some(from_points) = limb.swivel_from_positions(target, elbow_m.translation) {
            // From positions the angle is as precise as the elbow's offset from the axis.
            let offset = (elbow_m.translation
                - elbow_m.translation.dot(target.normalize()) * target.normalize())
            .length();
            if offset > 1e-6 * scale {
                assert!(angle_gap(from_points, swivel) < 1e-6, "sample {i}");
            }
        }

        // The pose's own swivel: the original rotations come back.
        let own = limb.swivel_from_pose(q, theta);
        let back = limb
            .solve_pose(target, orientation, own, Some(theta))
            .unwrap();
        let elbow_offset = {
            let (e, _) = fk_affine(&g, q, theta, wrist);
            let n = target.normalize();
            (e.translation - e.translation.dot(n) * n).length()
        };
        if elbow_offset > 1e-4 * scale && target.length() > 1e-3 * scale {
            assert!(angle_gap(back.elbow_angle, theta) < 1e-6, "sample {i}");
            assert!(rotation_angle(back.shoulder, q) < 1e-6, "sample {i}");
            assert!(
                rotation_angle(back.wrist.unwrap(), wrist) < 1e-6,
                "sample {i}"
            );
        }
    }
    assert!(worst_position < TOLERANCE, "position {worst_position}");
    assert!(worst_rotation < TOLERANCE, "rotation {worst_rotation}");
    assert!(worst_swivel < TOLERANCE, "swivel {worst_swivel}");
    eprintln!(
        "worst: position {worst_position:e} (relative), rotation {worst_rotation:e} rad, swivel {worst_swivel:e} rad"
    );
}

/// The seed's construction, written out from its code (vA = −X, vU, vV, vC, radius).
#[test]
fn seed_limb_puts_the_elbow_where_the_seed_formula_does() {
    let (l1, l2) = (1.0, 1.0);
    let limb = Limb7::new(Limb7Geometry::seed(l1, l2)).unwrap();
    let mut rng = Rng(3);
    for _ in 0..1000 {
        let goal = rng.unit_vector() * rng.range(0.05, 1.99);
        let swivel = rng.range(-PI, PI);
        let s = limb.solve_position(goal, swivel, None).unwrap();
        assert!(s.reached);
        let d = goal.length();
        let n = goal / d;
        let va = DVec3::NEG_X;
        let u = (va - va.dot(n) * n).normalize();
        let v = n.cross(u);
        let cos_alpha = (d * d + l1 * l1 - l2 * l2) / (2.0 * d * l1);
        let centre = cos_alpha * l1 * n;
        let radius = (1.0 - cos_alpha * cos_alpha).sqrt() * l1;
        let elbow_seed = centre + radius * (swivel.cos() * u + swivel.sin() * v);
        let (elbow, wrist, _) = limb.forward(s.shoulder, s.elbow_angle, DQuat::IDENTITY);
        assert!(
            (elbow - elbow_seed).length() < 1e-9,
            "{elbow} vs {elbow_seed}"
        );
        assert!((wrist - goal).length() < 1e-12);
        // The seed's elbow only flexes positively about +Y.
        assert!((0.0..=PI).contains(&s.elbow_angle));
        let ry = ((d * d - l1 * l1 - l2 * l2) / (2.0 * l1 * l2)).acos();
        assert!((s.elbow_angle - (PI - ry)).abs() < 1e-7 || (s.elbow_angle - ry).abs() < 1e-7);
    }
}

#[test]
fn unreachable_targets_give_the_closest_pose_and_not_reached() {
    let mut g = Limb7Geometry::seed(0.3, 0.25);
    g.elbow_range = [0.0, 150f64.to_radians()];
    let limb = Limb7::new(g).unwrap();
    let (near, far) = limb.reach();
    assert!((far - 0.55).abs() < 1e-12);
    let expected_near = (0.3f64.powi(2) + 0.25f64.powi(2)
        - 2.0 * 0.3 * 0.25 * (PI - 150f64.to_radians()).cos())
    .sqrt();
    assert!((near - expected_near).abs() < 1e-12);
    let mut rng = Rng(11);
    for _ in 0..500 {
        let dir = rng.unit_vector();
        for (distance, expected) in [
            (rng.range(0.56, 5.0), far),
            (rng.range(0.0, near * 0.99), near),
        ] {
            let target = dir * distance;
            assert!(!limb.is_reachable(target));
            let s = limb
                .solve_pose(target, rng.rotation(), rng.range(-PI, PI), None)
                .unwrap();
            assert_finite(&s);
            assert!(!s.reached);
            let (_, wrist, _) = limb.forward(s.shoulder, s.elbow_angle, DQuat::IDENTITY);
            assert!((wrist.length() - expected).abs() < 1e-9);
            if distance > 1e-9 {
                assert!(
                    wrist.normalize().dot(dir) > 1.0 - 1e-9,
                    "points at the target"
                );
            }
        }
    }
}

#[test]
fn target_at_the_shoulder_and_non_finite_input_never_give_nan() {
    let limb = Limb7::new(Limb7Geometry::seed(0.3, 0.3)).unwrap();
    // Folded completely the seed limb reaches its own shoulder.
    let s = limb
        .solve_pose(DVec3::ZERO, DQuat::IDENTITY, 0.3, None)
        .unwrap();
    assert_finite(&s);
    let (_, wrist, _) = limb.forward(s.shoulder, s.elbow_angle, DQuat::IDENTITY);
    assert!(wrist.length() < 1e-9);
    assert!(s.reached);
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        let v = DVec3::new(0.1, bad, 0.2);
        assert_eq!(
            limb.solve_position(v, 0.0, None),
            Err(Limb7Error::NonFinite)
        );
        assert_eq!(
            limb.solve_position(DVec3::X * 0.3, bad, None),
            Err(Limb7Error::NonFinite)
        );
        assert_eq!(
            limb.solve_pose(
                DVec3::X * 0.3,
                DQuat::from_xyzw(0.0, bad, 0.0, 1.0),
                0.0,
                None
            ),
            Err(Limb7Error::NonFinite)
        );
        assert!(!limb.is_reachable(v));
    }
    assert_eq!(
        limb.solve_pose(
            DVec3::X * 0.3,
            DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0),
            0.0,
            None
        ),
        Err(Limb7Error::NonFinite)
    );
}

#[test]
fn degenerate_geometry_is_refused_with_a_reason() {
    let seed = Limb7Geometry::seed(0.3, 0.3);
    let refused = |geometry: Limb7Geometry| Limb7::new(geometry).unwrap_err();
    let zero_upper = refused(Limb7Geometry {
        upper: DVec3::ZERO,
        ..seed
    });
    assert_eq!(zero_upper, Limb7Error::ZeroLengthBone { bone: "upper" });
    let zero_lower = refused(Limb7Geometry {
        lower: DVec3::ZERO,
        ..seed
    });
    assert_eq!(zero_lower, Limb7Error::ZeroLengthBone { bone: "lower" });
    let along_axis = refused(Limb7Geometry {
        elbow_axis: DVec3::Z,
        ..seed
    });
    assert_eq!(along_axis, Limb7Error::NoReach);
    let no_axis = refused(Limb7Geometry {
        elbow_axis: DVec3::ZERO,
        ..seed
    });
    assert!(matches!(no_axis, Limb7Error::BadDirection { .. }));
    let reversed = refused(Limb7Geometry {
        elbow_range: [1.0, 0.0],
        ..seed
    });
    assert!(matches!(reversed, Limb7Error::BadRange { .. }));
    refused(Limb7Geometry {
        upper: DVec3::new(f64::NAN, 0.0, 1.0),
        ..seed
    });
}

/// The swivel reference's degenerate direction: the secondary reference takes over, and the
/// swivel still round-trips.
#[test]
fn target_along_the_swivel_reference_still_solves() {
    let limb = Limb7::new(Limb7Geometry::seed(1.0, 1.0)).unwrap();
    for target in [DVec3::NEG_X * 1.2, DVec3::X * 1.2] {
        for swivel in [-2.0, 0.0, 1.0] {
            let s = limb.solve_position(target, swivel, None).unwrap();
            assert!(s.reached);
            let (elbow, wrist, _) = limb.forward(s.shoulder, s.elbow_angle, DQuat::IDENTITY);
            assert!((wrist - target).length() < 1e-12);
            let back = limb.swivel_from_positions(target, elbow).unwrap();
            assert!(angle_gap(back, swivel) < 1e-9);
        }
    }
}

/// Straight limbs: the swivel still turns the limb (its bend plane) and round-trips.
#[test]
fn straight_limb_keeps_a_continuous_swivel() {
    let limb = Limb7::new(Limb7Geometry::seed(1.0, 1.0)).unwrap();
    let target = DVec3::new(0.0, 0.0, 2.0);
    let mut previous: Option<DQuat> = None;
    for i in 0..64 {
        let swivel = -PI + TAU * f64::from(i) / 64.0;
        let s = limb.solve_position(target, swivel, None).unwrap();
        assert!(s.reached);
        assert!(angle_gap(limb.swivel_from_pose(s.shoulder, s.elbow_angle), swivel) < 1e-9);
        if let Some(p) = previous {
            // One step of the swivel turns the shoulder by one step about the limb.
            assert!((rotation_angle(p, s.shoulder) - TAU / 64.0).abs() < 1e-9);
        }
        previous = Some(s.shoulder);
    }
}

/// Shoulder and wrist limits of the built-in humanoid's left arm; targets from random legal
/// poses. Every swivel inside the reported intervals keeps both joints legal, every sampled
/// swivel outside (beyond a hair's breadth) breaks one, and the pose's own swivel is inside.
#[test]
fn feasible_intervals_are_exactly_the_legal_swivels() {
    let (skeleton, chain, [s, _, w]) = humanoid_left_arm();
    let rest = skeleton.rest_pose();
    let limb = chain.limb(&skeleton, &rest).unwrap();
    let limits = Limb7Limits {
        shoulder: skeleton.limit(s),
        shoulder_rest: skeleton.rest(s).rotation,
        wrist: skeleton.limit(w),
        wrist_rest: skeleton.rest(w).rotation,
    };
    // Legal by the skeleton's own limits: each rotation, relative to its rest, inside its joint's
    // limit (the shoulder always, the wrist when the goal has an orientation).
    let within = |j: JointId, rotation: DQuat| {
        skeleton
            .limit(j)
            .contains(skeleton.rest(j).rotation.conjugate() * rotation)
    };
    let legal = |sol: &Limb7Solution, orientation: Option<DQuat>| {
        within(s, sol.shoulder)
            && orientation.is_none_or(|goal| within(w, limb.wrist_for(sol, goal)))
    };
    let mut rng = Rng(21);
    let (mut partial, mut inside_checked, mut outside_checked) = (0, 0, 0);
    let mut goals = 0;
    while goals < 200 {
        // A random legal pose of the arm.
        let q = skeleton.rest(s).rotation * rng.rotation();
        let wrist = skeleton.rest(w).rotation * rng.rotation();
        if !limits
            .shoulder
            .contains(limits.shoulder_rest.conjugate() * q)
            || !limits.wrist.contains(limits.wrist_rest.conjugate() * wrist)
        {
            continue;
        }
        goals += 1;
        let theta = rng.range(chain.elbow_range[0], chain.elbow_range[1]);
        let (_, target, orientation) = limb.forward(q, theta, wrist);
        let with_orientation = goals % 2 == 0;
        let orientation = with_orientation.then_some(orientation);
        let intervals = limb
            .feasible_swivels(target, orientation, &limits, Some(theta), &[])
            .unwrap();
        let own = limb.swivel_from_pose(q, theta);
        assert!(
            intervals.iter().any(|i| i.contains(own))
                || intervals.iter().any(|i| i.nearest(own).1 < 1e-9),
            "own swivel {own} not in {intervals:?}"
        );
        if !intervals.iter().any(SwivelInterval::is_full) {
            partial += 1;
        }
        for k in 0..720 {
            let swivel = -PI + TAU * (f64::from(k) + 0.5) / 720.0;
            let sol = limb.solve_position(target, swivel, Some(theta)).unwrap();
            let inside = intervals.iter().any(|i| i.contains(swivel));
            let margin = intervals
                .iter()
                .map(|i| angle_gap(swivel, i.start).min(angle_gap(swivel, i.end)))
                .fold(f64::INFINITY, f64::min);
            if inside {
                assert!(
                    legal(&sol, orientation),
                    "swivel {swivel} inside {intervals:?}"
                );
                inside_checked += 1;
            } else if margin > 1e-9 {
                assert!(
                    !legal(&sol, orientation),
                    "swivel {swivel} outside {intervals:?}"
                );
                outside_checked += 1;
            }
        }
    }
    assert!(partial > 50, "only {partial} goals with a partial range");
    assert!(inside_checked > 10_000 && outside_checked > 10_000);
}

#[test]
fn swivel_policies_pick_what_they_say() {
    let intervals = [
        SwivelInterval {
            start: -1.0,
            end: -0.5,
        },
        SwivelInterval {
            start: 2.5,
            end: -2.8,
        }, // wraps through ±π
    ];
    assert_eq!(
        Limb7::choose_swivel(SwivelPolicy::Fixed(0.2), 1.0, &intervals),
        0.2
    );
    // The current swivel when feasible (or when nothing is known to be feasible), else the
    // nearest feasible one.
    assert_eq!(
        Limb7::choose_swivel(SwivelPolicy::KeepCurrent, -0.7, &intervals),
        -0.7
    );
    assert_eq!(
        Limb7::choose_swivel(SwivelPolicy::KeepCurrent, 1.0, &intervals),
        -0.5
    );
    assert_eq!(
        Limb7::choose_swivel(SwivelPolicy::KeepCurrent, 1.0, &[]),
        1.0
    );
    assert_eq!(
        Limb7::choose_swivel(SwivelPolicy::NearestFeasible(-0.7), 1.0, &intervals),
        -0.7
    );
    assert_eq!(
        Limb7::choose_swivel(SwivelPolicy::NearestFeasible(0.0), 1.0, &intervals),
        -0.5
    );
    assert_eq!(
        Limb7::choose_swivel(SwivelPolicy::NearestFeasible(2.0), 1.0, &intervals),
        2.5
    );
    assert_eq!(
        Limb7::choose_swivel(SwivelPolicy::NearestFeasible(PI), 1.0, &intervals),
        PI
    );
    let middle = Limb7::choose_swivel(SwivelPolicy::MiddleOfFeasible, -0.9, &intervals);
    assert!((middle + 0.75).abs() < 1e-12);
    let middle = Limb7::choose_swivel(SwivelPolicy::MiddleOfFeasible, 2.0, &intervals);
    let expected = 2.5 + 0.5 * (TAU - 5.3);
    assert!(
        angle_gap(middle, expected) < 1e-12,
        "{middle} vs {expected}"
    );
    // Nothing feasible: keep the wish.
    assert_eq!(
        Limb7::choose_swivel(SwivelPolicy::NearestFeasible(0.3), 1.0, &[]),
        0.3
    );
    assert!(SwivelInterval::FULL.contains(3.0));
    assert!((intervals[1].width() - (TAU - 5.3)).abs() < 1e-12);
}

/// A random rotation strictly inside `limit` (rejection sampling; hinges about their axis).
fn legal_rotation(rng: &mut Rng, limit: &JointLimit) -> DQuat {
    if let JointLimit::Hinge(h) = limit {
        let margin = 0.01 * (h.max - h.min);
        return DQuat::from_axis_angle(h.axis, rng.range(h.min + margin, h.max - margin));
    }
    loop {
        let q = DQuat::from_axis_angle(rng.unit_vector(), rng.range(0.0, 1.5));
        if limit.violation(q) == 0.0 && limit.violation(q * DQuat::from_rotation_x(0.01)) == 0.0 {
            return q;
        }
    }
}

/// The built-in humanoid's arms and legs through the chain adapter: goals from random poses
/// reached by the skeleton's FK, position and orientation; policies behave on a real limb.
#[test]
fn builtin_humanoid_limbs_reach_through_the_skeleton() {
    let skeleton = builtin_humanoid();
    let mut rng = Rng(5);
    for names in [
        ["leftUpperArm", "leftLowerArm", "leftHand"],
        ["rightUpperArm", "rightLowerArm", "rightHand"],
        ["leftUpperLeg", "leftLowerLeg", "leftFoot"],
        ["rightUpperLeg", "rightLowerLeg", "rightFoot"],
    ] {
        let [s, e, w] = names.map(|n| skeleton.joint(n).unwrap());
        let chain = Limb7Chain::new(&skeleton, s, e, w).unwrap();
        let mut model = ModelPose::new(&skeleton);
        let mut reached = 0;
        for _ in 0..300 {
            // A random legal limb pose as the goal's source.
            // A random pose strictly inside the limits (a projection would sit on a boundary,
            // where the feasible swivels can shrink to a single point).
            let mut source = skeleton.rest_pose();
            for j in [s, e, w] {
                let rest = skeleton.rest(j).rotation;
                source[j].rotation = rest * legal_rotation(&mut rng, skeleton.limit(j));
            }
            let truth = model_of(&skeleton, &source);
            let goal = Limb7Goal {
                position: truth.position(w),
                orientation: Some(truth.rotation(w)),
            };
            // Start from rest; the policy keeps the elbow where the limits allow.
            let mut pose = skeleton.rest_pose();
            let report = solve_chain(
                &skeleton,
                &chain,
                &goal,
                SwivelPolicy::NearestFeasible(chain.current_swivel(&skeleton, &source).unwrap()),
                &mut pose,
                &mut model,
            )
            .unwrap();
            let after = model_of(&skeleton, &pose);
            assert!(
                skeleton.limit_violation(&pose).is_none(),
                "{names:?} left a limit"
            );
            for j in skeleton.joints() {
                assert!(
                    (model.position(j) - after.position(j)).length() < 1e-12,
                    "model is FK"
                );
            }
            if report.reached {
                reached += 1;
                let error = (after.position(w) - goal.position).length();
                assert!(
                    error < TOLERANCE,
                    "{names:?} {report:?} {error} {:?}",
                    source[e]
                );
                assert!(rotation_angle(after.rotation(w), goal.orientation.unwrap()) < TOLERANCE);
            }
            // The source's own swivel is feasible, so the policy must reach.
            assert!(report.reached, "{names:?}: {report:?}");
        }
        assert_eq!(reached, 300);
    }
}

/// `KeepCurrent` leaves a reached limb as it is and keeps the elbow's swivel when the goal moves.
#[test]
fn keep_current_keeps_the_swivel() {
    let (skeleton, chain, [s, e, w]) = humanoid_left_arm();
    let mut pose = skeleton.rest_pose();
    pose[e].rotation = skeleton.rest(e).rotation * DQuat::from_axis_angle(chain.elbow_axis, 1.2);
    pose[s].rotation = skeleton.rest(s).rotation * DQuat::from_rotation_z(-0.6);
    let before_swivel = chain.current_swivel(&skeleton, &pose).unwrap();
    let start = model_of(&skeleton, &pose);
    let mut model = ModelPose::new(&skeleton);
    // Same goal: nothing moves.
    let mut same = pose.clone();
    let goal = Limb7Goal {
        position: start.position(w),
        orientation: None,
    };
    solve_chain(
        &skeleton,
        &chain,
        &goal,
        SwivelPolicy::KeepCurrent,
        &mut same,
        &mut model,
    )
    .unwrap();
    let after = model_of(&skeleton, &same);
    for j in [s, e, w] {
        assert!((after.position(j) - start.position(j)).length() < 1e-12);
    }
    // Moved goal: reached, swivel kept.
    let goal = Limb7Goal {
        position: start.position(w) + DVec3::new(-0.05, 0.08, 0.1),
        orientation: None,
    };
    let report = solve_chain(
        &skeleton,
        &chain,
        &goal,
        SwivelPolicy::KeepCurrent,
        &mut pose,
        &mut model,
    )
    .unwrap();
    assert!(report.reached);
    assert!(angle_gap(report.swivel, before_swivel) < 1e-12);
    assert!(
        angle_gap(
            chain.current_swivel(&skeleton, &pose).unwrap(),
            before_swivel
        ) < 1e-9
    );
}

/// Six parent transforms, and whether each is a similarity (orientation goals exact).
fn parent_transforms() -> [(Transform, bool); 6] {
    let rotation = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, 3.0).normalize(), 2.1);
    [
        (Transform::IDENTITY, true),
        (
            Transform::from_translation(DVec3::new(0.3, -1.2, 2.5)),
            true,
        ),
        (Transform::from_rotation(rotation), true),
        (
            Transform {
                translation: DVec3::new(-0.4, 0.2, 0.1),
                rotation,
                scale: DVec3::splat(2.5),
            },
            true,
        ),
        (
            Transform {
                translation: DVec3::new(0.2, 0.9, -0.4),
                rotation,
                scale: DVec3::new(1.8, 0.55, 1.25),
            },
            false,
        ),
        (
            Transform {
                translation: DVec3::new(1.0, 0.5, -2.0),
                rotation,
                scale: DVec3::new(-1.0, 1.0, 1.0),
            },
            false,
        ),
    ]
}

/// The chain under the six parent transforms: positions exact in model space for every
/// transform; orientations exact for the similarity ones (rotations, uniform scale).
#[test]
fn chain_works_under_any_parent_transform() {
    let parents = parent_transforms();
    let mut rng = Rng(9);
    for (parent, similarity) in parents {
        let elbow_rest = rng.rotation();
        let skeleton = rooted(parent)
            .joint(
                "shoulder",
                Some("root"),
                Transform {
                    translation: DVec3::new(0.1, 0.2, 0.0),
                    rotation: rng.rotation(),
                    scale: DVec3::ONE,
                },
            )
            .joint(
                "elbow",
                Some("shoulder"),
                Transform {
                    translation: rng.unit_vector() * 0.3,
                    rotation: elbow_rest,
                    scale: DVec3::ONE,
                },
            )
            .joint(
                "wrist",
                Some("elbow"),
                Transform {
                    translation: rng.unit_vector() * 0.25,
                    rotation: rng.rotation(),
                    scale: DVec3::ONE,
                },
            )
            .build()
            .unwrap();
        let [s, e, w] = ["shoulder", "elbow", "wrist"].map(|n| skeleton.joint(n).unwrap());
        let axis = rng.unit_vector();
        let chain = Limb7Chain::with_hinge(&skeleton, [s, e, w], axis, [0.0, 2.5]).unwrap();
        let mut model = ModelPose::new(&skeleton);
        for _ in 0..2000 {
            let mut source = skeleton.rest_pose();
            source[s].rotation = rng.rotation();
            source[e].rotation = elbow_rest * DQuat::from_axis_angle(axis, rng.range(0.0, 2.5));
            source[w].rotation = rng.rotation();
            let truth = model_of(&skeleton, &source);
            let goal = Limb7Goal {
                position: truth.position(w),
                orientation: similarity.then(|| truth.rotation(w)),
            };
            let mut pose = skeleton.rest_pose();
            let swivel = rng.range(-PI, PI);
            let report = solve_at_swivel(&skeleton, &chain, &goal, swivel, &mut pose, &mut model);
            assert!(report.reached);
            let after = model_of(&skeleton, &pose);
            let error = (after.position(w) - goal.position).length();
            assert!(
                error < TOLERANCE * parent.scale.abs().max_element(),
                "{parent:?}: {error}"
            );
            if let Some(orientation) = goal.orientation {
                assert!(rotation_angle(after.rotation(w), orientation) < TOLERANCE);
            }
            assert!(angle_gap(chain.current_swivel(&skeleton, &pose).unwrap(), swivel) < 1e-9);
        }
    }
}

/// A real BVH arm (CMU, no limits in the file): elbow axis from a bent frame, the motion's own
/// wrist positions reached with the motion's own swivel, which puts the elbow back where the
/// motion had it.
#[test]
fn cmu_arm_reaches_its_motion_with_its_own_swivel() {
    let Some(document) = cmu_jump(
        "cmu_arm_reaches_its_motion_with_its_own_swivel",
        CMU_TO_METRES,
    ) else {
        return;
    };
    let skeleton = &document.skeleton;
    let motion = document.motion.as_ref().unwrap();
    let [s, e, w] = ["LeftArm", "LeftForeArm", "LeftHand"].map(|n| skeleton.joint(n).unwrap());
    // Elbow axis in its rest frame from the most bent frame.
    let (mut axis, mut best) = (DVec3::ZERO, 0.0);
    for frame in (0..motion.len()).step_by(10) {
        let m = model_of(skeleton, motion.frame(frame).unwrap());
        let (ps, pe, pw) = (m.position(s), m.position(e), m.position(w));
        let bend = (pe - ps).cross(pw - pe);
        if bend.length() > best {
            best = bend.length();
            let current = m.rotation(e).inverse() * bend.normalize();
            axis = skeleton.rest(e).rotation.inverse()
                * (motion.frame(frame).unwrap()[e].rotation * current);
        }
    }
    let chain = Limb7Chain::with_hinge(skeleton, [s, e, w], axis, [0.0, PI]).unwrap();
    let mut model = ModelPose::new(skeleton);
    let mut checked = 0;
    for frame in (0..motion.len()).step_by(20) {
        let source = motion.frame(frame).unwrap();
        let truth = model_of(skeleton, source);
        let limb_from_model = chain.model_from_limb(skeleton, source, &truth).inverse();
        let limb = chain.limb(skeleton, source).unwrap();
        let wrist_l = limb_from_model.transform_point3(truth.position(w));
        let elbow_l = limb_from_model.transform_point3(truth.position(e));
        let Some(swivel) = limb.swivel_from_positions(wrist_l, elbow_l) else {
            continue;
        };
        let mut pose = source.clone();
        let goal = Limb7Goal {
            position: truth.position(w),
            orientation: Some(truth.rotation(w)),
        };
        let report = solve_at_swivel(skeleton, &chain, &goal, swivel, &mut pose, &mut model);
        if !report.reached {
            // The mocap elbow is not a pure hinge; frames bent the other way are out of range.
            continue;
        }
        checked += 1;
        let after = model_of(skeleton, &pose);
        assert!((after.position(w) - goal.position).length() < TOLERANCE);
        assert!(rotation_angle(after.rotation(w), goal.orientation.unwrap()) < TOLERANCE);
        // The elbow lies on the motion's side: same swivel, elbow within the hinge's reach of
        // the mocap elbow (the mocap forearm also twists, which a hinge cannot).
        let elbow_after = limb_from_model.transform_point3(after.position(e));
        let swivel_after = limb.swivel_from_positions(wrist_l, elbow_after).unwrap();
        assert!(angle_gap(swivel_after, swivel) < 1e-6, "frame {frame}");
        assert!(
            (elbow_after - elbow_l).length() < 1e-6,
            "frame {frame}: elbow moved"
        );
    }
    assert!(checked > 30, "only {checked} frames");
}

#[test]
fn batch_matches_single_solves() {
    let mut rng = Rng(17);
    let limbs: Vec<Limb7> = (0..64)
        .map(|_| Limb7::new(random_geometry(&mut rng)).unwrap())
        .collect();
    let targets: Vec<DVec3> = (0..64)
        .map(|_| rng.unit_vector() * rng.range(0.0, 1.5))
        .collect();
    let orientations: Vec<DQuat> = (0..64).map(|_| rng.rotation()).collect();
    let swivels: Vec<f64> = (0..64).map(|_| rng.range(-PI, PI)).collect();
    let mut out = vec![Err(Limb7Error::NonFinite); 64];
    solve_slice(&limbs, &targets, &orientations, &swivels, &mut out);
    for i in 0..64 {
        assert_eq!(
            out[i],
            limbs[i].solve_pose(targets[i], orientations[i], swivels[i], None)
        );
    }
}

#[test]
fn chains_are_validated() {
    let skeleton = builtin_humanoid();
    let j = |n: &str| skeleton.joint(n).unwrap();
    assert!(matches!(
        Limb7Chain::with_hinge(
            &skeleton,
            [j("leftLowerArm"), j("leftUpperArm"), j("leftHand")],
            DVec3::Y,
            [0.0, 1.0]
        ),
        Err(Limb7ChainError::NotAChain { .. })
    ));
    assert!(matches!(
        Limb7Chain::new(
            &skeleton,
            j("leftShoulder"),
            j("leftUpperArm"),
            j("leftHand")
        ),
        Err(Limb7ChainError::NoHinge { .. })
    ));
    assert!(matches!(
        Limb7Chain::new(
            &skeleton,
            JointId::from_index(999),
            j("leftLowerArm"),
            j("leftHand")
        ),
        Err(Limb7ChainError::UnknownJoint { .. })
    ));
    // A chain through an intermediate joint (shoulder → upper arm → lower arm → hand, the
    // upper arm kept fixed) still solves exactly.
    let chain = Limb7Chain::with_hinge(
        &skeleton,
        [j("leftShoulder"), j("leftLowerArm"), j("leftHand")],
        match skeleton.limit(j("leftLowerArm")) {
            JointLimit::Hinge(h) => h.axis,
            _ => unreachable!(),
        },
        [0.0, FRAC_PI_2 * 1.6],
    )
    .unwrap();
    let mut pose = skeleton.rest_pose();
    let mut model = ModelPose::new(&skeleton);
    let start = model_of(&skeleton, &pose);
    let goal = Limb7Goal {
        position: start.position(j("leftHand")) + DVec3::new(-0.1, -0.1, 0.15),
        orientation: None,
    };
    let report = solve_chain(
        &skeleton,
        &chain,
        &goal,
        SwivelPolicy::Fixed(0.5),
        &mut pose,
        &mut model,
    );
    let report = report.unwrap();
    let after = model_of(&skeleton, &pose);
    if report.reached {
        assert!((after.position(j("leftHand")) - goal.position).length() < TOLERANCE);
    } else {
        assert!(!report.limited.is_empty(), "{report:?}");
    }
    let nan_goal = Limb7Goal {
        position: DVec3::NAN,
        orientation: None,
    };
    let before = pose.clone();
    assert!(
        solve_chain(
            &skeleton,
            &chain,
            &nan_goal,
            SwivelPolicy::KeepCurrent,
            &mut pose,
            &mut model
        )
        .is_err()
    );
    assert_eq!(pose, before);
}

/// The `limb7` and `two_bone` kinds through `SolverConfig` JSON on the built-in humanoid: the
/// report's residuals are FK's, the swivel and feasible range are reported, and tasks that do
/// not fit (two effectors, a base, NaN) are refused without touching the pose.
#[test]
fn solver_config_kinds_solve_tasks_and_refuse_what_does_not_fit() {
    use ikarus_solve::{Effector, Goal, IkTask, SolveStatus, SolverConfig, measure, solve};
    let skeleton = builtin_humanoid();
    let hand = skeleton.joint("leftHand").unwrap();
    let rest = model_of(&skeleton, &skeleton.rest_pose());
    let goal = Goal {
        position: Some(rest.position(hand) + DVec3::new(-0.1, -0.15, 0.25)),
        orientation: Some(DQuat::from_rotation_x(FRAC_PI_2)),
    };
    let task = IkTask::from_goal(hand, goal);
    let middle: SolverConfig =
        serde_json::from_str(r#"{"kind": "limb7", "swivel": "middle_of_feasible"}"#).unwrap();
    let mut pose = skeleton.rest_pose();
    let report = solve(&skeleton, &task, &middle, &mut pose);
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    assert_eq!(
        measure(&skeleton, &task, &pose),
        (report.position_error, report.rotation_error)
    );
    assert!(report.position_error < TOLERANCE && report.rotation_error < TOLERANCE);
    let feasible = report.feasible_swivels.clone().unwrap();
    let swivel = report.swivel.unwrap();
    let [start, end] = feasible[0];
    let interval = SwivelInterval { start, end };
    assert!(angle_gap(interval.middle(), swivel) < 1e-12 || feasible.len() > 1);
    assert!(skeleton.limit_violation(&pose).is_none());

    let fixed: SolverConfig =
        serde_json::from_str(r#"{"kind": "limb7", "swivel": {"fixed": 0.25}}"#).unwrap();
    let position_only = IkTask::from_goal(
        hand,
        Goal {
            orientation: None,
            ..goal
        },
    );
    let mut pose = skeleton.rest_pose();
    let report = solve(&skeleton, &position_only, &fixed, &mut pose);
    assert_eq!(report.swivel, Some(0.25));
    if report.status == SolveStatus::Converged {
        assert!(report.position_error < TOLERANCE);
    } else {
        // The fixed swivel pushed a joint onto its limit. Another swivel is feasible here, so
        // the goal is not `unreachable`: the report says the swivel was in the way.
        assert!(!report.active_limits.is_empty());
        assert!(!report.feasible_swivels.as_ref().unwrap().is_empty());
        assert_eq!(report.status, SolveStatus::MaxIterations, "{report:?}");
        assert!(report.message.as_ref().unwrap().contains("fixed swivel"));
        let mut keep = skeleton.rest_pose();
        let default = SolverConfig::Limb7(ikarus_solve::limb7::Limb7Config::default());
        assert!(solve(&skeleton, &position_only, &default, &mut keep).converged());
    }

    let two_bone: SolverConfig = serde_json::from_str(r#"{"kind": "two_bone"}"#).unwrap();
    let mut pose = skeleton.rest_pose();
    let report = solve(&skeleton, &position_only, &two_bone, &mut pose);
    assert_eq!(report.status, SolveStatus::Converged, "{report:?}");
    assert!(report.position_error < TOLERANCE);

    // Tasks that do not fit a closed form, and bad goals: refused, pose untouched.
    let two_hands = IkTask::from_effectors(vec![
        task.effectors[0],
        Effector::new(skeleton.joint("rightHand").unwrap(), goal),
    ]);
    let with_base = task.clone().with_base(skeleton.joint("rightFoot").unwrap());
    let nan = IkTask::from_goal(hand, Goal::from_position(DVec3::new(f64::NAN, 0.0, 0.0)));
    for config in [&middle, &fixed, &two_bone] {
        for bad in [&two_hands, &with_base, &nan] {
            let mut pose = skeleton.rest_pose();
            let report = solve(&skeleton, bad, config, &mut pose);
            assert_eq!(report.status, SolveStatus::InvalidInput);
            assert!(report.message.is_some());
            assert_eq!(pose, skeleton.rest_pose());
        }
    }
}

/// With the default policy, `unreachable` means that no swivel reaches. On the
/// built-in humanoid's arms and legs, random targets 0.3–0.95 × reach (legs: downward): LM on
/// the same four joint DOF (base = the limb's parent, position only) never converges where
/// limb7 says `unreachable`, limb7 converges wherever LM does, and limb7 converges on every
/// target made by FK of a legal pose (the independent ground truth).
#[test]
fn default_policy_says_unreachable_only_where_no_swivel_reaches() {
    use ikarus_solve::lm::LmConfig;
    use ikarus_solve::{Goal, IkTask, SolveStatus, SolverConfig, solve};
    let skeleton = builtin_humanoid();
    let limb7 = SolverConfig::Limb7(ikarus_solve::limb7::Limb7Config::default());
    let lm = SolverConfig::Lm(LmConfig::default());
    let mut rng = Rng(13);
    for (names, base) in [
        (["leftUpperArm", "leftLowerArm", "leftHand"], "leftShoulder"),
        (
            ["rightUpperArm", "rightLowerArm", "rightHand"],
            "rightShoulder",
        ),
        (["leftUpperLeg", "leftLowerLeg", "leftFoot"], "hips"),
        (["rightUpperLeg", "rightLowerLeg", "rightFoot"], "hips"),
    ] {
        let [s, e, w] = names.map(|n| skeleton.joint(n).unwrap());
        let rest = model_of(&skeleton, &skeleton.rest_pose());
        let reach = (rest.position(e) - rest.position(s)).length()
            + (rest.position(w) - rest.position(e)).length();
        let (mut lm_converged, mut limb7_converged, mut unreachable) = (0, 0, 0);
        for i in 0..120 {
            let target = if i % 2 == 0 {
                // Any direction for arms, the lower half for legs (hips bend little upward).
                let mut direction = rng.unit_vector();
                if base == "hips" {
                    direction.y = -direction.y.abs();
                }
                rest.position(s) + direction * reach * rng.range(0.3, 0.95)
            } else {
                // FK of a legal limb pose: reachable by construction.
                let mut source = skeleton.rest_pose();
                for j in [s, e] {
                    let rest = skeleton.rest(j).rotation;
                    source[j].rotation = rest * legal_rotation(&mut rng, skeleton.limit(j));
                }
                model_of(&skeleton, &source).position(w)
            };
            let task = |base: Option<JointId>| IkTask {
                base,
                ..IkTask::from_goal(w, Goal::from_position(target))
            };
            let mut pose = skeleton.rest_pose();
            let analytic = solve(&skeleton, &task(None), &limb7, &mut pose);
            assert!(skeleton.limit_violation(&pose).is_none(), "{names:?} #{i}");
            let mut pose = skeleton.rest_pose();
            let numeric = solve(&skeleton, &task(skeleton.joint(base)), &lm, &mut pose);
            assert!(skeleton.limit_violation(&pose).is_none(), "{names:?} #{i}");
            lm_converged += usize::from(numeric.converged());
            limb7_converged += usize::from(analytic.converged());
            unreachable += usize::from(analytic.status == SolveStatus::Unreachable);
            if numeric.converged() || i % 2 == 1 {
                assert!(
                    analytic.converged(),
                    "{names:?} #{i}: target {target} converged by LM ({numeric:?}) or made \
                     by FK, limb7 says {analytic:?}"
                );
            }
            if analytic.status == SolveStatus::Unreachable {
                assert!(analytic.position_error > 1e-4, "{analytic:?}");
            }
        }
        // Not vacuous: most targets converge, and some are truly out of reach.
        assert!(
            lm_converged >= 80,
            "{names:?}: LM converged on {lm_converged}"
        );
        assert!(limb7_converged >= lm_converged, "{names:?}");
        assert!(
            unreachable > 0,
            "{names:?}: every random target was reachable"
        );
    }
}
