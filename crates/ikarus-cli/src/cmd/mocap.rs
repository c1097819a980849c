//! `ikarus mocap`: motion capture to posture. Keypoint files (JSON, CSV, `.npy`) or segment
//! orientations (JSON with `segments`) onto a skeleton (`builtin:humanoid` by default, or any
//! BVH / glTF / VRM / PMX whose bones the humanoid map recognises), written as BVH.
//!
//! Several inputs are solved in parallel, one thread per core, each to `--out-dir/NAME.FORMAT`
//! (BVH, GLB or VRMA, written by [`ikarus_jobs::write_motion`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, ensure};
use glam::{DQuat, DVec3};
use ikarus_anim::mocap::orientations::OrientationCalibration;
use ikarus_anim::mocap::{
    BoneLengths, KeypointClip, Layout, MocapConfig, MocapReport, OneEuro, UpAxis, solve_positions,
};
use ikarus_anim::retarget::ContactConfig;
use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap};
use ikarus_core::{Motion, Skeleton};
use ikarus_formats::bvh::BvhLayout;
use ikarus_formats::keypoints;
use ikarus_jobs::WriteOptions;

use crate::{load, many};

/// Arguments of `ikarus mocap`.
#[derive(clap::Args)]
pub struct Args {
    /// Keypoint files (`.json`, `.csv`, `.npy`) or segment-orientation JSON files; with one
    /// input, a trailing `OUT.bvh` / `.glb` / `.vrma` names the output (as `--out` does).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Keypoint layout: h36m, coco, halpe, mediapipe, smpl22, smpl24 or skeleton (names as
    /// the target's joints, from the file's `names`). Default: the file's `layout`.
    #[arg(long)]
    layout: Option<String>,
    /// Target skeleton: `builtin:humanoid` or a BVH / glTF / VRM / PMX file.
    #[arg(long, visible_alias = "skeleton", default_value = "builtin:humanoid")]
    to: String,
    /// Frames per second (default: the file's `fps`, else 30).
    #[arg(long)]
    fps: Option<f64>,
    /// Unit of the input's coordinates.
    #[arg(long, default_value = "m", value_parser = ["m", "cm", "mm"])]
    units: String,
    /// Up axis of the input (default: the layout's usual one: -y for mediapipe, else y).
    #[arg(long, value_parser = ["y", "z", "-y"], allow_hyphen_values = true)]
    up: Option<String>,
    /// Temporal filter on the points before solving.
    #[arg(long, value_parser = ["one-euro"])]
    filter: Option<String>,
    /// Bone lengths: fit (median per bone over the clip), keep (the target's, scaled as a
    /// whole) or per-frame (stretch to every frame's lengths).
    #[arg(long, default_value = "fit", value_parser = ["fit", "keep", "per-frame"])]
    bone_lengths: String,
    /// Points with a lower confidence count as missing.
    #[arg(long, default_value_t = 0.3)]
    min_confidence: f64,
    /// Foot-contact cleanup: feet planted in the clip (low and slow, with hysteresis) held
    /// still and kept above the clip's floor by the leg IK.
    #[arg(long)]
    contacts: bool,
    /// Output file (one input); its extension picks the format: bvh, glb or vrma.
    #[arg(long, conflicts_with = "out_dir")]
    out: Option<PathBuf>,
    /// Output directory (any number of inputs; `NAME.FORMAT` each).
    #[arg(long)]
    out_dir: Option<PathBuf>,
    /// Output format with `--out-dir`: bvh (default), glb (a new GLB of the skeleton and its
    /// animation) or vrma (VRM animation through the target's humanoid map).
    #[arg(long, default_value = "bvh", value_parser = ["bvh", "glb", "vrma"])]
    format: String,
}

/// Runs the subcommand.
pub fn run(args: &Args) -> Result<()> {
    let (inputs, trailing) =
        trailing_output(&args.inputs, args.out.is_some() || args.out_dir.is_some());
    let outputs = many::outputs(
        inputs,
        args.out.as_deref().or(trailing),
        args.out_dir.as_deref(),
        &args.format,
        "input",
    )?;
    let document = load::open(&args.to, None)?;
    let skeleton = document.skeleton;
    // A VRM's declared humanoid bones, else the ones recognised from joint names.
    let map = ikarus_formats::humanoid_map(&args.to, &skeleton)?;
    many::run_each(
        inputs,
        &outputs,
        format!("solving onto {}", args.to),
        "input",
        |i| convert(args, &inputs[i], &outputs[i], &skeleton, &map),
    )
}

/// `ikarus mocap IN OUT.bvh`: with no `--out`/`--out-dir`, two paths of which the last has an
/// output extension (`bvh`, `glb`, `vrma`; never an input's) are one input and its output.
fn trailing_output(inputs: &[PathBuf], out_given: bool) -> (&[PathBuf], Option<&Path>) {
    let is_output = |p: &Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ["bvh", "glb", "vrma"].contains(&e.to_ascii_lowercase().as_str()))
    };
    match inputs {
        [input, output] if !out_given && is_output(output) => {
            (std::slice::from_ref(input), Some(output.as_path()))
        }
        _ => (inputs, None),
    }
}

