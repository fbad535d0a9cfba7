//! Byte-preserving edits of JSON text.
//!
//! `label --write` must change only the `labels` member of a transcript and
//! keep every other byte, so that a PR shows label changes and nothing else
//! (and numbers such as 18446744073709551616 never pass through a float).
//! [`set_member`] finds the top-level members of an object by a single linear
//! scan and replaces or inserts one member.

use std::fmt;

/// The text is not a JSON object this module can edit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditError(pub String);

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for EditError {}

/// A top-level member of the root object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The decoded key (`"label\u0073"` is `labels`, as a JSON reader sees it).
    pub key: String,
    /// Byte offset of the key's opening quote.
    pub key_start: usize,
    /// Byte range of the value.
    pub value: std::ops::Range<usize>,
}

/// The top-level members of the object in `text` and the offset of its closing
/// brace. `text` must be valid JSON (callers parse it first).
pub fn members(text: &str) -> Result<(Vec<Member>, usize), EditError> {
    let b = text.as_bytes();
    members_at(text, skip_ws(b, 0), "text")
}

/// The members of the object starting at byte `start` (a `{`) and the offset
/// of its closing brace; `what` names the text in the error when there is no
/// object there.
fn members_at(text: &str, start: usize, what: &str) -> Result<(Vec<Member>, usize), EditError> {
    let b = text.as_bytes();
    let mut i = start;
    if b.get(i) != Some(&b'{') {
        return Err(EditError(format!("the {what} is not a JSON object")));
    }
    i += 1;
    let mut out = Vec::new();
    loop {
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b'}') => return Ok((out, i)),
            Some(b',') => {
                i += 1;
                continue;
            }
            Some(b'"') => {}
            _ => return Err(EditError(format!("unexpected byte at offset {i}"))),
        }
        let key_start = i;
        let key_end = skip_string(b, i)?;
        let raw_key = &text[key_start..key_end];
        // Decode escapes the way a JSON reader does, so that an escaped
        // spelling of a key is the same key.
        let key = if raw_key.contains('\\') {
            serde_json::from_str::<String>(raw_key)
                .unwrap_or_else(|_| raw_key[1..raw_key.len() - 1].to_string())
        } else {
            raw_key[1..raw_key.len() - 1].to_string()
        };
        i = skip_ws(b, key_end);
        if b.get(i) != Some(&b':') {
            return Err(EditError(format!("expected `:` at offset {i}")));
        }
        i = skip_ws(b, i + 1);
        let vstart = i;
        let vend = skip_value(b, i)?;
        out.push(Member {
            key,
            key_start,
            value: vstart..vend,
        });
        i = vend;
    }
}

/// `text` with the top-level member `key` set to `value_json`: replaced in
/// place when present, otherwise inserted after the last member, on its own
/// line with the file's indentation when the object is multi-line.
///
/// When `key` occurs more than once, a JSON reader keeps the last occurrence:
/// that one is replaced and the earlier ones are removed, so that what was
/// written is what is read back.
pub fn set_member(text: &str, key: &str, value_json: &str) -> Result<String, EditError> {
    set_member_nl(text, key, value_json, "\n")
}

