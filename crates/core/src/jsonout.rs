//! JSON that is safe for a terminal: what the binary prints and the Python
//! package returns, byte for byte the same.
//!
//! `serde_json` escapes C0 controls but writes DEL, C1 controls and bidi
//! overrides raw. Outside string literals JSON text is plain ASCII, so every
//! such character in serialized JSON sits inside a string and can be replaced
//! by its `\uXXXX` escape: the JSON means exactly the same, and nothing in a
//! transcript can move the cursor or reorder what the terminal shows.

use crate::sanitize::{MAY_START_UNSAFE, is_unsafe};
use serde::Serialize;
use serde_json::ser::{CompactFormatter, Formatter, PrettyFormatter};
use serde_json::{Map, Value};
use std::io;

/// The version of every JSON record toolgate prints: each object record ends
/// with `"schema_version": 1`. It goes up when a key changes meaning or goes
/// away; new keys do not change it.
pub const SCHEMA_VERSION: u64 = 1;

/// `value` with `schema_version` as the last key of the object, or of each
/// object of an array (the records of `--format json`).
pub fn versioned(value: Value) -> Value {
    match value {
        Value::Object(mut map) => {
            // Moved to the end when it is already there.
            map.shift_remove("schema_version");
            map.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
            Value::Object(map)
        }
        Value::Array(items) => Value::Array(items.into_iter().map(versioned).collect()),
        other => other,
    }
}

/// `value` as one line of JSON.
pub fn line<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(256);
    write_line(&mut out, value);
    into_string(out)
}

/// Appends `value` as one line of JSON (no newline) to `out`: serialized
/// directly, without a `Value` tree, unsafe characters escaped as they are
/// written.
pub fn write_line<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    let mut ser = serde_json::Serializer::with_formatter(&mut *out, Safe(CompactFormatter));
    // Writing into a Vec cannot fail, and every type printed here serializes
    // (string keys only); a failure would leave a partial line, never a panic.
    let _ = value.serialize(&mut ser);
}

/// Appends `s` as a JSON string, byte for byte as [`write_line`] writes it
/// (serde_json's escapes, then every unsafe character as `\uXXXX`), with
/// runs of printable ASCII copied a block at a time rather than looked at
/// byte by byte twice.
pub fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut start = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b.wrapping_sub(0x20) < 0x5f && b != b'"' && b != b'\\' {
            i = skip_plain_text(bytes, i + 1);
            continue;
        }
        if b >= 0x80 && !MAY_START_UNSAFE[usize::from(b)] {
            i += 1;
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        match b {
            // serde_json's escapes.
            b'"' | b'\\' | 0x00..=0x1f => crate::jsonstr::escape(out, b),
            _ => {
                // DEL or a byte that may begin an unsafe character: a
                // character boundary (never a continuation byte).
                let Some(c) = s.get(i..).and_then(|rest| rest.chars().next()) else {
                    break;
                };
                if is_unsafe(c) {
                    out.extend_from_slice(unicode_escape(c, &mut [0; 12]));
                } else {
                    out.extend_from_slice(&bytes[i..i + c.len_utf8()]);
                }
                i += c.len_utf8();
                start = i;
                continue;
            }
        }
        i += 1;
        start = i;
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

/// Appends `value`, `depth` levels down, as compact JSON, byte for byte as
/// [`write_line`] writes it: strings by [`write_str`], numbers by
/// serde_json. Nesting deeper than serde_json reads is left to serde_json.
fn write_value(out: &mut Vec<u8>, value: &Value, depth: usize) {
    /// serde_json's default recursion limit when reading.
    const MAX_DEPTH: usize = 128;
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(_) => write_line(out, value),
        Value::String(s) => write_str(out, s),
        _ if depth >= MAX_DEPTH => write_line(out, value),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item, depth + 1);
            }
            out.push(b']');
        }
        Value::Object(map) => write_map_at(out, map, depth),
    }
}

/// Appends `map` as a compact JSON object, byte for byte as [`write_line`]
/// writes it (values by `write_value`).
pub fn write_map(out: &mut Vec<u8>, map: &Map<String, Value>) {
    write_map_at(out, map, 0);
}

fn write_map_at(out: &mut Vec<u8>, map: &Map<String, Value>, depth: usize) {
    out.push(b'{');
    for (i, (key, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_str(out, key);
        out.push(b':');
        write_value(out, item, depth + 1);
    }
    out.push(b'}');
}

/// `value` as pretty-printed JSON.
pub fn pretty<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = Vec::with_capacity(1024);
    let mut ser = serde_json::Serializer::with_formatter(&mut out, Safe(PrettyFormatter::new()));
    // As in `write_line`: a Vec sink, string keys only.
    let _ = value.serialize(&mut ser);
    into_string(out)
}

