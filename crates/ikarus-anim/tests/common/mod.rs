//! Helpers the animation tests share: clips opened at a known size, the retarget targets and
//! clips retargeted onto them, the metrics of a retarget, a VMD motion played with its IK
//! switches; keypoints in [`mocap`].

#![allow(dead_code)] // not every test file uses every helper

pub mod mocap;

use ikarus_anim::mmd::{ChainOutcome, MmdEvaluator, MmdSettings};
use ikarus_anim::retarget::{self, Character, Metrics, RetargetConfig, Retargeted};
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::rig::Rig;
use ikarus_core::{LocalPose, ModelPose, Motion, Skeleton};
use ikarus_formats::gltf::{GltfFile, SkeletonSource};
use ikarus_formats::mmd::vmd::BoundMotion;

/// `bvh/<file>` of the shared data opened at the scale that gives its left leg the length
/// `leg` (metres); `None` without the shared data.
pub fn open_with_leg(file: &str, test: &str, leg: f64) -> Option<ikarus_formats::Document> {
    let dir = ikarus_testdata::require("bvh", test)?;
    let path = dir.join(file);
    let unscaled = ikarus_formats::open(path.to_str()?, 1.0).unwrap();
    let map = HumanoidMap::recognise(&unscaled.skeleton);
    let unscaled_leg = ikarus_testdata::rigs::left_leg_length(&unscaled.skeleton, &map);
    Some(ikarus_formats::open(path.to_str()?, leg / unscaled_leg).unwrap())
}

/// The characters the retargeted clips are played on: the built-in humanoid, and
/// `Godette_vrm_v4.vrm` when the shared data is there.
pub fn retarget_targets(test: &str) -> Vec<(&'static str, Skeleton, HumanoidMap)> {
    let builtin = ikarus_core::humanoid::builtin_humanoid();
    let builtin_map = HumanoidMap::recognise(&builtin);
    let mut targets = vec![("builtin", builtin, builtin_map)];
    if let Some(dir) = ikarus_testdata::require("gltf", test) {
        let gltf = GltfFile::read(&dir.join("Godette_vrm_v4.vrm")).unwrap();
        let skeleton = gltf.skeleton(&SkeletonSource::Auto).unwrap();
        let map = gltf.vrm_humanoid().unwrap().unwrap().map(&skeleton);
        targets.push(("Godette.vrm", skeleton.skeleton, map));
    }
    targets
}

/// `bvh/<file>` of the shared data retargeted onto `target` with the default settings;
/// `None` without the shared data.
pub fn retargeted(file: &str, test: &str, target: Character<'_>) -> Option<Motion> {
    let dir = ikarus_testdata::require("bvh", test)?;
    let document = ikarus_formats::open(dir.join(file).to_str()?, 1.0).unwrap();
    let map = HumanoidMap::recognise(&document.skeleton);
    let source = Character {
        skeleton: &document.skeleton,
        map: &map,
    };
    let motion = document.motion.as_ref().unwrap();
    let config = RetargetConfig::default();
    Some(
        retarget::retarget(source, motion, target, &config)
            .unwrap()
            .motion,
    )
}

/// [`retarget::measure`] of `motion` (the result's own or another of the same clip on the
/// target) by what `result`, the retarget of `source_motion` from `source` onto `target`,
/// found: its source body, contacts, feet and leg weights.
pub fn metrics(
    source: Character<'_>,
    source_motion: &Motion,
    target: Character<'_>,
    result: &Retargeted,
    motion: &Motion,
) -> Metrics {
    retarget::measure(
        source,
        source_motion,
        result.root.source_body,
        target,
        motion,
        &result.contacts,
        &result.feet,
        &result.leg_weights,
    )
}

/// An MMD model's IK evaluated frame by frame with a bound VMD motion's own IK switches.
pub struct VmdPlayer {
    evaluator: MmdEvaluator,
    /// The evaluator's chain names, in the order of its outcomes.
    pub names: Vec<String>,
    /// The pose the motion gave at the last frame played (before IK).
    pub animated: LocalPose,
    /// The pose after IK at the last frame played.
    pub out: LocalPose,
    model: ModelPose,
}

impl VmdPlayer {
    /// A player of `skeleton` and `rig` under the default settings.
    pub fn new(skeleton: &Skeleton, rig: &Rig) -> Self {
        let evaluator = MmdEvaluator::new(skeleton, rig, MmdSettings::default()).unwrap();
        Self {
            names: evaluator.chain_names().to_vec(),
            evaluator,
            animated: skeleton.rest_pose(),
            out: skeleton.rest_pose(),
            model: ModelPose::new(skeleton),
        }
    }

    /// Samples `motion` at `frame` into [`animated`](Self::animated) and evaluates the IK,
    /// each chain on or off as the motion switches it, into [`out`](Self::out): the chains'
    /// outcomes.
    pub fn play(
        &mut self,
        skeleton: &Skeleton,
        motion: &BoundMotion,
        frame: f64,
    ) -> &[ChainOutcome] {
        motion.sample(skeleton, frame, &mut self.animated);
        let enabled: Vec<bool> = self
            .names
            .iter()
            .map(|n| motion.ik_enabled(n, frame))
            .collect();
        let Self {
            evaluator,
            animated,
            out,
            model,
            ..
        } = self;
        evaluator.evaluate(skeleton, animated, &enabled, out, model)
    }
}
