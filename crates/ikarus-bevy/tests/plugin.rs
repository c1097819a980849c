//! The plugin in a headless app (`MinimalPlugins`) running frames on a shared VRM character
//! spawned as joint entities; every check reads the joints' `GlobalTransform`s after Bevy's
//! own transform propagation (forward kinematics independent of ikarus) against the goals.

mod common;

use bevy::prelude::*;
use common::{Model, app, dq, dv, godette, move_to, spawn, target, world_position};
use ikarus_anim::ground::Ground;
use ikarus_bevy::prelude::*;
use ikarus_bevy::{Heightfield, IkarusError, JointLimit, SolveStatus};
use ikarus_core::HingeLimit;
use ikarus_core::glam::DVec3;

/// A root turned and moved off the origin, so every check crosses world ↔ model space.
fn turned_root() -> Transform {
    Transform::from_xyz(1.5, 0.0, -2.0).with_rotation(Quat::from_rotation_y(0.7))
}

/// The app with the plugin and `model` spawned under [`turned_root`] (with an armature of
/// that scale when given): the app, the root, the character and its joints' entities.
fn turned_scene(model: &Model, armature: Option<f32>) -> (App, Transform, Entity, Vec<Entity>) {
    let mut app = app();
    let root = turned_root();
    let (character, joints) = spawn(app.world_mut(), model, root, armature);
    (app, root, character, joints)
}

/// World position of `model`'s rest joint `bone` under `root`.
fn rest_world(model: &Model, root: &Transform, bone: HumanoidBone) -> DVec3 {
    let p = model.rest().position(model.joint(bone));
    dv(root.transform_point(Vec3::new(p.x as f32, p.y as f32, p.z as f32)))
}

/// A reachable goal for the left hand: from the shoulder, 0.8 of the arm's length, forward
/// and down (model space), in the world.
fn hand_goal(model: &Model, root: &Transform) -> DVec3 {
    let rest = model.rest();
    let shoulder = rest.position(model.joint(HumanoidBone::LeftUpperArm));
    let elbow = rest.position(model.joint(HumanoidBone::LeftLowerArm));
    let hand = rest.position(model.joint(HumanoidBone::LeftHand));
    let reach = shoulder.distance(elbow) + elbow.distance(hand);
    let at = shoulder + DVec3::new(0.3, -0.5, 0.6).normalize() * 0.8 * reach;
    dv(root.transform_point(Vec3::new(at.x as f32, at.y as f32, at.z as f32)))
}

/// Runs `frames` frames.
fn run(app: &mut App, frames: usize) {
    for _ in 0..frames {
        app.update();
    }
}

fn limb_reaches(solver: LimbSolver, armature: Option<f32>, test: &str) {
    let Some(model) = godette(test) else {
        return;
    };
    let (mut app, root, character, joints) = turned_scene(&model, armature);
    let goal = hand_goal(&model, &root);
    let goal_entity = target(app.world_mut(), goal);
    // The pole: below and behind the shoulder (elbow down and back).
    let pole_at = rest_world(&model, &root, HumanoidBone::LeftUpperArm)
        + dq(root.rotation) * DVec3::new(0.2, -0.6, -0.4);
    let pole = target(app.world_mut(), pole_at);
    let limb = app
        .world_mut()
        .spawn(
            LimbIk::new(character, LimbEnd::LeftHand, goal_entity)
                .with_pole(pole)
                .with_solver(solver),
        )
        .id();
    run(&mut app, 2);
    let hand = joints[model.joint(HumanoidBone::LeftHand).index()];
    let error = world_position(&app, hand).distance(goal);
    let report = app.world().get::<IkReport>(limb).unwrap().clone();
    println!("{test}: hand {error:.2e} m from its target; {report:?}");
    assert!(report.converged(), "{report:?}");
    assert!(error < 1e-4, "{error}");
    // The elbow on the pole's side of the shoulder → target line.
    let shoulder = world_position(
        &app,
        joints[model.joint(HumanoidBone::LeftUpperArm).index()],
    );
    let elbow = world_position(
        &app,
        joints[model.joint(HumanoidBone::LeftLowerArm).index()],
    );
    let line = goal - shoulder;
    let side = (pole_at - shoulder).reject_from(line);
    assert!((elbow - shoulder).reject_from(line).dot(side) > 0.0);
    if solver == LimbSolver::TwoBone {
        // Two-bone puts the elbow in the plane of shoulder, target and pole.
        let normal = line.cross(side).normalize();
        assert!((elbow - shoulder).dot(normal).abs() < 1e-4);
    }
    // The target moves: followed in the same frame.
    let next = goal + DVec3::new(0.05, 0.08, -0.03);
    move_to(&mut app, goal_entity, next);
    run(&mut app, 1);
    assert!(world_position(&app, hand).distance(next) < 1e-4);
}