/// [`set_member`] with the line ending `nl` (`"\r\n"` in a CRLF file) for an
/// inserted member.
pub fn set_member_nl(
    text: &str,
    key: &str,
    value_json: &str,
    nl: &str,
) -> Result<String, EditError> {
    let (members, close) = members(text)?;
    let same: Vec<usize> = (0..members.len())
        .filter(|&i| members[i].key == key)
        .collect();
    if let Some((&last, earlier)) = same.split_last() {
        let mut out = String::with_capacity(text.len() + value_json.len());
        let mut at = 0;
        for &i in earlier {
            // An earlier duplicate is followed by another member (at least
            // the last duplicate): remove it up to that member's key.
            let (m, next) = (&members[i], &members[i + 1]);
            out.push_str(&text[at..m.key_start]);
            at = next.key_start;
        }
        let m = &members[last];
        out.push_str(&text[at..m.value.start]);
        out.push_str(value_json);
        out.push_str(&text[m.value.end..]);
        return Ok(out);
    }
    let key_json = serde_json::to_string(key).unwrap_or_else(|_| format!("\"{key}\""));
    let mut out = String::with_capacity(text.len() + value_json.len() + 16);
    match members.last() {
        None => {
            out.push_str(&text[..close]);
            out.push_str(&key_json);
            out.push_str(": ");
            out.push_str(value_json);
            out.push_str(&text[close..]);
        }
        Some(last) => {
            let multiline = text[..last.key_start].contains('\n');
            out.push_str(&text[..last.value.end]);
            if multiline {
                let indent = indentation_before(text, last.key_start);
                out.push(',');
                out.push_str(nl);
                out.push_str(indent);
            } else {
                out.push_str(", ");
            }
            out.push_str(&key_json);
            out.push_str(": ");
            out.push_str(value_json);
            out.push_str(&text[last.value.end..]);
        }
    }
    Ok(out)
}

/// One step of a path into a JSON document: an object key or an array index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// The member with this (decoded) key; when the key appears more than
    /// once, the last one — the one `serde_json` keeps.
    Key(&'a str),
    /// The element at this index.
    Index(usize),
}

/// The byte range of the value at `path` in `text` (valid JSON: callers parse
/// it first), found by linear scans without recursion; `None` when a step is
/// missing or does not fit the value (a key into an array, …).
pub fn value_at(text: &str, path: &[Step<'_>]) -> Option<std::ops::Range<usize>> {
    let b = text.as_bytes();
    let start = skip_ws(b, 0);
    let mut range = start..skip_value(b, start).ok()?;
    for step in path {
        range = match step {
            Step::Key(key) => {
                members_at(text, range.start, "value")
                    .ok()?
                    .0
                    .into_iter()
                    .rev()
                    // Keys are compared decoded (`"argu\u006dents"` is `arguments`).
                    .find(|m| m.key == *key)?
                    .value
            }
            Step::Index(i) => array_elements(b, range.start).ok()?.into_iter().nth(*i)?,
        };
    }
    Some(range)
}

/// The byte ranges of the elements of the array starting at `start` (a `[`).
fn array_elements(b: &[u8], start: usize) -> Result<Vec<std::ops::Range<usize>>, EditError> {
    let mut i = start;
    if b.get(i) != Some(&b'[') {
        return Err(EditError("the value is not a JSON array".into()));
    }
    i += 1;
    let mut out = Vec::new();
    loop {
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b']') => return Ok(out),
            Some(b',') => {
                i += 1;
                continue;
            }
            None => return Err(EditError("unterminated array".into())),
            Some(_) => {}
        }
        let end = skip_value(b, i)?;
        out.push(i..end);
        i = end;
    }
}

