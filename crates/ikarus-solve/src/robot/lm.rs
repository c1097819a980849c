//! Levenberg–Marquardt on a revolute chain's joint vector `q` ([`Screws`]): the same method,
//! parameters and restarts as [`lm`](crate::iterative::lm), without the skeleton in the loop.
//!
//! The general solver works on a [`LocalPose`](ikarus_core::LocalPose): every trial writes
//! quaternions into the pose, runs the skeleton's forward kinematics, and reads hinge angles
//! back through arc tangents; on the TRAC-IK robots that bookkeeping is most of a sweep (see
//! BENCHMARKS.md, "The TRAC-IK protocol on real robots"). Here the state is `q` itself and
//! one pass over the product of exponentials gives the tip frame **and** every joint's
//! current axis line, so the Jacobian of an accepted trial comes with its residual: one
//! forward pass per tried step, nothing else per joint.
//!
//! ## The method (as [`lm`](crate::iterative::lm))
//!
//! Residual `e = [p* − p; log(R* Rᵀ)]` in the base frame (the rotation rows only with an
//! orientation goal), Jacobian column `i = [ωᵢ × (p − oᵢ); ωᵢ]` with `ωᵢ`, `oᵢ` joint `i`'s
//! axis and a point on it at the current `q`. The step solves `(JᵀJ + λ·D) h = Jᵀe`, `D` the
//! floored diagonal of `JᵀJ`; an accepted step (lower `½|e|²`) shrinks `λ` by Nielsen's rule,
//! a rejected one grows it (×2, ×4, …, at most [`LmConfig::max_tries`] tries). Limits by an
//! active set: joints on a bound whose step points outward are held, joints the step would
//! carry across a bound stop on it, and the others are solved again for what is left
//! (`(JᵀJ + λD)_ff h_f = (Jᵀe)_f − (JᵀJ)_fc h_c`), so the free joints make up for the stopped
//! ones instead of following a step clipped afterwards; no joint moves more than
//! [`IterationSettings::max_step_angle`] per step (the whole step shrinks to fit).
//!
//! **Restarts** as the shared driver's: when a sweep finds no lower cost or the score
//! (`|Δp|/tol_p + |Δr|/tol_r`) shrinks by less than 10% over
//! [`IterationSettings::stall_window`] sweeps — or by less than 10% in one sweep that leaves a
//! joint on a bound (a minimum the limits make: on the panda most failed starts end so) — the
//! start is given up and a new `q` drawn: a bounded joint uniformly from its range (every
//! other restart from the middle 70% of it; a range over a full turn from one turn around its
//! middle), an unbounded one within 0.5, 1, 2, then π rad of the best `q` either way. On those
//! odd restarts after a start the limits stopped, only the joints on a bound are drawn and the
//! others keep where that start ended (the redundant arm's other joints were mostly right). The
//! sweeps go on within [`IterationSettings::max_iterations`]; the best `q` over all starts is
//! returned. [`IterationSettings::time_budget_us`] stops the solve when spent.
//! [`IterationSettings::blend`] and `pattern_factor` are pose-space notions the caller
//! handles (`batch` uses the general solver when `blend < 1`).
//!
//! Chains of up to [`MAX_JOINTS`] joints; everything lives on the stack (no workspace, no
//! allocation), the small systems as straight-line code per chain length, compiled for AVX2
//! where the machine has it with the baseline's bits (BENCHMARKS.md, "The sweep's
//! instructions").
//!
//! [`IterationSettings::stall_window`]: crate::IterationSettings::stall_window
//! [`IterationSettings::max_iterations`]: crate::IterationSettings::max_iterations
//! [`IterationSettings::max_step_angle`]: crate::IterationSettings::max_step_angle
//! [`IterationSettings::time_budget_us`]: crate::IterationSettings::time_budget_us
//! [`IterationSettings::blend`]: crate::IterationSettings::blend

// Small dense matrices indexed as in the formulas.
#![allow(clippy::needless_range_loop)]

use std::f64::consts::{PI, TAU};

use crate::linalg::trig::{atan2, sin_cos};
use glam::{DMat3, DQuat, DVec3};

use super::Screws;
use crate::Tolerance;
use crate::clock::Deadline;
use crate::iterative::driver::SplitMix;
use crate::iterative::lm::LmConfig;

/// A sweep that holds a joint on a stop and keeps more than this fraction of the score ends
/// the start.
const PINNED_PROGRESS: f64 = 0.9;

/// Odd restarts draw bounded joints from this fraction of their range around its middle
/// (starts from the middle succeed far more often than uniform draws: panda 80% against 51%).
const INNER_DRAWS: f64 = 0.7;

/// The longest chain [`solve`] takes.
pub const MAX_JOINTS: usize = 8;

