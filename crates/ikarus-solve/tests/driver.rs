//! The shared driver's deferred rotation writes against forward kinematics: an effector-side
//! joint written by `Iteration::set_rotation_deferred` leaves the model where it was until
//! `update_model`, which then equals a fresh forward kinematics pass; the limit projection is
//! the one `set_rotation` applies and is reported; a base-side joint is updated at once and
//! the base stays put.

mod common;

use common::model;
use glam::{DQuat, DVec3};
use ikarus_core::{JointId, JointLimit, Skeleton, SkeletonBuilder, Transform};
use ikarus_solve::driver::{Iteration, IterativeStep, Workspace};
use ikarus_solve::path::Side;
use ikarus_solve::{Goal, IkTask, IterationSettings, Tolerance};
use ikarus_testdata::limits::swing_twist_y;

/// `root` with two arms: `l1` → `l2` (the base side) and `r1` (a swing–twist cone of 0.3
/// rad swing, ±0.2 twist) → `r2` → `tip` (the effector side); every joint sits off its
/// parent along a different direction, rotated at rest.
fn skeleton() -> Skeleton {
    let cone = swing_twist_y((-0.3, 0.3), (-0.3, 0.3), (-0.2, 0.2));
    let at = |x: f64, y: f64, z: f64| {
        Transform::from_translation_rotation(
            DVec3::new(x, y, z),
            DQuat::from_rotation_z(0.1 * x + 0.2),
        )
    };
    let mut b = SkeletonBuilder::new();
    b.joint(
        "root",
        None,
        Transform::from_translation(DVec3::new(0.0, 1.0, 0.0)),
    );
    b.joint("l1", Some("root"), at(-0.2, 0.1, 0.0));
    b.joint("l2", Some("l1"), at(0.0, -0.4, 0.1));
    b.limited_joint("r1", Some("root"), at(0.2, 0.1, 0.0), cone);
    b.joint("r2", Some("r1"), at(0.0, 0.3, 0.05));
    b.joint("tip", Some("r2"), at(0.1, 0.25, 0.0));
    b.build().unwrap()
}

fn task(s: &Skeleton, base: Option<JointId>) -> IkTask {
    IkTask {
        base,
        ..IkTask::from_goal(
            s.joint("tip").unwrap(),
            Goal::from_position(DVec3::new(5.0, 5.0, 5.0)),
        )
        .with_tolerance(Tolerance::new(1e-9, 1e-9))
    }
}

/// Largest difference between two model poses' joint transforms.
fn difference(a: &ikarus_core::ModelPose, b: &ikarus_core::ModelPose, s: &Skeleton) -> f64 {
    s.joints()
        .map(|j| {
            let (x, y) = (a[j].to_cols_array(), b[j].to_cols_array());
            x.iter()
                .zip(&y)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
}

/// One sweep that turns every path joint far (1.2 rad about a tilted axis) with deferred
/// writes and checks the model around each write.
struct Deferred<'a> {
    skeleton: &'a Skeleton,
    checked_effector_side: usize,
    checked_base_side: usize,
}

impl IterativeStep for Deferred<'_> {
    fn sweep(&mut self, ctx: &mut Iteration<'_>) {
        let s = self.skeleton;
        let turn = DQuat::from_axis_angle(DVec3::new(1.0, 0.5, 0.2).normalize(), 1.2);
        let path = ctx.path().joints().to_vec();
        for pj in path {
            let before = ctx.model().clone();
            let requested = ctx.pose()[pj.joint].rotation * turn;
            let applied = ctx.set_rotation_deferred(pj, requested);
            // The projection `set_rotation` applies.
            let rest = s.rest(pj.joint).rotation;
            let projected = s.limit(pj.joint).project(rest.conjugate() * requested);
            let expected = (rest * projected).normalize();
            let chord = (applied - expected)
                .length()
                .min((applied + expected).length());
            assert!(chord < 1e-12, "{chord}");
            assert_eq!(ctx.pose()[pj.joint].rotation, applied);
            match pj.side {
                Side::Effector => {
                    // Nothing in the model moved, not even the effector.
                    assert_eq!(difference(&before, ctx.model(), s), 0.0);
                    self.checked_effector_side += 1;
                }
                Side::Base => {
                    // Updated at once (every joint fresh), the base where it was.
                    let fresh = model(s, ctx.pose());
                    assert!(difference(&fresh, ctx.model(), s) < 1e-12);
                    let base = ctx.task().base.unwrap();
                    let moved = (ctx.model().position(base) - before.position(base)).length();
                    assert!(moved < 1e-12, "base moved by {moved}");
                    self.checked_base_side += 1;
                }
            }
        }
        ctx.update_model();
        let fresh = model(s, ctx.pose());
        assert!(difference(&fresh, ctx.model(), s) < 1e-12);
    }
}

