//! What a session can load (the built-in humanoid, files opened at startup, uploads) and which
//! solvers it can run.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ikarus_core::Skeleton;
use ikarus_core::humanoid::BUILTIN_HUMANOID;
use ikarus_core::humanoid_map::HumanoidMap;
use ikarus_formats::gltf::{GltfFile, SkeletonSource};
use ikarus_formats::mmd::vmd::Vmd;
use ikarus_formats::mmd::{Built, MmdBuildError, MmdModel};
use ikarus_formats::{Document, FormatError};
use ikarus_solve::SolverConfig;

use crate::error::LoadError;
use crate::protocol::{SolverChoice, SourceFormat};

/// The skeleton a session works on, with its motion and BVH layout.
#[derive(Clone, Debug)]
pub(crate) struct Loaded {
    pub name: String,
    pub format: SourceFormat,
    pub document: Document,
    /// The file's path, when opened from one (textures beside a model are read from there).
    pub path: Option<PathBuf>,
    /// The humanoid map: a VRM file's own, else recognised from the joint names.
    pub humanoid: Option<HumanoidMap>,
    /// A VMD motion given with the model (`--motion`), or bound by a `load` or `retarget`.
    pub vmd: Option<Vmd>,
    /// For PMX/PMD models: the model as built, with its name (what retargeting plays a VMD
    /// on and writes a VMD for).
    pub mmd_model: Option<Arc<MmdSource>>,
}

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
            let path = Path::new(source);
            let (document, mmd_model) = if ikarus_jobs::is_mmd_model(path) {
                let parsed = ikarus_formats::read_mmd_model(path, 1.0)?;
                mmd_document(parsed).map_err(|source| FormatError::Model {
                    path: path.to_owned(),
                    source,
                })?
            } else {
                (ikarus_formats::open(source, 1.0)?, None)
            };
            // `open` accepted it, so the name has a known extension.
            let format = SourceFormat::of(source).unwrap_or(SourceFormat::Bvh);
            let humanoid = match format {
                SourceFormat::Gltf => GltfFile::read(Path::new(source))
                    .ok()
                    .and_then(|file| vrm_map(&file)),
                _ => None,
            };
            documents.push(Loaded {
                name: source.clone(),
                format,
                humanoid: humanoid.or_else(|| recognised(&document.skeleton)),
                document,
                path: (format != SourceFormat::Builtin).then(|| PathBuf::from(source)),
                vmd: None,
                mmd_model,
            });
        }
        if !sources.iter().any(|s| s == BUILTIN_HUMANOID) {
            let document = ikarus_formats::open(BUILTIN_HUMANOID, 1.0)?;
            documents.push(Loaded {
                name: BUILTIN_HUMANOID.to_owned(),
                format: SourceFormat::Builtin,
                humanoid: recognised(&document.skeleton),
                document,
                path: None,
                vmd: None,
                mmd_model: None,
            });
        }
        Ok(Self { documents })
    }

    /// Binds a VMD motion (`ikarus serve MODEL.pmx --motion M.vmd`) to the first MMD model.
    ///
    /// # Errors
    /// The file cannot be read or parsed, or no MMD model was opened.
    pub fn attach_motion(&mut self, motion: &str) -> Result<(), FormatError> {
        let path = Path::new(motion);
        let Some(model) = self
            .documents
            .iter_mut()
            .find(|d| d.format == SourceFormat::Mmd)
        else {
            return Err(FormatError::Invalid {
                path: path.to_owned(),
                message: "`--motion` plays a VMD on an MMD model: name a .pmx or .pmd file too"
                    .to_owned(),
            });
        };
        model.vmd = Some(ikarus_formats::read_vmd(path, 1.0)?);
        Ok(())
    }

    /// The names a `load` request may use, the first being the page's start document.
    pub fn sources(&self) -> Vec<String> {
        self.documents.iter().map(|d| d.name.clone()).collect()
    }

    pub(crate) fn initial(&self) -> Loaded {
        self.documents[0].clone()
    }

    pub(crate) fn open_source(&self, source: &str) -> Result<Loaded, LoadError> {
        self.documents
            .iter()
            .find(|d| d.name == source)
            .cloned()
            .ok_or_else(|| LoadError::UnknownSource {
                name: source.to_owned(),
                available: self.sources(),
            })
    }
}

