//! Grounding: a humanoid's animation made to stand on uneven ground — a slope, stairs, bumps,
//! any [`Ground`] — the way Final IK's Grounder does it in a game, over a whole clip.
//!
//! Per frame, for each foot:
//! 1. the foot's contact weight, from contacts detected on the clip's own feet (height above
//!    the clip's own floor and speed, with hysteresis: the retargeting's detector), blended in
//!    and out over a few frames;
//! 2. a foot the animation plants across a step's edge moved along its length, by the least
//!    that takes its whole sole onto one step, the same over the contact (no slide) and
//!    faded in and out with it ([`Grounded::shifts`]); a smooth slope or bump moves nothing;
//! 3. the foot turned towards the ground's normal under the ankle, by the contact weight (a
//!    foot in the air keeps the animation's turn), at most [`GroundConfig::max_tilt`];
//! 4. the foot lifted so that every sole point (the ankle, the ball of the foot when the toes
//!    are mapped, the toe tip) is as high above the ground under it as the animation had it
//!    above its own floor: a planted foot lands on the ground, a lifted one clears it by what
//!    the animation lifted it, so nothing crosses the ground between contacts. A toe tip
//!    that alone reaches over a step's edge or a bump bends the toes up instead (about the
//!    ball of the foot, by the least angle that sets the tip on the higher ground, within
//!    the toes' limit; the foot is lifted only by what the toes cannot take);
//!
//! then the pelvis moves by the lower foot's lift, smoothed by a critically damped spring
//! ([`GroundConfig::time_constant`]) run forwards and backwards over the clip (the lower of
//! the two: the pelvis goes down before a lower step needs it; the springs start again where
//! the animation itself jumps, as into a T-pose first frame, so a cut does not ring on),
//! never higher than the legs can reach from (that limit first bent below itself to at most
//! 20 m/s² of upward curvature: a foot goal on bumps moves it in corners the pelvis would
//! otherwise take in one frame) and never so low that a foot is nearer its hip than the
//! knee's limit lets the leg fold (bent above itself by at most 8 m/s²; where the two cross
//! the fold wins and the other foot hangs at its reach: a foot above the ground rather than
//! in it; where it holds the pelvis up, the corners where the springs meet it are rounded
//! upwards to at most 8 m/s²). The full-body solver ([`ikarus_solve::body`]) places the pelvis
//! and both feet exactly (the legs by their closed form, every limit kept); the spine, arms
//! and head keep the animation. Where a foot still ends below its goal (a hip's or knee's
//! limit keeps a leg from lifting its foot onto a higher step), the clip is solved again with
//! the pelvis held at least that much higher there (at most twice). On the
//! shared walks and runs over a slope, stairs and bumps the hips' vertical acceleration stays
//! within the clip's own plus 10 m/s² (`tests/ground.rs`).
//!
//! [`FrameGrounder`] does the same one frame at a time for a game's frame loop (the Bevy
//! plugin, the C API): contacts from the sole's height, the pelvis's spring forwards only, no
//! foot moved off a step's edge and no clip solved again (it sees no later frame); a foot the
//! ankle's limit leaves tilted into the ground is settled by [`FrameGrounder::settle`]'s rounds
//! where a game pays a solve for each.

mod foot;
mod frame;
mod mesh;
mod terrain;

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, JointLimit, LocalPose, ModelPose, Motion, Skeleton, fk};
use ikarus_solve::body::{BodyConfig, BodyRig, BodyScratch};
use ikarus_solve::{Effector, Goal, IkTask, SolveStatus};

use foot::{Foot, FootGoal};
pub use frame::{FrameGoals, FrameGroundConfig, FrameGrounder};
pub use mesh::{TriangleMesh, TriangleMeshError};
pub use terrain::{Ground, GroundFn, Heightfield, HeightfieldError, Plane};

use crate::retarget::contacts::{self, ContactConfig};
use crate::retarget::{Character, RetargetError};

/// Options of [`ground_motion`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GroundConfig {
    /// Contact detection on the clip's own feet (the retargeting's settings by default).
    pub contacts: ContactConfig,
    /// The time constant (seconds) of the pelvis's critically damped smoothing. Default 0.1:
    /// larger lowers and raises the pelvis more slowly (never above what the legs reach).
    pub time_constant: f64,
    /// The largest turn (radians) of a planted foot towards the ground's normal. Default 30°;
    /// the ankle's limit bounds it further.
    pub max_tilt: f64,
}

impl Default for GroundConfig {
    fn default() -> Self {
        Self {
            contacts: ContactConfig::default(),
            time_constant: 0.1,
            max_tilt: 30f64.to_radians(),
        }
    }
}

/// A grounded clip.
#[derive(Clone, Debug)]
pub struct Grounded {
    /// The motion on the same skeleton.
    pub motion: Motion,
    /// Per foot (left, right), the contact intervals `(start, end)` detected.
    pub contacts: [Vec<(usize, usize)>; 2],
    /// Per frame, the pelvis's move along +Y (metres).
    pub pelvis_offsets: Vec<f64>,
    /// Per frame and foot, the contact weight used.
    pub weights: Vec<[f64; 2]>,
    /// Frames where the solver could not meet a foot's goal within its tolerance.
    pub unreached: usize,
    /// The clip's own floor (+Y, metres): its lower ankle's ground level (the 5th
    /// percentile) less the ankle's height in an upright reference pose.
    pub floor: f64,
    /// Per foot with mapped toes: the toes joint and the toe tip in its frame, the third sole
    /// point (with the ankle and the toes joint) kept above the ground.
    pub toe_tips: [Option<(JointId, DVec3)>; 2],
    /// Per frame and foot, the horizontal move (metres) of a foot the animation plants
    /// across a step's edge: the least along the foot that takes the whole sole onto one
    /// step, the same over the contact, faded in and out with it; zero elsewhere.
    pub shifts: Vec<[DVec3; 2]>,
}