fn run<'a>(s: &'a Skeleton, task: &IkTask) -> (Deferred<'a>, ikarus_solve::SolveReport) {
    let mut step = Deferred {
        skeleton: s,
        checked_effector_side: 0,
        checked_base_side: 0,
    };
    let settings = common::sweeps(2);
    let mut pose = s.rest_pose();
    let report = Workspace::new().run(s, task, &settings, &mut pose, &mut step);
    (step, report)
}

#[test]
fn deferred_effector_side_writes_wait_for_update_model_and_project_onto_limits() {
    let s = skeleton();
    let (step, report) = run(&s, &task(&s, None));
    // Path: r2, r1 (the root stays), two sweeps.
    assert_eq!(step.checked_effector_side, 4);
    assert_eq!(step.checked_base_side, 0);
    // The cone bound r1 (1.2 rad asked, 0.3 allowed): reported.
    assert_eq!(report.active_limits, vec!["r1".to_owned()]);
    assert_eq!(report.iterations, 2);
}

#[test]
fn deferred_base_side_writes_update_at_once_and_keep_the_base() {
    let s = skeleton();
    let base = s.joint("l2").unwrap();
    let (step, report) = run(&s, &task(&s, Some(base)));
    // Path: r2, r1 on the effector side, l1, l2 on the base side; two sweeps.
    assert_eq!(step.checked_effector_side, 4);
    assert_eq!(step.checked_base_side, 4);
    assert_eq!(report.iterations, 2);
    assert!(report.position_error.is_finite());
}

/// A step whose requests diverge: every path joint asked for a NaN rotation, then for a zero
/// quaternion.
struct Diverging;

impl IterativeStep for Diverging {
    fn sweep(&mut self, ctx: &mut Iteration<'_>) {
        let path = ctx.path().joints().to_vec();
        for pj in path {
            let before = ctx.pose()[pj.joint].rotation;
            let nan = DQuat::from_xyzw(f64::NAN, 0.0, 0.0, 1.0);
            assert_eq!(ctx.set_rotation(pj, nan), before);
            let zero = DQuat::from_xyzw(0.0, 0.0, 0.0, 0.0);
            assert_eq!(ctx.set_rotation_deferred(pj, zero), before);
        }
    }
}

/// Soak seed 1, task 10050: a diverged Jacobian step asked an Euler-limited joint whose range
/// excludes its rest rotation for NaN, and the limit's projection of NaN was the (illegal)
/// rest rotation. A non-finite request now changes nothing: the pose stays legal and finite.
#[test]
fn non_finite_requests_leave_the_joint_as_it_was() {
    let euler = JointLimit::Euler(ikarus_core::EulerLimit {
        order: ikarus_core::EulerOrder::Xzy,
        min: [-0.93, -1.33, -1.14],
        max: [1.21, 0.23, -0.57],
    });
    let mut b = SkeletonBuilder::new();
    b.joint("root", None, Transform::IDENTITY)
        .limited_joint(
            "a",
            Some("root"),
            Transform::from_translation(DVec3::X),
            euler,
        )
        .joint("tip", Some("a"), Transform::from_translation(DVec3::X));
    let s = b.build().unwrap();
    let a = s.joint("a").unwrap();
    let task = IkTask::from_goal(
        s.joint("tip").unwrap(),
        Goal::from_position(DVec3::new(1.5, 0.8, 0.0)),
    );
    let mut pose = s.rest_pose();
    // Start legal: the joint turned into its range (third angle inside [-1.14, -0.57]).
    pose[a].rotation = s.limit(a).project(DQuat::IDENTITY);
    assert!(s.limit_violation(&pose).is_none());
    let report = Workspace::new().run(
        &s,
        &task,
        &IterationSettings::default(),
        &mut pose,
        &mut Diverging,
    );
    assert!(pose.is_finite());
    assert!(s.limit_violation(&pose).is_none(), "{report:?}");
    assert!(report.position_error.is_finite());
}