/// The humanoid map a VRM file declares, on the skeleton [`ikarus_formats::open`] builds from it.
fn vrm_map(file: &GltfFile) -> Option<HumanoidMap> {
    let humanoid = file.vrm_humanoid().ok()??;
    let skeleton = file.skeleton(&SkeletonSource::Auto).ok()?;
    Some(humanoid.map(&skeleton))
}

/// The humanoid map recognised from joint names, when it finds any bone.
fn recognised(skeleton: &Skeleton) -> Option<HumanoidMap> {
    let map = HumanoidMap::recognise(skeleton);
    (!map.is_empty()).then_some(map)
}

/// Parses an uploaded file by its extension (every format [`ikarus_formats::open_bytes`]
/// reads). Errors name the file and the line and column or byte offset.
pub(crate) fn parse_upload(name: &str, bytes: &[u8]) -> Result<Loaded, LoadError> {
    check_upload_size(name, bytes)?;
    let Some(format) = SourceFormat::of(name).filter(|&f| f != SourceFormat::Builtin) else {
        return Err(LoadError::UnknownFormat {
            name: name.to_owned(),
        });
    };
    let (document, mmd_model) = if format == SourceFormat::Mmd {
        mmd_document(parse_mmd_model(name, bytes)?).map_err(|source| LoadError::Model {
            name: name.to_owned(),
            source,
        })?
    } else {
        (ikarus_formats::open_bytes(name, bytes, 1.0)?, None)
    };
    let humanoid = match format {
        SourceFormat::Gltf => GltfFile::parse(bytes, None)
            .ok()
            .and_then(|file| vrm_map(&file)),
        _ => None,
    };
    Ok(Loaded {
        name: name.to_owned(),
        format,
        humanoid: humanoid.or_else(|| recognised(&document.skeleton)),
        document,
        path: None,
        vmd: None,
        mmd_model,
    })
}

/// Refuses an upload `name` larger than [`crate::MAX_UPLOAD_BYTES`].
pub(crate) fn check_upload_size(name: &str, bytes: &[u8]) -> Result<(), LoadError> {
    if bytes.len() > crate::MAX_UPLOAD_BYTES {
        return Err(LoadError::TooLarge {
            name: name.to_owned(),
            bytes: bytes.len(),
            limit: crate::MAX_UPLOAD_BYTES,
        });
    }
    Ok(())
}

/// An upload's bytes, from its `text` or its `base64` (exactly one of them), checked against
/// the upload limit; `request` and the argument list name the request in the error.
pub(crate) fn upload_bytes(
    request: &'static str,
    name: &str,
    text: Option<&String>,
    base64: Option<&String>,
) -> Result<Vec<u8>, crate::error::RequestError> {
    let bytes = match (text, base64) {
        (Some(text), None) => text.clone().into_bytes(),
        (None, Some(base64)) => decode_upload(name, base64)?,
        _ => {
            return Err(crate::error::RequestError::Arguments {
                request,
                expected: "`name` with `text` or `base64`",
            });
        }
    };
    check_upload_size(name, &bytes)?;
    Ok(bytes)
}

/// The bytes of upload `name` sent as base64 `text` (standard alphabet, padded; surrounding
/// whitespace ignored).
pub(crate) fn decode_upload(name: &str, text: &str) -> Result<Vec<u8>, LoadError> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|source| LoadError::Base64 {
            name: name.to_owned(),
            source,
        })
}

/// An MMD model as built, with the name a VMD written for it carries: what
/// [`ikarus_jobs::MmdPlayer`] plays a VMD on and [`ikarus_jobs::vmd_bytes`] writes for.
#[derive(Debug)]
pub(crate) struct MmdSource {
    /// The model's (Japanese) name.
    pub name: String,
    /// Skeleton, rig, mesh and the joint of each bone.
    pub built: Built,
}

/// The document of a parsed PMX/PMD model (metres) and the model as built.
fn mmd_document(parsed: MmdModel) -> Result<(Document, Option<Arc<MmdSource>>), MmdBuildError> {
    let built = parsed.build()?;
    let document = Document {
        skeleton: built.skeleton.clone(),
        motion: None,
        layout: None,
        mesh: Some(built.mesh.clone()),
        rig: Some(built.rig.clone()),
    };
    let source = MmdSource {
        name: parsed.name,
        built,
    };
    Ok((document, Some(Arc::new(source))))
}

