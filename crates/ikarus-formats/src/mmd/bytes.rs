//! Little-endian readers and writers over a byte slice, with the byte offset in every error and
//! counts checked against the bytes left before anything is allocated.

use encoding_rs::{SHIFT_JIS, UTF_16LE};

use super::MmdError;
use super::vmd::VmdWriteError;

/// Text encodings MMD files use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Encoding {
    /// PMX with encoding byte 0.
    Utf16Le,
    /// PMX with encoding byte 1.
    Utf8,
}

/// A cursor over a file's bytes.
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    /// The current byte offset.
    pub(crate) fn offset(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    pub(crate) fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// An error at the current offset.
    pub(crate) fn error(&self, message: impl Into<String>) -> MmdError {
        MmdError::new(self.pos, message)
    }

    pub(crate) fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], MmdError> {
        if n > self.remaining() {
            return Err(self.error(format!(
                "expected {what} ({n} bytes), found the end of the file after {} bytes",
                self.remaining()
            )));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    pub(crate) fn skip(&mut self, n: usize, what: &str) -> Result<(), MmdError> {
        self.take(n, what).map(|_| ())
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], MmdError> {
        let mut out = [0; N];
        out.copy_from_slice(self.take(N, what)?);
        Ok(out)
    }

    pub(crate) fn u8(&mut self, what: &str) -> Result<u8, MmdError> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &str) -> Result<u16, MmdError> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &str) -> Result<u32, MmdError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(crate) fn i32(&mut self, what: &str) -> Result<i32, MmdError> {
        Ok(i32::from_le_bytes(self.array(what)?))
    }

    /// A finite `f32` (NaN and infinities are errors: they would poison every pose).
    pub(crate) fn f32(&mut self, what: &str) -> Result<f32, MmdError> {
        let at = self.pos;
        let value = f32::from_le_bytes(self.array(what)?);
        if value.is_finite() {
            Ok(value)
        } else {
            Err(MmdError::new(
                at,
                format!("expected {what} as a finite number, found {value}"),
            ))
        }
    }

    pub(crate) fn vec2(&mut self, what: &str) -> Result<[f32; 2], MmdError> {
        Ok([self.f32(what)?, self.f32(what)?])
    }

    pub(crate) fn vec3(&mut self, what: &str) -> Result<[f32; 3], MmdError> {
        Ok([self.f32(what)?, self.f32(what)?, self.f32(what)?])
    }

    pub(crate) fn vec4(&mut self, what: &str) -> Result<[f32; 4], MmdError> {
        Ok([
            self.f32(what)?,
            self.f32(what)?,
            self.f32(what)?,
            self.f32(what)?,
        ])
    }

    /// A record count, checked against the bytes left: `count × min_record_size` must fit, so
    /// no allocation sized by it exceeds the file.
    pub(crate) fn count(
        &mut self,
        raw: i64,
        min_record_size: usize,
        what: &str,
    ) -> Result<usize, MmdError> {
        let at = self.pos;
        let count = usize::try_from(raw)
            .map_err(|_| MmdError::new(at, format!("expected a {what} count ≥ 0, found {raw}")))?;
        if count.saturating_mul(min_record_size.max(1)) > self.remaining() {
            return Err(MmdError::new(
                at,
                format!(
                    "{count} {what} need at least {} bytes, only {} are left",
                    count.saturating_mul(min_record_size.max(1)),
                    self.remaining()
                ),
            ));
        }
        Ok(count)
    }

    /// A PMX index of `size` bytes (1, 2 or 4). Bone, material, morph and rigid-body indices
    /// are signed (−1 = none); vertex indices of 1 or 2 bytes are unsigned.
    pub(crate) fn index(&mut self, size: u8, unsigned: bool, what: &str) -> Result<i64, MmdError> {
        Ok(match (size, unsigned) {
            (1, false) => i64::from(self.u8(what)?.cast_signed()),
            (1, true) => i64::from(self.u8(what)?),
            (2, false) => i64::from(self.u16(what)?.cast_signed()),
            (2, true) => i64::from(self.u16(what)?),
            _ => i64::from(self.i32(what)?),
        })
    }

    /// A PMX text: an `i32` byte length, then the bytes in `encoding`.
    pub(crate) fn text(&mut self, encoding: Encoding, what: &str) -> Result<String, MmdError> {
        let raw = self.i32(what)?;
        let at = self.pos;
        let len = self.count(i64::from(raw), 1, what)?;
        let bytes = self.take(len, what)?;
        let decoded = match encoding {
            Encoding::Utf8 => std::str::from_utf8(bytes).ok().map(str::to_owned),
            Encoding::Utf16Le => UTF_16LE
                .decode_without_bom_handling_and_without_replacement(bytes)
                .map(std::borrow::Cow::into_owned),
        };
        decoded.ok_or_else(|| {
            let name = match encoding {
                Encoding::Utf8 => "UTF-8",
                Encoding::Utf16Le => "UTF-16LE",
            };
            MmdError::new(at, format!("{what} is not valid {name}"))
        })
    }

    /// A fixed-size Shift-JIS field (PMD, VMD): the bytes up to the first NUL. MMD cuts long
    /// names at the field's size, sometimes inside a two-byte character; a lone lead byte at
    /// the end is dropped. Anything else undecodable is an error.
    pub(crate) fn sjis(&mut self, size: usize, what: &str) -> Result<String, MmdError> {
        let at = self.pos;
        let field = self.take(size, what)?;
        decode_sjis(field)
            .ok_or_else(|| MmdError::new(at, format!("{what} is not valid Shift-JIS")))
    }
}

