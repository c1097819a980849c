//! The BVH writer.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use super::Bvh;
use crate::FormatError;

impl Bvh {
    /// Writes the document as BVH text (LF line endings, tab indentation, shortest round-trip
    /// decimal for every number, one frame per line).
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
        let mut open: Vec<ikarus_core::JointId> = Vec::new();
        for (j, entry) in s.joints().zip(&self.layout.joints) {
            while let Some(&top) = open.last() {
                if s.is_ancestor_or_self(top, j) {
                    break;
                }
                open.pop();
                indent(&mut text, open.len());
                text.push_str("}\n");
            }
            let depth = open.len();
            indent(&mut text, depth);
            if entry.end_site {
                text.push_str("End Site\n");
            } else {
                let keyword = if s.parent(j).is_none() {
                    "ROOT"
                } else {
                    "JOINT"
                };
                let _ = writeln!(text, "{keyword} {}", s.name(j));
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
            indent(&mut text, open.len());
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
