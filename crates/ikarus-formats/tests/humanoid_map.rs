//! The humanoid bone map recognises the required bones in every shared BVH file and every
//! humanoid glTF/VRM file, and the VRM files' own maps agree with recognition where both exist.

use ikarus_core::humanoid_map::{HumanoidBone, HumanoidMap, NamingScheme};
use ikarus_formats::bvh::{Bvh, BvhReadOptions};
use ikarus_formats::gltf::{GltfFile, SkeletonSource};

#[test]
fn every_shared_bvh_has_the_required_bones() {
    let files = ikarus_testdata::files("bvh", "bvh", "every_shared_bvh_has_the_required_bones");
    for path in files {
        let bvh = Bvh::read(&path, &BvhReadOptions::default()).unwrap();
        let map = HumanoidMap::recognise(&bvh.skeleton);
        let missing: Vec<_> = map.missing_required().collect();
        assert!(
            missing.is_empty(),
            "{}: {:?} missing ({:?})",
            path.display(),
            missing,
            map.scheme()
        );
        // Left is left: the mapped left hand is not an ancestor of the right hand, and names agree.
        let name = |b| bvh.skeleton.name(map.joint(b).unwrap()).to_lowercase();
        assert!(
            !name(HumanoidBone::LeftHand).contains("right"),
            "{}",
            path.display()
        );
        assert!(
            !name(HumanoidBone::RightFoot).contains("left"),
            "{}",
            path.display()
        );
        let hips = map.joint(HumanoidBone::Hips).unwrap();
        for bone in HumanoidBone::REQUIRED {
            assert!(
                bvh.skeleton
                    .is_ancestor_or_self(hips, map.joint(*bone).unwrap())
                    || *bone == HumanoidBone::Hips
            );
        }
    }
}

#[test]
fn schemes_chosen_per_file() {
    let expected = [
        (
            "mixamo_rig_test_freebvh.bvh",
            NamingScheme::MixamoHumanIk,
            "mixamorig:LeftForeArm",
        ),
        (
            "cmu_01_01_jump_cgspeed.bvh",
            NamingScheme::MixamoHumanIk,
            "LeftForeArm",
        ),
        (
            "mass_hik_run_crlf.bvh",
            NamingScheme::MixamoHumanIk,
            "Character1_LeftForeArm",
        ),
        (
            "mocapbank_zxy_crlf.bvh",
            NamingScheme::Biovision,
            "LeftElbow",
        ),
        (
            "bandainamco_ds1_run_normal_001.bvh",
            NamingScheme::VrmUnity,
            "LowerArm_L",
        ),
    ];
    for (file, scheme, forearm) in expected {
        let Some(dir) = ikarus_testdata::require("bvh", "schemes_chosen_per_file") else {
            return;
        };
        let bvh = Bvh::read(&dir.join(file), &BvhReadOptions::default()).unwrap();
        let map = HumanoidMap::recognise(&bvh.skeleton);
        assert_eq!(map.scheme(), scheme, "{file}");
        assert_eq!(
            bvh.skeleton
                .name(map.joint(HumanoidBone::LeftLowerArm).unwrap()),
            forearm,
            "{file}"
        );
    }
}

#[test]
fn vrm_maps_are_complete_and_recognition_agrees() {
    for (file, recognised_complete) in [
        ("Godette_vrm_v4.vrm", true),
        ("cryptovoxels.vrm", true),
        ("VRMC_vrm_expressions_isBinary_Overridden.vrm", true),
        ("VRMC_materials_mtoon_UV_Animation_Test.vrm", true),
        ("three-vrm_test.vrma", true),
    ] {
        let Some(dir) =
            ikarus_testdata::require("gltf", "vrm_maps_are_complete_and_recognition_agrees")
        else {
            return;
        };
        let gltf = GltfFile::read(&dir.join(file)).unwrap();
        let humanoid = gltf.vrm_humanoid().unwrap().unwrap();
        let nodes: Vec<usize> = humanoid.bones.iter().map(|&(_, n)| n).collect();
        let skeleton = gltf.skeleton(&SkeletonSource::Nodes(nodes)).unwrap();
        let from_file = humanoid.map(&skeleton);
        assert!(from_file.is_complete(), "{file}");
        let recognised = HumanoidMap::recognise(&skeleton.skeleton);
        assert_eq!(
            recognised.is_complete(),
            recognised_complete,
            "{file}: {:?}",
            recognised.missing_required().collect::<Vec<_>>()
        );
        for bone in HumanoidBone::REQUIRED {
            assert_eq!(
                recognised.joint(*bone),
                from_file.joint(*bone),
                "{file}: {bone:?}"
            );
        }
    }
}

