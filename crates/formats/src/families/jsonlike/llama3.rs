//! `llama3`: Llama 3.1 / 3.2 / 3.3 JSON tool calls — a call object with the
//! arguments under `parameters`, after `<|python_tag|>` or bare, several
//! separated by `;`.
//!
//! ```text
//! <|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}};{"name": "get_tourist_attractions", "parameters": {"city": "Paris"}}
//! Here is the result: {"name": "getOpenIncidentsTool", "parameters": {}} Would you like to know more?
//! ```
//!
//! Where a call starts:
//!
//! - right after each `<|python_tag|>` (a payload that is not JSON, e.g.
//!   Python code for the built-in interpreter, is not a call);
//! - at the start of the output (after whitespace) when it is a `{`;
//! - at any `{` whose first key is `"name"` (the peers' parsers find the
//!   JSON call anywhere in the text; a name key further inside the object is
//!   only found at the two places above). Known false reject (DECISIONS):
//!   a prose answer quoting `{"name": "my-app", "version": "1.0.0"}` is a
//!   candidate (`malformed`: unknown key), so the answer is refused, not
//!   passed as text.
//!
//! From there the mode reads call objects separated by `;` (and whitespace);
//! text after the last one is content. The SPEC §9 key rules apply
//! (`parameters` or `arguments`; no argument key is `{}`). A bare object with
//! no name key is not a call; after `<|python_tag|>` it is a `malformed`
//! candidate, and so is one beside a call in the `;` list
//! (`json_array::CallList`). After `<|python_tag|>` a JSON call list
//! (`[{…}, …]`) is read whole, every element a call, and a second list or
//! object right after it is `malformed` (`util::second_object_after`). An output that ends inside an object is `truncated`. After a
//! broken object, scanning resumes where the reader stopped, so one broken
//! object never hides the next call and no text is read twice.

use toolgate_core::{Candidate, FailureKind, ParseFailure, Span};

use super::json_array::next_char;
use super::json_array::{self, MissingName};
use super::marked::sequence;
use crate::util;
use crate::{Extractor, Input, Strictness};

const MODE: &str = "llama3";

/// The `llama3` extractor, with the tokens of its format file.
#[derive(Clone, Copy, Debug)]
pub struct Llama3 {
    /// The tag a call may follow (`<|python_tag|>`).
    pub tag: &'static str,
    /// The first key of a bare call object (`"name"`).
    pub name_key: &'static str,
}

impl Extractor for Llama3 {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        r#"<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}"#
    }
    fn describe(&self) -> &str {
        "Llama 3.x: <|python_tag|> or bare {\"name\", \"parameters\"} objects, several separated by ;"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| scan(self, text, strictness))
    }
}

/// The next place a call may start at or after `pos`: (offset of the first
/// payload byte, whether it follows `<|python_tag|>`).
///
/// One forward pass for both kinds of start: the next `<` or `"` is looked
/// at (`memchr2`), and it starts a call when it opens `<|python_tag|>` or a
/// `"name"` key right after a `{` (whitespace between) at or after `pos`.
/// The first such place in the text is the nearer of the next tag and the
/// next such `{` (only whitespace lies between that `{` and its key). A
/// `"name"` right after another `"` never follows a `{`, so stepping one
/// byte past each `"` finds what a non-overlapping search finds. Linear:
/// the scan calls this with `pos` past the start it returned, so only the
/// whitespace between a `{` and its key is looked at twice.
struct Starts<'a> {
    text: &'a str,
    tag: &'a str,
    name_key: &'a str,
}

impl Starts<'_> {
    fn next(&mut self, pos: usize) -> Option<(usize, bool)> {
        let text = self.text;
        let b = text.as_bytes();
        let mut from = pos;
        loop {
            let i = from + memchr::memchr2(b'<', b'"', b.get(from..)?)?;
            if b[i] == b'<' {
                if text[i..].starts_with(self.tag) {
                    return Some((i + self.tag.len(), true));
                }
            } else if text[i..].starts_with(self.name_key) {
                let mut j = i;
                while j > 0 && matches!(b[j - 1], b' ' | b'\t' | b'\n' | b'\r') {
                    j -= 1;
                }
                if j > pos && b[j - 1] == b'{' {
                    return Some((j - 1, false));
                }
            }
            from = i + 1;
        }
    }
}

