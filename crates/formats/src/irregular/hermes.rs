//! `hermes`: JSON call objects in `<tool_call>` tags (Hermes 2/3, Qwen2.5,
//! Qwen3, and the many templates that copied them).
//!
//! **ERNIE 4.5** (Baidu) is one of them, so it is a model mapping to this
//! mode (`ernie-4.5` in [`crate::models`]), not a mode of its own: vLLM's
//! `ernie45` parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/ernie45_tool_parser.py`) reads
//! `<tool_call>\n{"name": …, "arguments": …}\n</tool_call>` blocks after the
//! thinking model's lone `</think>` (its template opens the reasoning), with
//! an optional `<response>…</response>` around the answer text — all of
//! which this mode already reads (text before a lone `</think>` is
//! reasoning; `<response>` is content). The four vLLM `ernie45_moe` peer
//! records agree through this mode (CONFORMANCE.md).
//!
//! # Wire format
//!
//! ```text
//! I'll check both cities.
//! <tool_call>
//! {"name": "get_weather", "arguments": {"city": "Antwerp"}}
//! </tool_call>
//! <tool_call>
//! {"name": "get_weather", "arguments": {"city": "Ghent"}}
//! </tool_call>
//! ```
//!
//! Each tag holds one call object (SPEC §9 key rules, see
//! [`crate::callobj`]) or a JSON array of them; several tags are parallel
//! calls.
//!
//! Decisions:
//! - a payload whose first non-space character is not `{` or `[` is another
//!   family's syntax inside the same tag (`qwen_xml`'s `<function=f>`, `glm`'s
//!   `f<arg_key>…`, a bare name): not a hermes candidate; a payload in a
//!   stray ```` ```json ```` fence (Qwen2.5-Coder writes them) is one: strict
//!   reading labels it `malformed`, lenient strips the fence (`stray_fences`);
//! - a payload object without a name key is a `malformed` candidate (the tag
//!   says "this is a call");
//! - an unclosed `<tool_call>` at the end of the output is `truncated`, even
//!   when its JSON is complete (the name is still reported); `<tool_call>`
//!   alone at the very end is a `truncated` candidate without a name;
//! - a closed tag whose payload is missing a brace is `malformed`; a tag whose
//!   payload runs into the next `<tool_call>` is `malformed` too.
//!
//! ```
//! use toolgate_formats::{by_name, Input, Strictness};
//! let out = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>";
//! let c = by_name("hermes").unwrap().extract(&Input::new(out), Strictness::Strict);
//! assert_eq!(c[0].call().unwrap().arguments["city"], "Antwerp");
//! ```

use crate::Extractor;
use crate::families::jsonlike::json_array::{self, MissingName};
use crate::input::{Input, Strictness};
use crate::util::{self, NextFinder};
use toolgate_core::{Candidate, FailureKind, ParseFailure, Span};

const MODE: &str = "hermes";

/// The `hermes` extractor, with the tokens of its format file.
#[derive(Clone, Copy, Debug)]
pub struct Hermes {
    /// Finds the call opener (`<tool_call>`).
    pub open: &'static util::StaticFinder,
    /// Finds the call closer.
    pub close: &'static util::StaticFinder,
}

impl Extractor for Hermes {
    fn name(&self) -> &str {
        MODE
    }
    fn example(&self) -> &str {
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>"
    }
    fn describe(&self) -> &str {
        "<tool_call>{\"name\": NAME, \"arguments\": {…}}</tool_call>; several tags are parallel calls"
    }
    fn extract(&self, input: &Input<'_>, strictness: Strictness) -> Vec<Candidate> {
        util::scan_texts(input, |text| scan(self, text, strictness))
    }
}

fn scan(h: &Hermes, text: &str, strictness: Strictness) -> Vec<Candidate> {
    let (open, close) = (h.open.needle(), h.close.needle());
    let b = text.as_bytes();
    let mut out = crate::cap::Found::new();
    let mut opens = NextFinder::fixed(h.open);
    let mut closes = NextFinder::fixed(h.close);
    let mut pos = 0;
    // A closer or opener inside a JSON string of the payload is text
    // (`util::closer_outside_strings`).
    let (mut close_ex, mut open_ex) = (false, false);
    loop {
        let next = opens.next(text, pos);
        // After a block, or before the first one (`pos == 0`, a block follows).
        if (pos > 0 || next.is_some())
            && let Some(stray) = stray_call(text, (pos, next), close, pos > 0)
        {
            out.push(stray);
        }
        let Some(at) = next else { break };
        let body = at + open.len();
        let mut opens2 = NextFinder::fixed(h.open);
        let next_open = util::closer_outside_strings(text, body, usize::MAX, &mut open_ex, |p| {
            opens2.next(text, p)
        });
        // Only a closer before the next opener ends this block.
        let (payload_end, span_end, closed) =
            util::block_end(text, body, next_open, (&mut close_ex, close.len()), |p| {
                closes.next(text, p)
            });
        pos = span_end.max(body);
        let at_end = !closed && payload_end == text.len();
        let first = util::skip_ws(b, body);
        let span = Span::new(at, span_end);
        if first >= payload_end {
            if at_end {
                out.push(util::candidate(
                    MODE,
                    span,
                    "",
                    None,
                    Err(ParseFailure::new(
                        FailureKind::Truncated,
                        format!("output ends right after `{open}`"),
                        text.len(),
                    )),
                    Vec::new(),
                ));
            }
            continue;
        }
        if !util::opens_json_payload(b, first) {
            // Another family's syntax in the same tag.
            continue;
        }
        let mut cands = json_array::json_calls(
            MODE,
            text,
            body..payload_end,
            span,
            at_end,
            strictness,
            MissingName::Fail,
        );
        if !closed {
            if at_end {
                util::mark_unclosed(&mut cands, text.len(), close);
            } else if let Some(last) = cands.last_mut()
                && last.arguments.is_ok()
            {
                last.arguments = Err(ParseFailure::new(
                    FailureKind::Malformed,
                    format!("missing `{close}` before the next `{open}`"),
                    payload_end,
                ));
            }
        }
        out.extend(cands);
    }
    out.into_vec()
}

