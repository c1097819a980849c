//! MMD evaluation: one frame of an animated pose through a rig's inheritance and IK chains,
//! as `MikuMikuDance` plays a VMD.
//!
//! Per frame ([`MmdEvaluator::evaluate`]):
//! 1. every joint takes its animated local transform (sampled from the motion); IK rotations
//!    and inherited motion start at identity; forward kinematics over the whole skeleton;
//! 2. joints are visited in the rig's order (deform layer, then file order; after-physics
//!    joints last — no physics is simulated). A joint that inherits (付与) takes `ratio` of its
//!    source's rotation (slerped from identity; negative ratios turn the other way) and
//!    translation; the source's motion is its animated one, or what the source itself
//!    inherited when it inherits too (unless the inherit is "local"), times the source's IK
//!    rotation when the source is an IK link. A joint that is an IK chain's goal runs that
//!    chain (when the motion has it enabled), then its links' subtrees are updated.
//!
//! **The chain step in compatible mode (MMD's CCD, as MMD 9.32 plays it).** Links
//! are visited effector side first, every iteration. At link `k` the rotation taking the
//! link→effector direction onto the link→goal direction is built in the link's parent frame,
//! its angle the arc cosine of the directions' dot product rounded to single precision (MMD's
//! arithmetic: near alignment the steps come in quanta of `acos(1 − n·2⁻²⁴)`), capped at the
//! chain's unit angle times `k + 1`, and applied on the left of the link's rotation. A limited link's result is decomposed into Euler angles in an order chosen by
//! its limit (Y-X-Z when the X range lies within ±90°, else Z-Y-X when the Y range does, else
//! X-Z-Y; middle angle capped at 88°) and clamped; in the first half of the budget an angle
//! past a bound is reflected back into the range when it fits, and a link limited to one
//! axis (knees) turns about that axis only. The budget is the chain's loop count raised to
//! `⌊4π / unit angle⌋` (at most 360). The chain is skipped when the effector starts within
//! [`MmdSettings::compatible_tolerance`] of the goal, stops after an iteration that leaves it
//! that close, and stops outright when, at a link, the effector and goal directions agree
//! (`|â − b̂|² < 1e-7`); the last iterate is kept (no rollback). These rules are the ones
//! mmd-anim-runtime 0.5.3 measured on MMD 9.32 (its tests cite captures of the budget and of
//! the `k + 1` cap) and babylon-mmd and nanoem share (the cap, the reflection, the Euler
//! orders); `tests/mmd_parity.rs` holds compatible mode to that runtime bone by bone.
//! [`IkMode::Exact`] has its own step, iterating up to
//! [`MmdSettings::exact_iterations`], until the distance is below
//! [`MmdSettings::exact_tolerance`] or CCD stalls (under 10 % of the squared distance gained
//! in 16 iterations), keeping the best; its steps are not capped by the unit angle (limits
//! still apply; a link whose limit lets one axis turn keeps one angle about it, mirrored on
//! the first iteration when it starts outside its range). A chain still short then gets a
//! damped least-squares polish on all its links at once (nearly straight hair and neckties,
//! where CCD creeps), and a leg (plane-mode knee under a free link) its knee angle from the
//! law of cosines.
//!
//! **Cost.** Chains whose links are consecutive (all of a PMD's) iterate on local frames
//! without forward kinematics; exact mode's plane-mode steps after the first use half-angle
//! arithmetic instead of `acos` and `sin_cos` (`plane_step_by_half_angles`). Compatible mode
//! runs MMD's budget, which for hair and neckties (unit angle 0.12 rad) is 104 iterations
//! rather than their authored 8 and 15, so its cost per frame is above the figure
//! BENCHMARKS.md ("MMD") gives for the earlier rules.
//!
//! Exact mode's step is saba's (`MMDIkSolver`) with X-Y-Z Euler clamps, the order of the
//! limit itself ([`EulerLimit`] with [`EulerOrder::Xyz`](ikarus_core::EulerOrder)).

use std::f64::consts::PI;

use glam::{DQuat, DVec3};
use ikarus_core::rig::{Inherit, Rig, RigError};
use ikarus_core::{EulerLimit, JointId, LocalPose, ModelPose, Skeleton, fk};

mod finish;
mod step;

use finish::{knee_closed_form, polish_in_model, polish_local};
use step::{MmdStep, at_bound, clamp_euler, mmd_budget, mmd_step, step, step_in_link};

