//! 7-DOF spherical–revolute–spherical arms (KUKA LBR iiwa and the like) on seed 000's limb
//! ([`Limb7`]; Tolani, Goswami and Badler 2000).
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

use std::f64::consts::{PI, TAU};

use glam::{DQuat, DVec3};

use super::subproblem::Spherical;
use super::{Best, Screws, copy_array, fit_all};
use crate::limb7::{Limb7, Limb7Geometry, SwivelInterval, SwivelPolicy};

/// Samples around the swivel circle when the wished swivel has no legal branch.
pub const SWIVEL_SAMPLES: usize = 128;

/// Bisection steps from a legal sample toward the wish (2π / 128 / 2¹⁶ ≈ 7.5e-7 rad).
const BISECTIONS: usize = 16;

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

/// Every branch for one swivel.
struct Branches {
    q: [[f64; 7]; 8],
    count: usize,
    reached: bool,
}

impl SrsArm {
    /// Recognises the shape and maps it onto a [`Limb7`].
    ///
    /// # Errors
    /// A sentence naming the first condition that fails.
    pub fn new(screws: &Screws) -> Result<Self, String> {
        screws.expect_revolute(7)?;
        screws.not_parallel(&[0, 1, 2])?;
        screws.not_parallel(&[4, 5, 6])?;
        let shoulder = screws
            .meet(&[0, 1, 2])
            .map_err(|e| format!("no spherical shoulder: {e}"))?;
        let wrist = screws
            .meet(&[4, 5, 6])
            .map_err(|e| format!("no spherical wrist: {e}"))?;
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
        .map_err(|e| format!("the elbow `{}` does not fit a limb: {e}", screws.names[3]))?;
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
        let shoulder = DQuat::from_axis_angle(a1, q[0])
            * DQuat::from_axis_angle(a2, q[1])
            * DQuat::from_axis_angle(a3, q[2]);
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
        let mut out = branches.q[..branches.count].to_vec();
        for q in &mut out {
            fit_all(q, &self.lower, &self.upper, seed);
        }
        (out, branches.reached)
    }

    /// The swivel intervals in which at least one branch fits the joint limits, sorted by
    /// start; empty when none does, `[SwivelInterval::FULL]` when every swivel does.
    /// Found by sampling [`SWIVEL_SAMPLES`] swivels and bisecting each change of legality;
    /// an interval narrower than one sample step between two illegal samples can be missed.
    pub fn feasible_swivels(&self, position: DVec3, rotation: DQuat) -> Vec<SwivelInterval> {
        let goal = self.goal(position, rotation);
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

    /// The wish if a branch fits there; otherwise the legal swivel nearest it, searched
    /// outward in steps of 2π / [`SWIVEL_SAMPLES`] and bisected back toward the wish. When no
    /// sample fits, the feasible swivels (if any) lie in sets narrower than a step:
    /// [`narrow_feasible`](Self::narrow_feasible) finds them.
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
        let step = TAU / SWIVEL_SAMPLES as f64;
        // The least violation over the branches at `wish + j · step`, for the fallback.
        let mut violations = [best.violation; SWIVEL_SAMPLES];
        for k in 1..=SWIVEL_SAMPLES / 2 {
            for side in [1.0, -1.0] {
                let at = wish + side * step * k as f64;
                let found = self.best_at(goal, at, seed);
                let j = if side > 0.0 { k } else { SWIVEL_SAMPLES - k };
                violations[j % SWIVEL_SAMPLES] = found.violation;
                if !found.is_legal() {
                    continue;
                }
                // Bisect between the last illegal swivel and this legal one.
                let (mut illegal, mut legal, mut kept) = (at - side * step, at, found);
                for _ in 0..BISECTIONS {
                    let middle = 0.5 * (illegal + legal);
                    let b = self.best_at(goal, middle, seed);
                    if b.is_legal() {
                        (legal, kept) = (middle, b);
                    } else {
                        illegal = middle;
                    }
                }
                return (legal, kept, true);
            }
        }
        match self.narrow_feasible(goal, wish, seed, &violations) {
            Some((swivel, found)) => (swivel, found, true),
            None => (wish, best, reached),
        }
    }

    /// A legal swivel inside a feasible set narrower than the sampling step, or `None` when
    /// there is none. The least violation over the branches is a continuous function of the
    /// swivel (each branch's angles are, and a limit's violation is continuous in the angle
    /// modulo whole turns) and is zero exactly on the feasible set, so a feasible set between
    /// two illegal samples is a dip of it: every local minimum of the `violations` sampled at
    /// `wish + j · 2π / SWIVEL_SAMPLES` is narrowed by golden-section search until the
    /// violation reaches zero or the bracket is below 1e-12 rad, nearest the wish first.
    fn narrow_feasible(
        &self,
        goal: (DVec3, DQuat),
        wish: f64,
        seed: &[f64; 7],
        violations: &[f64; SWIVEL_SAMPLES],
    ) -> Option<(f64, Best<7>)> {
        const N: usize = SWIVEL_SAMPLES;
        let step = TAU / N as f64;
        let mut minima: Vec<usize> = (0..N)
            .filter(|&j| {
                let v = violations[j];
                v.is_finite() && v <= violations[(j + N - 1) % N] && v <= violations[(j + 1) % N]
            })
            .collect();
        minima.sort_by_key(|&j| j.min(N - j));
        let golden = 0.5 * (5.0_f64.sqrt() - 1.0);
        for j in minima {
            let centre = wish + step * j as f64;
            let (mut a, mut b) = (centre - step, centre + step);
            let mut c = b - golden * (b - a);
            let mut d = a + golden * (b - a);
            let (mut fc, mut fd) = (self.best_at(goal, c, seed), self.best_at(goal, d, seed));
            while b - a > 1e-12 {
                for (at, found) in [(c, fc), (d, fd)] {
                    if found.is_legal() {
                        return Some((at, found));
                    }
                }
                if fc.violation < fd.violation {
                    (b, d, fd) = (d, c, fc);
                    c = b - golden * (b - a);
                    fc = self.best_at(goal, c, seed);
                } else {
                    (a, c, fc) = (c, d, fd);
                    d = a + golden * (b - a);
                    fd = self.best_at(goal, d, seed);
                }
            }
        }
        None
    }

    fn best_with_reach(
        &self,
        goal: (DVec3, DQuat),
        swivel: f64,
        seed: &[f64; 7],
    ) -> (Best<7>, bool) {
        let branches = self.branches(goal, swivel, seed);
        let mut best = Best::NONE;
        for q in &branches.q[..branches.count] {
            let mut q = *q;
            let (violation, distance) = fit_all(&mut q, &self.lower, &self.upper, seed);
            best.offer(q, violation, distance);
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
            q: [[0.0; 7]; 8],
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
            let shoulders = self
                .shoulder_axes
                .split(solution.shoulder, [seed[0], seed[1], seed[2]]);
            let wrist_rotation = (solution.shoulder * solution.elbow_hinge).conjugate() * rotation;
            let wrists = self
                .wrist_axes
                .split(wrist_rotation, [seed[4], seed[5], seed[6]]);
            for s in shoulders {
                for w in wrists {
                    out.q[out.count] = [s[0], s[1], s[2], solution.elbow_angle, w[0], w[1], w[2]];
                    out.count += 1;
                }
            }
        }
        out
    }
}

fn wrap(angle: f64) -> f64 {
    let a = angle.rem_euclid(TAU);
    if a > PI { a - TAU } else { a }
}
