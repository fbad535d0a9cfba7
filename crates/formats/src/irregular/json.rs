//! `json`: the whole output is one JSON call object, or an array of them
//! (seed 000's first fallback; xLAM-style models).
//!
//! # Wire format
//!
//! ```text
//! {"tool": "search_web", "arguments": {"query": "rust memchr"}}
//! ```
//!
//! or, for parallel calls,
//!
//! ```text
//! [{"name": "get_weather", "arguments": {"city": "Dallas"}},
//!  {"name": "get_weather", "arguments": {"city": "Orlando"}}]
//! ```
//!
//! Decisions (SPEC §9):
//! - reasoning spans (`<think>…</think>`, text before a lone `</think>`, the
//!   harmony analysis channel) and leading intent lines (a line that is
//!   exactly `need_tool: yes` or `CALL_TOOL`) are set aside; the rest,
//!   trimmed, must start with `{` or `[` to be a candidate at all. A `[`
//!   counts only when an object (`{`), the closing `]` or the end of the
//!   text follows it: "an array of them" means an array of call objects, so
//!   `[get_weather(city="Antwerp")]` (the bracket mode's shape, the next
//!   fallback of the default profile), `[TOOL_CALLS]…` and `[THINK]…` are not
//!   json candidates. Without this, the json fallback would claim every
//!   bracket output as a malformed candidate and the bracket fallback could
//!   never run;
//! - it must then be exactly one JSON value: trailing text, a trailing
//!   comma, a bad escape or a cut-off end is a parse failure of that
//!   candidate (labeled by SPEC §5);
//! - a value that parses (its first JSON value, if text follows) and holds no
//!   name key is not a call: no candidate (`{"color": "blue"}`, `[1, 2]`);
//!   but in an array that holds a call, every element that is not a call
//!   object (`"junk"`, `42`, `{}`) is a `malformed` candidate
//!   (`json_array::CallList`: the list never executes short of one);
//! - name/argument keys follow [`crate::callobj`]; each array element is a
//!   candidate;
//! - the inside of each reasoning span and the separate `reasoning` field
//!   are read by the same rule and reported as reasoning.
//!
//! ```
//! use toolgate_formats::{by_name, Input, Strictness};
//! let out = "need_tool: yes\n{\"tool\": \"search_web\", \"arguments\": {\"query\": \"x\"}}";
//! let c = by_name("json").unwrap().extract(&Input::new(out), Strictness::Strict);
//! assert_eq!(c[0].call().unwrap().name, "search_web");
//! ```

use crate::callobj::{self, CallObj};
use crate::families::jsonlike::json_array::{self, MissingName};
use crate::input::{Input, Strictness};
use crate::util;
use crate::{Extractor, jsonread, reasoning};
use serde_json::Value;
use std::ops::Range;
use toolgate_core::{Candidate, Span};

const MODE: &str = "json";

/// Lines that announce tool intent and are set aside before the JSON.
pub const INTENT_LINES: [&str; 2] = ["need_tool: yes", "CALL_TOOL"];

/// The `json` extractor.
#[derive(Clone, Copy, Debug, Default)]
pub struct Json;

impl Extractor for Json {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        r#"{"tool": "search_web", "arguments": {"query": "rust memchr"}}"#
    }
    fn describe(&self) -> &str {
        "the whole output (reasoning and intent lines aside) is one JSON call object or an array of them"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| {
            let mut spans = if std::ptr::eq(text, input.output) {
                input.reasoning.clone()
            } else {
                reasoning::spans(text)
            };
            spans.sort();
            scan(text, &spans, strictness)
        })
    }
}

