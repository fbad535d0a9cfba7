//! `inkling`: Inkling's structured tool messages — a model message whose
//! header names the tool, then `<|content_invoke_tool_json|>`, a JSON object
//! with `name` and `args`, and `<|end_message|>`.
//!
//! ```text
//! <|message_model|>get_weather<|content_invoke_tool_json|>{"name":"get_weather","args":{"city":"Antwerp"}}<|end_message|>
//! ```
//!
//! Follows SGLang's reference detector (`sgl-project/sglang`,
//! `python/sglang/srt/function_call/inkling_detector.py`, whose docstring
//! gives the wire format and whose tokens come from
//! `sglang/srt/parser/inkling_tokenizer.py`); vLLM's `inkling` parser
//! (`vllm/tool_parsers/inkling_tool_parser.py`) delegates to an engine
//! adapter. Inkling's chat template was not found in the sources read.
//!
//! Decisions, by the `marked` engine:
//! - the payload between `<|content_invoke_tool_json|>` and
//!   `<|end_message|>` is one SPEC §9 call object (or a list of them) whose
//!   arguments key is `args` ([`super::marked::Payload::ArgsKey`]): strict
//!   mode accepts it here, as this format's own key; unknown keys are
//!   refused as everywhere;
//! - a missing `<|end_message|>` after a complete object is `truncated` by
//!   the missing-closer rule (the message may have gone on), an output that
//!   ends inside the object is `truncated`;
//! - the header's tool name (`<|message_model|>NAME`) is not compared with
//!   the payload's `name`: the payload's name is the call that is
//!   validated and allowlisted. SGLang drops a call whose header differs;
//!   CONFORMANCE.md lists the difference.

use super::marked::{Block, Marked, Payload};
use crate::Extractor;

/// The `inkling` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "inkling",
        example: r#"<|message_model|>get_weather<|content_invoke_tool_json|>{"name": "get_weather", "args": {"city": "Antwerp"}}<|end_message|>"#,
        describe: "Inkling: <|message_model|>NAME<|content_invoke_tool_json|> + {\"name\", \"args\"} + <|end_message|>",
        blocks: vec![Block::pair(
            "<|content_invoke_tool_json|>",
            "<|end_message|>",
        )],
        payload: Payload::ArgsKey("args"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::super::testutil::*;
    use super::*;
    use toolgate_core::{FailureKind, Source};

    const CALL: &str = "<|message_model|>a<|content_invoke_tool_json|>{\"name\": \"a\", \"args\": {\"x\": 1}}<|end_message|>";

    #[test]
    fn one_and_parallel() {
        assert_eq!(calls(&*extractor(), CALL), vec![call("a", r#"{"x": 1}"#)]);
        let two = format!("Checking.{CALL}{}", CALL.replace("\"a\"", "\"b\""));
        assert_eq!(
            calls(&*extractor(), &two),
            vec![call("a", r#"{"x": 1}"#), call("b", r#"{"x": 1}"#)]
        );
    }

    #[test]
    fn the_standard_arguments_key_still_reads_and_two_keys_are_refused() {
        let out = "<|content_invoke_tool_json|>{\"name\": \"a\", \"arguments\": {}}<|end_message|>";
        assert_eq!(calls(&*extractor(), out), vec![call("a", "{}")]);
        let out = "<|content_invoke_tool_json|>{\"name\": \"a\", \"arguments\": {}, \"args\": {}}<|end_message|>";
        assert!(strict(&*extractor(), out)[0].failure().is_some());
    }

    #[test]
    fn cut_off_is_truncated_and_reasoning_is_reasoning() {
        let found = strict(
            &*extractor(),
            "<|message_model|>a<|content_invoke_tool_json|>{\"name\": \"a\", \"args\": {\"x\": ",
        );
        assert_eq!(found[0].failure().unwrap().kind, FailureKind::Truncated);
        let found = strict(&*extractor(), &format!("<think>{CALL}</think>No tool."));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].source, Source::OutputReasoning);
    }
}