/// Why a clip cannot be grounded: the same reasons as a retarget's (a map lacking a leg bone,
/// a motion of another skeleton, bad frames), or the solver's body not found.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum GroundError {
    /// The clip or the map does not fit (see [`RetargetError`]).
    #[error(transparent)]
    Clip(#[from] RetargetError),
    /// The full-body solver does not find the character's body.
    #[error(transparent)]
    Body(#[from] ikarus_solve::body::BodyRigError),
    /// The time constant or the largest tilt is not a finite number ≥ 0.
    #[error("grounding: `{0}` must be a finite number ≥ 0")]
    Setting(&'static str),
}

/// Grounds every frame of `motion` (frames of `character`) on `ground` (see the module docs).
/// Model space is the character's, +Y up, metres as the skeleton has them.
///
/// # Errors
/// [`GroundError`] when the map lacks the hips, legs or feet, the motion does not fit, or a
/// setting is out of range.
///
/// Kept as one function of about 200 lines: it is the clip-wide pipeline (settings checked, the
/// clip's own floor, the pelvis springs and their cuts, the feet frame by frame), each step reading
/// the arrays the one before made; split, each piece would take most of these locals as arguments.
#[allow(clippy::too_many_lines)] // the per-frame steps in order, each a few lines
pub fn ground_motion(
    character: Character<'_>,
    motion: &Motion,
    ground: &dyn Ground,
    config: &GroundConfig,
) -> Result<Grounded, GroundError> {
    crate::retarget::check_clip(character, motion)?;
    for (name, value) in [
        ("time_constant", config.time_constant),
        ("max_tilt", config.max_tilt),
    ] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(GroundError::Setting(name));
        }
    }
    let skeleton = character.skeleton;
    let map = character.map;
    let (hips, legs) = foot::hips_and_legs(map)?;
    let rig = BodyRig::from_map(skeleton, map, &BodyConfig::default())?;
    // An upright reference (the rest pose, or a T-pose made from it when the rest lays the
    // bones along one axis): where the feet's rest heights and the legs' lengths come from.
    let (_, rest) = crate::retarget::align::reference(skeleton, map, Some(motion));
    let feet = Foot::both(skeleton, map, [legs[0][2], legs[1][2]], &rest);
    let frames = motion.len();
    let dt = motion.frame_time();
    let models: Vec<ModelPose> = fk::model_frames(skeleton, motion.frames());
    // The clip's own floor: the lower ankle's ground level less its height above the
    // reference's lowest joint.
    let lowest_rest = rest.positions().map(|p| p.y).fold(f64::INFINITY, f64::min);
    let ankle_clearance =
        0.5 * (rest.position(feet[0].ankle).y + rest.position(feet[1].ankle).y) - lowest_rest;
    let lower_ankle: Vec<f64> = models
        .iter()
        .map(|m| m.position(feet[0].ankle).y.min(m.position(feet[1].ankle).y))
        .collect();
    let floor = contacts::low_level(&lower_ankle) - ankle_clearance;
    // Contacts and their weights per foot.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // small, positive
    let blend = (config.contacts.blend_seconds / dt).round().max(1.0) as usize;
    let intervals = feet.each_ref().map(|foot| {
        let track: Vec<DVec3> = models.iter().map(|m| m.position(foot.ankle)).collect();
        let speeds = contacts::speeds(&track, dt);
        let heights: Vec<f64> = track
            .iter()
            .map(|p| p.y - floor - ankle_clearance)
            .collect();
        contacts::detect_foot(&heights, &speeds, dt, &config.contacts)
    });
    let weights: Vec<[f64; 2]> = (0..frames)
        .map(|f| {
            [0, 1].map(|s| {
                intervals[s]
                    .iter()
                    .map(|&(a, b)| {
                        let distance = if f < a { a - f } else { f.saturating_sub(b) };
                        contacts::blend_weight(distance, blend)
                    })
                    .fold(0.0, f64::max)
            })
        })
        .collect();
    // A foot the animation plants across a step's edge moved along its length, as little as
    // takes its sole off the edge, the same for the whole contact (no slide), blended in and
    // out with the contact.
    let shifts = edge_shifts(&models, &feet, &intervals, ground, blend);
    // Per frame, each foot's goal and lift.
    let mut goals: Vec<[FootGoal; 2]> = Vec::with_capacity(frames);
    for (f, m) in models.iter().enumerate() {
        goals.push([0, 1].map(|s| {
            let animated = (m, shifts[f][s]);
            feet[s].goal_with(
                animated,
                None,
                weights[f][s],
                (ground, floor),
                config.max_tilt,
            )
        }));
    }
    let omega = if config.time_constant > 0.0 {
        1.0 / config.time_constant
    } else {
        f64::INFINITY
    };
    let leg_bounds = legs.map(|joints| Leg::new(skeleton, joints));
    let cuts = cuts(&models, &[hips, feet[0].ankle, feet[1].ankle]);
    let mut solver = FrameSolver {
        skeleton,
        rig: &rig,
        body: BodyConfig::default(),
        task: IkTask {
            effectors: [hips, feet[0].ankle, feet[1].ankle]
                .map(|joint| Effector {
                    joint,
                    goal: Goal::default(),
                    weight: 1.0,
                })
                .to_vec(),
            ..IkTask::default()
        },
        scratch: BodyScratch::new(skeleton, &rig),
        feet: &feet,
        legs: leg_bounds,
        terrain: (ground, floor),
    };
    // The whole clip solved, and solved again (at most `RAISE_ATTEMPTS` times) with the
    // pelvis raised where a foot ended below its goal (a leg the hip's or knee's limit kept
    // from lifting its foot onto a higher step): that raise joins the knees' fold as a bound
    // the pelvis stays above.
    let mut raised: Option<Vec<f64>> = None;
    let mut attempts = 0;
    let (out, offsets, unreached) = loop {
        // The pelvis from the feet's goals, then the feet again with the ankle's limit held
        // against the shin that pelvis leaves (the pelvis at its offset, the ankle at its
        // goal, the knee on its side; the lowered pelvis's deeper knee bend turns the
        // animated one), the pelvis again for those goals (a foot turned onto its limit may
        // need it elsewhere), and the feet once more.
        let mut offsets = Vec::new();
        for _ in 0..2 {
            offsets = pelvis_offsets(
                &models,
                &goals,
                (leg_bounds, raised.as_deref()),
                &cuts,
                (omega, dt),
            );
            for (f, m) in models.iter().enumerate() {
                for s in 0..2 {
                    let up = DVec3::Y * offsets[f];
                    let shin = feet[s].predicted_shin(m, legs[s], up, goals[f][s].position);
                    if shin.is_some() {
                        goals[f][s] = feet[s].goal_with(
                            (m, shifts[f][s]),
                            shin,
                            weights[f][s],
                            (ground, floor),
                            config.max_tilt,
                        );
                    }
                }
            }
        }
        // Where the bounds kept the pelvis higher than a foot reaches down from, that foot
        // hangs at its reach (above the ground it cannot reach) instead of pulling the
        // pelvis down and the other foot into its step.
        let mut hung = goals.clone();
        for (f, m) in models.iter().enumerate() {
            for (leg, goal) in leg_bounds.iter().zip(&mut hung[f]) {
                hang(leg, m, DVec3::Y * offsets[f], goal);
            }
        }
        let mut out =
            Motion::for_skeleton(skeleton, dt).map_err(|_| RetargetError::FrameTime(dt))?;
        let mut unreached = 0;
        let mut short = vec![0.0; frames];
        for f in 0..frames {
            let mut pose = motion.frames()[f].clone();
            let (converged, below) =
                solver.frame((&models[f], shifts[f]), (offsets[f], &hung[f]), &mut pose);
            unreached += usize::from(!converged);
            short[f] = below;
            // The motion was sized for this skeleton.
            let _ = out.push(pose);
        }
        attempts += 1;
        if attempts > RAISE_ATTEMPTS || short.iter().all(|&d| d <= SINK_TOLERANCE) {
            break (out, offsets, unreached);
        }
        let before = raised
            .take()
            .unwrap_or_else(|| vec![f64::NEG_INFINITY; frames]);
        raised = Some(
            offsets
                .iter()
                .zip(&short)
                .zip(before)
                .map(|((o, d), r)| if *d > SINK_TOLERANCE { r.max(o + d) } else { r })
                .collect(),
        );
    };
    Ok(Grounded {
        motion: out,
        contacts: intervals,
        pelvis_offsets: offsets,
        weights,
        unreached,
        toe_tips: feet.each_ref().map(|f| f.toes.zip(f.tip)),
        floor,
        shifts,
    })
}

