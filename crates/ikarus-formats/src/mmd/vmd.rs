//! VMD motions: read, write, and sample onto a skeleton.
//!
//! Layout (little-endian, Shift-JIS names in fixed fields): a 30-byte signature
//! (`Vocaloid Motion Data 0002`, or the older `Vocaloid Motion Data file` with a 10-byte model
//! name), the model name (20 bytes), then counted sections, each optional at the end of the
//! file: bone keys (111 bytes: name 15, frame `u32`, translation 3×`f32`, rotation 4×`f32`,
//! interpolation 64), morph keys (23), camera keys (61), light keys (28), self-shadow keys (9)
//! and IK/visibility property keys (frame, visible, then per IK bone a 20-byte name and an
//! enabled byte).
//!
//! **Interpolation.** Each bone key holds four cubic Bézier curves on `[0, 1]²` (translation X,
//! Y, Z and rotation), control points `(x1, y1)`, `(x2, y2)` as bytes 0–127 at offsets
//! `c`, `4 + c`, `8 + c` and `12 + c` of the 64 (for curve `c`). A key's curves shape the
//! segment that *ends* at it, as MMD's editor shows them and babylon-mmd plays them (saba
//! reads them from the segment's first key instead; the two agree on the default linear curve).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{DQuat, DVec3};
use ikarus_core::{JointId, LocalPose, Skeleton};

use super::bytes::{Put, Reader, decode_sjis, encode_sjis, sjis_key};
use super::{
    MmdError, position_from_mmd, position_to_mmd, rotation_from_mmd, rotation_to_mmd, unit,
};

/// Why a motion cannot be written as VMD.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VmdWriteError {
    /// A model or bone name has characters Shift-JIS cannot hold.
    #[error("`{text}` has characters Shift-JIS cannot hold")]
    Unencodable {
        /// The name.
        text: String,
    },
    /// More frames than VMD's 32-bit frame numbers count.
    #[error("too many frames")]
    TooManyFrames,
    /// Two bones whose names are the same in a VMD's 15 Shift-JIS bytes: MMD would key both
    /// with one track. Rename one of them in the model.
    #[error(
        "bones `{first}` and `{second}` have the same first 15 Shift-JIS bytes, all a VMD keeps of a name: rename one in the model"
    )]
    NameCollision {
        /// The first bone.
        first: String,
        /// The second bone.
        second: String,
    },
}

/// VMD frames per second.
pub const FRAMES_PER_SECOND: f64 = 30.0;

const SIGNATURE_NEW: &[u8] = b"Vocaloid Motion Data 0002";
const SIGNATURE_OLD: &[u8] = b"Vocaloid Motion Data file";

/// The default interpolation: every curve linear (control points (20, 20), (107, 107)).
pub const LINEAR_INTERPOLATION: [u8; 64] = linear_interpolation();

const fn linear_interpolation() -> [u8; 64] {
    let mut out = [0u8; 64];
    let mut row = 0;
    while row < 4 {
        let mut c = 0;
        while c < 16 {
            out[row * 16 + c] = if c < 8 { 20 } else { 107 };
            c += 1;
        }
        row += 1;
    }
    out
}

/// One bone keyframe, in ikarus conventions.
#[derive(Clone, Debug, PartialEq)]
pub struct BoneKey {
    /// The bone's name as stored (15 Shift-JIS bytes, NUL padded; names are cut at 15 bytes,
    /// so match bones through [`Vmd::bone_key_name`]).
    pub name_bytes: [u8; 15],
    /// The decoded name.
    pub name: String,
    /// Frame number (30 per second).
    pub frame: u32,
    /// Translation from the bone's rest offset, metres.
    pub translation: DVec3,
    /// Local rotation as stored (within f32 rounding of unit length; sampling normalises).
    pub rotation: DQuat,
    /// The four Bézier curves (see the module docs).
    pub interpolation: [u8; 64],
}

/// One morph keyframe.
#[derive(Clone, Debug, PartialEq)]
pub struct MorphKey {
    /// The morph name as stored.
    pub name_bytes: [u8; 15],
    /// Frame number.
    pub frame: u32,
    /// Weight.
    pub weight: f32,
}