/// `cos(1e-3°)`: MMD leaves turns smaller than this alone.
const COS_SMALLEST_TURN: f64 = 0.999_999_999_847_691_3;

/// How IK chains are iterated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IkMode {
    /// MMD's rules (see the [module docs](self)): its budget and stops; leaves the residuals
    /// MMD leaves.
    #[default]
    Compatible,
    /// Iterate until the effector is within [`MmdSettings::exact_tolerance`] of the goal (or
    /// the budget runs out), limits kept.
    Exact,
}

/// Evaluation settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MmdSettings {
    /// Compatible or exact.
    pub mode: IkMode,
    /// Exact mode's goal distance, metres. Default 1e-4 MMD units (8 µm).
    pub exact_tolerance: f64,
    /// Exact mode's iteration budget per chain (at least the chain's own loop count).
    pub exact_iterations: u32,
    /// Compatible mode skips a chain whose effector starts this close to the goal, and stops
    /// it after an iteration that leaves the effector this close, metres. Default 1e-4 MMD
    /// units (8 µm), the rule of the established runtimes: babylon-mmd stops when the squared
    /// distance is under 1e-8 units², mmd-anim-runtime at its default tolerance of 1e-4
    /// units. A skipped chain's links keep their animated rotations, limits unapplied, as in
    /// MMD. 0 turns the stop off.
    pub compatible_tolerance: f64,
}

impl Default for MmdSettings {
    fn default() -> Self {
        Self {
            mode: IkMode::Compatible,
            exact_tolerance: 1e-4 * 0.08,
            exact_iterations: 2000,
            compatible_tolerance: 1e-4 * 0.08,
        }
    }
}

/// What one IK chain did in the last evaluated frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChainOutcome {
    /// False when the motion switched the chain off (nothing was solved).
    pub enabled: bool,
    /// Effector-goal distance after solving, metres.
    pub distance: f64,
    /// Iterations run.
    pub iterations: u32,
    /// True when a link ended on a bound of its limit.
    pub limited: bool,
}

#[derive(Clone, Debug)]
struct LinkPlan {
    joint: JointId,
    limit: Option<EulerLimit>,
    /// The one axis a plane-mode link turns about (0 X, 1 Y, 2 Z).
    plane: Option<usize>,
    /// A plane-mode link's range as half-angle cosines and sines, when the range spans at most
    /// π (knees: 0.5° to 180°): steps after the first then run without trigonometry
    /// ([`plane_step_by_half_angles`]).
    plane_range: Option<PlaneRange>,
    /// Where this link sits in the chain's path to the effector; `None` when it is not an
    /// ancestor of the effector (it then moves nothing the chain measures).
    path_from: Option<usize>,
    /// Compatible mode's cap on this link's step (the unit angle times its place in the
    /// chain, at most π): its cosine, and the sine and cosine of its half.
    mmd_cap: MmdCap,
}

/// A step cap `θ` as `cos θ` and `(sin θ/2, cos θ/2)`.
#[derive(Clone, Copy, Debug)]
struct MmdCap {
    cos: f64,
    half_sin_cos: (f64, f64),
}

impl MmdCap {
    fn new(angle: f64) -> Self {
        let angle = angle.clamp(0.0, PI);
        Self {
            cos: angle.cos(),
            half_sin_cos: (0.5 * angle).sin_cos(),
        }
    }
}

/// A plane-mode link's range `[lo, hi]` (`hi − lo ≤ π`) for the trigonometry-free step.
#[derive(Clone, Copy, Debug)]
struct PlaneRange {
    /// `cos` and `sin` of `lo / 2` and of `hi / 2`.
    lo_half: (f64, f64),
    hi_half: (f64, f64),
    /// `cos` and `sin` of `lo` and of `hi`.
    lo_full: (f64, f64),
    hi_full: (f64, f64),
}

impl PlaneRange {
    fn new(lo: f64, hi: f64) -> Option<Self> {
        let half = |angle: f64| {
            let (sin, cos) = (0.5 * angle).sin_cos();
            (cos, sin)
        };
        let full = |angle: f64| {
            let (sin, cos) = angle.sin_cos();
            (cos, sin)
        };
        (hi - lo <= PI && lo >= -2.0 * PI && hi <= 2.0 * PI).then(|| Self {
            lo_half: half(lo),
            hi_half: half(hi),
            lo_full: full(lo),
            hi_full: full(hi),
        })
    }
}

