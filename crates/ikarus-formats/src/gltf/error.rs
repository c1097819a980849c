//! What can be wrong with a glTF, GLB, VRM or VRMA file, and where.

/// A glTF problem with its place: a byte offset for the GLB container, a line and column for
/// JSON syntax, a JSON path (`accessors[3].bufferView`) for everything else.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum GltfError {
    /// The GLB container is malformed (truncated header or chunk, wrong magic or version).
    /// Re-export the file; a GLB is a 12-byte header, a JSON chunk and an optional BIN chunk.
    #[error("byte {offset}: {reason}")]
    Container {
        /// Byte offset of the bad field in the file.
        offset: usize,
        /// What is wrong.
        reason: String,
    },
    /// The JSON text does not parse as glTF 2.0.
    #[error("JSON {line}:{column}: {reason}")]
    Json {
        /// Line in the JSON text (1-based; the JSON chunk for GLB).
        line: usize,
        /// Column (1-based).
        column: usize,
        /// The parser's message.
        reason: String,
    },
    /// A value breaks the glTF rules or points outside the file: an index past its array, an
    /// accessor past its buffer, a node with two parents or a cyclic hierarchy, a singular
    /// inverse bind matrix. `pointer` is the JSON path of the offending value.
    #[error("{pointer}: {reason}")]
    Invalid {
        /// JSON path, as in `skins[0].inverseBindMatrices`.
        pointer: String,
        /// What is wrong and, where possible, the value expected.
        reason: String,
    },
    /// The file uses a glTF feature ikarus does not read (sparse accessors, external buffers
    /// when reading from bytes). Export without it (for example with embedded buffers).
    #[error("{pointer}: unsupported: {reason}")]
    Unsupported {
        /// JSON path of the feature.
        pointer: String,
        /// Which feature.
        reason: String,
    },
    /// Nothing in the file can become a skeleton (no skin, no VRM humanoid, no nodes), or the
    /// requested skin does not exist.
    #[error("{reason}")]
    NoSkeleton {
        /// What was looked for.
        reason: String,
    },
}

impl GltfError {
    /// An [`Invalid`](Self::Invalid) error.
    pub(crate) fn invalid(pointer: impl Into<String>, reason: impl Into<String>) -> Self {
        Self::Invalid {
            pointer: pointer.into(),
            reason: reason.into(),
        }
    }
}
