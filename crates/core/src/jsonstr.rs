//! JSON strings exactly as serde_json writes them, written a block at a
//! time: for text that programs read back (the proxy's record lines, the
//! binary's log lines), where the bytes must be serde_json's and the
//! terminal-safe escapes of [`crate::jsonout`] do not apply.
//!
//! serde_json escapes `"`, `\` and the C0 controls (`\b`, `\t`, `\n`, `\f`,
//! `\r`, else `\u00xx` in lowercase hex) and writes every other byte as it
//! is (DEL and every non-ASCII character included). It looks at each byte
//! in turn; here the runs it writes as they are are skipped 16 bytes at a
//! time. The property test holds the bytes to serde_json's on any text.

/// Whether serde_json writes `s` inside a string as its own bytes (no
/// control character, quote or backslash).
#[inline]
pub fn plain(s: &str) -> bool {
    s.bytes().all(as_is)
}

/// Whether serde_json writes byte `c` of a string as it is.
#[inline(always)]
const fn as_is(c: u8) -> bool {
    c >= 0x20 && c != b'"' && c != b'\\'
}

/// The index of the first byte at or after `i` that serde_json escapes
/// (`b.len()` when there is none): 16 bytes at a time, then byte by byte
/// through a table (the short strings of a log line or a record never
/// fill a block).
#[inline(always)]
fn skip(b: &[u8], mut i: usize) -> usize {
    const BLOCK: usize = 16;
    while let Some(block) = b.get(i..i + BLOCK) {
        // No early exit inside a block: the compiler checks it at once.
        if !block.iter().fold(true, |all, &c| all & as_is(c)) {
            break;
        }
        i += BLOCK;
    }
    while let Some(&c) = b.get(i) {
        if ESCAPED[usize::from(c)] {
            break;
        }
        i += 1;
    }
    i
}

/// The bytes serde_json escapes inside a string ([`as_is`]'s complement).
static ESCAPED: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = !as_is(c as u8);
        c += 1;
    }
    t
};

/// Appends serde_json's escape of byte `c` of a string, one it does not
/// write as it is (`"`, `\\` or a C0 control): its short escape, else
/// `\u00xx` in lowercase hex.
pub(crate) fn escape(out: &mut Vec<u8>, c: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match c {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x09 => out.extend_from_slice(b"\\t"),
        0x0a => out.extend_from_slice(b"\\n"),
        0x0c => out.extend_from_slice(b"\\f"),
        0x0d => out.extend_from_slice(b"\\r"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(c >> 4)],
            HEX[usize::from(c & 0xf)],
        ]),
    }
}

/// Appends `s` as a JSON string, byte for byte as serde_json writes it.
#[inline]
pub fn write(out: &mut Vec<u8>, s: &str) {
    out.reserve(s.len() + 2);
    out.push(b'"');
    write_contents(out, s);
    out.push(b'"');
}

/// Appends `"key":`, the key as [`write`] writes it; `plain` says the
/// caller knows it is [`plain`] (it is then copied as it is).
#[inline]
pub fn write_key(out: &mut Vec<u8>, key: &str, plain: bool) {
    if plain {
        out.push(b'"');
        out.extend_from_slice(key.as_bytes());
        out.extend_from_slice(b"\":");
    } else {
        write(out, key);
        out.push(b':');
    }
}

/// Appends the inside of [`write`]: `s` escaped, without the quotes (for
/// a string written in pieces, such as a `Debug` text).
#[inline]
pub fn write_contents(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let mut start = 0;
    let mut i = 0;
    loop {
        i = skip(b, i);
        let Some(&c) = b.get(i) else {
            break;
        };
        out.extend_from_slice(&b[start..i]);
        escape(out, c);
        i += 1;
        start = i;
    }
    out.extend_from_slice(&b[start..]);
}

