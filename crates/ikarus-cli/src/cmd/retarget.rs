//! `ikarus retarget`: motions onto another humanoid with planted feet
//! ([`ikarus_anim::retarget`]). Sources: BVH, glTF/GLB/VRM with an animation, VRMA, or VMD
//! played with IK on `--model` (PMX/PMD). Targets: `builtin:humanoid`, BVH, glTF/VRM, PMX/PMD.
//! Output by extension: `.bvh`, `.vmd` (MMD targets; IK bones placed on the feet), `.glb` (the
//! target glTF/VRM with the animation added, or a new skeleton GLB), `.vrma`.
//!
//! Several sources run in parallel, one thread per core, each to `--out-dir/NAME.EXT`.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail, ensure};
use ikarus_anim::retarget::{self, Character, RetargetConfig};
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_core::rig::Rig;
use ikarus_core::{Motion, Skeleton};
use ikarus_formats::bvh::{Bvh, BvhLayout};
use ikarus_formats::gltf::{GltfFile, GltfSkeleton, SkeletonSource};
use ikarus_jobs::ReadOptions;

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
    /// MMD targets: the rig (IK bones) and the model's name.
    rig: Option<(Rig, String)>,
    /// glTF/VRM targets: the parsed file and its skeleton, to add the animation to.
    gltf: Option<(GltfFile, GltfSkeleton)>,
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
    let gltf = if has_extension(&args.to, &["gltf", "glb", "vrm"]) {
        let file = GltfFile::read(Path::new(&args.to))?;
        let skin = file.skeleton(&SkeletonSource::Auto)?;
        Some((file, skin))
    } else {
        None
    };
    let map = humanoid_map(&args.to, &document.skeleton, args.map.as_deref())?;
    let rig = match document.rig {
        Some(rig) => {
            let model = ikarus_formats::read_mmd_model(Path::new(&args.to), 1.0)?;
            Some((rig, model.name))
        }
        None => None,
    };
    Ok(Target {
        map,
        layout: document.layout,
        rig,
        gltf,
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
    let mut result = retarget::retarget(from, &motion, to, &config)?;
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
    write(output, target, &mut result.motion)?;
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

fn write(output: &Path, target: &Target, motion: &mut Motion) -> Result<()> {
    let extension = output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let skeleton = &target.skeleton;
    let bytes = match extension.as_deref() {
        Some("bvh") => {
            let layout = target
                .layout
                .clone()
                .unwrap_or_else(|| BvhLayout::for_motion(skeleton, Some(motion)));
            Bvh::from_motion(skeleton, motion, layout)?.write(output)?;
            return Ok(());
        }
        Some("vmd") => {
            let (rig, name) = target
                .rig
                .as_ref()
                .context("a .vmd output needs a PMX/PMD target (--to MODEL.pmx)")?;
            ikarus_jobs::vmd_bytes(skeleton, rig, name, motion, 1.0)
                .map_err(|m| anyhow::anyhow!("{}: {m}", output.display()))?
        }
        Some("glb") => match &target.gltf {
            Some((file, skin)) => file.with_motion(skin, motion, "retargeted")?,
            None => ikarus_formats::gltf::write_glb(skeleton, Some(motion), "retargeted"),
        },
        Some("vrma") => {
            ikarus_formats::gltf::vrma::write_humanoid_vrma(skeleton, &target.map, motion)
                .map_err(|e| anyhow::anyhow!("{}: {e}", output.display()))?
        }
        _ => bail!(
            "{}: unknown output format (expected .bvh, .vmd, .glb or .vrma)",
            output.display()
        ),
    };
    std::fs::write(output, bytes).with_context(|| format!("writing {}", output.display()))
}
