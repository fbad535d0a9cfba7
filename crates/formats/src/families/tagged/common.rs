//! Pieces shared by the tagged modes: typing of XML-ish parameter text by the
//! tool schema (SPEC §9), JSON argument payloads, attribute and entity
//! reading, and a memoizing finder that keeps "the first of several closers"
//! searches linear.

use crate::input::{Input, Strictness};
use crate::jsonread;
use crate::util::{self, rebase};
use serde_json::{Map, Value};
use std::borrow::Cow;
use toolgate_core::{Candidate, FailureKind, ParseFailure, Repair, Span};

/// Finds `needle` at or after a position that never moves backwards between
/// calls, remembering the last answer: a search for a closer that is absent
/// (or far away) is paid for once, not once per opener. Total work over a
/// text is linear however many times it is asked.
pub(super) struct Next<'a> {
    hay: &'a [u8],
    /// Built once per thread per needle ([`crate::util::finder`]).
    finder: std::sync::Arc<memchr::memmem::Finder<'static>>,
    /// The last search: where it started and what it found (the first
    /// occurrence at or after that start, or none).
    memo: Option<(usize, Option<usize>)>,
}

impl<'a> Next<'a> {
    /// A finder for `needle` in `hay`.
    pub(super) fn new(hay: &'a str, needle: &'a str) -> Next<'a> {
        Next {
            hay: hay.as_bytes(),
            finder: crate::util::finder(needle),
            memo: None,
        }
    }

    /// The first occurrence at or after `from`. Asking with positions that
    /// never decrease keeps the total work linear; a smaller `from` than
    /// before is searched again (correct, just not memoized).
    pub(super) fn from(&mut self, from: usize) -> Option<usize> {
        if let Some((searched, found)) = self.memo
            && searched <= from
        {
            match found {
                Some(p) if p >= from => return Some(p),
                None => return None,
                Some(_) => {}
            }
        }
        let found = self
            .hay
            .get(from..)
            .and_then(|h| self.finder.find(h))
            .map(|i| from + i);
        self.memo = Some((from, found));
        found
    }
}

/// The declared types of `param` of `tool`, if the input carries schemas.
pub(super) fn types_of<'i>(
    input: &'i Input<'_>,
    tool: Option<&str>,
    param: &str,
) -> Option<&'i [String]> {
    input.param_types?.of(tool?, param)
}

/// One leading and one trailing newline (`\n` or `\r\n`) removed (SPEC §9).
pub(super) fn trim_one_newline(s: &str) -> &str {
    let s = s
        .strip_prefix("\r\n")
        .or_else(|| s.strip_prefix('\n'))
        .unwrap_or(s);
    s.strip_suffix("\r\n")
        .or_else(|| s.strip_suffix('\n'))
        .unwrap_or(s)
}

/// A schema type name in its JSON Schema spelling (`float` → `number`, …).
fn canonical_type(t: &str) -> &str {
    match t {
        "int" | "integer" => "integer",
        "float" | "double" | "number" => "number",
        "bool" | "boolean" => "boolean",
        "dict" | "object" => "object",
        "list" | "array" => "array",
        "str" | "string" | "text" => "string",
        other => other,
    }
}

/// Whether `v` is of the (canonical) JSON Schema type `t`; unknown type
/// names accept anything.
fn is_of_type(v: &Value, t: &str) -> bool {
    match t {
        "integer" => match v {
            Value::Number(n) => {
                n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
            }
            _ => false,
        },
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "null" => v.is_null(),
        "string" => v.is_string(),
        _ => true,
    }
}

/// The value of an XML-ish parameter (SPEC §9): a string unless the schema
/// types the parameter otherwise, in which case the text is read as JSON
/// (the lenient variant applies the JSON repairs and reports them). Text
/// that does not read as one of the schema's types stays a string: the
/// validator then labels it `type_coercion`; nothing is dropped or guessed.
pub(super) fn typed_value(
    text: &str,
    types: Option<&[String]>,
    lenient: Strictness,
) -> (Value, Vec<Repair>) {
    let Some(types) = types.filter(|t| !t.is_empty()) else {
        return (Value::String(text.to_string()), Vec::new());
    };
    let canon: Vec<&str> = types.iter().map(|t| canonical_type(t)).collect();
    if canon.contains(&"string") {
        if canon.contains(&"null") && text.trim() == "null" {
            return (Value::Null, Vec::new());
        }
        return (Value::String(text.to_string()), Vec::new());
    }
    json_value(text, &canon, lenient)
}