fn scan(llama: &Llama3, text: &str, strictness: Strictness) -> Vec<Candidate> {
    let Llama3 { tag, name_key } = *llama;
    let b = text.as_bytes();
    let mut out = crate::cap::Found::new();
    let mut starts = Starts {
        text,
        tag,
        name_key,
    };
    let mut pos = 0;
    // The start of the output.
    let first = util::skip_ws(b, 0);
    let mut next = if b.get(first) == Some(&b'{') {
        Some((first, false))
    } else {
        starts.next(0)
    };
    while let Some((start, tagged)) = next {
        let at = util::skip_ws(b, start);
        let end = match b.get(at) {
            None if tagged => {
                let f = ParseFailure::new(
                    FailureKind::Truncated,
                    format!("output ends right after {tag}"),
                    text.len(),
                );
                let span = Span::new(start - tag.len(), text.len());
                out.push(util::candidate(MODE, span, "", None, Err(f), Vec::new()));
                text.len()
            }
            Some(b'{') => {
                // Bare JSON without a name key is not a call; after the tag
                // it is a broken one.
                let missing = if tagged {
                    MissingName::Fail
                } else {
                    MissingName::Skip
                };
                let (mut found, end) = sequence(
                    MODE,
                    text,
                    at..text.len(),
                    true,
                    false,
                    Some(b';'),
                    missing,
                    strictness,
                );
                for c in &mut found {
                    if tagged && c.span.start == at {
                        c.span.start = start - tag.len();
                    }
                }
                out.extend_vec(found);
                end.max(next_char(text, at))
            }
            // A call list after the tag: read to its own end, every
            // element a call (SPEC §9: "an array of them"); an element that
            // is not one is a broken call, as a nameless object after the
            // tag is. Other `[` text (`[x for x in y]`) is Python code.
            Some(b'[') if tagged && util::opens_call_list(b, at) => {
                // Each element keeps its own span, as in mistral's list.
                let (found, end) = json_array::open_list(
                    MODE,
                    text,
                    start - tag.len(),
                    at,
                    strictness,
                    MissingName::Fail,
                );
                out.extend_vec(found);
                end.max(next_char(text, at))
            }
            _ => at.max(start),
        };
        pos = end.max(pos);
        next = starts.next(pos);
    }
    out.into_vec()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use crate::format::llama3::{LLAMA3, NAME_KEY, TAG};

    /// The two-search `Starts` the one-pass one replaced: the next tag and
    /// the next `{` + whitespace + `"name"`, each by its own search.
    fn starts_by_two_searches(text: &str, pos: usize) -> Option<(usize, bool)> {
        let b = text.as_bytes();
        let tag = crate::util::find_from(text, TAG, pos);
        let mut from = pos;
        let name = loop {
            let Some(k) = crate::util::find_from(text, NAME_KEY, from) else {
                break None;
            };
            let mut j = k;
            while j > 0 && matches!(b[j - 1], b' ' | b'\t' | b'\n' | b'\r') {
                j -= 1;
            }
            if j > pos && b[j - 1] == b'{' {
                break Some(j - 1);
            }
            from = k + NAME_KEY.len();
        };
        match (tag, name) {
            (Some(t), Some(n)) if n < t => Some((n, false)),
            (Some(t), _) => Some((t + TAG.len(), true)),
            (None, Some(n)) => Some((n, false)),
            (None, None) => None,
        }
    }

    #[test]
    fn one_pass_starts_are_the_two_searches_starts() {
        let pieces = [
            "<|python_tag|>",
            "<|python",
            "_tag|>",
            "{",
            "\"name\"",
            "\"",
            "name",
            " ",
            "\n",
            "\t",
            "<",
            "x",
            ";",
            "}",
            ":",
            "é",
            "\"na",
        ];
        let mut rng = toolgate_testkit::generate::Rng::new(0x9E37_79B9_7F4A_7C15);
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..rng.below(12) {
                text.push_str(pieces[rng.below(pieces.len())]);
            }
            for pos in (0..=text.len()).filter(|&p| text.is_char_boundary(p)) {
                let mut starts = Starts {
                    text: &text,
                    tag: TAG,
                    name_key: NAME_KEY,
                };
                assert_eq!(
                    starts.next(pos),
                    starts_by_two_searches(&text, pos),
                    "{text:?} from {pos}"
                );
            }
        }
    }

    #[test]
    fn python_tag_and_semicolons() {
        let out = r#"<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}};{"name": "get_tourist_attractions", "parameters": {"city": "Paris"}}"#;
        assert_eq!(
            calls(&LLAMA3, out),
            vec![
                call("get_weather", r#"{"city": "Paris"}"#),
                call("get_tourist_attractions", r#"{"city": "Paris"}"#)
            ]
        );
        assert_eq!(strict(&LLAMA3, out)[0].span.start, 0);
    }

    #[test]
    fn repeated_python_tags() {
        let out = r#"<|python_tag|>{"name": "a", "parameters": {}}<|python_tag|>{"name": "b", "parameters": {}}"#;
        assert_eq!(calls(&LLAMA3, out), vec![call("a", "{}"), call("b", "{}")]);
    }

    #[test]
    fn bare_calls_inside_prose() {
        let out = r#"Here are the results: {"name": "s", "parameters": {"query": "t1"}}; {"name": "g", "parameters": {}} ; {"name": "s", "parameters": {"query": "t2"}} Would you like to know more?"#;
        assert_eq!(
            calls(&LLAMA3, out),
            vec![
                call("s", r#"{"query": "t1"}"#),
                call("g", "{}"),
                call("s", r#"{"query": "t2"}"#)
            ]
        );
    }

    #[test]
    fn prose_after_the_call_is_content() {
        // Issue 22, decided: the peers (vLLM's llama3_json, SGLang's llama3
        // detector) take the JSON call and leave the text around it; this
        // mode reads them the same way (written in the row).
        let out = r#"{"name": "get_weather", "parameters": {"city": "Paris"}} Some follow-up text"#;
        let found = strict(&LLAMA3, out);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].span.end, out.find(" Some").unwrap());
        assert_eq!(
            calls(&LLAMA3, out),
            vec![call("get_weather", r#"{"city": "Paris"}"#)]
        );
    }

    #[test]
    fn arguments_key_and_braces_in_strings() {
        let out = r#"{"name": "searchTool", "parameters": {"query": "test {value} [complex]","nested": {"inner": "more {brackets}"}}}"#;
        assert_eq!(calls(&LLAMA3, out).len(), 1);
        let out = r#"{"name": "searchTool", "arguments": {"query": "test"}}"#;
        assert_eq!(
            calls(&LLAMA3, out),
            vec![call("searchTool", r#"{"query": "test"}"#)]
        );
    }

    #[test]
    fn broken_object_does_not_hide_the_inner_call() {
        let out =
            r#"{"name": "get_weather", "parameters": {{"name": "get_weather", "parameters": {}}"#;
        let found = strict(&LLAMA3, out);
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(calls(&LLAMA3, out), vec![call("get_weather", "{}")]);
    }

    #[test]
    fn truncated_and_malformed() {
        let cut = strict(
            &LLAMA3,
            r#"<|python_tag|>{"name": "f", "parameters": {"a": "#,
        );
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Truncated);
        assert_eq!(cut[0].name.as_deref(), Some("f"));
        let bad = strict(
            &LLAMA3,
            r#"{"name": "invalidTool", "parameters": {invalid json}"#,
        );
        assert_eq!(bad[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn missing_name_or_arguments() {
        // No name key: bare JSON is not a call.
        assert!(strict(&LLAMA3, r#"{"parameters": {}}"#).is_empty());
        // No argument key: a call with {} (SPEC §9), nothing invented.
        assert_eq!(
            calls(&LLAMA3, r#"{"name": "toolWithoutParams"}"#),
            vec![call("toolWithoutParams", "{}")]
        );
        // After the tag a nameless object is a broken call.
        let found = strict(&LLAMA3, r#"<|python_tag|>{"parameters": {}}"#);
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Malformed);
    }

    #[test]
    fn a_quoted_name_object_in_prose_is_a_candidate() {
        // The false reject DECISIONS documents (probe 44): the peers find
        // calls anywhere in the text, so a quoted `{"name": …}` is read as
        // one; its unknown key makes it `malformed`, and the answer is
        // refused rather than passed as text.
        let out =
            "Your package.json:\n```json\n{\"name\": \"my-app\", \"version\": \"1.0.0\"}\n```";
        let found = strict(&LLAMA3, out);
        assert_eq!(found.len(), 1);
        let f = found[0].failure().unwrap();
        assert_eq!(f.kind, FailureKind::Malformed);
        assert!(f.message.contains("version"), "{}", f.message);
    }

    #[test]
    fn a_call_list_after_the_tag_is_read_whole() {
        let out =
            r#"<|python_tag|>[{"name": "a", "parameters": {}}, {"name": "b", "parameters": {}}]"#;
        assert_eq!(calls(&LLAMA3, out), vec![call("a", "{}"), call("b", "{}")]);
        // An element that is not a call: malformed, never dropped.
        let out = r#"<|python_tag|>[{"name": "a", "parameters": {}}, {"parameters": {}}]"#;
        let found = strict(&LLAMA3, out);
        assert_eq!(found.len(), 2);
        assert_eq!(found[1].failure().unwrap().kind, FailureKind::Malformed);
        // Python code after the tag is still not a call.
        assert!(strict(&LLAMA3, "<|python_tag|>[x for x in range(3)]").is_empty());
    }

    #[test]
    fn plain_text_and_python_code_are_not_calls() {
        assert!(strict(&LLAMA3, "This is just plain explanation text.").is_empty());
        assert!(strict(&LLAMA3, "<|python_tag|>print(1)").is_empty());
    }
}
