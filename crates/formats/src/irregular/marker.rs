//! `marker`: a `TOOL_CALL` token, then a JSON call object (selectools and
//! prompt-engineered agents of seed 004).
//!
//! # Wire format
//!
//! ```text
//! I will greet Alice now.
//! TOOL_CALL: {"tool_name": "greet", "parameters": {"name": "Alice"}}
//! ```
//!
//! The object may be fenced (```` TOOL_CALL:\n```json\n{…}\n``` ````). Name key
//! `tool_name`/`tool`/`name`, arguments `parameters`/`params`/`arguments`
//! ([`crate::callobj`]).
//!
//! Decisions (SPEC §9):
//! - `TOOL_CALL` must stand as a whole word, case-sensitive: `[TOOL_CALLS]`,
//!   `<tool_call>`, `MY_TOOL_CALL` and `tool_call:` do not count. Without the
//!   marker the mode finds nothing: it never searches the whole text for JSON;
//! - each marker yields one candidate (or one per element of a call list):
//!   the first `{` after it (before
//!   the next marker) starts the object; text after the object is ignored
//!   (`TOOL_CALL: {…}\nI will search.` is a call); a marker followed by no
//!   `{` (`TOOL_CALL: ["a"]`) yields nothing; a call list
//!   (`TOOL_CALL: [{…}, …]`) is read whole, one candidate per element
//!   (reading only its first object dropped the rest of the list);
//! - an object without a name key after a marker is a `malformed` candidate;
//! - the output ending inside the object is `truncated`.
//!
//! ```
//! use toolgate_formats::{by_name, Input, Strictness};
//! let out = r#"TOOL_CALL: {"tool_name": "greet", "parameters": {"name": "Alice"}}"#;
//! let c = by_name("marker").unwrap().extract(&Input::new(out), Strictness::Strict);
//! assert_eq!(c[0].call().unwrap().arguments["name"], "Alice");
//! ```

use crate::callobj::{self, CallObj};
use crate::families::jsonlike::json_array::{self, MissingName};
use crate::input::{Input, Strictness};
use crate::util;
use crate::{Extractor, jsonread};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Span};

const MODE: &str = "marker";

/// The `marker` extractor, with the token of its format file.
#[derive(Clone, Copy, Debug)]
pub struct Marker {
    /// The marker word (`TOOL_CALL`).
    pub marker: &'static str,
}

impl Extractor for Marker {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        r#"TOOL_CALL: {"tool_name": "greet", "parameters": {"name": "Alice"}}"#
    }
    fn describe(&self) -> &str {
        "the word TOOL_CALL, then a JSON object (fenced or not) with tool_name/tool/name and parameters/params/arguments"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| scan(self.marker, text, strictness))
    }
}