/// Whether the schema types a parameter as an object or an array (one of
/// its types, in any spelling).
pub(super) fn is_structured(types: Option<&[String]>) -> bool {
    types.is_some_and(|t| {
        t.iter()
            .any(|t| matches!(canonical_type(t), "object" | "array"))
    })
}

/// `text` read as JSON when it reads as one of `types`, else kept as a string.
pub(super) fn json_value(text: &str, types: &[&str], lenient: Strictness) -> (Value, Vec<Repair>) {
    match jsonread::read_all(text, lenient, false) {
        Ok(read) if types.is_empty() || types.iter().any(|t| is_of_type(&read.value, t)) => {
            (read.value, read.repairs)
        }
        _ => (Value::String(text.to_string()), Vec::new()),
    }
}

/// A JSON arguments payload: exactly one object. A JSON string holding an
/// object is double-encoded arguments: `escaping` in strict mode (SPEC §5
/// rule 6), the decoded object with [`Repair::DoubleEncodedArguments`] in
/// lenient mode. Failure offsets are absolute (`base` is the payload's
/// offset in the text).
pub(super) fn json_args(
    payload: &str,
    base: usize,
    lenient: Strictness,
    at_end: bool,
) -> (Result<Map<String, Value>, ParseFailure>, Vec<Repair>) {
    let start = base + (payload.len() - payload.trim_start().len());
    match jsonread::read_all(payload, lenient, at_end) {
        Err(f) => (Err(rebase(f, base)), Vec::new()),
        Ok(read) => crate::callobj::arguments_object(read.value, read.repairs, lenient, start),
    }
}

/// The value of attribute `key` in the text of an opening tag (between the
/// tag name and `>`): `name="f"`, `name='f'`, `name = "f"`. `None` when the
/// attribute is absent or its quote is not closed.
pub(super) fn attr(tag: &str, key: &str) -> Option<String> {
    let b = tag.as_bytes();
    let mut i = 0;
    while i < b.len() {
        // At an attribute name?
        let boundary = i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b'\r');
        if boundary && b[i..].starts_with(key.as_bytes()) {
            let mut j = i + key.len();
            while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(j) {
                j += 1;
            }
            if b.get(j) == Some(&b'=') {
                j += 1;
                while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(j) {
                    j += 1;
                }
                if let Some(&q @ (b'"' | b'\'')) = b.get(j) {
                    let start = j + 1;
                    let len = memchr::memchr(q, &b[start..])?;
                    return Some(tag[start..start + len].to_string());
                }
                return None;
            }
        }
        // Skip a quoted value so that `x="name=y"` is not read as `name`.
        if let q @ (b'"' | b'\'') = b[i] {
            match memchr::memchr(q, &b[i + 1..]) {
                Some(len) => i += len + 2,
                None => return None,
            }
            continue;
        }
        i += 1;
    }
    None
}

