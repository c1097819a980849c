//! glTF/GLB files as terrain, on every shared glTF/GLB/VRM: the ground under random points
//! is the highest of the file's own triangles (read by `GltfFile::triangles`) hit by a
//! vertical ray, found here by a Möller–Trumbore ray cast against every triangle — an
//! independent computation of what the grid of cells finds.

use glam::DVec3;
use ikarus_anim::ground::Ground;
use ikarus_formats::gltf::GltfFile;
use ikarus_jobs::Terrain;

/// The height where the line through `(x, z)` along −Y meets triangle `[a, b, c]` (ray from
/// far above, Möller–Trumbore), if it does.
fn ray_down(t: &[DVec3; 3], x: f64, z: f64, top: f64) -> Option<f64> {
    let (origin, direction) = (DVec3::new(x, top, z), DVec3::NEG_Y);
    let (e1, e2) = (t[1] - t[0], t[2] - t[0]);
    let p = direction.cross(e2);
    let det = e1.dot(p);
    if det.abs() < 1e-15 {
        return None;
    }
    let s = origin - t[0];
    let u = s.dot(p) / det;
    let q = s.cross(e1);
    let v = direction.dot(q) / det;
    if !(0.0..=1.0).contains(&u) || v < 0.0 || u + v > 1.0 {
        return None;
    }
    Some(top - e2.dot(q) / det)
}

#[test]
fn every_shared_gltf_grounds_on_its_own_highest_triangle() {
    let paths: Vec<_> = ["glb", "gltf", "vrm"]
        .into_iter()
        .flat_map(|e| ikarus_testdata::files("gltf", e, "terrain mesh"))
        .collect();
    if paths.is_empty() {
        return;
    }
    let mut files = 0;
    for path in paths {
        let Ok(Terrain::Mesh(mesh)) = Terrain::read(&path) else {
            // A file with no triangles to stand on says why.
            let error = Terrain::read(&path).unwrap_err();
            assert!(
                error.to_string().contains(path.to_str().unwrap()),
                "{error}"
            );
            continue;
        };
        files += 1;
        let bytes = std::fs::read(&path).unwrap();
        let triangles = GltfFile::parse(&bytes, path.parent())
            .unwrap()
            .triangles()
            .unwrap();
        let (lo, hi) = triangles.iter().flatten().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        let top = hi.y + 1.0;
        let mut rng = ikarus_testdata::Rng(7);
        let (mut hits, mut differ) = (0, 0);
        for _ in 0..400 {
            let (x, z) = (rng.range(lo.x, hi.x), rng.range(lo.z, hi.z));
            let expected = triangles
                .iter()
                .filter_map(|t| ray_down(t, x, z, top))
                .fold(None, |m: Option<f64>, h| Some(m.map_or(h, |m| m.max(h))));
            match (mesh.sample(x, z), expected) {
                (Some((h, n)), Some(e)) => {
                    hits += 1;
                    assert!(
                        (h - e).abs() < 1e-9 * (1.0 + e.abs()),
                        "{}: ({x}, {z}) {h} vs {e}",
                        path.display()
                    );
                    assert!((n.length() - 1.0).abs() < 1e-9 && n.y >= 0.0);
                }
                (None, None) => {}
                // A point on a shared edge of a sliver: the two tolerances may disagree.
                _ => differ += 1,
            }
        }
        assert!(
            differ <= 2,
            "{}: {differ} of 400 points found by one method only",
            path.display()
        );
        assert!(hits > 0, "{}: no point over the mesh", path.display());
    }
    assert!(
        files >= 3,
        "only {files} shared glTF files have triangles to stand on"
    );
}
