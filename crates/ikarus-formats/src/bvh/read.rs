//! The BVH reader: a byte-level tokenizer with positions for errors, an explicit stack for the
//! hierarchy (no recursion, so deep nesting cannot overflow the stack) and a tight loop over the
//! frame values.

use std::collections::HashSet;
#[cfg(feature = "fs")]
use std::path::Path;

use glam::DVec3;
use ikarus_core::{MAX_JOINTS, RawJoint, SkeletonBuilder, Transform};

use super::number::{parse_f64, parse_u64};
use super::{Bvh, BvhError, BvhLayout, Channel, JointChannels};
#[cfg(feature = "fs")]
use crate::FormatError;

/// Options for reading BVH.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BvhReadOptions {
    /// Multiplies every length (offsets, position channels): 0.01 reads a centimetre file in
    /// metres. Default 1 keeps the file's unit.
    pub scale: f64,
}

impl Default for BvhReadOptions {
    fn default() -> Self {
        Self { scale: 1.0 }
    }
}

impl Bvh {
    /// Reads a BVH file.
    ///
    /// # Errors
    /// [`FormatError::Io`] when the file cannot be read, [`FormatError::Bvh`] with line and
    /// column when it is not valid BVH.
    #[cfg(feature = "fs")]
    #[allow(clippy::disallowed_methods)] // a file edge, behind `fs`
    pub fn read(path: &Path, options: &BvhReadOptions) -> Result<Self, FormatError> {
        let bytes = std::fs::read(path).map_err(|source| FormatError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&bytes, options).map_err(|source| FormatError::Bvh {
            path: path.to_owned(),
            source,
        })
    }

    /// Parses BVH text. Accepts any whitespace and line endings (LF, CRLF, mixed), tabs,
    /// scientific notation, frame rows wrapped over several lines, 0 to 6 channels per joint in
    /// any order, several `ROOT`s, and keywords in any letter case.
    ///
    /// # Errors
    /// [`BvhError::Parse`] naming line, column, what was expected and what was found.
    pub fn parse(bytes: &[u8], options: &BvhReadOptions) -> Result<Self, BvhError> {
        let scale = options.scale;
        let mut cursor = Cursor { bytes, pos: 0 };
        if !(scale.is_finite() && scale > 0.0) {
            return Err(cursor.error_at(0, format!("scale {scale} must be finite and positive")));
        }
        // A UTF-8 byte order mark is tolerated.
        if bytes.starts_with(&[0xEF, 0xBB, 0xBF]) {
            cursor.pos = 3;
        }
        cursor.expect_keyword("HIERARCHY")?;
        let (mut joints, mut names) = parse_hierarchy(&mut cursor, scale)?;
        let (frame_count, count_start, frame_time) = parse_motion_header(&mut cursor)?;
        let layout = BvhLayout {
            joints: joints
                .iter()
                .map(|j| JointChannels {
                    channels: j.channels.clone(),
                    end_site: j.end_site,
                })
                .collect(),
        };
        let values = parse_values(&mut cursor, &layout, frame_count, count_start, scale)?;
        let channel_count = layout.channel_count();
        let skeleton = build_skeleton(&mut joints, &mut names)
            .map_err(|e| cursor.error_at(0, e.to_string()))?;
        Ok(Bvh {
            skeleton,
            layout,
            frame_time,
            frame_count: values
                .len()
                .checked_div(channel_count)
                .unwrap_or(frame_count as usize),
            values,
        })
    }
}

