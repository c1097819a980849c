//! `ikarus`: inverse kinematics for articulated figures from the command line.

mod cmd;
mod load;
mod many;
mod mmd;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Inverse kinematics for characters, motion capture and robots.
#[derive(Parser)]
#[command(name = "ikarus", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Summarise a skeleton or motion file: joints, channels, frames, rate, height, up axis.
    Info(cmd::info::Args),
    /// World position of every joint at one frame.
    Fk(cmd::fk::Args),
    /// Convert between formats, rescale lengths, resample frame rate.
    Convert(cmd::convert::Args),
    /// Solve an IK task described in JSON and write the report and pose as JSON.
    Solve(cmd::solve::Args),
    /// A smooth motion between postures (minimum angular acceleration, via points), as BVH.
    Motion(cmd::motion::Args),
    /// Solve many targets for one URDF chain in parallel (TRAC-IK style), results as JSON.
    Batch(cmd::batch::Args),
    /// Motion capture to posture: 3-D keypoints or segment orientations onto a skeleton, as BVH.
    Mocap(cmd::mocap::Args),
    /// Learn a posture model (probabilistic PCA on joint rotations) from motions, for the
    /// example-based solver.
    Learn(cmd::learn::Args),
    /// Motions onto another humanoid (BVH, glTF/VRM, VRMA, VMD → any humanoid) with planted feet.
    Retarget(cmd::retarget::Args),
    /// Humanoid motions made to stand on a slope, stairs or a heightfield (JSON terrain).
    Ground(cmd::ground::Args),
    /// An avatar posed from VR trackers (head and hands, hips, feet: JSON or CSV), as BVH/GLB/VRMA.
    Track(cmd::track::Args),
    /// The interactive viewer: a page on 127.0.0.1 to drag targets with every solver.
    Serve(cmd::serve::Args),
    /// Run the main job on the built-in humanoid: every solver, a table, a BVH of the result.
    Demo(cmd::demo::Args),
}

/// A reader that closes the pipe early (`ikarus fk … | head`) makes `println!` fail with a
/// broken pipe, which Rust reports as a panic. The output was wanted only up to there, as with
/// any Unix tool, so that one panic ends the program quietly with success; every other panic
/// keeps the default report.
fn quiet_on_closed_pipe() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if message.contains("failed printing to stdout") && message.contains("Broken pipe") {
            std::process::exit(0);
        }
        default(info);
    }));
}

fn main() -> ExitCode {
    quiet_on_closed_pipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Info(args) => cmd::info::run(&args),
        Command::Fk(args) => cmd::fk::run(&args),
        Command::Convert(args) => cmd::convert::run(&args),
        Command::Solve(args) => cmd::solve::run(&args),
        Command::Demo(args) => cmd::demo::run(&args),
        Command::Batch(args) => cmd::batch::run(&args),
        Command::Motion(args) => cmd::motion::run(&args),
        Command::Serve(args) => cmd::serve::run(&args),
        Command::Mocap(args) => cmd::mocap::run(&args),
        Command::Learn(args) => cmd::learn::run(&args),
        Command::Retarget(args) => cmd::retarget::run(&args),
        Command::Ground(args) => cmd::ground::run(&args),
        Command::Track(args) => cmd::track::run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", many::one_line(&error));
            ExitCode::FAILURE
        }
    }
}

/// Says that a `.bvh` output put the skeleton's several roots under one channel-less `ROOT`
/// (see [`ikarus_formats::bvh::shared_root`]).
fn note_bvh_root(output: &std::path::Path, root: Option<&str>) {
    if let Some(root) = root {
        eprintln!(
            "{}: the skeleton's roots written under one channel-less ROOT `{root}` (BVH has one \
             root)",
            output.display()
        );
    }
}

/// Says which joints a `.bvh` output names otherwise (BVH names are single tokens; see
/// [`ikarus_formats::bvh::token_names`]).
fn note_renamed(output: &std::path::Path, renamed: &[(String, String)]) {
    if renamed.is_empty() {
        return;
    }
    let pairs: Vec<String> = renamed
        .iter()
        .map(|(from, to)| format!("`{from}` → `{to}`"))
        .collect();
    eprintln!(
        "{}: {} joint names written as single tokens (BVH cannot quote names): {}",
        output.display(),
        renamed.len(),
        pairs.join(", ")
    );
}