/// Decodes a NUL-terminated Shift-JIS field (see [`Reader::sjis`]).
pub(crate) fn decode_sjis(field: &[u8]) -> Option<String> {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    let text = &field[..end];
    if let Some(s) = SHIFT_JIS.decode_without_bom_handling_and_without_replacement(text) {
        return Some(s.into_owned());
    }
    // A name cut inside its last two-byte character.
    let cut = &text[..text.len().saturating_sub(1)];
    SHIFT_JIS
        .decode_without_bom_handling_and_without_replacement(cut)
        .map(std::borrow::Cow::into_owned)
}

/// Encodes `text` as Shift-JIS into a field of `size` bytes, NUL padded, cut at a character
/// boundary when it is longer (MMD's own behaviour when it saves). Characters Shift-JIS cannot
/// hold are an error naming them.
pub(crate) fn encode_sjis(text: &str, size: usize) -> Result<Vec<u8>, VmdWriteError> {
    let (bytes, _, unmappable) = SHIFT_JIS.encode(text);
    if unmappable {
        return Err(VmdWriteError::Unencodable {
            text: text.to_owned(),
        });
    }
    let mut out = Vec::with_capacity(size);
    for ch in text.chars() {
        let mut buf = [0; 4];
        let (one, _, _) = SHIFT_JIS.encode(ch.encode_utf8(&mut buf));
        if out.len() + one.len() > size {
            break;
        }
        out.extend_from_slice(&one);
    }
    debug_assert!(out.len() <= bytes.len());
    out.resize(size, 0);
    Ok(out)
}

/// The Shift-JIS bytes of `text` cut to `size` bytes (the key VMD files use for a bone name).
pub(crate) fn sjis_key(text: &str, size: usize) -> Vec<u8> {
    let (bytes, _, _) = SHIFT_JIS.encode(text);
    bytes[..bytes.len().min(size)].to_vec()
}

/// Little-endian writer helpers.
pub(crate) trait Put {
    fn put_u32(&mut self, v: u32);
    fn put_f32(&mut self, v: f32);
}

impl Put for Vec<u8> {
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }

    fn put_f32(&mut self, v: f32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
}
