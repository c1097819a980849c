//! Foot (and optional hand) contacts detected in the source motion, with hysteresis.
//!
//! A contact point (a heel = the foot joint, a ball = the toes joint, a hand) is followed
//! through the clip after mapping onto the target's scale (so thresholds are target metres).
//! Its ground level is a low percentile (5 %) of its heights over the clip, taken over both
//! sides together; a point enters contact when it is lower than `enter_height` above that
//! level and slower than `enter_speed`, and leaves it when it rises above `exit_height` or
//! moves faster than `exit_speed`. Contacts shorter than `min_seconds` are dropped. Hands have
//! no height test: a hand is in contact while it is slower than `hand_speed` for at least
//! `hand_min_seconds` (a hand resting on something stays still).

use glam::DVec3;

/// A point that can touch the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Channel {
    /// The left foot joint (ankle; the heel is below it).
    LeftHeel,
    /// The left toes joint (ball of the foot).
    LeftBall,
    /// The right foot joint.
    RightHeel,
    /// The right toes joint.
    RightBall,
    /// The left hand joint.
    LeftHand,
    /// The right hand joint.
    RightHand,
}

impl Channel {
    /// Every channel.
    pub const ALL: [Channel; 6] = [
        Channel::LeftHeel,
        Channel::LeftBall,
        Channel::RightHeel,
        Channel::RightBall,
        Channel::LeftHand,
        Channel::RightHand,
    ];

    /// Each side's heel and ball (left, right).
    pub const FEET: [[Channel; 2]; 2] = [
        [Channel::LeftHeel, Channel::LeftBall],
        [Channel::RightHeel, Channel::RightBall],
    ];

    /// 0 for the left side, 1 for the right.
    pub fn side(self) -> usize {
        match self {
            Channel::LeftHeel | Channel::LeftBall | Channel::LeftHand => 0,
            _ => 1,
        }
    }

    /// True for the hands.
    pub fn is_hand(self) -> bool {
        matches!(self, Channel::LeftHand | Channel::RightHand)
    }

    /// The channel's name (`leftHeel`).
    pub fn name(self) -> &'static str {
        match self {
            Channel::LeftHeel => "leftHeel",
            Channel::LeftBall => "leftBall",
            Channel::RightHeel => "rightHeel",
            Channel::RightBall => "rightBall",
            Channel::LeftHand => "leftHand",
            Channel::RightHand => "rightHand",
        }
    }
}

/// Thresholds of contact detection (target metres and seconds; see the module docs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ContactConfig {
    /// Height above the ground level under which a foot point may enter contact. Default
    /// 0.03 m. Larger values plant feet that hover.
    pub enter_height: f64,
    /// Height above which a foot point leaves contact. Default 0.06 m (≥ `enter_height`;
    /// the gap is the hysteresis).
    pub exit_height: f64,
    /// Speed under which a foot point may enter contact. Default 0.4 m/s.
    pub enter_speed: f64,
    /// Speed above which a foot point leaves contact. Default 0.8 m/s.
    pub exit_speed: f64,
    /// Shortest contact kept, seconds (at least one frame). Default 0.05.
    pub min_seconds: f64,
    /// Time over which a contact blends in before its start and out after its end (no
    /// pops), seconds; cut to half the gap to the same limb's previous or next contact so
    /// two steps never pull one foot apart. Default 0.1.
    pub blend_seconds: f64,
    /// Detect hand contacts too. Default false.
    pub hands: bool,
    /// Speed under which a hand is still. Default 0.05 m/s.
    pub hand_speed: f64,
    /// Shortest hand contact, seconds. Default 0.3.
    pub hand_min_seconds: f64,
}

impl Default for ContactConfig {
    fn default() -> Self {
        Self {
            enter_height: 0.03,
            exit_height: 0.06,
            enter_speed: 0.4,
            exit_speed: 0.8,
            min_seconds: 0.05,
            blend_seconds: 0.1,
            hands: false,
            hand_speed: 0.05,
            hand_min_seconds: 0.3,
        }
    }
}

/// One detected contact: frames `start..=end` of the clip, and where the target holds the
/// point (model space, metres).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contact {
    /// Which point.
    pub channel: Channel,
    /// First frame in contact.
    pub start: usize,
    /// Last frame in contact (inclusive).
    pub end: usize,
    /// Where the target's point is held.
    pub anchor: DVec3,
}

/// The 5th percentile of `values` (0 when empty).
pub fn low_level(values: &[f64]) -> f64 {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return 0.0;
    }
    sorted.sort_by(f64::total_cmp);
    sorted[sorted.len() / 20]
}

