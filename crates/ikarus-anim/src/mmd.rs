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
//! **The chain step (seed 001, MMD CCD: MMD's rule as the open runtimes play it).** Links are
//! visited effector side first, every iteration. At each link, in its own frame, the rotation
//! taking the link→effector direction onto the link→goal direction, capped at the chain's unit
//! angle, is appended to the link's rotation. A link whose limit lets only one axis turn (knees)
//! is solved in *plane mode*: it keeps one angle about that axis, turned by ± the capped angle
//! (whichever brings the effector closer), mirrored on the first iteration when it starts
//! outside its range, then clamped; its animated rotation is replaced. Other limited links
//! clamp the X-Y-Z Euler angles of their rotation (the decomposition nearest the previous
//! step's angles), and each angle moves at most the unit angle per step. After each iteration
//! the effector-goal distance is measured; in [`IkMode::Compatible`] the loop stops at the
//! first iteration that does not improve it, or that leaves the effector within
//! [`MmdSettings::compatible_tolerance`] (1e-4 MMD units) of the goal, and keeps the best
//! rotations (MMD's budget and its residuals). [`IkMode::Exact`] keeps iterating, up to
//! [`MmdSettings::exact_iterations`], until the distance is below
//! [`MmdSettings::exact_tolerance`] or CCD stalls (under 10 % of the squared distance gained
//! in 16 iterations), keeping the best; its steps are not capped by the unit angle (limits
//! still apply). A chain still short then gets a damped least-squares polish on all its links
//! at once (nearly straight hair and neckties, where CCD creeps), and a leg (plane-mode knee
//! under a free link) its knee angle from the law of cosines.
//!
//! **Cost.** Chains whose links are consecutive (all of a PMD's) iterate on local frames
//! without forward kinematics; plane-mode steps after the first use half-angle arithmetic
//! instead of `acos` and `sin_cos` (`plane_step_by_half_angles`); distances are compared
//! squared. On `Miku_Hatsune_Ver2.pmd` playing `kishimen.vmd`, a compatible frame runs about
//! 150 k instructions (BENCHMARKS.md, "MMD").
//!
//! Which runtime each rule follows: the step, plane mode, the first-iteration mirror and the
//! stop-on-no-improvement loop are saba's (`MMDIkSolver`); saba decomposes the Euler angles of a
//! multi-axis limit as Z-Y-X but rebuilds them as X-Y-Z, so here both use X-Y-Z, the order of
//! the limit itself ([`EulerLimit`] with [`EulerOrder::Xyz`](ikarus_core::EulerOrder)); saba
//! treats an axis as locked when either bound is 0, here only when both are. The 1e-4-unit
//! stop is babylon-mmd's and mmd-anim-runtime's (saba has none); see
//! [`MmdSettings::compatible_tolerance`].

use std::f64::consts::PI;

use glam::{DMat3, DQuat, DVec3, EulerRot};
use ikarus_core::rig::{Inherit, Rig, RigError};
use ikarus_core::{EulerLimit, JointId, LocalPose, ModelPose, Skeleton, fk};

/// `cos(1e-3°)`: MMD leaves turns smaller than this alone.
const COS_SMALLEST_TURN: f64 = 0.999_999_999_847_691_3;

