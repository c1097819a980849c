//! Terrain files for grounding ([`ikarus_anim::ground`]): JSON, metres, +Y up —
//! `{"heightfield": {"origin": [x0, z0], "cell": c, "heights": [[...], ...]}}` where
//! `heights[i][j]` is the ground's height at `x = x0 + j·c`, `z = z0 + i·c` (bilinear between
//! samples, the nearest edge value outside), or `{"plane": {"point": [x, y, z], "normal":
//! [x, y, z]}}`; or a glTF/GLB file, whose triangles are the ground (the highest under a
//! point). The CLI, Python and the viewer read them here.

use std::path::Path;

use glam::DVec3;
use ikarus_anim::ground::{
    Ground, Heightfield, HeightfieldError, Plane, TriangleMesh, TriangleMeshError,
};
use ikarus_formats::gltf::GltfFile;
use serde::Deserialize;

/// A terrain read from a file or a JSON text.
#[derive(Clone, Debug, PartialEq)]
pub enum Terrain {
    /// A grid of heights.
    Heightfield(Heightfield),
    /// A plane.
    Plane(Plane),
    /// The triangles of a glTF/GLB file.
    Mesh(TriangleMesh),
}

impl Ground for Terrain {
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)> {
        match self {
            Terrain::Heightfield(h) => h.sample(x, z),
            Terrain::Plane(p) => p.sample(x, z),
            Terrain::Mesh(m) => m.sample(x, z),
        }
    }
}

/// Why a terrain cannot be read; each names the file (or `terrain` for a text).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TerrainError {
    /// The file cannot be read.
    #[error("{name}: {source}")]
    Io {
        /// The file.
        name: String,
        /// Why.
        source: std::io::Error,
    },
    /// The JSON is malformed or of another shape.
    #[error(
        "{name}: line {line}, column {column}: {message}; expected {{\"heightfield\": {{\"origin\", \"cell\", \"heights\"}}}} or {{\"plane\": {{\"point\", \"normal\"}}}}"
    )]
    Json {
        /// The file.
        name: String,
        /// Where (1-based).
        line: usize,
        /// Where (1-based).
        column: usize,
        /// What serde found.
        message: String,
    },
    /// The heightfield's grid is not one.
    #[error("{name}: {source}")]
    Heightfield {
        /// The file.
        name: String,
        /// Why.
        source: HeightfieldError,
    },
    /// The plane's point is not finite or its normal does not point up.
    #[error("{name}: the plane's point must be finite and its normal point up (+Y > 0)")]
    Plane {
        /// The file.
        name: String,
    },
    /// A glTF/GLB file that does not parse.
    #[error("{name}: {source}")]
    Gltf {
        /// The file.
        name: String,
        /// Why.
        source: ikarus_formats::gltf::GltfError,
    },
    /// A glTF/GLB file whose triangles are no ground (none, all walls, or not finite).
    #[error("{name}: {source}")]
    Mesh {
        /// The file.
        name: String,
        /// Why.
        source: TriangleMeshError,
    },
}

/// Terrains made for a motion (the viewer's terrain menu): laid along the motion's travel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TerrainPreset {
    /// A 15° slope rising ahead.
    Slope,
    /// Steps 18 cm high and 30 cm deep rising ahead (flat behind the start).
    Stairs,
    /// Bumps of ±8 cm: `0.04 (sin 5.7x + sin 7z)` from the grid's corner.
    Bumps,
}

/// The most samples a side of a preset's grid.
const PRESET_SAMPLES: usize = 256;
/// The finest sample spacing of a preset's grid (metres): step edges ramp over one cell.
const PRESET_CELL: f64 = 0.03;
/// How far a preset's grid reaches beyond the points it covers (metres).
const PRESET_MARGIN: f64 = 1.5;

