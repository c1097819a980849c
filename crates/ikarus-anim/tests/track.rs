//! Tracker solving measured against held-out mocap: trackers made from each shared BVH clip's
//! own bone transforms (head and hands, + hips, + feet), calibrated from the clip's reference
//! pose standing on its floor, solved frame by frame; every body joint compared with the clip
//! by FK (MPJPE), the feet's slide during the clip's own contacts, and the largest turn of a
//! joint between frames against the clip's own. Beside it a plain baseline on the same
//! trackers: Levenberg–Marquardt on head and hands with the pelvis following the head.
//! `cargo test -p ikarus-anim --test track -- --nocapture` prints a line per clip and mode.
//!
//! ## What explains the numbers
//!
//! - 6-point: what no tracker sees (clavicles, knee swivel) stays at the reference pose's; on
//!   the pymo walk the upper arms are 4–5 cm off and the knees 2 cm. Turning the clavicles a
//!   share of the way to the hands was tried: worse at every share.
//! - 6-point, the elbows of motion-capture skeletons (free elbows): the hand's roll about the
//!   forearm now goes to the elbow and the swivel follows the wrist's swing (plus a share of
//!   the upper arm's turn), `ikarus_solve::body`'s limbs. Before, the swivel that turned the
//!   wrist least put `mass_hik`'s elbows 117° round from the clip's (38–42 cm off; the clip
//!   carries the roll in the elbow) and mocapbank's 14–18 cm off: 6-point went from 1.90
//!   (`mass_hik` 5.07, mocapbank 3.15) to 1.43 cm (1.69, 2.02); 4-point 8.31 → 7.84 and
//!   3-point 12.36 → 11.99 cm. The same rule on the legs made them worse (CMU walk's knees
//!   1.8 → 5.5 cm): a knee hardly rolls, the foot's turn comes from the hip.
//! - A half turn of a straight leg about its hip–ankle line between frames (the limb stage's two
//!   answers) is taken back: that removed the 180° flips on 7 clips and brought 6-point from
//!   2.30 to 1.89 cm. Single pops of 70–115° remain on `mass_hik` and mocapbank (4- and
//!   3-point).
//! - 3- and 4-point: the stepping legs walk out of phase with the clip (on the pymo walk the feet
//!   are 37 cm off on average with the hips tracked), hence the slides.
//! - 3- and 4-point on a run: steps now shorten when the pelvis outpaces feet stepping in turn
//!   (`StepConfig::duration`). Before, `mass_hik`'s feet fell 2.9 m behind and were put back
//!   under the body at once (a 117° pop): 4-point 12.75 → 8.50 cm (turn 117° → 26°), 3-point
//!   21.35 → 14.68 cm (103° → 30°); means 7.84 → 7.42 and 11.99 → 11.32 cm, the other clips
//!   unchanged. Tried and dropped: letting a foot out of the leg's reach lift while the other
//!   is in the air (a run's flight): the feet then reach their goals, but `mass_hik` 4-point
//!   9.7–10.3 cm. Tried and dropped too: timing steps by the pelvis's lowest points (a walk's
//!   heel strikes): 4-point 7.84 → 10.42 cm.
//! - 3- and 4-point, knees that snapped: a stepped foot left behind stretched its leg straight,
//!   and the step's first frames, a few centimetres nearer, bent the knee 30–40° at once (the
//!   largest turns: Bandai run 42.4° against its own 19.2°, `mixamo` 39.4° against 19.2°). The
//!   stepped feet's goals now reach softly (`StepConfig::soft_reach`): past 90% of the leg
//!   they are drawn in, never to full stretch, for a foot off its standing place. Every clip's
//!   largest turn is now within its own + 15° (asserted; was over on 4 clips at 4 points and
//!   4 at 3): Bandai run 35.3 → 23.9° (4-point) and 42.4 → 20.7° (3-point), `mixamo` 39.4 →
//!   22.6°, `mass_hik` 26.3 → 9.6°. Means 7.42 → 7.27 cm (4-point) and 10.34 → 10.39 cm
//!   (3-point).
//! - 3- and 4-point, steps landing as wide as the reference pose: CMU's reference spreads the
//!   ankles 0.38 m to each side of the pelvis (the hip joints 0.09 m), and every step landed
//!   there, the feet 33–35 cm too far out for the whole walk (found by the feet's mean offset
//!   from the clip along and across the walk). Steps now land under the hip joints; a foot
//!   may still stand where the calibration put it (the static `pfnn` clip keeps its wide
//!   stance, 0.25 cm). CMU walk 11.17 → 7.90 cm (4-point) and 12.45 → 8.94 (3-point), CMU
//!   jump 7.70 → 5.42 and 11.05 → 9.08; means 7.27 → 6.73 and 10.39 → 9.88 cm; Godette
//!   retargeted 4.64 → 4.15 cm. Landing under the hips from the first frame as well: `pfnn`
//!   0.25 → 7.57 cm. Then the steps' lead (`StepConfig::lead`), set to a step's duration
//!   while the steps landed wide, measured again: 0.5 / 0.75 / 1 / 1.25 give 4-point means of
//!   6.38 / 6.52 / 6.73 / 7.0 cm and 3-point 9.58 / 9.72 / 9.88 / 10.1; 0.5 kept (the
//!   walks' feet had been 10–17 cm ahead of the clip's on average). Narrowing the steps'
//!   width to half the hips' (a walk's feet land nearer the midline) was tried: 4-point 6.46
//!   but 3-point 10.16 cm (Bandai walk 9.64 → 12.22); dropped.
//! - 3-point, the guessed pelvis: it sat under the head as the reference has it, so a body
//!   bending over (mocapbank) was taken for a crouch, the hips 38 cm off. A head tilted past
//!   the neck's share (`TrackConfig::neck_tilt`, 20°) now leans the trunk (the guessed
//!   pelvis's place and turn) by the rest: mocapbank 19.70 → 10.08 cm, the mean 11.32 →
//!   10.34 cm, no clip worse. Leaning by a
//!   share of the whole tilt instead was worse on the walks (pymo 14.09 → 14.5–16.3 cm:
//!   a walker's head nods while the trunk stays upright).
//! - Tried for the 3- and 4-point legs and dropped: the pelvis's sideways sway gating which foot
//!   may step (no gain), and legs from examples (motion matching on the other nine clips: the
//!   nearest example's foot velocities, by the pelvis's velocity and height and the feet's
//!   places): 13.9 cm (4-point) and 20.5 cm (3-point) against the rule's 8.3 and 12.4.
//! - Elbow and knee trackers (`cargo test -p ikarus-anim --test track elbow -- --nocapture`, 6
//!   points plus them): a knee tracker's bend goal puts the knees exact (CMU walk 1.4 → 0.0 cm,
//!   pymo walk 1.9 → 0.0 cm); an elbow tracker also turns the clavicle so the upper arm reaches it
//!   (elbows 2.3 → 0.8 and 3.4 → 0.9 cm).

