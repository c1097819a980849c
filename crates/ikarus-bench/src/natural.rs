//! The naturalness protocol: how close to a real posture does each solver land when
//! it is given only a few effector positions?
//!
//! Three groups of clips from `../shared/data/bvh`, at 30 frames per second and in metres:
//! the CMU walk and jump on their own skeleton (31 joints, no limits), the Bandai Namco walk and
//! run on theirs (22 joints, no limits), and the CMU walk and jump carried onto the built-in
//! humanoid through the humanoid maps and projected onto its joint limits (which then apply). From each clip the middle fifth
//! is held out; one posture model per group is learned on the rest. Every second held-out
//! frame becomes three tasks — both hands; both hands and the head; both hands and both feet —
//! with the frame's joint positions as goals, solved from the model's mean posture with the
//! hips (root) at the held-out frame's transform, the same start for every solver. Scored by
//! MPJPE: the mean distance over all joints between the solved and the held-out posture.

use ikarus_anim::posture::{self, HumanoidTransfer};
use ikarus_anim::retarget::{self, Character, RetargetConfig};
use ikarus_core::humanoid::builtin_humanoid;
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{LocalPose, ModelPose, Skeleton, fk};
use ikarus_formats::open;
use ikarus_solve::example_based::{ExampleConfig, ModelRef, PostureModel};
use ikarus_solve::{Effector, Goal, IkTask, SolverConfig, solve};
use std::sync::Arc;

/// A clip of the protocol: file in `bvh/`, kind, frames to step over to reach 30 fps, metres
/// per file unit.
pub type Clip = (&'static str, &'static str, usize, f64);

/// CMU units (cgspeed conversion) in metres.
const CMU_UNIT: f64 = 0.056_444;

/// The groups: name, clips, and whether the clips are carried onto the built-in humanoid.
pub const GROUPS: [(&str, &[Clip], bool); 3] = [
    (
        "cmu",
        &[
            ("cmu_02_01_walk_cgspeed_crlf.bvh", "walk", 4, CMU_UNIT),
            ("cmu_01_01_jump_cgspeed.bvh", "jump", 4, CMU_UNIT),
        ],
        false,
    ),
    (
        "bandai",
        &[
            ("bandainamco_ds1_walk_normal_002.bvh", "walk", 1, 0.01),
            ("bandainamco_ds1_run_normal_001.bvh", "run", 1, 0.01),
        ],
        false,
    ),
    (
        "humanoid",
        &[
            ("cmu_02_01_walk_cgspeed_crlf.bvh", "walk", 4, CMU_UNIT),
            ("cmu_01_01_jump_cgspeed.bvh", "jump", 4, CMU_UNIT),
        ],
        true,
    ),
];

/// The group of clips not learned from: a model learned on the CMU and Bandai Namco clips, tested
/// on clips of other performers and studios (their middle fifth, every second frame, as the
/// other groups' held-out frames), all retargeted onto the built-in humanoid
/// (`ikarus_anim::retarget`, which aligns each file's rest pose; the plain transfer of the
/// other groups leaves these files' postures contorted).
pub const OTHER_CLIPS: (&str, &[Clip], &[Clip]) = (
    "other clips",
    &[
        ("cmu_02_01_walk_cgspeed_crlf.bvh", "walk", 4, 1.0),
        ("cmu_01_01_jump_cgspeed.bvh", "jump", 4, 1.0),
        ("bandainamco_ds1_walk_normal_002.bvh", "walk", 1, 1.0),
        ("bandainamco_ds1_run_normal_001.bvh", "run", 1, 1.0),
    ],
    &[
        ("pymo_AV_8Walk_Meredith_HVHA_Rep1.bvh", "pymo walk", 4, 1.0),
        ("mocapbank_zxy_crlf.bvh", "mocapbank", 1, 1.0),
        ("mass_hik_run_crlf.bvh", "mass run", 4, 1.0),
    ],
);

