//! `ikarus fk`: world joint positions at one frame.

use anyhow::Result;
use ikarus_core::{ModelPose, fk};
use serde::Serialize;

use crate::load;

/// Arguments of `ikarus fk`.
#[derive(clap::Args)]
pub struct Args {
    /// Skeleton: a .bvh, .gltf, .glb, .vrm or .vrma file or `builtin:humanoid`.
    file: String,
    /// Frame to evaluate (0 = first; the rest pose for skeletons without motion).
    #[arg(long, default_value_t = 0)]
    frame: usize,
    /// The glTF animation to evaluate, by name (default: the first).
    #[arg(long)]
    animation: Option<String>,
    /// Print JSON: `{"joints":[{"name":..., "position":[x,y,z]}, ...]}`.
    #[arg(long)]
    json: bool,
    /// Multiply lengths by this factor (e.g. 0.01 for centimetres to metres).
    #[arg(long)]
    scale: Option<f64>,
    /// A VMD motion played on the .pmx/.pmd model, with its IK, at `--frame`.
    #[arg(long)]
    motion: Option<String>,
    /// MMD IK mode with `--motion`.
    #[arg(long, value_enum, default_value_t)]
    mode: crate::mmd::Mode,
}

#[derive(Serialize)]
struct JointPosition<'a> {
    name: &'a str,
    position: [f64; 3],
}

#[derive(Serialize)]
struct Output<'a> {
    joints: Vec<JointPosition<'a>>,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    if let Some(motion) = &args.motion {
        let mut player =
            crate::mmd::open_player(&args.file, motion, args.scale.unwrap_or(1.0), args.mode)?;
        let mut pose = player.skeleton().rest_pose();
        let model = player.evaluate(args.frame as f64, &mut pose).clone();
        return print(player.skeleton(), &model, args.json);
    }
    let document = load::open_animation(&args.file, args.scale, args.animation.as_deref())?;
    let pose = load::frame_pose(&document, args.frame)?;
    let skeleton = &document.skeleton;
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &pose, &mut model);
    print(skeleton, &model, args.json)
}

fn print(skeleton: &ikarus_core::Skeleton, model: &ModelPose, json: bool) -> Result<()> {
    let joints: Vec<JointPosition<'_>> = skeleton
        .joints()
        .map(|j| JointPosition {
            name: skeleton.name(j),
            position: model.position(j).to_array(),
        })
        .collect();
    if json {
        println!("{}", serde_json::to_string_pretty(&Output { joints })?);
    } else {
        let width = joints
            .iter()
            .map(|j| j.name.len())
            .max()
            .unwrap_or(4)
            .max(5);
        println!("{:<width$}  {:>12} {:>12} {:>12}", "joint", "x", "y", "z");
        for j in &joints {
            let [x, y, z] = j.position;
            println!("{:<width$}  {x:>12.6} {y:>12.6} {z:>12.6}", j.name);
        }
    }
    Ok(())
}