/// XML character references decoded: `&lt;` `&gt;` `&amp;` `&quot;`
/// `&apos;` and `&#N;` / `&#xH;`. Anything else (a bare `&`, an unknown
/// entity) is kept as written.
pub(super) fn decode_entities(s: &str) -> Cow<'_, str> {
    if !s.contains('&') {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let after = &rest[amp + 1..];
        // Entity names are short: look for `;` within 10 bytes.
        let semi = after.as_bytes().iter().take(10).position(|&c| c == b';');
        let decoded = semi.and_then(|n| {
            let name = &after[..n];
            let c = match name {
                "lt" => Some('<'),
                "gt" => Some('>'),
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                _ => {
                    let num = name.strip_prefix('#')?;
                    let code = match num.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                        None => num.parse::<u32>().ok()?,
                    };
                    char::from_u32(code)
                }
            }?;
            Some((c, n + 1))
        });
        match decoded {
            Some((c, used)) => {
                out.push(c);
                rest = &after[used..];
            }
            None => {
                out.push('&');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Cow::Owned(out)
}

/// The element text with `<![CDATA[…]]>` sections taken literally and the
/// rest entity-decoded (XML semantics).
pub(super) fn xml_text(s: &str) -> Cow<'_, str> {
    const OPEN: &str = "<![CDATA[";
    if !s.contains(OPEN) {
        return decode_entities(s);
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(o) = rest.find(OPEN) {
        out.push_str(&decode_entities(&rest[..o]));
        let inner = &rest[o + OPEN.len()..];
        match inner.find("]]>") {
            Some(c) => {
                out.push_str(&inner[..c]);
                rest = &inner[c + 3..];
            }
            None => {
                out.push_str(inner);
                rest = "";
            }
        }
    }
    out.push_str(&decode_entities(rest));
    Cow::Owned(out)
}

/// The arguments of a call whose closing marker is missing because the text
/// ends right after its payload. A complete payload is still a call (servers
/// strip stop tokens, SPEC §9), unless the output was cut by the length
/// limit (`finish_reason: length`) while the call was open: `truncated`.
pub(super) fn open_at_end(
    args: Result<Map<String, Value>, ParseFailure>,
    input: &Input<'_>,
    text: &str,
) -> Result<Map<String, Value>, ParseFailure> {
    match args {
        Ok(_) if input.hit_length_limit && std::ptr::eq(text, input.output) => Err(truncated(
            text.len(),
            "a call that was still open when the length limit cut the output",
        )),
        other => other,
    }
}

/// A JSON arguments payload ([`json_args`]) of a call whose closer may be
/// missing: at the end of the text (`at_end`), a complete payload is still
/// a call unless the length limit cut it ([`open_at_end`]).
pub(super) fn json_arguments(
    payload: &str,
    base: usize,
    (input, text): (&Input<'_>, &str),
    lenient: Strictness,
    at_end: bool,
) -> (Result<Map<String, Value>, ParseFailure>, Vec<Repair>) {
    let (args, repairs) = json_args(payload, base, lenient, at_end);
    let args = if at_end {
        open_at_end(args, input, text)
    } else {
        args
    };
    (args, repairs)
}

/// A call that does not read: its candidate over `at..end` (the raw text is
/// the span's) and `end`, where scanning resumes.
pub(crate) fn failed(
    mode: &'static str,
    text: &str,
    at: usize,
    end: usize,
    name: Option<String>,
    e: ParseFailure,
) -> (Candidate, usize) {
    let cand = util::candidate(
        mode,
        Span::new(at, end),
        &text[at..end],
        name,
        Err(e),
        Vec::new(),
    );
    (cand, end)
}

/// A block that opens with the mode's own call markup but is not a
/// well-formed call in the mode (GLM's `<arg_value>` without `<arg_key>`,
/// Qwen's `<function name="f">`, an `<invoke>` without a name, Kimi's
/// header and arguments without `<|tool_call_begin|>`): a `malformed`
/// candidate over `at..end`, its failure at `offset` saying `what` is
/// wrong. Skipping it as another family's syntax let the calls beside it
/// execute alone (probe 44). A body that really is another family's
/// syntax (a JSON body in `<tool_call>`, DECISIONS, hermes) is still
/// skipped by the engine before it gets here.
pub(crate) fn broken_call(
    mode: &'static str,
    text: &str,
    (at, end): (usize, usize),
    name: Option<String>,
    (offset, what): (usize, String),
) -> (Candidate, usize) {
    failed(mode, text, at, end, name, malformed(offset, what))
}

/// A call that reads: its candidate over `at..end` and `end`.
pub(crate) fn called(
    mode: &'static str,
    text: &str,
    (at, end): (usize, usize),
    name: String,
    args: Map<String, Value>,
    repairs: Vec<Repair>,
) -> (Candidate, usize) {
    let cand = util::candidate(
        mode,
        Span::new(at, end),
        &text[at..end],
        Some(name),
        Ok(args),
        repairs,
    );
    (cand, end)
}

/// A truncation failure at the end of the text.
pub(super) fn truncated(offset: usize, what: &str) -> ParseFailure {
    ParseFailure::new(
        FailureKind::Truncated,
        format!("output ends inside {what}"),
        offset,
    )
}

/// A malformed failure.
pub(super) fn malformed(offset: usize, message: impl Into<String>) -> ParseFailure {
    ParseFailure::new(FailureKind::Malformed, message, offset)
}

/// Whether `text[at..]` is a proper prefix of one of `tokens` (the output
/// was cut inside a tag).
pub(super) fn is_cut_token(rest: &str, tokens: &[&str]) -> bool {
    !rest.is_empty()
        && tokens
            .iter()
            .any(|t| t.len() > rest.len() && t.starts_with(rest))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ty(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn untyped_and_string_parameters_stay_strings() {
        assert_eq!(typed_value("42", None, Strictness::Strict).0, json!("42"));
        assert_eq!(
            typed_value("42", Some(&ty(&["string"])), Strictness::Strict).0,
            json!("42")
        );
        assert_eq!(
            typed_value("null", Some(&ty(&["string", "null"])), Strictness::Strict).0,
            Value::Null
        );
    }

    #[test]
    fn typed_parameters_read_as_json_or_stay_strings() {
        assert_eq!(
            typed_value("42", Some(&ty(&["integer"])), Strictness::Strict).0,
            json!(42)
        );
        assert_eq!(
            typed_value("2.5", Some(&ty(&["float"])), Strictness::Strict).0,
            json!(2.5)
        );
        assert_eq!(
            typed_value(" 1", Some(&ty(&["integer"])), Strictness::Strict).0,
            json!(1)
        );
        // Does not read as the schema's type: stays a string, never dropped.
        assert_eq!(
            typed_value("3.5", Some(&ty(&["integer"])), Strictness::Strict).0,
            json!("3.5")
        );
        assert_eq!(
            typed_value("abc", Some(&ty(&["object"])), Strictness::Strict).0,
            json!("abc")
        );
        // Strict: Python literal stays a string; lenient repairs and says so.
        assert_eq!(
            typed_value("True", Some(&ty(&["boolean"])), Strictness::Strict).0,
            json!("True")
        );
        let (v, r) = typed_value("True", Some(&ty(&["boolean"])), Strictness::Lenient);
        assert_eq!((v, r), (json!(true), vec![Repair::PythonLiterals]));
    }

    #[test]
    fn json_args_reads_objects_and_flags_double_encoding() {
        assert_eq!(
            json_args(r#" {"a": 1} "#, 10, Strictness::Strict, false)
                .0
                .unwrap()["a"],
            1
        );
        let (r, _) = json_args(r#""{\"a\": 1}""#, 10, Strictness::Strict, false);
        let f = r.unwrap_err();
        assert_eq!((f.kind, f.offset), (FailureKind::Escaping, 10));
        let (r, rep) = json_args(r#""{\"a\": 1}""#, 10, Strictness::Lenient, false);
        assert_eq!(r.unwrap()["a"], 1);
        assert_eq!(rep, vec![Repair::DoubleEncodedArguments]);
        let f = json_args("[1]", 3, Strictness::Strict, false)
            .0
            .unwrap_err();
        assert_eq!((f.kind, f.offset), (FailureKind::Malformed, 3));
        let f = json_args(r#"{"a": "#, 3, Strictness::Strict, true)
            .0
            .unwrap_err();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, 9));
    }

    #[test]
    fn attributes_entities_and_cdata() {
        assert_eq!(
            attr(r#" name = "k8s.scale" x='1'"#, "name").as_deref(),
            Some("k8s.scale")
        );
        assert_eq!(
            attr(r#" x="name=y" name='z'"#, "name").as_deref(),
            Some("z")
        );
        assert_eq!(attr(r#" names="a""#, "name"), None);
        assert_eq!(attr(r#" name="a"#, "name"), None);
        assert_eq!(
            decode_entities("a &lt;b&gt; &amp; &#65;&#x42; & c &bogus;"),
            "a <b> & AB & c &bogus;"
        );
        assert_eq!(xml_text("<![CDATA[a &amp; <b>]]> &amp;"), "a &amp; <b> &");
    }

    #[test]
    fn next_is_memoized_and_correct() {
        let text = "a..b..a..b";
        let mut n = Next::new(text, "b");
        assert_eq!(n.from(0), Some(3));
        assert_eq!(n.from(2), Some(3));
        assert_eq!(n.from(4), Some(9));
        assert_eq!(n.from(10), None);
        assert_eq!(n.from(11), None);
    }

    #[test]
    fn one_newline_each_side() {
        assert_eq!(trim_one_newline("\n\nx\n\n"), "\nx\n");
        assert_eq!(trim_one_newline("\r\nx\r\n"), "x");
        assert_eq!(trim_one_newline("  x "), "  x ");
    }
}
