//! Fuzz target for the terrain reader (JSON heightfield or plane, and a glTF/GLB's triangles):
//! never panic; what parses gives a finite height and a unit normal pointing up wherever it
//! has ground.
#![no_main]

use ikarus_anim::ground::Ground;
use ikarus_jobs::Terrain;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let terrains = [
        Terrain::from_json(&text, "fuzz"),
        Terrain::from_gltf(data, None, "fuzz.glb"),
    ];
    for terrain in terrains.into_iter().flatten() {
        for (x, z) in [(0.0, 0.0), (1.5, -2.25), (-1e6, 1e6), (f64::NAN, 0.0)] {
            if let Some((h, n)) = terrain.sample(x, z) {
                assert!(h.is_finite(), "height {h} at ({x}, {z})");
                assert!((n.length() - 1.0).abs() < 1e-9 && n.y > 0.0, "normal {n}");
            }
        }
    }
});