/// Two to six effectors, by humanoid bone (a set whose bones a group's skeleton lacks is left
/// out for that group).
pub const TWO_TO_SIX: [(&str, &[HumanoidBone]); 5] = [
    (
        "2: hands",
        &[HumanoidBone::LeftHand, HumanoidBone::RightHand],
    ),
    (
        "3: hands, head",
        &[
            HumanoidBone::LeftHand,
            HumanoidBone::RightHand,
            HumanoidBone::Head,
        ],
    ),
    (
        "4: hands, feet",
        &[
            HumanoidBone::LeftHand,
            HumanoidBone::RightHand,
            HumanoidBone::LeftFoot,
            HumanoidBone::RightFoot,
        ],
    ),
    (
        "5: hands, feet, head",
        &[
            HumanoidBone::LeftHand,
            HumanoidBone::RightHand,
            HumanoidBone::LeftFoot,
            HumanoidBone::RightFoot,
            HumanoidBone::Head,
        ],
    ),
    (
        "6: hands, feet, head, chest",
        &[
            HumanoidBone::LeftHand,
            HumanoidBone::RightHand,
            HumanoidBone::LeftFoot,
            HumanoidBone::RightFoot,
            HumanoidBone::Head,
            HumanoidBone::Chest,
        ],
    ),
];

/// An effector set: its name and bones.
pub type EffectorSet = (&'static str, &'static [HumanoidBone]);

/// The effector sets, by humanoid bone.
pub const EFFECTOR_SETS: [(&str, &[HumanoidBone]); 3] = [
    ("hands", &[HumanoidBone::LeftHand, HumanoidBone::RightHand]),
    (
        "hands+head",
        &[
            HumanoidBone::LeftHand,
            HumanoidBone::RightHand,
            HumanoidBone::Head,
        ],
    ),
    (
        "hands+feet",
        &[
            HumanoidBone::LeftHand,
            HumanoidBone::RightHand,
            HumanoidBone::LeftFoot,
            HumanoidBone::RightFoot,
        ],
    ),
];

/// Where a task's solve starts (the hips always at the held-out frame's transform, joints the
/// model does not cover at the held-out frame's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Start {
    /// The model's mean posture: the same start for every frame.
    Mean,
    /// The clip's first frame (at 30 fps), as a drag starts from the posture on screen.
    First,
    /// The held-out frame before this one in the same clip (1/15 s earlier), as a per-frame
    /// solve starts from the last result. The clip's first held-out frame has none.
    Previous,
}

impl Start {
    /// The start's name in tables.
    #[must_use]
    pub fn name(self) -> &'static str {
        match self {
            Self::Mean => "mean",
            Self::First => "first frame",
            Self::Previous => "previous frame",
        }
    }
}

/// Latent dimensions of the protocol's model.
pub const DIMS: usize = 12;

/// One held-out task.
#[derive(Clone, Debug)]
pub struct Case {
    /// Index of the group in [`Protocol::groups`].
    pub group: usize,
    /// The clip's kind (`walk`, `run`, `jump`).
    pub kind: &'static str,
    /// The effector set's name.
    pub set: &'static str,
    /// The goals.
    pub task: IkTask,
    /// Where the start pose comes from.
    pub from: Start,
    /// The start pose (see [`Start`]), hips at the held-out transform.
    pub start: LocalPose,
    /// The held-out posture.
    pub truth: LocalPose,
}

/// One group's skeleton and model.
pub struct Group {
    /// The group's name.
    pub name: &'static str,
    /// The skeleton the clips play on (metres).
    pub skeleton: Skeleton,
    /// The posture model learned on the frames not held out.
    pub model: Arc<PostureModel>,
}

/// The protocol's data: per group the skeleton and model, and every task.
pub struct Protocol {
    /// The groups.
    pub groups: Vec<Group>,
    /// Every held-out task.
    pub cases: Vec<Case>,
}

impl Protocol {
    /// Loads the clips and builds the models and the tasks.
    ///
    /// # Panics
    /// When the shared data is missing or a clip cannot be carried onto the humanoid.
    pub fn load() -> Self {
        Self::load_with(DIMS)
    }

    /// [`load`](Self::load) with models of `dims` latent dimensions.
    ///
    /// # Panics
    /// As [`load`](Self::load).
    pub fn load_with(dims: usize) -> Self {
        Self::load_from(dims, &[Start::Mean])
    }

