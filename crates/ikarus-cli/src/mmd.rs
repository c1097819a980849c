//! The MMD side of `info`, `fk`, `convert` and `retarget`: a model's IK chains, a motion's keys,
//! and the `--mode` of a VMD played through a model with its IK ([`ikarus_jobs::MmdPlayer`]).

use std::path::Path;

use anyhow::Result;
use ikarus_formats::mmd::vmd::FRAMES_PER_SECOND;
use ikarus_formats::mmd::{Built, MmdModel, ModelFormat};
use ikarus_jobs::{IkMode, MmdPlayer};
use serde::Serialize;

/// `--mode` for MMD evaluation.
#[derive(Clone, Copy, Debug, Default, clap::ValueEnum)]
pub enum Mode {
    /// MMD's iteration budget and residuals.
    #[default]
    Compatible,
    /// Reachable IK goals met to 1e-4 MMD units, limits kept.
    Exact,
}

impl From<Mode> for IkMode {
    fn from(mode: Mode) -> Self {
        match mode {
            Mode::Compatible => IkMode::Compatible,
            Mode::Exact => IkMode::Exact,
        }
    }
}

/// True for the model extensions (.pmx, .pmd).
pub fn is_model(path: &str) -> bool {
    ikarus_jobs::is_mmd_model(Path::new(path))
}

/// True for .vmd.
pub fn is_motion(path: &str) -> bool {
    ikarus_jobs::is_vmd(Path::new(path))
}

#[derive(Serialize)]
struct LinkInfo {
    bone: String,
    /// Euler X-Y-Z limits in degrees (right-handed), when the link has one.
    limit: Option<LimitInfo>,
}

#[derive(Serialize)]
struct LimitInfo {
    min_degrees: [f64; 3],
    max_degrees: [f64; 3],
}

#[derive(Serialize)]
struct ChainInfo {
    ik_bone: String,
    target: String,
    links: Vec<LinkInfo>,
    iterations: u32,
    unit_angle: f64,
}

#[derive(Serialize)]
struct ModelInfo {
    file: String,
    format: String,
    name: String,
    english_name: String,
    bones: usize,
    vertices: usize,
    triangles: usize,
    materials: usize,
    morphs: usize,
    rigid_bodies: usize,
    joints: usize,
    ik_chains: Vec<ChainInfo>,
}

/// `ikarus info MODEL.pmx|pmd`.
pub fn info_model(file: &str, json: bool) -> Result<()> {
    let model = ikarus_formats::read_mmd_model(Path::new(file), 1.0)?;
    let built = build(&model, file)?;
    let name = |j| built.skeleton.name(j).to_owned();
    let info = ModelInfo {
        file: file.to_owned(),
        format: match model.format {
            ModelFormat::Pmx(v) => format!("PMX {v:.1}"),
            ModelFormat::Pmd => "PMD".to_owned(),
        },
        name: model.name.clone(),
        english_name: model.english_name.clone(),
        bones: model.bones.len(),
        vertices: model.vertices.len(),
        triangles: model.indices.len() / 3,
        materials: model.materials.len(),
        morphs: model.morph_count,
        rigid_bodies: model.rigid_body_count,
        joints: model.joint_count,
        ik_chains: built
            .rig
            .ik
            .iter()
            .map(|c| ChainInfo {
                ik_bone: name(c.goal),
                target: name(c.effector),
                links: c
                    .links
                    .iter()
                    .map(|l| LinkInfo {
                        bone: name(l.joint),
                        limit: l.limit.map(|limit| LimitInfo {
                            min_degrees: limit.min.map(f64::to_degrees),
                            max_degrees: limit.max.map(f64::to_degrees),
                        }),
                    })
                    .collect(),
                iterations: c.iterations,
                unit_angle: c.unit_angle,
            })
            .collect(),
    };
    crate::cmd::info::print_info(&info, json, |info| {
        println!("file:       {}", info.file);
        println!("format:     {}", info.format);
        println!("name:       {} ({})", info.name, info.english_name);
        println!("bones:      {}", info.bones);
        println!(
            "mesh:       {} vertices, {} triangles, {} materials",
            info.vertices, info.triangles, info.materials
        );
        println!(
            "parsed past: {} morphs, {} rigid bodies, {} joints",
            info.morphs, info.rigid_bodies, info.joints
        );
        println!("IK chains:  {}", info.ik_chains.len());
        for chain in &info.ik_chains {
            let links: Vec<&str> = chain.links.iter().map(|l| l.bone.as_str()).collect();
            println!(
                "  {} -> {} ({} loops, unit {:.3} rad): {}",
                chain.ik_bone,
                chain.target,
                chain.iterations,
                chain.unit_angle,
                links.join(", ")
            );
        }
    })
}

#[derive(Serialize)]
struct MotionInfo {
    file: String,
    model_name: String,
    frames: u32,
    frame_rate: f64,
    bone_keys: usize,
    morph_keys: usize,
    camera_keys: usize,
    ik_property_keys: usize,
    keyed_bones: Vec<String>,
}

/// `ikarus info MOTION.vmd`.
pub fn info_motion(file: &str, json: bool) -> Result<()> {
    let vmd = ikarus_formats::read_vmd(Path::new(file), 1.0)?;
    let info = MotionInfo {
        file: file.to_owned(),
        model_name: vmd.model_name.clone(),
        frames: vmd.last_frame() + 1,
        frame_rate: FRAMES_PER_SECOND,
        bone_keys: vmd.bones.len(),
        morph_keys: vmd.morphs.len(),
        camera_keys: vmd.camera.len(),
        ik_property_keys: vmd.properties.len(),
        keyed_bones: vmd.keyed_bones().into_iter().map(str::to_owned).collect(),
    };
    crate::cmd::info::print_info(&info, json, |info| {
        println!("file:       {}", info.file);
        println!("model:      {}", info.model_name);
        println!("frames:     {} at {} fps", info.frames, info.frame_rate);
        println!(
            "keys:       {} bone, {} morph, {} camera, {} IK property",
            info.bone_keys, info.morph_keys, info.camera_keys, info.ik_property_keys
        );
        println!(
            "keyed bones ({}): {}",
            info.keyed_bones.len(),
            info.keyed_bones.join(", ")
        );
    })
}

fn build(model: &MmdModel, file: &str) -> Result<Built> {
    model
        .build()
        .map_err(|message| anyhow::anyhow!("{file}: {message}"))
}

/// Opens `model` with `motion` played on it ([`ikarus_jobs::MmdPlayer`]), warning on stderr
/// about keyed bones the model lacks.
pub fn open_player(model: &str, motion: &str, scale: f64, mode: Mode) -> Result<MmdPlayer> {
    let player = MmdPlayer::open(Path::new(model), Path::new(motion), scale, mode.into())?;
    warn_unmatched(motion, model, &player.unmatched);
    Ok(player)
}

/// Warns on stderr about a VMD's keyed bones that its model lacks.
pub fn warn_unmatched(motion: &str, model: &str, unmatched: &[String]) {
    if !unmatched.is_empty() {
        eprintln!(
            "{motion}: {} keyed bones are not in {model} and are ignored: {}",
            unmatched.len(),
            unmatched.join(", ")
        );
    }
}