/// `ROOT`/`JOINT`/`End Site` blocks up to and including `MOTION`.
fn parse_hierarchy(
    cursor: &mut Cursor<'_>,
    scale: f64,
) -> Result<(Vec<ParsedJoint>, HashSet<String>), BvhError> {
    let mut h = Hierarchy::default();
    loop {
        let (start, token) = cursor.token().ok_or_else(|| {
            cursor.error_here(
                "expected ROOT, JOINT, End Site, OFFSET, CHANNELS, } or MOTION, found end of file",
            )
        })?;
        if eq(token, "ROOT") || eq(token, "JOINT") {
            h.open_joint(cursor, start, eq(token, "ROOT"))?;
        } else if eq(token, "End") {
            h.open_end_site(cursor, start)?;
        } else if eq(token, "OFFSET") {
            let joint = h.top_mut(cursor, start, "OFFSET")?;
            if joint.offset.is_some() {
                let message = format!("joint `{}` has a second OFFSET", joint.name);
                return Err(cursor.error_at(start, message));
            }
            let mut offset = DVec3::ZERO;
            for k in 0..3 {
                offset[k] = cursor.number("an OFFSET component")? * scale;
            }
            joint.offset = Some(offset);
        } else if eq(token, "CHANNELS") {
            let joint = h.top_mut(cursor, start, "CHANNELS")?;
            parse_channels(cursor, start, joint)?;
        } else if token == b"}" {
            let Some(top) = h.stack.pop() else {
                let message = "expected ROOT or MOTION, found } with no open joint";
                return Err(cursor.error_at(start, message.into()));
            };
            if h.joints[top].offset.is_none() {
                let message = format!(
                    "expected OFFSET in joint `{}` before }}",
                    h.joints[top].name
                );
                return Err(cursor.error_at(start, message));
            }
        } else if eq(token, "MOTION") {
            if let Some(&top) = h.stack.last() {
                let message = format!(
                    "expected }} to close joint `{}`, found MOTION",
                    h.joints[top].name
                );
                return Err(cursor.error_at(start, message));
            }
            if h.joints.is_empty() {
                let message = "expected ROOT, found MOTION before any joint";
                return Err(cursor.error_at(start, message.into()));
            }
            return Ok((h.joints, h.names));
        } else {
            let message = format!(
                "expected ROOT, JOINT, End Site, OFFSET, CHANNELS, }} or MOTION, found {}",
                show(token)
            );
            return Err(cursor.error_at(start, message));
        }
    }
}

/// The hierarchy read so far: joints in file order, the open blocks, the names used.
#[derive(Default)]
struct Hierarchy {
    joints: Vec<ParsedJoint>,
    stack: Vec<usize>,
    names: HashSet<String>,
}

impl Hierarchy {
    /// The innermost open joint, for a keyword that must be inside one.
    fn top_mut(
        &mut self,
        cursor: &Cursor<'_>,
        start: usize,
        keyword: &str,
    ) -> Result<&mut ParsedJoint, BvhError> {
        match self.stack.last() {
            Some(&top) => Ok(&mut self.joints[top]),
            None => Err(cursor.error_at(
                start,
                format!("expected ROOT or MOTION, found {keyword} outside any joint"),
            )),
        }
    }

    fn push(
        &mut self,
        cursor: &mut Cursor<'_>,
        start: usize,
        joint: ParsedJoint,
        brace: bool,
    ) -> Result<(), BvhError> {
        if self.joints.len() >= MAX_JOINTS {
            return Err(cursor.error_at(start, format!("more than {MAX_JOINTS} joints")));
        }
        self.joints.push(joint);
        self.stack.push(self.joints.len() - 1);
        if !brace {
            cursor.expect_token("{")?;
        }
        Ok(())
    }

    fn open_joint(
        &mut self,
        cursor: &mut Cursor<'_>,
        start: usize,
        is_root: bool,
    ) -> Result<(), BvhError> {
        if is_root != self.stack.is_empty() {
            let message = if is_root {
                "expected JOINT or }, found ROOT inside another joint"
            } else {
                "expected ROOT or MOTION, found JOINT outside any ROOT"
            };
            return Err(cursor.error_at(start, message.into()));
        }
        if let Some(&top) = self.stack.last() {
            self.joints[top].check_body_ready(cursor, start)?;
        }
        let (name_start, name) = cursor.rest_of_line();
        let (name, brace) = strip_brace(name);
        if name.is_empty() {
            let keyword = if is_root { "ROOT" } else { "JOINT" };
            return Err(
                cursor.error_at(name_start, format!("expected a joint name after {keyword}"))
            );
        }
        if let Some(brace) = name.iter().position(|&c| c == b'{' || c == b'}') {
            let message = "expected a joint name without braces (a lone `{` opens the block)";
            return Err(cursor.error_at(name_start + brace, message.into()));
        }
        let name = String::from_utf8_lossy(name).into_owned();
        if !self.names.insert(name.clone()) {
            let message =
                format!("joint name `{name}` is used twice; BVH joint names must be unique");
            return Err(cursor.error_at(name_start, message));
        }
        let joint = ParsedJoint::new(name, self.stack.last().copied(), false);
        self.push(cursor, start, joint, brace)
    }