#[derive(Clone, Debug)]
struct ChainPlan {
    goal: JointId,
    effector: JointId,
    links: Vec<LinkPlan>,
    iterations: u32,
    unit_angle: f64,
    /// Joints from the topmost link on the effector's path down to the effector, parents first.
    path: Vec<JointId>,
    /// The topmost link (its subtree holds everything the chain moves).
    top: JointId,
    /// `cos(unit_angle)`: a step whose directions have a larger dot product turns the whole way.
    cos_unit_angle: f64,
    /// `sin` and `cos` of half the unit angle (the capped step's quaternion).
    half_unit_sin_cos: (f64, f64),
    /// True when each link is the parent of the one before it and the effector's parent is
    /// the first link (legs, toes, hair, neckties): the chain is then iterated on local
    /// frames alone (see [`solve_local`]).
    consecutive: bool,
}

/// What a link's steps carry from one to the next within a chain's solve.
#[derive(Clone, Copy, Debug)]
struct LinkStep {
    /// Euler angles of the last clamped step (links with a multi-axis limit).
    previous: DVec3,
    /// The plane angle (plane-mode links without a [`PlaneRange`], and every plane-mode link
    /// in the first iteration), and the cosine and sine of its half.
    plane: f64,
    plane_half: (f64, f64),
}

impl LinkStep {
    const START: Self = Self {
        previous: DVec3::ZERO,
        plane: 0.0,
        plane_half: (1.0, 0.0),
    };
}

/// Per-frame state: the animated motion split into its parts.
#[derive(Clone, Debug, Default)]
struct State {
    rest_translation: Vec<DVec3>,
    anim_translation: Vec<DVec3>,
    anim_rotation: Vec<DQuat>,
    ik_rotation: Vec<DQuat>,
    append_rotation: Vec<DQuat>,
    append_translation: Vec<DVec3>,
    /// Per link of the chain being solved: saved rotation, and what its steps carry over.
    saved: Vec<DQuat>,
    steps: Vec<LinkStep>,
    /// Per link of the chain being solved: the goal in the link's frame ([`solve_local`]), or
    /// from the link's origin in its parent's frame ([`solve_local_mmd`]).
    goal_in_link: Vec<DVec3>,
    /// Per link: its rotation without the inherited part (`ik · animated`), the best one so
    /// far, and its full local rotation ([`solve_local`]).
    own: Vec<DQuat>,
    best_own: Vec<DQuat>,
    local: Vec<DQuat>,
    /// Per link ([`solve_local`]): its inherited rotation when not identity, and its offset
    /// from its parent.
    append: Vec<Option<DQuat>>,
    offset: Vec<DVec3>,
    /// [`polish_local`]'s per-link origins and parent rotations in the chain's base frame,
    /// and the effector's offset from the first link.
    origin: Vec<DVec3>,
    parent_rotation: Vec<DQuat>,
    effector_offset: DVec3,
    /// [`polish_local`]'s trial Euler angles of links with a multi-axis limit.
    trial_angles: Vec<DVec3>,
}

impl State {
    /// Writes joint `j`'s local transform from its parts.
    fn compose(&self, j: usize, out: &mut LocalPose) {
        let local = &mut out.transforms_mut()[j];
        local.rotation = self.ik_rotation[j] * self.anim_rotation[j] * self.append_rotation[j];
        local.translation =
            self.rest_translation[j] + self.anim_translation[j] + self.append_translation[j];
    }
}

/// Plays frames through a rig. Built once per skeleton and rig; [`evaluate`](Self::evaluate)
/// allocates nothing.
#[derive(Clone, Debug)]
pub struct MmdEvaluator {
    order: Vec<JointId>,
    inherit: Vec<Option<Inherit>>,
    is_link: Vec<bool>,
    /// Per joint in order, the chains whose goal it is: `(goal, chain index)`, sorted.
    goals: Vec<(JointId, usize)>,
    chains: Vec<ChainPlan>,
    names: Vec<String>,
    settings: MmdSettings,
    state: State,
    outcomes: Vec<ChainOutcome>,
}

