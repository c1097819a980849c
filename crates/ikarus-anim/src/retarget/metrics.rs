//! The evaluation numbers of a retargeted clip, measured by forward kinematics on the output
//! motion (any motion on the target: the repaired one or the plain copy), never taken from
//! the repair's own bookkeeping.
//!
//! - **Foot sliding**: for each detected contact, the horizontal (body-frame) distance the
//!   contact's joint moves between consecutive frames of the contact; max and mean over all
//!   contacts' frame pairs, metres.
//! - **Penetration**: per frame, how far the heel (foot joint) and ball (toes joint) are
//!   below the floor plus their rest height; the maximum, metres. The toe tips separately.
//! - **Direction error**: the angle between each bone's direction (towards its next bone
//!   mapped on both sides) in the source and in the target, both in body frames, over every
//!   frame, leaving out a side's leg bones while that side's contact weight is above zero;
//!   mean and max, radians.
//! - **Largest step**: the largest angle any joint's local rotation turns between two
//!   consecutive frames, radians (pops show here).
//! - **Limit violation**: the largest [`ikarus_core::Skeleton::limit_violation`] over frames, radians.

use glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{ModelPose, Motion, fk};

use super::{Character, Contact, Feet};

/// The numbers of one retargeted clip (see the module docs). Lengths in metres, angles in
/// radians.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Metrics {
    /// Frames measured.
    pub frames: usize,
    /// Frame pairs inside contacts.
    pub contact_pairs: usize,
    /// Largest horizontal move of a planted point between two contact frames.
    pub slide_max: f64,
    /// Mean horizontal move of planted points per contact frame pair.
    pub slide_mean: f64,
    /// Deepest heel or ball below the floor plus its rest height.
    pub penetration: f64,
    /// Deepest toe tip below the floor plus its rest height.
    pub toe_penetration: f64,
    /// Mean bone-direction angle to the source outside contacts.
    pub direction_mean: f64,
    /// Largest bone-direction angle to the source outside contacts.
    pub direction_max: f64,
    /// Largest rotation of a joint between consecutive frames.
    pub max_step: f64,
    /// The joint and frame (the later of the two) of [`max_step`](Self::max_step).
    pub max_step_at: Option<(ikarus_core::JointId, usize)>,
    /// Largest limit violation.
    pub limit_violation: f64,
    /// True when every frame is finite.
    pub finite: bool,
}

/// Bone segments `(bone, next bone)` both maps have, for the direction error.
fn segments(a: &HumanoidMap, b: &HumanoidMap) -> Vec<(HumanoidBone, HumanoidBone)> {
    use HumanoidBone as B;
    let pairs = [
        (B::Hips, B::Head),
        (B::LeftUpperArm, B::LeftLowerArm),
        (B::LeftLowerArm, B::LeftHand),
        (B::RightUpperArm, B::RightLowerArm),
        (B::RightLowerArm, B::RightHand),
        (B::LeftUpperLeg, B::LeftLowerLeg),
        (B::LeftLowerLeg, B::LeftFoot),
        (B::LeftFoot, B::LeftToes),
        (B::RightUpperLeg, B::RightLowerLeg),
        (B::RightLowerLeg, B::RightFoot),
        (B::RightFoot, B::RightToes),
    ];
    pairs
        .into_iter()
        .filter(|&(x, y)| {
            a.joint(x).is_some()
                && a.joint(y).is_some()
                && b.joint(x).is_some()
                && b.joint(y).is_some()
        })
        .collect()
}

fn leg_side(bone: HumanoidBone) -> Option<usize> {
    use HumanoidBone as B;
    match bone {
        B::LeftUpperLeg | B::LeftLowerLeg | B::LeftFoot => Some(0),
        B::RightUpperLeg | B::RightLowerLeg | B::RightFoot => Some(1),
        _ => None,
    }
}