/// Speed of a point track at each frame (central differences, one-sided at the ends).
pub fn speeds(points: &[DVec3], frame_time: f64) -> Vec<f64> {
    let n = points.len();
    (0..n)
        .map(|f| {
            let a = f.saturating_sub(1);
            let b = (f + 1).min(n - 1);
            if b == a {
                0.0
            } else {
                #[allow(clippy::cast_precision_loss)] // at most 2
                let span = (b - a) as f64;
                (points[b] - points[a]).length() / (span * frame_time)
            }
        })
        .collect()
}

/// Contact intervals `(start, end)` of one foot point from its heights above its ground level
/// and its speeds, with hysteresis (see the module docs).
pub fn detect_foot(
    heights: &[f64],
    speeds: &[f64],
    frame_time: f64,
    config: &ContactConfig,
) -> Vec<(usize, usize)> {
    let frames = heights.len().min(speeds.len());
    hysteresis(
        frames,
        frame_time,
        config.min_seconds,
        |f| heights[f] < config.enter_height && speeds[f] < config.enter_speed,
        |f| heights[f] > config.exit_height || speeds[f] > config.exit_speed,
    )
}

/// Contact intervals of one hand from its speeds: still for at least `hand_min_seconds`.
pub fn detect_hand(speeds: &[f64], frame_time: f64, config: &ContactConfig) -> Vec<(usize, usize)> {
    hysteresis(
        speeds.len(),
        frame_time,
        config.hand_min_seconds,
        |f| speeds[f] < config.hand_speed,
        |f| speeds[f] >= config.hand_speed * 2.0,
    )
}

/// The intervals `(start, end)` of frames `0..frames` in contact: a contact starts at a frame
/// where `enters` holds and ends before the first later frame where `exits` holds (the last
/// frame when none does); intervals shorter than `min_seconds` are dropped.
fn hysteresis(
    frames: usize,
    frame_time: f64,
    min_seconds: f64,
    enters: impl Fn(usize) -> bool,
    exits: impl Fn(usize) -> bool,
) -> Vec<(usize, usize)> {
    let mut intervals = Vec::new();
    let mut start = None;
    for f in 0..frames {
        match start {
            None if enters(f) => start = Some(f),
            Some(s) if exits(f) => {
                intervals.push((s, f - 1));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        intervals.push((s, frames - 1));
    }
    #[allow(clippy::cast_precision_loss)] // frame counts
    intervals.retain(|&(s, e)| (e + 1 - s) as f64 * frame_time >= min_seconds);
    intervals
}

/// The blend weight of a frame `distance` frames outside a contact (0 inside): 1 inside,
/// easing smoothly to 0 at `blend + 1` frames away.
pub fn blend_weight(distance: usize, blend: usize) -> f64 {
    if distance == 0 {
        return 1.0;
    }
    #[allow(clippy::cast_precision_loss)] // frame counts
    let x = 1.0 - distance as f64 / (blend + 1) as f64;
    if x <= 0.0 {
        0.0
    } else {
        x * x * (3.0 - 2.0 * x)
    }
}

/// Per frame, the strongest contact of `channel` and its weight (see [`blend_weight`]),
/// blending over `blend` frames cut to half the gap to the other contacts of the same side
/// and limb (feet with feet, hands with hands) that do not overlap it.
pub fn weights(
    contacts: &[Contact],
    channel: Channel,
    frames: usize,
    blend: usize,
) -> Vec<Option<(f64, DVec3)>> {
    let mut out: Vec<Option<(f64, DVec3)>> = vec![None; frames];
    let same_limb = |a: Channel, b: Channel| a.side() == b.side() && a.is_hand() == b.is_hand();
    for c in contacts.iter().filter(|c| c.channel == channel) {
        let others = contacts.iter().filter(|d| same_limb(d.channel, channel));
        let before = others
            .clone()
            .filter(|d| d.end < c.start)
            .map(|d| (c.start - d.end - 1) / 2)
            .fold(blend, usize::min);
        let after = others
            .filter(|d| d.start > c.end)
            .map(|d| (d.start - c.end - 1) / 2)
            .fold(blend, usize::min);
        let from = c.start.saturating_sub(before);
        let to = (c.end + after).min(frames.saturating_sub(1));
        for (f, slot) in out.iter_mut().enumerate().take(to + 1).skip(from) {
            let w = if f < c.start {
                blend_weight(c.start - f, before)
            } else {
                blend_weight(f.saturating_sub(c.end), after)
            };
            if w > 0.0 && slot.is_none_or(|(old, _)| w > old) {
                *slot = Some((w, c.anchor));
            }
        }
    }
    out
}
