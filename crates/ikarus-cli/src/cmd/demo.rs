//! `ikarus demo`: the main job on the built-in humanoid.
//!
//! Animates the humanoid, runs every solver that exists on a fixed set of tasks, prints a table
//! (solver, task, status, residual, iterations, time), writes the motion as BVH and checks
//! that it reads back.

use std::f64::consts::{FRAC_PI_2, FRAC_PI_6};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Result, ensure};
use glam::{DQuat, DVec3};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{
    HingeLimit, JointLimit, LocalPose, ModelPose, Motion, Skeleton, SkeletonBuilder, Transform, fk,
};
use ikarus_formats::bvh::{Bvh, BvhLayout, BvhReadOptions};
use ikarus_solve::aim::AimConfig;
use ikarus_solve::jacobian::{JacobianConfig, JacobianMethod};
use ikarus_solve::leg6::Leg6Config;
use ikarus_solve::limb7::{Limb7Config, SwivelPolicy};
use ikarus_solve::lm::LmConfig;
use ikarus_solve::two_bone::TwoBoneConfig;
use ikarus_solve::{
    CcdConfig, CcdDamping, CcdVariant, Effector, Goal, IkTask, SolveStatus, SolverConfig,
};

/// Arguments of `ikarus demo`.
#[derive(clap::Args)]
pub struct Args {
    /// Where to write the resulting motion.
    #[arg(long, default_value = "ikarus-demo.bvh")]
    out: PathBuf,
    /// Frames of the generated motion (30 fps).
    #[arg(long, default_value_t = 90)]
    frames: usize,
}

/// Every solver the demo runs, in table order, with its table label; closed-form solvers
/// (`true`) run only the tasks with one effector and no base joint.
fn solvers() -> Vec<(&'static str, SolverConfig, bool)> {
    let ccd = |variant, damping| SolverConfig::Ccd(CcdConfig::new(variant, damping, 200));
    let jacobian = |method, sweeps| SolverConfig::Jacobian(JacobianConfig::new(method, sweeps));
    vec![
        ("none", SolverConfig::None, false),
        ("ccd", ccd(CcdVariant::Classic, CcdDamping::None), false),
        (
            "ccd/length",
            ccd(CcdVariant::Classic, CcdDamping::Length),
            false,
        ),
        ("ccd/mmd", ccd(CcdVariant::Mmd, CcdDamping::None), false),
        ("lm", SolverConfig::Lm(LmConfig::default()), false),
        (
            "fabrik",
            SolverConfig::Fabrik(ikarus_solve::fabrik::FabrikConfig::new(200)),
            false,
        ),
        // The transpose converges linearly: a larger sweep budget.
        (
            "jac/transp",
            jacobian(JacobianMethod::Transpose, 2000),
            false,
        ),
        ("jac/pinv", jacobian(JacobianMethod::Pinv, 200), false),
        ("jac/dls", jacobian(JacobianMethod::Dls, 200), false),
        ("jac/sdls", jacobian(JacobianMethod::Sdls, 200), false),
        (
            "two_bone",
            SolverConfig::TwoBone(TwoBoneConfig::default()),
            true,
        ),
        ("limb7", SolverConfig::Limb7(Limb7Config::default()), true),
        (
            "limb7/mid",
            SolverConfig::Limb7(Limb7Config {
                swivel: SwivelPolicy::MiddleOfFeasible,
                ..Limb7Config::default()
            }),
            true,
        ),
    ]
}

