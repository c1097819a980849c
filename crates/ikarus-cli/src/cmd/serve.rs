//! `ikarus serve`: the interactive viewer in the browser (see the `ikarus-viewer` crate for the
//! page and its WebSocket protocol).

use anyhow::{Context, Result};
use ikarus_viewer::Catalog;

/// Arguments of `ikarus serve`.
#[derive(clap::Args)]
pub struct Args {
    /// Files to open (BVH, URDF, PMX/PMD, glTF/GLB/VRM/VRMA); the page starts on the first, or
    /// on `builtin:humanoid`.
    files: Vec<String>,
    /// A VMD motion for the MMD model among the files (played with the model's IK).
    #[arg(long)]
    motion: Option<String>,
    /// Port on 127.0.0.1 (0 picks a free one).
    #[arg(long, default_value_t = 8765)]
    port: u16,
}

/// Runs the subcommand until the process is stopped.
pub fn run(args: &Args) -> Result<()> {
    let mut catalog = Catalog::open(&args.files)?;
    if let Some(motion) = &args.motion {
        catalog.attach_motion(motion)?;
    }
    ikarus_viewer::run(args.port, catalog, |address| {
        println!("ikarus viewer on http://{address}/ (Ctrl-C stops it)");
    })
    .with_context(|| format!("cannot serve on 127.0.0.1:{}", args.port))
}