mod common;

use glam::DVec3;
use ikarus_anim::retarget::Character;
use ikarus_anim::retarget::contacts::{self, ContactConfig};
use ikarus_anim::track::{self, Points, TrackConfig};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::trackers::{Track, TrackerPose, Trackers};
use ikarus_core::{JointId, LocalPose, ModelPose, Motion, Skeleton, fk};
use ikarus_solve::lm::LmConfig;
use ikarus_solve::{Effector, Goal, IkTask, SolverConfig, solve};

/// Each clip scaled so that its upper plus lower leg is 0.85 m (an adult's): errors in metres.
const LEG: f64 = 0.85;

fn model_of(skeleton: &Skeleton, pose: &LocalPose) -> ModelPose {
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, pose, &mut model);
    model
}

struct Clip {
    name: &'static str,
    skeleton: Skeleton,
    map: HumanoidMap,
    motion: Motion,
}

fn open(file: &'static str) -> Option<Clip> {
    let document = common::open_with_leg(file, "tracker solving", LEG)?;
    Some(Clip {
        name: file,
        map: HumanoidMap::recognise(&document.skeleton),
        motion: document.motion.unwrap(),
        skeleton: document.skeleton,
    })
}

impl Clip {
    fn character(&self) -> Character<'_> {
        Character {
            skeleton: &self.skeleton,
            map: &self.map,
        }
    }
}