/// The full-body solve of one grounded frame, with what it keeps from frame to frame.
struct FrameSolver<'a> {
    skeleton: &'a Skeleton,
    rig: &'a BodyRig,
    body: BodyConfig,
    /// Hips, left ankle, right ankle.
    task: IkTask,
    scratch: BodyScratch,
    feet: &'a [Foot; 2],
    legs: [Leg; 2],
    terrain: (&'a dyn Ground, f64),
}

impl FrameSolver<'_> {
    /// `pose` (the animated frame, whose model frames are `animated`; `shifts`: the feet's
    /// moves off steps' edges) solved with the pelvis raised by `offset` and the feet on
    /// `goals`: whether it converged, and how far (metres) the lower of the feet ended below
    /// its goal (a leg the hip's or knee's limit kept from lifting its foot).
    fn frame(
        &mut self,
        (animated, shifts): (&ModelPose, [DVec3; 2]),
        (offset, goals): (f64, &[FootGoal; 2]),
        pose: &mut LocalPose,
    ) -> (bool, f64) {
        let (skeleton, feet, m) = (self.skeleton, self.feet, animated);
        let hips = self.task.effectors[0].joint;
        self.task.effectors[0].goal = Goal {
            position: Some(m.position(hips) + DVec3::Y * offset),
            orientation: Some(m.rotation(hips)),
        };
        for (effector, goal) in self.task.effectors[1..].iter_mut().zip(goals) {
            effector.goal = Goal {
                position: Some(goal.position),
                orientation: Some(goal.rotation),
            };
        }
        let mut pelvis = offset;
        let mut report =
            self.rig
                .solve_with(skeleton, &self.task, &self.body, pose, &mut self.scratch);
        let mut toes = goals.map(|g| g.toes);
        if report.status != SolveStatus::Converged {
            // A foot the ankle's limit kept from turning to its goal (the shin as the solve
            // leaves it, the pelvis lowered, cannot take the ground's slope) sits tilted:
            // raised until no sole point is in the ground, its toes bent for it as it
            // stands, and solved again.
            for round in 0..=SINK_ROUNDS {
                let solved = self.scratch.model();
                let [h, l, r] = &mut self.task.effectors[..] else {
                    unreachable!("three effectors: hips and feet");
                };
                let (Some(hips), Some(left), Some(right)) = (
                    h.goal.position.as_mut(),
                    l.goal.position.as_mut(),
                    r.goal.position.as_mut(),
                ) else {
                    break;
                };
                let (bent, sinking) = settle_round(
                    (feet, &self.legs),
                    (m, shifts, solved),
                    self.terrain,
                    (hips, [left, right], &mut pelvis),
                    round < SINK_ROUNDS,
                );
                toes = bent;
                if round == SINK_ROUNDS || !sinking {
                    break;
                }
                report =
                    self.rig
                        .solve_with(skeleton, &self.task, &self.body, pose, &mut self.scratch);
            }
        }
        // How far a foot ended below its goal.
        let solved = self.scratch.model();
        let below = (0..2)
            .filter_map(|s| {
                let goal = self.task.effectors[1 + s].goal.position?;
                Some(goal.y - solved.position(feet[s].ankle).y)
            })
            .fold(0.0, f64::max);
        // Toes bent up over an edge (their parent's frame is the foot's goal, now met).
        for (foot, bent) in feet.iter().zip(toes) {
            if let (Some(joint), Some(bent)) = (foot.toes, bent) {
                pose[joint].rotation = bent;
            }
        }
        (report.status == SolveStatus::Converged, below)
    }
}