/// The whitespace that starts the line holding `offset`.
pub fn indentation_before(text: &str, offset: usize) -> &str {
    let line_start = text[..offset].rfind('\n').map_or(0, |p| p + 1);
    let line = &text[line_start..offset];
    let n = line.len() - line.trim_start().len();
    &line[..n]
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

fn skip_string(b: &[u8], start: usize) -> Result<usize, EditError> {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err(EditError("unterminated string".into()))
}

/// One past the end of the value starting at `i` (iterative: no recursion).
fn skip_value(b: &[u8], start: usize) -> Result<usize, EditError> {
    let mut depth = 0usize;
    let mut i = start;
    loop {
        match b.get(i) {
            None => return Err(EditError("unterminated value".into())),
            Some(b'"') => {
                i = skip_string(b, i)?;
                if depth == 0 {
                    return Ok(i);
                }
            }
            Some(b'{' | b'[') => {
                depth += 1;
                i += 1;
            }
            Some(b'}' | b']') => {
                if depth == 0 {
                    return Ok(i);
                }
                depth -= 1;
                i += 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            Some(b',') if depth == 0 => return Ok(i),
            Some(c) if depth == 0 && matches!(c, b' ' | b'\t' | b'\n' | b'\r') => return Ok(i),
            Some(_) => i += 1,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn replaces_an_existing_member_and_keeps_every_other_byte() {
        let text = "{\n  \"n\": 18446744073709551616,\n  \"labels\": {\"a\": \"x\"},\n  \"z\": [1, {\"labels\": 2}]\n}\n";
        let out = set_member(text, "labels", "{\"a\": \"pass\"}").unwrap();
        assert_eq!(
            out,
            "{\n  \"n\": 18446744073709551616,\n  \"labels\": {\"a\": \"pass\"},\n  \"z\": [1, {\"labels\": 2}]\n}\n"
        );
    }

    #[test]
    fn inserts_after_the_last_member_with_the_file_indentation() {
        let text = "{\n    \"output\": \"hi\",\n    \"n\": 1\n}\n";
        let out = set_member(text, "labels", "{}").unwrap();
        assert_eq!(
            out,
            "{\n    \"output\": \"hi\",\n    \"n\": 1,\n    \"labels\": {}\n}\n"
        );
        let line = "{\"output\": \"a}\", \"n\": -1.5e3}";
        assert_eq!(
            set_member(line, "labels", "{}").unwrap(),
            "{\"output\": \"a}\", \"n\": -1.5e3, \"labels\": {}}"
        );
        assert_eq!(set_member("{ }", "k", "1").unwrap(), "{ \"k\": 1}");
    }

    #[test]
    fn value_at_follows_keys_and_indexes_and_keeps_the_last_duplicate() {
        let text = r#" {"a": [1, {"b": {"x": 1.0, "x": 2}}, "s"], "a\u0062": 3, "a": [0, {"b": "last"}]} "#;
        let at = |path: &[Step<'_>]| value_at(text, path).map(|r| &text[r]);
        assert_eq!(at(&[Step::Key("ab")]), Some("3"));
        assert_eq!(
            at(&[Step::Key("a"), Step::Index(1), Step::Key("b")]),
            Some(r#""last""#)
        );
        assert_eq!(at(&[Step::Key("a"), Step::Index(2)]), None);
        assert_eq!(at(&[Step::Key("ab"), Step::Index(0)]), None);
        let text = r#"[{"f": {"x": 1.0, "x": 2}}]"#;
        assert_eq!(
            value_at(text, &[Step::Index(0), Step::Key("f")]).map(|r| &text[r]),
            Some(r#"{"x": 1.0, "x": 2}"#)
        );
    }

    #[test]
    fn an_escaped_key_is_the_same_key() {
        let text = "{\"output\": \"a\", \"label\\u0073\": {\"tag\": \"pass\"}}";
        assert_eq!(
            set_member(text, "labels", "{}").unwrap(),
            "{\"output\": \"a\", \"label\\u0073\": {}}"
        );
    }

    #[test]
    fn duplicate_members_keep_one_the_last_position() {
        let text = "{\n  \"labels\": {\"a\": \"x\"},\n  \"output\": \"o\",\n  \"labels\": {\"a\": \"y\"}\n}\n";
        let out = set_member(text, "labels", "{\"a\": \"pass\"}").unwrap();
        assert_eq!(
            out,
            "{\n  \"output\": \"o\",\n  \"labels\": {\"a\": \"pass\"}\n}\n"
        );
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["labels"]["a"], "pass");
    }

    #[test]
    fn an_inserted_member_uses_the_files_line_ending() {
        let text = "{\r\n  \"output\": \"hi\"\r\n}\r\n";
        assert_eq!(
            set_member_nl(text, "labels", "{}", "\r\n").unwrap(),
            "{\r\n  \"output\": \"hi\",\r\n  \"labels\": {}\r\n}\r\n"
        );
    }

    #[test]
    fn rejects_non_objects() {
        assert!(set_member("[1]", "k", "1").is_err());
    }
}
