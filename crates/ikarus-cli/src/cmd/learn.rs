//! `ikarus learn`: a posture model (probabilistic PCA on joint rotations) from motions, for the
//! example-based solver (`{"kind": "example", "model": FILE}`).
//!
//! Motions of another skeleton than `--skeleton` are carried onto it bone by bone through both
//! humanoid maps first.

use std::path::PathBuf;

use anyhow::{Context, Result, bail, ensure};
use ikarus_anim::posture::{self, LearnError};

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
    let mut documents = Vec::with_capacity(args.motions.len());
    for source in &args.motions {
        let document = load::open(source, None)?;
        let Some(motion) = document.motion else {
            bail!("{source}: has no motion frames to learn from");
        };
        documents.push((document.skeleton, motion));
    }
    let motions: Vec<_> = documents.iter().map(|(s, m)| (s, m)).collect();
    let learned = posture::learn_from_motions(&target, &motions, args.dims, args.every).map_err(
        |e| match e {
            LearnError::EmptyMotion { motion } | LearnError::Unmatched { motion, .. } => {
                anyhow::anyhow!("{}: {e}", args.motions[motion])
            }
            e => e.into(),
        },
    )?;
    let (model, projected) = (learned.model, learned.projected);
    std::fs::write(&args.out, model.to_json())
        .with_context(|| format!("writing {}", args.out.display()))?;
    let kept: f64 = model.variances().iter().sum();
    #[allow(clippy::cast_precision_loss)]
    let total = kept + model.noise() * (model.len() - model.dims()) as f64;
    if projected > 0 {
        println!(
            "{projected} of {} frames moved onto the joint limits",
            model.frames()
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