    /// [`load_with`](Self::load_with), with the tasks of every start in `starts` (for each
    /// held-out frame: each start, then each effector set).
    ///
    /// # Panics
    /// As [`load`](Self::load).
    pub fn load_from(dims: usize, starts: &[Start]) -> Self {
        Self::load_all(dims, starts, &EFFECTOR_SETS)
    }

    /// The protocol with the tasks of every start in `starts` and every effector set of
    /// `sets` on [`GROUPS`].
    ///
    /// # Panics
    /// As [`load`](Self::load).
    pub fn load_all(dims: usize, starts: &[Start], sets: &[EffectorSet]) -> Self {
        Self::load_groups(dims, starts, sets, false)
    }

    /// [`load_all`](Self::load_all), and with `other_clips` also [`OTHER_CLIPS`]: a model
    /// tested on clips it was not learned from.
    ///
    /// # Panics
    /// As [`load`](Self::load).
    pub fn load_groups(
        dims: usize,
        starts: &[Start],
        sets: &[EffectorSet],
        other_clips: bool,
    ) -> Self {
        let mut groups = Vec::new();
        let mut cases = Vec::new();
        let split = GROUPS.map(|(name, clips, onto_humanoid)| {
            let carry = if onto_humanoid {
                Carry::Transfer
            } else {
                Carry::Own
            };
            (
                name,
                clips.iter().map(|&c| (c, Role::Split)).collect(),
                carry,
            )
        });
        let (name, train, test) = OTHER_CLIPS;
        let roles: Vec<(Clip, Role)> = train
            .iter()
            .map(|&c| (c, Role::Train))
            .chain(test.iter().map(|&c| (c, Role::Test)))
            .collect();
        let other = (name, roles, Carry::Retarget);
        for (g, (name, clips, carry)) in split
            .into_iter()
            .chain(other_clips.then_some(other))
            .enumerate()
        {
            let (group, mut group_cases) =
                load_group(g, (name, &clips, carry), dims, (starts, sets));
            groups.push(group);
            cases.append(&mut group_cases);
        }
        Self { groups, cases }
    }