#[test]
fn a_two_bone_arm_reaches_its_target_with_the_elbow_towards_the_pole() {
    limb_reaches(LimbSolver::TwoBone, None, "two-bone limb");
}

#[test]
fn a_limb7_arm_reaches_its_target() {
    let limb7 = LimbSolver::Limb7 {
        elbow_range: [0.0, 2.6],
        swivel: ikarus_bevy::SwivelPolicy::KeepCurrent,
    };
    limb_reaches(limb7, None, "limb7 limb");
}

#[test]
fn a_mixamo_scale_scene_reaches_in_world_units() {
    // Joints in centimetres below an armature scaled 0.01, as Mixamo exports: the hand still
    // reaches within 1e-4 m of the world.
    limb_reaches(LimbSolver::TwoBone, Some(0.01), "Mixamo-scale limb");
}

#[test]
fn an_elbow_limit_holds_when_the_target_asks_for_more() {
    let Some(model) = godette("elbow limit") else {
        return;
    };
    // The elbow's hinge about the humanoid convention (the left elbow flexes about the
    // body's down), in its rest frame, at most 1 rad.
    let rest = model.rest();
    let elbow_joint = model.joint(HumanoidBone::LeftLowerArm);
    let axis = rest.rotation(elbow_joint).conjugate() * DVec3::NEG_Y;
    let limit = JointLimit::Hinge(HingeLimit {
        axis,
        min: 0.0,
        max: 1.0,
    });
    let (mut app, root, character, joints) = turned_scene(&model, None);
    app.world_mut()
        .entity_mut(character)
        .insert(model.character().with_limit("leftLowerArm", limit.clone()));
    // A target near the shoulder: the arm would fold well past 1 rad.
    let shoulder = rest_world(&model, &root, HumanoidBone::LeftUpperArm);
    let goal = shoulder + dq(root.rotation) * DVec3::new(0.05, -0.05, 0.12);
    let goal_entity = target(app.world_mut(), goal);
    let limb = app
        .world_mut()
        .spawn(LimbIk::new(character, LimbEnd::LeftHand, goal_entity))
        .id();
    run(&mut app, 2);
    let report = app.world().get::<IkReport>(limb).unwrap().clone();
    assert!(report.limits_active, "{report:?}");
    assert_eq!(report.status, Some(SolveStatus::Unreachable));
    // The elbow's local rotation as Bevy holds it, against the limit.
    let local = app
        .world()
        .get::<Transform>(joints[elbow_joint.index()])
        .unwrap()
        .rotation;
    let local = dq(local);
    let delta = model.skeleton.rest(elbow_joint).rotation.conjugate() * local;
    let JointLimit::Hinge(hinge) = &limit else {
        unreachable!()
    };
    let angle = hinge.angle(delta);
    println!(
        "elbow at {angle:.6} rad (limit 1), violation {:.2e}",
        limit.violation(delta)
    );
    assert!(limit.violation(delta) < 1e-6, "{}", limit.violation(delta));
    assert!(angle > 0.9 && angle <= 1.0 + 1e-6, "{angle}");
}

