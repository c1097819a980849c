//! 7-DOF spherical–revolute–spherical arms (KUKA LBR iiwa and the like) on the 7-DOF limb
//! ([`Limb7`]; seed 000, Tolani, Goswami and Badler 2000).
//!
//! The chain is mapped once onto a [`Limb7`] in the base frame moved to the shoulder point `S`
//! (where axes 1–3 meet): the upper bone runs from `S` to the point of the elbow axis nearest
//! `S`, the lower bone from there to the wrist point `W` (where axes 5–7 meet), the elbow's
//! axis and range are joint 4's. For a target `T` the wrist point must go to `T · W₀` (`W₀`
//! in the tip frame at `q = 0`); [`Limb7::solve_position`] gives the shoulder's rotation and the
//! elbow angle for a swivel; the shoulder's rotation is split into joints 1–3 and the rest of
//! the orientation into joints 5–7 (Paden–Kahan subproblems 2 and 1), two ways each. With the
//! elbow's two angles that makes up to **eight branches per swivel**.
//!
//! The swivel is measured about the shoulder→wrist axis from the side of
//! `(W₀ − S) × elbow axis` (the reference of the [`Limb7`]): swivel 0 puts the elbow on that
//! side.

use std::f64::consts::{FRAC_PI_2, PI, TAU};

use glam::{DMat3, DQuat, DVec3};

use super::subproblem::Spherical;
use super::{Best, Screws, ShapeError, copy_array, fit_all};
use crate::analytic::limb7::{Limb7, Limb7Geometry, SwivelInterval, SwivelPolicy};
use crate::linalg::trig::axis_angle;

/// Samples around the swivel circle when the exact feasible intervals do not apply (see
/// [`SrsArm::feasible_swivels`]).
pub const SWIVEL_SAMPLES: usize = 128;

/// A 7-DOF S-R-S arm prepared for closed-form solves (see the module docs).
#[derive(Clone, Debug, PartialEq)]
pub struct SrsArm {
    limb: Limb7,
    /// Where axes 1–3 meet, base frame.
    shoulder: DVec3,
    /// The wrist point in the tip frame.
    wrist_in_tip: DVec3,
    /// `base_from_tip` rotation at `q = 0`, inverted.
    tip_from_base0: DQuat,
    shoulder_axes: Spherical,
    wrist_axes: Spherical,
    lower: [f64; 7],
    upper: [f64; 7],
}

/// Every branch for one swivel: per elbow angle, two shoulder and two wrist triples (any
/// shoulder goes with any wrist).
struct Branches {
    elbows: [Elbow; 2],
    count: usize,
    reached: bool,
}

/// The branches of one elbow angle.
#[derive(Clone, Copy)]
struct Elbow {
    angle: f64,
    shoulders: [[f64; 3]; 2],
    wrists: [[f64; 3]; 2],
}

impl Elbow {
    const NONE: Self = Self {
        angle: 0.0,
        shoulders: [[0.0; 3]; 2],
        wrists: [[0.0; 3]; 2],
    };

    fn joints(&self, s: usize, w: usize) -> [f64; 7] {
        let ([a, b, c], [d, e, f]) = (self.shoulders[s], self.wrists[w]);
        [a, b, c, self.angle, d, e, f]
    }
}

impl Branches {
    /// The joint vectors, four per elbow angle.
    fn all(&self) -> impl Iterator<Item = [f64; 7]> + '_ {
        self.elbows[..self.count]
            .iter()
            .flat_map(|e| [(0, 0), (0, 1), (1, 0), (1, 1)].map(|(s, w)| e.joints(s, w)))
    }
}