/// One IK / visibility property keyframe.
#[derive(Clone, Debug, PartialEq)]
pub struct PropertyKey {
    /// Frame number.
    pub frame: u32,
    /// Whether the model is shown.
    pub visible: bool,
    /// Per IK bone (name as stored, 20 bytes), whether its IK is on.
    pub ik: Vec<([u8; 20], bool)>,
}

/// A VMD file.
#[derive(Clone, Debug, PartialEq)]
pub struct Vmd {
    /// The model the motion was made for.
    pub model_name: String,
    /// Bone keys in file order.
    pub bones: Vec<BoneKey>,
    /// Morph keys.
    pub morphs: Vec<MorphKey>,
    /// Camera keys, 61 bytes each, kept as stored.
    pub camera: Vec<[u8; 61]>,
    /// Light keys, 28 bytes each, kept as stored.
    pub light: Vec<[u8; 28]>,
    /// Self-shadow keys, 9 bytes each, kept as stored.
    pub shadow: Vec<[u8; 9]>,
    /// IK / visibility property keys.
    pub properties: Vec<PropertyKey>,
}

fn fixed<const N: usize>(r: &mut Reader<'_>, what: &str) -> Result<[u8; N], MmdError> {
    let mut out = [0u8; N];
    out.copy_from_slice(r.take(N, what)?);
    Ok(out)
}

impl Vmd {
    /// Reads a VMD motion; lengths in metres times `scale`.
    ///
    /// # Errors
    /// [`MmdError`] with the byte offset and what was expected.
    pub fn parse(bytes: &[u8], scale: f64) -> Result<Self, MmdError> {
        let mut r = Reader::new(bytes);
        let signature = r.take(30, "the VMD signature")?;
        let name_size = if signature.starts_with(SIGNATURE_NEW) {
            20
        } else if signature.starts_with(SIGNATURE_OLD) {
            10
        } else {
            return Err(MmdError::new(
                0,
                "expected the signature `Vocaloid Motion Data 0002`",
            ));
        };
        let model_name = r.sjis(name_size, "the model name")?;
        let mut vmd = Self {
            model_name,
            bones: Vec::new(),
            morphs: Vec::new(),
            camera: Vec::new(),
            light: Vec::new(),
            shadow: Vec::new(),
            properties: Vec::new(),
        };
        let Some(count) = section(&mut r, 111, "bone keys")? else {
            return Ok(vmd);
        };
        vmd.bones.reserve_exact(count);
        for _ in 0..count {
            let at = r.offset();
            let name_bytes = fixed::<15>(&mut r, "a bone name")?;
            let name = decode_sjis(&name_bytes)
                .ok_or_else(|| MmdError::new(at, "a bone name is not valid Shift-JIS"))?;
            let frame = r.u32("a frame number")?;
            let translation = position_from_mmd(r.vec3("a translation")?, scale);
            let rotation = rotation_from_mmd(r.vec4("a rotation")?);
            let interpolation = fixed::<64>(&mut r, "the interpolation curves")?;
            vmd.bones.push(BoneKey {
                name_bytes,
                name,
                frame,
                translation,
                rotation,
                interpolation,
            });
        }
        let Some(count) = section(&mut r, 23, "morph keys")? else {
            return Ok(vmd);
        };
        for _ in 0..count {
            let name_bytes = fixed::<15>(&mut r, "a morph name")?;
            let frame = r.u32("a frame number")?;
            let weight = r.f32("a morph weight")?;
            vmd.morphs.push(MorphKey {
                name_bytes,
                frame,
                weight,
            });
        }
        // Each section is read only when the file has not ended before the one above it.
        let all_read = stored_section(&mut r, "camera keys", "a camera key", &mut vmd.camera)?
            && stored_section(&mut r, "light keys", "a light key", &mut vmd.light)?
            && stored_section(
                &mut r,
                "self-shadow keys",
                "a self-shadow key",
                &mut vmd.shadow,
            )?;
        if !all_read {
            return Ok(vmd);
        }
        let Some(count) = section(&mut r, 9, "property keys")? else {
            return Ok(vmd);
        };
        for _ in 0..count {
            let frame = r.u32("a frame number")?;
            let visible = r.u8("the visible flag")? != 0;
            let raw = r.u32("an IK state count")?;
            let states = r.count(i64::from(raw), 21, "IK states")?;
            let mut ik = Vec::with_capacity(states);
            for _ in 0..states {
                let name = fixed::<20>(&mut r, "an IK bone name")?;
                ik.push((name, r.u8("the IK enabled flag")? != 0));
            }
            vmd.properties.push(PropertyKey { frame, visible, ik });
        }
        Ok(vmd)
    }