fn scan(marker: &str, text: &str, strictness: Strictness) -> Vec<Candidate> {
    let b = text.as_bytes();
    let markers: Vec<usize> = util::find_all(text, marker)
        .filter(|&at| util::is_word_at(text, at, marker))
        .collect();
    let mut out = crate::cap::Found::new();
    for (k, &at) in markers.iter().enumerate() {
        let region_end = markers.get(k + 1).copied().unwrap_or(text.len());
        let from = at + marker.len();
        let Some(brace) = memchr::memchr(b'{', &b[from..region_end]).map(|i| from + i) else {
            continue;
        };
        // A call list after the marker (`TOOL_CALL: [{…}, {…}]`) is read
        // whole: taking its first object dropped the rest (probe 44).
        let lead = text[from..brace].trim_end();
        if lead.ends_with('[') && util::opens_call_list(b, from + lead.len() - 1) {
            let open = from + lead.len() - 1;
            let (found, _) =
                json_array::open_list(MODE, text, at, open, strictness, MissingName::Fail);
            out.extend_vec(found);
            continue;
        }
        let at_end = region_end == text.len();
        let obj_text = &text[brace..region_end];
        match jsonread::read_prefix(obj_text, strictness, at_end) {
            Ok(read) => {
                let mut end = brace + read.end;
                // A closing fence right after the object belongs to the call.
                let after = util::skip_ws(b, end);
                if b[after.min(b.len())..].starts_with(b"```") {
                    end = after + 3;
                }
                let raw = &text[brace..brace + read.end];
                let span = Span::new(at, end.min(region_end.max(brace + read.end)));
                match callobj::from_value(&read.value, strictness) {
                    CallObj::Call(parts) => {
                        let mut c = util::from_parts(MODE, span, raw, parts, brace, &read.repairs);
                        // A second object right after the call (issue 22).
                        if let Some(f) = util::second_object_after(text, brace + read.end, true)
                            && c.arguments.is_ok()
                        {
                            c.arguments = Err(f);
                        }
                        out.push(c);
                    }
                    CallObj::NotACall => out.push(util::candidate(
                        MODE,
                        span,
                        raw,
                        None,
                        Err(ParseFailure::new(
                            FailureKind::Malformed,
                            format!("no tool name after {marker}: the object has none of `tool_name`, `tool`, `name`"),
                            brace,
                        )),
                        read.repairs,
                    )),
                }
            }
            Err(f) => {
                // The extent of a broken object is unknown: up to the end of
                // the line where it failed (or where the text ran out).
                let fail_at = (brace + f.offset).min(region_end);
                let end = memchr::memchr(b'\n', &b[fail_at..region_end])
                    .map_or(region_end, |n| fail_at + n);
                out.push(util::candidate(
                    MODE,
                    Span::new(at, end.max(at + marker.len())),
                    &text[brace..end],
                    util::sniff_name(obj_text),
                    Err(util::rebase(f, brace)),
                    Vec::new(),
                ));
            }
        }
    }
    out.into_vec()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::format::marker::MARKER;
    use crate::irregular::testkit::*;
    use toolgate_core::{Repair, Source};

    #[test]
    fn a_second_object_after_the_call_is_malformed() {
        // Issue 22: `{"b": 2}` was dropped and the call executed.
        let out = r#"TOOL_CALL {"name": "f", "arguments": {"a": 1}} {"b": 2}"#;
        let c = strict(&MARKER, out);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        let out = r#"TOOL_CALL {"name": "f", "arguments": {"a": 1}} done."#;
        assert!(strict(&MARKER, out)[0].call().is_some());
    }

    #[test]
    fn marker_then_object_every_key_spelling() {
        for out in [
            r#"TOOL_CALL: {"tool_name": "greet", "parameters": {"name": "Alice"}}"#,
            r#"TOOL_CALL: {"tool": "greet", "params": {"name": "Alice"}}"#,
            r#"TOOL_CALL: {"name": "greet", "arguments": {"name": "Alice"}}"#,
        ] {
            let c = strict(&MARKER, out);
            assert_eq!(names(&c), ["greet"]);
            assert_eq!(c[0].call().unwrap().arguments["name"], "Alice");
            assert_eq!(c[0].span, Span::new(0, out.len()));
        }
    }

    #[test]
    fn no_argument_key_is_an_empty_object() {
        let c = strict(&MARKER, r#"TOOL_CALL: {"tool_name": "noop"}"#);
        assert!(c[0].call().unwrap().arguments.is_empty());
    }

    #[test]
    fn fenced_object_and_text_after_it() {
        let out = "TOOL_CALL:\n```json\n{\"tool_name\": \"calc\", \"parameters\": {\"x\": 5}}\n```\nDone.";
        let c = strict(&MARKER, out);
        assert_eq!(names(&c), ["calc"]);
        assert_eq!(&out[c[0].span.start..c[0].span.end], &out[..out.len() - 6]);
        let out = "TOOL_CALL: {\"tool_name\": \"search\", \"parameters\": {}}\nI will search.";
        assert_eq!(names(&strict(&MARKER, out)), ["search"]);
    }

    #[test]
    fn without_the_marker_nothing_is_found() {
        assert!(
            strict(
                &MARKER,
                r#"{"tool_name": "echo", "parameters": {"text": "hello"}}"#
            )
            .is_empty()
        );
        assert!(strict(&MARKER, r#"[TOOL_CALLS][{"name": "f", "arguments": {}}]"#).is_empty());
        assert!(strict(&MARKER, r#"<tool_call>{"name": "f"}</tool_call>"#).is_empty());
        assert!(strict(&MARKER, r#"tool_call: {"name": "f"}"#).is_empty());
        assert!(strict(&MARKER, r#"FUNCTION_CALL: {"name": "f"}"#).is_empty());
    }

    #[test]
    fn each_marker_is_at_most_one_candidate() {
        // A second object after the marker's call is not dropped silently
        // (issue 22): the candidate is malformed, still one per marker.
        let out = "TOOL_CALL: {\"tool_name\": \"first\", \"parameters\": {}}\n{\"tool_name\": \"second\", \"parameters\": {}}";
        let c = strict(&MARKER, out);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].name.as_deref(), Some("first"));
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        let out = "TOOL_CALL: {\"tool_name\": \"a\"}\nTOOL_CALL: {\"tool_name\": \"b\"}";
        assert_eq!(names(&strict(&MARKER, out)), ["a", "b"]);
        assert!(strict(&MARKER, r#"TOOL_CALL: ["not", "a", "dict"]"#).is_empty());
    }

    #[test]
    fn single_quotes_malformed_strict_repaired_lenient() {
        let out = "TOOL_CALL: {'tool_name': 'greet', 'parameters': {'name': 'Alice'}}";
        assert_eq!(
            only_failure(&strict(&MARKER, out)),
            (FailureKind::Malformed, 12)
        );
        let c = lenient(&MARKER, out);
        assert_eq!(names(&c), ["greet"]);
        assert_eq!(c[0].repairs, vec![Repair::SingleQuotes]);
    }

    #[test]
    fn truncation_escaping_and_missing_name() {
        let out = r#"TOOL_CALL: {"tool_name": "echo", "parameters": {"text": "hi"#;
        let c = strict(&MARKER, out);
        assert_eq!(only_failure(&c), (FailureKind::Truncated, out.len()));
        assert_eq!(c[0].name.as_deref(), Some("echo"));
        let out = r#"TOOL_CALL: {"tool_name": "echo", "parameters": {"text": "a\qb"}}"#;
        assert_eq!(only_failure(&strict(&MARKER, out)).0, FailureKind::Escaping);
        let out = r#"TOOL_CALL: {"data": 1}"#;
        assert_eq!(
            only_failure(&strict(&MARKER, out)),
            (FailureKind::Malformed, 11)
        );
    }

    #[test]
    fn reasoning_markers_are_reported_as_reasoning() {
        let c = strict(&MARKER, "<think>TOOL_CALL: {\"tool\": \"a\"}</think>ok");
        assert_eq!(c[0].source, Source::OutputReasoning);
        let c = strict(
            &MARKER,
            "TOOL_CALL: {\"tool\": \"a\"}\n</think>\nNo tool needed.",
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].source, Source::OutputReasoning);
    }
}
