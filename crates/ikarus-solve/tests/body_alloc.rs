//! A prepared full-body solve allocates nothing per frame: the allocations of a whole
//! binary counted (`allocation-counter`) around each frame's solve, after the task
//! is prepared and one frame has run.

use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::{ModelPose, fk};
use ikarus_solve::body::BodyConfig;
use ikarus_solve::{IkTask, PreparedTask, SolverConfig};
use ikarus_testdata::motions;

#[test]
fn a_prepared_body_solve_allocates_nothing_per_frame() {
    let skeleton = builtin_humanoid();
    let mut model = ModelPose::new(&skeleton);
    let tasks: Vec<IkTask> = motions::crouch_body_ends(&skeleton, 32)
        .into_iter()
        .map(IkTask::from_poses)
        .collect();
    let config = SolverConfig::Body(BodyConfig::default());
    let mut prepared = PreparedTask::new(&skeleton, &tasks[0], &config).expect("a body task");
    let mut pose = motions::crouch(&skeleton, 31, 32);
    fk::forward_kinematics(&skeleton, &pose, &mut model);
    let mut quiet = 0;
    for (k, task) in tasks.iter().enumerate().chain(tasks.iter().enumerate()) {
        for (goal, e) in prepared.goals_mut().zip(&task.effectors) {
            *goal = e.goal;
        }
        let mut report = None;
        let info = allocation_counter::measure(|| {
            report = Some(prepared.solve_in(&mut pose, &mut model));
        });
        let report = report.expect("solved");
        let allocations = info.count_total;
        assert!(report.converged(), "frame {k}: {report:?}");
        // The names of active limits are the report's own strings: one allocation each,
        // and one for their list.
        let names = report.active_limits.len();
        let allowed = if names == 0 { 0 } else { names as u64 + 1 };
        assert!(
            allocations <= allowed,
            "frame {k}: {allocations} allocations with {names} active limits"
        );
        quiet += usize::from(names == 0);
    }
    assert!(
        quiet >= 32,
        "only {quiet} of 64 frames without active limits"
    );
}
