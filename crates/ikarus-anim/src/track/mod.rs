//! A character posed from sparse trackers: a VR headset and two controllers (3-point), a hip
//! tracker (4), two foot trackers (6), optionally a chest, elbows and knees — frame by frame
//! on the full-body solver ([`ikarus_solve::body`]), with legs that step and feet on the
//! ground.
//!
//! # Method
//! 1. **Calibration** ([`calibrate`]) from one frame where the user stands in the avatar's
//!    reference pose (its rest, or the T-pose made from it): the user's height (head above
//!    the floor) and arm span against the avatar's give the scale. The trackers are scaled to
//!    the avatar, not the avatar to the trackers: the avatar's bones cannot stretch, and a
//!    scaled avatar would no longer fit its own scene; positions are scaled by the height
//!    ratio about the point of the floor under the user's head, and the hands' reach about
//!    the head by the remaining arm-span ratio. Each tracker's offset to its bone is then
//!    what puts the bone where the avatar's reference pose has it, placed under the user's
//!    head and turned to face where the user's hands say.
//! 2. **Per frame** ([`TrackSolver::solve_frame`]): each tracker's sample is checked
//!    (finite, a unit quaternion, no jump farther than [`TrackConfig::max_jump`]); a bad or
//!    missing one is held at its last good sample and reported. Each good tracker gives its
//!    bone a 6-D goal; elbows and knees give bend goals.
//! 3. **Without a hip tracker** (3-point) the pelvis is placed by a stated rule: under the
//!    head as the reference pose has it, turned to the body's yaw (the head's heading and
//!    the line between the hands, smoothed), taking the head's drop below its standing
//!    height as a crouch; a head tilted further than the neck takes
//!    ([`TrackConfig::neck_tilt`]) leans the trunk by the excess, the pelvis turned about
//!    the head with it and tilted as much (a body bending over). The rule's goal is weak (weight 0.05): the
//!    head and hands win.
//! 4. **Without foot trackers** (3- and 4-point) the legs step ([`StepConfig`]): each foot
//!    stays planted until the place under the pelvis where balance puts it (the reference
//!    stance, turned with the pelvis, led by the pelvis's velocity) is farther than a
//!    threshold or turned more than an angle; then it steps there along an arc of a given
//!    height and duration, one foot at a time. Planted and landing feet stand on the
//!    [`Ground`].
//! 5. **The body solve** ([`ikarus_solve::body`]) from the previous frame's pose: pelvis,
//!    spine, clavicles, limbs by their closed form, every limit kept; no state beyond the
//!    previous pose, the held trackers, the feet and the smoothed heading.

mod calibrate;
mod legs;
mod solver;

use ikarus_core::humanoid_map::HumanoidBone;
use ikarus_core::trackers::{TrackerPose, Trackers};
use ikarus_core::{LocalPose, Motion};
use ikarus_solve::SolveReport;
use ikarus_solve::body::{BodyConfig, BodyRigError};

pub use calibrate::{Calibration, calibrate};
pub use legs::StepConfig;
pub use solver::TrackSolver;

use crate::ground::{Ground, Plane};
use crate::retarget::Character;

/// Which trackers a solve uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Points {
    /// Head and hands.
    Three,
    /// Head, hands and hips.
    Four,
    /// Head, hands, hips and feet.
    Six,
}

impl Points {
    /// The bones of this set.
    pub fn bones(self) -> &'static [HumanoidBone] {
        use HumanoidBone as B;
        match self {
            Points::Three => &[B::Head, B::LeftHand, B::RightHand],
            Points::Four => &[B::Head, B::LeftHand, B::RightHand, B::Hips],
            Points::Six => &[
                B::Head,
                B::LeftHand,
                B::RightHand,
                B::Hips,
                B::LeftFoot,
                B::RightFoot,
            ],
        }
    }

    /// The set of `count` points (3, 4 or 6).
    pub fn from_count(count: usize) -> Option<Self> {
        match count {
            3 => Some(Points::Three),
            4 => Some(Points::Four),
            6 => Some(Points::Six),
            _ => None,
        }
    }
}

/// The bones a tracker may ride on: the body solver's effectors (hips, chest, head, hands,
/// feet) and the elbows and knees (bend goals).
pub const TRACKABLE: [HumanoidBone; 13] = [
    HumanoidBone::Head,
    HumanoidBone::LeftHand,
    HumanoidBone::RightHand,
    HumanoidBone::Hips,
    HumanoidBone::LeftFoot,
    HumanoidBone::RightFoot,
    HumanoidBone::Spine,
    HumanoidBone::Chest,
    HumanoidBone::UpperChest,
    HumanoidBone::LeftLowerArm,
    HumanoidBone::RightLowerArm,
    HumanoidBone::LeftLowerLeg,
    HumanoidBone::RightLowerLeg,
];