#[test]
fn explicit_pairs_override_recognition() {
    let skeleton = ikarus_core::humanoid::builtin_humanoid();
    let map = HumanoidMap::recognise(&skeleton)
        .with_overrides(&skeleton, [(HumanoidBone::LeftHand, "leftMiddleProximal")])
        .unwrap();
    assert_eq!(
        map.joint(HumanoidBone::LeftHand),
        skeleton.joint("leftMiddleProximal")
    );
    let err =
        HumanoidMap::from_pairs(&skeleton, [(HumanoidBone::Head, "noSuchJoint")]).unwrap_err();
    assert!(err.to_string().contains("noSuchJoint"));
    let json = r#"{"leftHand": "leftLowerArm", "head": "neck"}"#;
    let map = ikarus_formats::gltf::vrm::bone_map_from_json(
        json,
        &skeleton,
        HumanoidMap::recognise(&skeleton),
    )
    .unwrap();
    assert_eq!(map.joint(HumanoidBone::Head), skeleton.joint("neck"));
    assert_eq!(
        map.joint(HumanoidBone::LeftHand),
        skeleton.joint("leftLowerArm")
    );
    assert!(matches!(
        ikarus_formats::gltf::vrm::bone_map_from_json(r#"{"leftPaw": "neck"}"#, &skeleton, map),
        Err(ikarus_formats::gltf::vrm::BoneMapError::Map(
            ikarus_core::humanoid_map::HumanoidMapError::UnknownBone { .. }
        ))
    ));
}

/// `ikarus_formats::humanoid_map` (what `ikarus retarget` and the Python package start from):
/// a VRM's and a VRMA's declared maps, read here from the files' own humanoid extensions, and
/// recognition for the other formats.
#[test]
fn humanoid_map_of_a_source_is_the_declared_or_the_recognised_one() {
    let test = "humanoid_map_of_a_source";
    let Some([gltf, bvh]) = ikarus_testdata::require_all(["gltf", "bvh"], test) else {
        return;
    };
    let vrm = gltf.join("Godette_vrm_v4.vrm");
    let vrm_name = vrm.to_str().unwrap();
    let document = ikarus_formats::open(vrm_name, 1.0).unwrap();
    let file = GltfFile::read(&vrm).unwrap();
    let skin = file.skeleton(&SkeletonSource::Auto).unwrap();
    let declared = file.vrm_humanoid().unwrap().unwrap().map(&skin);
    let map = ikarus_formats::humanoid_map(vrm_name, &document.skeleton).unwrap();
    assert!(map.is_complete());
    for bone in HumanoidBone::ALL {
        assert_eq!(map.joint(*bone), declared.joint(*bone), "{bone:?}");
    }

    let vrma = gltf.join("three-vrm_test.vrma");
    let vrma_name = vrma.to_str().unwrap();
    let document = ikarus_formats::open(vrma_name, 1.0).unwrap();
    let file = GltfFile::read(&vrma).unwrap();
    let own = ikarus_formats::gltf::vrma::Vrma::from_file(&file).unwrap();
    let map = ikarus_formats::humanoid_map(vrma_name, &document.skeleton).unwrap();
    for bone in HumanoidBone::ALL {
        assert_eq!(map.joint(*bone), own.humanoid.joint(*bone), "{bone:?}");
    }

    let walk = bvh.join("cmu_02_01_walk_cgspeed_crlf.bvh");
    let document = ikarus_formats::open(walk.to_str().unwrap(), 1.0).unwrap();
    let map = ikarus_formats::humanoid_map(walk.to_str().unwrap(), &document.skeleton).unwrap();
    let recognised = HumanoidMap::recognise(&document.skeleton);
    for bone in HumanoidBone::ALL {
        assert_eq!(map.joint(*bone), recognised.joint(*bone), "{bone:?}");
    }
    let builtin = ikarus_formats::open("builtin:humanoid", 1.0).unwrap();
    assert!(
        ikarus_formats::humanoid_map("builtin:humanoid", &builtin.skeleton)
            .unwrap()
            .is_complete()
    );
}