/// Per frame and foot, how far a foot the animation plants across a step's edge is moved
/// (horizontally, along the foot): for each contact of `intervals`, [`foot::off_edge`] over
/// the contact's frames; outside a contact the move fades with the contact's blend (`blend`
/// frames).
fn edge_shifts(
    models: &[ModelPose],
    feet: &[Foot; 2],
    intervals: &[Vec<(usize, usize)>; 2],
    ground: &dyn Ground,
    blend: usize,
) -> Vec<[DVec3; 2]> {
    let mut shifts = vec![[DVec3::ZERO; 2]; models.len()];
    for (s, foot) in feet.iter().enumerate() {
        for &(a, b) in &intervals[s] {
            let soles: Option<Vec<[DVec3; 3]>> =
                models[a..=b].iter().map(|m| foot.sole(m)).collect();
            let Some(soles) = soles else {
                continue;
            };
            let by = foot::off_edge(&soles, ground);
            if by == DVec3::ZERO {
                continue;
            }
            for (f, shift) in shifts.iter_mut().enumerate() {
                let distance = if f < a { a - f } else { f.saturating_sub(b) };
                let w = contacts::blend_weight(distance, blend);
                if w > 0.0 && w * by.length() > shift[s].length() {
                    shift[s] = by * w;
                }
            }
        }
    }
    shifts
}

/// The pelvis's move along +Y per frame for the feet's `goals` (see the module docs): the
/// lower foot's lift, smoothed by the springs (restarted at `cuts`), never above what both
/// legs reach from and never below what their knees fold to ([`Leg::hip_heights`]) nor
/// below `raised` (per frame; where a first solve left a foot below its goal).
#[allow(clippy::too_many_lines)] // the bounds, their bending and the springs, in order
fn pelvis_offsets(
    models: &[ModelPose],
    goals: &[[FootGoal; 2]],
    (legs, raised): ([Leg; 2], Option<&[f64]>),
    cuts: &[usize],
    (omega, dt): (f64, f64),
) -> Vec<f64> {
    let frames = models.len();
    // The pelvis: the lower foot's lift, smoothed, never above what both legs reach from
    // and never so low that a foot is nearer its hip than the knee folds (a knee limited to
    // 150° keeps the ankle a quarter of the leg from the hip: a foot on a higher step, or
    // swinging over one, would otherwise stop short of its goal inside the step). Where the
    // two bounds cross, the fold wins: a foot above the ground rather than in it.
    let (mut reach_limits, mut fold_limits) = (Vec::with_capacity(frames), Vec::new());
    for (f, m) in models.iter().enumerate() {
        let (lowest, highest) = pelvis_band(&legs, m, goals[f].map(|g| g.position));
        reach_limits.push(highest);
        fold_limits.push(raised.map_or(lowest, |r| lowest.max(r[f])));
    }
    // Bent no faster than the pelvis may be (a foot goal on an uneven ground moves the limit
    // in corners, and a pelvis held to it would take them in one frame).
    let highest = bent_below(&reach_limits, MAX_BEND, dt);
    let lowest: Vec<f64> = bent_below(
        &fold_limits.iter().map(|l| -l).collect::<Vec<_>>(),
        LIFT_BEND,
        dt,
    )
    .into_iter()
    .map(|l| -l)
    .collect();
    let bounded = |f: usize, x: f64| within(x, (lowest[f], highest[f]));
    // Per frame the lower foot's lift, within what both legs reach from.
    let targets: Vec<f64> = (0..frames)
        .map(|f| bounded(f, goals[f][0].lift.min(goals[f][1].lift)))
        .collect();
    // Smoothed by a critically damped spring run forwards and backwards over the clip, the
    // lower of the two taken: the pelvis goes down before a lower step needs it and comes up
    // after, never in a jump; then never above the legs' reach. Where the animation itself
    // cuts (a T-pose first frame, clips joined), the springs start again: nothing is
    // smoothed across a cut, so the cut does not ring on in the frames after it.
    let mut forward = Vec::with_capacity(frames);
    let mut backward = Vec::with_capacity(frames);
    for range in cuts.windows(2).map(|w| w[0]..w[1]) {
        forward.extend(spring(targets[range.clone()].iter().copied(), omega, dt));
        let mut back = spring(targets[range].iter().rev().copied(), omega, dt);
        back.reverse();
        backward.extend(back);
    }
    let mut offsets: Vec<f64> = forward
        .iter()
        .zip(&backward)
        .enumerate()
        .map(|(f, (a, b))| bounded(f, a.min(*b)))
        .collect();
    // Where the lower bound held the pelvis up, the springs met it at a corner (the pelvis
    // would stop falling in one frame): each stretch between cuts that met it lifted to the
    // least curve above it that bends upwards by at most `LIFT_BEND`.
    for range in cuts.windows(2).map(|w| w[0]..w[1]) {
        let held = range
            .clone()
            .any(|f| lowest[f].is_finite() && forward[f].min(backward[f]) < lowest[f]);
        if held {
            lift_corners(&mut offsets[range], LIFT_BEND, dt);
        }
    }
    offsets
}