/// Bumps: 4 cm up and down every 0.5 m, on a 5 cm grid.
fn bumpy() -> Heightfield {
    let heights = (0..120)
        .map(|i| {
            (0..120)
                .map(|j| {
                    let (x, z) = (f64::from(j) * 0.05 - 3.0, f64::from(i) * 0.05 - 3.0);
                    0.04 * (x * std::f64::consts::TAU / 1.0).sin() * (z * 4.0).cos()
                })
                .collect()
        })
        .collect();
    Heightfield::new([-3.0, -3.0], 0.05, heights).unwrap()
}

#[test]
fn grounded_feet_stand_on_a_heightfield() {
    let Some(model) = godette("grounding") else {
        return;
    };
    let ground = bumpy();
    let mut app = app();
    let root = Transform::from_xyz(0.3, 0.0, 0.2).with_rotation(Quat::from_rotation_y(0.4));
    let (character, joints) = spawn(app.world_mut(), &model, root, None);
    app.insert_resource(IkarusGround::Heightfield(ground.clone()));
    app.world_mut()
        .entity_mut(character)
        .insert(Grounding::default());
    // One second: ten time constants of the pelvis's spring.
    run(&mut app, 60);
    let report = app.world().get::<IkReport>(character).unwrap().clone();
    println!("grounding: {report:?}");
    assert!(report.converged(), "{report:?}");
    // Each foot's sole points (ankle, toes, toe tip) keep their rest height above the
    // ground under them, the lowest exactly: the foot stands on the ground.
    let rest = model.rest();
    for (ankle, toes) in [
        (HumanoidBone::LeftFoot, HumanoidBone::LeftToes),
        (HumanoidBone::RightFoot, HumanoidBone::RightToes),
    ] {
        let mut gaps = Vec::new();
        for bone in [ankle, toes] {
            let joint = model.joint(bone);
            let at = world_position(&app, joints[joint.index()]);
            let (height, _) = ground.sample(at.x, at.z).unwrap();
            gaps.push(at.y - height - rest.position(joint).y);
        }
        let lowest = gaps.iter().copied().fold(f64::INFINITY, f64::min);
        println!("{ankle:?}: sole gaps {gaps:?}");
        // The solver's tolerance (1e-4 m) and the toe tip (a third sole point, not checked
        // here, may be the one on the ground): within 5 mm, never below the ground by more
        // than the tolerance.
        assert!(lowest > -2e-4 && lowest < 5e-3, "{gaps:?}");
    }
}

#[test]
fn a_tracked_body_follows_its_head_and_hand_trackers() {
    let Some(model) = godette("tracked body") else {
        return;
    };
    let mut app = app();
    let root = Transform::from_xyz(-0.5, 0.0, 1.0);
    let (character, joints) = spawn(app.world_mut(), &model, root, None);
    // The trackers where the avatar's reference pose has its head and hands: the player
    // standing in it (calibration on the first frame).
    let at = |bone| rest_world(&model, &root, bone);
    let head = target(app.world_mut(), at(HumanoidBone::Head));
    let left = target(app.world_mut(), at(HumanoidBone::LeftHand));
    let right = target(app.world_mut(), at(HumanoidBone::RightHand));
    // Calibration scales the player to the avatar: the player's head height above the floor
    // against the avatar's above its lowest joint. With the floor at the avatar's lowest
    // joint the scale is 1, and the hands must land on their trackers.
    let lowest = model
        .rest()
        .positions()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    let mut body = TrackedBody::new(head, left, right);
    body.config.floor = lowest;
    app.world_mut().entity_mut(character).insert(body);
    run(&mut app, 2);
    // The left hand reaches forward and down, the head bows a little.
    let hand_goal = at(HumanoidBone::LeftHand) + DVec3::new(-0.15, -0.25, 0.3);
    move_to(&mut app, left, hand_goal);
    let head_goal = at(HumanoidBone::Head) + DVec3::new(0.0, -0.03, 0.04);
    move_to(&mut app, head, head_goal);
    run(&mut app, 30);
    let report = app.world().get::<IkReport>(character).unwrap().clone();
    let hand = world_position(&app, joints[model.joint(HumanoidBone::LeftHand).index()]);
    let head_at = world_position(&app, joints[model.joint(HumanoidBone::Head).index()]);
    println!(
        "tracked: hand {:.2e} m, head {:.2e} m from their trackers; {report:?}",
        hand.distance(hand_goal),
        head_at.distance(head_goal)
    );
    assert!(report.error.is_none(), "{report:?}");
    // The hand lands on its tracker; the head too, within the solver's tolerance against the
    // weak pelvis goal the 3-point rule guesses (the report's residual is that goal's).
    assert!(hand.distance(hand_goal) < 1e-4);
    assert!(head_at.distance(head_goal) < 1e-4);
}