/// Options of tracker solving. Lengths are in the avatar's units unless said otherwise.
#[derive(Clone, Debug, PartialEq)]
pub struct TrackConfig {
    /// The trackers used; `None` (default) uses every tracker in the recording.
    pub points: Option<Points>,
    /// The recording frame the user stands in the avatar's reference pose (calibration).
    /// Default 0.
    pub calibration_frame: usize,
    /// Height of the floor in the trackers' world (tracker units). Default 0, the VR
    /// convention.
    pub floor: f64,
    /// The legs' steps when the feet are not tracked.
    pub steps: StepConfig,
    /// A sample farther than this from the tracker's last good one (tracker units, per
    /// frame) is a glitch and held over. Default 0.5 (30 m/s at 60 frames per second).
    pub max_jump: f64,
    /// A jump that stays put this many seconds is believed (the device was moved while
    /// lost, or the recording cut); a glitch that comes back sooner is held over. Default
    /// 0.05 (3 frames at 60 frames per second).
    pub hold_seconds: f64,
    /// Time constant of the body's heading when it is guessed (3-point), seconds. Default
    /// 0.1; larger turns the body more slowly after the head and hands.
    pub heading_time_constant: f64,
    /// How far the head tilts (forward, back or sideways, from its reference) on the neck
    /// alone when the pelvis is guessed (3-point), radians: the trunk leans by the rest of
    /// the tilt, so that a head bowed further is a body bending over rather than a crouch.
    /// Default 0.35 (20°); larger keeps the trunk upright longer, `f64::INFINITY` never
    /// leans it.
    pub neck_tilt: f64,
    /// The full-body solver's settings (pull, stiffness, iterations).
    pub body: BodyConfig,
}

impl Default for TrackConfig {
    fn default() -> Self {
        Self {
            points: None,
            calibration_frame: 0,
            floor: 0.0,
            steps: StepConfig::default(),
            max_jump: 0.5,
            hold_seconds: 0.05,
            heading_time_constant: 0.1,
            neck_tilt: 0.35,
            body: BodyConfig::default(),
        }
    }
}

/// What happened in one frame.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameReport {
    /// The body solve's report (residuals against the goals the trackers gave).
    pub solve: SolveReport,
    /// Trackers whose sample was missing or bad and held at their last good one.
    pub held: Vec<HumanoidBone>,
    /// Whether each foot (left, right) was stepping; both false when the feet are tracked.
    pub stepping: [bool; 2],
}

/// A recording solved onto a character.
#[derive(Clone, Debug)]
pub struct Tracked {
    /// One pose per recorded frame.
    pub motion: Motion,
    /// One report per frame.
    pub reports: Vec<FrameReport>,
    /// The calibration used.
    pub calibration: Calibration,
}

impl Tracked {
    /// Frames where a tracker was held over.
    pub fn held_frames(&self) -> usize {
        self.reports.iter().filter(|r| !r.held.is_empty()).count()
    }

    /// Steps the legs took (both feet; 0 when the feet are tracked).
    pub fn steps(&self) -> usize {
        (0..2)
            .map(|s| {
                self.reports
                    .windows(2)
                    .filter(|w| w[1].stepping[s] && !w[0].stepping[s])
                    .count()
            })
            .sum()
    }

    /// Frames whose body solve did not converge (a goal out of reach, or held back by a
    /// limit).
    pub fn unconverged(&self) -> usize {
        self.reports
            .iter()
            .filter(|r| r.solve.status != ikarus_solve::SolveStatus::Converged)
            .count()
    }
}

