//! JSON on stdout that is safe for a terminal.
//!
//! `serde_json` escapes C0 controls but writes DEL, C1 controls and bidi
//! overrides raw. Outside string literals JSON text is plain ASCII, so every
//! such character in serialized JSON sits inside a string and can be replaced
//! by its `\uXXXX` escape: the JSON means exactly the same, and nothing in a
//! transcript can move the cursor or reorder what the terminal shows.

use serde_json::Value;
use std::fmt::Write;
use toolgate_core::sanitize::is_unsafe;

/// `value` as one line of JSON.
pub fn line(value: &Value) -> String {
    escape_unsafe(value.to_string())
}

/// `value` as pretty-printed JSON.
pub fn pretty(value: &Value) -> String {
    // Serializing a `Value` into a String cannot fail (no I/O, string keys).
    escape_unsafe(serde_json::to_string_pretty(value).unwrap_or_default())
}

fn escape_unsafe(json: String) -> String {
    if !json.chars().any(is_unsafe) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe(c) {
            // Outside the BMP (tag characters) JSON needs a surrogate pair.
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                let _ = write!(out, "\\u{:04x}", unit);
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_and_bidi_overrides_are_escaped_and_round_trip() {
        let value = serde_json::json!({"s": "a\u{1b}[31m\u{7f}\u{9b}\u{202e}z"});
        let text = line(&value);
        assert_eq!(text, r#"{"s":"a\u001b[31m\u007f\u009b\u202ez"}"#);
        assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(value));
    }

    #[test]
    fn invisible_and_tag_characters_are_escaped_and_round_trip() {
        let value = serde_json::json!({"get_weather\u{200b}": "\u{2028}\u{feff}\u{e0041}"});
        let text = line(&value);
        assert_eq!(text, r#"{"get_weather\u200b":"\u2028\ufeff\udb40\udc41"}"#);
        assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(value));
    }
}
