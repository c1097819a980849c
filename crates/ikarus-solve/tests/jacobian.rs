//! The Jacobian family against independent ground truth: the assembled Jacobian against
//! central finite differences of forward kinematics (every limit kind, several effectors with
//! position and orientation goals, a base joint through the root, scaled and mirrored
//! parents), the SVD against its reconstruction, and every method against FK-measured targets.

mod common;

use std::f64::consts::PI;

use common::{Rng, random_pose};
use glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{
    EulerLimit, EulerOrder, HingeLimit, JointLimit, LocalPose, MmdLimit, Skeleton, SkeletonBuilder,
    SwingTwistLimit, Transform,
};
use ikarus_solve::dofs::{Dofs, rotation_vector};
use ikarus_solve::driver::{self, Iteration, IterativeStep, Workspace};
use ikarus_solve::{Effector, Goal, IkTask, IterationSettings, Tolerance};

/// One sweep that compares the assembled Jacobian with central differences of the effectors'
/// FK poses, moving each column by ±h through `Dofs::apply` and undoing it.
struct FiniteDifferences {
    /// Largest |J − FD| over position rows and orientation rows, and the largest |J| entry.
    position: f64,
    orientation: f64,
    largest: f64,
    columns: usize,
    /// Check orientation rows and base-side columns (exact only without non-uniform scale).
    orientation_rows: bool,
}

fn effector_states(ctx: &Iteration<'_>) -> Vec<(DVec3, DQuat)> {
    ctx.task()
        .effectors
        .iter()
        .map(|e| (ctx.model().position(e.joint), ctx.model().rotation(e.joint)))
        .collect()
}

impl IterativeStep for FiniteDifferences {
    fn sweep(&mut self, ctx: &mut Iteration<'_>) {
        let mut dofs = Dofs::new();
        dofs.rebuild(ctx.skeleton(), ctx.task(), ctx.path());
        let (m, n) = (dofs.rows(), dofs.columns());
        self.columns = n;
        let mut j = vec![0.0; m * n];
        dofs.jacobian(ctx, &mut j);
        let mut saved = vec![DQuat::IDENTITY; ctx.path().len()];
        Dofs::save(ctx, &mut saved);
        let h = 1e-6;
        for c in 0..n {
            let mut states = [Vec::new(), Vec::new()];
            for (s, sign) in [1.0, -1.0].into_iter().enumerate() {
                let mut dq = vec![0.0; n];
                dq[c] = sign * h;
                dofs.apply(ctx, &dq);
                ctx.update_model();
                states[s] = effector_states(ctx);
                Dofs::restore(ctx, &saved);
                ctx.update_model();
            }
            for block in dofs.blocks() {
                let e = &ctx.task().effectors[block.effector];
                let ((p1, r1), (p0, r0)) = (states[0][block.effector], states[1][block.effector]);
                let (fd, error) = match block.kind {
                    ikarus_solve::dofs::RowKind::Position => {
                        ((p1 - p0) / (2.0 * h), &mut self.position)
                    }
                    ikarus_solve::dofs::RowKind::Orientation => {
                        if !self.orientation_rows {
                            continue;
                        }
                        (
                            rotation_vector(r1 * r0.conjugate()) / (2.0 * h),
                            &mut self.orientation,
                        )
                    }
                };
                let fd = fd * e.weight;
                for r in 0..3 {
                    let analytic = j[(block.row + r) * n + c];
                    *error = error.max((analytic - fd[r]).abs());
                    self.largest = self.largest.max(analytic.abs());
                }
            }
        }
    }
}

fn check_fd(s: &Skeleton, task: &IkTask, pose: &LocalPose, orientation_rows: bool) -> (f64, f64) {
    let mut step = FiniteDifferences {
        position: 0.0,
        orientation: 0.0,
        largest: 0.0,
        columns: 0,
        orientation_rows,
    };
    let settings = IterationSettings {
        max_iterations: 1,
        restarts: 0,
        ..IterationSettings::default()
    };
    let mut pose = pose.clone();
    let mut task = task.clone();
    task.tolerance = Tolerance {
        position: 0.0,
        rotation: 0.0,
    };
    driver::run(
        s,
        &task,
        &settings,
        &mut Workspace::new(),
        &mut pose,
        &mut step,
    );
    assert!(step.columns > 0 && step.largest > 0.1, "nothing checked");
    (step.position, step.orientation)
}

