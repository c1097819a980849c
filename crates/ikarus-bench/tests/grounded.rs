//! The grounded game frame of the `body` bench (`ikarus_bench::grounded`) checked for what it
//! costs in quality: on the built-in humanoid (every joint limited), frame by frame as a game
//! runs it, no sole under the bumps.

use glam::DVec3;
use ikarus_anim::ground::{FrameGroundConfig, FrameGrounder, Ground};
use ikarus_anim::retarget::Character;
use ikarus_bench::grounded;
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{ModelPose, fk};
use ikarus_solve::IkTask;
use ikarus_solve::body::{BodyConfig, BodyRig, BodyScratch};
use ikarus_testdata::motions;

/// The crouch frame by frame (see the test below), with `settle` rounds after each solve
/// (`FrameGrounder::settle`, at most 8) or without: the deepest a sole point goes under
/// where it belongs, the unconverged frames and the extra solves the rounds cost.
fn crouch_on_bumps(settle: bool) -> (f64, usize, usize) {
    const FRAMES: usize = 32;
    let skeleton = builtin_humanoid();
    let map = HumanoidMap::recognise(&skeleton);
    let character = Character {
        skeleton: &skeleton,
        map: &map,
    };
    let mut grounder = FrameGrounder::new(character, &FrameGroundConfig::default()).unwrap();
    let ground = grounded::bumps(40, -2.0);
    let ends = motions::crouch_body_ends(&skeleton, FRAMES);
    let mut task = IkTask::from_poses(ends[0]);
    let config = BodyConfig::default();
    let rig = BodyRig::new(&skeleton, &config).unwrap();
    let mut scratch = BodyScratch::new(&skeleton, &rig);
    let joints = (grounder.hips(), grounder.ankles());
    let soles = [
        HumanoidBone::LeftFoot,
        HumanoidBone::LeftToes,
        HumanoidBone::RightFoot,
        HumanoidBone::RightToes,
    ]
    .map(|b| map.joint(b).unwrap());
    let mut model = ModelPose::new(&skeleton);
    let (mut deepest, mut unconverged, mut extra) = (0.0_f64, 0, 0);
    for k in 0..3 * FRAMES {
        let frame = k % FRAMES;
        let mut pose = motions::crouch(&skeleton, frame, FRAMES);
        fk::forward_kinematics(&skeleton, &pose, &mut model);
        let animated = model.clone();
        let mut frame_goals = grounder.goals(&model, &ground, 1.0 / 60.0);
        // Solved, then (with `settle`) solved again while a round raises a foot.
        let mut rounds = 0;
        let report = loop {
            for (effector, &end) in task.effectors.iter_mut().zip(&ends[frame]) {
                effector.goal = grounded::goal(&frame_goals, joints, end, DVec3::ZERO);
            }
            let report = rig.solve_in(
                &skeleton,
                &task,
                &config,
                &mut pose,
                &mut model,
                &mut scratch,
            );
            if !settle
                || rounds == 8
                || !grounder.settle((&animated, &model), &ground, &mut frame_goals)
            {
                break report;
            }
            rounds += 1;
        };
        extra += rounds;
        unconverged += usize::from(!report.converged());
        assert!(
            skeleton
                .limit_violation(&pose)
                .is_none_or(|(_, v)| v < 1e-6)
        );
        // How far a sole point is under where it belongs: the ground under it plus its
        // animated height above the floor (0).
        for j in soles {
            let p = model.position(j);
            let (height, _) = ground.sample(p.x, p.z).unwrap();
            deepest = deepest.max(height + animated.position(j).y - p.y);
        }
    }
    (deepest, unconverged, extra)
}

/// A deep crouch on ±4 cm bumps (the `body` bench's frames, three times over), the head and
/// hands where the animation has them, the hips and feet from the grounder, each frame solved
/// by the full-body solver from the grounder's frames. The grounder held the ankle's limit
/// against the shin as animated, while the lowered pelvis bends the knees deeper: half the
/// frames' foot rotations were then past the limit, the feet sat tilted into the ground (their
/// ball 7.9 mm under it at worst) and the solve searched the knee's swivel for a fit. With the
/// shin foreseen from the last frame's pelvis offset and lifts: 1.5 mm at worst, 22 of 96
/// frames unconverged (was 48), and the frame faster (`body` bench 9.4 → 9.0 µs). With the
/// grounder's settle rounds after each solve (`FrameGrounder::settle`, the clip grounding's
/// rounds): under 0.1 mm, for a few extra solves.
#[test]
fn a_limited_humanoid_grounded_frame_by_frame_keeps_its_soles_out_of_the_bumps() {
    let (deepest, unconverged, _) = crouch_on_bumps(false);
    println!(
        "frame by frame on the bumps: soles {:.2} mm under the ground at worst, {unconverged} of {} unconverged",
        deepest * 1e3,
        3 * 32
    );
    assert!(deepest < 2e-3, "{deepest} m into the ground");
    assert!(unconverged <= 30, "{unconverged} unconverged");
    let (deepest, unconverged, extra) = crouch_on_bumps(true);
    println!(
        "with settle rounds: soles {:.2} mm under the ground at worst, {unconverged} unconverged, {extra} extra solves",
        deepest * 1e3
    );
    assert!(
        deepest < 1e-3,
        "{deepest} m into the ground with settle rounds"
    );
}
