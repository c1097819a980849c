//! What a session can load (the built-in humanoid, files opened at startup, uploads) and which
//! solvers it can run.

use ikarus_core::humanoid::BUILTIN_HUMANOID;
use ikarus_formats::bvh::{Bvh, BvhError, BvhReadOptions};
use ikarus_formats::urdf::Urdf;
use ikarus_formats::{Document, FormatError};
use ikarus_solve::SolverConfig;

use crate::protocol::{SolverChoice, SourceFormat};
use crate::session::Loaded;

/// The documents opened at startup, shared read-only by every connection.
#[derive(Debug)]
pub struct Catalog {
    documents: Vec<Loaded>,
}

impl Catalog {
    /// Opens each source (`builtin:humanoid` or a path) with [`ikarus_formats::open`]; the
    /// built-in humanoid is always available and comes last unless named.
    ///
    /// # Errors
    /// The first source that cannot be opened, with file, line and column for parse errors.
    pub fn open(sources: &[String]) -> Result<Self, FormatError> {
        let mut documents = Vec::with_capacity(sources.len() + 1);
        for source in sources {
            let document = ikarus_formats::open(source, 1.0)?;
            documents.push(Loaded {
                name: source.clone(),
                // `open` accepted it, so the name has a known extension.
                format: SourceFormat::of(source).unwrap_or(SourceFormat::Bvh),
                document,
            });
        }
        if !sources.iter().any(|s| s == BUILTIN_HUMANOID) {
            documents.push(Loaded {
                name: BUILTIN_HUMANOID.to_owned(),
                format: SourceFormat::Builtin,
                document: ikarus_formats::open(BUILTIN_HUMANOID, 1.0)?,
            });
        }
        Ok(Self { documents })
    }

    /// The names a `load` request may use, the first being the page's start document.
    pub fn sources(&self) -> Vec<String> {
        self.documents.iter().map(|d| d.name.clone()).collect()
    }

    pub(crate) fn initial(&self) -> Loaded {
        self.documents[0].clone()
    }

    pub(crate) fn open_source(&self, source: &str) -> Result<Loaded, String> {
        self.documents
            .iter()
            .find(|d| d.name == source)
            .cloned()
            .ok_or_else(|| {
                format!(
                    "unknown source `{source}`; this server has {}",
                    self.sources().join(", ")
                )
            })
    }
}

/// Parses an uploaded file by its extension (`.bvh`, `.urdf`). Errors name the file, line and
/// column.
pub(crate) fn parse_upload(name: &str, text: &str) -> Result<Loaded, String> {
    if text.len() > crate::MAX_UPLOAD_BYTES {
        return Err(format!(
            "{name}: {} bytes is larger than the {} byte upload limit",
            text.len(),
            crate::MAX_UPLOAD_BYTES
        ));
    }
    let format = SourceFormat::of(name);
    let document = match format {
        Some(SourceFormat::Bvh) => {
            let located = |e: BvhError| format!("{name}:{e}");
            let bvh = Bvh::parse(text.as_bytes(), &BvhReadOptions::default()).map_err(located)?;
            let motion = bvh.to_motion().map_err(located)?;
            Document {
                motion: Some(motion),
                layout: Some(bvh.layout.clone()),
                skeleton: bvh.skeleton,
                mesh: None,
                rig: None,
            }
        }
        Some(SourceFormat::Urdf) => {
            let robot = Urdf::parse(text).map_err(|e| format!("{name}:{e}"))?;
            Document {
                skeleton: robot.skeleton,
                motion: None,
                layout: None,
                mesh: None,
                rig: None,
            }
        }
        _ => {
            return Err(format!(
                "{name}: the page opens .bvh and .urdf files; open other formats on the command \
                 line (`ikarus serve FILE`)"
            ));
        }
    };
    Ok(Loaded {
        name: name.to_owned(),
        format: format.unwrap_or(SourceFormat::Bvh), // Some: the other cases returned above
        document,
    })
}

/// Every [`SolverConfig`] kind with its default configuration.
///
/// The kinds are read from the enum's own serde description (the list of variants its
/// deserializer expects), so a solver added to `SolverConfig` appears here, and in the page's
/// menu, without a change to the viewer. Kinds whose configuration has required fields are
/// left out (the page could not build them from nothing).
pub fn solver_choices() -> Vec<SolverChoice> {
    let Err(e) = serde_json::from_str::<SolverConfig>(r#"{"kind":"?"}"#) else {
        return Vec::new();
    };
    let message = e.to_string();
    let expected = message.split_once("expected").map_or("", |(_, rest)| rest);
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|kind| {
            let config: SolverConfig =
                serde_json::from_value(serde_json::json!({ "kind": kind })).ok()?;
            Some(SolverChoice {
                kind: kind.to_owned(),
                config: serde_json::to_value(&config).ok()?,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_listed_and_its_default_parses_back() {
        let choices = solver_choices();
        let kinds: Vec<&str> = choices.iter().map(|c| c.kind.as_str()).collect();
        for kind in ["none", "ccd", "two_bone", "limb7", "aim", "leg6"] {
            assert!(kinds.contains(&kind), "{kind} missing from {kinds:?}");
        }
        // The page sends these configurations back unchanged: they must parse to their kind.
        for choice in &choices {
            let config: SolverConfig = serde_json::from_value(choice.config.clone()).unwrap();
            assert_eq!(config.kind(), choice.kind);
        }
    }

    #[test]
    fn uploads_name_the_file_and_line() {
        let error = parse_upload("a.bvh", "HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 x\n").unwrap_err();
        assert!(error.starts_with("a.bvh:4:"), "{error}");
        let error = parse_upload("a.pmx", "").unwrap_err();
        assert!(error.contains(".bvh"), "{error}");
        let error = parse_upload(
            "r.URDF",
            "<robot name=\"r\">\n  <link name=\"a\">\n</robot>",
        )
        .unwrap_err();
        assert!(error.starts_with("r.URDF:3:"), "{error}");
        let big = " ".repeat(crate::MAX_UPLOAD_BYTES + 1);
        assert!(parse_upload("big.bvh", &big).unwrap_err().contains("limit"));
    }
}
