//! Levenberg–Marquardt on a revolute chain's joint vector `q` ([`Screws`]): the same method,
//! parameters and restarts as [`lm`](crate::lm), without the skeleton in the loop.
//!
//! The general solver works on a [`LocalPose`](ikarus_core::LocalPose): every trial writes
//! quaternions into the pose, runs the skeleton's forward kinematics, and reads hinge angles
//! back through arc tangents; on the TRAC-IK robots that bookkeeping is most of a sweep (see
//! BENCHMARKS.md, "The TRAC-IK protocol on real robots"). Here the state is `q` itself and
//! one pass over the product of exponentials gives the tip frame **and** every joint's
//! current axis line, so the Jacobian of an accepted trial comes with its residual: one
//! forward pass per tried step, nothing else per joint.
//!
//! ## The method (as [`lm`](crate::lm))
//!
//! Residual `e = [p* − p; log(R* Rᵀ)]` in the base frame (the rotation rows only with an
//! orientation goal), Jacobian column `i = [ωᵢ × (p − oᵢ); ωᵢ]` with `ωᵢ`, `oᵢ` joint `i`'s
//! axis and a point on it at the current `q`. The step solves `(JᵀJ + λ·D) h = Jᵀe`, `D` the
//! floored diagonal of `JᵀJ`; an accepted step (lower `½|e|²`) shrinks `λ` by Nielsen's rule,
//! a rejected one grows it (×2, ×4, …, at most [`LmConfig::max_tries`] tries). Joints on a
//! bound whose step points outward are held and the system solved again; other steps across
//! a bound stop at it; no joint moves more than [`IterationSettings::max_step_angle`] per
//! step (the whole step shrinks to fit).
//!
//! **Restarts** as the shared driver's: when a sweep finds no lower cost or the score
//! (`|Δp|/tol_p + |Δr|/tol_r`) shrinks by less than 10% over
//! [`IterationSettings::stall_window`] sweeps, the best `q` so far is kicked (a bounded joint
//! to a uniform draw from its range, an unbounded one by up to 0.5, 1, 2, then π rad either
//! way) and the sweeps go on within [`IterationSettings::max_iterations`]; the best `q` over
//! all starts is returned. [`IterationSettings::time_budget_us`] stops the solve when spent.
//! [`IterationSettings::blend`] and `pattern_factor` are pose-space notions the caller
//! handles (`batch` uses the general solver when `blend < 1`).
//!
//! Chains of up to [`MAX_JOINTS`] joints; everything lives on the stack (no workspace, no
//! allocation).
//!
//! [`IterationSettings::stall_window`]: crate::IterationSettings::stall_window
//! [`IterationSettings::max_iterations`]: crate::IterationSettings::max_iterations
//! [`IterationSettings::max_step_angle`]: crate::IterationSettings::max_step_angle
//! [`IterationSettings::time_budget_us`]: crate::IterationSettings::time_budget_us
//! [`IterationSettings::blend`]: crate::IterationSettings::blend

// Small dense matrices indexed as in the formulas.
#![allow(clippy::needless_range_loop)]

use glam::{DQuat, DVec3};

use super::Screws;
use crate::Tolerance;
use crate::lm::LmConfig;

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
}

/// The chain at one `q`: tip frame, every joint's axis line, residual and its size.
#[derive(Clone, Copy)]
struct State {
    axis: [DVec3; MAX_JOINTS],
    point: [DVec3; MAX_JOINTS],
    tip: DVec3,
    e: [f64; 6],
    cost: f64,
    position_error: f64,
    rotation_error: f64,
}

impl State {
    const EMPTY: Self = Self {
        axis: [DVec3::ZERO; MAX_JOINTS],
        point: [DVec3::ZERO; MAX_JOINTS],
        tip: DVec3::ZERO,
        e: [0.0; 6],
        cost: 0.0,
        position_error: 0.0,
        rotation_error: 0.0,
    };

    /// `|Δp|/tol_p + |Δr|/tol_r`: the driver's score.
    fn score(&self, tolerance: Tolerance) -> f64 {
        self.position_error / tolerance.position.max(1e-300)
            + self.rotation_error / tolerance.rotation.max(1e-300)
    }