    /// Writes the motion; lengths divided by `scale` on the way out (the inverse of
    /// [`parse`](Self::parse)).
    ///
    /// # Errors
    /// [`VmdWriteError`]: a model name Shift-JIS cannot hold.
    pub fn write(&self, scale: f64) -> Result<Vec<u8>, VmdWriteError> {
        let mut out = Vec::with_capacity(
            50 + 111 * self.bones.len() + 23 * self.morphs.len() + 61 * self.camera.len(),
        );
        let mut signature = SIGNATURE_NEW.to_vec();
        signature.resize(30, 0);
        out.extend_from_slice(&signature);
        out.extend_from_slice(&encode_sjis(&self.model_name, 20)?);
        out.put_u32(self.bones.len() as u32);
        for key in &self.bones {
            out.extend_from_slice(&key.name_bytes);
            out.put_u32(key.frame);
            for v in position_to_mmd(key.translation, scale) {
                out.put_f32(v);
            }
            for v in rotation_to_mmd(key.rotation) {
                out.put_f32(v);
            }
            out.extend_from_slice(&key.interpolation);
        }
        out.put_u32(self.morphs.len() as u32);
        for key in &self.morphs {
            out.extend_from_slice(&key.name_bytes);
            out.put_u32(key.frame);
            out.put_f32(key.weight);
        }
        out.put_u32(self.camera.len() as u32);
        self.camera.iter().for_each(|k| out.extend_from_slice(k));
        out.put_u32(self.light.len() as u32);
        self.light.iter().for_each(|k| out.extend_from_slice(k));
        out.put_u32(self.shadow.len() as u32);
        self.shadow.iter().for_each(|k| out.extend_from_slice(k));
        out.put_u32(self.properties.len() as u32);
        for key in &self.properties {
            out.put_u32(key.frame);
            out.push(u8::from(key.visible));
            out.put_u32(key.ik.len() as u32);
            for (name, enabled) in &key.ik {
                out.extend_from_slice(name);
                out.push(u8::from(*enabled));
            }
        }
        Ok(out)
    }

    /// The 15-byte key a VMD uses for a bone named `name` (its Shift-JIS bytes, cut).
    pub fn bone_key_name(name: &str) -> Vec<u8> {
        sjis_key(name, 15)
    }

    /// The last keyed frame (0 for a motion without keys).
    pub fn last_frame(&self) -> u32 {
        self.bones
            .iter()
            .map(|k| k.frame)
            .chain(self.morphs.iter().map(|k| k.frame))
            .chain(self.properties.iter().map(|k| k.frame))
            .max()
            .unwrap_or(0)
    }

    /// The distinct keyed bone names, in order of first appearance.
    pub fn keyed_bones(&self) -> Vec<&str> {
        let mut seen = std::collections::HashSet::new();
        self.bones
            .iter()
            .filter(|k| seen.insert(k.name_bytes))
            .map(|k| k.name.as_str())
            .collect()
    }