/// How IK chains are iterated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IkMode {
    /// MMD's budget: the chain's loop count, stopping at the first iteration that does not
    /// improve; leaves the residuals MMD leaves.
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
    /// Compatible mode stops a chain after an iteration that leaves the effector this close to
    /// the goal, metres. Default 1e-4 MMD units (8 µm), the rule of the established runtimes:
    /// babylon-mmd stops when the squared distance is under 1e-8 units², mmd-anim-runtime at
    /// its default tolerance of 1e-4 units (saba has no such stop). Both also skip a chain
    /// whose effector starts that close; here the first iteration always runs, because it is
    /// the one that brings plane-mode links (knees) into their range. 0 turns the stop off.
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
    /// Per link of the chain being solved: the goal in the link's frame ([`solve_local`]).
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
                .map(|l| {
                    is_link[l.joint.index()] = true;
                    LinkPlan {
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
        let (best, iterations) = solve_local(
            chain, exact, budget, tolerance, goal, state, skeleton, out, model,
        );
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
        let (mut best, iterations) = solve_in_model(
            chain, exact, budget, tolerance, goal, state, skeleton, out, model,
        );
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

/// Exact mode's finish for a leg (a plane-mode link, then a free link above it on the path):
/// CCD creeps where the leg is nearly straight, so the knee angle comes from the law of
/// cosines (the solution inside its range nearest the current one, or the nearer bound) and
/// the upper link turns the effector onto the goal. Kept only when it lowers the distance.
fn knee_closed_form(
    chain: &ChainPlan,
    goal: DVec3,
    best: f64,
    state: &mut State,
    skeleton: &Skeleton,
    out: &mut LocalPose,
    model: &mut ModelPose,
) {
    let [knee, hip] = chain.links.as_slice() else {
        return;
    };
    let (Some(axis), Some(limit), None, Some(0), Some(knee_at)) = (
        knee.plane,
        knee.limit,
        hip.limit,
        hip.path_from,
        knee.path_from,
    ) else {
        return;
    };
    // Only the knee's own rotation may lie between knee and effector, and the knee must be
    // the hip's child on the path.
    if knee_at != 1 {
        return;
    }
    let (k, h) = (knee.joint.index(), hip.joint.index());
    let before = (state.ik_rotation[k], state.ik_rotation[h]);
    let u = DVec3::AXES[axis];
    let knee_origin = model.position(knee.joint);
    let hip_rotation = model.rotation(hip.joint);
    // The knee's current angle about its axis (its rotation without the inherited part is a
    // pure turn about the axis in plane mode).
    let own = state.ik_rotation[k] * state.anim_rotation[k];
    let plane_angle = 2.0 * own.xyz().dot(u).atan2(own.w);
    // Effector seen from the knee in the hip's frame, with the knee's turn removed:
    // `t + R(θ)·e` is the effector in the hip's frame for a knee angle θ.
    let e = DQuat::from_axis_angle(u, -plane_angle)
        * (hip_rotation.inverse() * (model.position(chain.effector) - knee_origin));
    let t = out.transforms()[k].translation; // knee origin in the hip's frame
    let hip_origin = model.position(hip.joint);
    let reach = goal.distance(hip_origin);
    let (e_parallel, e_perpendicular) = (u * u.dot(e), e - u * u.dot(e));
    let c = t.dot(e_parallel);
    let a = t.dot(e_perpendicular);
    let b = t.dot(u.cross(e));
    let rhs = 0.5 * (reach * reach - t.length_squared() - e.length_squared()) - c;
    let r0 = a.hypot(b);
    if r0 < 1e-12 {
        return;
    }
    let phi = b.atan2(a);
    let spread = (rhs / r0).clamp(-1.0, 1.0).acos();
    let (lo, hi) = (limit.min[axis], limit.max[axis]);
    let candidates = [phi + spread, phi - spread].map(|theta| {
        // The representative of θ nearest the range.
        let mut best_theta = theta;
        for shift in [-2.0 * PI, 0.0, 2.0 * PI] {
            let x = theta + shift;
            if x >= lo && x <= hi {
                best_theta = x;
            }
        }
        best_theta.clamp(lo, hi)
    });
    let theta = if (candidates[0] - plane_angle).abs() <= (candidates[1] - plane_angle).abs() {
        candidates[0]
    } else {
        candidates[1]
    };
    state.ik_rotation[k] = DQuat::from_axis_angle(u, theta) * state.anim_rotation[k].inverse();
    state.compose(k, out);
    fk::update_joints(skeleton, out, model, &chain.path);
    // Turn the hip so the effector points at the goal.
    let hip_from_model = model.rotation(hip.joint).inverse();
    let from = hip_from_model * (model.position(chain.effector) - hip_origin);
    let to = hip_from_model * (goal - hip_origin);
    if from.length_squared() > 1e-24 && to.length_squared() > 1e-24 {
        let turn = DQuat::from_rotation_arc(from.normalize(), to.normalize());
        let rotation = state.ik_rotation[h] * state.anim_rotation[h] * turn;
        state.ik_rotation[h] = (rotation * state.anim_rotation[h].inverse()).normalize();
        state.compose(h, out);
        fk::update_joints(skeleton, out, model, &chain.path);
    }
    if model.position(chain.effector).distance(goal) < best {
        state.steps[0].plane = theta;
    } else {
        state.ik_rotation[k] = before.0;
        state.ik_rotation[h] = before.1;
        state.compose(k, out);
        state.compose(h, out);
        fk::update_joints(skeleton, out, model, &chain.path);
    }
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
    let top = chain.links[n - 1].joint;
    let goal_in_parent = match skeleton.parent(top) {
        Some(p) => model.rotation(p).inverse() * (goal - model.position(p)),
        None => goal,
    };
    let effector_offset = out.transforms()[chain.effector.index()].translation;
    state.effector_offset = effector_offset;
    for (k, link) in chain.links.iter().enumerate() {
        // The IK rotation starts at identity: the link's own rotation is its animated one.
        let j = link.joint.index();
        let append = state.append_rotation[j];
        state.own[k] = state.anim_rotation[j];
        state.append[k] = (append != DQuat::IDENTITY).then_some(append);
        state.local[k] = state.anim_rotation[j] * append;
        state.offset[k] = out.transforms()[j].translation;
    }
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

/// Exact mode's CCD stops when its best squared distance gained less than 10 % over this many
/// iterations ([`solve_local`]).
const STALL_WINDOW: u32 = 16;

/// Most trial steps [`polish_local`] takes.
const POLISH_STEPS: usize = 100;

/// Exact mode's finish for a consecutive chain that CCD left short of the goal — nearly
/// straight chains (hair at 99 % of its reach), where each CCD sweep gains less and less:
/// damped least squares (Levenberg–Marquardt) on all links at once, from CCD's best pose
/// (`state.best_own`). The effector `p` moves by `ω × (p − oₖ)` when link `k` (origin `oₖ`)
/// turns by the small rotation vector `ω` (in the chain's base frame, the top link's parent),
/// so for a goal error `e` the step is `ωₖ = (p − oₖ) × y` with `(J Jᵀ + λI) y = e` — a
/// 3 × 3 system; a plane-mode link turns about its axis `aₖ` by `aₖ · ((p − oₖ) × y)`,
/// clamped to its range, and a link with an Euler limit is clamped as a CCD step clamps it.
/// A step is kept when it brings the effector closer (then `λ` shrinks), else `λ` grows.
/// Each trial's rotations are built in `state.local` (free after the CCD loop). Works in
/// squared distances; returns the best one, with its rotations in `state.best_own`.
fn polish_local(
    chain: &ChainPlan,
    goal: DVec3,
    tolerance_squared: f64,
    mut best: f64,
    state: &mut State,
) -> f64 {
    let n = chain.links.len();
    let mut damping = 1e-3;
    for _ in 0..POLISH_STEPS {
        let effector = chain_points(n, false, state);
        let mut normal = DMat3::ZERO;
        for (k, link) in chain.links.iter().enumerate() {
            normal += polish_normal(link, state.parent_rotation[k], effector - state.origin[k]);
        }
        let Some(y) = polish_direction(normal, damping, goal - effector) else {
            break;
        };
        for (k, link) in chain.links.iter().enumerate() {
            (state.local[k], state.trial_angles[k]) = polish_link(
                link,
                state.best_own[k],
                state.parent_rotation[k],
                effector - state.origin[k],
                y,
                state.steps[k].previous,
            );
        }
        let trial = chain_points(n, true, state).distance_squared(goal);
        if trial < best {
            best = trial;
            for k in 0..n {
                state.best_own[k] = state.local[k];
                state.steps[k].previous = state.trial_angles[k];
            }
            if best <= tolerance_squared {
                break;
            }
            damping = (damping * 0.25).max(1e-12);
        } else {
            damping *= 8.0;
            if damping > 1e8 {
                break;
            }
        }
    }
    best
}

/// [`polish_local`] for chains that are not consecutive, on the model frames: the links on
/// the effector's path (the others do not move it) take the same steps, each trial written
/// to the links and their path updated by FK. Works in distances (not squared); returns the
/// best one, with its rotations in the links, `state.saved` and the path's model frames.
#[allow(clippy::too_many_arguments)]
fn polish_in_model(
    chain: &ChainPlan,
    goal: DVec3,
    tolerance: f64,
    mut best: f64,
    state: &mut State,
    skeleton: &Skeleton,
    out: &mut LocalPose,
    model: &mut ModelPose,
) -> f64 {
    let moves = |link: &LinkPlan| link.path_from.is_some() && link.joint != chain.effector;
    let parent_rotation = |model: &ModelPose, joint: JointId| {
        skeleton
            .parent(joint)
            .map_or(DQuat::IDENTITY, |p| model.rotation(p))
    };
    let mut damping = 1e-3;
    for _ in 0..POLISH_STEPS {
        let effector = model.position(chain.effector);
        let mut normal = DMat3::ZERO;
        for link in chain.links.iter().filter(|l| moves(l)) {
            let lever = effector - model.position(link.joint);
            normal += polish_normal(link, parent_rotation(model, link.joint), lever);
        }
        let Some(y) = polish_direction(normal, damping, goal - effector) else {
            break;
        };
        for (k, link) in chain.links.iter().enumerate().filter(|(_, l)| moves(l)) {
            let j = link.joint.index();
            let own = state.ik_rotation[j] * state.anim_rotation[j];
            let lever = effector - model.position(link.joint);
            let parent = parent_rotation(model, link.joint);
            let (trial, angles) = polish_link(link, own, parent, lever, y, state.steps[k].previous);
            state.trial_angles[k] = angles;
            state.local[k] = (trial * state.anim_rotation[j].inverse()).normalize();
        }
        for (k, link) in chain.links.iter().enumerate().filter(|(_, l)| moves(l)) {
            state.ik_rotation[link.joint.index()] = state.local[k];
            state.compose(link.joint.index(), out);
        }
        fk::update_joints(skeleton, out, model, &chain.path);
        let trial = model.position(chain.effector).distance(goal);
        let kept = trial < best;
        for (k, link) in chain.links.iter().enumerate().filter(|(_, l)| moves(l)) {
            if kept {
                state.saved[k] = state.local[k];
                state.steps[k].previous = state.trial_angles[k];
            } else {
                state.ik_rotation[link.joint.index()] = state.saved[k];
                state.compose(link.joint.index(), out);
            }
        }
        if kept {
            best = trial;
            if best <= tolerance {
                break;
            }
            damping = (damping * 0.25).max(1e-12);
        } else {
            fk::update_joints(skeleton, out, model, &chain.path);
            damping *= 8.0;
            if damping > 1e8 {
                break;
            }
        }
    }
    best
}

/// A link's share of `J Jᵀ` in the polish, for the lever `r = p − oₖ` and the link's parent
/// rotation (both in the frame the polish works in): `|r|² I − r rᵀ` for a ball link,
/// `c cᵀ` with `c = a × r` for a plane-mode link turning about `a`.
fn polish_normal(link: &LinkPlan, parent: DQuat, lever: DVec3) -> DMat3 {
    match link.plane {
        Some(axis) => {
            let column = (parent * DVec3::AXES[axis]).cross(lever);
            outer(column, column)
        }
        None => DMat3::from_diagonal(DVec3::splat(lever.length_squared())) - outer(lever, lever),
    }
}

/// The polish's `y`: `(J Jᵀ + λI) y = e` with `λ` = `damping` times the mean diagonal of
/// `J Jᵀ`; `None` when the system is singular.
fn polish_direction(normal: DMat3, damping: f64, error: DVec3) -> Option<DVec3> {
    let scale = (normal.x_axis.x + normal.y_axis.y + normal.z_axis.z) / 3.0;
    let system = normal + DMat3::from_diagonal(DVec3::splat(damping * scale.max(1e-300)));
    let determinant = system.determinant();
    (determinant.is_finite() && determinant.abs() >= 1e-300).then(|| system.inverse() * error)
}

/// One link's polish step from its own rotation `own` (`ik · animated`) for the lever `r` and
/// the polish's `y`: a ball link turns by `ω = r × y` (taken into its own frame), clamped to
/// its Euler limit if it has one (the decomposition nearest `previous`; the new angles are
/// returned); a plane-mode link by `a · (r × y)` about its axis, clamped to its range.
fn polish_link(
    link: &LinkPlan,
    own: DQuat,
    parent: DQuat,
    lever: DVec3,
    y: DVec3,
    previous: DVec3,
) -> (DQuat, DVec3) {
    let turn = lever.cross(y);
    match (link.plane, link.limit) {
        (Some(axis), Some(limit)) => {
            let u = DVec3::AXES[axis];
            let angle = 2.0 * own.xyz().dot(u).atan2(own.w);
            let step = (parent * u).dot(turn);
            let next = (angle + step).clamp(limit.min[axis], limit.max[axis]);
            (DQuat::from_axis_angle(u, next), previous)
        }
        (_, limit) => {
            let rotation = (DQuat::from_scaled_axis(parent.inverse() * turn) * own).normalize();
            match limit {
                Some(limit) => clamp_euler(rotation, &limit, previous, PI),
                None => (rotation, previous),
            }
        }
    }
}

/// `a bᵀ`.
fn outer(a: DVec3, b: DVec3) -> DMat3 {
    DMat3::from_cols(a * b.x, a * b.y, a * b.z)
}

/// For a consecutive chain whose links have the own rotations `state.local` (`trial`) or
/// `state.best_own`: each link's origin and its parent's rotation in the chain's base frame
/// (into `state.origin`, `state.parent_rotation`), top first; returns the effector there.
fn chain_points(n: usize, trial: bool, state: &mut State) -> DVec3 {
    let State {
        local,
        best_own,
        append,
        offset,
        origin,
        parent_rotation,
        effector_offset,
        ..
    } = state;
    let own = if trial { local } else { best_own };
    let (mut rotation, mut position) = (DQuat::IDENTITY, DVec3::ZERO);
    for k in (0..n).rev() {
        position += rotation * offset[k];
        origin[k] = position;
        parent_rotation[k] = rotation;
        rotation = match append[k] {
            Some(append) => rotation * own[k] * append,
            None => rotation * own[k],
        };
    }
    position + rotation * *effector_offset
}

/// One link's step; false when it changed nothing.
fn step(
    chain: &ChainPlan,
    k: usize,
    iteration: u32,
    goal: DVec3,
    exact: bool,
    state: &mut State,
    model: &ModelPose,
) -> bool {
    let link = &chain.links[k];
    let origin = model.position(link.joint);
    let joint_from_model = model.rotation(link.joint).inverse();
    let to_effector = joint_from_model * (model.position(chain.effector) - origin);
    let to_goal = joint_from_model * (goal - origin);
    let j = link.joint.index();
    let mut own = state.ik_rotation[j] * state.anim_rotation[j];
    if step_in_link(
        chain,
        k,
        iteration,
        to_effector,
        to_goal,
        exact,
        &mut own,
        &mut state.steps[k],
    ) {
        state.ik_rotation[j] = (own * state.anim_rotation[j].inverse()).normalize();
        return true;
    }
    false
}

/// One link's step from the effector and goal seen in the link's own frame; false when it
/// changed nothing.
#[allow(clippy::too_many_arguments)]
// Inlined into the local loop: its result then stays in registers (151 k instead of 172 k
// instructions per frame, 27.8 instead of 33.0 µs per compatible frame).
#[allow(clippy::inline_always)]
#[inline(always)]
fn step_in_link(
    chain: &ChainPlan,
    k: usize,
    iteration: u32,
    to_effector: DVec3,
    to_goal: DVec3,
    exact: bool,
    own: &mut DQuat,
    carried: &mut LinkStep,
) -> bool {
    let link = &chain.links[k];
    // Unnormalised directions `a`, `b`: every test below is scale-free (`a·b` against
    // `|a||b|` times a cosine), and the shortest arc is `(a × b, |a||b| + a·b)` normalised;
    // one square root instead of two normalisations, and no division.
    let lengths = (to_effector.length_squared() * to_goal.length_squared()).sqrt();
    if lengths <= 1e-300 || !lengths.is_finite() {
        return false;
    }
    let dot = to_effector.dot(to_goal);
    let axis = to_effector.cross(to_goal);
    // The unit angle is MMD's per-step budget; exact mode steps the whole way (its limits
    // still apply), so long chains with small unit angles are not starved.
    let (unit_angle, cos_unit_angle) = if exact {
        (PI, -1.0)
    } else {
        (chain.unit_angle, chain.cos_unit_angle)
    };
    if let (Some(plane), Some(limit)) = (link.plane, link.limit) {
        let axis_vector = DVec3::AXES[plane];
        // Turning the effector direction `a` by ±θ about `u` gives
        // `a∥ + cos θ·a⊥ ± sin θ·(u × a)`, so `+θ` brings it nearer the goal `b` exactly when
        // `(u × a)·b = u·(a × b) > 0` (θ in (0, π]): MMD compares the two dot products, the
        // same test.
        let plus_is_nearer = axis[plane] > 0.0;
        if let (Some(range), true) = (link.plane_range, iteration > 0) {
            let (cos, sin) = plane_step_by_half_angles(
                &range,
                carried.plane_half,
                plus_is_nearer,
                (dot, lengths, axis.length_squared()),
                cos_unit_angle,
                if exact {
                    (1.0, 0.0)
                } else {
                    chain.half_unit_sin_cos
                },
            );
            carried.plane_half = (cos, sin);
            let axis = axis_vector * sin;
            *own = DQuat::from_xyzw(axis.x, axis.y, axis.z, cos);
            return true;
        }
        let angle = (dot / lengths).clamp(-1.0, 1.0).acos().min(unit_angle);
        let mut next = carried.plane + if plus_is_nearer { angle } else { -angle };
        let (lo, hi) = (limit.min[plane], limit.max[plane]);
        if iteration == 0 && (next < lo || next > hi) {
            // Starting outside the range: try the mirrored bend first (MMD's knee rule).
            if -next > lo && -next < hi {
                next = -next;
            } else {
                let middle = 0.5 * (lo + hi);
                if (middle - next).abs() > (middle + next).abs() {
                    next = -next;
                }
            }
        }
        let next = next.clamp(lo, hi);
        carried.plane = next;
        let (sin, cos) = (0.5 * next).sin_cos();
        carried.plane_half = (cos, sin);
        let axis = axis_vector * sin;
        *own = DQuat::from_xyzw(axis.x, axis.y, axis.z, cos);
        return true;
    }
    // MMD skips turns under 1e-3 degrees, which leaves about 1e-5 of the lever arm as
    // residual; exact mode turns down to rounding.
    if !exact && dot > COS_SMALLEST_TURN * lengths {
        return false;
    }
    if axis.length_squared() < 1e-30 * lengths * lengths {
        return false;
    }
    let turn = if exact || dot >= cos_unit_angle * lengths {
        // Within the unit angle: the shortest arc from `a` to `b`.
        DQuat::from_xyzw(axis.x, axis.y, axis.z, lengths + dot).normalize()
    } else {
        // Capped at the unit angle (hair and neckties, 0.12 rad, mostly are): its half-angle
        // sine and cosine were computed once.
        let (sin, cos) = chain.half_unit_sin_cos;
        let axis = axis.normalize() * sin;
        DQuat::from_xyzw(axis.x, axis.y, axis.z, cos)
    };
    let mut rotation = *own * turn;
    if let Some(limit) = link.limit {
        let (clamped, angles) = clamp_euler(rotation, &limit, carried.previous, unit_angle);
        rotation = clamped;
        carried.previous = angles;
    }
    *own = rotation;
    true
}

/// A plane-mode step after the first iteration, with the link's angle `θ` held as the cosine
/// and sine of `θ / 2` (`(c, s)`, θ inside its range): the same rule as the general plane
/// step — turn by ± the angle `α` between the effector and goal directions, capped at the
/// unit angle, then clamp to the range — without trigonometry. `α` and the room left to the
/// bound ahead (`hi − θ` or `θ − lo`) both lie in `[0, π]` (the range spans at most π), where
/// the cosine decreases: the step passes the bound exactly when `cos α` is the smaller, and
/// `cos(hi − θ)` comes from `cos θ = c² − s²`, `sin θ = 2cs`. Otherwise the new half angle is
/// `θ/2 ± α/2` by the addition formulas, with `cos(α/2)` and `sin(α/2)` from `a·b`, `|a||b|`
/// and `|a × b|²` (each from the side without cancellation). `arc` is `(a·b, |a||b|,
/// |a × b|²)`; `unit_half` the unit angle's half-angle `(sin, cos)`. Returns the new `(c, s)`.
fn plane_step_by_half_angles(
    range: &PlaneRange,
    (c, s): (f64, f64),
    plus: bool,
    (dot, lengths, cross_squared): (f64, f64, f64),
    cos_unit_angle: f64,
    unit_half: (f64, f64),
) -> (f64, f64) {
    // `cos α` times |a||b|, and the half-angle cosine and sine of α.
    let (cos_step, half_cos, half_sin) = if dot < cos_unit_angle * lengths {
        (cos_unit_angle * lengths, unit_half.1, unit_half.0)
    } else if dot >= 0.0 {
        let sum = lengths + dot;
        (
            dot,
            (sum / (2.0 * lengths)).sqrt(),
            (cross_squared / (2.0 * lengths * sum)).sqrt(),
        )
    } else {
        let difference = lengths - dot;
        (
            dot,
            (cross_squared / (2.0 * lengths * difference)).sqrt(),
            (difference / (2.0 * lengths)).sqrt(),
        )
    };
    let (cos_theta, sin_theta) = (c * c - s * s, 2.0 * c * s);
    if plus {
        let (cos_hi, sin_hi) = range.hi_full;
        let cos_room = cos_hi * cos_theta + sin_hi * sin_theta;
        if cos_step < cos_room * lengths {
            return range.hi_half;
        }
        (c * half_cos - s * half_sin, s * half_cos + c * half_sin)
    } else {
        let (cos_lo, sin_lo) = range.lo_full;
        let cos_room = cos_theta * cos_lo + sin_theta * sin_lo;
        if cos_step < cos_room * lengths {
            return range.lo_half;
        }
        (c * half_cos + s * half_sin, s * half_cos - c * half_sin)
    }
}

/// `angle` wrapped to `(−π, π]`.
fn wrap(angle: f64) -> f64 {
    let wrapped = (angle + PI).rem_euclid(2.0 * PI) - PI;
    if wrapped <= -PI {
        wrapped + 2.0 * PI
    } else {
        wrapped
    }
}

/// The X-Y-Z Euler angles of `rotation` nearest `previous` (of its two decompositions), each
/// clamped to the limit and moved at most `unit_angle` from `previous`; returns the rebuilt
/// rotation and the angles.
fn clamp_euler(
    rotation: DQuat,
    limit: &EulerLimit,
    previous: DVec3,
    unit_angle: f64,
) -> (DQuat, DVec3) {
    let (a, b, c) = rotation.to_euler(EulerRot::XYZ);
    let first = DVec3::new(a, b, c);
    let second = DVec3::new(wrap(a + PI), wrap(PI - b), wrap(c + PI));
    let distance = |v: DVec3| (0..3).map(|k| wrap(v[k] - previous[k]).abs()).sum::<f64>();
    let mut angles = if distance(second) < distance(first) {
        second
    } else {
        first
    };
    for k in 0..3 {
        let clamped = angles[k].clamp(limit.min[k], limit.max[k]);
        angles[k] = previous[k] + (clamped - previous[k]).clamp(-unit_angle, unit_angle);
    }
    (
        DQuat::from_euler(EulerRot::XYZ, angles.x, angles.y, angles.z),
        angles,
    )
}

/// True when the rotation's X-Y-Z angles (either decomposition inside the limit) touch a bound
/// of an axis that can turn.
fn at_bound(rotation: DQuat, limit: &EulerLimit) -> bool {
    let (a, b, c) = rotation.to_euler(EulerRot::XYZ);
    let first = [a, b, c];
    let second = [wrap(a + PI), wrap(PI - b), wrap(c + PI)];
    let inside =
        |v: &[f64; 3]| (0..3).all(|k| v[k] >= limit.min[k] - 1e-9 && v[k] <= limit.max[k] + 1e-9);
    let angles = if inside(&first) || !inside(&second) {
        first
    } else {
        second
    };
    (0..3).any(|k| {
        limit.min[k] < limit.max[k]
            && ((angles[k] - limit.min[k]).abs() < 1e-6 || (angles[k] - limit.max[k]).abs() < 1e-6)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The trigonometry-free plane step against the rule written with angles: turn by
    /// ± `min(acos(a·b / |a||b|), unit)`, clamp to the range — on knee-like and other ranges
    /// up to π wide, unit angles from small to uncapped, and directions from parallel to
    /// opposite.
    #[test]
    fn half_angle_plane_step_matches_the_angle_rule() {
        let mut seed = ikarus_testdata::Rng(7);
        let mut worst = 0.0f64;
        for case in 0..20_000 {
            let lo = -PI + 2.0 * PI * seed.uniform();
            let hi = (lo + PI * seed.uniform()).min(PI);
            let range = PlaneRange::new(lo, hi).unwrap();
            let theta = lo + (hi - lo) * seed.uniform();
            let unit = if case % 3 == 0 {
                PI
            } else {
                0.01 + 3.0 * seed.uniform()
            };
            let mut direction = || {
                DVec3::new(
                    seed.uniform() - 0.5,
                    seed.uniform() - 0.5,
                    seed.uniform() - 0.5,
                ) * (0.1 + 2.0 * seed.uniform())
            };
            let a = direction();
            let b = match case % 5 {
                0 => a * 1.7 + DVec3::splat(1e-9),  // nearly parallel
                1 => -a * 0.4 + DVec3::splat(1e-9), // nearly opposite
                _ => direction(),
            };
            let (dot, lengths) = (a.dot(b), (a.length_squared() * b.length_squared()).sqrt());
            let plus = a.cross(b).x > 0.0;
            let (sin_half_unit, cos_half_unit) = (0.5 * unit).sin_cos();
            let (c, s) = plane_step_by_half_angles(
                &range,
                ((0.5 * theta).cos(), (0.5 * theta).sin()),
                plus,
                (dot, lengths, a.cross(b).length_squared()),
                unit.cos(),
                (sin_half_unit, cos_half_unit),
            );
            let angle = (dot / lengths).clamp(-1.0, 1.0).acos().min(unit);
            let next = (theta + if plus { angle } else { -angle }).clamp(lo, hi);
            let error = (c - (0.5 * next).cos()).hypot(s - (0.5 * next).sin());
            // `acos` near ±1 loses half the digits (the half-angle form does not), so nearly
            // parallel or opposite directions agree to 1e-7 only.
            let bound = if case % 5 < 2 { 1e-7 } else { 1e-12 };
            if case % 5 >= 2 {
                worst = worst.max(error);
            }
            assert!(error < bound, "case {case}: {error:e}");
        }
        println!("largest difference for general directions {worst:e}");
    }
}