/// What a run measured.
#[derive(Debug, Default)]
struct Measured {
    frames: usize,
    mpjpe: f64,
    worst_frame: f64,
    /// Largest horizontal drift of an ankle within one of the clip's foot contacts.
    slide: f64,
    /// Largest turn of a joint between consecutive frames, radians, and the clip's own.
    turn: f64,
    clip_turn: f64,
    held: usize,
}

/// The clip's floor: the lower ankle's low level less the reference's ankle height above its
/// lowest joint (as grounding measures it).
fn floor_of(clip: &Clip, truth: &[ModelPose], reference: &ModelPose) -> f64 {
    track::floor_of(clip.character(), reference, truth).unwrap()
}

/// Trackers on `bones` at the bones' frames: frame 0 the reference standing on `floor` under
/// the first frame's head (calibration), then every frame of the clip.
fn trackers_of(
    clip: &Clip,
    truth: &[ModelPose],
    reference: &ModelPose,
    floor: f64,
    bones: &[HumanoidBone],
) -> Trackers {
    let head = clip.map.joint(HumanoidBone::Head).unwrap();
    let lowest = reference
        .positions()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    let first = truth[0].position(head);
    let shift = DVec3::new(
        first.x - reference.position(head).x,
        floor - lowest,
        first.z - reference.position(head).z,
    );
    Trackers {
        fps: clip.motion.frame_rate(),
        tracks: bones
            .iter()
            .map(|&bone| {
                let j = clip.map.joint(bone).unwrap();
                let sample = |m: &ModelPose, shift: DVec3| TrackerPose {
                    position: m.position(j) + shift,
                    rotation: m.rotation(j),
                };
                Track {
                    bone,
                    samples: std::iter::once(sample(reference, shift))
                        .chain(truth.iter().map(|m| sample(m, DVec3::ZERO)))
                        .collect(),
                    offset: None,
                }
            })
            .collect(),
    }
}

fn measure(clip: &Clip, truth: &[ModelPose], solved: &[LocalPose]) -> Measured {
    let skeleton = &clip.skeleton;
    let body: Vec<JointId> = HumanoidBone::BODY
        .iter()
        .filter_map(|&b| clip.map.joint(b))
        .collect();
    let models: Vec<ModelPose> = solved.iter().map(|p| model_of(skeleton, p)).collect();
    let mut m = Measured {
        frames: truth.len(),
        ..Measured::default()
    };
    for (model, t) in models.iter().zip(truth) {
        #[allow(clippy::cast_precision_loss)] // joint counts
        let e = body
            .iter()
            .map(|&j| model.position(j).distance(t.position(j)))
            .sum::<f64>()
            / body.len() as f64;
        m.mpjpe += e;
        m.worst_frame = m.worst_frame.max(e);
    }
    #[allow(clippy::cast_precision_loss)] // frame counts
    {
        m.mpjpe /= truth.len() as f64;
    }
    // The clip's own foot contacts (height above its floor and speed, as retargeting detects
    // them); our ankle's drift within each.
    let dt = clip.motion.frame_time();
    for bone in [HumanoidBone::LeftFoot, HumanoidBone::RightFoot] {
        let ankle = clip.map.joint(bone).unwrap();
        let track: Vec<DVec3> = truth.iter().map(|t| t.position(ankle)).collect();
        let low = contacts::low_level(&track.iter().map(|p| p.y).collect::<Vec<_>>());
        let heights: Vec<f64> = track.iter().map(|p| p.y - low).collect();
        let speeds = contacts::speeds(&track, dt);
        for (a, b) in contacts::detect_foot(&heights, &speeds, dt, &ContactConfig::default()) {
            // Beyond the clip's own slide in the contact.
            let drift = |p: &dyn Fn(usize) -> DVec3| {
                (a..=b)
                    .map(|f| (p(f) - p(a)).reject_from(DVec3::Y).length())
                    .fold(0.0, f64::max)
            };
            let ours = drift(&|f| models[f].position(ankle));
            let clip_own = drift(&|f| truth[f].position(ankle));
            m.slide = m.slide.max(ours - clip_own);
        }
    }
    let clip_frames = &clip.motion.frames()[1..=truth.len()];
    for (frames, out) in [(solved, &mut m.turn), (clip_frames, &mut m.clip_turn)] {
        // From the second solved frame: the first starts from the reference pose.
        for w in frames.windows(2).skip(1) {
            for &j in &body {
                let a = w[0][j].rotation.angle_between(w[1][j].rotation);
                *out = out.max(a);
            }
        }
    }
    m
}