impl SrsArm {
    /// Recognises the shape and maps it onto a [`Limb7`].
    ///
    /// # Errors
    /// A sentence naming the first condition that fails.
    pub fn new(screws: &Screws) -> Result<Self, ShapeError> {
        screws.expect_revolute(7)?;
        screws.not_parallel(&[0, 1, 2])?;
        screws.not_parallel(&[4, 5, 6])?;
        let shoulder = screws
            .meet(&[0, 1, 2])
            .map_err(ShapeError::no_point("spherical shoulder"))?;
        let wrist = screws
            .meet(&[4, 5, 6])
            .map_err(ShapeError::no_point("spherical wrist"))?;
        let elbow = screws.joints[3];
        let elbow_point = elbow.point + elbow.axis.dot(shoulder - elbow.point) * elbow.axis;
        let (lo, hi) = (screws.lower[3], screws.upper[3]);
        let range = if lo.is_finite() && hi.is_finite() && hi - lo <= TAU {
            [lo, hi]
        } else {
            [-PI, PI]
        };
        let upper = elbow_point - shoulder;
        let mut reference = (wrist - shoulder).cross(elbow.axis);
        if reference.length_squared() < 1e-12 {
            reference = elbow.axis.any_orthonormal_vector();
        }
        let limb = Limb7::new(Limb7Geometry {
            upper: if upper.length() > 1e-9 * screws.size {
                upper
            } else {
                // The elbow axis passes through the shoulder: any point on it will do.
                upper + elbow.axis * screws.size
            },
            elbow_frame: DQuat::IDENTITY,
            elbow_axis: elbow.axis,
            elbow_range: range,
            lower: wrist - elbow_point,
            wrist_frame: DQuat::IDENTITY,
            swivel_reference: reference,
        })
        .map_err(|source| ShapeError::Elbow {
            joint: screws.names[3].clone(),
            source: Box::new(source),
        })?;
        let (_, tip_rotation, _) = screws.tip.to_scale_rotation_translation();
        let axes = |r: std::ops::Range<usize>| {
            let a: Vec<DVec3> = screws.joints[r].iter().map(|j| j.axis).collect();
            [a[0], a[1], a[2]]
        };
        Ok(Self {
            limb,
            shoulder,
            wrist_in_tip: screws.tip.inverse().transform_point3(wrist),
            tip_from_base0: tip_rotation.normalize().conjugate(),
            shoulder_axes: Spherical::new(axes(0..3)),
            wrist_axes: Spherical::new(axes(4..7)),
            lower: copy_array(&screws.lower),
            upper: copy_array(&screws.upper),
        })
    }

    /// The limb the arm was mapped onto (base frame moved to the shoulder point).
    pub fn limb(&self) -> &Limb7 {
        &self.limb
    }

    /// The swivel angle of the joint vector `q`.
    pub fn swivel_of(&self, q: &[f64; 7]) -> f64 {
        let [a1, a2, a3] = *self.shoulder_axes.axes();
        let shoulder = axis_angle(a1, q[0]) * axis_angle(a2, q[1]) * axis_angle(a3, q[2]);
        self.limb.swivel_from_pose(shoulder, q[3])
    }

    /// Every branch for the tip frame `position`, `rotation` (`base_from_tip`) at `swivel`:
    /// up to eight joint vectors, each angle moved by whole turns toward the limits and the
    /// `seed`, whether or not they fit the limits; empty for non-finite input. The second
    /// value is false when the target is out of the arm's reach (the vectors then come
    /// closest).
    pub fn solutions(
        &self,
        position: DVec3,
        rotation: DQuat,
        swivel: f64,
        seed: &[f64; 7],
    ) -> (Vec<[f64; 7]>, bool) {
        let goal = self.goal(position, rotation);
        let branches = self.branches(goal, swivel, seed);
        let mut out: Vec<[f64; 7]> = branches.all().collect();
        for q in &mut out {
            fit_all(q, &self.lower, &self.upper, seed);
        }
        (out, branches.reached)
    }

    /// The swivel intervals in which at least one branch fits the joint limits, sorted by
    /// start; empty when none does, `[SwivelInterval::FULL]` when every swivel does.
    ///
    /// Exact, not sampled: for either elbow angle the shoulder's rotation is
    /// `M(ψ) = R(n, ψ) · M(0)` (`n` the shoulder→wrist axis) and the wrist's is
    /// `(M(ψ) · E)ᵀ · G`, so every entry of both is `a·sin ψ + b·cos ψ + c` (Tolani, Goswami
    /// and Badler 2000; seed 000, 7-DOF limb). A joint of a three-hinge group
    /// `R(a₁,θ₁)·R(a₂,θ₂)·R(a₃,θ₃)` sits on a limit value `L` only where one such equation holds —
    /// `(R(a₁,L)·a₂)ᵀ·M·a₃ = a₂·a₃` for the first, `a₁ᵀ·M·a₃ = a₁ᵀ·R(a₂,L)·a₃` for the middle,
    /// `a₁ᵀ·M·R(a₃,−L)·a₂ = a₁·a₂` for the last — whose roots are closed form (at most two).
    /// Between consecutive roots no branch's legality changes, so one evaluation inside each
    /// piece decides it; the intervals' ends are the roots (legal to rounding: see
    /// `settle`). Falls back to `sampled_swivels`
    /// when the elbow's solution is not a rotation about `n` (an unreachable or degenerate
    /// target).
    pub fn feasible_swivels(&self, position: DVec3, rotation: DQuat) -> Vec<SwivelInterval> {
        self.intervals(self.goal(position, rotation))
    }

