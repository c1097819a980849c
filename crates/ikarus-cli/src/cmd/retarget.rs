//! `ikarus retarget`: motions onto another humanoid with planted feet
//! ([`ikarus_anim::retarget`]). Sources: BVH, glTF/GLB/VRM with an animation, VRMA, or VMD
//! played with IK on `--model` (PMX/PMD). Targets: `builtin:humanoid`, BVH, glTF/VRM, PMX/PMD.
//! Output by extension: `.bvh`, `.vmd` (MMD targets; IK bones placed on the feet), `.glb` (the
//! target glTF/VRM with the animation added, or a new skeleton GLB), `.vrma`.
//!
//! Several sources run in parallel, one thread per core, each to `--out-dir/NAME.EXT`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use ikarus_anim::retarget::{self, Character, RetargetConfig};
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::{Motion, Skeleton};
use ikarus_formats::bvh::BvhLayout;
use ikarus_jobs::{ReadOptions, WriteOptions};

use crate::many;
use crate::mmd;

/// Arguments of `ikarus retarget`.
#[derive(clap::Args)]
pub struct Args {
    /// Source motions: `.bvh`, `.gltf`/`.glb`/`.vrm` with an animation, `.vrma`, or `.vmd`
    /// (with `--model`).
    #[arg(required = true)]
    sources: Vec<PathBuf>,
    /// Target character: `builtin:humanoid`, or a BVH, glTF/GLB/VRM or PMX/PMD file.
    #[arg(long)]
    to: String,
    /// JSON bone map of the target (`{"leftHand": "joint name", …}`, VRM 1.0 bone names),
    /// over what the file declares or the names give.
    #[arg(long)]
    map: Option<PathBuf>,
    /// JSON bone map of the sources.
    #[arg(long)]
    source_map: Option<PathBuf>,
    /// The PMX/PMD model that `.vmd` sources are played on (with its IK).
    #[arg(long)]
    model: Option<String>,
    /// Copy rotations and the root only: no contacts, no IK repair (the ground is still kept).
    #[arg(long)]
    no_contacts: bool,
    /// Also hold hands that stay still in the source.
    #[arg(long)]
    hands: bool,
    /// Output file (one source); its extension picks the format: bvh, vmd, glb or vrma.
    #[arg(long, conflicts_with = "out_dir")]
    out: Option<PathBuf>,
    /// Output directory (any number of sources; `NAME.FORMAT` each).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Output format with `--out-dir`: bvh, vmd, glb or vrma (default: the target's own:
    /// vmd for PMX/PMD, glb for glTF/VRM, else bvh).
    #[arg(long, value_parser = ["bvh", "vmd", "glb", "vrma"])]
    format: Option<String>,
}

/// The target, loaded once and shared by the worker threads.
struct Target {
    skeleton: Skeleton,
    map: HumanoidMap,
    /// BVH targets: the file's channel layout.
    layout: Option<BvhLayout>,
    /// A PMX/PMD target (a `.vmd` is written for it).
    is_mmd: bool,
    /// A glTF/GLB/VRM target (a `.glb` is the file with the animation added).
    is_gltf: bool,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    let default_format = if mmd::is_model(&args.to) {
        "vmd"
    } else if has_extension(&args.to, &["gltf", "glb", "vrm"]) {
        "glb"
    } else {
        "bvh"
    };
    let extension = args.format.as_deref().unwrap_or(default_format);
    let outputs = many::outputs(
        &args.sources,
        args.out.as_deref(),
        args.out_dir.as_deref(),
        extension,
        "source",
    )?;
    let target = open_target(args)?;
    many::run_each(
        &args.sources,
        &outputs,
        format!("retargeting onto {}", args.to),
        "source",
        |i| retarget_one(args, &args.sources[i], &outputs[i], &target),
    )
}

