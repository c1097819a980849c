//! `ikarus ground`: humanoid motions made to stand on uneven ground
//! ([`ikarus_anim::ground`]). Motions: BVH, glTF/GLB/VRM with an animation, VRMA. Terrain: a
//! JSON heightfield or plane ([`ikarus_jobs::terrain`]). Output by extension: `.bvh` (the
//! source's layout when it is a BVH), `.glb`, `.vrma`.
//!
//! Several motions run in parallel, one thread per core, each to `--out-dir/NAME.EXT`.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use ikarus_anim::ground::{GroundConfig, ground_motion};
use ikarus_jobs::{Terrain, WriteOptions};

use crate::load::HumanoidMotion;
use crate::many;

/// Arguments of `ikarus ground`.
#[derive(clap::Args)]
pub struct Args {
    /// Motions: `.bvh`, `.gltf`/`.glb`/`.vrm` with an animation, or `.vrma`.
    #[arg(required = true)]
    motions: Vec<PathBuf>,
    /// The ground: JSON, metres, +Y up: `{"heightfield": {"origin": [x0, z0], "cell": c,
    /// "heights": [[...], ...]}}` (`heights[i][j]` at x0 + j·c, z0 + i·c) or `{"plane":
    /// {"point": [x, y, z], "normal": [x, y, z]}}`.
    #[arg(long)]
    terrain: PathBuf,
    /// Multiplies the motions' lengths on reading, to metres (the terrain's unit): e.g. 0.01
    /// for a BVH in centimetres. Default 1.
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Time constant (seconds) of the pelvis's smoothing.
    #[arg(long, default_value_t = 0.1)]
    time_constant: f64,
    /// Where the results go.
    #[command(flatten)]
    output: many::MotionOutput,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    if !(args.scale.is_finite() && args.scale > 0.0) {
        bail!("--scale must be a positive number, got {}", args.scale);
    }
    let terrain = Terrain::read(&args.terrain)?;
    let outputs = args.output.paths(&args.motions, "motion")?;
    many::run_each(
        &args.motions,
        &outputs,
        format!("grounding on {}", args.terrain.display()),
        "motion",
        |i| ground_one(args, &args.motions[i], &outputs[i], &terrain),
    )
}

fn ground_one(args: &Args, source: &Path, output: &Path, terrain: &Terrain) -> Result<String> {
    let clip = HumanoidMotion::open(&source.to_string_lossy(), args.scale, "ground")?;
    let config = GroundConfig {
        time_constant: args.time_constant,
        ..GroundConfig::default()
    };
    let grounded = ground_motion(clip.character(), &clip.motion, terrain, &config)?;
    let extension = output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let options = WriteOptions {
        layout: clip
            .layout
            .clone()
            .filter(|_| extension.as_deref() == Some("bvh")),
        animation: "grounded",
        humanoid: (extension.as_deref() == Some("vrma")).then(|| clip.map.clone()),
        ..WriteOptions::default()
    };
    ikarus_jobs::write_motion(output, &clip.skeleton, &grounded.motion, &options)?;
    let (low, high) = grounded
        .pelvis_offsets
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &o| {
            (l.min(o), h.max(o))
        });
    // Contacts whose foot was moved off a step's edge, and the largest move.
    let shifts = &grounded.shifts;
    let moved: Vec<f64> = (0..2)
        .flat_map(|s| {
            grounded.contacts[s]
                .iter()
                .map(move |&(a, b)| shifts[usize::midpoint(a, b)][s].length())
        })
        .filter(|&d| d > 0.0)
        .collect();
    Ok(format!(
        "{} frames, {} contacts, pelvis moved {:+.1} to {:+.1} cm, {} frames with a foot out of reach, {} contacts moved off a step's edge (up to {:.1} cm)",
        grounded.motion.len(),
        grounded.contacts[0].len() + grounded.contacts[1].len(),
        low * 100.0,
        high * 100.0,
        grounded.unreached,
        moved.len(),
        moved.iter().copied().fold(0.0, f64::max) * 100.0
    ))
}