/// Calibrates from the recording's frame 0 and solves the frames after it.
fn solve_clip(
    character: Character<'_>,
    trackers: &Trackers,
    config: &TrackConfig,
) -> (Vec<LocalPose>, Vec<track::FrameReport>, track::Calibration) {
    let bones = track::used_bones(trackers, config).unwrap();
    let mut frame = Vec::new();
    trackers.frame_into(0, &mut frame);
    let calibration = track::calibrate(character, &frame, &[], config.floor).unwrap();
    let mut solver =
        track::TrackSolver::new(character, &bones, calibration.clone(), config, trackers.fps)
            .unwrap();
    let ground = ikarus_anim::ground::Plane {
        point: DVec3::new(0.0, config.floor, 0.0),
        normal: DVec3::Y,
    };
    let mut pose = solver.start_pose().clone();
    let (mut poses, mut reports) = (Vec::new(), Vec::new());
    for f in 1..trackers.len() {
        trackers.frame_into(f, &mut frame);
        reports.push(solver.solve_frame(&frame, &ground, &mut pose));
        poses.push(pose.clone());
    }
    (poses, reports, calibration)
}

/// The baseline: LM on head and hands (6-D) from the previous frame (the reference pose at
/// first), the pelvis moved first by the head's move.
fn baseline(clip: &Clip, truth: &[ModelPose]) -> Vec<LocalPose> {
    let skeleton = &clip.skeleton;
    let joint = |b| clip.map.joint(b).unwrap();
    let (hips, head) = (joint(HumanoidBone::Hips), joint(HumanoidBone::Head));
    let lm = SolverConfig::Lm(LmConfig::default());
    // From the reference pose, as the tracker solve starts (a VR user's first pose is not
    // known).
    let (mut pose, _) = ikarus_anim::retarget::align::reference(skeleton, &clip.map, None);
    let mut out = Vec::with_capacity(truth.len());
    for t in truth {
        let model = model_of(skeleton, &pose);
        let parent = skeleton
            .parent(hips)
            .map_or(glam::DAffine3::IDENTITY, |p| model[p]);
        let moved = t.position(head) - model.position(head);
        pose[hips].translation += parent.inverse().transform_vector3(moved);
        let task = IkTask::from_effectors(
            [
                HumanoidBone::Head,
                HumanoidBone::LeftHand,
                HumanoidBone::RightHand,
            ]
            .map(|b| Effector::new(joint(b), Goal::from_frame(t, joint(b))))
            .to_vec(),
        );
        solve(skeleton, &task, &lm, &mut pose);
        out.push(pose.clone());
    }
    out
}

