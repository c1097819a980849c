//! Fuzz target for the glTF/GLB reader: never panics; whatever parses builds its skeleton,
//! samples its clips, reads its mesh (which validates) and writes its first clip back.
#![no_main]

use ikarus_formats::gltf::{GltfFile, SkeletonSource, vrma};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(file) = GltfFile::parse(data, None) else {
        return;
    };
    let _ = file.animations();
    let _ = vrma::Vrma::from_file(&file);
    let Ok(skeleton) = file.skeleton(&SkeletonSource::Auto) else {
        return;
    };
    for i in 0..file.json().animations.len().min(4) {
        if let Ok(clip) = file.clip(i, &skeleton) {
            let mut pose = skeleton.skeleton.rest_pose();
            clip.sample(&skeleton, 0.5, &mut pose);
            if let Ok(motion) = clip.to_motion(&skeleton, Some(10.0)) {
                let bytes = file
                    .with_motion(&skeleton, &motion, "fuzz")
                    .expect("same joint count");
                GltfFile::parse(&bytes, None).expect("written glTF parses");
            }
        }
    }
    if let Ok(Some(mesh)) = file.mesh(&skeleton) {
        mesh.validate(skeleton.skeleton.len())
            .expect("a read mesh is consistent");
    }
});
