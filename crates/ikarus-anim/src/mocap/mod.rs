//! Motion capture → posture (the last part of seed 004, IK overview): joint positions from
//! markerless capture or pose-estimation networks, or segment orientations from inertial suits,
//! turned into a skeleton's rotations.
//!
//! - [`layout`]: keypoint layouts (Human3.6M 17, COCO 17, Halpe 26, `MediaPipe` 33, SMPL 22/24,
//!   or the target's own joint names) as humanoid bones or sites on them; up axes.
//! - [`binding`]: a layout bound to one skeleton through its [`HumanoidMap`].
//! - [`positions`]: the per-frame solver ([`PositionSolver`]).
//! - [`clean`]: missing points filled in, the One-Euro filter.
//! - [`orientations`]: segment orientations → posture with a T-pose calibration.
//!
//! [`solve_positions`] runs a whole clip: missing and low-confidence points filled, optional
//! filtering, bone lengths fitted once for the clip (median over all frames), then every frame
//! solved with the previous frame's twists carried, optionally the feet planted
//! ([`MocapConfig::contacts`], through [`crate::retarget::plant_feet`]), and the result measured
//! by forward kinematics against the points.
//!
//! Points are model space: metres, +Y up (convert with [`UpAxis`] first), frame-major
//! (`points[frame * layout.len() + k]`).

pub mod binding;
pub mod clean;
pub mod layout;
pub mod orientations;
pub mod positions;

use glam::DVec3;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{JointId, ModelPose, Motion, RawJoint, Skeleton, SkeletonBuilder, fk};

use crate::retarget::{Character, ContactConfig, RetargetConfig, RetargetError, plant_feet};

pub use binding::{Anchor, Binding};
pub use clean::OneEuro;
pub use layout::{Layout, UpAxis};
pub use positions::PositionSolver;

/// What happens to the target skeleton's bone lengths.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BoneLengths {
    /// Each bone between two points takes the median of its measured lengths over the clip
    /// (one skeleton per clip); bones between points further apart take the ratio of their
    /// chain's measured span, and the rest the median ratio. The output is then a resized copy
    /// of the target, and its points can land where the input's are.
    #[default]
    Fit,
    /// The target keeps its lengths (scaled as a whole to the clip's median ratio): directions
    /// are retargeted, positions match only as far as the proportions do.
    Keep,
    /// As [`Fit`](Self::Fit), and then every bone between a point and its parent's point
    /// stretches each frame to that frame's measured length, so sources whose bones are not
    /// rigid (position channels on every joint) are reproduced exactly.
    PerFrame,
}

/// Options of [`solve_positions`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MocapConfig {
    /// Bone lengths. Default [`BoneLengths::Fit`].
    pub bone_lengths: BoneLengths,
    /// Temporal filter on the points before solving; `None` (default) solves the raw points.
    pub filter: Option<OneEuro>,
    /// Points with a confidence below this are treated as missing. Default 0.3.
    pub min_confidence: f64,
    /// Foot-contact cleanup after solving: contacts detected on the recovered feet (height
    /// and speed with hysteresis), planted feet held still with the leg IK of retargeting
    /// ([`crate::retarget::plant_feet`], in the motion's own joint space: limits
    /// are not imposed; no floor is enforced, as a clip's floor and, without foot points, its
    /// feet's pitch are not measured). Needs the map's legs and feet. `None` (default) keeps
    /// the solved motion as it is.
    pub contacts: Option<ContactConfig>,
}

impl Default for MocapConfig {
    fn default() -> Self {
        Self {
            bone_lengths: BoneLengths::Fit,
            filter: None,
            min_confidence: 0.3,
            contacts: None,
        }
    }
}

/// A clip of keypoints.
#[derive(Clone, Copy, Debug)]
pub struct KeypointClip<'a> {
    /// The layout of every frame.
    pub layout: &'a Layout,
    /// Seconds between frames.
    pub frame_time: f64,
    /// Frame-major points, model space (metres, +Y up); NaN marks a missing point.
    pub points: &'a [DVec3],
    /// Optional confidence per point (same indexing), in `[0, 1]`.
    pub confidence: Option<&'a [f64]>,
}

