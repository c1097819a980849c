//! Grounding: a humanoid clip made to stand on uneven ground ([`ikarus_anim::ground`]), the
//! ground given as terrain JSON or as the caller's own sampler (an engine's ray cast).

use std::ffi::{c_char, c_void};

use ikarus_anim::ground::{Ground, GroundConfig, ground_motion};
use ikarus_anim::retarget::Character;
use ikarus_core::glam::DVec3;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{LocalPose, Motion};
use ikarus_jobs::Terrain;

use crate::error::{Failure, IkarusError, IkarusStatus, guard, ref_arg, str_arg};
use crate::pose::{IKARUS_LOCAL_STRIDE, read_local, write_local};
use crate::skeleton::IkarusSkeleton;

/// The caller's ground: called with `user` and a point `(x, z)` (model space, metres), it
/// writes the ground's height there into `*height` and its upward normal into `normal[0..3]`
/// and returns true, or returns false where there is no ground (the foot then keeps the
/// animation). It must not unwind (throw) into the library.
pub type IkarusGroundSampler = Option<
    unsafe extern "C" fn(
        user: *mut c_void,
        x: f64,
        z: f64,
        height: *mut f64,
        normal: *mut f64,
    ) -> bool,
>;

/// A [`Ground`] over the caller's sampler.
struct Sampler {
    sample: unsafe extern "C" fn(*mut c_void, f64, f64, *mut f64, *mut f64) -> bool,
    user: *mut c_void,
}

impl Ground for Sampler {
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)> {
        let (mut height, mut normal) = (f64::NAN, [f64::NAN; 3]);
        // SAFETY: the caller of `ikarus_ground_clip` passes a sampler that may be called with
        // its `user` and writable height and 3-double normal storage during that call.
        let found = unsafe { (self.sample)(self.user, x, z, &raw mut height, normal.as_mut_ptr()) };
        let normal = DVec3::from_array(normal).try_normalize()?;
        (found && height.is_finite() && normal.y > 0.0).then_some((height, normal))
    }
}

/// Grounds a clip of the humanoid `skel` (bones recognised by name) on uneven ground: per
/// frame the planted feet stand on the ground, turned to its slope, the lifted ones clear it
/// by what the animation lifted them, the pelvis follows smoothly and the full-body solver
/// places it and the feet, as `ikarus ground` does.
///
/// `frames` holds `frame_count` poses, each in the layout of `ikarus_pose_get_local` (7
/// doubles per joint; `frames_len` at least `frame_count * joint_count * 7`), at `fps`
/// frames per second; joint scales are the rest pose's. The ground is `terrain_json`
/// (`{"plane": {"point": [x, y, z], "normal": [x, y, z]}}` or `{"heightfield": {"origin":
/// [x, z], "cell": metres, "heights": [[...], ...]}}`, as `ikarus ground --terrain`) or, when
/// that is NULL, `sampler` called with `user`. The grounded frames go to `out_frames` (the
/// same layout and length; it may be `frames` itself); `*unreached`, when `unreached` is not
/// NULL, receives the number of frames where a foot's goal was not met.
///
/// Errors: `IKARUS_ERR_PARSE` (terrain JSON), `IKARUS_ERR_INVALID` (the skeleton lacks hips,
/// legs or feet; a non-finite value; buffers too short; no frame), `IKARUS_ERR_NULL`.
///
/// # Safety
/// `skel` is NULL or a live skeleton; `frames` NULL or `frames_len` readable doubles;
/// `terrain_json` NULL or a NUL-terminated string; `sampler` (when used) callable as
/// [`IkarusGroundSampler`] says during this call; `out_frames` NULL or `frames_len` writable
/// doubles; `unreached` NULL or a writable `size_t`; `err` NULL or writable storage for one
/// `IkarusError*`.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)] // a C signature: buffers with their lengths
pub unsafe extern "C" fn ikarus_ground_clip(
    skel: *const IkarusSkeleton,
    fps: f64,
    frame_count: usize,
    frames: *const f64,
    frames_len: usize,
    terrain_json: *const c_char,
    sampler: IkarusGroundSampler,
    user: *mut c_void,
    out_frames: *mut f64,
    unreached: *mut usize,
    err: *mut *mut IkarusError,
) -> IkarusStatus {
    guard(err, || {
        // SAFETY: NULL or live, by this function's contract.
        let skel = unsafe { ref_arg(skel, "skel") }?;
        let skeleton = &*skel.skeleton;
        let per = IKARUS_LOCAL_STRIDE * skeleton.len();
        let needed = per * frame_count;
        if frames.is_null() {
            return Err(Failure::null("frames"));
        }
        if out_frames.is_null() {
            return Err(Failure::null("out_frames"));
        }
        if frames_len < needed {
            return Err(Failure::invalid(format!(
                "`frames` holds {frames_len} doubles; {needed} are needed ({frame_count} frames of {} joints)",
                skeleton.len()
            )));
        }
        if !(fps.is_finite() && fps > 0.0) {
            return Err(Failure::invalid(format!(
                "fps {fps}: expected a finite positive number"
            )));
        }
        let ground: Box<dyn Ground> = if terrain_json.is_null() {
            let sample =
                sampler.ok_or_else(|| Failure::null("terrain_json and sampler (one is needed)"))?;
            Box::new(Sampler { sample, user })
        } else {
            // SAFETY: not NULL; NUL-terminated by this function's contract.
            let text = unsafe { str_arg(terrain_json, "terrain_json") }?;
            let terrain = Terrain::from_json(text, "terrain_json").map_err(|e| {
                let code = if matches!(e, ikarus_jobs::TerrainError::Json { .. }) {
                    crate::IKARUS_ERR_PARSE
                } else {
                    crate::IKARUS_ERR_INVALID
                };
                Failure::new(code, e.to_string())
            })?;
            Box::new(terrain)
        };
        let mut motion = Motion::for_skeleton(skeleton, 1.0 / fps)
            .map_err(|e| Failure::invalid(e.to_string()))?;
        {
            // SAFETY: not NULL (checked); `frames_len` readable doubles by this function's
            // contract. Read in full before `out_frames`, which may alias it, is written.
            let input = unsafe { std::slice::from_raw_parts(frames, needed) };
            for values in input.chunks_exact(per) {
                let mut pose: LocalPose = skeleton.rest_pose();
                for (t, (translation, rotation)) in
                    pose.transforms_mut().iter_mut().zip(read_local(values)?)
                {
                    t.translation = translation;
                    t.rotation = rotation;
                }
                motion
                    .push(pose)
                    .map_err(|e| Failure::invalid(e.to_string()))?;
            }
        }
        let map = HumanoidMap::recognise(skeleton);
        let character = Character {
            skeleton,
            map: &map,
        };
        let grounded = ground_motion(character, &motion, &*ground, &GroundConfig::default())
            .map_err(|e| Failure::invalid(e.to_string()))?;
        // SAFETY: not NULL (checked); `frames_len` writable doubles by this function's
        // contract; `frames` is no longer read.
        let out = unsafe { std::slice::from_raw_parts_mut(out_frames, needed) };
        for (values, pose) in out.chunks_exact_mut(per).zip(grounded.motion.frames()) {
            write_local(pose, values);
        }
        // SAFETY: NULL or a writable `size_t`, by this function's contract.
        if let Some(out) = unsafe { unreached.as_mut() } {
            *out = grounded.unreached;
        }
        Ok(())
    })
}