/// `values` (`dt` seconds apart) replaced by the least curve at or above them whose second
/// derivative is at most `bend` everywhere: the upper concave hull of `values − bend·t²/2`,
/// plus `bend·t²/2` again. Corners where a falling curve meets a floor are rounded upwards.
fn lift_corners(values: &mut [f64], bend: f64, dt: f64) {
    #[allow(clippy::cast_precision_loss)] // frame counts
    let point = |i: usize, v: f64| {
        let t = i as f64 * dt;
        (t, v - 0.5 * bend * t * t)
    };
    // The upper hull's vertices (indices), left to right.
    let mut hull: Vec<usize> = Vec::with_capacity(values.len());
    for i in 0..values.len() {
        let c = point(i, values[i]);
        while hull.len() >= 2 {
            let a = point(hull[hull.len() - 2], values[hull[hull.len() - 2]]);
            let b = point(hull[hull.len() - 1], values[hull[hull.len() - 1]]);
            // b lies on or below the chord a–c: not a vertex of the upper hull.
            if (b.1 - a.1) * (c.0 - a.0) <= (c.1 - a.1) * (b.0 - a.0) {
                hull.pop();
            } else {
                break;
            }
        }
        hull.push(i);
    }
    let lifted: Vec<f64> = hull
        .windows(2)
        .flat_map(|w| {
            let (a, b) = (point(w[0], values[w[0]]), point(w[1], values[w[1]]));
            (w[0]..w[1]).map(move |i| {
                #[allow(clippy::cast_precision_loss)] // frame counts
                let t = i as f64 * dt;
                let g = a.1 + (b.1 - a.1) * (t - a.0) / (b.0 - a.0);
                g + 0.5 * bend * t * t
            })
        })
        .collect();
    for (v, l) in values.iter_mut().zip(lifted) {
        *v = v.max(l);
    }
}

/// The band of pelvis moves along +Y (metres, from the animated frames `model`) that lets
/// both `legs` reach their `ankles` goals: `(lowest, highest)`, the highest from the legs'
/// reach, the lowest from their knees' fold ([`Leg::hip_heights`]); −∞ / +∞ where a bound
/// does not exist.
fn pelvis_band(legs: &[Leg; 2], model: &ModelPose, ankles: [DVec3; 2]) -> (f64, f64) {
    let (mut lowest, mut highest) = (f64::NEG_INFINITY, f64::INFINITY);
    for (leg, ankle) in legs.iter().zip(ankles) {
        let hip = model.position(leg.joints[0]);
        let (lo, hi) = leg.hip_heights(model, hip, ankle);
        lowest = lowest.max(lo - hip.y);
        highest = highest.min(hi - hip.y);
    }
    (lowest, highest)
}

/// `x` held within `(lowest, highest)` where they are finite, the lowest winning where the
/// two cross (a foot above the ground rather than in it).
fn within(x: f64, (lowest, highest): (f64, f64)) -> f64 {
    let x = if highest.is_finite() {
        x.min(highest)
    } else {
        x
    };
    if lowest.is_finite() { x.max(lowest) } else { x }
}

/// `goal` raised to where the leg (animated in `model`, its hip moved by `shift`) reaches
/// when it is further below the hip than that (the foot hangs at full reach).
fn hang(leg: &Leg, model: &ModelPose, shift: DVec3, goal: &mut FootGoal) {
    goal.lift += hang_position(leg, model, shift, &mut goal.position);
}