/// The demo tasks: a name and effectors built from the rest pose's model positions.
fn tasks(skeleton: &Skeleton) -> Result<Vec<(&'static str, IkTask)>> {
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut model);
    let at = |name: &str| -> Result<(ikarus_core::JointId, DVec3)> {
        let j = skeleton.try_joint(name)?;
        Ok((j, model.position(j)))
    };
    let reach = |name: &str, offset: DVec3| -> Result<Effector> {
        let (joint, p) = at(name)?;
        Ok(Effector::new(joint, Goal::from_position(p + offset)))
    };
    let palm_down = Effector {
        goal: Goal {
            orientation: Some(DQuat::from_rotation_x(FRAC_PI_2)),
            ..reach("leftHand", DVec3::new(-0.1, -0.15, 0.25))?.goal
        },
        ..reach("leftHand", DVec3::ZERO)?
    };
    Ok(vec![
        (
            "leftHand holds its rest position",
            IkTask::from_effectors(vec![reach("leftHand", DVec3::ZERO)?]),
        ),
        (
            "leftHand reaches 30 cm forward, 20 cm down",
            IkTask::from_effectors(vec![reach("leftHand", DVec3::new(-0.15, -0.2, 0.3))?]),
        ),
        (
            "leftHand 25 cm forward, palm down (+rotation)",
            IkTask::from_effectors(vec![palm_down]),
        ),
        (
            "rightFoot steps 25 cm forward, 10 cm up",
            IkTask::from_effectors(vec![reach("rightFoot", DVec3::new(0.0, 0.1, 0.25))?]),
        ),
        (
            "leftHand down 40 cm, rightFoot planted (base)",
            IkTask::from_effectors(vec![reach("leftHand", DVec3::new(0.0, -0.4, 0.2))?])
                .with_base(skeleton.try_joint("rightFoot")?),
        ),
        (
            "both hands meet in front of the chest",
            IkTask::from_effectors(vec![
                reach("leftHand", DVec3::new(-0.62, -0.1, 0.35))?,
                reach("rightHand", DVec3::new(0.62, -0.1, 0.35))?,
            ]),
        ),
    ])
}

/// A waving, breathing motion that stays inside the humanoid's joint limits.
fn generate_motion(skeleton: &Skeleton, frames: usize) -> Result<Motion> {
    let mut motion = Motion::for_skeleton(skeleton, 1.0 / 30.0)?;
    let joint = |name: &str| skeleton.try_joint(name);
    let (hips, spine, upper_arm, lower_arm, hand, head) = (
        joint("hips")?,
        joint("spine")?,
        joint("leftUpperArm")?,
        joint("leftLowerArm")?,
        joint("leftHand")?,
        joint("head")?,
    );
    let progress = indicatif::ProgressBar::new(frames as u64);
    for frame in 0..frames {
        let t = frame as f64 / 30.0;
        let wave = (t * std::f64::consts::TAU).sin();
        let mut pose: LocalPose = skeleton.rest_pose();
        pose[hips].translation.y += 0.02 * (t * 2.0 * std::f64::consts::TAU).sin();
        pose[spine].rotation = DQuat::from_rotation_x(0.05 * wave);
        pose[upper_arm].rotation = DQuat::from_rotation_z(1.1);
        pose[lower_arm].rotation = DQuat::from_axis_angle(-DVec3::Y, 0.9 + 0.5 * wave);
        pose[hand].rotation = DQuat::from_rotation_z(0.3 * wave);
        pose[head].rotation = DQuat::from_rotation_y(0.3 * wave);
        motion.push(pose)?;
        progress.inc(1);
    }
    progress.finish_and_clear();
    Ok(motion)
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    ensure!(args.frames > 0, "--frames must be at least 1");
    let skeleton = builtin_humanoid();
    println!(
        "ikarus demo: built-in humanoid, {} joints (VRM 1.0 names), metres, +Y up",
        skeleton.len()
    );

    let mut rows = run_solvers(&skeleton)?;
    rows.push(look_at(&skeleton)?);
    rows.extend(robot_leg()?);
    print_table(&rows);

    let motion = generate_motion(&skeleton, args.frames)?;
    for (k, frame) in motion.frames().iter().enumerate() {
        if let Some((j, by)) = skeleton.limit_violation(frame) {
            anyhow::bail!(
                "demo motion leaves the limit of {} at frame {k} by {by} rad",
                skeleton.name(j)
            );
        }
    }
    let bvh = Bvh::from_motion(
        &skeleton,
        &motion,
        BvhLayout::for_motion(&skeleton, Some(&motion)),
    )?;
    bvh.write(&args.out)?;
    let reread = Bvh::read(&args.out, &BvhReadOptions::default())?;
    let worst = round_trip_error(&skeleton, &motion, &reread)?;
    println!(
        "\nmotion: {} frames at 30 fps, every joint inside its limits; written to {}",
        motion.len(),
        args.out.display()
    );
    println!("BVH round trip: largest joint position difference {worst:.3e} m");
    ensure!(worst < 1e-9, "BVH round trip moved a joint by {worst} m");
    Ok(())
}