/// Every limit kind with a 3-D (or hinge) interior along one chain, plus a locked joint, and a
/// side branch, under `parent`.
fn mixed_tree(parent: Transform, rng: &mut Rng) -> Skeleton {
    let limits = [
        JointLimit::Free,
        JointLimit::Hinge(HingeLimit {
            axis: DVec3::new(0.3, 1.0, -0.2).normalize(),
            min: -2.0,
            max: 2.0,
        }),
        JointLimit::SwingTwist(SwingTwistLimit {
            twist_axis: DVec3::Y,
            swing_axis: DVec3::X,
            swing_u: (-1.0, 1.0),
            swing_v: (-0.9, 1.1),
            twist: (-1.0, 1.0),
        }),
        JointLimit::Locked,
        JointLimit::Euler(EulerLimit {
            order: EulerOrder::Zxy,
            min: [-1.5, -1.5, -1.0],
            max: [1.5, 1.5, 1.0],
        }),
        JointLimit::Mmd(MmdLimit {
            min: DVec3::splat(-PI),
            max: DVec3::splat(PI),
        }),
        JointLimit::Hinge(HingeLimit {
            axis: DVec3::X,
            min: -PI,
            max: PI,
        }),
    ];
    let mut b = SkeletonBuilder::new();
    b.joint("parent", None, parent);
    let mut previous = "parent".to_owned();
    for (i, limit) in limits.into_iter().enumerate() {
        let name = format!("j{i}");
        let offset = if i == 0 {
            DVec3::ZERO
        } else {
            DVec3::new(rng.range(-0.5, 0.5), 1.0, rng.range(-0.5, 0.5)).normalize()
                * rng.range(0.1, 0.3)
        };
        let rest = Transform {
            translation: offset,
            rotation: rng.rotation(0.6),
            scale: DVec3::ONE,
        };
        b.limited_joint(&name, Some(&previous), rest, limit);
        previous = name;
    }
    b.joint(
        "tip",
        Some(&previous),
        Transform::from_translation(DVec3::Y * 0.2),
    );
    // A side branch off j2 with its own effector.
    b.joint(
        "k0",
        Some("j2"),
        Transform {
            translation: DVec3::new(0.2, 0.1, 0.0),
            rotation: rng.rotation(0.6),
            scale: DVec3::ONE,
        },
    );
    b.joint(
        "k1",
        Some("k0"),
        Transform::from_translation(DVec3::X * 0.25),
    );
    b.build().unwrap()
}

fn parents() -> [(&'static str, Transform, bool); 5] {
    let tilt = DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 2.1);
    let t = |translation, scale| Transform {
        translation,
        rotation: tilt,
        scale,
    };
    [
        ("identity", Transform::IDENTITY, true),
        ("rotated", t(DVec3::new(3.0, -1.0, 2.0), DVec3::ONE), true),
        ("uniform scale", t(DVec3::ZERO, DVec3::splat(2.5)), true),
        ("mirrored", t(DVec3::X, DVec3::new(-1.0, 1.0, 1.0)), true),
        (
            "non-uniform",
            t(DVec3::ZERO, DVec3::new(1.0, 2.0, 0.5)),
            false,
        ),
    ]
}

fn both_goals(joint: ikarus_core::JointId, weight: f64) -> Effector {
    Effector {
        joint,
        goal: Goal {
            position: Some(DVec3::new(0.1, 0.2, 0.3)),
            orientation: Some(DQuat::from_rotation_x(0.4)),
        },
        weight,
    }
}

#[test]
fn jacobian_matches_finite_differences_of_fk() {
    let mut rng = Rng(11);
    for (name, parent, exact) in parents() {
        let s = mixed_tree(parent, &mut rng);
        let movers: Vec<_> = (0..7).map(|i| s.joint(&format!("j{i}")).unwrap()).collect();
        let mut all = movers.clone();
        all.push(s.joint("k0").unwrap());
        let pose = random_pose(&s, &all, &mut rng, 0.5);
        let (tip, k1) = (s.joint("tip").unwrap(), s.joint("k1").unwrap());
        // Two effectors, both goals, different weights; then a base through the root side.
        let mut task = IkTask {
            effectors: vec![both_goals(tip, 1.0), both_goals(k1, 0.5)],
            ..IkTask::default()
        };
        if !exact {
            for e in &mut task.effectors {
                e.goal.orientation = None;
            }
        }
        let (p, r) = check_fd(&s, &task, &pose, exact);
        assert!(
            p < 1e-6 && r < 1e-6,
            "{name}: position {p:e}, orientation {r:e}"
        );
        if exact {
            task.base = Some(s.joint("k1").unwrap());
            task.effectors = vec![both_goals(tip, 2.0)];
            let (p, r) = check_fd(&s, &task, &pose, true);
            assert!(
                p < 1e-6 && r < 1e-6,
                "{name}, base k1: position {p:e}, orientation {r:e}"
            );
        }
    }
}

#[test]
fn humanoid_jacobian_through_the_root_matches_finite_differences() {
    let s = builtin_humanoid();
    let names = [
        "hips",
        "spine",
        "chest",
        "leftShoulder",
        "leftUpperArm",
        "leftLowerArm",
        "leftHand",
        "rightUpperLeg",
        "rightLowerLeg",
        "rightFoot",
        "head",
        "neck",
    ];
    let joints = common::joints(&s, &names);
    // Inside every limit (finite differences at a bound would be one-sided): hinges at the
    // middle of their range, other joints turned by at most 0.08 rad.
    let mut rng = Rng(5);
    let mut pose = s.rest_pose();
    for &j in &joints {
        let delta = match s.limit(j) {
            JointLimit::Hinge(h) => DQuat::from_axis_angle(h.axis, 0.5 * (h.min + h.max)),
            _ => rng.rotation(0.08),
        };
        assert_eq!(s.limit(j).project(delta), delta);
        pose[j].rotation = s.rest(j).rotation * delta;
    }
    let task = IkTask {
        effectors: vec![
            both_goals(s.joint("leftHand").unwrap(), 1.0),
            Effector {
                joint: s.joint("head").unwrap(),
                goal: Goal {
                    position: Some(DVec3::new(0.0, 1.5, 0.2)),
                    orientation: None,
                },
                weight: 0.3,
            },
        ],
        base: Some(s.joint("rightFoot").unwrap()),
        ..IkTask::default()
    };
    let (p, r) = check_fd(&s, &task, &pose, true);
    assert!(p < 1e-6 && r < 1e-6, "position {p:e}, orientation {r:e}");
}