    /// [`feasible_swivels`](Self::feasible_swivels) for a [`goal`](Self::goal).
    fn intervals(&self, goal: (DVec3, DQuat)) -> Vec<SwivelInterval> {
        let Some(cuts) = self.cuts(goal) else {
            return self.sampled_swivels(goal);
        };
        let seed = [0.0; 7];
        let legal = |s: f64| self.best_at(goal, s, &seed).is_legal();
        if cuts.is_empty() {
            return if legal(0.0) {
                vec![SwivelInterval::FULL]
            } else {
                Vec::new()
            };
        }
        let pieces = Self::pieces(&cuts);
        let n = pieces.len();
        let legal_pieces: Vec<bool> = pieces.iter().map(|piece| legal(piece.middle())).collect();
        if legal_pieces.iter().all(|&l| l) {
            return vec![SwivelInterval::FULL];
        }
        let Some(first_illegal) = legal_pieces.iter().position(|&l| !l) else {
            return Vec::new();
        };
        // Walk once around from an illegal piece, joining runs of legal pieces.
        let mut intervals = Vec::new();
        let mut start = None;
        for k in 1..=n {
            let i = (first_illegal + k) % n;
            match (legal_pieces[i], start) {
                (true, None) => start = Some(pieces[i].start),
                (false, Some(s)) => {
                    intervals.push(SwivelInterval {
                        start: s,
                        end: pieces[i].start,
                    });
                    start = None;
                }
                _ => {}
            }
        }
        intervals.sort_by(|x, y| x.start.total_cmp(&y.start));
        intervals
    }

    /// [`limit_crossings`](Self::limit_crossings) sorted, without repeats.
    fn cuts(&self, goal: (DVec3, DQuat)) -> Option<Vec<f64>> {
        let mut cuts = self.limit_crossings(goal)?;
        cuts.sort_by(f64::total_cmp);
        cuts.dedup();
        Some(cuts)
    }

    /// The pieces of the circle between consecutive sorted `cuts` (the last wraps to the
    /// first); the whole circle for no cut, two halves for one.
    fn pieces(cuts: &[f64]) -> Vec<SwivelInterval> {
        match *cuts {
            [] => return vec![SwivelInterval::FULL],
            [cut] => return Self::pieces(&[cut, wrap(cut + PI)]),
            _ => {}
        }
        let n = cuts.len();
        (0..n)
            .map(|i| SwivelInterval {
                start: cuts[i],
                end: cuts[(i + 1) % n],
            })
            .collect()
    }

    /// Every swivel in `(-π, π]` where a joint of the shoulder or the wrist may reach one of
    /// its limits, for either elbow angle (see [`feasible_swivels`](Self::feasible_swivels));
    /// `None` when the solution is not `R(n, ψ) · M(0)` in the swivel to 1e-9.
    fn limit_crossings(&self, (wrist, rotation): (DVec3, DQuat)) -> Option<Vec<f64>> {
        let [lo, hi] = self.limb.geometry().elbow_range;
        let mut cuts = Vec::with_capacity(48);
        let mut first_elbow = f64::NAN;
        for hint in [lo, hi] {
            // M(ψ) = C + A·sin ψ + B·cos ψ from ψ = 0, π/2, π; checked at a fourth swivel.
            let at = |swivel: f64| self.limb.solve_position(wrist, swivel, Some(hint)).ok();
            let [s0, s1, s2, s3] = [0.0, FRAC_PI_2, PI, 2.0].map(at);
            let (s0, s1, s2, s3) = (s0?, s1?, s2?, s3?);
            let elbow = s0.elbow_angle;
            if [s1.elbow_angle, s2.elbow_angle, s3.elbow_angle]
                .iter()
                .any(|e| (e - elbow).abs() > 1e-9)
            {
                return None;
            }
            if elbow == first_elbow {
                continue;
            }
            first_elbow = elbow;
            let solutions = [s0, s1, s2, s3];
            let shoulders = solutions.map(|s| DMat3::from_quat(s.shoulder));
            let wrists = solutions
                .map(|s| DMat3::from_quat((s.shoulder * s.elbow_hinge).conjugate() * rotation));
            for (first, m, axes) in [
                (0, shoulders, self.shoulder_axes.axes()),
                (4, wrists, self.wrist_axes.axes()),
            ] {
                let c = (m[0] + m[2]) * 0.5;
                let b = (m[0] - m[2]) * 0.5;
                let a = m[1] - c;
                let (sin, cos) = 2.0_f64.sin_cos();
                if !(c + a * sin + b * cos).abs_diff_eq(m[3], 1e-9) {
                    return None;
                }
                self.push_crossings(first, axes, [a, b, c], &mut cuts);
            }
        }
        Some(cuts)
    }