/// What [`solve_positions`] did, measured by forward kinematics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MocapReport {
    /// Frames solved.
    pub frames: usize,
    /// Keypoints used (anchored on the skeleton and seen at least once).
    pub used: usize,
    /// Names of keypoints not used (the skeleton lacks their bone, or no frame had them).
    pub unused: Vec<String>,
    /// Points that were missing or below the confidence threshold and were filled in.
    pub filled: usize,
    /// Mean distance between the used points (after filling and filtering) and the same points
    /// on the recovered posture, metres.
    pub mean_error: f64,
    /// Largest such distance, metres.
    pub max_error: f64,
    /// Median ratio of measured to target bone length (the clip's overall scale).
    pub scale: f64,
    /// Foot contacts held by the cleanup ([`MocapConfig::contacts`]); 0 without it.
    pub contacts: usize,
    /// Frames where the cleanup could not put a planted foot on its anchor.
    pub contacts_unreached: usize,
}

/// The recovered motion.
#[derive(Clone, Debug)]
pub struct MocapResult {
    /// The skeleton the motion plays on (the target, resized by [`BoneLengths`]).
    pub skeleton: Skeleton,
    /// One posture per frame.
    pub motion: Motion,
    /// Measurements.
    pub report: MocapReport,
}

/// Why a clip could not be solved.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum MocapError {
    /// The clip has no frames: give at least one frame of points.
    #[error("the clip has no frames")]
    Empty,
    /// The number of points is not a whole number of frames of the layout: check `--layout`.
    #[error("{found} points is not a whole number of {layout} frames of {per_frame} points")]
    WrongPointCount {
        /// The layout's name.
        layout: String,
        /// Points per frame of the layout.
        per_frame: usize,
        /// Points given.
        found: usize,
    },
    /// Confidence values are not one per point.
    #[error("{found} confidence values for {expected} points")]
    WrongConfidenceCount {
        /// Points given.
        expected: usize,
        /// Confidence values given.
        found: usize,
    },
    /// The frame time is not a positive finite number of seconds: pass the clip's rate.
    #[error("frame time {0} s is not a positive number")]
    BadFrameTime(f64),
    /// No used point places the skeleton's root: the layout and the skeleton's humanoid map
    /// share too few bones (map the hips, legs or spine, or pick the right layout).
    #[error("no keypoint of layout {layout} reaches the root `{root}` (used points: {used})")]
    RootUnreached {
        /// The layout's name.
        layout: String,
        /// The root joint's name.
        root: String,
        /// Points the binding could use.
        used: usize,
    },
    /// Every point of a frame sits at one place (a clip of zeros, a frame of equal points):
    /// there is no posture to read. Check the file's columns and units.
    #[error("frame {frame}: every point is at one place; the keypoints carry no shape")]
    NoShape {
        /// The first such frame (0-based).
        frame: usize,
    },
    /// The foot-contact cleanup could not run (the map lacks a leg bone).
    #[error("foot contacts: {0}")]
    Contacts(#[from] RetargetError),
}

/// False when a frame's finite points (two or more) all sit at one place, within 1e-12 of their
/// size. A frame with fewer is not judged here: unseen points are filled or reported.
fn has_shape(frame: &[DVec3]) -> bool {
    let mut finite = frame.iter().filter(|p| p.is_finite()).peekable();
    let Some(&first) = finite.next() else {
        return true;
    };
    if finite.peek().is_none() {
        return true;
    }
    let tolerance = 1e-12 * (1.0 + first.length());
    finite.any(|p| (*p - first).length() > tolerance)
}