impl MmdEvaluator {
    /// Compiles `rig` for `skeleton`.
    ///
    /// # Errors
    /// The rig does not fit the skeleton ([`Rig::validate`]).
    pub fn new(skeleton: &Skeleton, rig: &Rig, settings: MmdSettings) -> Result<Self, RigError> {
        rig.validate(skeleton)?;
        let n = skeleton.len();
        let mut is_link = vec![false; n];
        let mut chains = Vec::with_capacity(rig.ik.len());
        let mut goals = Vec::with_capacity(rig.ik.len());
        let mut max_links = 0;
        for (c, chain) in rig.ik.iter().enumerate() {
            // The path: the effector and its ancestors up to the highest link among them.
            let ancestors: Vec<JointId> = skeleton.path_to_root(chain.effector).collect();
            let top_position = chain
                .links
                .iter()
                .filter_map(|l| ancestors.iter().position(|&a| a == l.joint))
                .max();
            let mut path: Vec<JointId> = match top_position {
                Some(p) => ancestors[..=p].to_vec(),
                None => Vec::new(),
            };
            path.reverse();
            let top = path.first().copied().unwrap_or(chain.links[0].joint);
            let links = chain
                .links
                .iter()
                .enumerate()
                .map(|(k, l)| {
                    is_link[l.joint.index()] = true;
                    LinkPlan {
                        mmd_cap: MmdCap::new(chain.unit_angle * (k + 1) as f64),
                        joint: l.joint,
                        limit: l.limit,
                        plane: l.limit.and_then(|limit| plane_axis(&limit)),
                        plane_range: l.limit.and_then(|limit| {
                            let axis = plane_axis(&limit)?;
                            PlaneRange::new(limit.min[axis], limit.max[axis])
                        }),
                        path_from: path.iter().position(|&p| p == l.joint),
                    }
                })
                .collect::<Vec<_>>();
            max_links = max_links.max(links.len());
            goals.push((chain.goal, c));
            // (A goal on the path would move with the chain; such rigs take the general loop.)
            let consecutive = skeleton.parent(chain.effector) == Some(chain.links[0].joint)
                && !path.contains(&chain.goal)
                && chain
                    .links
                    .windows(2)
                    .all(|w| skeleton.parent(w[0].joint) == Some(w[1].joint));
            chains.push(ChainPlan {
                cos_unit_angle: chain.unit_angle.min(PI).cos(),
                half_unit_sin_cos: (0.5 * chain.unit_angle.min(PI)).sin_cos(),
                consecutive,
                goal: chain.goal,
                effector: chain.effector,
                links,
                iterations: chain.iterations,
                unit_angle: chain.unit_angle,
                path,
                top,
            });
        }
        goals.sort();
        let state = State {
            rest_translation: skeleton
                .rest_transforms()
                .iter()
                .map(|t| t.translation)
                .collect(),
            anim_translation: vec![DVec3::ZERO; n],
            anim_rotation: vec![DQuat::IDENTITY; n],
            ik_rotation: vec![DQuat::IDENTITY; n],
            append_rotation: vec![DQuat::IDENTITY; n],
            append_translation: vec![DVec3::ZERO; n],
            saved: vec![DQuat::IDENTITY; max_links],
            steps: vec![LinkStep::START; max_links],
            append: vec![None; max_links],
            offset: vec![DVec3::ZERO; max_links],
            origin: vec![DVec3::ZERO; max_links],
            parent_rotation: vec![DQuat::IDENTITY; max_links],
            effector_offset: DVec3::ZERO,
            trial_angles: vec![DVec3::ZERO; max_links],
            goal_in_link: vec![DVec3::ZERO; max_links],
            own: vec![DQuat::IDENTITY; max_links],
            best_own: vec![DQuat::IDENTITY; max_links],
            local: vec![DQuat::IDENTITY; max_links],
        };
        Ok(Self {
            order: rig.order.clone(),
            inherit: rig.inherit.clone(),
            is_link,
            goals,
            names: rig.ik.iter().map(|c| c.name.clone()).collect(),
            chains,
            settings,
            state,
            outcomes: vec![ChainOutcome::default(); rig.ik.len()],
        })
    }

    /// The IK chains' names, in rig order (the order of `enabled` in
    /// [`evaluate`](Self::evaluate) and of the outcomes).
    pub fn chain_names(&self) -> &[String] {
        &self.names
    }

    /// The settings.
    pub fn settings(&self) -> &MmdSettings {
        &self.settings
    }

    /// Changes the settings (mode, tolerance).
    pub fn set_settings(&mut self, settings: MmdSettings) {
        self.settings = settings;
    }

