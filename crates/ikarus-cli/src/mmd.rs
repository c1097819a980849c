//! The MMD side of `info`, `fk` and `convert`: a model's IK chains, a motion's keys, and a VMD
//! played through a model with its IK ([`ikarus_anim::mmd`]).

use std::path::Path;

use anyhow::{Context, Result, bail};
use ikarus_anim::mmd::{IkMode, MmdEvaluator, MmdSettings};
use ikarus_core::{LocalPose, ModelPose, Skeleton};
use ikarus_formats::mmd::vmd::{BoundMotion, FRAMES_PER_SECOND, Vmd};
use ikarus_formats::mmd::{Built, MmdModel, ModelFormat};
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

/// True for the model extensions (.pmx, .pmd).
pub fn is_model(path: &str) -> bool {
    has_extension(path, &["pmx", "pmd"])
}

/// True for .vmd.
pub fn is_motion(path: &str) -> bool {
    has_extension(path, &["vmd"])
}

fn has_extension(path: &str, extensions: &[&str]) -> bool {
    Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| extensions.iter().any(|x| e.eq_ignore_ascii_case(x)))
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
    if json {
        println!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(());
    }
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
    Ok(())
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
    if json {
        println!("{}", serde_json::to_string_pretty(&info)?);
        return Ok(());
    }
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
    Ok(())
}

fn build(model: &MmdModel, file: &str) -> Result<Built> {
    model
        .build()
        .map_err(|message| anyhow::anyhow!("{file}: {message}"))
}

/// A model with a motion bound to it, ready to evaluate frames.
pub struct Player {
    /// The model's skeleton, rig and mesh.
    pub built: Built,
    /// The model's name.
    pub model_name: String,
    motion: BoundMotion,
    evaluator: MmdEvaluator,
    animated: LocalPose,
    model_frames: ModelPose,
    /// The motion's last keyed frame.
    pub last_frame: u32,
}

impl Player {
    /// Loads `model` (.pmx/.pmd) and `motion` (.vmd), lengths times `scale`.
    pub fn open(model: &str, motion: &str, scale: f64, mode: Mode) -> Result<Self> {
        if !is_model(model) {
            bail!("{model}: `--motion` plays a VMD on a .pmx or .pmd model");
        }
        if !(scale.is_finite() && scale > 0.0) {
            bail!("--scale {scale}: expected a finite positive factor");
        }
        let parsed = ikarus_formats::read_mmd_model(Path::new(model), scale)?;
        let built = build(&parsed, model)?;
        let vmd = ikarus_formats::read_vmd(Path::new(motion), scale)?;
        let bound = BoundMotion::new(&vmd, &built.skeleton);
        if !bound.unmatched.is_empty() {
            eprintln!(
                "{motion}: {} keyed bones are not in {model} and are ignored: {}",
                bound.unmatched.len(),
                bound.unmatched.join(", ")
            );
        }
        let settings = MmdSettings {
            mode: match mode {
                Mode::Compatible => IkMode::Compatible,
                Mode::Exact => IkMode::Exact,
            },
            ..MmdSettings::default()
        };
        let evaluator = MmdEvaluator::new(&built.skeleton, &built.rig, settings)
            .map_err(|m| anyhow::anyhow!("{model}: {m}"))?;
        let last_frame = vmd.bones.iter().map(|k| k.frame).max().unwrap_or(0);
        Ok(Self {
            animated: built.skeleton.rest_pose(),
            model_frames: ModelPose::new(&built.skeleton),
            model_name: parsed.name,
            built,
            motion: bound,
            evaluator,
            last_frame,
        })
    }

    /// The skeleton.
    pub fn skeleton(&self) -> &Skeleton {
        &self.built.skeleton
    }

    /// Evaluates `frame` with IK into `out`; returns the model frames.
    pub fn evaluate(&mut self, frame: f64, out: &mut LocalPose) -> &ModelPose {
        let skeleton = &self.built.skeleton;
        self.motion.sample(skeleton, frame, &mut self.animated);
        let enabled: Vec<bool> = self
            .evaluator
            .chain_names()
            .iter()
            .map(|n| self.motion.ik_enabled(n, frame))
            .collect();
        self.evaluator.evaluate(
            skeleton,
            &self.animated,
            &enabled,
            out,
            &mut self.model_frames,
        );
        &self.model_frames
    }

    /// Every frame 0..=last evaluated, with a progress bar.
    pub fn all_frames(&mut self) -> Vec<LocalPose> {
        let count = u64::from(self.last_frame) + 1;
        let progress = indicatif::ProgressBar::new(count).with_message("evaluating frames with IK");
        let mut out = self.built.skeleton.rest_pose();
        let mut frames = Vec::with_capacity(count as usize);
        for frame in 0..=self.last_frame {
            self.evaluate(f64::from(frame), &mut out);
            frames.push(out.clone());
            progress.inc(1);
        }
        progress.finish_and_clear();
        frames
    }
}

/// `ikarus convert MODEL --motion M.vmd OUT.bvh|OUT.vmd`.
pub fn convert(model: &str, motion: &str, output: &Path, scale: f64, mode: Mode) -> Result<()> {
    let extension = output
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase);
    let mut player = Player::open(model, motion, scale, mode)?;
    let frames = player.all_frames();
    match extension.as_deref() {
        Some("bvh") => {
            let mut clip =
                ikarus_core::Motion::for_skeleton(player.skeleton(), 1.0 / FRAMES_PER_SECOND)?;
            for frame in frames {
                clip.push(frame)?;
            }
            let layout = ikarus_formats::bvh::BvhLayout::for_motion(player.skeleton(), Some(&clip));
            ikarus_formats::bvh::Bvh::from_motion(player.skeleton(), &clip, layout)?
                .write(output)?;
        }
        Some("vmd") => {
            let vmd = Vmd::from_frames(player.skeleton(), &frames, &player.model_name)
                .map_err(|m| anyhow::anyhow!("{}: {m}", output.display()))?;
            let bytes = vmd
                .write(scale)
                .map_err(|m| anyhow::anyhow!("{}: {m}", output.display()))?;
            std::fs::write(output, bytes)
                .with_context(|| format!("writing {}", output.display()))?;
        }
        _ => bail!(
            "{}: unknown output format (expected .bvh or .vmd)",
            output.display()
        ),
    }
    eprintln!(
        "wrote {} ({} bones, {} frames at 30 fps, IK evaluated)",
        output.display(),
        player.skeleton().len(),
        player.last_frame + 1
    );
    Ok(())
}
