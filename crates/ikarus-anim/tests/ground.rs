//! Grounding on the shared walks and runs over a 15° slope, 18 cm stairs and a bumpy
//! heightfield, each laid along the clip's own direction of travel. Every number by FK on the
//! output against the ground and against the animation's own feet above its own floor.
//!
//! History of the table in BENCHMARKS.md (2026-11-28): the CMU walk's hips accelerated 131.8
//! m/s² on the slope and 123.7 on the bumps (its own: 60.8) until the pelvis springs restarted
//! at the animation's cuts (its T-pose first frame rang on for 15 frames) and the legs' reach
//! limit was bent smoothly (a foot goal on bumps kinks it). Toe tips over a step's edge bend
//! the toes up since the same day: the contacts across an edge fell from 132 / 17 / 3 to
//! 61 / 12 / 0 (CMU walk, Bandai walk, Bandai run), and to none once a foot planted across
//! an edge was moved onto one step (the hips then 62.4 → 62.7 and 7.3 → 11.5 m/s² on the
//! stairs, the feet landing a step higher or lower).

mod common;

use glam::DVec3;
use ikarus_anim::ground::{Ground, GroundConfig, GroundFn, Heightfield, ground_motion};
use ikarus_anim::retarget::Character;
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{JointId, ModelPose, Motion, Skeleton, fk};

/// Each clip scaled so that its upper plus lower leg is 0.85 m, since BVH units vary.
const LEG: f64 = 0.85;

/// How much more the grounded hips may accelerate vertically than the clip's own on its flat
/// floor, m/s² (measured: at most 9.6, the Bandai walk on the bumps; was 71 on the CMU walk
/// before the cuts restarted the springs and the reach limit was bent smoothly).
const POP_MARGIN: f64 = 10.0;

/// The walks and the run every grounding test stands on its terrains.
const CLIPS: [&str; 3] = [
    "cmu_02_01_walk_cgspeed_crlf.bvh",
    "bandainamco_ds1_walk_normal_002.bvh",
    "bandainamco_ds1_run_normal_001.bvh",
];

fn open(file: &str) -> Option<(Skeleton, HumanoidMap, Motion)> {
    let document = common::open_with_leg(file, "grounding", LEG)?;
    let map = HumanoidMap::recognise(&document.skeleton);
    Some((document.skeleton, map, document.motion.unwrap()))
}

fn models(skeleton: &Skeleton, motion: &Motion) -> Vec<ModelPose> {
    let mut model = ModelPose::new(skeleton);
    motion
        .frames()
        .iter()
        .map(|p| {
            fk::forward_kinematics(skeleton, p, &mut model);
            model.clone()
        })
        .collect()
}

/// The sole points of a foot: the ankle and, when mapped, the toes joint.
fn soles(map: &HumanoidMap) -> [Vec<JointId>; 2] {
    [
        [HumanoidBone::LeftFoot, HumanoidBone::LeftToes],
        [HumanoidBone::RightFoot, HumanoidBone::RightToes],
    ]
    .map(|bones| bones.iter().filter_map(|&b| map.joint(b)).collect())
}

struct Measured {
    /// During full contacts, the lowest sole point's height above the ground less the
    /// animation's above its floor: how far from sitting on the ground (min, max).
    contact: (f64, f64),
    /// Over every frame, the most a sole point went lower above the ground than the
    /// animation had it above its floor.
    below: f64,
    /// The largest slide of a planted ankle in a frame beyond the animation's own.
    slide: f64,
    /// The largest vertical acceleration of the hips (m/s²), ours and the animation's.
    acceleration: (f64, f64),
    /// Planted frames of a foot across the edge of a step (the ground under its heel, ball
    /// and toe tip more than 1 cm apart): it stands on the higher part.
    across: usize,
}

impl Measured {
    /// The soles during contacts, the most below, the contacts across an edge and the slide.
    fn summary(&self) -> String {
        format!(
            "soles {:.1}, {:.1} mm during contacts, {:.1} mm below at most, {} across an edge, slide {:.1} mm",
            self.contact.0 * 1e3,
            self.contact.1 * 1e3,
            self.below * 1e3,
            self.across,
            self.slide * 1e3
        )
    }
}