    fn open_end_site(&mut self, cursor: &mut Cursor<'_>, start: usize) -> Result<(), BvhError> {
        let parent = self.top_mut(cursor, start, "End Site")?;
        parent.check_body_ready(cursor, start)?;
        if parent.end_site {
            let message = "expected OFFSET or }, found End Site inside an End Site";
            return Err(cursor.error_at(start, message.into()));
        }
        let name = format!("{}_End", parent.name);
        let (site_start, rest) = cursor.rest_of_line();
        let (rest, brace) = strip_brace(rest);
        if !eq(rest, "Site") {
            let message = format!("expected `Site` after End, found {}", show(rest));
            return Err(cursor.error_at(site_start, message));
        }
        let joint = ParsedJoint::new(name, self.stack.last().copied(), true);
        self.push(cursor, start, joint, brace)
    }
}

/// `CHANNELS n name...` for `joint`.
fn parse_channels(
    cursor: &mut Cursor<'_>,
    start: usize,
    joint: &mut ParsedJoint,
) -> Result<(), BvhError> {
    if joint.end_site {
        let message = "expected OFFSET or }, found CHANNELS in an End Site";
        return Err(cursor.error_at(start, message.into()));
    }
    if joint.channels_seen {
        let message = format!("joint `{}` has a second CHANNELS line", joint.name);
        return Err(cursor.error_at(start, message));
    }
    joint.channels_seen = true;
    let (count_start, count) = cursor
        .token()
        .ok_or_else(|| cursor.error_here("expected a channel count, found end of file"))?;
    let n = match parse_u64(count) {
        Some(n) if n <= 6 => n,
        _ => {
            let message = format!(
                "expected a channel count from 0 to 6, found {}",
                show(count)
            );
            return Err(cursor.error_at(count_start, message));
        }
    };
    for _ in 0..n {
        let (c_start, name) = cursor
            .token()
            .ok_or_else(|| cursor.error_here("expected a channel name, found end of file"))?;
        let Some(channel) = Channel::from_name(name) else {
            let message = format!(
                "expected a channel name (Xposition ... Zrotation), found {}",
                show(name)
            );
            return Err(cursor.error_at(c_start, message));
        };
        if joint.channels.contains(&channel) {
            let message = format!(
                "channel {} repeated in joint `{}`",
                channel.name(),
                joint.name
            );
            return Err(cursor.error_at(c_start, message));
        }
        joint.channels.push(channel);
    }
    Ok(())
}

/// `Frames: N` and `Frame Time: t`; returns N, where N starts, and t.
fn parse_motion_header(cursor: &mut Cursor<'_>) -> Result<(u64, usize, f64), BvhError> {
    // Frames: N
    let (frames_start, token) = cursor
        .token()
        .ok_or_else(|| cursor.error_here("expected `Frames:`, found end of file"))?;
    let frame_token = if eq(token, "Frames:") {
        cursor.token()
    } else if eq(token, "Frames") {
        cursor.expect_token(":")?;
        cursor.token()
    } else {
        return Err(cursor.error_at(
            frames_start,
            format!("expected `Frames:`, found {}", show(token)),
        ));
    };
    let (count_start, count) = frame_token
        .ok_or_else(|| cursor.error_here("expected a frame count, found end of file"))?;
    let frame_count = parse_u64(count).ok_or_else(|| {
        cursor.error_at(
            count_start,
            format!("expected a whole frame count, found {}", show(count)),
        )
    })?;
    // Frame Time: t
    cursor.expect_keyword("Frame")?;
    let (time_start, token) = cursor
        .token()
        .ok_or_else(|| cursor.error_here("expected `Time:`, found end of file"))?;
    if eq(token, "Time") {
        cursor.expect_token(":")?;
    } else if !eq(token, "Time:") {
        return Err(cursor.error_at(
            time_start,
            format!("expected `Time:`, found {}", show(token)),
        ));
    }
    let time_start = cursor.skip_ws();
    let frame_time = cursor.number("a frame time in seconds")?;
    if frame_time <= 0.0 {
        return Err(cursor.error_at(
            time_start,
            format!("expected a positive frame time, found {frame_time}"),
        ));
    }

    Ok((frame_count, count_start, frame_time))
}

