//! A tracker solver kept with the skeleton and humanoid map it borrows, so that it can live
//! in a component (which must be `'static`). The one place of this crate with `unsafe`, on
//! the pattern of the C API's handles: the borrowed values sit behind `Arc`s that the struct
//! owns, never replaces and drops after the solver.
#![allow(unsafe_code)]

use std::sync::Arc;

use ikarus_anim::ground::Ground;
use ikarus_anim::retarget::Character;
use ikarus_anim::track::{FrameReport, TrackError, TrackSolver};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::trackers::TrackerPose;
use ikarus_core::{LocalPose, Skeleton};

/// A [`TrackSolver`] with the skeleton and map it borrows.
pub(crate) struct OwnedTracker {
    /// Declared first, so dropped first, while the skeleton and map it borrows live. Never
    /// handed out (a `&mut` to it could swap it with another tracker's).
    solver: TrackSolver<'static>,
    /// Owns the map `solver` borrows; never replaced while `solver` lives.
    _map: Arc<HumanoidMap>,
    /// Owns the skeleton `solver` borrows; never replaced while `solver` lives.
    skeleton: Arc<Skeleton>,
}

impl std::fmt::Debug for OwnedTracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnedTracker")
            .field("joints", &self.skeleton.len())
            .finish_non_exhaustive()
    }
}

impl OwnedTracker {
    /// The solver `build` makes from the character of `skeleton` and `map`. `build` is given
    /// the character for a lifetime it cannot name, so it can keep the references only in
    /// the solver it returns.
    pub(crate) fn new(
        skeleton: Arc<Skeleton>,
        map: Arc<HumanoidMap>,
        build: impl for<'a> FnOnce(Character<'a>) -> Result<TrackSolver<'a>, TrackError>,
    ) -> Result<Self, TrackError> {
        // SAFETY: the skeleton and the map live on the heap behind `skeleton` and `map`, which
        // the returned value keeps (and never replaces) until after `solver` is dropped (field
        // order); neither is ever mutated (no `&mut` to them is made: the `Arc`s are shared
        // and this struct hands out none). `build` cannot keep the references elsewhere: its
        // lifetime is generic. So the references stay valid as long as `solver` exists.
        let character = unsafe {
            Character {
                skeleton: &*Arc::as_ptr(&skeleton),
                map: &*Arc::as_ptr(&map),
            }
        };
        Ok(Self {
            solver: build(character)?,
            _map: map,
            skeleton,
        })
    }

    /// The avatar's reference pose (where the first frame starts).
    pub(crate) fn start_pose(&self) -> &LocalPose {
        self.solver.start_pose()
    }

    /// [`TrackSolver::solve_frame`].
    pub(crate) fn solve_frame(
        &mut self,
        frame: &[(HumanoidBone, TrackerPose)],
        ground: &dyn Ground,
        pose: &mut LocalPose,
    ) -> FrameReport {
        self.solver.solve_frame(frame, ground, pose)
    }
}