    /// The roots of the three joints' limit equations for one group (`first` = 0 for the
    /// shoulder, 4 for the wrist) with `M(ψ) = c + a·sin ψ + b·cos ψ`.
    fn push_crossings(
        &self,
        first: usize,
        &[a1, a2, a3]: &[DVec3; 3],
        [a, b, c]: [DMat3; 3],
        cuts: &mut Vec<f64>,
    ) {
        // `uᵀ·M(ψ)·w = value` as `p·sin ψ + q·cos ψ + r = 0`.
        let mut equation = |u: DVec3, w: DVec3, value: f64| {
            let (p, q, r) = (u.dot(a * w), u.dot(b * w), u.dot(c * w) - value);
            push_roots(p, q, r, cuts);
        };
        for joint in 0..3 {
            let (l, u) = (self.lower[first + joint], self.upper[first + joint]);
            if !(l.is_finite() && u.is_finite()) || u - l >= TAU {
                continue;
            }
            for limit in [l, u] {
                match joint {
                    0 => equation(DQuat::from_axis_angle(a1, limit) * a2, a3, a2.dot(a3)),
                    1 => equation(a1, a3, a1.dot(DQuat::from_axis_angle(a2, limit) * a3)),
                    _ => equation(a1, DQuat::from_axis_angle(a3, -limit) * a2, a1.dot(a2)),
                }
            }
        }
    }

    /// The sampled search [`feasible_swivels`](Self::feasible_swivels) falls back on:
    /// [`SWIVEL_SAMPLES`] swivels and a bisection of each change of legality; an interval
    /// narrower than one sample step between two illegal samples can be missed.
    fn sampled_swivels(&self, goal: (DVec3, DQuat)) -> Vec<SwivelInterval> {
        let seed = [0.0; 7];
        let legal = |s: f64| self.best_at(goal, s, &seed).is_legal();
        let step = TAU / SWIVEL_SAMPLES as f64;
        let samples: Vec<bool> = (0..SWIVEL_SAMPLES)
            .map(|i| legal(-PI + step * i as f64))
            .collect();
        if samples.iter().all(|&l| l) {
            return vec![SwivelInterval::FULL];
        }
        let Some(first_illegal) = samples.iter().position(|&l| !l) else {
            return Vec::new();
        };
        // Walk once around from an illegal sample, bisecting every change.
        let edge = |from: f64, legal_at_from: bool| {
            let (mut a, mut b) = (from, from + step);
            for _ in 0..40 {
                let m = 0.5 * (a + b);
                if legal(m) == legal_at_from {
                    a = m;
                } else {
                    b = m;
                }
            }
            if legal_at_from { a } else { b }
        };
        let mut intervals = Vec::new();
        let mut start = None;
        for k in 0..SWIVEL_SAMPLES {
            let i = (first_illegal + k) % SWIVEL_SAMPLES;
            let next = (i + 1) % SWIVEL_SAMPLES;
            let at = -PI + step * i as f64;
            match (samples[i], samples[next]) {
                (false, true) => start = Some(edge(at, false)),
                (true, false) => {
                    if let Some(s) = start.take() {
                        intervals.push(SwivelInterval {
                            start: wrap(s),
                            end: wrap(edge(at, true)),
                        });
                    }
                }
                _ => {}
            }
        }
        intervals.sort_by(|x, y| x.start.total_cmp(&y.start));
        intervals
    }