#[test]
#[allow(clippy::too_many_lines)] // per clip: three modes, the baseline, the printout, the guards
fn every_shared_clip_from_three_four_and_six_points() {
    let files = [
        "cmu_02_01_walk_cgspeed_crlf.bvh",
        "cmu_01_01_jump_cgspeed.bvh",
        "bandainamco_ds1_walk_normal_002.bvh",
        "bandainamco_ds1_run_normal_001.bvh",
        "bvhmatlab_milad_all6ch_xyz_crlf.bvh",
        "mass_hik_run_crlf.bvh",
        "mixamo_rig_test_freebvh.bvh",
        "mocapbank_zxy_crlf.bvh",
        "pfnn_hierarchy_30fps_crlf.bvh",
        "pymo_AV_8Walk_Meredith_HVHA_Rep1.bvh",
    ];
    // Per mode, the sum of MPJPE over the clips.
    let mut sums = [0.0; 3];
    let mut baseline_sum = 0.0;
    let mut clips = 0.0;
    for file in files {
        if std::env::var("TRACK_ONLY").is_ok_and(|only| only != file) {
            continue;
        }
        let Some(clip) = open(file) else { return };
        let character = clip.character();
        let (_, reference) =
            ikarus_anim::retarget::align::reference(&clip.skeleton, &clip.map, None);
        // At most 10 s of each clip, from its second frame (CMU's files open with a T-pose).
        let frames = clip
            .motion
            .len()
            .min((10.0 * clip.motion.frame_rate()) as usize);
        let truth: Vec<ModelPose> = clip.motion.frames()[1..frames]
            .iter()
            .map(|p| model_of(&clip.skeleton, p))
            .collect();
        let floor = floor_of(&clip, &truth, &reference);
        clips += 1.0;
        for (k, points) in [Points::Six, Points::Four, Points::Three]
            .into_iter()
            .enumerate()
        {
            let trackers = trackers_of(&clip, &truth, &reference, floor, points.bones());
            let config = TrackConfig {
                floor,
                ..TrackConfig::default()
            };
            let (solved, reports, calibration) = solve_clip(character, &trackers, &config);
            let mut m = measure(&clip, &truth, &solved);
            m.held = reports.iter().filter(|r| !r.held.is_empty()).count();
            let unconverged = reports
                .iter()
                .filter(|r| r.solve.status != ikarus_solve::SolveStatus::Converged)
                .count();
            println!(
                "{} {}-point: {} frames, MPJPE {:.2} cm (worst frame {:.2}), slide {:.2} cm, turn {:.1}° (clip {:.1}°), scale {:.4}, held {}, unconverged {}",
                clip.name,
                points.bones().len(),
                m.frames,
                m.mpjpe * 100.0,
                m.worst_frame * 100.0,
                m.slide * 100.0,
                m.turn.to_degrees(),
                m.clip_turn.to_degrees(),
                calibration.scale,
                m.held,
                unconverged,
            );
            sums[k] += m.mpjpe;
            assert!(solved.iter().all(LocalPose::is_finite));
            assert_eq!(m.held, 0, "{file}: a good recording held a tracker");
            if points == Points::Six {
                // Per clip, a regression guard at what this version reaches (the mean's
                // aim is asserted below; the 4- and 3-point aims, 4 and 8 cm, are not met
                // yet: BENCHMARKS.md, "Trackers").
                assert!(m.mpjpe < 0.025, "{file}: 6-point MPJPE {}", m.mpjpe);
                assert!(m.slide < 0.01, "{file}: 6-point slide {}", m.slide);
            }
            // No pops at any point count: no joint turns more between frames than the
            // clip's own largest turn plus 15° (4- and 3-point since the stepped legs'
            // soft reach: before it, knees snapping from straight turned up to 42°).
            assert!(
                m.turn <= m.clip_turn + 15_f64.to_radians(),
                "{file}: {}-point turn {}° against the clip's {}°",
                points.bones().len(),
                m.turn.to_degrees(),
                m.clip_turn.to_degrees()
            );
        }
        let b = measure(&clip, &truth, &baseline(&clip, &truth));
        baseline_sum += b.mpjpe;
        println!(
            "{} baseline (LM, head and hands, pelvis follows the head): MPJPE {:.2} cm, slide {:.2} cm",
            clip.name,
            b.mpjpe * 100.0,
            b.slide * 100.0
        );
    }
    if clips > 0.0 {
        let [six, four, three] = sums.map(|x| x / clips);
        let plain = baseline_sum / clips;
        println!(
            "mean over {clips} clips: 6-point {:.2} cm, 4-point {:.2} cm, 3-point {:.2} cm; baseline (head and hands) {:.2} cm",
            six * 100.0,
            four * 100.0,
            three * 100.0,
            plain * 100.0
        );
        // From the same trackers and the same start, 3 points are at least as good as the
        // plain baseline on average (measured 9.58 against 12.53 cm).
        assert!(
            three <= plain,
            "3-point {three} against the baseline's {plain}"
        );
        // The 6-point aim: 1.5 cm (measured 1.43).
        assert!(six <= 0.015, "6-point mean MPJPE {six}");
        assert!(four < 0.08, "4-point mean MPJPE {four}");
        assert!(three < 0.11, "3-point mean MPJPE {three}");
    }
}