/// Solves a clip of joint positions onto `target` (its humanoid bones found by `map`; for
/// [`Layout::Skeleton`] the map may be empty).
///
/// # Errors
/// [`MocapError`] for clips that do not fit the layout or reach no root; missing points never
/// make an error (they are filled, or the keypoint is left out and reported).
pub fn solve_positions(
    target: &Skeleton,
    map: &HumanoidMap,
    clip: &KeypointClip<'_>,
    config: &MocapConfig,
) -> Result<MocapResult, MocapError> {
    let count = clip.layout.len();
    if clip.points.is_empty() || count == 0 {
        return Err(MocapError::Empty);
    }
    if !clip.points.len().is_multiple_of(count) {
        return Err(MocapError::WrongPointCount {
            layout: clip.layout.to_string(),
            per_frame: count,
            found: clip.points.len(),
        });
    }
    if let Some(c) = clip.confidence
        && c.len() != clip.points.len()
    {
        return Err(MocapError::WrongConfidenceCount {
            expected: clip.points.len(),
            found: c.len(),
        });
    }
    if !(clip.frame_time.is_finite() && clip.frame_time > 0.0) {
        return Err(MocapError::BadFrameTime(clip.frame_time));
    }
    let frames = clip.points.len() / count;
    let mut points = clip.points.to_vec();
    let valid: Vec<bool> = points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            p.is_finite()
                && clip
                    .confidence
                    .is_none_or(|c| c[i] >= config.min_confidence)
        })
        .collect();
    let (seen, filled) = clean::fill_gaps(&mut points, &valid, count);
    if let Some(frame) = (0..frames).find(|&f| !has_shape(&points[f * count..(f + 1) * count])) {
        return Err(MocapError::NoShape { frame });
    }
    if let Some(filter) = &config.filter {
        filter.filter_shape(&mut points, count, clip.frame_time);
    }

    let first = Binding::new(target, map, clip.layout, &seen);
    let (skeleton, scale) = fit_bone_lengths(target, &first, &points, count, config.bone_lengths);
    // Same joints in the same order: the target's map holds for the resized copy.
    let binding = Binding::new(&skeleton, map, clip.layout, &seen);
    if !binding.reaches_root(&skeleton) {
        let root = skeleton.roots().next().map_or("", |r| skeleton.name(r));
        return Err(MocapError::RootUnreached {
            layout: clip.layout.to_string(),
            root: root.to_owned(),
            used: binding.used(),
        });
    }
    let unused = (0..count)
        .filter(|&k| binding.anchor(k).is_none())
        .map(|k| clip.layout.point_name(k).to_owned())
        .collect();
    let used = binding.used();
    let mut solver = PositionSolver::new(&skeleton, binding);
    solver.set_stretch(config.bone_lengths == BoneLengths::PerFrame);
    let mut motion = Motion::for_skeleton(&skeleton, clip.frame_time)
        .map_err(|_| MocapError::BadFrameTime(clip.frame_time))?;
    let mut pose = skeleton.rest_pose();
    for frame in points.chunks_exact(count) {
        solver.solve_frame(&skeleton, frame, &mut pose);
        motion
            .push(pose.clone())
            .map_err(|_| MocapError::BadFrameTime(clip.frame_time))?;
    }
    let (mut contacts, mut contacts_unreached) = (0, 0);
    if let Some(contact_config) = config.contacts {
        let planted = hold_feet(&skeleton, map, &motion, contact_config)?;
        contacts = planted.contacts.len();
        contacts_unreached = planted.unreached;
        motion = planted.motion;
    }
    let (sum, max, n) = residuals(&skeleton, solver.binding(), &points, count, &motion);
    Ok(MocapResult {
        skeleton,
        motion,
        report: MocapReport {
            frames,
            used,
            unused,
            filled,
            mean_error: if n > 0 { sum / n as f64 } else { 0.0 },
            max_error: max,
            scale,
            contacts,
            contacts_unreached,
        },
    })
}

/// The foot-contact cleanup in the motion's own joint space: a clip beyond the target's
/// limits is not snapped onto them by the leg IK. No ground: lifting feet that an estimated
/// floor finds too low bends straight knees back and forth on noisy clips.
fn hold_feet(
    skeleton: &Skeleton,
    map: &HumanoidMap,
    motion: &Motion,
    contacts: ContactConfig,
) -> Result<crate::retarget::Retargeted, RetargetError> {
    let free = skeleton.without_limits();
    let character = Character {
        skeleton: &free,
        map,
    };
    plant_feet(
        character,
        motion,
        &RetargetConfig {
            contacts: Some(contacts),
            ground: false,
            ..RetargetConfig::default()
        },
    )
}