/// [`hang`] on an ankle's goal position alone: how far it was raised.
fn hang_position(leg: &Leg, model: &ModelPose, shift: DVec3, position: &mut DVec3) -> f64 {
    let hip = model.position(leg.joints[0]) + shift;
    let (_, highest) = leg.hip_heights(model, hip, *position);
    if highest.is_finite() && hip.y > highest {
        position.y += hip.y - highest;
        hip.y - highest
    } else {
        0.0
    }
}

/// One round of settling feet after a solve (see [`ground_motion`] and
/// [`FrameGrounder::settle`]): per foot the solve put on its goal's place (within
/// [`PLACED`]), how far it must
/// still go up for no sole point to be in the ground (the ankle's limit left it tilted;
/// `animated`: the animated frames, `shifts`: the feet's moves off edges, `solved`: the
/// solve's frames) and its toes bent for it as it stands. With `apply`, the feet's goal
/// positions (`ends`) are raised by that and, where a raised foot comes nearer its hip than
/// the knee folds, the pelvis's (`hips`, and its offset `pelvis`) with it, the other foot
/// hanging at its reach if it must. The toes, and whether any foot must still go up.
fn settle_round(
    (feet, legs): (&[Foot; 2], &[Leg; 2]),
    (animated, shifts, solved): (&ModelPose, [DVec3; 2], &ModelPose),
    terrain: (&dyn Ground, f64),
    (hips, ends, pelvis): (&mut DVec3, [&mut DVec3; 2], &mut f64),
    apply: bool,
) -> ([Option<DQuat>; 2], bool) {
    let m = animated;
    let settled = [0, 1].map(|s| {
        let (raise, bent) = feet[s].settle((m, shifts[s], solved), terrain);
        let placed = solved.position(feet[s].ankle).distance(*ends[s]) <= PLACED;
        (if placed { raise } else { 0.0 }, bent)
    });
    let toes = settled.map(|(_, bent)| bent);
    let sinking = settled.iter().any(|&(d, _)| d > SINK_TOLERANCE);
    if !(apply && sinking) {
        return (toes, sinking);
    }
    let [left, right] = ends;
    for (end, (d, _)) in [&mut *left, &mut *right].into_iter().zip(settled) {
        if d > SINK_TOLERANCE {
            end.y += d;
        }
    }
    // A foot raised nearer its hip than the knee folds lifts the pelvis with it (the other
    // foot hangs at its reach if it must): it would otherwise stop short inside the ground
    // it was raised out of.
    let deficit = [&*left, &*right]
        .into_iter()
        .zip(legs)
        .map(|(end, leg)| {
            let hip = m.position(leg.joints[0]) + DVec3::Y * *pelvis;
            let (lowest, _) = leg.hip_heights(m, hip, *end);
            lowest - hip.y
        })
        .fold(0.0, f64::max);
    if deficit > SINK_TOLERANCE {
        *pelvis += deficit;
        hips.y += deficit;
        for (end, leg) in [left, right].into_iter().zip(legs) {
            hang_position(leg, m, DVec3::Y * *pelvis, end);
        }
    }
    (toes, sinking)
}

/// A leg, `[hip, knee, ankle]`, and the largest bend its knee allows ([`fold_bend`]).
#[derive(Clone, Copy, Debug)]
struct Leg {
    joints: [JointId; 3],
    fold: f64,
}

impl Leg {
    /// The leg `joints` of `skeleton`, its knee's fold read from its limit.
    fn new(skeleton: &Skeleton, joints: [JointId; 3]) -> Self {
        Self {
            joints,
            fold: fold_bend(skeleton, joints),
        }
    }

    /// The heights (+Y) between which the hip, at `hip`'s place across, lets the ankle reach
    /// `goal` (the bones as `model` poses them): no nearer than the knee folds (with a
    /// thousandth to spare) and no further than 0.999 of the leg's length. A bound that
    /// does not exist there (the goal further across than the fold's or the leg's reach) is
    /// −∞.
    fn hip_heights(&self, model: &ModelPose, hip: DVec3, goal: DVec3) -> (f64, f64) {
        let [a, b, c] = self.joints.map(|j| model.position(j));
        let (l1, l2) = (b.distance(a), c.distance(b));
        let across = (hip - goal).reject_from(DVec3::Y).length_squared();
        let above = |r: f64| {
            let room = r * r - across;
            if room > 0.0 {
                goal.y + room.sqrt()
            } else {
                f64::NEG_INFINITY
            }
        };
        let shortest = 1.001
            * (l1 * l1 + l2 * l2 + 2.0 * l1 * l2 * self.fold.cos())
                .max(0.0)
                .sqrt();
        (above(shortest), above(0.999 * (l1 + l2)))
    }
}

/// The largest angle (radians, 0 straight) between the thigh and the shin of the leg
/// `[hip, knee, ankle]` that the knee's limit allows: a hinge's, sampled over its range at the
/// rest pose's offsets; π (fully folded) for a knee of another limit or none.
fn fold_bend(skeleton: &Skeleton, [_, knee, ankle]: [JointId; 3]) -> f64 {
    let JointLimit::Hinge(hinge) = skeleton.limit(knee) else {
        return std::f64::consts::PI;
    };
    let thigh = skeleton.rest(knee).translation;
    let shin = skeleton.rest(ankle).translation;
    let rest = skeleton.rest(knee).rotation;
    (0..=FOLD_SAMPLES)
        .map(|i| {
            let t = f64::from(i) / f64::from(FOLD_SAMPLES);
            let angle = hinge.min + (hinge.max - hinge.min) * t;
            let bent = rest * DQuat::from_axis_angle(hinge.axis, angle) * shin;
            thigh.angle_between(bent)
        })
        .filter(|a| a.is_finite())
        .fold(0.0, f64::max)
}