/// A tip goal in the chain's base frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainGoal {
    /// Tip position, base frame, metres.
    pub position: DVec3,
    /// Tip orientation, base frame (unit); position only when `None`.
    pub orientation: Option<DQuat>,
}

/// How a [`solve`] went. The caller measures the returned `q` by forward kinematics.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChainLmOutcome {
    /// Sweeps over all starts.
    pub iterations: u32,
    /// Random restarts used.
    pub restarts: u32,
    /// The best `q` is within the tolerances by this solver's own forward pass.
    pub converged: bool,
    /// Not converged and provably out of reach: the goal's position is farther from the
    /// first joint's axis (which no joint moves) than the chain's links reach, plus the
    /// position tolerance.
    pub out_of_reach: bool,
}

/// The chain prepared for `N` joints: arrays the compiler sizes and unrolls.
struct Chain<const N: usize> {
    axis: [DVec3; N],
    /// From the previous joint's point on its axis to this joint's (the first: from the base
    /// origin), at `q = 0`, base frame.
    step: [DVec3; N],
    lower: [f64; N],
    upper: [f64; N],
    /// From the last joint's point to the tip (the base origin to the tip without joints).
    tip_step: DVec3,
    /// `base_from_tip` rotation at `q = 0`.
    tip_rotation: DQuat,
}

impl<const N: usize> Chain<N> {
    fn new(screws: &Screws) -> Self {
        let point = |i: usize| screws.joints[i].point;
        Self {
            axis: std::array::from_fn(|i| screws.joints[i].axis),
            step: std::array::from_fn(|i| {
                if i == 0 {
                    point(0)
                } else {
                    point(i) - point(i - 1)
                }
            }),
            lower: std::array::from_fn(|i| screws.lower[i]),
            upper: std::array::from_fn(|i| screws.upper[i]),
            tip_step: screws.tip.translation - if N == 0 { DVec3::ZERO } else { point(N - 1) },
            tip_rotation: DQuat::from_mat3(&screws.tip.matrix3).normalize(),
        }
    }

    /// True when `position` is farther from the first joint's point than the polyline of
    /// joint points and the tip can reach (its segments are rigid: see
    /// [`evaluate`](Self::evaluate)), plus the tolerance.
    fn out_of_reach(&self, position: DVec3, tolerance: Tolerance) -> bool {
        let Some(&first) = self.step.first() else {
            return false;
        };
        let reach: f64 =
            self.step[1..].iter().map(|s| s.length()).sum::<f64>() + self.tip_step.length();
        (position - first).length() > reach + tolerance.position
    }

    /// A new start for restart number `restarts` (see the module's "Restarts"): bounded
    /// joints drawn from their range (odd restarts from its middle 70%, ranges over a turn
    /// from one turn around the middle), unbounded ones around `best`; after a start the
    /// limits stopped (`pinned`), odd restarts keep the joints inside their bounds.
    #[allow(clippy::inline_always)] // compiled inside `solve`'s instruction-set dispatch
    #[inline(always)]
    fn restart(
        &self,
        q: &mut [f64; N],
        best: &[f64; N],
        restarts: u32,
        pinned: bool,
        rng: &mut SplitMix,
    ) {
        let kick = (0.25 * f64::from(1u32 << restarts.min(4))).min(std::f64::consts::PI);
        for c in 0..N {
            let (l, u) = (self.lower[c], self.upper[c]);
            let (low, high) = if l.is_finite() && u.is_finite() {
                let middle = 0.5 * (l + u);
                if u - l > TAU {
                    // Every angle once: more turns only reach the same poses.
                    (middle - PI, middle + PI)
                } else if restarts % 2 == 1 {
                    let half = 0.5 * (u - l) * INNER_DRAWS;
                    (middle - half, middle + half)
                } else {
                    (l, u)
                }
            } else {
                (best[c] - kick, best[c] + kick)
            };
            let draw = (low + (high - low) * rng.next_f64()).clamp(l, u);
            // After a start the limits stopped: on odd restarts only the joints on a bound
            // are drawn anew, the others keep where that start ended.
            let keep = pinned && restarts % 2 == 1 && l < q[c] && q[c] < u;
            if !keep {
                q[c] = draw;
            }
        }
    }

    /// `goal` with its orientation turned into the one the joints' rotation `R = e₁ ⋯ eₙ`
    /// must reach: the tip's rotation is `R · tip`, so `R* = target · tipᵀ` (once per solve,
    /// not one more quaternion product per forward pass).
    fn joints_goal(&self, goal: &ChainGoal) -> ChainGoal {
        ChainGoal {
            position: goal.position,
            orientation: goal
                .orientation
                .map(|target| target * self.tip_rotation.conjugate()),
        }
    }