/// JSON written into bytes, as text.
pub fn into_string(bytes: Vec<u8>) -> String {
    // serde_json (and the ASCII written beside it) is UTF-8 only; the lossy
    // branch is never taken.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `c` as JSON's `\\uXXXX` escape (lower-case hex, as serde_json writes
/// it), in `buf`: outside the BMP (tag characters) a surrogate pair.
fn unicode_escape(c: char, buf: &mut [u8; 12]) -> &[u8] {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut units = [0u16; 2];
    let mut len = 0;
    for unit in c.encode_utf16(&mut units) {
        buf[len] = b'\\';
        buf[len + 1] = b'u';
        for (k, shift) in [12, 8, 4, 0].into_iter().enumerate() {
            buf[len + 2 + k] = HEX[usize::from((*unit >> shift) & 0xf)];
        }
        len += 6;
    }
    &buf[..len]
}

/// The index of the first byte of `bytes` at or after `i` that is not
/// printable ASCII or is `"` or `\\` (bytes a JSON string holds as they are),
/// `bytes.len()` when there is none.
fn skip_plain_text(bytes: &[u8], i: usize) -> usize {
    skip_while(bytes, i, |b| {
        b.wrapping_sub(0x20) < 0x5f && b != b'"' && b != b'\\'
    })
}

/// The index of the first byte of `bytes` at or after `i` that is not
/// printable ASCII (`0x20..=0x7e`: none of these can begin an unsafe
/// character), `bytes.len()` when there is none.
fn skip_printable(bytes: &[u8], i: usize) -> usize {
    skip_while(bytes, i, |b| b.wrapping_sub(0x20) < 0x5f)
}

/// The index of the first byte at or after `i` that is not `plain`
/// (`bytes.len()` when there is none): 16 bytes at a time, then byte by
/// byte in the block that has one.
#[inline(always)]
fn skip_while(bytes: &[u8], mut i: usize, plain: impl Fn(u8) -> bool) -> usize {
    const BLOCK: usize = 16;
    while let Some(block) = bytes.get(i..i + BLOCK) {
        // No early exit inside a block: the compiler checks it at once.
        if !block.iter().fold(true, |all, &b| all & plain(b)) {
            break;
        }
        i += BLOCK;
    }
    let rest = bytes.get(i..).unwrap_or_default();
    i + rest.iter().position(|&b| !plain(b)).unwrap_or(rest.len())
}

/// A formatter that writes every unsafe character of a string
/// ([`is_unsafe`]) as its `\uXXXX` escape, and is otherwise `F`. serde_json
/// has already escaped quotes, backslashes and C0 controls before a fragment
/// reaches it.
struct Safe<F>(F);

impl<F: Formatter> Formatter for Safe<F> {
    fn write_string_fragment<W: ?Sized + io::Write>(
        &mut self,
        w: &mut W,
        fragment: &str,
    ) -> io::Result<()> {
        // Only a byte of `MAY_START_UNSAFE` can begin an unsafe character:
        // the others are skipped without decoding.
        let bytes = fragment.as_bytes();
        let mut start = 0;
        let mut i = 0;
        while let Some(&b) = bytes.get(i) {
            if !MAY_START_UNSAFE[usize::from(b)] {
                // After printable ASCII, the rest of it is skipped at once.
                i = if b < 0x80 {
                    skip_printable(bytes, i + 1)
                } else {
                    i + 1
                };
                continue;
            }
            // Such a byte is never a continuation byte: `i` is a boundary.
            let Some(c) = fragment.get(i..).and_then(|rest| rest.chars().next()) else {
                break;
            };
            if is_unsafe(c) {
                w.write_all(&bytes[start..i])?;
                w.write_all(unicode_escape(c, &mut [0; 12]))?;
                start = i + c.len_utf8();
            }
            i += c.len_utf8();
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

/// Writes the `text` event of `text` and its newline to `out`: byte for
/// byte what [`line()`] of [`versioned`] gives for
/// `{"event": "text", "text": …}` (a `text` event of `toolgate parse
/// --stream`), escaped straight from the stream's buffer (no `Value`, no copy of the text) a
/// run at a time, through `buf` in pieces of [`ESCAPE_PIECE`] bytes, so a
/// long text never becomes one long line in memory.
pub fn text_event(out: &mut impl io::Write, buf: &mut Vec<u8>, text: &str) -> io::Result<()> {
    out.write_all(b"{\"event\":\"text\",\"text\":\"")?;
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = rest.len().min(ESCAPE_PIECE);
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let (piece, after) = rest.split_at(cut);
        // Escaping is per character: the pieces' escapes, joined, are the
        // whole text's. `write_str` quotes each piece; the quotes are left out.
        buf.clear();
        write_str(buf, piece);
        out.write_all(&buf[1..buf.len() - 1])?;
        rest = after;
    }
    writeln!(out, "\",\"schema_version\":{SCHEMA_VERSION}}}")
}

/// The longest piece of text escaped at once by [`text_event`].
pub const ESCAPE_PIECE: usize = 64 * 1024;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn text_events_are_the_json_lines_of_the_value() {
        // The last one is escaped in several pieces, cut inside runs of
        // multi-byte, unsafe and escaped characters.
        let long = "é\u{202e}\"ab東\n".repeat(20_000);
        for text in [
            "",
            "plain prose",
            "quote \" and \\ and \n\t\r\u{1}",
            "é 東京 🙂 \u{7f} \u{85} \u{202e} bidi",
            &long,
        ] {
            let mut got = Vec::new();
            text_event(&mut got, &mut Vec::new(), text).unwrap();
            let want = line(&versioned(
                serde_json::json!({"event": "text", "text": text}),
            ));
            assert_eq!(String::from_utf8(got).unwrap(), format!("{want}\n"));
        }
    }

    #[test]
    fn records_end_with_the_schema_version() {
        let v = versioned(serde_json::json!([{"a": 1}, {"b": 2}]));
        assert_eq!(
            line(&v),
            r#"[{"a":1,"schema_version":1},{"b":2,"schema_version":1}]"#
        );
    }

    #[test]
    fn controls_and_bidi_overrides_are_escaped_and_round_trip() {
        let value = serde_json::json!({"s": "a\u{1b}[31m\u{7f}\u{9b}\u{202e}z"});
        let text = line(&value);
        assert_eq!(text, r#"{"s":"a\u001b[31m\u007f\u009b\u202ez"}"#);
        assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(value));
    }

    #[test]
    fn unsafe_characters_are_escaped_wherever_they_fall_in_a_block() {
        for c in ['\u{7f}', '\u{9b}', '\u{202e}', '\u{feff}', '\u{e0041}'] {
            let mut units = [0u16; 2];
            let escaped: String = c
                .encode_utf16(&mut units)
                .iter()
                .map(|u| format!("\\u{u:04x}"))
                .collect();
            for at in 0..40 {
                for tail in ["", "é", "xyz", "é and a long printable tail to span blocks"] {
                    let plain = "p".repeat(at);
                    let s = format!("{plain}{c}{tail}{c}");
                    assert_eq!(
                        line(&s),
                        format!("\"{plain}{escaped}{tail}{escaped}\""),
                        "{at} {tail}"
                    );
                }
            }
        }
        assert_eq!(skip_printable(b"abc", 0), 3);
        assert_eq!(skip_printable(b"0123456789abcdef0123\x7f", 1), 20);
    }

    #[test]
    fn strings_and_values_written_by_hand_are_byte_for_byte_serde_json_s() {
        // Every character up to U+0250, the unsafe ones beyond, quotes,
        // backslashes and escapes, alone and in runs across the blocks.
        let mut chars: Vec<char> = (0..0x250u32).filter_map(char::from_u32).collect();
        chars.extend([
            '\u{61c}',
            '\u{200b}',
            '\u{200e}',
            '\u{2028}',
            '\u{202e}',
            '\u{2066}',
            '\u{feff}',
            '\u{fffd}',
            '\u{e0041}',
            '\u{1f642}',
            '東',
        ]);
        let mut texts: Vec<String> = chars.iter().map(|c| c.to_string()).collect();
        for (k, c) in chars.iter().enumerate() {
            texts.push(format!("{}{c}{}", "p".repeat(k % 37), "q".repeat(k % 19)));
        }
        texts.push(chars.iter().collect());
        texts.push(String::new());
        for text in &texts {
            let mut by_hand = Vec::new();
            write_str(&mut by_hand, text);
            let mut by_serde = Vec::new();
            write_line(&mut by_serde, text.as_str());
            assert_eq!(by_hand, by_serde, "{text:?}");
        }
        let value = serde_json::json!({
            "s": texts, "n": [0, -1, 1.5, 1e300, -0.0, 18446744073709551615u64, i64::MIN],
            "b": [true, false, null], "o": {}, "a": [], "k\u{202e}\"": {"x": [[{}]]}
        });
        let mut deep = serde_json::json!("leaf\u{7f}");
        for _ in 0..200 {
            deep = serde_json::json!([deep, {"k": 1}]);
        }
        for value in [value, deep] {
            let mut by_hand = Vec::new();
            write_value(&mut by_hand, &value, 0);
            let mut by_serde = Vec::new();
            write_line(&mut by_serde, &value);
            assert_eq!(by_hand, by_serde);
        }
    }

    #[test]
    fn invisible_and_tag_characters_are_escaped_and_round_trip() {
        let value = serde_json::json!({"get_weather\u{200b}": "\u{2028}\u{feff}\u{e0041}"});
        let text = line(&value);
        assert_eq!(text, r#"{"get_weather\u200b":"\u2028\ufeff\udb40\udc41"}"#);
        assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(value));
    }
}