impl TerrainPreset {
    /// The preset as a heightfield covering `points` (e.g. a clip's hips in model space,
    /// metres, +Y up) with a margin of 1.5 m, at most 256 samples a side and cells of at
    /// least 3 cm; its features laid along the points' travel (first to last, horizontal; +X
    /// when they do not travel) from the first point, at height 0 there. `None` for no
    /// points or non-finite ones.
    #[must_use]
    pub fn heightfield(self, points: &[DVec3]) -> Option<Heightfield> {
        let (first, last) = (*points.first()?, *points.last()?);
        if !points.iter().all(|p| p.is_finite()) {
            return None;
        }
        let travel = (last - first)
            .reject_from(DVec3::Y)
            .try_normalize()
            .unwrap_or(DVec3::X);
        let (lo, hi) = points.iter().fold(
            (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)),
            |(lo, hi), p| (lo.min(*p), hi.max(*p)),
        );
        let (lo, hi) = (
            lo - DVec3::splat(PRESET_MARGIN),
            hi + DVec3::splat(PRESET_MARGIN),
        );
        let extent = (hi.x - lo.x).max(hi.z - lo.z);
        #[allow(clippy::cast_precision_loss)] // a few hundred samples
        let cell = (extent / (PRESET_SAMPLES - 1) as f64).max(PRESET_CELL);
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // ≤ 256
        let count = |span: f64| ((span / cell).ceil() as usize + 1).min(PRESET_SAMPLES);
        let (columns, rows) = (count(hi.x - lo.x), count(hi.z - lo.z));
        let along = |x: f64, z: f64| (DVec3::new(x, 0.0, z) - first).dot(travel);
        let height = |x: f64, z: f64| match self {
            TerrainPreset::Slope => along(x, z) * 15f64.to_radians().tan(),
            TerrainPreset::Stairs => 0.18 * (along(x, z) / 0.3).floor().max(0.0),
            TerrainPreset::Bumps => 0.04 * (((x - lo.x) * 5.7).sin() + ((z - lo.z) * 7.0).sin()),
        };
        #[allow(clippy::cast_precision_loss)] // sample indices
        let heights = (0..rows)
            .map(|i| {
                (0..columns)
                    .map(|j| height(lo.x + j as f64 * cell, lo.z + i as f64 * cell))
                    .collect()
            })
            .collect();
        Heightfield::new([lo.x, lo.z], cell, heights).ok()
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "snake_case")]
enum TerrainFile {
    Heightfield {
        origin: [f64; 2],
        cell: f64,
        heights: Vec<Vec<f64>>,
    },
    Plane {
        point: [f64; 3],
        normal: [f64; 3],
    },
}

impl Terrain {
    /// Reads a terrain file (JSON; see the module docs).
    ///
    /// # Errors
    /// [`TerrainError`] naming the file: unreadable, malformed (line and column), a ragged or
    /// non-finite grid, a plane facing down, or a mesh.
    pub fn read(path: &Path) -> Result<Self, TerrainError> {
        let name = path.display().to_string();
        let extension = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        if matches!(extension.as_deref(), Some("glb" | "gltf")) {
            let bytes = std::fs::read(path).map_err(|source| TerrainError::Io {
                name: name.clone(),
                source,
            })?;
            return Self::from_gltf(&bytes, path.parent(), &name);
        }
        let text = std::fs::read_to_string(path).map_err(|source| TerrainError::Io {
            name: name.clone(),
            source,
        })?;
        Self::from_json(&text, &name)
    }

    /// The triangles of a glTF/GLB file's `bytes` as the ground (+Y up, metres, the file's
    /// world space); `base` is the folder external buffers are read from; `name` names it in
    /// errors.
    ///
    /// # Errors
    /// [`TerrainError::Gltf`] for a file that does not parse, [`TerrainError::Mesh`] for one
    /// with no triangle to stand on.
    pub fn from_gltf(bytes: &[u8], base: Option<&Path>, name: &str) -> Result<Self, TerrainError> {
        let gltf = |source| TerrainError::Gltf {
            name: name.to_owned(),
            source,
        };
        let file = GltfFile::parse(bytes, base).map_err(gltf)?;
        let triangles = file.triangles().map_err(gltf)?;
        TriangleMesh::new(triangles)
            .map(Terrain::Mesh)
            .map_err(|source| TerrainError::Mesh {
                name: name.to_owned(),
                source,
            })
    }

