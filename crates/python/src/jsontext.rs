//! JSON text byte for byte as the `toolgate` binary prints it.
//!
//! The binary escapes, inside strings, every character that
//! [`toolgate_core::sanitize::is_unsafe`] names (DEL, C1 controls, bidi
//! controls, zero-width and tag characters, U+2028/2029) as `\uXXXX`, on top
//! of serde_json's own escapes, so that its JSON lines are safe for a
//! terminal. The records this module writes are the same bytes, so a
//! `relabel_batch` line can be compared with a `toolgate label --format
//! jsonl` line as text.

use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter};
use std::io;
use toolgate_core::sanitize::{MAY_START_UNSAFE, is_unsafe};

/// The version every JSON record ends with (`"schema_version": 1`), as the
/// binary writes it.
pub const SCHEMA_VERSION: u64 = 1;

/// `value` as one line of JSON, unsafe characters escaped.
pub fn line<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    write_line(&mut out, value);
    out
}

/// Appends `value` as one line of JSON (no newline) to `out`.
pub fn write_line<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, Safe(CompactFormatter));
    // Writing into a Vec cannot fail, and every value written here is a
    // `serde_json::Value` (string keys only): no error is possible.
    let _ = value.serialize(&mut ser);
}

/// `value` as one line of JSON, as a `String`.
pub fn line_string<T: Serialize + ?Sized>(value: &T) -> String {
    let bytes = line(value);
    // serde_json writes UTF-8 only; the escapes added are ASCII.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `c` as JSON's `\uXXXX` escape (lower-case hex as serde_json writes it),
/// a surrogate pair outside the BMP.
fn escape(c: char, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut units = [0u16; 2];
    for unit in c.encode_utf16(&mut units) {
        out.extend_from_slice(b"\\u");
        for shift in [12, 8, 4, 0] {
            out.push(HEX[usize::from((*unit >> shift) & 0xf)]);
        }
    }
}

/// A formatter writing every unsafe character of a string as its escape,
/// and otherwise `F`.
struct Safe<F>(F);

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        let bytes = fragment.as_bytes();
        let mut start = 0;
        for (i, c) in fragment.char_indices() {
            // Only a byte of `MAY_START_UNSAFE` can begin an unsafe character.
            if !MAY_START_UNSAFE[usize::from(bytes[i])] || !is_unsafe(c) {
                continue;
            }
            w.write_all(&bytes[start..i])?;
            let mut buf = Vec::with_capacity(12);
            escape(c, &mut buf);
            w.write_all(&buf)?;
            start = i + c.len_utf8();
        }
        w.write_all(&bytes[start..])
    }

    fn begin_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_array(w)
    }
    fn end_array<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array(w)
    }
    fn begin_array_value<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_array_value(w, first)
    }
    fn end_array_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_array_value(w)
    }
    fn begin_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object(w)
    }
    fn end_object<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object(w)
    }
    fn begin_object_key<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> io::Result<()> {
        self.0.begin_object_key(w, first)
    }
    fn end_object_key<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_key(w)
    }
    fn begin_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.begin_object_value(w)
    }
    fn end_object_value<W: ?Sized + io::Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.0.end_object_value(w)
    }
}