#[allow(clippy::too_many_lines)] // one measurement pass over every frame
fn measure(
    skeleton: &Skeleton,
    map: &HumanoidMap,
    input: &Motion,
    output: &ikarus_anim::ground::Grounded,
    (ground, stepped): (&dyn Ground, bool),
) -> Measured {
    let (a, b) = (models(skeleton, input), models(skeleton, &output.motion));
    let soles = soles(map);
    let hips = map.joint(HumanoidBone::Hips).unwrap();
    // The animation's floor, as the grounding finds it: its lowest ankle level, by the same
    // 5th percentile, less the ankle's height above the lowest joint of the upright
    // reference pose.
    let (_, rest) = ikarus_anim::retarget::align::reference(skeleton, map, Some(input));
    let lowest = rest.positions().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let ankles = [soles[0][0], soles[1][0]];
    let clearance = 0.5 * (rest.position(ankles[0]).y + rest.position(ankles[1]).y) - lowest;
    let mut lower: Vec<f64> = a
        .iter()
        .map(|m| m.position(ankles[0]).y.min(m.position(ankles[1]).y))
        .collect();
    lower.sort_by(f64::total_cmp);
    let floor = lower[lower.len() / 20] - clearance;
    let above = |m: &ModelPose, j: JointId| {
        let p = m.position(j);
        p.y - ground.sample(p.x, p.z).unwrap().0
    };
    let mut measured = Measured {
        contact: (f64::INFINITY, f64::NEG_INFINITY),
        below: 0.0,
        slide: 0.0,
        acceleration: (0.0, 0.0),
        across: 0,
    };
    for f in 0..a.len() {
        #[allow(clippy::needless_range_loop)] // one index into soles, weights and tips
        for s in 0..2 {
            let mut excess: Vec<f64> = soles[s]
                .iter()
                .map(|&j| above(&b[f], j) - (a[f].position(j).y - floor))
                .collect();
            // The toe tip: the third sole point.
            let tip = output.toe_tips[s].map(|(toes, tip)| {
                [&b[f], &a[f]].map(|m| m.position(toes) + m.rotation(toes) * tip)
            });
            if let Some([t, u]) = tip {
                excess.push(t.y - ground.sample(t.x, t.z).unwrap().0 - (u.y - floor));
            }
            // A foot across an edge (the ground under its points more than 1 cm apart)
            // stands on the higher part: left out of the on-the-ground check, counted.
            let mut points: Vec<DVec3> = soles[s].iter().map(|&j| b[f].position(j)).collect();
            points.extend(tip.map(|[t, _]| t));
            let heights: Vec<f64> = points
                .iter()
                .map(|p| ground.sample(p.x, p.z).unwrap().0)
                .collect();
            let spread = if stepped {
                heights.iter().copied().fold(f64::NEG_INFINITY, f64::max)
                    - heights.iter().copied().fold(f64::INFINITY, f64::min)
            } else {
                0.0
            };
            let lowest = excess.iter().copied().fold(f64::INFINITY, f64::min);
            measured.below = measured.below.max(-lowest);
            if output.weights[f][s] >= 1.0 && spread > 0.01 {
                measured.across += 1;
            }
            if output.weights[f][s] >= 1.0 && spread <= 0.01 {
                measured.contact.0 = measured.contact.0.min(lowest);
                measured.contact.1 = measured.contact.1.max(lowest);
                if f > 0 && output.weights[f - 1][s] >= 1.0 {
                    let ankle = soles[s][0];
                    let moved = |m: &[ModelPose]| {
                        (m[f].position(ankle) - m[f - 1].position(ankle))
                            .reject_from(DVec3::Y)
                            .length()
                    };
                    measured.slide = measured.slide.max(moved(&b) - moved(&a));
                }
            }
        }
        // The clip's own jumps (a T-pose first frame) are left out.
        let jumped = |g: usize| {
            soles.iter().flatten().any(|&j| {
                a[g].position(j).distance(a[g - 1].position(j)) > 6.0 * input.frame_time()
            })
        };
        if f >= 2 && !jumped(f) && !jumped(f - 1) {
            let dt2 = input.frame_time() * input.frame_time();
            let accel = |m: &[ModelPose]| {
                (m[f].position(hips).y - 2.0 * m[f - 1].position(hips).y
                    + m[f - 2].position(hips).y)
                    .abs()
                    / dt2
            };
            measured.acceleration.0 = measured.acceleration.0.max(accel(&b));
            measured.acceleration.1 = measured.acceleration.1.max(accel(&a));
        }
    }
    measured
}