    fn converged(&self, tolerance: Tolerance) -> bool {
        self.position_error <= tolerance.position && self.rotation_error <= tolerance.rotation
    }
}

/// One forward pass: `base_from_tip(q) = e₁(q₁) ⋯ eₙ(qₙ) · tip` and the axis lines.
fn evaluate(screws: &Screws, tip_rotation: DQuat, goal: &ChainGoal, q: &[f64], out: &mut State) {
    let mut rotation = DQuat::IDENTITY;
    let mut translation = DVec3::ZERO;
    for (i, (joint, &angle)) in screws.joints.iter().zip(q).enumerate() {
        // The joint's line at the current q (the joints before it moved): G · (ω, o).
        let point = rotation * joint.point + translation;
        out.axis[i] = rotation * joint.axis;
        out.point[i] = point;
        // G · e(θ): x ↦ R·(r·(x − o₀) + o₀) + t = (R·r)·x + (o − R·r·o₀).
        rotation *= DQuat::from_axis_angle(joint.axis, angle);
        translation = point - rotation * joint.point;
    }
    out.tip = rotation * screws.tip.translation + translation;
    let dp = goal.position - out.tip;
    out.e[..3].copy_from_slice(&dp.to_array());
    out.position_error = dp.length();
    let mut squared = dp.length_squared();
    if let Some(target) = goal.orientation {
        let d = target * (rotation * tip_rotation).conjugate();
        let d = if d.w < 0.0 { -d } else { d };
        let s = d.xyz().length();
        let angle = 2.0 * s.atan2(d.w);
        let v = if s > 1e-300 {
            d.xyz() * (angle / s)
        } else {
            d.xyz() * 2.0
        };
        out.e[3..].copy_from_slice(&v.to_array());
        out.rotation_error = angle;
        squared += v.length_squared();
    } else {
        out.rotation_error = 0.0;
    }
    out.cost = 0.5 * squared;
}

/// splitmix64: the restarts' deterministic draws.
struct SplitMix(u64);