    /// Solves for the tip frame from `seed`: the swivel from `policy` (`KeepCurrent` keeps the
    /// seed's swivel when a branch fits there, otherwise takes the nearest swivel where one
    /// does), then the legal branch nearest the seed.
    pub(crate) fn solve(
        &self,
        position: DVec3,
        rotation: DQuat,
        seed: &[f64; 7],
        policy: SwivelPolicy,
    ) -> ([f64; 7], super::RobotOutcome) {
        let goal = self.goal(position, rotation);
        let (swivel, best, reached) = match policy {
            SwivelPolicy::Fixed(swivel) => {
                let (best, reached) = self.best_with_reach(goal, swivel, seed);
                (swivel, best, reached)
            }
            SwivelPolicy::KeepCurrent => self.nearest_feasible(goal, self.swivel_of(seed), seed),
            SwivelPolicy::NearestFeasible(wish) => self.nearest_feasible(goal, wish, seed),
            SwivelPolicy::MiddleOfFeasible => {
                let current = self.swivel_of(seed);
                let intervals = self.feasible_swivels(position, rotation);
                let swivel = Limb7::choose_swivel(policy, current, &intervals);
                let (best, reached) = self.best_with_reach(goal, swivel, seed);
                (swivel, best, reached)
            }
        };
        let legal = best.is_legal();
        (
            best.clamped(&self.lower, &self.upper),
            super::RobotOutcome {
                reached: reached && legal,
                swivel: Some(wrap(swivel)),
            },
        )
    }

    /// The wrist point's target (relative to the shoulder) and the rotation joints 1–7 must
    /// make (`base_from_tip · tip_from_base(q = 0)`).
    #[allow(clippy::inline_always)] // hot: inlined into the solve
    #[inline(always)]
    fn goal(&self, position: DVec3, rotation: DQuat) -> (DVec3, DQuat) {
        let wrist = position + rotation * self.wrist_in_tip;
        (wrist - self.shoulder, rotation * self.tip_from_base0)
    }

    /// The wish if a branch fits there; otherwise the legal swivel nearest it: the nearest
    /// point of the exact feasible intervals ([`intervals`](Self::intervals)), moved inside
    /// by `settle`. When no swivel is feasible, the wish and its least
    /// violating branch.
    fn nearest_feasible(
        &self,
        goal: (DVec3, DQuat),
        wish: f64,
        seed: &[f64; 7],
    ) -> (f64, Best<7>, bool) {
        let (best, reached) = self.best_with_reach(goal, wish, seed);
        if best.is_legal() || !reached {
            return (wish, best, reached);
        }
        let Some(cuts) = self.cuts(goal) else {
            // Not a rotation about the shoulder→wrist axis: the sampled intervals.
            let intervals = self.sampled_swivels(goal);
            let nearest = intervals
                .iter()
                .map(|interval| (interval, interval.nearest(wish)))
                .min_by(|x, y| x.1.1.total_cmp(&y.1.1));
            return match nearest
                .and_then(|(interval, (swivel, _))| self.settle(goal, interval, swivel, seed))
            {
                Some((swivel, found)) => (swivel, found, true),
                None => (wish, best, reached),
            };
        };
        // The pieces between cuts, nearest the wish first: the first legal one holds the
        // nearest feasible swivel (its end nearer the wish).
        let pieces = Self::pieces(&cuts);
        let mut order: Vec<(f64, SwivelInterval)> = pieces
            .iter()
            .map(|piece| (piece.nearest(wish).1, *piece))
            .collect();
        order.sort_by(|x, y| x.0.total_cmp(&y.0));
        for (_, piece) in order {
            if !self.best_at(goal, piece.middle(), seed).is_legal() {
                continue;
            }
            let (swivel, _) = piece.nearest(wish);
            if let Some((swivel, found)) = self.settle(goal, &piece, swivel, seed) {
                return (swivel, found, true);
            }
        }
        (wish, best, reached)
    }

    /// `swivel` (a point of `interval`, typically an end) with its legal branch, or, when the
    /// rounding of the end puts it a hair outside, the nearest legal swivel found by moving
    /// toward the interval's middle by 1e-12, 1e-10, … rad; `None` when even the middle has no
    /// legal branch.
    fn settle(
        &self,
        goal: (DVec3, DQuat),
        interval: &SwivelInterval,
        swivel: f64,
        seed: &[f64; 7],
    ) -> Option<(f64, Best<7>)> {
        let found = self.best_at(goal, swivel, seed);
        if found.is_legal() {
            return Some((swivel, found));
        }
        let middle = interval.middle();
        let towards = wrap(middle - swivel);
        for step in [1e-12, 1e-10, 1e-8, 1e-6, 1e-4] {
            if step >= towards.abs() {
                break;
            }
            let at = swivel + step.copysign(towards);
            let found = self.best_at(goal, at, seed);
            if found.is_legal() {
                return Some((at, found));
            }
        }
        let found = self.best_at(goal, middle, seed);
        found.is_legal().then_some((middle, found))
    }

