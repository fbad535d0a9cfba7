//! `fence`: a fenced code block holding a call object or an array of them
//! (Command R+ `Action:` blocks, chat models that "show" their call).
//!
//! # Wire format
//!
//! ````text
//! Action:
//! ```json
//! [{"tool_name": "special_function", "parameters": {"arg1": 1}}]
//! ```
//! ````
//!
//! Decisions (SPEC §9):
//! - a block is a candidate when its info string is `json`, `tool_call` or
//!   empty (case-insensitive), and its trimmed content starts with `{` or
//!   `[` and contains a name-key spelling (`"name"`, `"tool"`,
//!   `"tool_name"`, or the same in single quotes, so that a Python-style
//!   object is a `malformed` candidate in strict mode and repaired in
//!   lenient mode): other code blocks are not call attempts;
//! - the content is read as in [`crate::json_array::json_calls`]: one object or an
//!   array (each element a candidate); a value without a top-level name key
//!   is not a call, unless it is an element of an array that holds a call
//!   (then it is `malformed`, `json_array::CallList`); a parse failure
//!   inside the block is labeled;
//! - an unclosed fence at the end of the output is `truncated`, even when
//!   its JSON is complete;
//! - fences may open mid-line (see [`crate::util::fences`]).
//!
//! ```
//! use toolgate_formats::{by_name, Input, Strictness};
//! let out = "Action:\n```json\n[{\"tool_name\": \"special_function\", \"parameters\": {\"arg1\": 1}}]\n```";
//! let c = by_name("fence").unwrap().extract(&Input::new(out), Strictness::Strict);
//! assert_eq!(c[0].call().unwrap().name, "special_function");
//! ```

use crate::Extractor;
use crate::families::jsonlike::json_array::{self, MissingName};
use crate::input::{Input, Strictness};
use crate::util;
use toolgate_core::{Candidate, Span};

const MODE: &str = "fence";

/// The `fence` extractor.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fence;

impl Extractor for Fence {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        "```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n```"
    }
    fn describe(&self) -> &str {
        "a ```json (or ```tool_call, or bare ```) block holding a call object or an array of them"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| scan(text, strictness))
    }
}

fn scan(text: &str, strictness: Strictness) -> Vec<Candidate> {
    let b = text.as_bytes();
    let mut out = crate::cap::Found::new();
    for f in util::fences(text) {
        let info = text[f.info.clone()].to_ascii_lowercase();
        if !matches!(info.as_str(), "json" | "tool_call" | "") {
            continue;
        }
        let content = util::trim_range(text, f.content.clone());
        if content.is_empty() || !matches!(b[content.start], b'{' | b'[') {
            continue;
        }
        let body = &text[content.clone()];
        let keys = [
            "\"name\"",
            "\"tool\"",
            "\"tool_name\"",
            "'name'",
            "'tool'",
            "'tool_name'",
        ];
        if !keys
            .iter()
            .any(|k| memchr::memmem::find(body.as_bytes(), k.as_bytes()).is_some())
        {
            continue;
        }
        let at_end = !f.closed;
        let mut cands = json_array::json_calls(
            MODE,
            text,
            content,
            Span::new(f.start, f.end),
            at_end,
            strictness,
            MissingName::Skip,
        );
        if !f.closed {
            util::mark_unclosed(&mut cands, text.len(), "```");
        }
        out.extend(cands);
    }
    out.into_vec()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::irregular::testkit::*;
    use toolgate_core::{FailureKind, Repair, Source};

    #[test]
    fn json_block_with_a_call() {
        let out = "Here:\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n```\nok";
        let c = strict(&Fence, out);
        assert_eq!(names(&c), ["get_weather"]);
        assert_eq!(c[0].span, Span::new(6, out.len() - 3));
    }

    #[test]
    fn info_string_json_tool_call_or_empty_only() {
        let body = "\n{\"name\": \"f\"}\n```";
        for (info, found) in [
            ("json", 1),
            ("tool_call", 1),
            ("", 1),
            ("JSON", 1),
            ("python", 0),
            ("yaml", 0),
        ] {
            assert_eq!(
                strict(&Fence, &format!("```{info}{body}")).len(),
                found,
                "{info}"
            );
        }
    }

    #[test]
    fn array_is_parallel_and_blocks_without_name_keys_are_skipped() {
        let out = "```\n[{\"tool_name\": \"a\", \"parameters\": {}}, {\"tool_name\": \"b\"}]\n```";
        assert_eq!(names(&strict(&Fence, out)), ["a", "b"]);
        assert!(strict(&Fence, "```json\n{\"city\": \"Antwerp\"}\n```").is_empty());
        assert!(strict(&Fence, "```json\n\"name\"\n```").is_empty());
    }

    #[test]
    fn unclosed_fence_at_the_end_is_truncated() {
        let out = "```json\n{\"name\": \"f\", \"arguments\": {}}\n";
        let c = strict(&Fence, out);
        assert_eq!(only_failure(&c), (FailureKind::Truncated, out.len()));
        assert_eq!(c[0].name.as_deref(), Some("f"));
        let out = "```json\n{\"name\": \"f\", \"arguments\": {\"a\": ";
        assert_eq!(
            only_failure(&strict(&Fence, out)),
            (FailureKind::Truncated, out.len())
        );
    }

    #[test]
    fn failures_inside_a_block_are_labeled() {
        let out = "```json\n{\"name\": \"f\", \"arguments\": {\"a\": 1}\n```";
        assert_eq!(only_failure(&strict(&Fence, out)).0, FailureKind::Malformed);
        let out = "```json\n{\"name\": \"f\", \"arguments\": {\"p\": \"C:\\dir\"}}\n```";
        assert_eq!(only_failure(&strict(&Fence, out)).0, FailureKind::Escaping);
        let out = "```json\n{'name': 'f', 'arguments': {}}\n```";
        assert_eq!(
            only_failure(&strict(&Fence, out)),
            (FailureKind::Malformed, 9)
        );
        let c = lenient(&Fence, out);
        assert_eq!(c[0].repairs, vec![Repair::SingleQuotes]);
    }

    #[test]
    fn reasoning_blocks_are_reported_as_reasoning() {
        let c = strict(
            &Fence,
            "<think>```json\n{\"name\": \"f\"}\n```</think>No call.",
        );
        assert_eq!(c[0].source, Source::OutputReasoning);
        let c = strict(
            &Fence,
            "```json\n{\"name\": \"f\"}\n```\n</think>\nNo call.",
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].source, Source::OutputReasoning);
    }
}