struct Row {
    solver: &'static str,
    task: &'static str,
    status: SolveStatus,
    residual: f64,
    iterations: u32,
    micros: f64,
}

fn run_solvers(skeleton: &Skeleton) -> Result<Vec<Row>> {
    let mut rows = Vec::new();
    for (label, config, closed_form) in solvers() {
        for (name, task) in tasks(skeleton)? {
            if closed_form && (task.effectors.len() != 1 || task.base.is_some()) {
                continue;
            }
            let mut pose = skeleton.rest_pose();
            let start = Instant::now();
            let report = ikarus_solve::solve(skeleton, &task, &config, &mut pose);
            let micros = start.elapsed().as_secs_f64() * 1e6;
            // The demo checks what it shows: residuals by FK, every joint inside its limit.
            let (measured, _) = ikarus_solve::measure(skeleton, &task, &pose);
            ensure!(
                measured == report.position_error,
                "{label} reports {} but FK measures {measured}",
                report.position_error
            );
            if let Some((j, by)) = skeleton.limit_violation(&pose) {
                anyhow::bail!(
                    "{label} left {} outside its limit by {by} rad on `{name}`",
                    skeleton.name(j)
                );
            }
            rows.push(Row {
                solver: label,
                task: name,
                status: report.status,
                residual: report.position_error,
                iterations: report.iterations,
                micros,
            });
        }
    }
    Ok(rows)
}

/// The robot leg's hinges: name, offset from the parent, axis, range (radians).
const ROBOT_LEG: [(&str, DVec3, DVec3, f64, f64); 6] = [
    (
        "RLEG_HIP_R",
        DVec3::new(0.0, -0.09, 0.0),
        DVec3::X,
        -0.349,
        FRAC_PI_2,
    ),
    ("RLEG_HIP_P", DVec3::ZERO, DVec3::Y, -FRAC_PI_6, FRAC_PI_6),
    (
        "RLEG_HIP_Y",
        DVec3::new(0.0, 0.0, -0.3535),
        DVec3::Z,
        -2.095,
        0.7,
    ),
    ("RLEG_KNEE", DVec3::ZERO, DVec3::Y, 0.0, 2.618),
    (
        "RLEG_ANKLE_P",
        DVec3::new(0.0, 0.0, -0.3),
        DVec3::Y,
        0.0,
        2.618,
    ),
    ("RLEG_ANKLE_R", DVec3::ZERO, DVec3::X, -1.27, 0.68),
];

fn robot_leg_skeleton() -> Result<Skeleton> {
    let mut b = SkeletonBuilder::new();
    b.joint(
        "BODY",
        None,
        Transform::from_translation(DVec3::new(0.0, 0.0, 0.75)),
    );
    let mut parent = "BODY";
    for (name, offset, axis, min, max) in ROBOT_LEG {
        let limit = JointLimit::Hinge(HingeLimit { axis, min, max });
        b.limited_joint(
            name,
            Some(parent),
            Transform::from_translation(offset),
            limit,
        );
        parent = name;
    }
    Ok(b.build()?)
}