fn has_extension(path: &str, extensions: &[&str]) -> bool {
    Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// The humanoid map of a skeleton: the VRM/VRMA file's own, else recognised from the names
/// ([`ikarus_formats::humanoid_map`]); then the JSON overrides.
fn humanoid_map(path: &str, skeleton: &Skeleton, overrides: Option<&Path>) -> Result<HumanoidMap> {
    let mut map = ikarus_formats::humanoid_map(path, skeleton)?;
    if let Some(json) = overrides {
        let text =
            std::fs::read_to_string(json).with_context(|| format!("reading {}", json.display()))?;
        map = ikarus_formats::gltf::vrm::bone_map_from_json(&text, skeleton, map)
            .map_err(|m| anyhow::anyhow!("{}: {m}", json.display()))?;
    }
    ensure!(
        map.is_complete(),
        "{path}: the humanoid map lacks {:?}; give a bone map (--map / --source-map)",
        map.missing_required()
            .map(ikarus_core::humanoid_map::HumanoidBone::vrm_name)
            .collect::<Vec<_>>()
    );
    Ok(map)
}

fn open_target(args: &Args) -> Result<Target> {
    let document = ikarus_formats::open(&args.to, 1.0)?;
    let map = humanoid_map(&args.to, &document.skeleton, args.map.as_deref())?;
    Ok(Target {
        map,
        layout: document.layout,
        is_mmd: document.rig.is_some(),
        is_gltf: has_extension(&args.to, &["gltf", "glb", "vrm"]),
        skeleton: document.skeleton,
    })
}

/// A source's skeleton, map and motion.
fn open_source(args: &Args, path: &Path) -> Result<(Skeleton, HumanoidMap, Motion)> {
    let name = path.to_string_lossy();
    if mmd::is_motion(&name) {
        let model = args
            .model
            .as_deref()
            .context("a .vmd source needs its model: --model MODEL.pmx")?;
        let options = ReadOptions {
            model: Some(Path::new(model)),
            ..ReadOptions::default()
        };
        let source = ikarus_jobs::read_source(&name, &options)?;
        mmd::warn_unmatched(&name, model, &source.unmatched);
        let map = humanoid_map(model, &source.skeleton, args.source_map.as_deref())?;
        let motion = source.motion.context("a played VMD has a motion")?;
        return Ok((source.skeleton, map, motion));
    }
    let document = ikarus_formats::open(&name, 1.0)?;
    let motion = document
        .motion
        .with_context(|| format!("{name}: no animation to retarget"))?;
    let map = humanoid_map(&name, &document.skeleton, args.source_map.as_deref())?;
    Ok((document.skeleton, map, motion))
}

fn retarget_one(args: &Args, source: &Path, output: &Path, target: &Target) -> Result<String> {
    let (skeleton, map, motion) = open_source(args, source)?;
    let config = RetargetConfig {
        contacts: (!args.no_contacts).then(|| retarget::ContactConfig {
            hands: args.hands,
            ..retarget::ContactConfig::default()
        }),
        ..RetargetConfig::default()
    };
    let from = Character {
        skeleton: &skeleton,
        map: &map,
    };
    let to = Character {
        skeleton: &target.skeleton,
        map: &target.map,
    };
    let result = retarget::retarget(from, &motion, to, &config)?;
    let metrics = retarget::measure(
        from,
        &motion,
        result.root.source_body,
        to,
        &result.motion,
        &result.contacts,
        &result.feet,
        &result.leg_weights,
    );
    write(output, &args.to, target, &result.motion)?;
    Ok(format!(
        "{} frames, {} contacts, sliding max {:.2} cm mean {:.3} cm, {:.2} cm below the floor, \
         hips lowered up to {:.1} cm, {} frames with a leg out of reach",
        result.motion.len(),
        result.contacts.len(),
        metrics.slide_max * 100.0,
        metrics.slide_mean * 100.0,
        metrics.penetration * 100.0,
        result.max_hip_drop * 100.0,
        result.unreached
    ))
}

/// Writes the retargeted motion through [`ikarus_jobs::write_motion`] (the writer of
/// `ikarus convert` and Python): `.bvh` with a BVH target's layout, `.vmd` for a PMX/PMD
/// target (IK bones on the feet), `.glb` with the animation added into a glTF/VRM target (else
/// a new GLB), `.vrma` through the target's humanoid map.
fn write(output: &Path, to: &str, target: &Target, motion: &Motion) -> Result<()> {
    let extension = output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let extension = extension.as_deref();
    ensure!(
        extension != Some("vmd") || target.is_mmd,
        "a .vmd output needs a PMX/PMD target (--to MODEL.pmx)"
    );
    let options = WriteOptions {
        layout: target.layout.clone(),
        into: (extension == Some("glb") && target.is_gltf).then_some(Path::new(to)),
        animation: "retargeted",
        model: (extension == Some("vmd")).then_some(Path::new(to)),
        humanoid: (extension == Some("vrma")).then(|| target.map.clone()),
        ..WriteOptions::default()
    };
    ikarus_jobs::write_motion(output, &target.skeleton, motion, &options)?;
    if extension == Some("bvh") {
        crate::note_renamed(
            output,
            &ikarus_formats::bvh::renamed_joints(&target.skeleton),
        );
        crate::note_bvh_root(
            output,
            ikarus_formats::bvh::shared_root(&target.skeleton).as_deref(),
        );
    }
    Ok(())
}