    /// One forward pass: `base_from_tip(q) = e₁(q₁) ⋯ eₙ(qₙ) · tip`, the axis lines at `q`
    /// and the residual against `goal`, whose orientation is the one wanted for the joints'
    /// rotation `e₁ ⋯ eₙ` (the tip's times the tip's rotation at `q = 0` inverted: see
    /// [`joints_goal`](Self::joints_goal)).
    ///
    /// With `Rᵢ` the rotation of `e₁ ⋯ eᵢ`, joint `i + 1`'s line is `Rᵢ·ωᵢ₊₁` through
    /// `oᵢ₊₁ = oᵢ + Rᵢ·(pᵢ₊₁ − pᵢ)` (each `eᵢ` fixes the points of its own axis, so the
    /// chain's points move as a rigid polyline): two vectors turned by `Rᵢ` as a matrix and
    /// one quaternion product per joint.
    #[allow(clippy::inline_always)] // compiled inside `solve`'s instruction-set dispatch
    #[inline(always)]
    fn evaluate(&self, goal: &ChainGoal, q: &[f64; N], out: &mut State<N>) {
        // The joints' rotations first: independent of each other, so their polynomials
        // overlap instead of waiting on the chain of products.
        let mut turns = [DQuat::IDENTITY; N];
        for i in 0..N {
            let (sin, cos) = sin_cos(0.5 * q[i]);
            let a = self.axis[i] * sin;
            turns[i] = DQuat::from_xyzw(a.x, a.y, a.z, cos);
        }
        // The first joint's line does not move.
        let mut point = self.step[0];
        out.axis[0] = self.axis[0];
        out.point[0] = point;
        let mut rotation = turns[0];
        for i in 1..N {
            // Two vectors turned by the same rotation: as a matrix (about 20 operations to
            // build, 15 a vector) they cost less than by the quaternion (about 35 each).
            let matrix = DMat3::from_quat(rotation);
            point += matrix * self.step[i];
            out.axis[i] = matrix * self.axis[i];
            out.point[i] = point;
            rotation = product(rotation, turns[i]);
        }
        out.tip = point + rotation * self.tip_step;
        let dp = goal.position - out.tip;
        out.e[..3].copy_from_slice(&dp.to_array());
        out.position_error = dp.length();
        let mut squared = dp.length_squared();
        if let Some(target) = goal.orientation {
            let d = target * rotation.conjugate();
            let (v, angle) = rotation_vector(d);
            out.e[3..].copy_from_slice(&v.to_array());
            out.rotation_error = angle;
            squared += v.length_squared();
        } else {
            out.e[3..].fill(0.0);
            out.rotation_error = 0.0;
        }
        out.cost = 0.5 * squared;
    }
}

/// The rotation vector (axis times angle, the angle in `[0, π]`) of the unit quaternion `d`,
/// and its angle.
#[allow(clippy::inline_always)] // once per forward pass
#[inline(always)]
fn rotation_vector(d: DQuat) -> (DVec3, f64) {
    let d = if d.w < 0.0 { -d } else { d };
    let squared_sin = d.xyz().length_squared();
    if squared_sin * 4096.0 <= d.w * d.w {
        // Within 1/32 rad (most sweeps of a converging start): `atan t / t = 1 − t²/3 + t⁴/5
        // − t⁶/7 + t⁸/9` with `t = |xyz|/w ≤ 1/64` (the first term left out, `t¹⁰/11`, is
        // below 1e-19), so the vector is `xyz · 2(atan t / t)/w`: one division, no arc tangent.
        let inverse_w = 1.0 / d.w;
        let u = squared_sin * inverse_w * inverse_w;
        let ratio = 1.0 + u * (-1.0 / 3.0 + u * (1.0 / 5.0 + u * (-1.0 / 7.0 + u * (1.0 / 9.0))));
        let scale = 2.0 * ratio * inverse_w;
        (d.xyz() * scale, squared_sin.sqrt() * scale)
    } else {
        let s = squared_sin.sqrt();
        let angle = 2.0 * atan2(s, d.w);
        (d.xyz() * (angle / s), angle)
    }
}

/// `a · b` with each component's four products summed in pairs: the products of the forward
/// pass form a chain from joint to joint, and pairs shorten each link's additions from three
/// to two.
#[allow(clippy::inline_always)] // once per joint per forward pass
#[inline(always)]
fn product(a: DQuat, b: DQuat) -> DQuat {
    DQuat::from_xyzw(
        (a.w * b.x + a.x * b.w) + (a.y * b.z - a.z * b.y),
        (a.w * b.y - a.x * b.z) + (a.y * b.w + a.z * b.x),
        (a.w * b.z + a.x * b.y) + (a.z * b.w - a.y * b.x),
        (a.w * b.w - a.x * b.x) - (a.y * b.y + a.z * b.z),
    )
}

