//! `y`: copying through the terminal (OSC 52), and what can be copied: the
//! raw output, the selected mode's calls, or a minimal repro transcript.
//!
//! The copied bytes are exactly the transcript's (a repro must reproduce),
//! but they never reach the terminal as text: OSC 52 carries them base64
//! encoded, so the only bytes written are `ESC ] 52 ; c ;`, the base64
//! alphabet and `BEL`.

use crate::event::Entry;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use toolgate_validator::ModeResult;

/// The most text one copy sends (many terminals drop longer OSC 52
/// sequences; a bigger copy is refused with a message).
pub const COPY_LIMIT: usize = 1024 * 1024;

/// Standard base64 (RFC 4648, with padding).
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The OSC 52 sequence that puts `text` on the system clipboard.
pub fn osc52(text: &str) -> String {
    format!("\u{1b}]52;c;{}\u{7}", base64(text.as_bytes()))
}

/// What `y` can copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CopyWhat {
    /// The raw model output.
    Output,
    /// The selected mode's normalized calls, as JSON.
    Calls,
    /// A minimal transcript that reproduces the selected mode's result.
    Repro,
}

impl CopyWhat {
    /// How the status bar names it.
    pub fn name(self) -> &'static str {
        match self {
            CopyWhat::Output => "raw output",
            CopyWhat::Calls => "calls",
            CopyWhat::Repro => "repro transcript",
        }
    }
}

/// The text to copy for `entry` with `mode` (the selected mode's result).
pub fn copy_text(what: CopyWhat, entry: &Entry, mode: Option<&ModeResult>) -> String {
    match what {
        CopyWhat::Output => entry.transcript.output.clone(),
        CopyWhat::Calls => {
            let calls: Vec<Value> = mode
                .map(|m| m.calls.iter().map(|c| c.to_json()).collect())
                .unwrap_or_default();
            // Serializing a Value into a String cannot fail.
            serde_json::to_string_pretty(&calls).unwrap_or_default()
        }
        CopyWhat::Repro => serde_json::to_string_pretty(&repro(entry, mode)).unwrap_or_default(),
    }
}

/// A minimal transcript reproducing `mode`'s result on `entry`: the output
/// (and reasoning and native calls when present), the expectation, and only
/// the tools the mode's candidates name when each of them is declared (a
/// `wrong_tool` needs the whole allowlist, so then every tool is kept).
/// No stored labels, model, task or other members.
pub fn repro(entry: &Entry, mode: Option<&ModeResult>) -> Value {
    let t = &entry.transcript;
    let named: HashSet<&str> = mode
        .map(|m| {
            m.candidates
                .iter()
                .filter_map(|c| c.name.as_deref())
                .collect()
        })
        .unwrap_or_default();
    let all_declared = !named.is_empty() && named.iter().all(|n| t.tool(n).is_some());
    let tools: Vec<Value> = t
        .tools
        .iter()
        .filter(|d| !all_declared || named.contains(d.name.as_str()))
        .map(|d| {
            let mut f = Map::new();
            f.insert("name".into(), Value::String(d.name.clone()));
            if let Some(desc) = &d.description {
                f.insert("description".into(), Value::String(desc.clone()));
            }
            if let Some(p) = &d.parameters {
                f.insert("parameters".into(), p.clone());
            }
            json!({"type": "function", "function": f})
        })
        .collect();
    let mut out = Map::new();
    out.insert("id".into(), Value::String(format!("{}_repro", t.id)));
    out.insert("tools".into(), Value::Array(tools));
    out.insert("output".into(), Value::String(t.output.clone()));
    if let Some(r) = &t.reasoning {
        out.insert("reasoning".into(), Value::String(r.clone()));
    }
    if let Some(calls) = &t.tool_calls {
        out.insert("tool_calls".into(), Value::Array(calls.clone()));
    }
    if let Some(e) = &t.expect {
        let calls: Vec<Value> = e
            .calls
            .iter()
            .map(|c| {
                let mut call = Map::new();
                call.insert("name".into(), Value::String(c.name.clone()));
                if let Some(a) = &c.arguments {
                    call.insert("arguments".into(), a.clone());
                }
                Value::Object(call)
            })
            .collect();
        out.insert("expect".into(), json!({ "calls": calls }));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc_4648_vectors() {
        for (plain, encoded) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), encoded);
        }
        assert_eq!(base64(&[0xff, 0xfe, 0x00]), "//4A");
    }

    #[test]
    fn osc52_carries_escapes_only_as_base64() {
        let seq = osc52("a\u{1b}]0;pwned\u{7}\u{9b}");
        assert!(seq.starts_with("\u{1b}]52;c;"));
        assert!(seq.ends_with('\u{7}'));
        let body = &seq["\u{1b}]52;c;".len()..seq.len() - 1];
        assert!(
            body.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'='),
            "{body}"
        );
        assert_eq!(body, base64("a\u{1b}]0;pwned\u{7}\u{9b}".as_bytes()));
    }
}
