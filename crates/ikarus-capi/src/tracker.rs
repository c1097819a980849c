//! VR trackers: an avatar posed frame by frame from a headset and controllers (3-point), a
//! hip tracker (4) and foot trackers (6), on the full-body solver with stepping legs
//! ([`ikarus_anim::track`]), samples in and out as flat `double` arrays.

use std::sync::Arc;

use ikarus_anim::ground::Plane;
use ikarus_anim::retarget::Character;
use ikarus_anim::track::{Points, TrackConfig, TrackSolver, calibrate};
use ikarus_core::Skeleton;
use ikarus_core::glam::{DQuat, DVec3};
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::trackers::TrackerPose;

use crate::error::{
    Failure, IkarusError, IkarusStatus, free_handle, guard, guard_value, in_slice, mut_arg,
    ref_arg, same_joints,
};
use crate::pose::{IkarusPose, into_handle};
use crate::prepared::IkarusReport;
use crate::skeleton::IkarusSkeleton;

/// Doubles per tracker sample: position `x, y, z` then rotation `x, y, z, w`, in the
/// trackers' world (+Y up, metres, right-handed).
pub const IKARUS_TRACKER_STRIDE: usize = 7;

/// An avatar driven by trackers: the calibration, the held samples, the legs' steps and the
/// smoothed heading between frames. Created by `ikarus_tracker_new`, freed by
/// `ikarus_tracker_free`; it keeps its skeleton alive. One thread at a time.
pub struct IkarusTracker {
    /// Declared first, so dropped first, while the skeleton and map it borrows live.
    solver: TrackSolver<'static>,
    ground: Plane,
    points: Points,
    /// Scratch: this frame's samples by bone.
    frame: Vec<(HumanoidBone, TrackerPose)>,
    /// Owns the humanoid map `solver` borrows; never replaced while `solver` lives.
    _map: Arc<HumanoidMap>,
    /// Owns the skeleton `solver` borrows; never replaced while `solver` lives.
    skeleton: Arc<Skeleton>,
}

/// The samples of `values` (one per bone of `points`); a sample with a non-finite value is
/// lost and left out.
fn samples(points: Points, values: &[f64], frame: &mut Vec<(HumanoidBone, TrackerPose)>) {
    frame.clear();
    for (&bone, v) in points
        .bones()
        .iter()
        .zip(values.chunks_exact(IKARUS_TRACKER_STRIDE))
    {
        if v.iter().all(|x| x.is_finite()) {
            let pose = TrackerPose {
                position: DVec3::new(v[0], v[1], v[2]),
                rotation: DQuat::from_xyzw(v[3], v[4], v[5], v[6]),
            };
            frame.push((bone, pose));
        }
    }
}

/// A sample buffer argument: `IKARUS_TRACKER_STRIDE` doubles per tracker of `points`.
///
/// # Safety
/// `ptr` is NULL or points to `len` readable doubles that stay valid for `'a`.
unsafe fn sample_arg<'a>(
    ptr: *const f64,
    len: usize,
    points: Points,
    argument: &str,
) -> Result<&'a [f64], Failure> {
    let trackers = points.bones().len();
    let (needed, detail) = (
        IKARUS_TRACKER_STRIDE * trackers,
        format!(" ({trackers} trackers)"),
    );
    // SAFETY: NULL or `len` readable doubles that stay valid for `'a`, by this function's
    // contract.
    unsafe { in_slice(ptr, len, needed, argument, &detail) }
}

/// Calibrates and creates a tracker solver for the humanoid `skel` (its bones recognised by
/// name: VRM, Mixamo, Biovision, MMD, … as `ikarus track` does).
///
/// `points` is 3 (head, left hand, right hand), 4 (and hips) or 6 (and left foot, right
/// foot); every array of samples holds one sample per tracker in that order,
/// `IKARUS_TRACKER_STRIDE` (7) doubles each: the device's world position `x, y, z` and
/// rotation `x, y, z, w` (+Y up, metres, right-handed; a sample with a NaN is lost).
/// `calibration` is one frame of the user standing in the avatar's reference pose: it gives
/// the scale (head height, arm span) and each device's offset to its bone. `floor` is the
/// floor's height in the trackers' world (0 in VR); `fps` the frame rate of the samples.
///
/// Returns a new tracker owned by the caller (free it with `ikarus_tracker_free`), or NULL
/// with `*err` set: `IKARUS_ERR_INVALID` when the skeleton lacks a tracked bone or a leg,
/// the calibration frame lacks a good head or hand sample, or a number is out of range.
///
/// # Safety
/// `skel` is NULL or a live skeleton; `calibration` NULL or `calibration_len` readable
/// doubles; `err` NULL or writable storage for one `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_tracker_new(
    skel: *const IkarusSkeleton,
    points: u32,
    fps: f64,
    calibration: *const f64,
    calibration_len: usize,
    floor: f64,
    err: *mut *mut IkarusError,
) -> *mut IkarusTracker {
    guard_value(err, || {
        // SAFETY: NULL or live, by this function's contract.
        let skel = unsafe { ref_arg(skel, "skel") }?;
        let points = Points::from_count(points as usize)
            .ok_or_else(|| Failure::invalid(format!("points {points}: expected 3, 4 or 6")))?;
        // SAFETY: NULL or `calibration_len` readable doubles, by this function's contract.
        let values = unsafe { sample_arg(calibration, calibration_len, points, "calibration") }?;
        let skeleton = Arc::clone(&skel.skeleton);
        let map = Arc::new(HumanoidMap::recognise(&skeleton));
        // SAFETY: the skeleton and map live on the heap behind `skeleton` and `map`, which
        // the returned handle keeps (and never replaces) until after `solver` is dropped, and
        // neither is ever mutated; so the references stay valid as long as `solver` exists.
        let character = unsafe {
            Character {
                skeleton: &*Arc::as_ptr(&skeleton),
                map: &*Arc::as_ptr(&map),
            }
        };
        let mut frame = Vec::new();
        samples(points, values, &mut frame);
        let invalid = |e: ikarus_anim::track::TrackError| Failure::invalid(e.to_string());
        let calibration = calibrate(character, &frame, &[], floor).map_err(invalid)?;
        let config = TrackConfig {
            points: Some(points),
            floor,
            ..TrackConfig::default()
        };
        let ground = Plane {
            point: DVec3::new(0.0, calibration.floor, 0.0),
            normal: DVec3::Y,
        };
        let solver = TrackSolver::new(character, points.bones(), calibration, &config, fps)
            .map_err(invalid)?;
        Ok(Box::into_raw(Box::new(IkarusTracker {
            solver,
            ground,
            points,
            frame,
            _map: map,
            skeleton,
        })))
    })
    .unwrap_or(std::ptr::null_mut())
}