/// The chain at one `q`: every joint's axis line, the tip point, the residual and its size.
#[derive(Clone, Copy)]
struct State<const N: usize> {
    axis: [DVec3; N],
    point: [DVec3; N],
    tip: DVec3,
    /// `[Δp; Δr]`, the rotation rows 0 without an orientation goal.
    e: [f64; 6],
    cost: f64,
    position_error: f64,
    rotation_error: f64,
}

impl<const N: usize> State<N> {
    const EMPTY: Self = Self {
        axis: [DVec3::ZERO; N],
        point: [DVec3::ZERO; N],
        tip: DVec3::ZERO,
        e: [0.0; 6],
        cost: 0.0,
        position_error: 0.0,
        rotation_error: 0.0,
    };

    /// `|Δp|/tol_p + |Δr|/tol_r`, the driver's score, with `weights` the reciprocals of the
    /// tolerances ([`score_weights`]: multiplications, not two divisions several times a sweep).
    fn score(&self, weights: (f64, f64)) -> f64 {
        self.position_error * weights.0 + self.rotation_error * weights.1
    }

    fn converged(&self, tolerance: Tolerance) -> bool {
        self.position_error <= tolerance.position && self.rotation_error <= tolerance.rotation
    }
}

/// `(1/tol_p, 1/tol_r)` for [`State::score`].
fn score_weights(tolerance: Tolerance) -> (f64, f64) {
    (
        1.0 / tolerance.position.max(1e-300),
        1.0 / tolerance.rotation.max(1e-300),
    )
}

/// The largest of `values` and `floor` by plain comparisons (`f64::max`'s NaN rules cost
/// several instructions per element on baseline x86-64; a NaN here fails the solve's
/// finiteness checks anyway).
#[allow(clippy::inline_always)] // a few times per sweep
#[inline(always)]
fn larger_of(values: impl Iterator<Item = f64>, floor: f64) -> f64 {
    let mut m = floor;
    for v in values {
        if v > m {
            m = v;
        }
    }
    m
}

/// True when a `q` that is `converged` with `score` beats the best so far: converged first,
/// then the lower score (a converged `q` can score higher than an unconverged one whose
/// position error is just over its tolerance and whose rotation error is far under).
#[allow(clippy::inline_always)] // compiled inside `solve`'s instruction-set dispatch
#[inline(always)]
fn better(converged: bool, score: f64, best_converged: bool, best_score: f64) -> bool {
    if converged == best_converged {
        score < best_score
    } else {
        converged
    }
}

/// Runs `body` with `index` bound to each of `0, 1, …` below `count` (at most
/// [`MAX_JOINTS`]) as a constant: a loop written out, so the loops inside it with `index` in
/// their conditions fold to straight-line code for each chain length (the compiler unrolled
/// the inner loops of the 7-joint `LDLᵀ` but kept the outer one, and its conditions, as a loop).
macro_rules! unrolled {
    ($index:ident < $count:expr, $body:block) => {
        unrolled!(@ $index, $count, $body, 0 1 2 3 4 5 6 7)
    };
    (@ $index:ident, $count:expr, $body:block, $($value:literal)*) => {
        $({
            let $index: usize = $value;
            if $index < $count $body
        })*
    };
}

/// Solves `a · x = x₀` in place by the `LDLᵀ` factorisation (`a` symmetric, its strict lower
/// triangle overwritten by `L` and its diagonal by `D`); false when `a` is not positive
/// definite. Without the square roots of Cholesky's `LLᵀ`: one division per column on the
/// chain from column to column
/// (the square root and division there were a fifth of the solver's time on the panda).
/// Straight-line code for each `N` (see [`unrolled!`]: loops over `0..j` cost a third of the
/// instructions in their counting).
#[allow(clippy::inline_always)] // compiled inside `solve`'s instruction-set dispatch
#[inline(always)]
fn ldlt_solve<const N: usize>(a: &mut [[f64; N]; N], x: &mut [f64; N]) -> bool {
    const { assert!(N <= MAX_JOINTS) };
    let mut inverse_d = [0.0; N];
    unrolled!(j < N, {
        // `L_jk · d_k` for the columns already done.
        let mut scaled = [0.0; N];
        let mut d = a[j][j];
        for k in 0..N {
            if k < j {
                scaled[k] = a[j][k] * a[k][k];
                d -= a[j][k] * scaled[k];
            }
        }
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        let inverse = 1.0 / d;
        a[j][j] = d;
        inverse_d[j] = inverse;
        for i in 0..N {
            if i > j {
                let mut s = a[i][j];
                for k in 0..N {
                    if k < j {
                        s -= a[i][k] * scaled[k];
                    }
                }
                a[i][j] = s * inverse;
            }
        }
    });
    unrolled!(i < N, {
        let mut s = x[i];
        for k in 0..N {
            if k < i {
                s -= a[i][k] * x[k];
            }
        }
        x[i] = s;
    });
    for i in 0..N {
        x[i] *= inverse_d[i];
    }
    unrolled!(r < N, {
        let i = N - 1 - r;
        let mut s = x[i];
        // The unknown found last (`x[i + 1]`) subtracted last: one multiply and subtract
        // after it on the chain from unknown to unknown, not `N − i`.
        for k in (0..N).rev() {
            if k > i {
                s -= a[k][i] * x[k];
            }
        }
        x[i] = s;
    });
    true
}