fn scan(text: &str, spans: &[Span], strictness: Strictness) -> Vec<Candidate> {
    let mut out = crate::cap::Found::new();
    // Each reasoning span's inside, read by the same rule, merged by start
    // with the rest's candidates (the spans are sorted and disjoint): what a
    // stable sort by start gives, under the cap as they come.
    let main = region(text, 0..text.len(), spans, true, strictness);
    let mut main = main.into_iter().peekable();
    for s in spans {
        let inner = reasoning::inner(text, *s);
        let at_end = s.end == text.len() && inner.end == text.len();
        for c in region(text, inner, &[], at_end, strictness) {
            while let Some(m) = main.next_if(|m| m.span.start < c.span.start) {
                out.push(m);
            }
            out.push(c);
        }
    }
    out.extend(main);
    out.into_vec()
}

/// The candidates of `range` of `text`, skipping `skip` spans and leading
/// intent lines.
fn region(
    text: &str,
    range: Range<usize>,
    skip: &[Span],
    at_end: bool,
    strictness: Strictness,
) -> Vec<Candidate> {
    let b = text.as_bytes();
    let mut i = range.start;
    let mut k = 0;
    loop {
        i = util::skip_ws(b, i).min(range.end);
        while k < skip.len() && skip[k].end <= i {
            k += 1;
        }
        if k < skip.len() && skip[k].start <= i {
            i = skip[k].end;
            continue;
        }
        let line_end = memchr::memchr(b'\n', &b[i..range.end]).map_or(range.end, |n| i + n);
        if INTENT_LINES.contains(&text[i..line_end].trim()) {
            i = line_end;
            continue;
        }
        break;
    }
    let payload = util::trim_range(text, i..range.end);
    // A reasoning span after the JSON start is part of the rest (trailing text).
    let starts_json = match b.get(payload.start) {
        Some(b'{') => payload.start < payload.end,
        // An array of call objects: `[` then `{`, `]` or the end of the text.
        Some(b'[') => payload.start < payload.end && util::opens_call_list(b, payload.start),
        _ => false,
    };
    if payload.is_empty()
        || !(starts_json || fenced_json(text, payload.clone()) && strictness.is_lenient())
    {
        return Vec::new();
    }
    let ptext = &text[payload.clone()];
    // A value that reads but holds no call is not a call attempt.
    if let Ok(read) = jsonread::read_prefix(ptext, strictness, false)
        && !holds_call(&read.value, strictness)
    {
        return Vec::new();
    }
    let span = Span::new(payload.start, payload.end);
    json_array::json_calls(
        MODE,
        text,
        payload,
        span,
        at_end,
        strictness,
        MissingName::Skip,
    )
}

/// Lenient only: the payload is a ```` ``` ```` fence whose content starts with
/// `{` or `[` (read with [`toolgate_core::Repair::StrayFences`]).
fn fenced_json(text: &str, payload: Range<usize>) -> bool {
    let p = &text[payload];
    if !p.starts_with("```") {
        return false;
    }
    let Some(nl) = p.find('\n') else {
        return false;
    };
    matches!(p[nl..].trim_start().as_bytes().first(), Some(b'{' | b'['))
}

