//! Shared fixtures for the benchmarks: the real files from `../shared/data` and the TRAC-IK
//! protocol arm ([`iiwa`]), the humanoid reach protocol ([`humanoid`]), the closed forms' rows
//! on captured poses ([`closed_form`]); the soak runner ([`soak`]).

pub mod closed_form;
pub mod grounded;
pub mod humanoid;
pub mod iiwa;
pub mod mocap_peer;
pub mod natural;
pub mod retarget;
pub mod soak;
pub mod trac_ik;

use std::path::PathBuf;

use ikarus_core::{JointLimit, RawJoint, Skeleton, SkeletonBuilder};
use ikarus_formats::bvh::Bvh;

/// Path of a shared BVH file.
///
/// # Panics
/// When the shared data is missing: benchmarks measure real files only.
pub fn bvh_path(name: &str) -> PathBuf {
    ikarus_testdata::require("bvh", "benchmark")
        .expect("benchmarks need ../shared/data (or IKARUS_SHARED_DATA)")
        .join(name)
}

/// `cmu_01_01_jump_cgspeed.bvh` opened in metres (CMU units are 1 / 0.45 inch): the captured
/// poses the closed-form benches solve on.
///
/// # Panics
/// When the shared data is missing or the file does not open.
pub fn cmu_jump_in_metres() -> ikarus_formats::Document {
    const CMU_TO_METRES: f64 = 0.0254 / 0.45;
    let path = bvh_path("cmu_01_01_jump_cgspeed.bvh");
    ikarus_formats::open(path.to_str().expect("UTF-8 path"), CMU_TO_METRES)
        .expect("CMU jump file opens")
}

/// The skeleton without its End Site leaves (the 31-joint CMU skeleton proper).
///
/// # Panics
/// Never for a parsed BVH (its joints already form a valid skeleton).
pub fn without_end_sites(bvh: &Bvh) -> Skeleton {
    let s = &bvh.skeleton;
    let mut builder = SkeletonBuilder::new();
    for (j, entry) in s.joints().zip(&bvh.layout.joints) {
        if !entry.end_site {
            builder.push(RawJoint {
                name: s.name(j).to_owned(),
                parent: s.parent(j).map(|p| s.name(p).to_owned()),
                rest: *s.rest(j),
                limit: JointLimit::Free,
            });
        }
    }
    builder
        .build()
        .expect("a subset of a valid skeleton is valid")
}

/// The CCD settings the TRAC-IK protocol bench and its correctness test use: classic CCD,
/// limits on, at most 1,000 sweeps shared by up to 8 restarts when a start stalls.
pub fn trac_ik_ccd_config() -> ikarus_solve::CcdConfig {
    ikarus_solve::CcdConfig {
        iteration: ikarus_solve::IterationSettings {
            max_iterations: 1000,
            restarts: 8,
            ..ikarus_solve::IterationSettings::default()
        },
        ..ikarus_solve::CcdConfig::default()
    }
}

/// The Levenberg–Marquardt settings of the TRAC-IK protocol bench and test: LM's defaults
/// with room for many restarts (at most 2,000 sweeps shared by up to 200 random restarts; a
/// solve that needs them all takes a few milliseconds).
pub fn trac_ik_lm_config() -> ikarus_solve::SolverConfig {
    let mut config = ikarus_solve::lm::LmConfig::default();
    config.iteration.max_iterations = 2000;
    config.iteration.restarts = 200;
    ikarus_solve::SolverConfig::Lm(config)
}

/// `auto` as the robot bench and the golden outputs run it: the closed form where the chain
/// has one (keeping the current swivel), else [`trac_ik_lm_config`]'s Levenberg–Marquardt.
///
/// # Panics
/// Never ([`trac_ik_lm_config`] is LM).
pub fn trac_ik_auto_config() -> ikarus_solve::SolverConfig {
    let ikarus_solve::SolverConfig::Lm(fallback) = trac_ik_lm_config() else {
        unreachable!("the protocol's LM config")
    };
    ikarus_solve::SolverConfig::Auto(ikarus_solve::robot::AutoConfig {
        swivel: ikarus_solve::limb7::SwivelPolicy::KeepCurrent,
        fallback,
    })
}

/// The robot bench's chains (`file`, base link, tip link in `../shared/data/urdf`): the
/// TRAC-IK robots (panda and the UR5s have no closed form: `auto` runs LM) and the legs and
/// arm that match the closed forms.
pub const ROBOT_CHAINS: [(&str, &str, &str); 8] = [
    ("kukaIiwa7.urdf", "iiwa_link_0", "iiwa_link_ee"),
    ("iiwa14_no_collision.urdf", "base", "iiwa_link_ee"),
    ("simple_humanoid.urdf", "BODY", "l_ankle"),
    ("talos_reduced.urdf", "base_link", "left_sole_link"),
    ("simple_humanoid.urdf", "torso", "l_wrist"),
    ("panda.urdf", "panda_link0", "panda_link8"),
    ("ur5_robot.urdf", "base_link", "ee_link"),
    ("universalUR5e.urdf", "base_link", "tool0"),
];

/// Criterion's time per `solve` of a whole batch as `<group>/<name>`: `solve(inputs,
/// settings, outputs)` into outputs allocated once, the throughput counted in inputs (set back
/// to one element after). The shape of every closed form's `solve_slice` row.
pub fn bench_slice<I, S, O: Clone + Default>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    inputs: &[I],
    settings: &S,
    solve: impl Fn(&[I], &S, &mut [O]),
) {
    let mut outputs = vec![O::default(); inputs.len()];
    group.throughput(criterion::Throughput::Elements(inputs.len() as u64));
    group.bench_function(name, |b| {
        b.iter(|| {
            solve(
                std::hint::black_box(inputs),
                std::hint::black_box(settings),
                &mut outputs,
            );
        });
    });
    group.throughput(criterion::Throughput::Elements(1));
}

/// Criterion's time per `solve` as `<group>/<name>`, each run on a pose first reset to `start`
/// (a copy, no allocation): the shape of the skeleton-level "FK + solve + apply" rows.
pub fn bench_from_pose<R>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    start: &ikarus_core::LocalPose,
    mut solve: impl FnMut(&mut ikarus_core::LocalPose) -> R,
) {
    let mut pose = start.clone();
    group.bench_function(name, |b| {
        b.iter(|| {
            pose.transforms_mut().copy_from_slice(start.transforms());
            solve(&mut pose)
        });
    });
}

/// Criterion's time per solve over `tasks` cycled, each from the rest pose, as
/// `<group>/<name>`: the shape of every solver bench's "N targets per solve" row.
pub fn bench_cycling(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    skeleton: &Skeleton,
    tasks: &[ikarus_solve::IkTask],
    mut solve: impl FnMut(
        &ikarus_solve::IkTask,
        &mut ikarus_core::LocalPose,
    ) -> ikarus_solve::SolveReport,
) {
    group.bench_function(name, |b| {
        let mut k = 0;
        b.iter(|| {
            let mut pose = skeleton.rest_pose();
            k = (k + 1) % tasks.len();
            std::hint::black_box(solve(&tasks[k], &mut pose))
        });
    });
}