    /// Evaluates one frame: `animated` holds every joint's sampled local transform;
    /// `enabled[c]` says whether chain `c` runs. Writes the final local pose to `out` and its
    /// model frames to `model`, and returns what each chain did.
    ///
    /// # Panics
    /// When the poses or `enabled` were sized for another skeleton or rig.
    pub fn evaluate(
        &mut self,
        skeleton: &Skeleton,
        animated: &LocalPose,
        enabled: &[bool],
        out: &mut LocalPose,
        model: &mut ModelPose,
    ) -> &[ChainOutcome] {
        let state = &mut self.state;
        for (j, (local, rest)) in animated
            .transforms()
            .iter()
            .zip(&state.rest_translation)
            .enumerate()
        {
            state.anim_translation[j] = local.translation - *rest;
            state.anim_rotation[j] = local.rotation;
        }
        state.ik_rotation.fill(DQuat::IDENTITY);
        state.append_rotation.fill(DQuat::IDENTITY);
        state.append_translation.fill(DVec3::ZERO);
        out.transforms_mut().copy_from_slice(animated.transforms());
        fk::forward_kinematics(skeleton, out, model);
        for &joint in &self.order {
            let j = joint.index();
            if let Some(inherit) = self.inherit[j] {
                apply_inherit(state, &self.inherit, &self.is_link, j, &inherit);
                state.compose(j, out);
                fk::update_subtree(skeleton, out, model, joint);
            }
            let first = self.goals.partition_point(|&(g, _)| g < joint);
            for &(goal, c) in &self.goals[first..] {
                if goal != joint {
                    break;
                }
                let chain = &self.chains[c];
                self.outcomes[c] = if enabled.get(c).copied().unwrap_or(true) {
                    let (mut outcome, goal) =
                        solve_chain(chain, &self.settings, state, skeleton, out, model);
                    fk::update_subtree(skeleton, out, model, chain.top);
                    outcome.distance = model.position(chain.effector).distance(goal);
                    outcome
                } else {
                    ChainOutcome {
                        enabled: false,
                        distance: model
                            .position(chain.effector)
                            .distance(model.position(chain.goal)),
                        ..ChainOutcome::default()
                    }
                };
            }
        }
        &self.outcomes
    }
}

/// The axis a limit lets turn when it is the only one (both bounds of the others 0).
fn plane_axis(limit: &EulerLimit) -> Option<usize> {
    let free: Vec<usize> = (0..3)
        .filter(|&k| limit.min[k] != 0.0 || limit.max[k] != 0.0)
        .collect();
    (free.len() == 1).then(|| free[0])
}

fn scaled_rotation(q: DQuat, ratio: f64) -> DQuat {
    if ratio == 1.0 {
        return q;
    }
    let q = if q.w < 0.0 { -q } else { q };
    DQuat::from_scaled_axis(q.to_scaled_axis() * ratio)
}

fn apply_inherit(
    state: &mut State,
    table: &[Option<Inherit>],
    is_link: &[bool],
    j: usize,
    inherit: &Inherit,
) {
    let s = inherit.source.index();
    let source_inherits = table[s].filter(|_| !inherit.local);
    if inherit.rotation {
        let mut rotation = match source_inherits {
            Some(i) if i.rotation => state.append_rotation[s],
            _ => state.anim_rotation[s],
        };
        if is_link[s] {
            rotation = state.ik_rotation[s] * rotation;
        }
        state.append_rotation[j] = scaled_rotation(rotation, inherit.ratio);
    }
    if inherit.translation {
        let translation = match source_inherits {
            Some(i) if i.translation => state.append_translation[s],
            _ => state.anim_translation[s],
        };
        state.append_translation[j] = translation * inherit.ratio;
    }
}

fn update_link(
    chain: &ChainPlan,
    link: &LinkPlan,
    state: &State,
    skeleton: &Skeleton,
    out: &mut LocalPose,
    model: &mut ModelPose,
) {
    state.compose(link.joint.index(), out);
    match link.path_from {
        Some(from) => fk::update_joints(skeleton, out, model, &chain.path[from..]),
        None => fk::update_subtree(skeleton, out, model, link.joint),
    }
}

