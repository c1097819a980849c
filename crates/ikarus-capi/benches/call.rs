//! The cost of the C boundary: one frame of a prepared full-body solve (the built-in
//! humanoid, six 6-D effectors on a crouching motion of 32 frames, each frame from the last
//! one's result) through the C functions — six `ikarus_prepared_set_goal` and one
//! `ikarus_prepared_solve` — against the same frame through `PreparedTask` in Rust. The C
//! functions are called here through their C ABI (`extern "C"`), as a C program calls them:
//! the machine code a C caller runs is the same, so the difference is what the boundary adds
//! (argument checks, the panic guard, the report's conversion).

use std::ffi::CString;
use std::hint::black_box;
use std::ptr;

use criterion::{Criterion, criterion_group, criterion_main};
use ikarus_capi::{
    IKARUS_OK, IkarusReport, ikarus_pose_free, ikarus_pose_rest, ikarus_pose_set_local,
    ikarus_prepared_free, ikarus_prepared_new, ikarus_prepared_set_goal, ikarus_prepared_solve,
    ikarus_skeleton_free, ikarus_skeleton_open,
};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_solve::body::BodyConfig;
use ikarus_solve::{Goal, IkTask, PreparedTask, SolverConfig};
use ikarus_testdata::motions;

const FRAMES: usize = 32;

#[allow(clippy::too_many_lines)] // two set-ups side by side
fn bench(c: &mut Criterion) {
    let skeleton = builtin_humanoid();
    let ends = motions::crouch_body_ends(&skeleton, FRAMES);
    let start = motions::crouch(&skeleton, FRAMES - 1, FRAMES);

    // Rust: the prepared task, its goals set each frame.
    let task = IkTask::from_poses(ends[0]);
    let config = SolverConfig::Body(BodyConfig::default());
    let mut prepared = PreparedTask::new(&skeleton, &task, &config).expect("a body task");
    let mut pose = start.clone();
    let mut k = 0;
    c.bench_function("c_boundary/body_prepared_rust", |b| {
        b.iter(|| {
            for (goal, &(_, p, q)) in prepared.goals_mut().zip(&ends[k % FRAMES]) {
                *goal = Goal::from_position_orientation(p, q);
            }
            k += 1;
            black_box(prepared.solve(&mut pose))
        });
    });

    // C: the same task from JSON, the same start pose, the goals set by index.
    let effectors: Vec<String> = ends[0]
        .iter()
        .map(|&(j, p, q)| {
            format!(
                r#"{{"joint": "{}", "position": {:?}, "orientation": {:?}}}"#,
                skeleton.name(j),
                p.to_array(),
                q.to_array()
            )
        })
        .collect();
    let json = CString::new(format!(
        r#"{{"solver": {{"kind": "body"}}, "effectors": [{}]}}"#,
        effectors.join(", ")
    ))
    .expect("no NUL");
    let name = CString::new("builtin:humanoid").expect("no NUL");
    // SAFETY: NUL-terminated path, NULL error slot.
    let skel = unsafe { ikarus_skeleton_open(name.as_ptr(), ptr::null_mut()) };
    assert!(!skel.is_null());
    // SAFETY: a live skeleton and a NUL-terminated task.
    let handle = unsafe { ikarus_prepared_new(skel, json.as_ptr(), ptr::null_mut()) };
    assert!(!handle.is_null());
    // SAFETY: a live skeleton.
    let c_pose = unsafe { ikarus_pose_rest(skel) };
    let local: Vec<f64> = start
        .transforms()
        .iter()
        .flat_map(|t| {
            let (p, q) = (t.translation, t.rotation);
            [p.x, p.y, p.z, q.x, q.y, q.z, q.w]
        })
        .collect();
    // SAFETY: a live pose of this skeleton, `local.len()` readable doubles.
    let status =
        unsafe { ikarus_pose_set_local(c_pose, local.as_ptr(), local.len(), ptr::null_mut()) };
    assert_eq!(status, IKARUS_OK);
    let mut report = IkarusReport::default();
    let mut k = 0;
    c.bench_function("c_boundary/body_prepared_c", |b| {
        b.iter(|| {
            for (i, &(_, p, q)) in ends[k % FRAMES].iter().enumerate() {
                let (p, q) = (p.to_array(), q.to_array());
                // SAFETY: a live prepared task, 3 and 4 readable doubles.
                let status = unsafe {
                    ikarus_prepared_set_goal(handle, i, p.as_ptr(), q.as_ptr(), ptr::null_mut())
                };
                debug_assert_eq!(status, IKARUS_OK);
            }
            k += 1;
            // SAFETY: live handles, a writable report.
            let status =
                unsafe { ikarus_prepared_solve(handle, c_pose, &raw mut report, ptr::null_mut()) };
            black_box((status, report))
        });
    });
    // SAFETY: each handle freed once, the task before its skeleton's last use.
    unsafe {
        ikarus_prepared_free(handle);
        ikarus_pose_free(c_pose);
        ikarus_skeleton_free(skel);
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