/// Why a recording cannot be solved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum TrackError {
    /// The frame rate is not a positive number.
    #[error("trackers: fps must be a positive finite number, got {0}")]
    Fps(f64),
    /// The recording has no frame.
    #[error("trackers: the recording has no frame")]
    Empty,
    /// Tracks of different lengths.
    #[error("trackers: `{bone}` has {found} samples where `{first}` has {expected}")]
    Length {
        /// The first track's bone.
        first: &'static str,
        /// Its samples.
        expected: usize,
        /// The other track's bone.
        bone: &'static str,
        /// Its samples.
        found: usize,
    },
    /// Two tracks on one bone.
    #[error("trackers: two trackers on `{0}`")]
    Duplicate(&'static str),
    /// A tracker on a bone no tracker can drive.
    #[error(
        "trackers: a tracker on `{0}`; trackers ride on the head, hands, hips, feet, spine/chest/upperChest, lower arms or lower legs"
    )]
    Bone(&'static str),
    /// A tracker the points need is not in the recording.
    #[error("trackers: {points}-point tracking needs a `{bone}` tracker; the recording has none")]
    Missing {
        /// 3, 4 or 6.
        points: usize,
        /// The missing bone.
        bone: &'static str,
    },
    /// The avatar lacks a bone a tracker rides on.
    #[error("the avatar has no `{0}` bone for its tracker")]
    AvatarBone(&'static str),
    /// The calibration frame is not in the recording.
    #[error("trackers: calibration frame {frame} is past the recording's {frames} frames")]
    CalibrationFrame {
        /// The frame asked for.
        frame: usize,
        /// Frames recorded.
        frames: usize,
    },
    /// The calibration frame does not show a standing user.
    #[error("calibration: {0}")]
    Calibration(String),
    /// A setting is out of range.
    #[error("trackers: `{0}` must be a positive finite number")]
    Setting(&'static str),
    /// The avatar does not fit the body solver.
    #[error(transparent)]
    Rig(#[from] BodyRigError),
}

impl From<TrackError> for String {
    fn from(e: TrackError) -> Self {
        e.to_string()
    }
}

/// Checks `trackers`' shape and returns the bones the solve uses (`config.points`' or every
/// track's).
///
/// # Errors
/// [`TrackError`] for a bad frame rate, an empty recording, ragged or duplicate tracks, a
/// tracker on a bone no tracker drives, or a tracker the points need missing.
pub fn used_bones(
    trackers: &Trackers,
    config: &TrackConfig,
) -> Result<Vec<HumanoidBone>, TrackError> {
    if !(trackers.fps.is_finite() && trackers.fps > 0.0) {
        return Err(TrackError::Fps(trackers.fps));
    }
    let Some(first) = trackers.tracks.first() else {
        return Err(TrackError::Empty);
    };
    for (i, t) in trackers.tracks.iter().enumerate() {
        if t.samples.len() != first.samples.len() {
            return Err(TrackError::Length {
                first: first.bone.vrm_name(),
                expected: first.samples.len(),
                bone: t.bone.vrm_name(),
                found: t.samples.len(),
            });
        }
        if trackers.tracks[..i].iter().any(|o| o.bone == t.bone) {
            return Err(TrackError::Duplicate(t.bone.vrm_name()));
        }
        if !TRACKABLE.contains(&t.bone) {
            return Err(TrackError::Bone(t.bone.vrm_name()));
        }
    }
    if first.samples.is_empty() {
        return Err(TrackError::Empty);
    }
    Ok(match config.points {
        None => trackers.tracks.iter().map(|t| t.bone).collect(),
        Some(points) => {
            let bones = points.bones();
            if let Some(&missing) = bones.iter().find(|&&b| trackers.track(b).is_none()) {
                return Err(TrackError::Missing {
                    points: bones.len(),
                    bone: missing.vrm_name(),
                });
            }
            bones.to_vec()
        }
    })
}

/// Trackers made from a clip's own bone transforms (for tests, demos and a viewer's "truth
/// beside the result"): frame 0 is the character's reference pose standing on the clip's
/// floor under the first frame's head (the calibration frame), then one frame per frame of
/// `motion`; every position moved so that the clip's floor is at y = 0 (the VR convention).
/// The floor is the lower ankle's low level (5th percentile) less the reference's ankle
/// height above its lowest joint.
///
/// # Errors
/// [`TrackError::AvatarBone`] when the character lacks a bone of `bones` or a foot;
/// [`TrackError::Empty`] for an empty motion; [`TrackError::Fps`] for a bad frame time.
pub fn derive_trackers(
    character: Character<'_>,
    motion: &Motion,
    bones: &[HumanoidBone],
) -> Result<Trackers, TrackError> {
    use ikarus_core::ModelPose;
    use ikarus_core::trackers::Track;
    let skeleton = character.skeleton;
    let joint = |b: HumanoidBone| {
        calibrate::avatar_joint(character.map, b).ok_or(TrackError::AvatarBone(b.vrm_name()))
    };
    if motion.is_empty() {
        return Err(TrackError::Empty);
    }
    let (_, reference) = crate::retarget::align::reference(skeleton, character.map, None);
    let models: Vec<ModelPose> = ikarus_core::fk::model_frames(skeleton, motion.frames());
    let floor = floor_of(character, &reference, &models)?;
    let lowest = reference
        .positions()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    let head = joint(HumanoidBone::Head)?;
    let first = models[0].position(head);
    let stand = glam::DVec3::new(
        first.x - reference.position(head).x,
        -lowest,
        first.z - reference.position(head).z,
    );
    let down = glam::DVec3::new(0.0, -floor, 0.0);
    let tracks = bones
        .iter()
        .map(|&bone| {
            let j = joint(bone)?;
            let sample = |m: &ModelPose, shift: glam::DVec3| TrackerPose {
                position: m.position(j) + shift,
                rotation: m.rotation(j),
            };
            Ok(Track {
                bone,
                samples: std::iter::once(sample(&reference, stand))
                    .chain(models.iter().map(|m| sample(m, down)))
                    .collect(),
                offset: None,
            })
        })
        .collect::<Result<Vec<_>, TrackError>>()?;
    Ok(Trackers {
        fps: motion.frame_rate(),
        tracks,
    })
}

/// The floor of a clip's frames (`models`, forward kinematics of each): the lower ankle's low
/// level (5th percentile) less the `reference` pose's ankle height above its lowest joint.
///
/// # Errors
/// [`TrackError::AvatarBone`] when the character lacks a foot.
pub fn floor_of(
    character: Character<'_>,
    reference: &ikarus_core::ModelPose,
    models: &[ikarus_core::ModelPose],
) -> Result<f64, TrackError> {
    let joint = |b: HumanoidBone| {
        calibrate::avatar_joint(character.map, b).ok_or(TrackError::AvatarBone(b.vrm_name()))
    };
    let ankles = [
        joint(HumanoidBone::LeftFoot)?,
        joint(HumanoidBone::RightFoot)?,
    ];
    let lowest = reference
        .positions()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    let clearance =
        0.5 * (reference.position(ankles[0]).y + reference.position(ankles[1]).y) - lowest;
    let lower: Vec<f64> = models
        .iter()
        .map(|m| m.position(ankles[0]).y.min(m.position(ankles[1]).y))
        .collect();
    Ok(crate::retarget::contacts::low_level(&lower) - clearance)
}

/// Solves a whole recording onto `character`: calibration from
/// [`TrackConfig::calibration_frame`], then every frame from the previous one's pose, on
/// `ground` (the plane at [`TrackConfig::floor`], scaled, when `None`).
///
/// # Errors
/// [`TrackError`] when the recording or the calibration frame does not fit (see
/// [`used_bones`] and [`calibrate`]) or the avatar lacks a bone.
pub fn track(
    character: Character<'_>,
    trackers: &Trackers,
    config: &TrackConfig,
    ground: Option<&dyn Ground>,
) -> Result<Tracked, TrackError> {
    let bones = used_bones(trackers, config)?;
    let frames = trackers.len();
    if config.calibration_frame >= frames {
        return Err(TrackError::CalibrationFrame {
            frame: config.calibration_frame,
            frames,
        });
    }
    let mut frame = Vec::new();
    trackers.frame_into(config.calibration_frame, &mut frame);
    let offsets: Vec<(HumanoidBone, TrackerPose)> = trackers
        .tracks
        .iter()
        .filter_map(|t| t.offset.map(|o| (t.bone, o)))
        .collect();
    let calibration = calibrate(character, &frame, &offsets, config.floor)?;
    let mut solver =
        TrackSolver::new(character, &bones, calibration.clone(), config, trackers.fps)?;
    let plane = Plane {
        point: glam::DVec3::new(0.0, calibration.floor, 0.0),
        normal: glam::DVec3::Y,
    };
    let ground = ground.unwrap_or(&plane);
    let skeleton = character.skeleton;
    let mut motion = Motion::for_skeleton(skeleton, 1.0 / trackers.fps)
        .map_err(|_| TrackError::Fps(trackers.fps))?;
    let mut reports = Vec::with_capacity(frames);
    let mut pose: LocalPose = solver.start_pose().clone();
    for f in 0..frames {
        trackers.frame_into(f, &mut frame);
        reports.push(solver.solve_frame(&frame, ground, &mut pose));
        if f == config.calibration_frame {
            // From the calibration pose the user moves off at once: no glitch.
            solver.forget_samples();
        }
        // The motion was made for this skeleton.
        let _ = motion.push(pose.clone());
    }
    Ok(Tracked {
        motion,
        reports,
        calibration,
    })
}

#[cfg(test)]
mod tests;