/// Solves one chain; returns its outcome (the distance is filled in by the caller, after the
/// subtree update) and the goal it aimed at, model space.
fn solve_chain(
    chain: &ChainPlan,
    settings: &MmdSettings,
    state: &mut State,
    skeleton: &Skeleton,
    out: &mut LocalPose,
    model: &mut ModelPose,
) -> (ChainOutcome, DVec3) {
    for (k, link) in chain.links.iter().enumerate() {
        state.ik_rotation[link.joint.index()] = DQuat::IDENTITY;
        state.saved[k] = DQuat::IDENTITY;
        state.steps[k] = LinkStep::START;
    }
    let exact = settings.mode == IkMode::Exact;
    let (budget, tolerance) = if exact {
        (
            chain.iterations.max(settings.exact_iterations),
            settings.exact_tolerance,
        )
    } else {
        (chain.iterations, settings.compatible_tolerance)
    };
    let (goal, best, iterations) = if chain.consecutive {
        // The local loop reads the links' animated and inherited rotations from `state` and
        // the top link's parent frame, which the chain does not move: no FK before it.
        let goal = model.position(chain.goal);
        let (best, iterations) = if exact {
            solve_local(
                chain, exact, budget, tolerance, goal, state, skeleton, out, model,
            )
        } else {
            solve_local_mmd(chain, tolerance, goal, state, skeleton, out, model)
        };
        for (k, link) in chain.links.iter().enumerate() {
            state.ik_rotation[link.joint.index()] = state.saved[k];
            state.compose(link.joint.index(), out);
        }
        if exact && best > tolerance {
            fk::update_joints(skeleton, out, model, &chain.path);
        }
        (goal, best, iterations)
    } else {
        for link in &chain.links {
            state.compose(link.joint.index(), out);
        }
        fk::update_joints(skeleton, out, model, &chain.path);
        for link in chain.links.iter().filter(|l| l.path_from.is_none()) {
            fk::update_subtree(skeleton, out, model, link.joint);
        }
        let goal = model.position(chain.goal);
        let (mut best, iterations) = if exact {
            solve_in_model(
                chain, exact, budget, tolerance, goal, state, skeleton, out, model,
            )
        } else {
            solve_in_model_mmd(chain, tolerance, goal, state, skeleton, out, model)
        };
        if exact && best.is_finite() && best > tolerance {
            best = polish_in_model(chain, goal, tolerance, best, state, skeleton, out, model);
        }
        (goal, best, iterations)
    };
    if exact && best > tolerance {
        knee_closed_form(chain, goal, best, state, skeleton, out, model);
    }
    let limited = chain.links.iter().any(|link| {
        link.limit.is_some_and(|limit| {
            let rotation = out.transforms()[link.joint.index()].rotation;
            at_bound(rotation, &limit)
        })
    });
    let outcome = ChainOutcome {
        enabled: true,
        distance: f64::NAN,
        iterations,
        limited,
    };
    (outcome, goal)
}

/// The iteration loop of [`solve_chain`] for chains that are not consecutive: each step reads
/// the model frames, which are updated after it. Returns the best distance and the
/// iterations run, and leaves the best rotations in the links and their path's model frames.
#[allow(clippy::too_many_arguments)]
fn solve_in_model(
    chain: &ChainPlan,
    exact: bool,
    budget: u32,
    tolerance: f64,
    goal: DVec3,
    state: &mut State,
    skeleton: &Skeleton,
    out: &mut LocalPose,
    model: &mut ModelPose,
) -> (f64, u32) {
    let mut best = f64::INFINITY;
    let mut iterations = 0;
    for iteration in 0..budget {
        iterations = iteration + 1;
        for (k, link) in chain.links.iter().enumerate() {
            if link.joint == chain.effector {
                continue; // Turning the effector about itself moves nothing (and divides by 0).
            }
            if step(chain, k, iteration, goal, exact, state, model) {
                update_link(chain, link, state, skeleton, out, model);
            }
        }
        let distance = model.position(chain.effector).distance(goal);
        if distance < best {
            best = distance;
            for (k, link) in chain.links.iter().enumerate() {
                state.saved[k] = state.ik_rotation[link.joint.index()];
            }
            // The stop rule of the established runtimes (see `MmdSettings::compatible_tolerance`).
            if best <= tolerance {
                break;
            }
        } else if !exact {
            break;
        }
    }
    // Keep the best iteration's rotations.
    for (k, link) in chain.links.iter().enumerate() {
        state.ik_rotation[link.joint.index()] = state.saved[k];
        state.compose(link.joint.index(), out);
    }
    fk::update_joints(skeleton, out, model, &chain.path);
    (best, iterations)
}