    /// Adds a property key at frame 0 that shows the model and turns the IK of each bone in
    /// `ik_bones` (the IK chains' goal bones) off: how a motion whose limbs are already solved
    /// and keyed (baked) plays in MMD exactly as keyed, as motion-capture tools write theirs.
    ///
    /// # Errors
    /// [`VmdWriteError`]: a bone name Shift-JIS cannot hold.
    pub fn switch_ik_off(&mut self, ik_bones: &[&str]) -> Result<(), VmdWriteError> {
        let mut ik = Vec::with_capacity(ik_bones.len());
        for name in ik_bones {
            let mut bytes = [0u8; 20];
            bytes.copy_from_slice(&encode_sjis(name, 20)?);
            ik.push((bytes, false));
        }
        self.properties.retain(|k| k.frame != 0);
        self.properties.insert(
            0,
            PropertyKey {
                frame: 0,
                visible: true,
                ik,
            },
        );
        Ok(())
    }

    /// A motion that keys every joint of `skeleton` at every frame of `frames` (rotations and
    /// translations from the rest offsets), with linear curves, for the model `model_name`.
    /// Frame `i` of `frames` is VMD frame `i`.
    ///
    /// # Errors
    /// [`VmdWriteError`]: a joint name Shift-JIS cannot hold, or more frames than VMD counts.
    pub fn from_frames(
        skeleton: &Skeleton,
        frames: &[LocalPose],
        model_name: &str,
    ) -> Result<Self, VmdWriteError> {
        // Each joint's 15-byte key, once; two joints on one key would share a track.
        let mut keys: Vec<[u8; 15]> = Vec::with_capacity(skeleton.len());
        for joint in skeleton.joints() {
            let name = skeleton.name(joint);
            // Checked whole (a name Shift-JIS cannot hold is refused), then cut at 15 bytes
            // as MMD cuts it (mid-character if need be): the key MMD and `BoundMotion` match
            // a bone by.
            encode_sjis(name, 15)?;
            let mut key = [0u8; 15];
            let cut = sjis_key(name, 15);
            key[..cut.len()].copy_from_slice(&cut);
            if let Some(other) = keys.iter().position(|k| *k == key) {
                return Err(VmdWriteError::NameCollision {
                    first: skeleton
                        .name(ikarus_core::JointId::from_index(other))
                        .to_owned(),
                    second: name.to_owned(),
                });
            }
            keys.push(key);
        }
        let mut bones = Vec::with_capacity(frames.len() * skeleton.len());
        for (f, pose) in frames.iter().enumerate() {
            for joint in skeleton.joints() {
                let name = skeleton.name(joint);
                let local = pose.transforms()[joint.index()];
                let name_bytes = keys[joint.index()];
                bones.push(BoneKey {
                    name_bytes,
                    name: name.to_owned(),
                    frame: u32::try_from(f).map_err(|_| VmdWriteError::TooManyFrames)?,
                    translation: local.translation - skeleton.rest(joint).translation,
                    rotation: local.rotation,
                    interpolation: LINEAR_INTERPOLATION,
                });
            }
        }
        Ok(Self {
            model_name: model_name.to_owned(),
            bones,
            morphs: Vec::new(),
            camera: Vec::new(),
            light: Vec::new(),
            shadow: Vec::new(),
            properties: Vec::new(),
        })
    }
}

/// A section's count, or `None` at the end of the file (every section after the bones is
/// optional).
fn section(r: &mut Reader<'_>, record: usize, what: &str) -> Result<Option<usize>, MmdError> {
    if r.remaining() == 0 {
        return Ok(None);
    }
    let raw = r.u32(&format!("the {what} count"))?;
    r.count(i64::from(raw), record, what).map(Some)
}

/// Reads a section of `N`-byte records kept as stored (`what`: the records, `one`: a record)
/// onto `keys`; false when the file ends before the section.
fn stored_section<const N: usize>(
    r: &mut Reader<'_>,
    what: &str,
    one: &str,
    keys: &mut Vec<[u8; N]>,
) -> Result<bool, MmdError> {
    let Some(count) = section(r, N, what)? else {
        return Ok(false);
    };
    for _ in 0..count {
        keys.push(fixed(r, one)?);
    }
    Ok(true)
}

/// One channel's curve: `x(t)`, `y(t)` cubic Béziers from (0, 0) to (1, 1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bezier {
    /// First control point.
    pub p1: [f64; 2],
    /// Second control point.
    pub p2: [f64; 2],
}

