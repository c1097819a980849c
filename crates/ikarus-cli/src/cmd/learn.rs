//! `ikarus learn`: a posture model (probabilistic PCA on joint rotations) from motions, for the
//! example-based solver (`{"kind": "example", "model": FILE}`).
//!
//! Motions of another skeleton than `--skeleton` are carried onto it bone by bone through both
//! humanoid maps first.

use std::path::PathBuf;

use anyhow::{Context, Result, bail, ensure};
use ikarus_anim::posture::{self, HumanoidTransfer};
use ikarus_core::LocalPose;
use ikarus_core::humanoid_map::HumanoidMap;

use crate::load;

/// Arguments of `ikarus learn`.
#[derive(clap::Args)]
pub struct Args {
    /// Motion files (BVH, glTF/VRMA with an animation).
    #[arg(required = true)]
    motions: Vec<String>,
    /// The skeleton the model is for: `builtin:humanoid` or a file (default: the first
    /// motion's skeleton).
    #[arg(long)]
    skeleton: Option<String>,
    /// Latent dimensions K.
    #[arg(long, default_value_t = 12)]
    dims: usize,
    /// Use every N-th frame of each motion.
    #[arg(long, default_value_t = 1)]
    every: usize,
    /// The model file to write (JSON).
    #[arg(long)]
    out: PathBuf,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    ensure!(args.dims > 0, "--dims must be at least 1");
    ensure!(args.every > 0, "--every must be at least 1");
    let target = match &args.skeleton {
        Some(source) => load::open(source, None)?.skeleton,
        None => load::open(&args.motions[0], None)?.skeleton,
    };
    let target_map = HumanoidMap::recognise(&target);
    let mut frames: Vec<LocalPose> = Vec::new();
    for source in &args.motions {
        let document = load::open(source, None)?;
        let Some(motion) = document.motion.filter(|m| !m.is_empty()) else {
            bail!("{source}: has no motion frames to learn from");
        };
        let picked = motion.frames().iter().step_by(args.every);
        if document.skeleton.names() == target.names() {
            frames.extend(picked.cloned());
            continue;
        }
        let source_map = HumanoidMap::recognise(&document.skeleton);
        let transfer = HumanoidTransfer::new(&document.skeleton, &source_map, &target, &target_map)
            .filter(|t| t.matched() >= 10)
            .with_context(|| {
                format!(
                    "{source}: its skeleton differs from the model's and the humanoid maps match \
                     too few bones to carry its postures over"
                )
            })?;
        for frame in picked {
            let mut out = target.rest_pose();
            transfer.apply(&document.skeleton, frame, &target, &mut out);
            frames.push(out);
        }
    }
    // The model describes postures the skeleton may take: frames outside its joint limits
    // (carried from a skeleton with other joint types) are moved onto them first.
    let mut projected = 0;
    for frame in &mut frames {
        projected += usize::from(target.project_to_limits(frame) > 0);
    }
    let joints = posture::modelled_joints(&target, Some(&target_map).filter(|m| !m.is_empty()));
    let model = posture::learn(&target, &joints, &frames, args.dims)?;
    std::fs::write(&args.out, model.to_json())
        .with_context(|| format!("writing {}", args.out.display()))?;
    let kept: f64 = model.variances().iter().sum();
    #[allow(clippy::cast_precision_loss)]
    let total = kept + model.noise() * (model.len() - model.dims()) as f64;
    if projected > 0 {
        println!(
            "{projected} of {} frames moved onto the joint limits",
            frames.len()
        );
    }
    println!(
        "{}: {} frames, {} joints, {} dims keeping {:.1}% of the variance",
        args.out.display(),
        model.frames(),
        model.joints().len(),
        model.dims(),
        100.0 * kept / total.max(f64::MIN_POSITIVE)
    );
    Ok(())
}