/// The solver's state across sweeps.
struct Lm<'a, const N: usize> {
    chain: Chain<N>,
    goal: &'a ChainGoal,
    config: &'a LmConfig,
    lambda: f64,
    nu: f64,
    /// The last accepted step held a joint on a bound.
    held: bool,
}

impl<const N: usize> Lm<'_, N> {
    /// `JᵀJ` and `Jᵀe` at `current`: column `c` of `J` is `[ω × (p − o); ω]` (rotation rows 0
    /// without an orientation goal).
    #[allow(clippy::inline_always)] // compiled inside `solve`'s instruction-set dispatch
    #[inline(always)]
    fn linearise(&self, current: &State<N>) -> ([[f64; N]; N], [f64; N]) {
        let rotation_rows = if self.goal.orientation.is_some() {
            1.0
        } else {
            0.0
        };
        // Column `c` of `J` is `[v_c; w_c]`, its six entries side by side so that the sums
        // of products below pair up in vector registers.
        let column: [[f64; 6]; N] = std::array::from_fn(|c| {
            let v = current.axis[c].cross(current.tip - current.point[c]);
            let w = current.axis[c] * rotation_rows;
            [v.x, v.y, v.z, w.x, w.y, w.z]
        });
        let dot = |a: &[f64; 6], b: &[f64; 6]| {
            // Lanes of two: entries 0, 2, 4 and 1, 3, 5 summed apart, then the two lanes.
            (a[0] * b[0] + a[2] * b[2] + a[4] * b[4]) + (a[1] * b[1] + a[3] * b[3] + a[5] * b[5])
        };
        let mut normal = [[0.0; N]; N];
        let mut gradient = [0.0; N];
        unrolled!(a < N, {
            for b in 0..N {
                if b <= a {
                    let s = dot(&column[a], &column[b]);
                    normal[a][b] = s;
                    normal[b][a] = s;
                }
            }
            gradient[a] = dot(&column[a], &current.e);
        });
        (normal, gradient)
    }

    /// One sweep from `q` / `current`: on an accepted step both hold the new pose and the
    /// largest joint change is returned; 0 when no step lowered the cost.
    #[allow(clippy::needless_bitwise_bool)] // the active set's tests: no branches on data
    #[allow(clippy::inline_always)] // compiled inside `solve`'s instruction-set dispatch
    #[inline(always)]
    fn sweep(&mut self, q: &mut [f64; N], current: &mut State<N>, trial: &mut State<N>) -> f64 {
        let (normal, gradient) = self.linearise(current);
        let floor = 1e-9 * larger_of((0..N).map(|a| normal[a][a]), 1e-12);
        let (lower, upper) = (self.chain.lower, self.chain.upper);
        let limit = self.config.iteration.max_step_angle;
        for _ in 0..self.config.max_tries {
            let mut fixed = [false; N];
            let mut prescribed = [0.0; N];
            let mut step = [0.0; N];
            // Solve; hold the joints pushed against their stops and stop those the step
            // carries across a stop at it; solve the others again for what is left (each
            // round fixes at least one more joint).
            for _ in 0..=N {
                if !self.solve_damped(&normal, &gradient, floor, fixed, &prescribed, &mut step) {
                    return 0.0;
                }
                // The tests combined by `&` and `|`, not `&&` and `||`: one path for every
                // joint instead of branches on data the predictor misses (as branches they
                // were an eighth of the panda's sweep time).
                let mut held = false;
                for c in 0..N {
                    let (s, next) = (step[c], q[c] + step[c]);
                    let pushed = ((s > 0.0) & (q[c] >= upper[c] - 1e-12))
                        | ((s < 0.0) & (q[c] <= lower[c] + 1e-12));
                    let crosses = !fixed[c] & !pushed & ((next > upper[c]) | (next < lower[c]));
                    let stop = next.min(upper[c]).max(lower[c]) - q[c];
                    prescribed[c] = if crosses { stop } else { prescribed[c] };
                    held |= !fixed[c] & (pushed | crosses);
                    fixed[c] |= pushed | crosses;
                }
                if !held {
                    break;
                }
            }
            for c in 0..N {
                step[c] = if fixed[c] { prescribed[c] } else { step[c] };
            }
            let largest = larger_of(step.iter().map(|s| s.abs()), 0.0);
            if largest == 0.0 {
                // Every free direction is held on a stop: nothing can improve this start.
                break;
            }
            if largest > limit {
                for s in &mut step {
                    *s *= limit / largest;
                }
            }
            let trial_q: [f64; N] =
                std::array::from_fn(|c| (q[c] + step[c]).clamp(lower[c], upper[c]));
            self.chain.evaluate(self.goal, &trial_q, trial);
            if trial.cost < current.cost {
                // Twice the model's decrease `gᵀh − ½ hᵀ JᵀJ h`; for a solution of the damped
                // system that is `hᵀ(λDh + g)`, otherwise (joints stopped at a bound) in full.
                let mut predicted = 0.0;
                if prescribed.iter().any(|&p| p != 0.0) {
                    for a in 0..N {
                        let mut nh = 0.0;
                        for b in 0..N {
                            nh += normal[a][b] * step[b];
                        }
                        predicted += step[a] * (2.0 * gradient[a] - nh);
                    }
                } else {
                    for a in 0..N {
                        predicted += step[a]
                            * (self.lambda * normal[a][a].max(floor) * step[a] + gradient[a]);
                    }
                }
                let rho = if predicted > 0.0 {
                    (current.cost - trial.cost) / (0.5 * predicted)
                } else {
                    1.0
                };
                self.lambda *= (1.0 - (2.0 * rho - 1.0).powi(3)).max(1.0 / 3.0);
                self.lambda = self.lambda.max(1e-12);
                self.nu = 2.0;
                self.held = fixed.iter().any(|&f| f);
                let moved = larger_of((0..N).map(|c| (trial_q[c] - q[c]).abs()), 0.0);
                *q = trial_q;
                std::mem::swap(current, trial);
                return moved;
            }
            self.lambda = (self.lambda * self.nu).min(1e12);
            self.nu *= 2.0;
        }
        // A (local) minimum for this start: reset the damping for the next.
        self.lambda = self.config.lambda;
        self.nu = 2.0;
        0.0
    }

    /// `(JᵀJ + λD) h = Jᵀe` with the `fixed` columns held at zero.
    #[allow(clippy::inline_always)] // compiled inside `solve`'s instruction-set dispatch
    #[inline(always)]
    fn solve_damped(
        &self,
        normal: &[[f64; N]; N],
        gradient: &[f64; N],
        floor: f64,
        fixed: [bool; N],
        prescribed: &[f64; N],
        step: &mut [f64; N],
    ) -> bool {
        let mut system = *normal;
        for a in 0..N {
            system[a][a] += self.lambda * normal[a][a].max(floor);
        }
        *step = *gradient;
        if fixed.iter().any(|&f| f) {
            // By arithmetic, not branches on which joints are fixed: `prescribed` is 0 for
            // the free ones, and the fixed rows and columns are multiplied out (1 on their
            // diagonal, 0 on their right-hand side).
            let free: [f64; N] = std::array::from_fn(|c| f64::from(u8::from(!fixed[c])));
            for a in 0..N {
                let mut s = step[a];
                for c in 0..N {
                    s -= normal[a][c] * prescribed[c];
                }
                step[a] = s * free[a];
                for b in 0..N {
                    system[a][b] *= free[a] * free[b];
                }
                system[a][a] += 1.0 - free[a];
            }
        }
        ldlt_solve(&mut system, step) && step.iter().all(|s| s.is_finite())
    }
}

