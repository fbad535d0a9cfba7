//! Families whose calls are markup with key/value parameters or special
//! tokens around JSON: the engines, and the hand-written extractors of the
//! irregular formats. Which format each engine reads, with which tokens, is
//! in the format's own file ([`crate::format`]); `toolgate formats` lists
//! them all.
//!
//! XML-ish values are typed by the tool's schema (SPEC §9): a string unless
//! the schema says otherwise, then read as JSON, and left a string when they
//! do not read as that type (the validator labels `type_coercion`); one
//! leading and one trailing newline are removed. Every scanner is linear:
//! openers are found with `memchr::memmem`, and closers through a memoizing
//! finder, so a missing closer is searched for once, not once per opener.

pub(crate) mod common;
mod elements;
pub(crate) mod invoke;
pub(crate) mod name_json;
pub(crate) mod params;

pub mod deepseek;
pub mod glm;
pub mod harmony;
// formats-a (issue 27 item 6)
pub mod qwen_xml;
pub mod xml_call;

/// This group's modes (raw, without the shared rules), in replay order:
/// the formats whose file names this group ([`crate::format`]).
pub fn all() -> Vec<Box<dyn crate::Extractor>> {
    crate::format::group(crate::format::Group::Tagged)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod testutil {
    //! Helpers for this group's unit tests.
    use crate::Extractor;
    use crate::input::{Input, ParamTypes, Strictness};
    use toolgate_core::Candidate;

    /// The strict candidates of `out`, values typed by `pt` when given.
    pub fn typed(e: &dyn Extractor, out: &str, pt: Option<&ParamTypes>) -> Vec<Candidate> {
        let mut input = Input::new(out);
        input.param_types = pt;
        e.extract(&input, Strictness::Strict)
    }

    /// Asserts that the first candidate is `truncated` at the end of `out`.
    pub fn cut_at_end(c: &[Candidate], out: &str) {
        let f = c[0].failure().unwrap();
        assert_eq!(
            (f.kind, f.offset),
            (toolgate_core::FailureKind::Truncated, out.len()),
            "{out}"
        );
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::input::{Input, Strictness};
    use proptest::prelude::*;

    /// Pieces of every tagged syntax, so random outputs hit the scanners'
    /// corners (cut tags, missing closers, nesting, reasoning markers).
    const PIECES: [&str; 58] = [
        "<atem:function_calls>",
        "<atem:invoke name=\"f\">",
        "<atem:parameter name=\"a\">",
        "</atem:parameter>",
        "<longcat_tool_call>",
        "<longcat_arg_key>",
        "<tool_call>",
        "</tool_call>",
        "<function=f>",
        "<function=",
        "</function>",
        "<parameter=a>",
        "</parameter>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
        "<tool_sep>",
        "<|tool_call_begin|>",
        "functions.f:0",
        "<|tool_call_argument_begin|>",
        "<|tool_call_end|>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "function",
        "```json\n",
        "```",
        "<|channel|>commentary to=functions.f",
        "<|message|>",
        "<|call|>",
        "<|end|>",
        "<|start|>",
        "<｜DSML｜invoke name=\"f\"",
        "</｜DSML｜invoke>",
        "<｜DSML｜parameter name=\"k\" string=\"false\">",
        "</｜DSML｜parameter>",
        "<minimax:tool_call>",
        "<invoke name=\"f\">",
        "<parameter name=\"k\">",
        "<tool_call name=\"f\">",
        "<args>",
        "<think>",
        "</think>",
        "{\"a\": [1, \"x\"]}",
        "é\n ",
        // formats-a
        "<|open|>tools<|sep|>",
        "<|open|>call tool=\"f\"<|sep|>",
        "<|open|>argument key=\"k\" type=\"number\"<|sep|>",
        "<|close|>argument<|sep|>",
        "]<]minimax[>[",
        "<city>",
        "</city>",
        "<item>",
        "<function_calls>",
        "<parameter name=\"k\" string=\"true\">",
        "<seed:tool_call>",
        "</seed:tool_call>",
    ];

    fn run_all(out: &str) -> usize {
        let mut input = Input::new(out);
        input.reasoning_field = Some(out);
        let mut n = 0;
        for m in all() {
            for s in [Strictness::Strict, Strictness::Lenient] {
                for c in m.extract(&input, s) {
                    assert!(c.span.start <= c.span.end, "{}: {:?}", m.name(), c.span);
                    assert!(c.is_live() || c.source.is_reasoning());
                    n += 1;
                }
            }
        }
        n
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn never_panics_on_token_soup(idx in proptest::collection::vec(0usize..PIECES.len(), 0..40)) {
            let out: String = idx.iter().map(|i| PIECES[*i]).collect();
            run_all(&out);
        }

        #[test]
        fn never_panics_on_arbitrary_text(out in "\\PC{0,200}") {
            run_all(&out);
        }
    }
}
