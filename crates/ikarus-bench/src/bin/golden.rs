//! `golden [--soak-tasks N]`: prints one line per fixture, `<section> <name> <hash>`, where
//! the hash (64-bit FNV-1a) covers every bit of the results: the soak's cases (every solver's
//! report and pose, in task order, and the slice's failure counts), the humanoid reach
//! protocol, the TRAC-IK robots through `solve_threaded`, every retargeting clip × target
//! (every frame's transforms, the contacts, the feet and the reports) and the naturalness
//! protocol (every solver, the example-based one included, on every held-out case).
//!
//! Floats are hashed through `{:?}`, Rust's shortest round-tripping form, so two runs print
//! the same line exactly when every result has the same bits. A restructure that must not
//! change behaviour runs it before and after and compares the two outputs with `diff`:
//! `cargo run -p ikarus-bench --bin golden > before.txt`.

use std::fmt::Debug;

use clap::Parser;
use ikarus_anim::retarget::{self, RetargetConfig};
use ikarus_bench::soak::{self, SoakOptions};
use ikarus_bench::trac_ik::Robot;
use ikarus_solve::threaded::{BatchTarget, solve_threaded};
use ikarus_solve::{SolverConfig, SolverWorkspace, Tolerance};

/// Print bit-exact fingerprints of ikarus's results on the shared fixtures.
#[derive(Parser)]
struct Args {
    /// Tasks of the soak slice (seed 1), the CI slice by default.
    #[arg(long, default_value_t = 20_000)]
    soak_tasks: u64,
    /// Targets per robot chain.
    #[arg(long, default_value_t = 200)]
    robot_targets: usize,
}

/// 64-bit FNV-1a over the `Debug` text of what is fed to it.
struct Fingerprint(u64);

impl Fingerprint {
    fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }

    fn add(&mut self, value: &impl Debug) {
        for byte in format!("{value:?}").bytes() {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

fn main() {
    let args = Args::parse();
    soak::quiet_solver_panics();
    soak_cases(args.soak_tasks);
    humanoid();
    robots(args.robot_targets);
    retargeting();
    natural();
}

fn natural() {
    let protocol = ikarus_bench::natural::Protocol::load();
    for (g, group) in protocol.groups.iter().enumerate() {
        for (label, config) in protocol.solvers(g) {
            let mut print = Fingerprint::new();
            for case in protocol.cases.iter().filter(|c| c.group == g) {
                let mut pose = case.start.clone();
                print.add(&ikarus_solve::solve(
                    &group.skeleton,
                    &case.task,
                    &config,
                    &mut pose,
                ));
                print.add(&pose);
            }
            println!(
                "natural {}/{} {:016x}",
                group.name,
                label.replace(' ', "_"),
                print.0
            );
        }
    }
}

fn soak_cases(tasks: u64) {
    let configs = soak::solvers();
    let mut prints: Vec<Fingerprint> = configs.iter().map(|_| Fingerprint::new()).collect();
    let mut workspace = SolverWorkspace::new();
    for index in 0..tasks {
        let case = soak::case(1, index);
        for ((_, config), print) in configs.iter().zip(&mut prints) {
            let outcome = soak::solve_case(&case, config, &mut workspace);
            print.add(&outcome.report);
            print.add(&outcome.pose);
        }
    }
    for ((label, _), print) in configs.iter().zip(&prints) {
        println!("soak {label} {:016x}", print.0);
    }
    let report = soak::run(
        &SoakOptions {
            seed: 1,
            start: 0,
            tasks,
            threads: 2,
        },
        &|_| {},
    );
    for (label, counts) in &report.solvers {
        println!(
            "soak-counts {label} statuses {:?} failures {:?}",
            counts.statuses, counts.failures
        );
    }
}

fn humanoid() {
    use ikarus_bench::humanoid::{SEED, TARGETS, skeleton, solvers, targets, task};
    let skeleton = skeleton();
    let goals = targets(&skeleton, TARGETS, SEED);
    let mut workspace = SolverWorkspace::new();
    for (label, config) in solvers() {
        let mut print = Fingerprint::new();
        for &goal in &goals {
            let mut pose = skeleton.rest_pose();
            let report = ikarus_solve::solve_with(
                &skeleton,
                &task(&skeleton, goal),
                &config,
                &mut workspace,
                &mut pose,
            );
            print.add(&report);
            print.add(&pose);
        }
        println!("humanoid {label} {:016x}", print.0);
    }
}

fn robots(count: usize) {
    let tolerance = Tolerance {
        position: 1e-5,
        rotation: 1e-5,
    };
    let mut ccd = ikarus_solve::CcdConfig::default();
    ccd.iteration.max_iterations = 500;
    let configs = [
        ("auto", ikarus_bench::trac_ik_auto_config()),
        ("lm", ikarus_bench::trac_ik_lm_config()),
        (
            "jacobian_dls",
            SolverConfig::Jacobian(ikarus_solve::jacobian::JacobianConfig::new(
                ikarus_solve::jacobian::JacobianMethod::Dls,
                500,
            )),
        ),
        ("ccd", SolverConfig::Ccd(ccd)),
        (
            "fabrik",
            SolverConfig::Fabrik(ikarus_solve::fabrik::FabrikConfig::default()),
        ),
    ];
    for (file, base, tip) in ikarus_bench::ROBOT_CHAINS {
        let Some(robot) = Robot::load(file, base, tip) else {
            continue;
        };
        let targets: Vec<BatchTarget> = robot
            .samples(count, 42)
            .into_iter()
            .map(|(_, t)| t)
            .collect();
        for (label, config) in &configs {
            let mut print = Fingerprint::new();
            for mut result in solve_threaded(
                robot.skeleton(),
                &robot.chain,
                &targets,
                config,
                tolerance,
                1,
            ) {
                result.time_ns = 0;
                print.add(&result);
            }
            println!("robot {file}:{tip}/{label} {:016x}", print.0);
        }
    }
}

fn retargeting() {
    let clips = ikarus_bench::retarget::clips();
    let targets = ikarus_bench::retarget::targets();
    for clip in &clips {
        let Some(motion) = &clip.motion else { continue };
        let source = retarget::Character {
            skeleton: &clip.skeleton,
            map: &clip.map,
        };
        let mut print = Fingerprint::new();
        print.add(&motion.frames());
        println!("clip {} {:016x}", clip.name.replace(' ', "_"), print.0);
        for target in &targets {
            let to = retarget::Character {
                skeleton: &target.skeleton,
                map: &target.map,
            };
            for (method, config) in [
                ("retarget", RetargetConfig::default()),
                ("plain_copy", RetargetConfig::plain_copy()),
            ] {
                let mut print = Fingerprint::new();
                match retarget::retarget(source, motion, to, &config) {
                    Ok(out) => {
                        print.add(&out.motion.frames());
                        print.add(&out.contacts);
                        print.add(&out.root);
                        print.add(&out.feet);
                        print.add(&out.leg_weights);
                        print.add(&(out.unreached, out.max_hip_drop));
                    }
                    Err(e) => print.add(&e),
                }
                println!(
                    "retarget {}/{}/{method} {:016x}",
                    clip.name.replace(' ', "_"),
                    target.name,
                    print.0
                );
            }
        }
    }
}