/// A six-hinge robot leg with the dimensions and limits of `simple_humanoid.urdf`'s right leg
/// (hip roll, pitch, yaw; knee; ankle pitch, roll; +Z up, as the robot's own frame), built in
/// code so the demo needs no files: the humanoid robot leg's closed form (`leg6`) and
/// Levenberg–Marquardt on 6-D foot goals made by FK of legal joint angles.
fn robot_leg() -> Result<Vec<Row>> {
    let leg = robot_leg_skeleton()?;
    let foot = leg.try_joint("RLEG_ANKLE_R")?;
    // Joint angles (roll, pitch, yaw, knee, ankle pitch, ankle roll) whose foot poses are the goals.
    let goals: [(&'static str, [f64; 6]); 2] = [
        (
            "robot foot forward and up, turned (6-D)",
            [0.1, -0.45, 0.2, 0.3, 0.15, -0.1],
        ),
        (
            "robot foot out, sole level (6-D)",
            [0.15, -0.35, 0.0, 0.25, 0.1, -0.15],
        ),
    ];
    let mut rows = Vec::new();
    for (task_name, angles) in goals {
        let mut source = leg.rest_pose();
        for ((name, ..), angle) in ROBOT_LEG.iter().zip(angles) {
            let JointLimit::Hinge(h) = leg.limit(leg.try_joint(name)?) else {
                unreachable!()
            };
            source[leg.try_joint(name)?].rotation = DQuat::from_axis_angle(h.axis, angle);
        }
        let mut model = ModelPose::new(&leg);
        fk::forward_kinematics(&leg, &source, &mut model);
        let task = IkTask::from_goal(
            foot,
            Goal::from_position_orientation(model.position(foot), model.rotation(foot)),
        );
        for (label, config) in [
            ("leg6", SolverConfig::Leg6(Leg6Config::default())),
            ("lm", SolverConfig::Lm(LmConfig::default())),
        ] {
            let mut pose = leg.rest_pose();
            let start = Instant::now();
            let report = ikarus_solve::solve(&leg, &task, &config, &mut pose);
            let micros = start.elapsed().as_secs_f64() * 1e6;
            let (measured, _) = ikarus_solve::measure(&leg, &task, &pose);
            ensure!(
                measured == report.position_error,
                "{label} reports {} but FK measures {measured}",
                report.position_error
            );
            ensure!(
                leg.limit_violation(&pose).is_none(),
                "{label} left the robot leg's limits"
            );
            rows.push(Row {
                solver: label,
                task: task_name,
                status: report.status,
                residual: report.position_error,
                iterations: report.iterations,
                micros,
            });
        }
    }
    Ok(rows)
}

/// The head looks at a point (aim IK). Its residual is the line-of-sight miss, not a joint
/// position, so it gets its own check: the report's miss and angle, and the head's limit.
fn look_at(skeleton: &Skeleton) -> Result<Row> {
    let head = skeleton.try_joint("head")?;
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &skeleton.rest_pose(), &mut model);
    let target = model.position(head) + DVec3::new(0.4, 0.15, 1.0);
    let task = IkTask::from_goal(head, Goal::from_position(target));
    let mut pose = skeleton.rest_pose();
    let start = Instant::now();
    let report = ikarus_solve::solve(
        skeleton,
        &task,
        &SolverConfig::Aim(AimConfig::default()),
        &mut pose,
    );
    let micros = start.elapsed().as_secs_f64() * 1e6;
    ensure!(
        report.status == SolveStatus::Converged && report.rotation_error < 1e-9,
        "aim: {report:?}"
    );
    if let Some((j, by)) = skeleton.limit_violation(&pose) {
        anyhow::bail!(
            "aim left {} outside its limit by {by} rad",
            skeleton.name(j)
        );
    }
    Ok(Row {
        solver: "aim",
        task: "head looks 1 m ahead, 40 cm left, 15 cm up",
        status: report.status,
        residual: report.position_error,
        iterations: report.iterations,
        micros,
    })
}

fn print_table(rows: &[Row]) {
    println!(
        "\n{:<11} {:<46} {:<10} {:<15} {:>12} {:>10} {:>10}",
        "solver", "task", "converged", "status", "residual [m]", "iterations", "time [us]"
    );
    for r in rows {
        let status = serde_json::to_value(r.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        println!(
            "{:<11} {:<46} {:<10} {:<15} {:>12.3e} {:>10} {:>10.1}",
            r.solver,
            r.task,
            if r.status == SolveStatus::Converged {
                "yes"
            } else {
                "no"
            },
            status,
            r.residual,
            r.iterations,
            r.micros
        );
    }
}

fn round_trip_error(skeleton: &Skeleton, motion: &Motion, reread: &Bvh) -> Result<f64> {
    ensure!(
        reread.skeleton.names() == skeleton.names() && reread.frame_count == motion.len(),
        "the written BVH does not read back with the same joints and frames"
    );
    let mut a = ModelPose::new(skeleton);
    let mut b = ModelPose::new(skeleton);
    let mut pose = skeleton.rest_pose();
    let mut worst: f64 = 0.0;
    for (k, frame) in motion.frames().iter().enumerate() {
        fk::forward_kinematics(skeleton, frame, &mut a);
        reread.frame_pose(k, &mut pose);
        fk::forward_kinematics(&reread.skeleton, &pose, &mut b);
        for (p, q) in a.positions().zip(b.positions()) {
            worst = worst.max((p - q).length());
        }
    }
    Ok(worst)
}