/// The frame values: exactly `frame_count` rows of the layout's channels, nothing after them.
fn parse_values(
    cursor: &mut Cursor<'_>,
    layout: &BvhLayout,
    frame_count: u64,
    count_start: usize,
    scale: f64,
) -> Result<Vec<f64>, BvhError> {
    let bytes = cursor.bytes;
    let channel_count = layout.channel_count();
    let total = usize::try_from(frame_count)
        .ok()
        .and_then(|f| f.checked_mul(channel_count));
    // Every value needs at least one character and a separator: refuse counts the
    // remaining input cannot hold before allocating for them.
    let remaining = bytes.len() - cursor.pos;
    let total = match total {
        Some(t) if t <= remaining / 2 + 1 => t,
        _ => {
            return Err(cursor.error_at(count_start, format!(
                "Frames: {frame_count} with {channel_count} channels per frame needs more values than the {remaining} remaining bytes can hold"
            )));
        }
    };
    if channel_count == 0 && frame_count > 10_000 {
        return Err(cursor.error_at(
            count_start,
            format!(
                "expected at most 10000 frames in a file without channels, found {frame_count}"
            ),
        ));
    }
    let position_scaled: Vec<bool> = layout
        .joints
        .iter()
        .flat_map(|j| j.channels.iter().map(|c| !c.is_rotation()))
        .collect();
    let mut values = Vec::with_capacity(total);
    let mut k = 0;
    while values.len() < total {
        let start = cursor.skip_ws();
        let Some((value, end)) = parse_f64(bytes, start) else {
            return Err(cursor.value_error(start, values.len(), channel_count, total));
        };
        if !bytes.get(end).is_none_or(|c| is_ws(*c)) {
            return Err(cursor.value_error(start, values.len(), channel_count, total));
        }
        if !value.is_finite() {
            return Err(cursor.error_at(
                start,
                format!(
                    "expected a finite number, found {}",
                    show(&bytes[start..end])
                ),
            ));
        }
        values.push(if position_scaled[k] {
            value * scale
        } else {
            value
        });
        k += 1;
        if k == channel_count {
            k = 0;
        }
        cursor.pos = end;
    }
    if let Some((start, token)) = cursor.token() {
        return Err(cursor.error_at(start, format!(
            "expected end of file after {frame_count} frames of {channel_count} values, found {}",
            show(token)
        )));
    }

    Ok(values)
}

/// The skeleton, with End Site names made unique.
fn build_skeleton(
    joints: &mut [ParsedJoint],
    names: &mut HashSet<String>,
) -> Result<ikarus_core::Skeleton, ikarus_core::SkeletonError> {
    let mut builder = SkeletonBuilder::new();
    for j in 0..joints.len() {
        if joints[j].end_site {
            // Give the synthetic End Site name a suffix if a joint already has it.
            let base = joints[j].name.clone();
            let mut n = 1;
            while !names.insert(joints[j].name.clone()) {
                n += 1;
                joints[j].name = format!("{base}{n}");
            }
        }
        builder.push(RawJoint {
            name: joints[j].name.clone(),
            parent: joints[j].parent.map(|p| joints[p].name.clone()),
            rest: Transform::from_translation(joints[j].offset.unwrap_or_default()),
            limit: ikarus_core::JointLimit::Free,
        });
    }
    builder.build()
}

struct ParsedJoint {
    name: String,
    parent: Option<usize>,
    end_site: bool,
    offset: Option<DVec3>,
    channels: Vec<Channel>,
    channels_seen: bool,
}

impl ParsedJoint {
    fn new(name: String, parent: Option<usize>, end_site: bool) -> Self {
        Self {
            name,
            parent,
            end_site,
            offset: None,
            channels: Vec::new(),
            channels_seen: false,
        }
    }

    /// A child may only start once the parent's OFFSET is known.
    fn check_body_ready(&self, cursor: &Cursor<'_>, at: usize) -> Result<(), BvhError> {
        if self.offset.is_none() {
            return Err(cursor.error_at(
                at,
                format!(
                    "expected OFFSET of joint `{}` before its children",
                    self.name
                ),
            ));
        }
        Ok(())
    }
}

struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
}

#[inline]
fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n' | 0x0b | 0x0c)
}

fn eq(token: &[u8], keyword: &str) -> bool {
    token.eq_ignore_ascii_case(keyword.as_bytes())
}

fn show(token: &[u8]) -> String {
    if token.is_empty() {
        return "nothing".into();
    }
    // Printable ASCII as it is, every other byte escaped (`\x01`, `\xff`): a message must
    // not carry control characters or broken UTF-8 to the terminal.
    let text: String = token[..token.len().min(40)]
        .iter()
        .flat_map(|&b| std::ascii::escape_default(b))
        .map(char::from)
        .collect();
    let ellipsis = if token.len() > 40 { "..." } else { "" };
    format!("`{text}{ellipsis}`")
}

