//! `ikarus info` for glTF, GLB, VRM and VRMA files: nodes, skins, animations, the VRM humanoid.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use ikarus_formats::gltf::GltfFile;
use serde::Serialize;

#[derive(Serialize)]
struct Skin {
    name: String,
    joints: usize,
}

#[derive(Serialize)]
struct Animation {
    name: String,
    duration: f64,
}

#[derive(Serialize)]
struct Info {
    file: String,
    nodes: usize,
    skins: Vec<Skin>,
    animations: Vec<Animation>,
    /// VRM bone name → node name.
    #[serde(skip_serializing_if = "Option::is_none")]
    humanoid: Option<BTreeMap<String, String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vrm: Option<String>,
}

/// True when the file's extension is one of glTF's.
pub fn is_gltf(file: &str) -> bool {
    Path::new(file)
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ["gltf", "glb", "vrm", "vrma"].contains(&e.to_ascii_lowercase().as_str()))
}

/// Prints the summary.
pub fn run(file: &str, json: bool) -> Result<()> {
    let gltf = GltfFile::read(Path::new(file))?;
    let nodes = gltf.nodes();
    let humanoid = gltf.vrm_humanoid()?;
    let info = Info {
        file: file.to_owned(),
        nodes: nodes.len(),
        skins: gltf
            .skins()
            .into_iter()
            .map(|(name, joints)| Skin { name, joints })
            .collect(),
        animations: gltf
            .animations()?
            .into_iter()
            .map(|(name, duration)| Animation { name, duration })
            .collect(),
        vrm: humanoid.as_ref().map(|h| format!("{:?}", h.version)),
        humanoid: humanoid.map(|h| {
            h.bones
                .iter()
                .map(|&(bone, node)| (bone.vrm_name().to_owned(), nodes[node].name.clone()))
                .collect()
        }),
    };
    super::info::print_info(&info, json, |info| {
        println!("file:       {}", info.file);
        println!("nodes:      {}", info.nodes);
        for skin in &info.skins {
            println!("skin:       {} ({} joints)", skin.name, skin.joints);
        }
        for animation in &info.animations {
            println!(
                "animation:  {} ({:.3} s)",
                animation.name, animation.duration
            );
        }
        if let (Some(version), Some(humanoid)) = (&info.vrm, &info.humanoid) {
            println!("humanoid:   {} bones ({version})", humanoid.len());
            for (bone, node) in humanoid {
                println!("  {bone:<24} {node}");
            }
        }
    })
}
