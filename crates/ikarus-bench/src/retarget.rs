//! The retargeting evaluation's clips and targets, loaded from the shared data:
//! the CMU walk and jump, the Bandai Namco walk and run and kishimen.vmd played with IK on
//! `Miku_Hatsune_Ver2.pmd`; the built-in humanoid, both VRM samples and the PMX test model.

use ikarus_anim::mmd::{MmdEvaluator, MmdSettings};
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{ModelPose, Motion, Skeleton};
use ikarus_formats::gltf::{GltfFile, SkeletonSource};
use ikarus_formats::mmd::vmd::{BoundMotion, FRAMES_PER_SECOND};

/// A character with its humanoid map (and, for clips, a motion).
pub struct Character {
    /// Short name for tables.
    pub name: &'static str,
    /// The skeleton.
    pub skeleton: Skeleton,
    /// Its humanoid bones.
    pub map: HumanoidMap,
    /// The clip's frames (sources only).
    pub motion: Option<Motion>,
}

fn bvh(name: &'static str, file: &str) -> Option<Character> {
    let dir = ikarus_testdata::require("bvh", "retarget clips")?;
    let document = ikarus_formats::open(dir.join(file).to_str()?, 1.0).ok()?;
    Some(Character {
        name,
        map: HumanoidMap::recognise(&document.skeleton),
        motion: document.motion,
        skeleton: document.skeleton,
    })
}

/// kishimen.vmd evaluated with IK on Miku, every keyed frame.
fn kishimen() -> Option<Character> {
    let dir = ikarus_testdata::require("mmd", "retarget clips")?;
    let built = ikarus_formats::read_mmd_model(&dir.join("Miku_Hatsune_Ver2.pmd"), 1.0)
        .ok()?
        .build()
        .ok()?;
    let vmd = ikarus_formats::read_vmd(&dir.join("kishimen.vmd"), 1.0).ok()?;
    let bound = BoundMotion::new(&vmd, &built.skeleton);
    let mut evaluator =
        MmdEvaluator::new(&built.skeleton, &built.rig, MmdSettings::default()).ok()?;
    let names = evaluator.chain_names().to_vec();
    let mut animated = built.skeleton.rest_pose();
    let mut out = built.skeleton.rest_pose();
    let mut model = ModelPose::new(&built.skeleton);
    let mut motion = Motion::for_skeleton(&built.skeleton, 1.0 / FRAMES_PER_SECOND).ok()?;
    for frame in 0..=bound.last_frame() {
        let frame = f64::from(frame);
        bound.sample(&built.skeleton, frame, &mut animated);
        let enabled: Vec<bool> = names.iter().map(|n| bound.ik_enabled(n, frame)).collect();
        evaluator.evaluate(&built.skeleton, &animated, &enabled, &mut out, &mut model);
        motion.push(out.clone()).ok()?;
    }
    Some(Character {
        name: "kishimen.vmd",
        map: HumanoidMap::recognise(&built.skeleton),
        skeleton: built.skeleton,
        motion: Some(motion),
    })
}

/// The five clips (those whose files are present).
pub fn clips() -> Vec<Character> {
    let bvh = ikarus_testdata::RETARGET_BVH_CLIPS.map(|(name, file)| bvh(name, file));
    bvh.into_iter().chain([kishimen()]).flatten().collect()
}

fn vrm(name: &'static str, file: &str) -> Option<Character> {
    let dir = ikarus_testdata::require("gltf", "retarget targets")?;
    let gltf = GltfFile::read(&dir.join(file)).ok()?;
    let skin = gltf.skeleton(&SkeletonSource::Auto).ok()?;
    let map = gltf.vrm_humanoid().ok()??.map(&skin);
    Some(Character {
        name,
        map,
        skeleton: skin.skeleton,
        motion: None,
    })
}

/// The four targets (those whose files are present).
pub fn targets() -> Vec<Character> {
    let builtin = ikarus_core::humanoid::builtin_humanoid();
    let mut targets = vec![Character {
        name: "builtin",
        map: HumanoidMap::recognise(&builtin),
        skeleton: builtin,
        motion: None,
    }];
    targets.extend(vrm("Godette.vrm", "Godette_vrm_v4.vrm"));
    targets.extend(vrm("cryptovoxels.vrm", "cryptovoxels.vrm"));
    if let Some(dir) = ikarus_testdata::require("mmd", "retarget targets")
        && let Some(built) = ikarus_formats::read_mmd_model(&dir.join("yw_test_model.pmx"), 1.0)
            .ok()
            .and_then(|m| m.build().ok())
    {
        targets.push(Character {
            name: "yw_test_model.pmx",
            map: HumanoidMap::recognise(&built.skeleton),
            skeleton: built.skeleton,
            motion: None,
        });
    }
    targets
}