/// What both local-frame loops start from: the goal in the top link's parent frame, the
/// effector's offset from its parent, and each link's rotations and offset in `state` (the IK
/// rotation at identity: the link's own rotation is its animated one).
fn local_frames(
    chain: &ChainPlan,
    goal: DVec3,
    state: &mut State,
    skeleton: &Skeleton,
    (out, model): (&LocalPose, &ModelPose),
) -> (DVec3, DVec3) {
    let top = chain.links[chain.links.len() - 1].joint;
    let goal_in_parent = match skeleton.parent(top) {
        Some(p) => model.rotation(p).inverse() * (goal - model.position(p)),
        None => goal,
    };
    for (k, link) in chain.links.iter().enumerate() {
        let j = link.joint.index();
        let append = state.append_rotation[j];
        state.own[k] = state.anim_rotation[j];
        state.append[k] = (append != DQuat::IDENTITY).then_some(append);
        state.local[k] = state.anim_rotation[j] * append;
        state.offset[k] = out.transforms()[j].translation;
    }
    let effector_offset = out.transforms()[chain.effector.index()].translation;
    (goal_in_parent, effector_offset)
}

/// The iteration loop of [`solve_chain`] for a consecutive chain, on local frames only: the
/// goal is taken once into the top link's parent frame, and each step sees the effector and
/// the goal through the links' local rotations and offsets (the same vectors the model-space
/// loop reads from `ModelPose`, without recomputing any model frame). Each iteration takes
/// the goal down the chain once (top first) and carries the effector up it while stepping
/// (effector side first: a step changes only its own link's rotation, so the goal seen by
/// the links above and the effector seen by this one stay valid). Distances are compared
/// squared. Returns the best distance and the iterations run; the best rotations are in
/// `state.saved` (identity when no iteration produced a finite distance).
#[allow(clippy::too_many_arguments)]
fn solve_local(
    chain: &ChainPlan,
    exact: bool,
    budget: u32,
    tolerance: f64,
    goal: DVec3,
    state: &mut State,
    skeleton: &Skeleton,
    out: &LocalPose,
    model: &ModelPose,
) -> (f64, u32) {
    let n = chain.links.len();
    let (goal_in_parent, effector_offset) =
        local_frames(chain, goal, state, skeleton, (out, model));
    state.effector_offset = effector_offset;
    let tolerance_squared = tolerance * tolerance;
    let (mut best, mut iterations) = (f64::INFINITY, 0);
    let mut checkpoint = f64::INFINITY;
    // The loop works on slices of the chain's length (their pointers and lengths stay in
    // registers, and the bounds checks go).
    let own = &mut state.own[..n];
    let best_own = &mut state.best_own[..n];
    let local = &mut state.local[..n];
    let append = &state.append[..n];
    let offset = &state.offset[..n];
    let goal_in_link = &mut state.goal_in_link[..n];
    let carried = &mut state.steps[..n];
    for iteration in 0..budget {
        iterations = iteration + 1;
        let mut seen = goal_in_parent;
        for k in (0..n).rev() {
            seen = local[k].inverse() * (seen - offset[k]);
            goal_in_link[k] = seen;
        }
        let mut effector = effector_offset;
        for k in 0..n {
            if step_in_link(
                chain,
                k,
                iteration,
                effector,
                goal_in_link[k],
                exact,
                &mut own[k],
                &mut carried[k],
            ) {
                local[k] = match append[k] {
                    Some(append) => own[k] * append,
                    None => own[k],
                };
            }
            effector = offset[k] + local[k] * effector;
        }
        let distance_squared = effector.distance_squared(goal_in_parent);
        if distance_squared < best {
            best = distance_squared;
            best_own.copy_from_slice(own);
            // The stop rule of the established runtimes (see `MmdSettings::compatible_tolerance`).
            if best <= tolerance_squared {
                break;
            }
        } else if !exact {
            break;
        }
        // Exact mode: CCD that gained less than 10 % of the squared distance over 16
        // iterations is creeping (nearly straight chains, goals out of reach); the polish
        // below finishes it.
        if exact && iteration % STALL_WINDOW == STALL_WINDOW - 1 {
            if best > 0.9 * checkpoint {
                break;
            }
            checkpoint = best;
        }
    }
    if exact && best.is_finite() && best > tolerance_squared {
        best = polish_local(chain, goal_in_parent, tolerance_squared, best, state);
    }
    if best.is_finite() {
        for (k, link) in chain.links.iter().enumerate() {
            let j = link.joint.index();
            state.saved[k] = (state.best_own[k] * state.anim_rotation[j].inverse()).normalize();
        }
    }
    (best.sqrt(), iterations)
}