/// Sum, largest and count of the distances between the points and the same points on the
/// motion by forward kinematics.
fn residuals(
    skeleton: &Skeleton,
    binding: &Binding,
    points: &[DVec3],
    count: usize,
    motion: &Motion,
) -> (f64, f64, usize) {
    let mut model = ModelPose::new(skeleton);
    let mut recovered = vec![DVec3::ZERO; count];
    let (mut sum, mut max, mut n) = (0.0, 0.0_f64, 0usize);
    for (frame, pose) in points.chunks_exact(count).zip(motion.frames()) {
        fk::forward_kinematics(skeleton, pose, &mut model);
        binding.keypoints(&model, &mut recovered);
        for (r, p) in recovered.iter().zip(frame) {
            if r.is_finite() {
                let e = (*r - *p).length();
                sum += e;
                max = max.max(e);
                n += 1;
            }
        }
    }
    (sum, max, n)
}

fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    Some(values[values.len() / 2])
}

/// The target resized to the clip (see [`BoneLengths`]) and the clip's median length ratio.
/// Points are frame-major with `count` per frame and already filled.
pub fn fit_bone_lengths(
    target: &Skeleton,
    binding: &Binding,
    points: &[DVec3],
    count: usize,
    mode: BoneLengths,
) -> (Skeleton, f64) {
    let mut rest = ModelPose::new(target);
    fk::forward_kinematics(target, &target.rest_pose(), &mut rest);
    let owner: Vec<Option<usize>> = target
        .joints()
        .map(|j| {
            binding.plans[j.index()]
                .origin
                .map(|k| k as usize)
                .filter(|&k| k < count)
        })
        .collect();
    let mut direct: Vec<Option<f64>> = vec![None; target.len()];
    let mut spans: Vec<(f64, f64)> = vec![(0.0, 0.0); target.len()];
    let mut ratios = Vec::new();
    let mut lengths = Vec::with_capacity(points.len() / count.max(1));
    for j in target.joints() {
        let Some(k) = owner[j.index()] else { continue };
        let Some(b) = target
            .path_to_root(j)
            .skip(1)
            .find(|a| owner[a.index()].is_some())
        else {
            continue;
        };
        let kb = owner[b.index()].expect("owning ancestor");
        lengths.clear();
        lengths.extend(
            points
                .chunks_exact(count)
                .map(|f| (f[k] - f[kb]).length())
                .filter(|l| l.is_finite()),
        );
        let Some(measured) = median(&mut lengths) else {
            continue;
        };
        let span = (rest.position(j) - rest.position(b)).length();
        if span <= 1e-9 {
            continue;
        }
        let ratio = measured / span;
        ratios.push(ratio);
        if target.parent(j) == Some(b) {
            direct[j.index()] = Some(ratio);
        } else {
            let mut x = j;
            while x != b {
                spans[x.index()].0 += ratio;
                spans[x.index()].1 += 1.0;
                x = target.parent(x).expect("b is an ancestor");
            }
        }
    }
    let global = median(&mut ratios).unwrap_or(1.0);
    let factor = |j: JointId| match mode {
        BoneLengths::Keep => global,
        BoneLengths::Fit | BoneLengths::PerFrame => direct[j.index()].unwrap_or_else(|| {
            let (sum, n) = spans[j.index()];
            if n > 0.0 { sum / n } else { global }
        }),
    };
    let mut builder = SkeletonBuilder::new();
    for j in target.joints() {
        let mut rest = *target.rest(j);
        rest.translation *= factor(j);
        builder.push(RawJoint {
            name: target.name(j).to_owned(),
            parent: target.parent(j).map(|p| target.name(p).to_owned()),
            rest,
            limit: target.limit(j).clone(),
        });
    }
    let skeleton = builder.build().unwrap_or_else(|_| target.clone());
    (skeleton, global)
}

/// The largest rotation between consecutive frames over all joints, radians: a twist flip
/// shows as a jump near π.
pub fn largest_frame_rotation(motion: &Motion) -> f64 {
    let mut largest = 0.0_f64;
    for pair in motion.frames().windows(2) {
        for (a, b) in pair[0].transforms().iter().zip(pair[1].transforms()) {
            largest = largest.max(a.rotation.angle_between(b.rotation));
        }
    }
    largest
}
