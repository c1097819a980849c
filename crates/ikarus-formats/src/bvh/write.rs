//! The BVH writer.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::io::Write;
#[cfg(feature = "fs")]
use std::path::Path;

use ikarus_core::Skeleton;

use super::Bvh;
#[cfg(feature = "fs")]
use crate::FormatError;

/// Each joint's name as the writer puts it in the file: one token, because BVH has no quoting
/// and readers (Blender's, three.js's `BVHLoader`, the Python readers) split the line on
/// whitespace. Whitespace, control characters and braces become `_`, an empty name `joint`;
/// a name that then collides with another joint's gets `_2`, `_3`, … (names that were tokens
/// already are kept as they are). Indexed by joint.
pub fn token_names(skeleton: &Skeleton) -> Vec<String> {
    let separator = |c: char| c.is_whitespace() || c.is_control() || c == '{' || c == '}';
    let is_token = |name: &str| !name.is_empty() && !name.contains(separator);
    let mut used: HashSet<String> = skeleton
        .joints()
        .map(|j| skeleton.name(j))
        .filter(|name| is_token(name))
        .map(str::to_owned)
        .collect();
    skeleton
        .joints()
        .map(|j| {
            let name = skeleton.name(j);
            if is_token(name) {
                return name.to_owned();
            }
            let base: String = if name.is_empty() {
                "joint".to_owned()
            } else {
                name.chars()
                    .map(|c| if separator(c) { '_' } else { c })
                    .collect()
            };
            let mut candidate = base.clone();
            let mut k = 2;
            while used.contains(&candidate) {
                candidate = format!("{base}_{k}");
                k += 1;
            }
            used.insert(candidate.clone());
            candidate
        })
        .collect()
}

/// The name of the channel-less `ROOT` the writer puts above a skeleton's roots when it has more
/// than one (an MMD model's IK targets beside its centre bone): BVH has one root, and readers
/// (three.js's `BVHLoader`, the Python readers) stop after the first. `root`, or `root_2`, … when
/// a joint has that name; `None` for a skeleton with one root. Reading the file back gives it
/// as one more joint, at the origin, that never moves.
pub fn shared_root(skeleton: &Skeleton) -> Option<String> {
    let roots = skeleton
        .joints()
        .filter(|&j| skeleton.parent(j).is_none())
        .count();
    if roots < 2 {
        return None;
    }
    let names = token_names(skeleton);
    let mut candidate = "root".to_owned();
    let mut k = 2;
    while names.contains(&candidate) {
        candidate = format!("root_{k}");
        k += 1;
    }
    Some(candidate)
}

/// The joints [`token_names`] renames, as (name, name in the file), in joint order: what a
/// writer reports.
pub fn renamed_joints(skeleton: &Skeleton) -> Vec<(String, String)> {
    skeleton
        .joints()
        .zip(token_names(skeleton))
        .filter(|(j, written)| skeleton.name(*j) != written)
        .map(|(j, written)| (skeleton.name(j).to_owned(), written))
        .collect()
}

impl Bvh {
    /// Writes the document as BVH text (LF line endings, tab indentation, shortest round-trip
    /// decimal for every number, one frame per line; joint names as [`token_names`]).
    ///
    /// # Errors
    /// Whatever the writer returns.
    pub fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        out.write_all(self.to_bvh_string().as_bytes())
    }

    /// Writes the document to a file.
    ///
    /// # Errors
    /// [`FormatError::Io`] naming the file.
    #[cfg(feature = "fs")]
    #[allow(clippy::disallowed_methods)] // a file edge, behind `fs`
    pub fn write(&self, path: &Path) -> Result<(), FormatError> {
        std::fs::write(path, self.to_bvh_string()).map_err(|source| FormatError::Io {
            path: path.to_owned(),
            source,
        })
    }

    /// The document as BVH text.
    pub fn to_bvh_string(&self) -> String {
        let s = &self.skeleton;
        let channel_count = self.layout.channel_count();
        let mut text = String::with_capacity(64 * s.len() + 10 * self.values.len());
        text.push_str("HIERARCHY\n");
        // Joints are depth first, so closing braces are due whenever the next joint is not a
        // descendant of the open ones.
        let names = token_names(s);
        // Several roots go under one channel-less ROOT ([`shared_root`]), one level deeper.
        let shared = shared_root(s);
        let base = usize::from(shared.is_some());
        if let Some(name) = &shared {
            let _ = writeln!(text, "ROOT {name}\n{{\n\tOFFSET 0 0 0\n\tCHANNELS 0");
        }
        let mut open: Vec<ikarus_core::JointId> = Vec::new();
        for (j, entry) in s.joints().zip(&self.layout.joints) {
            while let Some(&top) = open.last() {
                if s.is_ancestor_or_self(top, j) {
                    break;
                }
                open.pop();
                indent(&mut text, open.len() + base);
                text.push_str("}\n");
            }
            let depth = open.len() + base;
            indent(&mut text, depth);
            if entry.end_site {
                text.push_str("End Site\n");
            } else {
                let keyword = if s.parent(j).is_none() && shared.is_none() {
                    "ROOT"
                } else {
                    "JOINT"
                };
                let _ = writeln!(text, "{keyword} {}", names[j.index()]);
            }
            indent(&mut text, depth);
            text.push_str("{\n");
            indent(&mut text, depth + 1);
            let offset = s.rest(j).translation;
            text.push_str("OFFSET");
            for k in 0..3 {
                text.push(' ');
                push_number(&mut text, offset[k]);
            }
            text.push('\n');
            if !entry.end_site {
                indent(&mut text, depth + 1);
                let _ = write!(text, "CHANNELS {}", entry.channels.len());
                for c in &entry.channels {
                    text.push(' ');
                    text.push_str(c.name());
                }
                text.push('\n');
            }
            open.push(j);
        }
        while open.pop().is_some() {
            indent(&mut text, open.len() + base);
            text.push_str("}\n");
        }
        if shared.is_some() {
            text.push_str("}\n");
        }
        let _ = write!(text, "MOTION\nFrames: {}\nFrame Time: ", self.frame_count);
        push_number(&mut text, self.frame_time);
        text.push('\n');
        if channel_count > 0 {
            for row in self.values.chunks_exact(channel_count) {
                for (k, &v) in row.iter().enumerate() {
                    if k > 0 {
                        text.push(' ');
                    }
                    push_number(&mut text, v);
                }
                text.push('\n');
            }
        } else {
            for _ in 0..self.frame_count {
                text.push('\n');
            }
        }
        text
    }
}

fn indent(text: &mut String, depth: usize) {
    for _ in 0..depth {
        text.push('\t');
    }
}

/// Shortest round-trip decimal; scientific notation for very small or large magnitudes so
/// that no value expands to hundreds of digits.
fn push_number(text: &mut String, v: f64) {
    let v = if v == 0.0 { 0.0 } else { v }; // no "-0"
    let magnitude = v.abs();
    if v == 0.0 || (1e-5..1e15).contains(&magnitude) {
        let _ = write!(text, "{v}");
    } else {
        let _ = write!(text, "{v:e}");
    }
}