#[test]
fn a_full_body_pulls_the_hips_to_reach_far_targets() {
    let Some(model) = godette("full body") else {
        return;
    };
    let (mut app, root, character, joints) = turned_scene(&model, None);
    // Both hands to a point low in front (out of the arms' reach without bending), the feet
    // held where they stand.
    let low = dv(root.transform_point(Vec3::new(0.0, 0.45, 0.45)));
    let left = target(app.world_mut(), low + DVec3::X * 0.1);
    let right = target(app.world_mut(), low - DVec3::X * 0.1);
    let feet = [HumanoidBone::LeftFoot, HumanoidBone::RightFoot]
        .map(|b| target(app.world_mut(), rest_world(&model, &root, b)));
    let body = FullBodyIk::default()
        .with(BodyEffector::new(HumanoidBone::LeftHand, left))
        .with(BodyEffector::new(HumanoidBone::RightHand, right))
        .with(BodyEffector::new(HumanoidBone::LeftFoot, feet[0]))
        .with(BodyEffector::new(HumanoidBone::RightFoot, feet[1]));
    app.world_mut().entity_mut(character).insert(body);
    run(&mut app, 2);
    let report = app.world().get::<IkReport>(character).unwrap().clone();
    println!("full body: {report:?}");
    assert!(report.converged(), "{report:?}");
    let hand = world_position(&app, joints[model.joint(HumanoidBone::LeftHand).index()]);
    assert!(hand.distance(low + DVec3::X * 0.1) < 1e-4);
    let foot = world_position(&app, joints[model.joint(HumanoidBone::LeftFoot).index()]);
    assert!(foot.distance(rest_world(&model, &root, HumanoidBone::LeftFoot)) < 1e-4);
    // The hips went down to let the hands reach.
    let hips = world_position(&app, joints[model.joint(HumanoidBone::Hips).index()]);
    assert!(hips.y < rest_world(&model, &root, HumanoidBone::Hips).y - 0.05);
}