/// [`write`] for text a terminal shows (log lines on stderr): the same
/// JSON string to any reader, with the characters JSON lets stand raw but
/// a terminal must not get ([`crate::sanitize::is_unsafe`] past ASCII's
/// controls, which JSON escapes: DEL, C1 controls such as U+009B, bidi
/// overrides, invisible characters) escaped as `\uXXXX` too. Text
/// without them is written by [`write`], byte for byte as serde_json
/// writes it.
pub fn write_shown(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    write_contents_shown(out, s);
    out.push(b'"');
}

/// The inside of [`write_shown`] (for a string written in pieces).
pub fn write_contents_shown(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    let may = |c: u8| c >= 0x7f && crate::sanitize::MAY_START_UNSAFE[usize::from(c)];
    if !b.iter().copied().any(may) {
        write_contents(out, s);
        return;
    }
    let mut start = 0;
    for (i, c) in s.char_indices() {
        if u32::from(c) >= 0x7f && crate::sanitize::is_unsafe(c) {
            write_contents(out, &s[start..i]);
            let mut units = [0u16; 2];
            for u in c.encode_utf16(&mut units) {
                out.extend_from_slice(format!("\\u{u:04x}").as_bytes());
            }
            start = i + c.len_utf8();
        }
    }
    write_contents(out, &s[start..]);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn serde(s: &str) -> String {
        serde_json::to_string(s).expect("a string serializes")
    }

    #[test]
    fn text_shown_on_a_terminal_escapes_what_json_lets_stand() {
        let shown = |s: &str| {
            let mut out = Vec::new();
            write_shown(&mut out, s);
            String::from_utf8(out).unwrap()
        };
        let hostile = "m\u{9b}2J\u{202e}txt\u{7f}\u{200b}é東\u{e0041}\u{1b}[31m";
        let out = shown(hostile);
        assert_eq!(
            out,
            r#""m\u009b2J\u202etxt\u007f\u200bé東\udb40\udc41\u001b[31m""#
        );
        assert_eq!(serde_json::from_str::<String>(&out).unwrap(), hostile);
        assert!(!out.chars().any(crate::sanitize::is_unsafe), "{out}");
        for plain in ["", "get_weather", "données \"q\" \\ \n", "東京 🌧"] {
            assert_eq!(shown(plain), serde(plain), "{plain}");
        }
    }

    #[test]
    fn every_escape_and_the_block_edges() {
        let mut all = String::new();
        for c in (0u8..0x80)
            .map(char::from)
            .chain(['\u{7f}', '\u{85}', 'é', '東', '🙂', '\u{202e}'])
        {
            all.push(c);
        }
        // Escapes before, at and after the 16-byte block boundaries.
        let mut cases = vec![String::new(), all.clone(), all.repeat(3)];
        for at in [0, 1, 14, 15, 16, 17, 31, 32, 33, 47] {
            for e in ["\"", "\\", "\n", "\u{1}", "\u{1f}", "é"] {
                let mut s = "a".repeat(at);
                s.push_str(e);
                s.push_str(&"b".repeat(40));
                cases.push(s);
            }
        }
        for s in &cases {
            let mut out = Vec::new();
            write(&mut out, s);
            assert_eq!(String::from_utf8(out).unwrap(), serde(s), "{s:?}");
            assert_eq!(plain(s), serde(s) == format!("\"{s}\""), "{s:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn the_bytes_are_serde_jsons(s in "(\\PC|[\\u{0}-\\u{1f}\"\\\\\\u{7f}\\u{85}]){0,80}") {
            let mut out = Vec::new();
            write(&mut out, &s);
            prop_assert_eq!(String::from_utf8(out).unwrap(), serde(&s));
            for known in [false, plain(&s)] {
                let mut key = Vec::new();
                write_key(&mut key, &s, known);
                prop_assert_eq!(String::from_utf8(key).unwrap(), format!("{}:", serde(&s)));
            }
            let mut inside = Vec::new();
            write_contents(&mut inside, &s);
            prop_assert_eq!(format!("\"{}\"", String::from_utf8(inside).unwrap()), serde(&s));
            prop_assert_eq!(plain(&s), serde(&s) == format!("\"{s}\""));
        }
    }
}