#[test]
fn elbow_and_knee_trackers_bend_the_limbs_their_way() {
    // Six points, then with elbow trackers, then with knee trackers too: a knee tracker's bend
    // goal turns the knee to the clip's side (the hip and ankle are tracked); an elbow
    // tracker also turns the clavicle so that the upper arm reaches it (measured: elbows 1.8
    // → 0.8 and 2.9 → 0.9 cm, knees 1.4 → 0.0 and 1.9 → 0.0 cm).
    use HumanoidBone as B;
    for file in [
        "cmu_02_01_walk_cgspeed_crlf.bvh",
        "pymo_AV_8Walk_Meredith_HVHA_Rep1.bvh",
    ] {
        let Some(clip) = open(file) else { return };
        let character = clip.character();
        let (_, reference) =
            ikarus_anim::retarget::align::reference(&clip.skeleton, &clip.map, None);
        let truth: Vec<ModelPose> = clip.motion.frames()[1..600.min(clip.motion.len())]
            .iter()
            .map(|p| model_of(&clip.skeleton, p))
            .collect();
        let floor = floor_of(&clip, &truth, &reference);
        let mid = |m: &ModelPose, bones: &[B]| {
            bones
                .iter()
                .map(|&b| {
                    let j = clip.map.joint(b).unwrap();
                    m.position(j)
                })
                .collect::<Vec<_>>()
        };
        let error = |solved: &[LocalPose], bones: &[B]| {
            let mut sum = 0.0;
            for (pose, t) in solved.iter().zip(&truth) {
                let m = model_of(&clip.skeleton, pose);
                sum += mid(&m, bones)
                    .iter()
                    .zip(mid(t, bones))
                    .map(|(a, b)| a.distance(b))
                    .sum::<f64>();
            }
            #[allow(clippy::cast_precision_loss)] // counts
            let mean = sum / (solved.len() * bones.len()) as f64;
            mean
        };
        let six = Points::Six.bones();
        let elbows = [B::LeftLowerArm, B::RightLowerArm];
        let knees = [B::LeftLowerLeg, B::RightLowerLeg];
        let config = TrackConfig {
            floor,
            ..TrackConfig::default()
        };
        let run = |bones: &[B]| {
            let trackers = trackers_of(&clip, &truth, &reference, floor, bones);
            solve_clip(character, &trackers, &config).0
        };
        let plain = run(six);
        let with_elbows = run(&[six, &elbows].concat());
        let with_knees = run(&[six, &elbows, &knees].concat());
        let (e0, e1) = (error(&plain, &elbows), error(&with_elbows, &elbows));
        let (k0, k1) = (error(&with_elbows, &knees), error(&with_knees, &knees));
        println!(
            "{file}: elbows {:.1} → {:.1} cm with elbow trackers; knees {:.1} → {:.1} cm with knee trackers",
            e0 * 100.0,
            e1 * 100.0,
            k0 * 100.0,
            k1 * 100.0
        );
        assert!(e1 < 0.5 * e0, "{file}: elbows {e0} → {e1}");
        assert!(k1 < 0.2 * k0, "{file}: knees {k0} → {k1}");
    }
}