/// Why [`solve`] declines its input.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ChainLmError {
    /// The chain has no joint or more than [`MAX_JOINTS`].
    #[error("{joints} joints; this solver takes 1 to {MAX_JOINTS}")]
    Joints {
        /// The chain's joints.
        joints: usize,
    },
    /// `q`'s length is not the chain's number of joints.
    #[error("q has {found} entries; the chain has {expected}")]
    QLength {
        /// Entries given.
        found: usize,
        /// The chain's joints.
        expected: usize,
    },
    /// `q` has a NaN or infinite entry.
    #[error("q is not finite")]
    NonFiniteQ,
    /// The goal has a NaN or infinite component.
    #[error("the goal is not finite")]
    Goal,
    /// The configuration is invalid.
    #[error(transparent)]
    Parameter(#[from] crate::ParameterError),
}

/// Solves for `q` (the start on entry, the best found on exit, always within the limits).
///
/// # Errors
/// [`ChainLmError`] when the chain has more than [`MAX_JOINTS`] joints, `q` has the wrong length or
/// a non-finite entry, the goal is not finite, or `config` is invalid.
pub fn solve(
    screws: &Screws,
    goal: &ChainGoal,
    config: &LmConfig,
    tolerance: Tolerance,
    q: &mut [f64],
) -> Result<ChainLmOutcome, ChainLmError> {
    let n = screws.joints.len();
    if q.len() != n {
        return Err(ChainLmError::QLength {
            found: q.len(),
            expected: n,
        });
    }
    if q.iter().any(|v| !v.is_finite()) {
        return Err(ChainLmError::NonFiniteQ);
    }
    if !goal.position.is_finite() || goal.orientation.is_some_and(|o| !o.is_finite()) {
        return Err(ChainLmError::Goal);
    }
    config.validate()?;
    macro_rules! dispatch {
        ($n:literal) => {
            Ok(Dispatched::<$n> {
                screws,
                goal,
                config,
                tolerance,
                q,
            }
            .run())
        };
    }
    match n {
        1 => dispatch!(1),
        2 => dispatch!(2),
        3 => dispatch!(3),
        4 => dispatch!(4),
        5 => dispatch!(5),
        6 => dispatch!(6),
        7 => dispatch!(7),
        8 => dispatch!(8),
        _ => Err(ChainLmError::Joints { joints: n }),
    }
}