/// Parses an uploaded PMX or PMD model (by `name`'s extension), lengths in metres; errors
/// name the file and the byte offset.
pub(crate) fn parse_mmd_model(name: &str, bytes: &[u8]) -> Result<MmdModel, LoadError> {
    let parsed = if name.to_ascii_lowercase().ends_with(".pmd") {
        ikarus_formats::mmd::pmd::parse(bytes, 1.0)
    } else {
        ikarus_formats::mmd::pmx::parse(bytes, 1.0)
    };
    parsed.map_err(|source| LoadError::Mmd {
        name: name.to_owned(),
        source,
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
            let mut config: SolverConfig =
                serde_json::from_value(serde_json::json!({ "kind": kind })).ok()?;
            // The body solver's pulls, shown per effector (1, the default, for each).
            if let SolverConfig::Body(body) = &mut config {
                for bone in ikarus_core::humanoid_map::HumanoidBone::BODY_ENDS {
                    body.pull.insert(bone.vrm_name().to_owned(), 1.0);
                }
                // A pinned foot holds when a hand is dragged far past its reach.
                body.hold_pinned_feet = true;
            }
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
        let error = parse_upload("a.bvh", b"HIERARCHY\nROOT Hips\n{\n OFFSET 0 0 x\n").unwrap_err();
        assert!(
            matches!(&error, LoadError::Format(FormatError::Bvh { path, .. }) if path == Path::new("a.bvh")),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "a.bvh:4:13: expected an OFFSET component, found `x`"
        );
        let error = parse_upload("a.txt", b"").unwrap_err();
        assert!(
            matches!(&error, LoadError::UnknownFormat { name } if name == "a.txt"),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "a.txt: the page opens .bvh, .urdf, .pmx, .pmd, .gltf, .glb, .vrm and .vrma files \
             (and .vmd motions for a loaded MMD model)"
        );
        // A truncated PMX: the error names the file and the byte offset.
        let error = parse_upload("a.pmx", b"PMX \0\0").unwrap_err();
        assert!(
            matches!(&error, LoadError::Mmd { name, source } if name == "a.pmx" && source.offset == 4),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "a.pmx: byte 4: expected the PMX version (4 bytes), found the end of the file after \
             2 bytes"
        );
        let error = parse_upload(
            "r.URDF",
            b"<robot name=\"r\">\n  <link name=\"a\">\n</robot>",
        )
        .unwrap_err();
        assert!(
            matches!(&error, LoadError::Format(FormatError::Urdf { .. })),
            "{error:?}"
        );
        assert!(error.to_string().starts_with("r.URDF:3:"), "{error}");
        let big = vec![b' '; crate::MAX_UPLOAD_BYTES + 1];
        let error = parse_upload("big.bvh", &big).unwrap_err();
        assert!(
            matches!(
                &error,
                LoadError::TooLarge { name, bytes, limit }
                    if name == "big.bvh" && *bytes == big.len() && *limit == crate::MAX_UPLOAD_BYTES
            ),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            format!(
                "big.bvh: {} bytes is larger than the {} byte upload limit",
                big.len(),
                crate::MAX_UPLOAD_BYTES
            )
        );
    }

    #[test]
    fn unknown_sources_and_bad_base64_name_what_was_asked_for() {
        let catalog = Catalog::open(&[]).unwrap();
        let error = catalog.open_source("x.bvh").unwrap_err();
        assert!(
            matches!(&error, LoadError::UnknownSource { name, available }
                if name == "x.bvh" && available == &[BUILTIN_HUMANOID]),
            "{error:?}"
        );
        assert_eq!(
            error.to_string(),
            "unknown source `x.bvh`; this server has builtin:humanoid"
        );
        let error = decode_upload("m.pmx", "not base64!").unwrap_err();
        let LoadError::Base64 { name, source } = &error else {
            panic!("{error:?}");
        };
        assert_eq!(name, "m.pmx");
        assert_eq!(
            error.to_string(),
            format!("m.pmx: the upload is not valid base64: {source}")
        );
    }
}
