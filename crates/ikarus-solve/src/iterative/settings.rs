//! The loop parameters every iterative solver shares ([`IterationSettings`]), read from task
//! files over a solver's own defaults.

use serde::{Deserialize, Serialize};

use crate::ParameterError;
use crate::clock::Deadline;

/// Loop parameters shared by the iterative solvers.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IterationSettings {
    /// Most sweeps over the path. More reach tighter tolerances on hard targets and cost time
    /// on unreachable ones. Default 64 (CCD's own default is 128, Levenberg–Marquardt's 500).
    pub max_iterations: u32,
    /// Largest rotation one joint may make in one step, radians. Small values give smoother,
    /// slower convergence (and less jitter frame to frame); π disables the clamp. Default π.
    pub max_step_angle: f64,
    /// A sweep whose largest joint rotation is below this (radians) ends the solve: nothing
    /// moves any more. Default 1e-12.
    pub min_step: f64,
    /// Restarts allowed when the solve stalls (nothing moves, or the residual shrinks by less
    /// than 10% over `stall_window` sweeps): every path joint of the best pose so far is kicked
    /// at random (a bounded hinge to a uniform draw from its range, other joints by a random
    /// rotation of 0.5 rad at the first restart, doubling up to π) and the sweeps go on within
    /// the same `max_iterations` budget; the best pose over all starts is kept. The first kick
    /// unfolds a chain stuck straight; later ones leave local minima, as TRAC-IK's random
    /// restarts do. Default 8; 0 never jumps.
    pub restarts: u32,
    /// Sweeps over which progress is judged for a restart. Default 16.
    pub stall_window: u32,
    /// Seed of the restart generator (solves are deterministic). Default 0.
    pub seed: u64,
    /// Largest pattern move, for steps that take them (CCD; see
    /// [`IterativeStep::pattern_moves`](crate::driver::IterativeStep::pattern_moves)): after a sweep that lowered the residual score from
    /// `s₀` to `s₁`, every path joint continues its change over that sweep by
    /// `factor = r / (1 − r)` times its size, `r = s₁ / s₀` (a Hooke–Jeeves pattern move whose
    /// length is the rest of a geometric series with that sweep's ratio; hinges along their
    /// angle, other joints along the rotation, each then projected onto its limit; on a path
    /// through the root the root then moves so the base stays put), and the move is kept only
    /// when it lowers the residual further. Coordinate descent converges linearly, slowest
    /// where the chain has to fold or slide along its limits, and its sweeps then repeat
    /// nearly the same change: the move takes the remaining ones at once. This caps `factor`;
    /// small values take fewer sweeps at a time, 0 disables the moves. Default 16.
    pub pattern_factor: f64,
    /// Blend of the solution with the input pose: 1 applies the solution, 0 keeps the input,
    /// values between interpolate each path joint's rotation (then re-apply its limit).
    /// Default 1.
    pub blend: f64,
    /// Wall-time budget of one solve, microseconds: checked after every sweep, the solve
    /// stops (keeping the best pose) once it is spent, even with iterations and restarts left.
    /// Set it with many restarts for TRAC-IK-style "restart until solved or out of time";
    /// solves then depend on the machine's speed. Default `None` (no budget).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_budget_us: Option<f64>,
}

impl Default for IterationSettings {
    fn default() -> Self {
        Self {
            max_iterations: 64,
            max_step_angle: std::f64::consts::PI,
            min_step: 1e-12,
            restarts: 8,
            stall_window: 16,
            seed: 0,
            pattern_factor: 16.0,
            blend: 1.0,
            time_budget_us: None,
        }
    }
}

/// The fields of [`IterationSettings`] a task file gives, each optional, for solvers whose
/// defaults differ from the generic ones: the fields left out keep the solver's own.
#[derive(Clone, Copy, Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct IterationPatch {
    max_iterations: Option<u32>,
    max_step_angle: Option<f64>,
    min_step: Option<f64>,
    restarts: Option<u32>,
    stall_window: Option<u32>,
    seed: Option<u64>,
    pattern_factor: Option<f64>,
    blend: Option<f64>,
    time_budget_us: Option<f64>,
}

impl IterationSettings {
    /// Reads the settings a task file gives on top of `base` (a solver's own defaults), so
    /// `"iteration": {"max_iterations": 100}` changes only the budget. For a config field:
    /// `#[serde(deserialize_with = "...")]` with a function passing the solver's defaults.
    ///
    /// # Errors
    /// Unknown fields or wrong types, as the derived reader reports them.
    pub fn deserialize_onto<'de, D: serde::Deserializer<'de>>(
        deserializer: D,
        base: Self,
    ) -> Result<Self, D::Error> {
        let patch = IterationPatch::deserialize(deserializer)?;
        Ok(Self {
            max_iterations: patch.max_iterations.unwrap_or(base.max_iterations),
            max_step_angle: patch.max_step_angle.unwrap_or(base.max_step_angle),
            min_step: patch.min_step.unwrap_or(base.min_step),
            restarts: patch.restarts.unwrap_or(base.restarts),
            stall_window: patch.stall_window.unwrap_or(base.stall_window),
            seed: patch.seed.unwrap_or(base.seed),
            pattern_factor: patch.pattern_factor.unwrap_or(base.pattern_factor),
            blend: patch.blend.unwrap_or(base.blend),
            time_budget_us: patch.time_budget_us.or(base.time_budget_us),
        })
    }

    /// When a solve starting now must stop, from [`IterationSettings::time_budget_us`].
    pub(crate) fn deadline(&self) -> Option<Deadline> {
        Deadline::after(self.time_budget_us)
    }

    /// Checks the values are usable.
    ///
    /// # Errors
    /// [`ParameterError`] naming the bad parameter.
    pub fn validate(&self) -> Result<(), ParameterError> {
        if !(self.max_step_angle.is_finite() && self.max_step_angle > 0.0) {
            return Err(ParameterError::OutOfRange {
                name: "max_step_angle",
                value: self.max_step_angle,
                range: "positive and finite",
            });
        }
        if !(self.min_step.is_finite() && self.min_step >= 0.0) {
            return Err(ParameterError::OutOfRange {
                name: "min_step",
                value: self.min_step,
                range: "finite and >= 0",
            });
        }
        if !(self.pattern_factor.is_finite() && self.pattern_factor >= 0.0) {
            return Err(ParameterError::OutOfRange {
                name: "pattern_factor",
                value: self.pattern_factor,
                range: "finite and >= 0",
            });
        }
        if self.stall_window == 0 {
            return Err(ParameterError::Zero {
                name: "stall_window",
            });
        }
        if let Some(budget) = self.time_budget_us.filter(|b| !(b.is_finite() && *b > 0.0)) {
            return Err(ParameterError::OutOfRange {
                name: "time_budget_us",
                value: budget,
                range: "positive and finite",
            });
        }
        #[cfg(not(feature = "clock"))]
        if self.time_budget_us.is_some() {
            return Err(ParameterError::NeedsFeature {
                name: "time_budget_us",
                feature: "clock",
            });
        }
        if !(0.0..=1.0).contains(&self.blend) {
            return Err(ParameterError::OutOfRange {
                name: "blend",
                value: self.blend,
                range: "in [0, 1]",
            });
        }
        Ok(())
    }
}