fn holds_call(v: &Value, lenient: Strictness) -> bool {
    match v {
        Value::Array(items) => items
            .iter()
            .any(|i| matches!(callobj::from_value(i, lenient), CallObj::Call(_))),
        v => matches!(callobj::from_value(v, lenient), CallObj::Call(_)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::irregular::testkit::*;
    use toolgate_core::{FailureKind, Repair, Source};

    #[test]
    fn whole_output_is_one_call() {
        let out = "  {\"tool\": \"search_web\", \"arguments\": {\"query\": \"x\"}}\n";
        let c = strict(&Json, out);
        assert_eq!(names(&c), ["search_web"]);
        assert_eq!(c[0].span, Span::new(2, out.len() - 1));
    }

    #[test]
    fn array_elements_are_parallel_candidates() {
        let out = r#"[{"name": "a", "arguments": {}}, {"name": "b", "parameters": {"x": 1}}]"#;
        assert_eq!(names(&strict(&Json, out)), ["a", "b"]);
    }

    #[test]
    fn intent_lines_and_reasoning_are_set_aside() {
        let out = "<think>need a tool</think>\nneed_tool: yes\nCALL_TOOL\n{\"name\": \"f\"}";
        let c = strict(&Json, out);
        assert_eq!(names(&c), ["f"]);
        assert_eq!(c[0].source, Source::Output);
    }

    #[test]
    fn prose_first_is_no_candidate() {
        assert!(strict(&Json, "Sure: {\"name\": \"f\"}").is_empty());
        assert!(strict(&Json, "This is a test").is_empty());
    }

    #[test]
    fn a_bracket_starts_a_candidate_only_before_an_object() {
        assert!(strict(&Json, "[get_weather(city=\"Antwerp\")]").is_empty());
        assert!(strict(&Json, "[TOOL_CALLS][{\"name\": \"f\"}]").is_empty());
        assert!(strict(&Json, "[THINK]hmm[/THINK]").is_empty());
        assert_eq!(names(&strict(&Json, "[ \n {\"name\": \"f\"}]")), ["f"]);
        assert_eq!(only_failure(&strict(&Json, "[")).0, FailureKind::Truncated);
        assert!(strict(&Json, "[]").is_empty());
    }

    #[test]
    fn parsed_value_without_name_key_is_not_a_call() {
        assert!(strict(&Json, r#"{"color": "blue", "size": 42}"#).is_empty());
        assert!(strict(&Json, "[1, 2]").is_empty());
        assert!(strict(&Json, r#"{"data": 1} and some prose"#).is_empty());
    }

    #[test]
    fn trailing_text_and_trailing_comma_are_malformed() {
        let out = r#"{"name": "f", "arguments": {}} Done!"#;
        let c = strict(&Json, out);
        assert_eq!(only_failure(&c), (FailureKind::Malformed, 31));
        assert_eq!(c[0].name.as_deref(), Some("f"));
        let out = r#"{"name": "f", "arguments": {"a": 1,}}"#;
        assert_eq!(
            only_failure(&strict(&Json, out)),
            (FailureKind::Malformed, 34)
        );
        let c = lenient(&Json, out);
        assert_eq!(c[0].repairs, vec![Repair::TrailingCommas]);
    }

    #[test]
    fn bad_escape_is_escaping_and_cut_off_is_truncated() {
        let out = r#"{"name": "f", "arguments": {"re": "\d+"}}"#;
        assert_eq!(
            only_failure(&strict(&Json, out)),
            (FailureKind::Escaping, 35)
        );
        let out = r#"{"name": "f", "arguments": {"re": "ab"#;
        assert_eq!(
            only_failure(&strict(&Json, out)),
            (FailureKind::Truncated, out.len())
        );
    }

    #[test]
    fn ambiguous_keys_are_malformed() {
        let c = strict(&Json, r#"{"name": "f", "tool": "g", "arguments": {}}"#);
        let f = c[0].failure().unwrap();
        assert_eq!(f.kind, FailureKind::Malformed);
        assert!(f.message.contains("ambiguous"));
    }

    #[test]
    fn reasoning_only_calls_are_reported_as_reasoning() {
        let c = strict(&Json, "<think>{\"name\": \"f\"}</think>The answer is 4.");
        assert_eq!(names(&c), ["f"]);
        assert_eq!(c[0].source, Source::OutputReasoning);
        let c = strict(&Json, "{\"name\": \"f\"}\n</think>\nThe answer is 4.");
        assert_eq!(c[0].source, Source::OutputReasoning);
        assert_eq!(c.len(), 1);
    }

    #[test]
    fn stray_fence_is_not_json_strict_but_repaired_lenient() {
        let out = "```json\n{\"name\": \"f\"}\n```";
        assert!(strict(&Json, out).is_empty());
        let c = lenient(&Json, out);
        assert_eq!(names(&c), ["f"]);
        assert_eq!(c[0].repairs, vec![Repair::StrayFences]);
        let out = "{\"name\": \"f\"}\n```";
        assert_eq!(only_failure(&strict(&Json, out)).0, FailureKind::Malformed);
    }
}