#[test]
fn bad_input_is_a_status_never_a_panic_nor_a_nan() {
    let Some(model) = godette("bad input") else {
        return;
    };
    let mut app = app();
    let (character, joints) = spawn(app.world_mut(), &model, Transform::default(), None);
    let goal = target(app.world_mut(), DVec3::new(0.3, 1.0, 0.3));
    let limb = app
        .world_mut()
        .spawn(LimbIk::new(character, LimbEnd::LeftHand, goal))
        .id();
    run(&mut app, 1);
    // A NaN target: the frame is refused, the joints keep a finite pose.
    app.world_mut()
        .get_mut::<Transform>(goal)
        .unwrap()
        .translation = Vec3::NAN;
    run(&mut app, 2);
    let report = app.world().get::<IkReport>(limb).unwrap().clone();
    assert!(
        matches!(report.error, Some(IkarusError::NonFiniteTarget(e)) if e == goal),
        "{report:?}"
    );
    for &joint in &joints {
        assert!(
            app.world()
                .get::<GlobalTransform>(joint)
                .unwrap()
                .translation()
                .is_finite()
        );
    }
    // A target entity despawned.
    app.world_mut().despawn(goal);
    run(&mut app, 1);
    let report = app.world().get::<IkReport>(limb).unwrap().clone();
    assert!(
        matches!(report.error, Some(IkarusError::MissingTarget(_))),
        "{report:?}"
    );
    // A scene that is no humanoid: three joints named a, b, c.
    let other = app.world_mut().spawn(IkarusCharacter::default()).id();
    let mut parent = other;
    for (name, y) in [("a", 1.0), ("b", -0.3), ("c", -0.3)] {
        parent = app
            .world_mut()
            .spawn((
                Name::new(name),
                Transform::from_xyz(0.0, y, 0.0),
                ChildOf(parent),
            ))
            .id();
    }
    let target = target(app.world_mut(), DVec3::new(0.2, 0.6, 0.0));
    let hand = app
        .world_mut()
        .spawn(LimbIk::new(other, LimbEnd::LeftHand, target))
        .id();
    let by_name = app
        .world_mut()
        .spawn(LimbIk::new(
            other,
            LimbEnd::Joints {
                start: "a".into(),
                mid: "b".into(),
                end: "c".into(),
            },
            target,
        ))
        .id();
    app.world_mut()
        .entity_mut(other)
        .insert(FullBodyIk::default());
    run(&mut app, 2);
    let report = |e| app.world().get::<IkReport>(e).unwrap().clone();
    assert!(
        matches!(
            report(hand).error,
            Some(IkarusError::MissingBone {
                bone: "leftUpperArm"
            })
        ),
        "{:?}",
        report(hand)
    );
    assert!(
        matches!(report(other).error, Some(IkarusError::Setup(_))),
        "{:?}",
        report(other)
    );
    // Limbs by joint name work on any rig.
    assert!(report(by_name).converged(), "{:?}", report(by_name));
    assert!(world_position(&app, parent).distance(DVec3::new(0.2, 0.6, 0.0)) < 1e-4);
}

#[test]
fn ik_never_feeds_on_its_own_output() {
    // Nothing animates the joints: each frame must start from the animation (the rest), not
    // from the last solved pose. With half the position weight the hand stays half-way between
    // its animated place and the target, frame after frame (fed back, it would creep to the
    // target).
    let Some(model) = godette("no feedback") else {
        return;
    };
    let (mut app, root, character, joints) = turned_scene(&model, None);
    let goal = hand_goal(&model, &root);
    let goal_entity = target(app.world_mut(), goal);
    let mut limb = LimbIk::new(character, LimbEnd::LeftHand, goal_entity);
    limb.position_weight = 0.5;
    app.world_mut().spawn(limb);
    let animated = rest_world(&model, &root, HumanoidBone::LeftHand);
    let half = animated.lerp(goal, 0.5);
    let hand = joints[model.joint(HumanoidBone::LeftHand).index()];
    for frame in 0..10 {
        run(&mut app, 1);
        let error = world_position(&app, hand).distance(half);
        assert!(error < 1e-4, "frame {frame}: {error}");
    }
    // An animation that moves a joint is taken as the new input: the forearm turned by the
    // game is where the next solve starts (the hand still ends half-way).
    let elbow = joints[model.joint(HumanoidBone::LeftLowerArm).index()];
    app.world_mut()
        .get_mut::<Transform>(elbow)
        .unwrap()
        .rotation = Quat::from_rotation_y(-0.5);
    run(&mut app, 1);
    assert!(world_position(&app, hand).distance(half) > 1e-3);
}