/// Measures `output` (a motion on `target`, frame for frame with `source_motion`) against the
/// source (see the module docs). `contacts`, `feet` and `leg_weights` come from the
/// [`Retargeted`](super::Retargeted) of the same clip; `source_body` is the source's
/// `body_from_model`.
///
/// Kept as one function of about 120 lines: every metric is one short pass over the same forward
/// kinematics of the output, and they share that buffer and the frame count.
#[allow(clippy::too_many_arguments, clippy::too_many_lines)] // one measurement pass
pub fn measure(
    source: Character<'_>,
    source_motion: &Motion,
    source_body: DQuat,
    target: Character<'_>,
    output: &Motion,
    contacts: &[Contact],
    feet: &Feet,
    leg_weights: &[[f64; 2]],
) -> Metrics {
    let frames = output.len().min(source_motion.len());
    let mut metrics = Metrics {
        frames,
        finite: true,
        ..Metrics::default()
    };
    let body = feet.target_body;
    let mut target_models: Vec<ModelPose> = Vec::with_capacity(frames);
    let mut model = ModelPose::new(target.skeleton);
    for pose in &output.frames()[..frames] {
        metrics.finite &= pose.is_finite();
        fk::forward_kinematics(target.skeleton, pose, &mut model);
        target_models.push(model.clone());
        if let Some((_, v)) = target.skeleton.limit_violation(pose) {
            metrics.limit_violation = metrics.limit_violation.max(v);
        }
    }
    // Sliding.
    let mut slide_sum = 0.0;
    for c in contacts {
        let Some(&(_, joint)) = feet.joints.iter().find(|(ch, _)| *ch == c.channel) else {
            continue;
        };
        for f in (c.start + 1)..=c.end.min(frames.saturating_sub(1)) {
            let step =
                body * (target_models[f].position(joint) - target_models[f - 1].position(joint));
            let slide = DVec3::new(step.x, 0.0, step.z).length();
            metrics.slide_max = metrics.slide_max.max(slide);
            slide_sum += slide;
            metrics.contact_pairs += 1;
        }
    }
    if metrics.contact_pairs > 0 {
        #[allow(clippy::cast_precision_loss)] // counts
        let pairs = metrics.contact_pairs as f64;
        metrics.slide_mean = slide_sum / pairs;
    }
    // Penetration (feet only).
    for m in &target_models {
        for &(channel, joint) in &feet.joints {
            if channel.is_hand() {
                continue;
            }
            let clearance = feet
                .clearance
                .iter()
                .find(|(j, _)| *j == joint)
                .map_or(0.0, |c| c.1);
            let height = (body * m.position(joint)).y;
            metrics.penetration = metrics.penetration.max(feet.floor + clearance - height);
        }
    }
    // Toe tips.
    for m in &target_models {
        for &(toes, tip, clearance) in &feet.toe_tips {
            let height = (body * (m.position(toes) + m.rotation(toes) * tip)).y;
            metrics.toe_penetration = metrics.toe_penetration.max(feet.floor + clearance - height);
        }
    }
    metrics.penetration = metrics.penetration.max(0.0);
    metrics.toe_penetration = metrics.toe_penetration.max(0.0);
    // Direction error.
    let pairs = segments(source.map, target.map);
    let mut source_model = ModelPose::new(source.skeleton);
    let mut sum = 0.0;
    let mut count = 0_usize;
    for (f, m) in target_models.iter().enumerate() {
        fk::forward_kinematics(
            source.skeleton,
            &source_motion.frames()[f],
            &mut source_model,
        );
        for &(a, b) in &pairs {
            if let Some(side) = leg_side(a)
                && leg_weights.get(f).is_some_and(|w| w[side] > 0.0)
            {
                continue;
            }
            let (Some(sa), Some(sb), Some(ta), Some(tb)) = (
                source.map.joint(a),
                source.map.joint(b),
                target.map.joint(a),
                target.map.joint(b),
            ) else {
                continue;
            };
            let s = source_body * (source_model.position(sb) - source_model.position(sa));
            let t = body * (m.position(tb) - m.position(ta));
            let angle = s.angle_between(t);
            if angle.is_finite() {
                sum += angle;
                count += 1;
                metrics.direction_max = metrics.direction_max.max(angle);
            }
        }
    }
    if count > 0 {
        #[allow(clippy::cast_precision_loss)] // counts
        let n = count as f64;
        metrics.direction_mean = sum / n;
    }
    // Largest step.
    for (f, w) in output.frames()[..frames].windows(2).enumerate() {
        for (j, (a, b)) in w[0].transforms().iter().zip(w[1].transforms()).enumerate() {
            let angle = a.rotation.angle_between(b.rotation);
            if angle.is_finite() && angle > metrics.max_step {
                metrics.max_step = angle;
                metrics.max_step_at = Some((ikarus_core::JointId::from_index(j), f + 1));
            }
        }
    }
    metrics
}