fn convert(
    args: &Args,
    input: &Path,
    output: &Path,
    skeleton: &Skeleton,
    map: &HumanoidMap,
) -> Result<String> {
    let is_segments = input
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        && std::fs::read_to_string(input).is_ok_and(|t| keypoints::is_segment_json(&t));
    let (motion, summary) = if is_segments {
        orientations(args, input, skeleton, map)?
    } else {
        positions(args, input, skeleton, map)?
    };
    let (skeleton, motion) = motion;
    let is_vrma = output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("vrma"));
    let options = WriteOptions {
        layout: Some(BvhLayout::for_motion(&skeleton, Some(&motion))),
        humanoid: is_vrma.then(|| map.clone()),
        ..WriteOptions::default()
    };
    ikarus_jobs::write_motion(output, &skeleton, &motion, &options)?;
    if output
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("bvh"))
    {
        crate::note_renamed(output, &ikarus_formats::bvh::renamed_joints(&skeleton));
        crate::note_bvh_root(
            output,
            ikarus_formats::bvh::shared_root(&skeleton).as_deref(),
        );
    }
    Ok(summary)
}

type Solved = ((Skeleton, Motion), String);

fn positions(args: &Args, input: &Path, skeleton: &Skeleton, map: &HumanoidMap) -> Result<Solved> {
    let file = keypoints::read(input)?;
    let layout_name = args
        .layout
        .clone()
        .or_else(|| file.layout.clone())
        .context("no --layout given and the file names none")?;
    let layout = if layout_name.eq_ignore_ascii_case("skeleton") {
        let names = file
            .names
            .clone()
            .context("layout `skeleton` needs point names (JSON `names` or a CSV header)")?;
        Layout::Skeleton(names)
    } else {
        Layout::from_name(&layout_name)?
    };
    ensure!(
        file.points_per_frame == layout.len(),
        "the file has {} points a frame, layout {layout} has {}",
        file.points_per_frame,
        layout.len()
    );
    let unit = match args.units.as_str() {
        "cm" => 0.01,
        "mm" => 0.001,
        _ => 1.0,
    };
    let up = match args.up.as_deref() {
        Some("z") => UpAxis::Z,
        Some("-y") => UpAxis::NegY,
        Some(_) => UpAxis::Y,
        None => layout.usual_up(),
    };
    let points: Vec<DVec3> = file.points.iter().map(|p| up.to_y_up(*p * unit)).collect();
    let fps = args.fps.or(file.fps).unwrap_or(30.0);
    ensure!(
        fps.is_finite() && fps > 0.0,
        "--fps {fps}: expected a positive rate"
    );
    let clip = KeypointClip {
        layout: &layout,
        frame_time: 1.0 / fps,
        points: &points,
        confidence: file.confidence.as_deref(),
    };
    let config = MocapConfig {
        bone_lengths: match args.bone_lengths.as_str() {
            "keep" => BoneLengths::Keep,
            "per-frame" => BoneLengths::PerFrame,
            _ => BoneLengths::Fit,
        },
        filter: args.filter.as_ref().map(|_| OneEuro::default()),
        min_confidence: args.min_confidence,
        contacts: args.contacts.then(ContactConfig::default),
    };
    let result = solve_positions(skeleton, map, &clip, &config)?;
    let summary = describe(&result.report, &layout);
    Ok(((result.skeleton, result.motion), summary))
}

fn describe(report: &MocapReport, layout: &Layout) -> String {
    let mut line = format!(
        "{} frames, {layout} {}/{} points used, {} filled, scale {:.3}, FK error mean {:.1} mm max {:.1} mm",
        report.frames,
        report.used,
        layout.len(),
        report.filled,
        report.scale,
        report.mean_error * 1e3,
        report.max_error * 1e3
    );
    if report.contacts > 0 {
        let _ = write!(line, ", {} foot contacts held", report.contacts);
        if report.contacts_unreached > 0 {
            let _ = write!(line, " ({} frames out of reach)", report.contacts_unreached);
        }
    }
    if !report.unused.is_empty() {
        line.push_str("; unused: ");
        line.push_str(&report.unused.join(", "));
    }
    line
}

fn orientations(
    args: &Args,
    input: &Path,
    skeleton: &Skeleton,
    map: &HumanoidMap,
) -> Result<Solved> {
    let file = keypoints::read_segments(input)?;
    let joints = file
        .segments
        .iter()
        .map(|name| {
            HumanoidBone::from_vrm_name(name)
                .and_then(|b| map.joint(b))
                .or_else(|| skeleton.joint(name))
                .with_context(|| format!("segment `{name}` is neither a humanoid bone of the target nor one of its joints"))
        })
        .collect::<Result<Vec<_>>>()?;
    let n = joints.len();
    let frame = |f: usize| &file.orientations[f * n..(f + 1) * n];
    let calibration = OrientationCalibration::from_rest_frame(
        skeleton,
        &joints,
        frame(file.calibration_frame),
        DQuat::IDENTITY,
    )?;
    let fps = args.fps.or(file.fps).unwrap_or(60.0);
    ensure!(
        fps.is_finite() && fps > 0.0,
        "--fps {fps}: expected a positive rate"
    );
    let mut motion = Motion::for_skeleton(skeleton, 1.0 / fps)?;
    let mut pose = skeleton.rest_pose();
    let frames = file.orientations.len() / n;
    for f in 0..frames {
        let root = file.root_positions.as_ref().map(|p| p[f]);
        calibration
            .solve_frame(skeleton, frame(f), root, &mut pose)
            .with_context(|| format!("frame {f}"))?;
        motion.push(pose.clone())?;
    }
    let summary = format!(
        "{frames} frames of {n} segment orientations, calibrated on frame {}",
        file.calibration_frame
    );
    Ok(((skeleton.clone(), motion), summary))
}
