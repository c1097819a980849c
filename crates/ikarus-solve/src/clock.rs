//! The solvers' one clock: the deadline of a time budget
//! ([`IterationSettings::time_budget_us`](crate::IterationSettings::time_budget_us)). It reads
//! `std::time::Instant` with the `clock` feature (default); without it (a wasm32 build, where
//! `Instant::now` panics) there is no deadline, and budgets are refused by
//! [`IterationSettings::validate`](crate::IterationSettings::validate) instead of ignored.

#![allow(clippy::disallowed_methods)] // the crate's clock, behind the `clock` feature

/// When a solve that started at [`Deadline::after`] must stop.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Deadline {
    #[cfg(feature = "clock")]
    at: std::time::Instant,
}

impl Deadline {
    /// The deadline `budget_us` microseconds from now; `None` without a budget (and always
    /// without the `clock` feature, where a budget does not pass validation).
    pub(crate) fn after(budget_us: Option<f64>) -> Option<Self> {
        #[cfg(feature = "clock")]
        {
            budget_us.map(|us| Self {
                at: std::time::Instant::now() + std::time::Duration::from_secs_f64(us * 1e-6),
            })
        }
        #[cfg(not(feature = "clock"))]
        {
            let _ = budget_us;
            None
        }
    }

    /// Whether the deadline has passed.
    #[cfg_attr(not(feature = "clock"), allow(clippy::unused_self))]
    pub(crate) fn passed(self) -> bool {
        #[cfg(feature = "clock")]
        {
            std::time::Instant::now() >= self.at
        }
        #[cfg(not(feature = "clock"))]
        {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Deadline;
    use crate::IterationSettings;

    #[test]
    fn a_time_budget_runs_on_the_clock_or_is_refused_without_it() {
        let settings = IterationSettings {
            time_budget_us: Some(50.0),
            ..IterationSettings::default()
        };
        assert!(Deadline::after(None).is_none());
        #[cfg(feature = "clock")]
        {
            assert_eq!(settings.validate(), Ok(()));
            assert!(Deadline::after(Some(0.0)).is_some_and(Deadline::passed));
            assert!(!Deadline::after(Some(1e9)).is_some_and(Deadline::passed));
        }
        #[cfg(not(feature = "clock"))]
        {
            assert_eq!(
                settings.validate(),
                Err(crate::ParameterError::NeedsFeature {
                    name: "time_budget_us",
                    feature: "clock",
                })
            );
            assert!(Deadline::after(Some(0.0)).is_none());
        }
    }
}
