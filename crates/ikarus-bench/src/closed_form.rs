//! The closed forms' benches on the CMU jump's captured poses (`benches/two_bone.rs`,
//! `benches/aim.rs`): one problem per captured frame ([`FrameProblems`]), and the three rows
//! each times on them ([`bench_closed_form`]): a single pure `solve`, `solve_slice` over the
//! whole batch, and the skeleton-level `solve_chain` (FK + solve + apply).

use criterion::BenchmarkGroup;
use criterion::measurement::WallTime;
use glam::DVec3;
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_solve::{aim, two_bone};
use std::hint::black_box;

use crate::{bench_from_pose, bench_slice};

/// How many problems a closed form's batch has (the `solve_slice` row times them all).
pub const BATCH: usize = 1024;

/// A closed form's problems on captured frames of a clip: one per frame, each the chain and its
/// input built on that frame's pose.
pub struct FrameProblems<'a, C, I> {
    /// The clip's skeleton.
    pub skeleton: &'a Skeleton,
    /// Per problem, in the order drawn: the frame's index, its local pose, the chain and its
    /// input.
    pub problems: Vec<(usize, LocalPose, (C, I))>,
}

impl<'a, C: Clone, I: Clone> FrameProblems<'a, C, I> {
    /// One problem per captured frame of `document`'s motion, every 7th frame, cycling through
    /// the clip until there are [`BATCH`]. `make` gets the frame's local pose and its model pose
    /// (forward kinematics of that pose) and returns the chain and its input, or `None` to pass
    /// the frame over.
    ///
    /// # Panics
    /// When `document` has no motion. Never returns when `make` passes over every frame.
    pub fn new(
        document: &'a ikarus_formats::Document,
        mut make: impl FnMut(&LocalPose, &ModelPose) -> Option<(C, I)>,
    ) -> Self {
        let skeleton = &document.skeleton;
        let motion = document.motion.as_ref().expect("BVH has motion");
        let mut model = ModelPose::new(skeleton);
        let mut problems = Vec::with_capacity(BATCH);
        for frame in (0..motion.len()).cycle().step_by(7) {
            if problems.len() == BATCH {
                break;
            }
            let pose = motion.frame(frame).expect("frame").clone();
            fk::forward_kinematics(skeleton, &pose, &mut model);
            if let Some(problem) = make(&pose, &model) {
                problems.push((frame, pose, problem));
            }
        }
        Self { skeleton, problems }
    }

    /// The local pose, chain and input of the first problem on frame 1000 or later (the pose
    /// the FK bench times).
    ///
    /// # Panics
    /// When no problem is on frame 1000 or later.
    pub fn on_frame_1000(&self) -> (LocalPose, C, I) {
        let (_, pose, (chain, input)) = self
            .problems
            .iter()
            .find(|p| p.0 >= 1000)
            .expect("a frame past 1000")
            .clone();
        (pose, chain, input)
    }
}

/// The target and pole a closed form's input was built with: what its `solve_chain` takes.
pub trait TargetAndPole {
    /// The closed form's pole type.
    type Pole: Copy;
    /// The input's target (model space) and pole.
    fn target_and_pole(&self) -> (DVec3, Self::Pole);
}

impl TargetAndPole for two_bone::TwoBoneInput {
    type Pole = two_bone::Pole;
    fn target_and_pole(&self) -> (DVec3, two_bone::Pole) {
        (self.target, self.pole)
    }
}

impl TargetAndPole for aim::AimInput {
    type Pole = aim::Pole;
    fn target_and_pole(&self) -> (DVec3, aim::Pole) {
        (self.target, self.pole)
    }
}

/// Criterion's three rows of a closed form on `problems`, with its default settings, in `group`:
///
/// - `<group>/<single>`: `solve` of the problem on frame 1000
///   ([`FrameProblems::on_frame_1000`]);
/// - `<group>/solve_slice_<n>_cmu_frames`: `solve_slice` of all `n` inputs ([`bench_slice`]);
/// - `<group>/<with_fk>`: `solve_chain` of frame 1000's chain towards its input's target and
///   pole, from frame 1000's pose ([`bench_from_pose`]): full FK, solve, apply.
///
/// `functions` are the closed form's `(solve, solve_slice, solve_chain)`.
pub fn bench_closed_form<C: Clone, I: TargetAndPole + Copy, S: Default, O: Clone + Default, R>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    problems: &FrameProblems<'_, C, I>,
    [single, with_fk]: [&str; 2],
    (solve, solve_slice, solve_chain): (
        impl Fn(&I, &S) -> O,
        impl Fn(&[I], &S, &mut [O]),
        impl Fn(&Skeleton, &C, DVec3, I::Pole, &S, &mut LocalPose, &mut ModelPose) -> R,
    ),
) {
    let settings = S::default();
    let skeleton = problems.skeleton;
    let inputs: Vec<I> = problems.problems.iter().map(|p| p.2.1).collect();
    let (pose_1000, chain_1000, input_1000) = problems.on_frame_1000();
    group.bench_function(single, |b| {
        b.iter(|| solve(black_box(&input_1000), black_box(&settings)));
    });
    let batch = format!("solve_slice_{}_cmu_frames", inputs.len());
    bench_slice(group, &batch, &inputs, &settings, solve_slice);
    // Skeleton level: full FK, solve, apply, subtree update.
    let (target, pole) = input_1000.target_and_pole();
    let mut model = ModelPose::new(skeleton);
    bench_from_pose(group, with_fk, &pose_1000, |pose| {
        solve_chain(
            skeleton,
            &chain_1000,
            black_box(target),
            pole,
            &settings,
            pose,
            &mut model,
        )
    });
}