/// The three terrains, laid along the clip's own direction of travel from where its hips
/// start: a 15° slope, 18 cm stairs (30 cm deep) and ±8 cm bumps (a heightfield, 5 cm cells).
fn terrains_along(
    skeleton: &Skeleton,
    map: &HumanoidMap,
    motion: &Motion,
) -> [(&'static str, Box<dyn Ground>); 3] {
    let frames = models(skeleton, motion);
    let hips = map.joint(HumanoidBone::Hips).unwrap();
    let start = frames[0].position(hips);
    let travel = (frames[frames.len() - 1].position(hips) - start)
        .reject_from(DVec3::Y)
        .try_normalize()
        .unwrap_or(DVec3::X);
    let along = move |x: f64, z: f64| (DVec3::new(x, 0.0, z) - start).dot(travel);
    let t = 15f64.to_radians().tan();
    let slope = GroundFn(move |x, z| {
        Some((
            along(x, z) * t,
            DVec3::new(-travel.x * t, 1.0, -travel.z * t),
        ))
    });
    let stairs =
        GroundFn(move |x, z| Some((0.18 * (along(x, z) / 0.3).floor().max(0.0), DVec3::Y)));
    let cells = 121;
    let bumps = Heightfield::new(
        [start.x - 3.0, start.z - 3.0],
        0.05,
        (0..cells)
            .map(|i| {
                (0..cells)
                    .map(|j| {
                        let (x, z) = (f64::from(j) * 0.05, f64::from(i) * 0.05);
                        0.04 * ((x * 5.7).sin() + (z * 7.0).sin())
                    })
                    .collect()
            })
            .collect(),
    )
    .unwrap();
    [
        ("slope 15°", Box::new(slope)),
        ("stairs 18 cm", Box::new(stairs)),
        ("bumps ±8 cm", Box::new(bumps)),
    ]
}

#[test]
#[allow(clippy::too_many_lines)] // one table: every clip × terrain, measured and checked
fn walks_and_runs_stand_on_slopes_stairs_and_bumps() {
    let mut failures = Vec::new();
    println!(
        "| clip | terrain | contacts | sole on ground mm (min, max) | planted across an edge | below mm | slide mm | hips accel m/s² (ours / clip) | unreached |"
    );
    println!("|---|---|---:|---|---:|---:|---:|---|---:|");
    for file in CLIPS {
        let Some((skeleton, map, motion)) = open(file) else {
            return;
        };
        for (name, ground) in terrains_along(&skeleton, &map, &motion) {
            let ground = &*ground;
            let stepped = name.starts_with("stairs");
            let character = Character {
                skeleton: &skeleton,
                map: &map,
            };
            let out = ground_motion(character, &motion, ground, &GroundConfig::default()).unwrap();
            assert_eq!(out.motion.len(), motion.len());
            assert!(
                out.motion
                    .frames()
                    .iter()
                    .all(ikarus_core::LocalPose::is_finite)
            );
            let m = measure(&skeleton, &map, &motion, &out, (ground, stepped));
            let contacts = out.contacts[0].len() + out.contacts[1].len();
            println!(
                "| {file} | {name} | {contacts} | {:.1}, {:.1} | {} | {:.1} | {:.1} | {:.1} / {:.1} | {} |",
                m.contact.0 * 1e3,
                m.contact.1 * 1e3,
                m.across,
                m.below * 1e3,
                m.slide * 1e3,
                m.acceleration.0,
                m.acceleration.1,
                out.unreached
            );
            let what = format!("{file} on {name}");
            let mut check = |ok: bool, message: String| {
                if !ok {
                    failures.push(format!("{what}: {message}"));
                }
            };
            check(contacts > 0, "no contact".into());
            check(
                m.contact.0 > -1e-3 && m.contact.1 < 5e-3,
                format!("soles {:?}", m.contact),
            );
            check(m.below < 1e-3, format!("{} m below", m.below));
            check(m.slide < 1e-2, format!("slide {} m", m.slide));
            check(
                m.across == 0,
                format!("{} planted across an edge", m.across),
            );
            check(
                out.unreached == 0,
                format!("{} frames unreached", out.unreached),
            );
            // No pop: the hips' vertical acceleration within the clip's own on its flat floor
            // plus what following the ground may add (an 18 cm step taken by the pelvis's
            // spring at its 0.1 s bends it about 18 m/s²; the margin is what was measured).
            check(
                m.acceleration.0 <= m.acceleration.1 + POP_MARGIN,
                format!(
                    "hips accelerate {:.1} m/s², the clip {:.1}",
                    m.acceleration.0, m.acceleration.1
                ),
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Ground where the clip's own floor is: nothing to change. Every joint of every frame stays
/// where the animation has it, but for the slack fully straight legs get.
#[test]
fn the_clips_own_floor_changes_nothing() {
    let Some((skeleton, map, motion)) = open("bandainamco_ds1_walk_normal_002.bvh") else {
        return;
    };
    let character = Character {
        skeleton: &skeleton,
        map: &map,
    };
    // The floor the grounding finds (reported), from a first run on any ground.
    let flat = ikarus_anim::ground::Plane {
        point: DVec3::ZERO,
        normal: DVec3::Y,
    };
    let floor = ground_motion(character, &motion, &flat, &GroundConfig::default())
        .unwrap()
        .floor;
    let own = ikarus_anim::ground::Plane {
        point: DVec3::new(0.0, floor, 0.0),
        normal: DVec3::Y,
    };
    let out = ground_motion(character, &motion, &own, &GroundConfig::default()).unwrap();
    // The pelvis stays, but for frames whose legs the clip has fully straight: they get a
    // thousandth of the leg's length of slack (the closed form's singular pose), < 1 mm.
    let lowest = out.pelvis_offsets.iter().copied().fold(0.0_f64, f64::min);
    assert!(out.pelvis_offsets.iter().all(|&o| o <= 1e-12), "{lowest}");
    assert!(lowest > -1e-3, "{lowest}");
    let (a, b) = (models(&skeleton, &motion), models(&skeleton, &out.motion));
    let worst = a
        .iter()
        .zip(&b)
        .flat_map(|(p, q)| p.positions().zip(q.positions()).map(|(x, y)| x.distance(y)))
        .fold(0.0_f64, f64::max);
    // A fully straight leg bent to 0.999 of its reach brings the knee forward by up to
    // √(2 · 0.001) of the thigh, about 1.3 cm here; every other joint stays.
    assert!(worst < 1.2e-2, "{worst} m");
}

/// The built-in humanoid with every bone of zero length (all joints at one place).
fn collapsed_humanoid() -> Skeleton {
    let humanoid = ikarus_core::humanoid::builtin_humanoid();
    let mut builder = ikarus_core::SkeletonBuilder::new();
    for joint in humanoid.joints() {
        let parent = humanoid.parent(joint).map(|p| humanoid.name(p));
        builder.joint(
            humanoid.name(joint),
            parent,
            ikarus_core::Transform::IDENTITY,
        );
    }
    builder.build().unwrap()
}

/// A skeleton of zero-length bones carries no shape: grounding, retargeting (either side)
/// and tracker calibration refuse it by name instead of writing a clip of nonsense.
#[test]
fn a_skeleton_of_zero_length_bones_is_refused_everywhere() {
    use ikarus_anim::retarget::{RetargetConfig, RetargetError, retarget};
    let collapsed = collapsed_humanoid();
    let map = HumanoidMap::recognise(&collapsed);
    let character = Character {
        skeleton: &collapsed,
        map: &map,
    };
    let still = |skeleton: &Skeleton| {
        let mut motion = Motion::for_skeleton(skeleton, 1.0 / 30.0).unwrap();
        for _ in 0..4 {
            motion.push(skeleton.rest_pose()).unwrap();
        }
        motion
    };
    let motion = still(&collapsed);
    let flat = ikarus_anim::ground::Plane {
        point: DVec3::ZERO,
        normal: DVec3::Y,
    };
    let error = ground_motion(character, &motion, &flat, &GroundConfig::default()).unwrap_err();
    assert!(error.to_string().contains("carries no shape"), "{error}");
    let humanoid = ikarus_core::humanoid::builtin_humanoid();
    let humanoid_map = HumanoidMap::recognise(&humanoid);
    let shaped = Character {
        skeleton: &humanoid,
        map: &humanoid_map,
    };
    let walk = still(&humanoid);
    let config = RetargetConfig::default();
    assert!(matches!(
        retarget(shaped, &walk, character, &config),
        Err(RetargetError::NoShape { side: "target" })
    ));
    assert!(matches!(
        retarget(character, &motion, shaped, &config),
        Err(RetargetError::NoShape { side: "source" })
    ));
    let sample = ikarus_core::trackers::TrackerPose {
        position: DVec3::new(0.0, 1.6, 0.0),
        rotation: glam::DQuat::IDENTITY,
    };
    let frame = [
        (HumanoidBone::Head, sample),
        (HumanoidBone::LeftHand, sample),
        (HumanoidBone::RightHand, sample),
    ];
    let error = ikarus_anim::track::calibrate(character, &frame, &[], 0.0).unwrap_err();
    assert!(error.to_string().contains("carries no shape"), "{error}");
}

/// The walks and the run carried onto the built-in humanoid, whose joints are all limited, on
/// the slope and the bumps: the ankle's limit often keeps a foot from turning to the ground
/// under it (the pelvis lowered, the shin cannot take the slope), and such a foot sat tilted
/// into the ground, its ball or toe tip up to 53 mm (CMU walk), 59 mm (Bandai walk) and 73 mm
/// (Bandai run) below it on the 15° slope, and 37 mm on the bumps. Now the ankle's limit is
/// held against the shin the solve will leave (the pelvis lowered, the knee on its side:
/// `foot::Foot::predicted_shin`), and a foot still left tilted is raised until its lowest
/// point rests on the ground, its toes bent for it as it stands (`foot::Foot::settle`, up to
/// 8 rounds). Measured (2026-11-28): during contacts the soles 0.1 mm (slope) and 0.2 mm
/// (bumps) at most below the ground on the CMU walk, 0.1 and 0.1 on the Bandai walk, 0.1 and
/// 0.0 on the Bandai run; unreached frames on the CMU walk 339 → 142 → 64 (slope) and
/// 191 → 99 → 66 (bumps) of 343, the second step when the pelvis stopped going lower than the
/// knees fold to (`a_foot_on_a_box_above_the_knees_fold_is_not_pushed_into_it`; the Bandai
/// run's slope 1.6 → 0.1 mm with it).
///
/// The 18 cm stairs (30 cm deep), walked at these clips' strides, ask 36–72 cm of rise
/// between the feet. At first a foot ended up to 25 cm inside a step (the Bandai run) and a
/// planted one up to 15 cm above its step. Four changes (2026-11-28): the pelvis no lower
/// than the knees fold to; a foot planted across a step's edge moved onto one step (its toe
/// tip over the next riser had lifted it whole); the clip solved again with the pelvis raised
/// where a foot still ended below its goal (the hip's 120° flexion keeps a swinging foot
/// from rising onto a step); the corners where the pelvis meets its lower bound rounded to
/// 8 m/s². Then a settle round raised a tilted foot only when the solve had put its ankle
/// within 0.1 mm of its goal; now within 5 mm (`PLACED`): a swinging toe in a step's nose
/// 6.4 → 0.1 mm (CMU walk). Now every sole at most 0.1 mm below the ground (slope and bumps
/// 0.2 mm; asserted under 1 mm); the Bandai walk's stance foot hangs up to 45 mm above its
/// step in two frames where the other foot's step needs the pelvis higher than it reaches
/// down from (asserted within 5 cm on the stairs); the hips accelerate within the clip's own
/// + 10 m/s², no foot across an edge.
#[test]
fn a_limited_humanoid_stands_on_slopes_and_bumps() {
    let targets = common::retarget_targets("grounding a limited humanoid");
    let Some((_, skeleton, map)) = targets.iter().find(|(name, ..)| *name == "builtin") else {
        return;
    };
    let mut failures = Vec::new();
    for file in CLIPS {
        let character = Character { skeleton, map };
        let Some(motion) = common::retargeted(file, "grounding a limited humanoid", character)
        else {
            return;
        };
        for (name, ground) in terrains_along(skeleton, map, &motion) {
            let ground = &*ground;
            let stepped = name.starts_with("stairs");
            let out = ground_motion(character, &motion, ground, &GroundConfig::default()).unwrap();
            assert!(skeleton.limit_violation(&out.motion.frames()[0]).is_none());
            let m = measure(skeleton, map, &motion, &out, (ground, stepped));
            println!(
                "{file} onto the built-in humanoid, {name}: {}, hips {:.1} / {:.1} m/s², {} unreached",
                m.summary(),
                m.acceleration.0,
                m.acceleration.1,
                out.unreached
            );
            let what = format!("{file} on {name}");
            // On the stairs a foot may hang above its step where the other's needs the
            // pelvis higher than it reaches down from (see above).
            let above = if stepped { 5e-2 } else { 5e-3 };
            if !(m.contact.0 > -3e-3 && m.contact.1 < above) {
                failures.push(format!("{what}: soles {:?}", m.contact));
            }
            if m.below >= 1e-3 {
                failures.push(format!("{what}: {} m below", m.below));
            }
            if m.slide >= 1e-2 || m.across > 0 {
                failures.push(format!("{what}: slide {} m, {} across", m.slide, m.across));
            }
            if m.acceleration.0 > m.acceleration.1 + POP_MARGIN {
                failures.push(format!("{what}: hips {:?} m/s²", m.acceleration));
            }
            for pose in out.motion.frames() {
                if let Some((joint, v)) = skeleton.limit_violation(pose) {
                    failures.push(format!(
                        "{what}: {} past its limit by {v}",
                        skeleton.name(joint)
                    ));
                    break;
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The built-in humanoid standing still for a second (30 frames of its rest pose), its rest
/// pose's model frames and its lowest joint's height (the floor).
struct Still {
    skeleton: Skeleton,
    map: HumanoidMap,
    motion: Motion,
    rest: ModelPose,
    lowest: f64,
}

fn standing_still() -> Still {
    let skeleton = ikarus_core::humanoid::builtin_humanoid();
    let map = HumanoidMap::recognise(&skeleton);
    let mut motion = Motion::for_skeleton(&skeleton, 1.0 / 30.0).unwrap();
    for _ in 0..30 {
        motion.push(skeleton.rest_pose()).unwrap();
    }
    let mut rest = ModelPose::new(&skeleton);
    fk::forward_kinematics(&skeleton, &skeleton.rest_pose(), &mut rest);
    let lowest = rest.positions().map(|p| p.y).fold(f64::INFINITY, f64::min);
    Still {
        skeleton,
        map,
        motion,
        rest,
        lowest,
    }
}

/// A foot's sole points (its `soles` joints and, when known, its toe tip) in `m` beside the
/// same points in `rest`.
fn sole_points(
    soles: &[JointId],
    toe_tip: Option<(JointId, DVec3)>,
    (m, rest): (&ModelPose, &ModelPose),
) -> Vec<(DVec3, DVec3)> {
    let mut points: Vec<(DVec3, DVec3)> = soles
        .iter()
        .map(|&j| (m.position(j), rest.position(j)))
        .collect();
    if let Some((toes, tip)) = toe_tip {
        points.push((
            m.position(toes) + m.rotation(toes) * tip,
            rest.position(toes) + rest.rotation(toes) * tip,
        ));
    }
    points
}

/// One foot on a box higher than the knee folds to: the built-in humanoid (its knees hinge
/// 0–150°, which keeps the ankle at least 21 cm from the hip) standing still, its left foot on
/// a 65 cm box, its right on the floor. The pelvis followed the lower foot, so the left leg
/// folded onto its limit short of the box's top and the ankle stood 12 cm inside the box.
/// Now the pelvis never goes lower than the folded knees reach (`fold_bend` in
/// `ground/mod.rs`): the left foot stands on the box, and the right, which then cannot reach
/// the floor, hangs above it rather than a foot going into the ground. Checked by FK against
/// the terrain at every sole point (ankle, ball, toe tip).
#[test]
fn a_foot_on_a_box_above_the_knees_fold_is_not_pushed_into_it() {
    let still = standing_still();
    let (skeleton, map, rest, lowest) = (&still.skeleton, &still.map, &still.rest, still.lowest);
    let character = Character { skeleton, map };
    // The left foot is at +X; the box's edge halfway between the feet.
    let top = lowest + 0.65;
    let terrain =
        GroundFn(move |x: f64, _z: f64| Some((if x > 0.0 { top } else { lowest }, DVec3::Y)));
    let out = ground_motion(character, &still.motion, &terrain, &GroundConfig::default()).unwrap();
    assert!((out.floor - lowest).abs() < 1e-9, "{}", out.floor);
    let soles = soles(map);
    let b = models(skeleton, &out.motion);
    for (f, m) in b.iter().enumerate() {
        // Per foot, its sole points' heights above the ground under them less their heights
        // above the floor at rest: the lowest is 0 on a foot resting on the ground.
        let rests = [0, 1].map(|s| {
            let points = sole_points(&soles[s], out.toe_tips[s], (m, rest));
            points
                .iter()
                .map(|(p, r)| {
                    let ground = terrain.sample(p.x, p.z).unwrap().0;
                    assert!(
                        p.y >= ground - 1e-3,
                        "frame {f} foot {s}: {p} under {ground}"
                    );
                    (p.y - ground) - (r.y - lowest)
                })
                .fold(f64::INFINITY, f64::min)
        });
        // The left foot rests on the box (on its lowest point: the ankle's limit tilts it
        // against a shin folded this far).
        assert!(
            rests[0].abs() < 1e-3,
            "frame {f}: left foot {} m off the box",
            rests[0]
        );
        // The pelvis went up for it, and the right foot hangs above the floor.
        assert!(rests[1] > 1e-2, "frame {f}: right foot {} m up", rests[1]);
        assert!(skeleton.limit_violation(&out.motion.frames()[f]).is_none());
    }
    let hips = map.joint(HumanoidBone::Hips).unwrap();
    println!(
        "pelvis up {:.3} m",
        b[0].position(hips).y - rest.position(hips).y
    );
}

/// A foot the animation plants with a step's edge under its sole (the built-in humanoid
/// standing, an 18 cm step 6 cm in front of its ankles, under the balls of its feet) is moved
/// along its length, as little as takes the whole sole onto one step, and held there for
/// the contact. Before, the ball and toes stood on the step and the heel hung in the air (the
/// contact counted "across an edge" in the table above: 61 of the CMU walk's frames on the
/// stairs, 12 of the Bandai walk's; now none). Checked by FK against the terrain.
#[test]
fn a_foot_planted_across_a_steps_edge_is_moved_onto_one_step() {
    let still = standing_still();
    let (skeleton, map, rest, lowest) = (&still.skeleton, &still.map, &still.rest, still.lowest);
    let character = Character { skeleton, map };
    let soles = soles(map);
    let edge = rest.position(soles[0][0]).z + 0.06;
    let terrain = GroundFn(move |_x: f64, z: f64| {
        Some((lowest + if z > edge { 0.18 } else { 0.0 }, DVec3::Y))
    });
    let out = ground_motion(character, &still.motion, &terrain, &GroundConfig::default()).unwrap();
    let b = models(skeleton, &out.motion);
    #[allow(clippy::needless_range_loop)] // one index into soles, shifts and tips
    for s in 0..2 {
        let shift = out.shifts[0][s];
        for (f, m) in b.iter().enumerate() {
            assert!(out.toe_tips[s].is_some());
            let points = sole_points(&soles[s], out.toe_tips[s], (m, rest));
            // The whole sole on one step, resting on it as it stood on the floor.
            let grounds: Vec<f64> = points
                .iter()
                .map(|(p, _)| terrain.sample(p.x, p.z).unwrap().0)
                .collect();
            assert!(grounds.iter().all(|&g| g == grounds[0]), "{f}: {grounds:?}");
            let rests = points
                .iter()
                .map(|(p, r)| (p.y - grounds[0]) - (r.y - lowest))
                .fold(f64::INFINITY, f64::min);
            assert!(rests.abs() < 1e-3, "frame {f} foot {s}: {rests}");
            // The same move in every frame (one contact, no slide), the least that does it.
            assert!((out.shifts[f][s] - shift).length() < 1e-12);
            let ankle = m.position(soles[s][0]) - rest.position(soles[s][0]);
            assert!(
                (ankle - shift).reject_from(DVec3::Y).length() < 1e-3,
                "{f}: {ankle}"
            );
        }
        assert!(shift.length() > 0.0 && shift.length() < 0.07, "{shift}");
    }
}

/// The shared walks and the run on the stairs frame by frame, as a game runs the grounder
/// (`FrameGrounder`, its goals for the hips and feet solved by the full-body solver each
/// frame, the floor where the clip's own is): the soles on the ground during contacts and
/// never below it. Unlike the clip's grounding, a foot planted across a step's edge is not
/// moved off it (161 / 14 / 1 such frames, CMU walk / Bandai walk / Bandai run: it stands on
/// the higher part, its toes bent). Tried: choosing the move as the foot comes down (the
/// grounder sees no later frame) and holding it once planted: 31 / 2 / 3, but the move
/// jumped by up to 15 cm between frames while the foot came down; dropped.
#[test]
fn frame_by_frame_soles_stand_on_the_stairs() {
    use ikarus_anim::ground::{FrameGroundConfig, FrameGrounder};
    use ikarus_solve::body::{BodyConfig, BodyRig, BodyScratch};
    use ikarus_solve::{Effector, Goal, IkTask};
    let mut failures = Vec::new();
    for file in CLIPS {
        let Some((skeleton, map, motion)) = open(file) else {
            return;
        };
        let character = Character {
            skeleton: &skeleton,
            map: &map,
        };
        let [_, (_, stairs), _] = terrains_along(&skeleton, &map, &motion);
        let stairs = &*stairs;
        // The clip's floor and toe tips as the clip's grounding finds them.
        let clip = ground_motion(character, &motion, stairs, &GroundConfig::default()).unwrap();
        let config = FrameGroundConfig {
            floor: clip.floor,
            ..FrameGroundConfig::default()
        };
        let mut grounder = FrameGrounder::new(character, &config).unwrap();
        let rig = BodyRig::from_map(&skeleton, &map, &BodyConfig::default()).unwrap();
        let mut scratch = BodyScratch::new(&skeleton, &rig);
        let (hips, ankles) = (grounder.hips(), grounder.ankles());
        let mut task = IkTask::from_effectors(
            [hips, ankles[0], ankles[1]]
                .map(|j| Effector::new(j, Goal::default()))
                .to_vec(),
        );
        let mut model = ModelPose::new(&skeleton);
        let (mut frames, mut weights, mut unreached) = (Vec::new(), Vec::new(), 0);
        for pose in motion.frames() {
            fk::forward_kinematics(&skeleton, pose, &mut model);
            let goals = grounder.goals(&model, stairs, motion.frame_time());
            task.effectors[0].goal = goals.hips;
            task.effectors[1].goal = goals.feet[0];
            task.effectors[2].goal = goals.feet[1];
            let mut solved = pose.clone();
            let report = rig.solve_with(
                &skeleton,
                &task,
                &BodyConfig::default(),
                &mut solved,
                &mut scratch,
            );
            unreached += usize::from(report.status != ikarus_solve::SolveStatus::Converged);
            for (joint, rotation) in goals.toes.into_iter().flatten() {
                solved[joint].rotation = rotation;
            }
            frames.push(solved);
            weights.push(goals.weights);
        }
        let mut out_motion = Motion::for_skeleton(&skeleton, motion.frame_time()).unwrap();
        for pose in frames {
            out_motion.push(pose).unwrap();
        }
        let out = ikarus_anim::ground::Grounded {
            motion: out_motion,
            weights,
            unreached,
            ..clip
        };
        let m = measure(&skeleton, &map, &motion, &out, (stairs, true));
        println!(
            "{file} frame by frame on the stairs: {}, {} unreached",
            m.summary(),
            out.unreached
        );
        if !(m.contact.0 > -1e-3 && m.contact.1 < 5e-3) || m.below >= 1e-3 {
            failures.push(format!(
                "{file}: soles {:?}, {} m below",
                m.contact, m.below
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