/// A call object without `<tool_call>` after a block or before the first
/// one: [`util::stray_call_object`] with hermes's closer.
fn stray_call(
    text: &str,
    gap: (usize, Option<usize>),
    close: &str,
    after_call: bool,
) -> Option<Candidate> {
    util::stray_call_object(MODE, text, gap, &[close], after_call)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::format::hermes::HERMES;
    use crate::irregular::testkit::*;
    use toolgate_core::{Repair, Source};

    const ONE: &str = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n</tool_call>";

    #[test]
    fn one_call_span_and_raw() {
        let out = format!("Let me check.\n{ONE}");
        let c = strict(&HERMES, &out);
        assert_eq!(names(&c), ["get_weather"]);
        assert_eq!(c[0].span, Span::new(14, out.len()));
        assert_eq!(
            c[0].raw,
            "\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}\n"
        );
        assert_eq!(c[0].source, Source::Output);
    }

    #[test]
    fn markup_inside_a_json_string_is_text() {
        // Issue 22: `</tool_call>` (and `<tool_call>`) inside a string
        // argument ended the payload early: malformed before.
        let out = r#"<tool_call>{"name": "echo", "arguments": {"s": "a <tool_call> b </tool_call> \" </tool_call>"}}</tool_call> after"#;
        let c = strict(&HERMES, out);
        assert_eq!(c.len(), 1);
        let call = c[0].call().unwrap();
        assert_eq!(
            call.arguments["s"],
            "a <tool_call> b </tool_call> \" </tool_call>"
        );
        assert_eq!(c[0].span.end, out.len() - " after".len());
        // Broken quoting falls back to the first closer (malformed, as before).
        let out = r#"<tool_call>{"name": "echo", "arguments": {"s": "a </tool_call>"#;
        assert_eq!(
            only_failure(&strict(&HERMES, out)).0,
            FailureKind::Malformed
        );
    }

    #[test]
    fn many_blocks_with_closers_in_strings_stay_linear() {
        let one = r#"<tool_call>{"name": "f", "arguments": {"s": "</tool_call><tool_call>"}}</tool_call>"#;
        let out = one.repeat(20_000);
        let t = std::time::Instant::now();
        let c = strict(&HERMES, &out);
        assert_eq!(c.len(), crate::rules::DEFAULT_MAX_CANDIDATES);
        assert!(c[..998].iter().all(|c| c.call().is_some()));
        let broken = r#"<tool_call>{"name": "f", "arguments": {"s": "</tool_call>"#.repeat(20_000);
        let c = strict(&HERMES, &broken);
        assert!(c.iter().all(|c| c.call().is_none()));
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            t.elapsed()
        );
    }

    #[test]
    fn several_tags_and_arrays_are_parallel() {
        let c = strict(&HERMES, &format!("{ONE}\n{ONE}"));
        assert_eq!(names(&c), ["get_weather", "get_weather"]);
        let c = strict(
            &HERMES,
            r#"<tool_call>[{"name": "a"}, {"name": "b", "arguments": {}}]</tool_call>"#,
        );
        assert_eq!(names(&c), ["a", "b"]);
    }

    #[test]
    fn unclosed_tag_at_end_is_truncated_even_with_complete_json() {
        let out = "<tool_call>\n{\"name\": \"final_answer\", \"arguments\": {\"trigger\": true}}";
        let c = strict(&HERMES, out);
        assert_eq!(only_failure(&c), (FailureKind::Truncated, out.len()));
        assert_eq!(c[0].name.as_deref(), Some("final_answer"));
        let out = "<tool_call>\n{\"name\": \"special_function\", \"arguments\": {\"arg1\":";
        let c = strict(&HERMES, out);
        assert_eq!(only_failure(&c), (FailureKind::Truncated, out.len()));
        assert_eq!(c[0].name.as_deref(), Some("special_function"));
        assert_eq!(
            only_failure(&strict(&HERMES, "ok <tool_call>\n")).0,
            FailureKind::Truncated
        );
    }

    #[test]
    fn closed_tag_missing_a_brace_is_malformed() {
        let out = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}\n</tool_call>";
        let c = strict(&HERMES, out);
        assert_eq!(only_failure(&c).0, FailureKind::Malformed);
        assert_eq!(c[0].name.as_deref(), Some("f"));
    }

    #[test]
    fn escaping_errors_and_lenient_repairs() {
        let out =
            r#"<tool_call>{"name": "say", "arguments": {"text": "he said "hi" then"}}</tool_call>"#;
        assert_eq!(only_failure(&strict(&HERMES, out)).0, FailureKind::Escaping);
        let out = "<tool_call>{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}</tool_call>";
        assert_eq!(only_failure(&strict(&HERMES, out)).0, FailureKind::Escaping);
        let c = lenient(&HERMES, out);
        assert_eq!(c[0].call().unwrap().arguments["a"], 1);
        assert_eq!(c[0].repairs, vec![Repair::DoubleEncodedArguments]);
    }

    #[test]
    fn other_families_in_the_same_tag_are_not_hermes() {
        assert!(
            strict(
                &HERMES,
                "<tool_call><function=f><parameter=a>1</parameter></function></tool_call>"
            )
            .is_empty()
        );
        assert!(
            strict(
                &HERMES,
                "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>"
            )
            .is_empty()
        );
        assert!(strict(&HERMES, "<tool_call>not valid json</tool_call>").is_empty());
    }

    #[test]
    fn a_call_closed_without_its_opener_after_a_block_is_malformed() {
        // Probe: the second call's `<tool_call>` is missing; `f` ran and `g`
        // was dropped as text.
        for out in [
            r#"<tool_call>{"name":"f","arguments":{}}</tool_call>{"name":"g","arguments":{}}</tool_call>"#,
            "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n{\"name\": \"g\", \"arguments\": {\"a\": 1}}\n</tool_call>",
        ] {
            let c = strict(&HERMES, out);
            assert_eq!(c.len(), 2, "{out}");
            assert!(c[0].call().is_some(), "{out}");
            let f = c[1].failure().unwrap();
            assert_eq!(f.kind, FailureKind::Malformed, "{out}");
            assert!(f.message.contains("without its opener"), "{}", f.message);
            assert_eq!(c[1].name.as_deref(), Some("g"));
        }
        // Prose before a stray closer stays text, before a block or after it.
        for out in [
            format!("{ONE} done.</tool_call>"),
            format!("Use </tool_call> to close.\n{ONE}"),
        ] {
            assert_eq!(strict(&HERMES, &out).len(), 1, "{out}");
        }
        // Prose or a JSON object that is no call object after a block
        // stays text too.
        for out in [
            format!("{ONE}\nThe result {{\"name\": \"g\"}} is fine."),
            format!("{ONE}\n{{\"city\": \"Paris\"}}"),
            format!("{ONE}\n{{\"name\": \"Alice\", \"age\": 3}}"),
        ] {
            assert_eq!(strict(&HERMES, &out).len(), 1, "{out}");
        }
    }

    #[test]
    fn a_call_without_its_opener_before_the_first_block_or_its_closer_is_malformed() {
        // s46: a call object closed by `</tool_call>` before the first
        // block, or a call object with no closer after a block: `f` ran
        // and `g` was dropped as text.
        for (out, stray) in [
            (
                format!("{{\"name\": \"g\", \"arguments\": {{}}}}</tool_call>{ONE}"),
                0,
            ),
            (
                format!("Sure. {{\"name\": \"g\", \"arguments\": {{}}}}</tool_call>\n{ONE}"),
                0,
            ),
            (format!("{ONE}{{\"name\": \"g\", \"arguments\": {{}}}}"), 1),
            (
                format!("{ONE}\n{{\"name\": \"g\", \"arguments\": {{}}}}\nDone."),
                1,
            ),
        ] {
            let c = strict(&HERMES, &out);
            assert_stray(&c, stray, ("get_weather", Some("g")), &out);
        }
    }

    #[test]
    fn payload_without_name_is_malformed() {
        let c = strict(&HERMES, r#"<tool_call>{"arguments": {}}</tool_call>"#);
        assert_eq!(only_failure(&c), (FailureKind::Malformed, 11));
    }

    #[test]
    fn reasoning_calls_are_reported_as_reasoning() {
        let out = format!("Let me think about {ONE} hmm\n</think>\n\n{ONE}");
        let c = strict(&HERMES, &out);
        assert_eq!(
            c.iter().map(|c| c.source).collect::<Vec<_>>(),
            [Source::OutputReasoning, Source::Output]
        );
        let c = strict(&HERMES, &format!("<think>{ONE}</think>"));
        assert_eq!(c[0].source, Source::OutputReasoning);
        let input = crate::Input {
            reasoning_field: Some(ONE),
            ..crate::Input::new("no call")
        };
        let c = HERMES.extract(&input, Strictness::Strict);
        assert_eq!(c[0].source, Source::ReasoningField);
    }
}
