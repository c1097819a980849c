//! `ikarus info`: a summary of a skeleton or motion file.

use anyhow::Result;
use glam::DVec3;
use ikarus_core::{ModelPose, Skeleton, fk};
use serde::Serialize;

use crate::load;

/// Arguments of `ikarus info`.
#[derive(clap::Args)]
pub struct Args {
    /// Skeleton: a .bvh, .urdf, .pmx, .pmd, .gltf, .glb, .vrm or .vrma file, a .vmd motion, or
    /// `builtin:humanoid`.
    file: String,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Multiply lengths by this factor before measuring.
    #[arg(long)]
    scale: Option<f64>,
}

#[derive(Serialize)]
struct Info {
    file: String,
    joints: usize,
    end_sites: usize,
    channels: usize,
    frames: usize,
    frame_rate: Option<f64>,
    frame_time: Option<f64>,
    duration: f64,
    height: f64,
    up_axis: String,
    roots: Vec<String>,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    if crate::mmd::is_model(&args.file) {
        return crate::mmd::info_model(&args.file, args.json);
    }
    if crate::mmd::is_motion(&args.file) {
        return crate::mmd::info_motion(&args.file, args.json);
    }
    if crate::cmd::gltf_info::is_gltf(&args.file) {
        return crate::cmd::gltf_info::run(&args.file, args.json);
    }
    let document = load::open(&args.file, args.scale)?;
    let skeleton = &document.skeleton;
    let layout = document.layout_or_default();
    let end_sites = layout.joints.iter().filter(|j| j.end_site).count();
    let pose = load::frame_pose(&document, 0)?;
    let mut model = ModelPose::new(skeleton);
    fk::forward_kinematics(skeleton, &pose, &mut model);
    let positions: Vec<DVec3> = model.positions().collect();
    let (axis, sign) = up_axis(skeleton, &positions);
    let height = positions.iter().map(|p| p[axis]).fold(f64::MIN, f64::max)
        - positions.iter().map(|p| p[axis]).fold(f64::MAX, f64::min);
    let motion = document.motion.as_ref();
    let info = Info {
        file: args.file.clone(),
        joints: skeleton.len() - end_sites,
        end_sites,
        channels: layout.channel_count(),
        frames: motion.map_or(0, ikarus_core::Motion::len),
        frame_rate: motion.map(ikarus_core::Motion::frame_rate),
        frame_time: motion.map(ikarus_core::Motion::frame_time),
        duration: motion.map_or(0.0, |m| m.len() as f64 * m.frame_time()),
        height,
        up_axis: format!(
            "{}{}",
            if sign > 0.0 { '+' } else { '-' },
            ['X', 'Y', 'Z'][axis]
        ),
        roots: skeleton
            .roots()
            .map(|r| skeleton.name(r).to_owned())
            .collect(),
    };
    print_info(&info, args.json, |info| {
        println!("file:       {}", info.file);
        println!(
            "joints:     {} (+{} end sites)",
            info.joints, info.end_sites
        );
        println!("roots:      {}", info.roots.join(", "));
        println!("channels:   {} per frame", info.channels);
        match (info.frame_rate, info.frame_time) {
            (Some(rate), Some(time)) => {
                println!("frames:     {}", info.frames);
                println!("frame rate: {rate:.3} fps (frame time {time} s)");
                println!("duration:   {:.3} s", info.duration);
            }
            _ => println!("frames:     none (skeleton only)"),
        }
        println!(
            "height:     {:.4} (file units x scale, joint extent along the up axis, first frame)",
            info.height
        );
        println!("up axis:    {} (guessed)", info.up_axis);
    })
}

/// Guesses the up axis: humanoid bones are mostly vertical (spine, legs), so the axis carrying
/// the largest sum of absolute bone components is the vertical one. Its sign comes from the
/// first branching joint (the pelvis): its largest child subtree is the spine with arms and
/// head, the others are the legs, and legs point down — even when the hands hang below the hips.
/// Prints a summary: as pretty JSON with `--json`, else as `text` writes it.
pub fn print_info<T: Serialize>(info: &T, json: bool, text: impl FnOnce(&T)) -> Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(info)?);
    } else {
        text(info);
    }
    Ok(())
}

fn up_axis(skeleton: &Skeleton, positions: &[DVec3]) -> (usize, f64) {
    let mut sum = DVec3::ZERO;
    for j in skeleton.joints() {
        if let Some(p) = skeleton.parent(j) {
            sum += (positions[j.index()] - positions[p.index()]).abs();
        }
    }
    let axis = if sum.x >= sum.y && sum.x >= sum.z {
        0
    } else if sum.y >= sum.z {
        1
    } else {
        2
    };
    let Some(mut branch) = skeleton.roots().next() else {
        return (axis, 1.0);
    };
    while let [only] = skeleton.children(branch).collect::<Vec<_>>()[..] {
        branch = only;
    }
    let children: Vec<_> = skeleton.children(branch).collect();
    let Some(&largest) = children.iter().max_by_key(|&&c| skeleton.subtree(c).len()) else {
        return (axis, 1.0);
    };
    let legs: Vec<usize> = children
        .iter()
        .filter(|&&c| c != largest)
        .flat_map(|&c| skeleton.subtree(c))
        .collect();
    let legs_mean = legs.iter().map(|&i| positions[i][axis]).sum::<f64>() / legs.len() as f64;
    (
        axis,
        if legs_mean <= positions[branch.index()][axis] {
            1.0
        } else {
            -1.0
        },
    )
}