/// [`solve_n`] as a [`pulp::WithSimd`] operation, so that the whole solve (the forward pass,
/// the normal equations, `LDLᵀ`: every function on its path is `#[inline(always)]`) is
/// compiled for AVX2 where the machine has it: its three-operand instructions and sixteen
/// wide registers, not new arithmetic. Rust contracts no multiply and add into one, so the
/// same IEEE operations run in the same order on either path and every machine gets the same
/// bits (the protocol's 10,000 answers hash the same). AVX-512 (`pulp::Arch`'s first choice,
/// what [`Limb7::solve_pose`](crate::analytic::limb7::Limb7::solve_pose) dispatches to) made this solver
/// a quarter slower on the benchmark machine; AVX2 made it 7–8% faster.
struct Dispatched<'a, const N: usize> {
    screws: &'a Screws,
    goal: &'a ChainGoal,
    config: &'a LmConfig,
    tolerance: Tolerance,
    q: &'a mut [f64],
}

impl<const N: usize> Dispatched<'_, N> {
    fn run(self) -> ChainLmOutcome {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        if let Some(simd) = pulp::x86::V3::try_new() {
            return pulp::Simd::vectorize(simd, self);
        }
        solve_n::<N>(self.screws, self.goal, self.config, self.tolerance, self.q)
    }
}

impl<const N: usize> pulp::WithSimd for Dispatched<'_, N> {
    type Output = ChainLmOutcome;

    #[allow(clippy::inline_always)] // the point: compiled inside the dispatched function
    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _: S) -> ChainLmOutcome {
        solve_n::<N>(self.screws, self.goal, self.config, self.tolerance, self.q)
    }
}

/// [`solve`] for a chain of `N` joints (`q.len() == N`).
#[allow(clippy::inline_always)] // compiled inside `solve`'s instruction-set dispatch
#[inline(always)]
fn solve_n<const N: usize>(
    screws: &Screws,
    goal: &ChainGoal,
    config: &LmConfig,
    tolerance: Tolerance,
    q_out: &mut [f64],
) -> ChainLmOutcome {
    let settings = &config.iteration;
    let chain = Chain::<N>::new(screws);
    let goal = &chain.joints_goal(goal);
    let mut q: [f64; N] = std::array::from_fn(|c| q_out[c].clamp(chain.lower[c], chain.upper[c]));
    let (mut current, mut trial) = (State::<N>::EMPTY, State::<N>::EMPTY);
    chain.evaluate(goal, &q, &mut current);
    let mut lm = Lm {
        chain,
        goal,
        config,
        lambda: config.lambda,
        nu: 2.0,
        held: false,
    };
    let mut best = q;
    let weights = score_weights(tolerance);
    let mut best_score = current.score(weights);
    let mut best_converged = current.converged(tolerance);
    let (mut iterations, mut restarts) = (0, 0);
    let mut rng = SplitMix(settings.seed);
    let mut window = (best_score, 0);
    let deadline = settings.deadline();
    while iterations < settings.max_iterations && !current.converged(tolerance) {
        if deadline.is_some_and(Deadline::passed) || !current.score(weights).is_finite() {
            break;
        }
        let before = current.score(weights);
        let moved = lm.sweep(&mut q, &mut current, &mut trial);
        iterations += 1;
        let s = current.score(weights);
        // A sweep that leaves a joint on a stop and the score within 10% is a minimum the
        // limits make (98% of panda's failed starts end so): restart now, not a window later.
        let pinned = restarts < settings.restarts && lm.held && s > PINNED_PROGRESS * before;
        let converged = current.converged(tolerance);
        if better(converged, s, best_converged, best_score) {
            (best, best_score, best_converged) = (q, s, converged);
        }
        let still = moved < settings.min_step;
        let stalled = restarts < settings.restarts
            && iterations - window.1 >= settings.stall_window
            && s > 0.9 * window.0;
        if iterations - window.1 >= settings.stall_window {
            window = (s, iterations);
        }
        let stalled = stalled || pinned;
        if still || stalled {
            if restarts == settings.restarts {
                break;
            }
            restarts += 1;
            lm.chain.restart(&mut q, &best, restarts, pinned, &mut rng);
            lm.chain.evaluate(goal, &q, &mut current);
            lm.lambda = config.lambda;
            lm.nu = 2.0;
            window = (current.score(weights), iterations);
        }
    }
    let converged = current.converged(tolerance);
    if better(
        converged,
        current.score(weights),
        best_converged,
        best_score,
    ) {
        (best, best_converged) = (q, converged);
    }
    // A joint without limits may have wandered whole turns: the turn nearest the start.
    for c in 0..N {
        if lm.chain.lower[c] == f64::NEG_INFINITY && lm.chain.upper[c] == f64::INFINITY {
            let turns = ((best[c] - q_out[c]) / std::f64::consts::TAU).round();
            best[c] -= std::f64::consts::TAU * turns;
        }
    }
    q_out.copy_from_slice(&best);
    ChainLmOutcome {
        iterations,
        restarts,
        converged: best_converged,
        out_of_reach: !best_converged && lm.chain.out_of_reach(goal.position, tolerance),
    }
}