/// Compatible mode's loop for chains that are not consecutive (MMD's rules, see the
/// [module docs](self)): the steps read and update the model frames. Returns the final
/// distance and the iterations run; the rotations are left in the links, `state.saved` and
/// the path's model frames.
fn solve_in_model_mmd(
    chain: &ChainPlan,
    tolerance: f64,
    goal: DVec3,
    state: &mut State,
    skeleton: &Skeleton,
    out: &mut LocalPose,
    model: &mut ModelPose,
) -> (f64, u32) {
    let budget = mmd_budget(chain.iterations, chain.unit_angle);
    let mut iterations = 0;
    let mut distance = model.position(chain.effector).distance(goal);
    'iterations: for iteration in 0..budget {
        if distance <= tolerance {
            break;
        }
        iterations = iteration + 1;
        let reflect = iteration < budget / 2;
        for (k, link) in chain.links.iter().enumerate() {
            if link.joint == chain.effector {
                continue; // Turning the effector about itself moves nothing.
            }
            let j = link.joint.index();
            let origin = model.position(link.joint);
            let joint_from_model = model.rotation(link.joint).inverse();
            let to_effector = joint_from_model * (model.position(chain.effector) - origin);
            let to_goal = joint_from_model * (goal - origin);
            // Into the parent's frame: the link's local rotation (`own · inherited`).
            let local = out.transforms()[j].rotation;
            let mut own = state.ik_rotation[j] * state.anim_rotation[j];
            match mmd_step(
                chain,
                k,
                reflect,
                local * to_effector,
                local * to_goal,
                &mut own,
            ) {
                MmdStep::Converged => break 'iterations,
                MmdStep::Skipped => {}
                MmdStep::Turned => {
                    state.ik_rotation[j] = (own * state.anim_rotation[j].inverse()).normalize();
                    update_link(chain, link, state, skeleton, out, model);
                }
            }
        }
        distance = model.position(chain.effector).distance(goal);
    }
    for (k, link) in chain.links.iter().enumerate() {
        state.saved[k] = state.ik_rotation[link.joint.index()];
    }
    (model.position(chain.effector).distance(goal), iterations)
}

/// Compatible mode's loop for a consecutive chain (MMD's rules, see the [module
/// docs](self)), on local frames as [`solve_local`] iterates them. Returns the final
/// distance and the iterations run; the links' IK rotations are left in `state.saved`.
fn solve_local_mmd(
    chain: &ChainPlan,
    tolerance: f64,
    goal: DVec3,
    state: &mut State,
    skeleton: &Skeleton,
    out: &LocalPose,
    model: &ModelPose,
) -> (f64, u32) {
    let n = chain.links.len();
    let (goal_in_parent, effector_offset) =
        local_frames(chain, goal, state, skeleton, (out, model));
    let own = &mut state.own[..n];
    let local = &mut state.local[..n];
    let append = &state.append[..n];
    let offset = &state.offset[..n];
    let goal_in_link = &mut state.goal_in_link[..n];
    let effector_in_base = |local: &[DQuat]| {
        (0..n).fold(effector_offset, |effector, k| {
            offset[k] + local[k] * effector
        })
    };
    let budget = mmd_budget(chain.iterations, chain.unit_angle);
    let mut iterations = 0;
    let mut distance = effector_in_base(local).distance(goal_in_parent);
    'iterations: for iteration in 0..budget {
        if distance <= tolerance {
            break;
        }
        iterations = iteration + 1;
        let reflect = iteration < budget / 2;
        // The goal from each link's origin, in the link's parent frame.
        let mut seen = goal_in_parent;
        for k in (0..n).rev() {
            goal_in_link[k] = seen - offset[k];
            seen = local[k].inverse() * goal_in_link[k];
        }
        let mut effector = effector_offset;
        for k in 0..n {
            match mmd_step(
                chain,
                k,
                reflect,
                local[k] * effector,
                goal_in_link[k],
                &mut own[k],
            ) {
                MmdStep::Converged => break 'iterations,
                MmdStep::Skipped => {}
                MmdStep::Turned => {
                    local[k] = match append[k] {
                        Some(append) => own[k] * append,
                        None => own[k],
                    };
                }
            }
            effector = offset[k] + local[k] * effector;
        }
        distance = effector.distance(goal_in_parent);
    }
    for (k, link) in chain.links.iter().enumerate() {
        let j = link.joint.index();
        state.saved[k] = (state.own[k] * state.anim_rotation[j].inverse()).normalize();
    }
    (
        effector_in_base(&state.local[..n]).distance(goal_in_parent),
        iterations,
    )
}

/// Exact mode's CCD stops when its best squared distance gained less than 10 % over this many
/// iterations ([`solve_local`]).
const STALL_WINDOW: u32 = 16;