/// Frees a tracker. NULL is ignored.
///
/// # Safety
/// `tracker` is NULL or a tracker returned by this library, not yet freed; it is invalid
/// after this call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_tracker_free(tracker: *mut IkarusTracker) {
    // SAFETY: NULL or made by `ikarus_tracker_new` and not yet freed, by this function's
    // contract.
    unsafe { free_handle(tracker) };
}

/// A new pose holding the avatar's reference pose, where the first frame's solve starts;
/// owned by the caller (free it with `ikarus_pose_free`). NULL for NULL.
///
/// # Safety
/// `tracker` is NULL or a live tracker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_tracker_start_pose(
    tracker: *const IkarusTracker,
) -> *mut IkarusPose {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { tracker.as_ref() }.map_or(std::ptr::null_mut(), |t| {
        into_handle(t.solver.start_pose().clone())
    })
}

/// Avatar units per tracker unit, as calibrated (the avatar's head height over the user's);
/// 0 for NULL.
///
/// # Safety
/// `tracker` is NULL or a live tracker.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_tracker_scale(tracker: *const IkarusTracker) -> f64 {
    // SAFETY: NULL or live, by this function's contract.
    unsafe { tracker.as_ref() }.map_or(0.0, |t| t.solver.calibration().scale)
}

/// Forgets every tracker's last good sample: the next frame's samples are taken however far
/// they jumped. Call it after the calibration pose and after a cut. NULL is ignored.
///
/// # Safety
/// `tracker` is NULL or a live tracker not used elsewhere during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_tracker_forget_samples(tracker: *mut IkarusTracker) {
    // SAFETY: NULL or live and exclusive, by this function's contract.
    if let Some(t) = unsafe { tracker.as_mut() } {
        t.solver.forget_samples();
    }
}

/// Solves one frame: `samples` (the layout of `ikarus_tracker_new`'s calibration; a lost or
/// glitching sample is held at its last good one) on `pose` (the previous frame's result, or
/// `ikarus_tracker_start_pose`'s, on entry; this frame's on exit). `report`, when not NULL,
/// receives the body solve's report (residuals against the goals the trackers gave);
/// `*held`, when `held` is not NULL, the number of trackers held this frame.
///
/// # Safety
/// `tracker` and `pose` are NULL or live handles not used elsewhere during the call;
/// `samples` NULL or `samples_len` readable doubles; `report` NULL or a writable report;
/// `held` NULL or a writable `size_t`; `err` NULL or writable storage for one
/// `IkarusError*`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn ikarus_tracker_solve_frame(
    tracker: *mut IkarusTracker,
    samples_xyz_xyzw: *const f64,
    samples_len: usize,
    pose: *mut IkarusPose,
    report: *mut IkarusReport,
    held: *mut usize,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let tracker = unsafe { mut_arg(tracker, "tracker") }?;
        // SAFETY: NULL or live and exclusive, by this function's contract.
        let pose = unsafe { mut_arg(pose, "pose") }?;
        same_joints(
            ("the pose", pose.pose.len()),
            ("the tracker's skeleton", tracker.skeleton.len()),
            "start from ikarus_tracker_start_pose",
        )?;
        // SAFETY: NULL or `samples_len` readable doubles, by this function's contract.
        let values =
            unsafe { sample_arg(samples_xyz_xyzw, samples_len, tracker.points, "samples") }?;
        samples(tracker.points, values, &mut tracker.frame);
        let frame = tracker
            .solver
            .solve_frame(&tracker.frame, &tracker.ground, &mut pose.pose);
        // SAFETY: NULL or a writable report, by this function's contract.
        if let Some(out) = unsafe { report.as_mut() } {
            *out = IkarusReport::from(&frame.solve);
        }
        // SAFETY: NULL or a writable `size_t`, by this function's contract.
        if let Some(out) = unsafe { held.as_mut() } {
            *out = frame.held.len();
        }
        Ok(())
    })
}