#[cfg(test)]
mod tests {
    use super::{
        ChainGoal, DQuat, DVec3, LmConfig, Screws, Tolerance, rotation_vector, solve, solve_n,
    };
    use crate::robot::Screw;
    use glam::DAffine3;

    #[test]
    fn dispatched_solve_gives_the_bits_of_the_baseline_build() {
        // `solve` runs the solver compiled for AVX2 where the machine has it; `solve_n` called
        // directly here is the baseline (SSE2) build. Same bits expected, limits and restarts
        // included.
        let mut rng = crate::test_rng::Xorshift(0x2545_f491_4f6c_dd1d);
        let mut next = || rng.signed();
        let joints: Vec<Screw> = (0..7)
            .map(|i| Screw {
                axis: DVec3::new(next(), next(), next()).normalize_or(DVec3::Z),
                point: DVec3::new(next() * 0.1, next() * 0.1, 0.15 * f64::from(i)),
            })
            .collect();
        let screws = Screws {
            names: (0..7).map(|i| format!("j{i}")).collect(),
            tip: DAffine3::from_translation(DVec3::new(0.0, 0.05, 1.1)),
            lower: vec![-2.5; 7],
            upper: vec![2.5; 7],
            size: 1.2,
            joints,
        };
        let config = LmConfig::default();
        let tolerance = Tolerance {
            position: 1e-5,
            rotation: 1e-5,
        };
        let mut converged = 0;
        for _ in 0..300 {
            let target: Vec<f64> = (0..7).map(|_| next() * 2.4).collect();
            let frame = screws.forward(&target);
            let (_, rotation, position) = frame.to_scale_rotation_translation();
            let goal = ChainGoal {
                position,
                orientation: Some(rotation.normalize()),
            };
            let (mut a, mut b) = (vec![0.0; 7], vec![0.0; 7]);
            let dispatched = solve(&screws, &goal, &config, tolerance, &mut a).unwrap();
            let baseline = solve_n::<7>(&screws, &goal, &config, tolerance, &mut b);
            assert_eq!(dispatched, baseline);
            assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
            converged += usize::from(dispatched.converged);
        }
        // Not a test of the solver, but the comparison covers its paths: most converge.
        assert!(converged > 200, "{converged} of 300");
    }

    #[test]
    fn rotation_vector_matches_the_arc_tangent_on_both_sides_of_the_series() {
        let axis = DVec3::new(0.3, -0.5, 0.8).normalize();
        let mut worst: f64 = 0.0;
        for i in 0..4000 {
            // 1e-12 rad to π, geometrically: both branches and the switch at 1/32 rad.
            let angle = 1e-12 * (std::f64::consts::PI / 1e-12).powf(f64::from(i) / 3999.0);
            for d in [
                DQuat::from_axis_angle(axis, angle),
                -DQuat::from_axis_angle(axis, angle),
            ] {
                let (v, a) = rotation_vector(d);
                let exact = 2.0 * d.xyz().length().atan2(d.w.abs());
                worst = worst.max((a - exact).abs() / exact);
                worst = worst.max((v - axis * exact).length() / exact);
                assert!((v.length() - a).abs() <= 4e-16 * a, "{angle}");
            }
        }
        assert!(worst < 1e-15, "worst relative error {worst:e}");
    }
}