/// Splits a trailing `{` off a name written on the same line as its brace.
fn strip_brace(text: &[u8]) -> (&[u8], bool) {
    match text.strip_suffix(b"{") {
        Some(rest) => (rest.trim_ascii_end(), true),
        None => (text, false),
    }
}

impl<'a> Cursor<'a> {
    /// Skips whitespace; returns the new position.
    #[inline]
    fn skip_ws(&mut self) -> usize {
        while let Some(&c) = self.bytes.get(self.pos) {
            if !is_ws(c) {
                break;
            }
            self.pos += 1;
        }
        self.pos
    }

    /// The next whitespace-separated token and its start.
    fn token(&mut self) -> Option<(usize, &'a [u8])> {
        let start = self.skip_ws();
        while let Some(&c) = self.bytes.get(self.pos) {
            if is_ws(c) {
                break;
            }
            self.pos += 1;
        }
        (self.pos > start).then(|| (start, &self.bytes[start..self.pos]))
    }

    /// The rest of the current line, trimmed, and where it starts.
    fn rest_of_line(&mut self) -> (usize, &'a [u8]) {
        while let Some(b' ' | b'\t') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
        let start = self.pos;
        while let Some(&c) = self.bytes.get(self.pos) {
            if c == b'\n' || c == b'\r' {
                break;
            }
            self.pos += 1;
        }
        (start, self.bytes[start..self.pos].trim_ascii())
    }

    fn expect_keyword(&mut self, keyword: &str) -> Result<(), BvhError> {
        match self.token() {
            Some((_, t)) if eq(t, keyword) => Ok(()),
            Some((start, t)) => {
                Err(self.error_at(start, format!("expected {keyword}, found {}", show(t))))
            }
            None => Err(self.error_here(&format!("expected {keyword}, found end of file"))),
        }
    }

    fn expect_token(&mut self, expected: &str) -> Result<(), BvhError> {
        self.expect_keyword(expected)
    }

    fn number(&mut self, what: &str) -> Result<f64, BvhError> {
        let start = self.skip_ws();
        match parse_f64(self.bytes, start) {
            Some((v, end)) if self.bytes.get(end).is_none_or(|c| is_ws(*c)) => {
                if !v.is_finite() {
                    return Err(self.error_at(
                        start,
                        format!(
                            "expected {what} (a finite number), found {}",
                            show(&self.bytes[start..end])
                        ),
                    ));
                }
                self.pos = end;
                Ok(v)
            }
            _ => {
                let found = self.token().map_or(&[][..], |(_, t)| t);
                Err(self.error_at(
                    start,
                    format!(
                        "expected {what}, found {}",
                        if found.is_empty() {
                            "end of file".into()
                        } else {
                            show(found)
                        }
                    ),
                ))
            }
        }
    }

    fn value_error(
        &mut self,
        start: usize,
        parsed: usize,
        channel_count: usize,
        total: usize,
    ) -> BvhError {
        let found = self.token().map_or(&[][..], |(_, t)| t);
        let frame = parsed / channel_count.max(1);
        let channel = parsed % channel_count.max(1);
        if found.is_empty() {
            self.error_at(start, format!(
                "file ends after {parsed} of {total} motion values (frame {frame}, channel {channel}); the file is truncated or Frames: is too large"
            ))
        } else {
            self.error_at(
                start,
                format!(
                    "expected a number for frame {frame}, channel {channel}, found {}",
                    show(found)
                ),
            )
        }
    }

    fn error_here(&self, message: &str) -> BvhError {
        self.error_at(self.pos, message.to_owned())
    }

    fn error_at(&self, pos: usize, message: String) -> BvhError {
        let pos = pos.min(self.bytes.len());
        let before = &self.bytes[..pos];
        // Only on the error path, so the naive count is fine.
        #[allow(clippy::naive_bytecount)]
        let line = 1 + before.iter().filter(|&&c| c == b'\n').count();
        let line_start = before
            .iter()
            .rposition(|&c| c == b'\n')
            .map_or(0, |i| i + 1);
        BvhError::Parse {
            line,
            column: pos - line_start + 1,
            message,
        }
    }
}