    /// Parses a terrain from JSON `text`; `name` names it in errors.
    ///
    /// # Errors
    /// As [`read`](Self::read), but for the file itself.
    pub fn from_json(text: &str, name: &str) -> Result<Self, TerrainError> {
        let file: TerrainFile = serde_json::from_str(text).map_err(|e| TerrainError::Json {
            name: name.to_owned(),
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        })?;
        Ok(match file {
            TerrainFile::Heightfield {
                origin,
                cell,
                heights,
            } => {
                Terrain::Heightfield(Heightfield::new(origin, cell, heights).map_err(|source| {
                    TerrainError::Heightfield {
                        name: name.to_owned(),
                        source,
                    }
                })?)
            }
            TerrainFile::Plane { point, normal } => {
                let (point, normal) = (DVec3::from_array(point), DVec3::from_array(normal));
                if !(point.is_finite() && normal.is_finite() && normal.y > 0.0) {
                    return Err(TerrainError::Plane {
                        name: name.to_owned(),
                    });
                }
                Terrain::Plane(Plane { point, normal })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terrains_read_and_bad_ones_say_where() {
        let plane = Terrain::from_json(
            r#"{"plane": {"point": [0, 0.5, 0], "normal": [0, 2, 0]}}"#,
            "t",
        )
        .unwrap();
        assert_eq!(plane.sample(3.0, -2.0).unwrap().0, 0.5);
        let field = Terrain::from_json(
            r#"{"heightfield": {"origin": [0, 0], "cell": 1, "heights": [[0, 1], [2, 3]]}}"#,
            "t",
        )
        .unwrap();
        assert!((field.sample(0.5, 0.5).unwrap().0 - 1.5).abs() < 1e-12);
        let error = Terrain::from_json(
            "{\"plane\": {\"point\": [0, 0],\n \"normal\": [0, 1, 0]}}",
            "t.json",
        )
        .unwrap_err();
        assert!(
            matches!(error, TerrainError::Json { line: 1, .. }),
            "{error}"
        );
        assert!(error.to_string().starts_with("t.json: line 1"), "{error}");
        let error = Terrain::from_json(
            r#"{"plane": {"point": [0, 0, 0], "normal": [0, -1, 0]}}"#,
            "t",
        )
        .unwrap_err();
        assert!(matches!(error, TerrainError::Plane { .. }));
        let error = Terrain::from_json(
            r#"{"heightfield": {"origin": [0, 0], "cell": 1, "heights": [[0, 1], [2]]}}"#,
            "t",
        )
        .unwrap_err();
        assert!(error.to_string().contains("row 1"), "{error}");
        assert!(matches!(
            Terrain::read(Path::new("no-such-hill.glb")),
            Err(TerrainError::Io { .. })
        ));
        let error = Terrain::from_gltf(b"glTF\x02\0\0\0", None, "bad.glb").unwrap_err();
        assert!(matches!(error, TerrainError::Gltf { .. }), "{error}");
        assert!(error.to_string().starts_with("bad.glb: "), "{error}");
    }

    #[test]
    fn presets_lie_along_the_travel() {
        // Points walking 3 m along -Z from (1, 0.9, 2): ahead is -Z.
        let points: Vec<DVec3> = (0..=30)
            .map(|k| DVec3::new(1.0, 0.9, 2.0 - 0.1 * f64::from(k)))
            .collect();
        let slope = TerrainPreset::Slope.heightfield(&points).unwrap();
        let tan = 15f64.to_radians().tan();
        for z in [2.0, 1.0, -0.5] {
            let (h, n) = slope.sample(1.0, z).unwrap();
            assert!((h - (2.0 - z) * tan).abs() < 1e-9, "slope at z {z}: {h}");
            let expected = DVec3::new(0.0, 1.0, tan).normalize();
            assert!(n.normalize().angle_between(expected) < 1e-6, "normal {n}");
        }
        let stairs = TerrainPreset::Stairs.heightfield(&points).unwrap();
        // Mid-tread (away from the one-cell ramp at each edge): 18 cm a step.
        for (z, h) in [(2.5, 0.0), (1.85, 0.0), (1.55, 0.18), (0.95, 0.54)] {
            assert!(
                (stairs.sample(1.0, z).unwrap().0 - h).abs() < 1e-9,
                "stairs at {z}"
            );
        }
        let bumps = TerrainPreset::Bumps.heightfield(&points).unwrap();
        let rows = bumps.heights.len();
        assert!(rows <= 256 && bumps.heights[0].len() <= 256 && bumps.cell >= 0.03);
        // The grid covers the points with the margin.
        assert!(bumps.origin[0] <= 1.0 - 1.5 + 1e-9 && bumps.origin[1] <= -1.0 - 1.5 + 1e-9);
        let top = bumps
            .heights
            .iter()
            .flatten()
            .fold(0.0_f64, |m, h| m.max(h.abs()));
        assert!(top <= 0.08 + 1e-12 && top > 0.07, "bumps up to {top}");
        assert!(TerrainPreset::Slope.heightfield(&[]).is_none());
        assert!(TerrainPreset::Slope.heightfield(&[DVec3::NAN]).is_none());
    }
}