/// Samples over a knee hinge's range in [`fold_bend`] (the bend found within 150°/64).
const FOLD_SAMPLES: u32 = 64;

/// The most the pelvis's reach limit bends upwards, m/s² (see [`bent_below`]): an 18 cm step
/// taken by the pelvis's spring at its default 0.1 s bends it about as much.
const MAX_BEND: f64 = 20.0;

/// The most (m/s²) the pelvis's offset bends upwards where the lower bound held it up
/// ([`lift_corners`]): the hips then accelerate at most this much more than the clip's own.
const LIFT_BEND: f64 = 8.0;

/// Solves of the whole clip again with the pelvis raised where a foot ended below its goal
/// (see [`ground_motion`]).
const RAISE_ATTEMPTS: usize = 2;

/// Rounds of raising a foot the ankle's limit left tilted into the ground ([`foot::Foot::settle`])
/// and solving again: raising the foot turns the shin, and with it what the ankle can do, so
/// a round leaves a little for the next.
const SINK_ROUNDS: usize = 8;
/// How far (metres) a sole point may be below its place before the foot is raised for it.
const SINK_TOLERANCE: f64 = 1e-4;
/// How far (metres) a solved ankle may be from its goal for a settle round to raise its foot
/// (one further off is not where the goal put it: the leg or the body's compromise held it).
/// 0.1 mm left a limited humanoid's swinging toe 6.4 mm into a step's nose on the stairs
/// (CMU walk); 5 mm: 0.1 mm, every other grounding table the same but a hanging foot 41 →
/// 45 mm (`tests/ground.rs`).
const PLACED: f64 = 5e-3;

/// The largest curve at or below `limits` (per frame, `dt` apart) that bends upwards by at
/// most `bend` (its second derivative): at each frame the lowest of the parabolas
/// `limits[s] + bend/2·(t − t_s)²` over the frames `s` within half a second (further ones
/// are metres above). Non-finite limits (none, or a goal out of reach whatever the pelvis)
/// are left out; a frame with no finite limit near keeps its own.
fn bent_below(limits: &[f64], bend: f64, dt: f64) -> Vec<f64> {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // small, positive
    let window = (0.5 / dt).ceil() as usize;
    (0..limits.len())
        .map(|t| {
            let lo = t.saturating_sub(window);
            let hi = (t + window + 1).min(limits.len());
            (lo..hi)
                .filter(|&s| limits[s].is_finite())
                .map(|s| {
                    #[allow(clippy::cast_precision_loss)] // frame counts
                    let u = (t as f64 - s as f64) * dt;
                    limits[s] + 0.5 * bend * u * u
                })
                .fold(limits[t], f64::min)
        })
        .collect()
}

/// A frame is a cut when one of the tracked joints moves at least this far (metres) into it
/// and at least [`CUT_RATIO`] times as far as it moves into the frames on either side.
const CUT_DISTANCE: f64 = 0.05;
/// See [`CUT_DISTANCE`].
const CUT_RATIO: f64 = 4.0;

/// Where `models` cut, as segment bounds: `0`, every frame the animation jumps into (one of
/// `joints` moves [`CUT_DISTANCE`] or more, and [`CUT_RATIO`] times what it moves into the
/// frames around: a jump, not a fast limb, whatever the frame rate), and `models.len()`.
fn cuts(models: &[ModelPose], joints: &[JointId]) -> Vec<usize> {
    let step = |f: usize, j: JointId| models[f].position(j).distance(models[f - 1].position(j));
    let n = models.len();
    let mut bounds = vec![0];
    for f in 1..n {
        let jumped = joints.iter().any(|&j| {
            let d = step(f, j);
            let before = if f >= 2 { step(f - 1, j) } else { 0.0 };
            let after = if f + 1 < n { step(f + 1, j) } else { 0.0 };
            d >= CUT_DISTANCE && d >= CUT_RATIO * before.max(after)
        });
        if jumped {
            bounds.push(f);
        }
    }
    bounds.push(n);
    bounds
}