    fn best_with_reach(
        &self,
        goal: (DVec3, DQuat),
        swivel: f64,
        seed: &[f64; 7],
    ) -> (Best<7>, bool) {
        let branches = self.branches(goal, swivel, seed);
        let mut best = Best::NONE;
        // Each joint is fitted on its own, so the triples are fitted once each (13 angles
        // per elbow, not 28) and the four branches combine their sums.
        let fit_triple = |angles: [f64; 3], first: usize| {
            let mut t = angles;
            let (lower, upper) = (&self.lower[first..first + 3], &self.upper[first..first + 3]);
            let (violation, distance) = fit_all(
                &mut t,
                &[lower[0], lower[1], lower[2]],
                &[upper[0], upper[1], upper[2]],
                &[seed[first], seed[first + 1], seed[first + 2]],
            );
            (t, violation, distance)
        };
        for elbow in &branches.elbows[..branches.count] {
            let mut angle = [elbow.angle];
            let (elbow_violation, elbow_distance) =
                fit_all(&mut angle, &[self.lower[3]], &[self.upper[3]], &[seed[3]]);
            let shoulders = elbow.shoulders.map(|t| fit_triple(t, 0));
            let wrists = elbow.wrists.map(|t| fit_triple(t, 4));
            for (s, sv, sd) in shoulders {
                for (w, wv, wd) in wrists {
                    best.offer(
                        [s[0], s[1], s[2], angle[0], w[0], w[1], w[2]],
                        sv + elbow_violation + wv,
                        sd + elbow_distance + wd,
                    );
                }
            }
        }
        (best, branches.reached)
    }

    fn best_at(&self, goal: (DVec3, DQuat), swivel: f64, seed: &[f64; 7]) -> Best<7> {
        self.best_with_reach(goal, swivel, seed).0
    }

    /// Every branch at `swivel` (angles in `(-π, π]`, not fitted).
    fn branches(
        &self,
        (wrist, rotation): (DVec3, DQuat),
        swivel: f64,
        seed: &[f64; 7],
    ) -> Branches {
        let mut out = Branches {
            elbows: [Elbow::NONE; 2],
            count: 0,
            reached: true,
        };
        let [lo, hi] = self.limb.geometry().elbow_range;
        let mut first_elbow = f64::NAN;
        for hint in [lo, hi] {
            let Ok(solution) = self.limb.solve_position(wrist, swivel, Some(hint)) else {
                out.reached = false;
                return out;
            };
            if solution.elbow_angle == first_elbow {
                continue;
            }
            first_elbow = solution.elbow_angle;
            out.reached &= solution.reached;
            let wrist_rotation = (solution.shoulder * solution.elbow_hinge).conjugate() * rotation;
            out.elbows[out.count] = Elbow {
                angle: solution.elbow_angle,
                shoulders: self
                    .shoulder_axes
                    .split(solution.shoulder, [seed[0], seed[1], seed[2]]),
                wrists: self
                    .wrist_axes
                    .split(wrist_rotation, [seed[4], seed[5], seed[6]]),
            };
            out.count += 1;
        }
        out
    }
}

/// Pushes the roots in `(-π, π]` of `p·sin ψ + q·cos ψ + r = 0` (none when the left side
/// does not change with `ψ` or never reaches 0).
fn push_roots(p: f64, q: f64, r: f64, roots: &mut Vec<f64>) {
    let amplitude = p.hypot(q);
    if amplitude <= 1e-12 * r.abs().max(1e-300) || r.abs() > amplitude {
        return;
    }
    // p·sin ψ + q·cos ψ = amplitude · cos(ψ − φ).
    let phase = p.atan2(q);
    let delta = (-r / amplitude).acos();
    roots.push(wrap(phase + delta));
    if delta > 0.0 {
        roots.push(wrap(phase - delta));
    }
}

fn wrap(angle: f64) -> f64 {
    // `rem_euclid` is a library `fmod`: skip it for angles already in range.
    if angle > -PI && angle <= PI {
        return angle;
    }
    let a = angle.rem_euclid(TAU);
    if a > PI { a - TAU } else { a }
}