#[test]
fn every_joint_is_where_the_solve_put_it_and_the_animation_returns_on_release() {
    // The write looks only at the joints a solver may change and those it left solved: after
    // propagation every one of the character's joints (fingers, toes, hair included) must be
    // where the rig's solved model frames say, frame after frame as the targets move; and
    // with the solver removed, every joint goes back to the animation (the rest here).
    let Some(model) = godette("every joint") else {
        return;
    };
    let (mut app, root, character, joints) = turned_scene(&model, None);
    let hands = [HumanoidBone::LeftHand, HumanoidBone::RightHand];
    let homes = hands.map(|b| rest_world(&model, &root, b));
    let targets = homes.map(|at| target(app.world_mut(), at));
    let mut body = FullBodyIk::default();
    for (bone, &entity) in hands.iter().zip(&targets) {
        body = body.with(BodyEffector::new(*bone, entity).with_rotation_weight(0.5));
    }
    for bone in [HumanoidBone::LeftFoot, HumanoidBone::RightFoot] {
        let at = target(app.world_mut(), rest_world(&model, &root, bone));
        body = body.with(BodyEffector::new(bone, at));
    }
    app.world_mut().entity_mut(character).insert(body);
    let rest_world_of = |k: usize| {
        let p = model.rest().position(ikarus_core::JointId::from_index(k));
        dv(root.transform_point(Vec3::new(p.x as f32, p.y as f32, p.z as f32)))
    };
    let mut moved = 0.0_f64;
    for frame in 0..8 {
        let t = f64::from(frame) * 0.4;
        let offset = DVec3::new(0.1 * t.sin(), -0.3 - 0.1 * t.cos(), 0.25);
        move_to(&mut app, targets[0], homes[0] + offset);
        move_to(
            &mut app,
            targets[1],
            homes[1] + offset * DVec3::new(-1.0, 1.0, 1.0),
        );
        run(&mut app, 1);
        let rig = app.world().get::<CharacterRig>(character).unwrap();
        for (k, &entity) in joints.iter().enumerate() {
            let joint = ikarus_core::JointId::from_index(k);
            let solved = rig.world_position(joint);
            let shown = world_position(&app, entity);
            assert!(
                shown.distance(solved) < 2e-5,
                "frame {frame}: {} shown {shown} solved {solved}",
                rig.skeleton().name(joint)
            );
            // Twice the chord between the unit quaternions (≈ the angle; `angle_between`'s
            // arccosine would magnify f32 rounding near 0).
            let (a, b) = (
                dq(app
                    .world()
                    .get::<GlobalTransform>(entity)
                    .unwrap()
                    .rotation()),
                rig.world_rotation(joint),
            );
            let turn = 2.0 * (a - b).length().min((a + b).length());
            assert!(
                turn < 2e-5,
                "frame {frame}: {} {turn}",
                rig.skeleton().name(joint)
            );
            moved = moved.max(shown.distance(rest_world_of(k)));
        }
    }
    assert!(moved > 0.2, "the solves moved the body: {moved}");
    app.world_mut().entity_mut(character).remove::<FullBodyIk>();
    run(&mut app, 2);
    for (k, &entity) in joints.iter().enumerate() {
        let back = world_position(&app, entity).distance(rest_world_of(k));
        assert!(back < 2e-5, "joint {k} stayed {back} m off its animation");
    }
}