/// A critically damped spring of angular frequency `omega` following `targets` frame by
/// frame (`dt` seconds apart), from rest at the first target; the exact step of the spring's
/// equation each frame.
fn spring(targets: impl Iterator<Item = f64>, omega: f64, dt: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let (mut x, mut v) = (f64::NAN, 0.0);
    for target in targets {
        if x.is_nan() || omega.is_infinite() {
            (x, v) = (target, 0.0);
        } else {
            let delta = x - target;
            let temp = (v + omega * delta) * dt;
            let decay = (-omega * dt).exp();
            v = (v - omega * temp) * decay;
            x = target + (delta + temp) * decay;
        }
        out.push(x);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spring_follows_a_step_without_overshoot() {
        // A critically damped spring's step response: 1 − (1 + ωt)·e^(−ωt), never above the
        // step; checked against that closed form at every frame.
        let (omega, dt) = (10.0, 1.0 / 60.0);
        let targets = std::iter::once(0.0).chain(std::iter::repeat_n(1.0, 120));
        let out = spring(targets, omega, dt);
        for (k, x) in out.iter().enumerate().skip(1) {
            #[allow(clippy::cast_precision_loss)] // frame counts
            let t = k as f64 * dt;
            let exact = 1.0 - (1.0 + omega * t) * (-omega * t).exp();
            assert!((x - exact).abs() < 1e-12, "{k}: {x} vs {exact}");
            assert!(*x <= 1.0);
        }
    }

    #[test]
    fn a_limit_with_a_dent_is_bent_below_it_smoothly() {
        // A flat limit with a one-frame dent of 5 mm at 120 fps: the curve stays at or below
        // the limit everywhere, meets it where it is flat far from the dent, and bends
        // upwards by no more than `bend` (second differences / dt²).
        let dt = 1.0 / 120.0;
        let mut limits = vec![0.1; 241];
        limits[120] = 0.095;
        limits[10] = f64::INFINITY;
        let bend = 20.0;
        let out = bent_below(&limits, bend, dt);
        for (t, (&o, &l)) in out.iter().zip(&limits).enumerate() {
            assert!(o <= l, "{t}: {o} above {l}");
        }
        assert_eq!(out[120], 0.095);
        assert_eq!(out[0], 0.1);
        assert_eq!(out[240], 0.1);
        // A frame without a limit of its own is under its neighbours' parabolas.
        assert!(
            (out[10] - (0.1 + 0.5 * bend * dt * dt)).abs() < 1e-15,
            "{}",
            out[10]
        );
        for t in 1..240 {
            let second = (out[t + 1] - 2.0 * out[t] + out[t - 1]) / (dt * dt);
            assert!(second <= bend + 1e-6, "{t}: bends {second}");
        }
        // Its width: the parabola from the dent's bottom meets 0.1 after √(2·0.005/20) s.
        let reach = (2.0 * 0.005 / bend).sqrt();
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // small, positive
        let frames = (reach / dt).ceil() as usize;
        assert!(out[120 + frames - 2] < 0.1 && out[120 + frames + 1] == 0.1);
    }

    #[test]
    fn a_corner_on_a_floor_is_lifted_to_a_bounded_bend_and_a_gentle_curve_is_kept() {
        // A pelvis falling at 1 m/s onto a floor that rises at 1 m/s (a V at 120 fps): the
        // lifted curve is at or above it, bends upwards by at most 8 m/s² (second
        // differences), keeps both ends and lifts the corner.
        let dt = 1.0 / 120.0;
        let v: Vec<f64> = (0..241_i32)
            .map(|i| (f64::from(i) * dt - 1.0).abs())
            .collect();
        let mut lifted = v.clone();
        lift_corners(&mut lifted, 8.0, dt);
        for (a, b) in lifted.iter().zip(&v) {
            assert!(a >= b);
        }
        for t in 1..240 {
            let second = (lifted[t + 1] - 2.0 * lifted[t] + lifted[t - 1]) / (dt * dt);
            assert!(second <= 8.0 + 1e-6, "{t}: bends {second}");
        }
        assert_eq!((lifted[0], lifted[240]), (v[0], v[240]));
        // At the corner, the parabola of bend 8 tangent to both sides: c + 4·(t − 1)², slope
        // ±1 at t − 1 = ±1/8, where it meets the V at 1/8: c = 1/8 − 4/64 = 1/16.
        assert!((lifted[120] - 0.0625).abs() < 1e-9, "{}", lifted[120]);
        // A curve bending less than that everywhere is kept.
        let gentle: Vec<f64> = (0..241_i32)
            .map(|i| 0.01 * (f64::from(i) * dt).sin())
            .collect();
        let mut kept = gentle.clone();
        lift_corners(&mut kept, 8.0, dt);
        for (a, b) in kept.iter().zip(&gentle) {
            assert!((a - b).abs() < 1e-12, "{a} vs {b}");
        }
    }

    #[test]
    fn a_jump_in_the_animation_is_a_cut_and_a_fast_limb_is_not() {
        // One joint walking at 1.2 m/s at 120 fps, jumping 30 cm into frame 1 (a T-pose first
        // frame) and 20 cm into frame 50; a second joint swinging at 8 m/s is no cut.
        use ikarus_core::SkeletonBuilder;
        let mut builder = SkeletonBuilder::new();
        builder.joint("a", None, ikarus_core::Transform::IDENTITY);
        builder.joint("b", None, ikarus_core::Transform::IDENTITY);
        let skeleton = builder.build().unwrap();
        let dt = 1.0 / 120.0;
        let (a, b) = (skeleton.joint("a").unwrap(), skeleton.joint("b").unwrap());
        let models: Vec<ModelPose> = (0..100_i32)
            .map(|f| {
                let mut pose = skeleton.rest_pose();
                let t = f64::from(f) * dt;
                let jumps = if f >= 1 { 0.3 } else { 0.0 } + if f >= 50 { 0.2 } else { 0.0 };
                pose[a].translation = DVec3::new(1.2 * t + jumps, 0.0, 0.0);
                pose[b].translation = DVec3::new(0.0, 0.0, (8.0 * t).sin());
                let mut model = ModelPose::new(&skeleton);
                fk::forward_kinematics(&skeleton, &pose, &mut model);
                model
            })
            .collect();
        assert_eq!(cuts(&models, &[a, b]), vec![0, 1, 50, 100]);
        assert_eq!(cuts(&models, &[b]), vec![0, 100]);
    }
}