impl Bezier {
    /// Curve `channel` (0 X, 1 Y, 2 Z, 3 rotation) of a key's 64 interpolation bytes.
    pub fn from_interpolation(bytes: &[u8; 64], channel: usize) -> Self {
        let at = |k: usize| f64::from(bytes[k + channel]) / 127.0;
        Self {
            p1: [at(0), at(4)],
            p2: [at(8), at(12)],
        }
    }

    fn coordinate(a: f64, b: f64, t: f64) -> f64 {
        let s = 1.0 - t;
        3.0 * s * s * t * a + 3.0 * s * t * t * b + t * t * t
    }

    fn slope(a: f64, b: f64, t: f64) -> f64 {
        let s = 1.0 - t;
        3.0 * s * s * a + 6.0 * s * t * (b - a) + 3.0 * t * t * (1.0 - b)
    }

    /// The curve's `y` where its `x` equals `x` (clamped to `[0, 1]`). `x(t)` is monotonic
    /// for control points in `[0, 1]`: Newton's method from `t = x` finds it in a few steps;
    /// where the slope vanishes or a step leaves `[0, 1]`, bisection (40 halvings, 1e-12).
    pub fn y_at(&self, x: f64) -> f64 {
        let x = x.clamp(0.0, 1.0);
        if self.p1[0] == self.p1[1] && self.p2[0] == self.p2[1] {
            return x; // Both control points on the diagonal: linear.
        }
        let (ax, bx) = (self.p1[0], self.p2[0]);
        let mut t = x;
        for _ in 0..8 {
            let error = Self::coordinate(ax, bx, t) - x;
            if error.abs() < 1e-12 {
                return Self::coordinate(self.p1[1], self.p2[1], t);
            }
            let slope = Self::slope(ax, bx, t);
            if slope.abs() < 1e-6 {
                break;
            }
            t -= error / slope;
            if !(0.0..=1.0).contains(&t) {
                break;
            }
        }
        let (mut lo, mut hi) = (0.0, 1.0);
        for _ in 0..40 {
            let mid = 0.5 * (lo + hi);
            if Self::coordinate(ax, bx, mid) < x {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        Self::coordinate(self.p1[1], self.p2[1], 0.5 * (lo + hi))
    }
}

/// A motion bound to a skeleton: per joint, its keys sorted by frame with the curves decoded,
/// and per IK chain name, its on/off steps. Built once; [`sample`](Self::sample) per frame
/// allocates nothing.
#[derive(Clone, Debug)]
pub struct BoundMotion {
    tracks: Vec<Track>,
    ik_steps: Vec<(String, Vec<(u32, bool)>)>,
    /// Keyed bone names the skeleton does not have.
    pub unmatched: Vec<String>,
    last_frame: u32,
}

/// One joint's keys. The key frames are kept apart from the keys (4 bytes each) for the
/// search, and each segment's slerp angle is computed once.
#[derive(Debug)]
struct Track {
    joint: JointId,
    /// Key frames, strictly ascending.
    frames: Vec<u32>,
    keys: Vec<TrackKey>,
    /// Per key but the last: the rotation's path to the next key.
    arcs: Vec<Arc>,
    /// Where the last sample fell (the index of the first key after it): playback mostly
    /// moves forward a frame at a time, so the next sample is usually in the same segment or
    /// the next one, found without a search. Only a hint — any value gives the same samples.
    cursor: AtomicUsize,
}

impl Clone for Track {
    fn clone(&self) -> Self {
        Self {
            joint: self.joint,
            frames: self.frames.clone(),
            keys: self.keys.clone(),
            arcs: self.arcs.clone(),
            cursor: AtomicUsize::new(self.cursor.load(Ordering::Relaxed)),
        }
    }
}

#[derive(Clone, Debug)]
struct TrackKey {
    translation: DVec3,
    rotation: DQuat,
    curves: [Bezier; 4],
}

/// The slerp from one key's rotation `a` to the next one's, as glam's `DQuat::slerp` takes it
/// (`end` negated when `a·b < 0`; a normalised lerp when the two nearly coincide), with the
/// angle and its sine and cosine computed once: a sample then takes one `sin_cos`, because
/// `sin(θ(1 − s)) = sin θ·cos θs − cos θ·sin θs`.
#[derive(Clone, Debug)]
struct Arc {
    end: DQuat,
    /// `θ`, `sin θ`, `cos θ`; `None` when the rotations nearly coincide (lerp).
    angle: Option<(f64, f64, f64)>,
}

impl Arc {
    fn new(start: DQuat, end: DQuat) -> Self {
        let mut dot = start.dot(end);
        let end = if dot < 0.0 {
            dot = -dot;
            -end
        } else {
            end
        };
        // glam's threshold for the lerp.
        let angle = (dot <= 1.0 - f64::EPSILON).then(|| {
            let theta = dot.min(1.0).acos();
            let (sin, cos) = theta.sin_cos();
            (theta, sin, cos)
        });
        Self { end, angle }
    }

    fn at(&self, start: DQuat, s: f64) -> DQuat {
        match self.angle {
            None => start.lerp(self.end, s),
            Some((theta, sin, cos)) => {
                let (sin_part, cos_part) = (theta * s).sin_cos();
                let scale_start = sin * cos_part - cos * sin_part;
                (start * scale_start + self.end * sin_part) * (1.0 / sin)
            }
        }
    }
}

impl BoundMotion {
    /// Binds `vmd` to `skeleton` by bone name (Shift-JIS, cut at 15 bytes, as MMD matches).
    /// When several keys share a bone and frame, the last in the file wins.
    pub fn new(vmd: &Vmd, skeleton: &Skeleton) -> Self {
        let mut by_key: HashMap<Vec<u8>, JointId> = HashMap::with_capacity(skeleton.len());
        for joint in skeleton.joints() {
            by_key
                .entry(Vmd::bone_key_name(skeleton.name(joint)))
                .or_insert(joint);
        }
        let mut per_joint: HashMap<JointId, Vec<(u32, TrackKey)>> = HashMap::new();
        let mut unmatched = Vec::new();
        for key in &vmd.bones {
            let end = key.name_bytes.iter().position(|&b| b == 0).unwrap_or(15);
            let Some(&joint) = by_key.get(&key.name_bytes[..end]) else {
                if !unmatched.contains(&key.name) {
                    unmatched.push(key.name.clone());
                }
                continue;
            };
            per_joint.entry(joint).or_default().push((
                key.frame,
                TrackKey {
                    translation: key.translation,
                    rotation: unit(key.rotation),
                    curves: [0, 1, 2, 3].map(|c| Bezier::from_interpolation(&key.interpolation, c)),
                },
            ));
        }
        let mut tracks: Vec<Track> = per_joint
            .into_iter()
            .map(|(joint, mut keys)| {
                keys.sort_by_key(|k| k.0); // Stable: the file's last duplicate ends last.
                let mut frames: Vec<u32> = Vec::with_capacity(keys.len());
                let mut deduped: Vec<TrackKey> = Vec::with_capacity(keys.len());
                for (frame, key) in keys {
                    match (frames.last(), deduped.last_mut()) {
                        (Some(&last_frame), Some(last)) if last_frame == frame => *last = key,
                        _ => {
                            frames.push(frame);
                            deduped.push(key);
                        }
                    }
                }
                let arcs = deduped
                    .windows(2)
                    .map(|w| Arc::new(w[0].rotation, w[1].rotation))
                    .collect();
                Track {
                    joint,
                    frames,
                    keys: deduped,
                    arcs,
                    cursor: AtomicUsize::new(0),
                }
            })
            .collect();
        tracks.sort_by_key(|t| t.joint);
        let mut steps: HashMap<String, Vec<(u32, bool)>> = HashMap::new();
        for key in &vmd.properties {
            for (name, enabled) in &key.ik {
                if let Some(name) = decode_sjis(name) {
                    steps.entry(name).or_default().push((key.frame, *enabled));
                }
            }
        }
        let mut ik_steps: Vec<(String, Vec<(u32, bool)>)> = steps.into_iter().collect();
        for (_, s) in &mut ik_steps {
            s.sort_by_key(|&(f, _)| f);
        }
        ik_steps.sort_by(|a, b| a.0.cmp(&b.0));
        Self {
            tracks,
            ik_steps,
            unmatched,
            last_frame: vmd.last_frame(),
        }
    }

    /// The last keyed frame.
    pub fn last_frame(&self) -> u32 {
        self.last_frame
    }

    /// Number of joints with keys.
    pub fn keyed_joints(&self) -> usize {
        self.tracks.len()
    }

    /// Writes the animated local transforms at `frame` (fractional frames interpolate) into
    /// `pose`: keyed joints get rest offset + keyed translation and the keyed rotation; other
    /// joints their rest. Before the first key a track holds its first key, after the last its
    /// last.
    pub fn sample(&self, skeleton: &Skeleton, frame: f64, pose: &mut LocalPose) {
        let transforms = pose.transforms_mut();
        transforms.copy_from_slice(skeleton.rest_transforms());
        for track in &self.tracks {
            let (translation, rotation) = track.at(frame);
            let local = &mut transforms[track.joint.index()];
            local.translation += translation;
            // MMD rest rotations are identity: skip the product then.
            local.rotation = if local.rotation == DQuat::IDENTITY {
                rotation
            } else {
                local.rotation * rotation
            };
        }
    }

    /// Whether the IK chain `name` is on at `frame` (the last property key at or before it;
    /// on when none says otherwise).
    pub fn ik_enabled(&self, name: &str, frame: f64) -> bool {
        let Ok(i) = self
            .ik_steps
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
        else {
            return true;
        };
        let steps = &self.ik_steps[i].1;
        let upto = steps.partition_point(|&(f, _)| f64::from(f) <= frame);
        if upto == 0 {
            steps.first().is_none_or(|&(_, on)| on)
        } else {
            steps[upto - 1].1
        }
    }
}

impl Track {
    /// The index of the first key after `frame` (0 before the first key, the key count from
    /// the last one on), starting from where the last sample fell.
    fn upper(&self, frame: f64) -> usize {
        let frames = &self.frames;
        let after = |u: usize| u == 0 || f64::from(frames[u - 1]) <= frame;
        let before = |u: usize| u == frames.len() || frame < f64::from(frames[u]);
        let hint = self.cursor.load(Ordering::Relaxed).min(frames.len());
        let upper = if after(hint) && before(hint) {
            return hint;
        } else if hint < frames.len() && after(hint + 1) && before(hint + 1) {
            hint + 1
        } else {
            frames.partition_point(|&f| f64::from(f) <= frame)
        };
        self.cursor.store(upper, Ordering::Relaxed);
        upper
    }

    fn at(&self, frame: f64) -> (DVec3, DQuat) {
        let keys = &self.keys;
        let upper = self.upper(frame);
        if upper == 0 {
            return (keys[0].translation, keys[0].rotation);
        }
        if upper == keys.len() {
            let last = &keys[upper - 1];
            return (last.translation, last.rotation);
        }
        let (a, b) = (&keys[upper - 1], &keys[upper]);
        if a.translation == b.translation && a.rotation == b.rotation {
            return (a.translation, a.rotation); // A held pose: no curve to follow.
        }
        let (start_frame, end_frame) = (self.frames[upper - 1], self.frames[upper]);
        let s = (frame - f64::from(start_frame)) / f64::from(end_frame - start_frame);
        let c = &b.curves;
        // Most bones only turn: with equal translations the three translation curves cannot
        // change anything, and equal curves give equal values.
        let translation = if a.translation == b.translation {
            a.translation
        } else {
            let x = c[0].y_at(s);
            let y = if c[1] == c[0] { x } else { c[1].y_at(s) };
            let z = if c[2] == c[1] { y } else { c[2].y_at(s) };
            a.translation + (b.translation - a.translation) * DVec3::new(x, y, z)
        };
        let rotation = if a.rotation == b.rotation {
            a.rotation
        } else {
            self.arcs[upper - 1].at(a.rotation, c[3].y_at(s))
        };
        (translation, rotation)
    }
}
