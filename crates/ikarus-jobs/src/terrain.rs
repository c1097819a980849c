//! Terrain files for grounding ([`ikarus_anim::ground`]): JSON, metres, +Y up —
//! `{"heightfield": {"origin": [x0, z0], "cell": c, "heights": [[...], ...]}}` where
//! `heights[i][j]` is the ground's height at `x = x0 + j·c`, `z = z0 + i·c` (bilinear between
//! samples, the nearest edge value outside), or `{"plane": {"point": [x, y, z], "normal":
//! [x, y, z]}}`. The CLI, Python and the viewer read them here.

use std::path::Path;

use glam::DVec3;
use ikarus_anim::ground::{Ground, Heightfield, HeightfieldError, Plane};
use serde::Deserialize;

/// A terrain read from a file or a JSON text.
#[derive(Clone, Debug, PartialEq)]
pub enum Terrain {
    /// A grid of heights.
    Heightfield(Heightfield),
    /// A plane.
    Plane(Plane),
}

impl Ground for Terrain {
    fn sample(&self, x: f64, z: f64) -> Option<(f64, DVec3)> {
        match self {
            Terrain::Heightfield(h) => h.sample(x, z),
            Terrain::Plane(p) => p.sample(x, z),
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
    /// A glTF/GLB mesh as terrain (not read yet).
    #[error(
        "{name}: a glTF/GLB mesh terrain is not supported yet; give a JSON heightfield or plane"
    )]
    Mesh {
        /// The file.
        name: String,
    },
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
            return Err(TerrainError::Mesh { name });
        }
        let text = std::fs::read_to_string(path).map_err(|source| TerrainError::Io {
            name: name.clone(),
            source,
        })?;
        Self::from_json(&text, &name)
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
            Terrain::read(Path::new("hill.glb")),
            Err(TerrainError::Mesh { .. })
        ));
    }
}