    /// The solvers compared for group `g`: every plain kind at its defaults, and the
    /// example solver on the group's model.
    pub fn solvers(&self, g: usize) -> Vec<(&'static str, SolverConfig)> {
        let parse = |json: &str| serde_json::from_str::<SolverConfig>(json).expect("config");
        vec![
            ("ccd classic", parse(r#"{"kind": "ccd"}"#)),
            ("ccd mmd", parse(r#"{"kind": "ccd", "variant": "mmd"}"#)),
            (
                "ccd length-damped",
                parse(r#"{"kind": "ccd", "damping": "length"}"#),
            ),
            ("jacobian dls", parse(r#"{"kind": "jacobian"}"#)),
            ("lm", parse(r#"{"kind": "lm"}"#)),
            ("fabrik", parse(r#"{"kind": "fabrik"}"#)),
            (
                "example",
                SolverConfig::Example(ExampleConfig {
                    model: ModelRef::loaded("protocol", self.groups[g].model.clone()),
                    ..ExampleConfig::default()
                }),
            ),
        ]
    }
}

/// A clip's frames at 30 fps on the group's skeleton: carried onto the humanoid (and its
/// limits), or played on the group's first skeleton with its bone lengths.
fn clip_frames(
    file: &str,
    step: usize,
    unit: f64,
    skeleton: &mut Option<Skeleton>,
    carry: Carry,
) -> Vec<LocalPose> {
    let path = crate::bvh_path(file);
    let document = open(path.to_str().expect("utf-8 path"), unit).expect("clip parses");
    let motion = document.motion.expect("clip has frames");
    if let Some(target) = skeleton.as_ref().filter(|_| carry == Carry::Retarget) {
        let (source_map, target_map) = (
            HumanoidMap::recognise(&document.skeleton),
            HumanoidMap::recognise(target),
        );
        let source = Character {
            skeleton: &document.skeleton,
            map: &source_map,
        };
        let onto = Character {
            skeleton: target,
            map: &target_map,
        };
        let retargeted = retarget::retarget(source, &motion, onto, &RetargetConfig::default())
            .expect("clip retargets onto the humanoid");
        return retargeted
            .motion
            .frames()
            .iter()
            .step_by(step)
            .map(|f| {
                let mut out = f.clone();
                target.project_to_limits(&mut out);
                out
            })
            .collect();
    }
    if let Some(target) = skeleton.as_ref().filter(|_| carry == Carry::Transfer) {
        let transfer = HumanoidTransfer::new(
            &document.skeleton,
            &HumanoidMap::recognise(&document.skeleton),
            target,
            &HumanoidMap::recognise(target),
        )
        .expect("clip maps onto the humanoid");
        motion
            .frames()
            .iter()
            .step_by(step)
            .map(|f| {
                let mut out = target.rest_pose();
                transfer.apply(&document.skeleton, f, target, &mut out);
                // Postures the humanoid's limits forbid (CMU forearm twist on its hinge
                // elbows) made legal, so every held-out posture is one the solvers may reach.
                target.project_to_limits(&mut out);
                out
            })
            .collect()
    } else {
        let own = skeleton.get_or_insert_with(|| document.skeleton.clone());
        // The CMU subjects differ in bone lengths and finger names, not in shape: the
        // group's postures play on its first clip's skeleton.
        assert_eq!(
            own.parent_indices(),
            document.skeleton.parent_indices(),
            "{file}: one skeleton shape per group"
        );
        // Bone lengths from the group's skeleton (a BVH frame carries its file's offsets).
        motion
            .frames()
            .iter()
            .step_by(step)
            .map(|f| {
                let mut frame = f.clone();
                for j in own.joints().filter(|&j| own.parent(j).is_some()) {
                    frame[j].translation = own.rest(j).translation;
                }
                frame
            })
            .collect()
    }
}

/// How a group's clips reach its skeleton.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Carry {
    /// Played on the group's first clip's skeleton.
    Own,
    /// Onto the built-in humanoid by `HumanoidTransfer` (the local rotations through the
    /// humanoid maps), then its limits.
    Transfer,
    /// Onto the built-in humanoid by `ikarus_anim::retarget`, then its limits.
    Retarget,
}

/// What a clip is for in its group.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Its middle fifth held out (every second frame), the rest learned from.
    Split,
    /// Every frame learned from.
    Train,
    /// Its middle fifth held out (every second frame), nothing learned from.
    Test,
}

/// One group: its skeleton, the model learned on its kept frames, the held-out tasks.
fn load_group(
    g: usize,
    (name, clips, carry): (&'static str, &[(Clip, Role)], Carry),
    dims: usize,
    (starts, sets): (&[Start], &[EffectorSet]),
) -> (Group, Vec<Case>) {
    let mut skeleton: Option<Skeleton> = (carry != Carry::Own).then(builtin_humanoid);
    let mut train = Vec::new();
    // The learned frames as runs of consecutive frames, for the model's motion part.
    let mut runs: Vec<Vec<LocalPose>> = Vec::new();
    // Per held-out frame: its clip's kind, the clip's first frame, the held-out frame before
    // it in the clip, and the frame.
    let mut held: Vec<(&'static str, LocalPose, Option<LocalPose>, LocalPose)> = Vec::new();
    for &((file, kind, step, unit), role) in clips {
        let frames = clip_frames(file, step, unit, &mut skeleton, carry);
        let (lo, hi) = match role {
            Role::Train => (0, 0),
            Role::Split | Role::Test => (frames.len() * 2 / 5, frames.len() * 3 / 5),
        };
        let first = frames[0].clone();
        let mut previous = None;
        let mut run = Vec::new();
        for (i, frame) in frames.into_iter().enumerate() {
            if (lo..hi).contains(&i) {
                if (i - lo) % 2 == 0 {
                    held.push((kind, first.clone(), previous.take(), frame.clone()));
                    previous = Some(frame);
                }
                if !run.is_empty() {
                    runs.push(std::mem::take(&mut run));
                }
            } else if role != Role::Test {
                train.push(frame.clone());
                run.push(frame);
            }
        }
        runs.push(run);
    }
    let skeleton = skeleton.expect("a group has clips");
    let map = HumanoidMap::recognise(&skeleton);
    let joints = posture::modelled_joints(&skeleton, Some(&map));
    let model = posture::learn(&skeleton, &joints, &train, dims).expect("model");
    // The motion part from the learned runs, two frames (1/15 s) apart as the held-out
    // frames are.
    let runs: Vec<&[LocalPose]> = runs.iter().map(Vec::as_slice).collect();
    let model = Arc::new(posture::learn_motion(model, &skeleton, &runs, 2).expect("motion part"));
    let bound = model.bind(&skeleton).expect("model fits");
    let mut mean = skeleton.rest_pose();
    model.decode(model.offset(), &bound, &mut mean);
    let mut world = ModelPose::new(&skeleton);
    let mut cases = Vec::new();
    for (kind, first, previous, truth) in held {
        fk::forward_kinematics(&skeleton, &truth, &mut world);
        for &from in starts {
            let Some(mut start) = (match from {
                Start::Mean => Some(mean.clone()),
                Start::First => Some(first.clone()),
                Start::Previous => previous.clone(),
            }) else {
                continue;
            };
            for j in skeleton.joints().filter(|j| !bound.contains(j)) {
                start[j] = truth[j];
            }
            // The start made legal: every solver starts inside the limits.
            skeleton.project_to_limits(&mut start);
            cases.extend(tasks(g, (kind, from, sets), &start, &truth, (&map, &world)));
        }
    }
    (
        Group {
            name,
            skeleton,
            model,
        },
        cases,
    )
}

/// The tasks of one held-out frame from one start: one per effector set, the goals at the
/// frame's joint positions (`world`).
fn tasks(
    g: usize,
    (kind, from, sets): (&'static str, Start, &[EffectorSet]),
    start: &LocalPose,
    truth: &LocalPose,
    (map, world): (&HumanoidMap, &ModelPose),
) -> Vec<Case> {
    let mut cases = Vec::new();
    for &(set, bones) in sets {
        if bones.iter().any(|&b| map.joint(b).is_none()) {
            continue;
        }
        let effectors = bones
            .iter()
            .map(|&b| {
                let joint = map.joint(b).expect("humanoid bone");
                Effector {
                    joint,
                    goal: Goal {
                        position: Some(world.position(joint)),
                        orientation: None,
                    },
                    weight: 1.0,
                }
            })
            .collect();
        let mut task = IkTask {
            effectors,
            ..IkTask::default()
        };
        task.tolerance.position = 1e-4;
        cases.push(Case {
            group: g,
            kind,
            set,
            task,
            from,
            start: start.clone(),
            truth: truth.clone(),
        });
    }
    cases
}

/// One solver's score over a set of cases.
#[derive(Clone, Copy, Debug, Default)]
pub struct Score {
    /// Mean MPJPE over the cases, in the skeleton's unit (metres).
    pub mpjpe: f64,
    /// Fraction of cases with every effector within 1 mm.
    pub reached: f64,
    /// Fraction of cases whose returned pose breaks a joint limit.
    pub violations: f64,
}

/// Solves every case with `config` and scores it.
pub fn score(skeleton: &Skeleton, cases: &[&Case], config: &SolverConfig) -> Score {
    let mut total = Score::default();
    for case in cases {
        let mut pose = case.start.clone();
        let report = solve(skeleton, &case.task, config, &mut pose);
        total.mpjpe += posture::mean_joint_error(skeleton, &pose, &case.truth);
        if report.position_error <= 1e-3 {
            total.reached += 1.0;
        }
        if skeleton
            .limit_violation(&pose)
            .is_some_and(|(_, v)| v > 1e-6)
        {
            total.violations += 1.0;
        }
    }
    #[allow(clippy::cast_precision_loss)]
    let n = cases.len().max(1) as f64;
    Score {
        mpjpe: total.mpjpe / n,
        reached: total.reached / n,
        violations: total.violations / n,
    }
}