#[test]
fn the_joints_a_solver_uses_are_read_every_frame_and_others_on_request() {
    // A body solver holding nothing (weights 0) leaves the pose as read, so `pose()` shows
    // what the read saw: the hips' animation every frame, also after the rig is built again
    // on the same (shared) skeleton; a finger's animation only with `read_all_joints`.
    let Some(model) = godette("reads") else {
        return;
    };
    for read_all in [false, true] {
        let mut app = app();
        let (character, joints) = spawn(app.world_mut(), &model, Transform::default(), None);
        app.world_mut()
            .get_mut::<IkarusCharacter>(character)
            .unwrap()
            .read_all_joints = read_all;
        let goal = target(app.world_mut(), DVec3::new(0.3, 1.0, 0.3));
        let mut held = BodyEffector::new(HumanoidBone::LeftHand, goal);
        held.position_weight = 0.0;
        app.world_mut()
            .entity_mut(character)
            .insert(FullBodyIk::default().with(held));
        let hips = model.joint(HumanoidBone::Hips);
        let finger = model.joint(HumanoidBone::LeftIndexProximal);
        let rest = |j: ikarus_core::JointId| model.skeleton.rest(j);
        // Built at the rest.
        run(&mut app, 1);
        let built: *const ikarus_core::Skeleton = app
            .world()
            .get::<CharacterRig>(character)
            .unwrap()
            .skeleton();
        for frame in 1..8 {
            // At frame 4 the rig is built again from the rest: the same skeleton, shared.
            let again = frame == 4;
            if again {
                app.world_mut()
                    .get_mut::<IkarusCharacter>(character)
                    .unwrap()
                    .set_changed();
            }
            let lift = if again { 0.0 } else { 0.01 * f64::from(frame) };
            for (joint, by) in [(hips, lift), (finger, 0.5 * lift)] {
                let t = rest(joint).translation + DVec3::Y * by;
                app.world_mut()
                    .get_mut::<Transform>(joints[joint.index()])
                    .unwrap()
                    .translation = Vec3::new(t.x as f32, t.y as f32, t.z as f32);
            }
            run(&mut app, 1);
            let rig = app.world().get::<CharacterRig>(character).unwrap();
            assert!(
                std::ptr::eq(rig.skeleton(), built),
                "the skeleton is shared"
            );
            let seen =
                |j: ikarus_core::JointId| rig.pose()[j].translation.y - rest(j).translation.y;
            assert!(
                (seen(hips) - lift).abs() < 1e-6,
                "frame {frame}: hips {}",
                seen(hips)
            );
            if read_all {
                assert!((seen(finger) - 0.5 * lift).abs() < 1e-6, "frame {frame}");
            } else {
                assert!(
                    seen(finger).abs() < 1e-9,
                    "frame {frame}: the finger was read"
                );
            }
            // The finger's entity keeps its animation either way (nothing writes it).
            let shown = app
                .world()
                .get::<Transform>(joints[finger.index()])
                .unwrap();
            assert!(
                (f64::from(shown.translation.y) - rest(finger).translation.y - 0.5 * lift).abs()
                    < 1e-6
            );
        }
    }
}

#[test]
fn many_characters_each_reach_their_own_targets() {
    // Sixteen characters on a grid, each hand pulled to its own point: every one converges
    // and its hand is at its own target (with the `multi_threaded` feature the bodies are
    // solved on several threads; nothing may cross between characters).
    let Some(model) = godette("many") else {
        return;
    };
    let mut app = app();
    let mut cases = Vec::new();
    for i in 0..16_u8 {
        let at = Vec3::new(f32::from(i % 4) * 1.5, 0.0, f32::from(i / 4) * 1.5);
        let root = Transform::from_translation(at);
        let (character, joints) = spawn(app.world_mut(), &model, root, None);
        let goal = rest_world(&model, &root, HumanoidBone::LeftHand)
            + DVec3::new(0.05 * f64::from(i % 5), -0.3, 0.2 + 0.01 * f64::from(i));
        let hand = target(app.world_mut(), goal);
        let feet = [HumanoidBone::LeftFoot, HumanoidBone::RightFoot]
            .map(|b| target(app.world_mut(), rest_world(&model, &root, b)));
        app.world_mut().entity_mut(character).insert(
            FullBodyIk::default()
                .with(BodyEffector::new(HumanoidBone::LeftHand, hand))
                .with(BodyEffector::new(HumanoidBone::LeftFoot, feet[0]))
                .with(BodyEffector::new(HumanoidBone::RightFoot, feet[1])),
        );
        cases.push((character, joints, goal));
    }
    run(&mut app, 3);
    for (k, (character, joints, goal)) in cases.iter().enumerate() {
        let report = app.world().get::<IkReport>(*character).unwrap();
        assert!(report.converged(), "character {k}: {report:?}");
        let hand = world_position(&app, joints[model.joint(HumanoidBone::LeftHand).index()]);
        assert!(
            hand.distance(*goal) < 1e-4,
            "character {k}: {}",
            hand.distance(*goal)
        );
    }
}