impl SplitMix {
    fn next_f64(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Cholesky solve of the `n × n` system in place (`a` row-major, lower triangle used);
/// false when not positive definite.
fn cholesky_solve(
    a: &mut [[f64; MAX_JOINTS]; MAX_JOINTS],
    x: &mut [f64; MAX_JOINTS],
    n: usize,
) -> bool {
    for j in 0..n {
        let mut d = a[j][j];
        for k in 0..j {
            d -= a[j][k] * a[j][k];
        }
        if d.is_nan() || d <= 0.0 {
            return false;
        }
        // The diagonal holds the reciprocal of the factor's diagonal: one division per column.
        let inverse = 1.0 / d.sqrt();
        a[j][j] = inverse;
        for i in j + 1..n {
            let mut s = a[i][j];
            for k in 0..j {
                s -= a[i][k] * a[j][k];
            }
            a[i][j] = s * inverse;
        }
    }
    for i in 0..n {
        let mut s = x[i];
        for k in 0..i {
            s -= a[i][k] * x[k];
        }
        x[i] = s * a[i][i];
    }
    for i in (0..n).rev() {
        let mut s = x[i];
        for k in i + 1..n {
            s -= a[k][i] * x[k];
        }
        x[i] = s * a[i][i];
    }
    true
}

/// The solver's state across sweeps.
struct Lm<'a> {
    screws: &'a Screws,
    /// The rotation of `screws.tip`.
    tip_rotation: DQuat,
    goal: &'a ChainGoal,
    config: &'a LmConfig,
    n: usize,
    rows: usize,
    lambda: f64,
    nu: f64,
}

impl Lm<'_> {
    /// One sweep from `q` / `current`: on an accepted step both hold the new pose and the
    /// largest joint change is returned; 0 when no step lowered the cost.
    fn sweep(&mut self, q: &mut [f64], current: &mut State, trial: &mut State) -> f64 {
        let n = self.n;
        let (normal, gradient) = self.linearise(current);
        let floor = 1e-9 * (0..n).map(|a| normal[a][a]).fold(1e-12, f64::max);
        let (lower, upper) = (&self.screws.lower, &self.screws.upper);
        let limit = self.config.iteration.max_step_angle;
        let mut fixed = [false; MAX_JOINTS];
        let mut trial_q = [0.0; MAX_JOINTS];
        for _ in 0..self.config.max_tries {
            fixed[..n].fill(false);
            let mut step = [0.0; MAX_JOINTS];
            // Solve, hold the joints pushed against their stops, solve again.
            for _ in 0..2 {
                if !self.solve_damped(&normal, &gradient, floor, fixed, &mut step) {
                    return 0.0;
                }
                let mut held = false;
                for c in 0..n {
                    let s = step[c];
                    if fixed[c] {
                        continue;
                    }
                    if (s > 0.0 && q[c] >= upper[c] - 1e-12)
                        || (s < 0.0 && q[c] <= lower[c] + 1e-12)
                    {
                        fixed[c] = true;
                        held = true;
                    }
                }
                if !held {
                    break;
                }
            }
            for c in (0..n).filter(|&c| fixed[c]) {
                step[c] = 0.0;
            }
            let largest = step[..n].iter().fold(0.0_f64, |m, s| m.max(s.abs()));
            if largest == 0.0 {
                // Every free direction is held on a stop: nothing can improve this start.
                break;
            }
            if largest > limit {
                step[..n].iter_mut().for_each(|s| *s *= limit / largest);
            }
            for c in 0..n {
                trial_q[c] = (q[c] + step[c]).clamp(lower[c], upper[c]);
            }
            evaluate(
                self.screws,
                self.tip_rotation,
                self.goal,
                &trial_q[..n],
                trial,
            );
            if trial.cost < current.cost {
                let predicted: f64 = 0.5
                    * (0..n)
                        .map(|a| {
                            step[a]
                                * (self.lambda * normal[a][a].max(floor) * step[a] + gradient[a])
                        })
                        .sum::<f64>();
                let rho = if predicted > 0.0 {
                    (current.cost - trial.cost) / predicted
                } else {
                    1.0
                };
                self.lambda =
                    (self.lambda * (1.0 - (2.0 * rho - 1.0).powi(3)).max(1.0 / 3.0)).max(1e-12);
                self.nu = 2.0;
                let moved = (0..n).fold(0.0_f64, |m, c| m.max((trial_q[c] - q[c]).abs()));
                q[..n].copy_from_slice(&trial_q[..n]);
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

    /// `JᵀJ` and `Jᵀe` at `current`.
    fn linearise(&self, current: &State) -> ([[f64; MAX_JOINTS]; MAX_JOINTS], [f64; MAX_JOINTS]) {
        let (n, rows) = (self.n, self.rows);
        // Column c: [ω × (p − o); ω], stored row-major.
        let mut jac = [[0.0; MAX_JOINTS]; 6];
        for c in 0..n {
            let w = current.axis[c];
            let v = w.cross(current.tip - current.point[c]);
            for (r, x) in v.to_array().into_iter().chain(w.to_array()).enumerate() {
                jac[r][c] = x;
            }
        }
        let mut normal = [[0.0; MAX_JOINTS]; MAX_JOINTS];
        let mut gradient = [0.0; MAX_JOINTS];
        for a in 0..n {
            for b in 0..=a {
                let s: f64 = jac[..rows].iter().map(|row| row[a] * row[b]).sum();
                normal[a][b] = s;
                normal[b][a] = s;
            }
            gradient[a] = (0..rows).map(|r| jac[r][a] * current.e[r]).sum();
        }
        (normal, gradient)
    }

    /// `(JᵀJ + λD) h = Jᵀe` with the `fixed` columns held at zero.
    fn solve_damped(
        &self,
        normal: &[[f64; MAX_JOINTS]; MAX_JOINTS],
        gradient: &[f64; MAX_JOINTS],
        floor: f64,
        fixed: [bool; MAX_JOINTS],
        step: &mut [f64; MAX_JOINTS],
    ) -> bool {
        let n = self.n;
        let mut system = *normal;
        for a in 0..n {
            system[a][a] += self.lambda * normal[a][a].max(floor);
            step[a] = gradient[a];
            if fixed[a] {
                for b in 0..n {
                    system[a][b] = 0.0;
                    system[b][a] = 0.0;
                }
                system[a][a] = 1.0;
                step[a] = 0.0;
            }
        }
        cholesky_solve(&mut system, step, n) && step[..n].iter().all(|s| s.is_finite())
    }
}

/// Solves for `q` (the start on entry, the best found on exit, always within the limits).
///
/// # Errors
/// A sentence when the chain has more than [`MAX_JOINTS`] joints, `q` has the wrong length or
/// a non-finite entry, the goal is not finite, or `config` is invalid.
pub fn solve(
    screws: &Screws,
    goal: &ChainGoal,
    config: &LmConfig,
    tolerance: Tolerance,
    q: &mut [f64],
) -> Result<ChainLmOutcome, String> {
    let n = screws.joints.len();
    if n > MAX_JOINTS {
        return Err(format!("{n} joints; at most {MAX_JOINTS}"));
    }
    if q.len() != n {
        return Err(format!("q has {} entries; the chain has {n}", q.len()));
    }
    if q.iter().any(|v| !v.is_finite()) {
        return Err("q is not finite".into());
    }
    if !goal.position.is_finite() || goal.orientation.is_some_and(|o| !o.is_finite()) {
        return Err("the goal is not finite".into());
    }
    config.validate()?;
    let settings = &config.iteration;
    for (v, (&l, &u)) in q.iter_mut().zip(screws.lower.iter().zip(&screws.upper)) {
        *v = v.clamp(l, u);
    }
    let mut lm = Lm {
        screws,
        tip_rotation: DQuat::from_mat3(&screws.tip.matrix3).normalize(),
        goal,
        config,
        n,
        rows: if goal.orientation.is_some() { 6 } else { 3 },
        lambda: config.lambda,
        nu: 2.0,
    };
    let (mut current, mut trial) = (State::EMPTY, State::EMPTY);
    evaluate(screws, lm.tip_rotation, goal, q, &mut current);
    let mut best = [0.0; MAX_JOINTS];
    best[..n].copy_from_slice(q);
    let mut best_score = current.score(tolerance);
    let mut best_converged = current.converged(tolerance);
    let (mut iterations, mut restarts) = (0, 0);
    let mut rng = SplitMix(settings.seed);
    let mut window = (best_score, 0);
    let deadline = settings
        .time_budget_us
        .map(|us| std::time::Instant::now() + std::time::Duration::from_secs_f64(us * 1e-6));
    while iterations < settings.max_iterations && !current.converged(tolerance) && n > 0 {
        let s = current.score(tolerance);
        if deadline.is_some_and(|d| std::time::Instant::now() >= d) || !s.is_finite() {
            break;
        }
        let moved = lm.sweep(q, &mut current, &mut trial);
        iterations += 1;
        let s = current.score(tolerance);
        if s < best_score {
            best_score = s;
            best[..n].copy_from_slice(q);
            best_converged = current.converged(tolerance);
        }
        let still = moved < settings.min_step;
        let stalled = restarts < settings.restarts
            && iterations - window.1 >= settings.stall_window
            && s > 0.9 * window.0;
        if iterations - window.1 >= settings.stall_window {
            window = (s, iterations);
        }
        if still || stalled {
            if restarts == settings.restarts {
                break;
            }
            restarts += 1;
            let kick = (0.25 * f64::from(1u32 << restarts.min(4))).min(std::f64::consts::PI);
            for (c, v) in q.iter_mut().enumerate() {
                let (l, u) = (screws.lower[c], screws.upper[c]);
                let (low, high) = if l.is_finite() && u.is_finite() {
                    (l, u)
                } else {
                    (best[c] - kick, best[c] + kick)
                };
                *v = (low + (high - low) * rng.next_f64()).clamp(l, u);
            }
            evaluate(screws, lm.tip_rotation, goal, q, &mut current);
            lm.lambda = config.lambda;
            lm.nu = 2.0;
            window = (current.score(tolerance), iterations);
        }
    }
    if current.score(tolerance) < best_score {
        best_converged = current.converged(tolerance);
        best[..n].copy_from_slice(q);
    }
    q.copy_from_slice(&best[..n]);
    Ok(ChainLmOutcome {
        iterations,
        restarts,
        converged: best_converged,
    })
}
