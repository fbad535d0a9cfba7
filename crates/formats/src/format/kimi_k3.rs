//! `kimi_k3`: Kimi K3 XTML calls.
//!
//! # Wire format
//!
//! ```text
//! <|open|>tools<|sep|>
//! <|open|>call tool="get_weather" index="1"<|sep|>
//! <|open|>argument key="city" type="string"<|sep|>Beijing<|close|>argument<|sep|>
//! <|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>
//! <|close|>call<|sep|>
//! <|close|>tools<|sep|>
//! ```
//!
//! gives `get_weather` with `{"city": "Beijing", "days": 3}`. Derived from
//! vLLM's reference parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/kimi_k3_tool_parser.py`) and the XTML the Kimi-K3
//! chat template renders for assistant tool calls (`<|open|>call tool=…
//! index=…<|sep|>`, one `<|open|>argument key=… type=…<|sep|>` per argument).
//!
//! Where it differs from Kimi K2 ([`crate::format::kimi`]): K2 writes a call id
//! `functions.NAME:INDEX` and one JSON arguments object between special
//! tokens; K3 writes XML-like elements whose brackets are the special tokens
//! `<|open|>`, `<|close|>` and `<|sep|>`, the tool in a `tool` attribute,
//! the 1-based `index` attribute optional, and each argument its own element
//! with a `key` and a `type`.
//!
//! - `type="string"`: the text is the string, verbatim; any other type
//!   (`number`, `boolean`, `object`, …): the text is read as JSON, and text
//!   that is not JSON stays a string (the validator labels it); no `type`:
//!   typed by the tool's schema like `qwen_xml`. One leading and one
//!   trailing newline are removed.
//! - Attribute values are XML-escaped (`&quot;`, `&amp;`), as vLLM decodes
//!   them.
//! - Calls count only inside `<|open|>tools<|sep|>`; a section whose closer
//!   is missing runs to the end of the output. An attribute other than
//!   `tool` and `index` on a call, or other than `key` and `type` on an
//!   argument, is `malformed` (never an argument dropped).
//! - K3's reasoning is its `think` channel, which serving stacks split into
//!   the reasoning field (vLLM's `kimi_k3` reasoning parser), or leave in the
//!   output as `<|open|>think<|sep|>` … `<|close|>think<|sep|>`, a reasoning
//!   span ([`crate::reasoning`]); a call in either is reasoning like any
//!   other.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::{Syntax, Typing};
use super::minimax_m2::XML;

/// The `kimi_k3` extractor: the invoke engine with Kimi K3's XTML tokens.
pub(crate) const KIMI_K3: Configured = Configured {
    example: "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Antwerp<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    describe: "Kimi K3 XTML: <|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|><|open|>argument key=\"k\" type=\"string\"<|sep|>v<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    config: Config::Invoke(Syntax {
        mode: "kimi_k3",
        invoke: "<|open|>call ",
        invoke_end: "<|close|>call<|sep|>",
        param: "<|open|>argument ",
        param_end: "<|close|>argument<|sep|>",
        block: Some(("<|open|>tools<|sep|>", "<|close|>tools<|sep|>")),
        tag_end: "<|sep|>",
        name_attr: "tool",
        invoke_attrs: &["index"],
        key_attr: "key",
        typing: Typing::TypeAttr,
        attr_entities: true,
        ..XML
    }),
};

/// The `kimi_k3` format.
pub(crate) const FORMAT: Def = Def {
    position: 200,
    extractor: || Box::new(KIMI_K3),
    group: Group::Tagged,
    models: &["kimi-k3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "kimi_k3",
        families: "Kimi K3",
        engine: Engine::TaggedParameters,
        opener: "<|open|>tools<|sep|><|open|>call tool=\"NAME\" index=\"N\"<|sep|>",
        separator: Some("<|open|>argument key=\"KEY\" type=\"TYPE\"<|sep|>"),
        closers: &[
            "<|close|>argument<|sep|>",
            "<|close|>call<|sep|>",
            "<|close|>tools<|sep|>",
        ],
        blocks: &[("<|open|>tools<|sep|>", "<|close|>tools<|sep|>")],
        parameter: Some((
            "<|open|>argument key=\"KEY\" type=\"string\"<|sep|>",
            "<|close|>argument<|sep|>",
        )),
        openers: Some(&["<|open|>tools<|sep|>", "<|open|>call "]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "tool attribute names the tool, index optional; type=\"string\" values verbatim, other types JSON, no type: typed by the tool schema",
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::Extractor;
    use crate::families::tagged::testutil::{one_type, typed};
    use crate::input::{Input, ParamTypes, Strictness};
    use serde_json::json;
    use toolgate_core::{Candidate, FailureKind, Source};

    fn run(out: &str, pt: Option<&ParamTypes>) -> Vec<Candidate> {
        typed(&KIMI_K3, out, pt)
    }

    #[test]
    fn typed_arguments_with_and_without_index() {
        let out = "Let me check.<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>42<|close|>argument<|sep|><|open|>argument key=\"days\" type=\"number\"<|sep|>3<|close|>argument<|sep|><|open|>argument key=\"opts\" type=\"object\"<|sep|>{\"a\": [1]}<|close|>argument<|sep|><|close|>call<|sep|><|open|>call tool=\"bash\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
        let c = run(out, None);
        assert_eq!(c.len(), 2);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"city": "42", "days": 3, "opts": {"a": [1]}})
        );
        assert_eq!(c[1].call().unwrap().name, "bash");
        assert!(c[1].call().unwrap().arguments.is_empty());
        assert_eq!(c[0].source, Source::Output);
    }

    #[test]
    fn untyped_values_follow_the_schema_and_bad_json_stays_text() {
        let pt = one_type("f", "n", "integer");
        let out = "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"n\"<|sep|>7<|close|>argument<|sep|><|open|>argument key=\"m\" type=\"number\"<|sep|>seven<|close|>argument<|sep|><|close|>call<|sep|>";
        let c = run(out, Some(&pt));
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"n": 7, "m": "seven"})
        );
    }

    #[test]
    fn escaped_attributes_are_decoded() {
        let out = "<|open|>tools<|sep|><|open|>call tool=\"a&amp;b\"<|sep|><|open|>argument key=\"say &quot;hi&quot;\" type=\"string\"<|sep|>x &amp; y<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
        let call = run(out, None)[0].call().unwrap().clone();
        assert_eq!(call.name, "a&b");
        // The value is text, kept as written.
        assert_eq!(call.arguments["say \"hi\""], "x &amp; y");
    }

    #[test]
    fn cut_broken_and_foreign() {
        let out = "<|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|><|open|>argument key=\"q\" type=\"string\"<|sep|>Tok";
        let f = run(out, None)[0].failure().unwrap().clone();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, out.len()));
        let out = "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|open|>argument key=\"q\" type=\"string\"<|sep|>a<|open|>argument key=\"r\" type=\"string\"<|sep|>b<|close|>argument<|sep|><|close|>call<|sep|>";
        assert_eq!(
            run(out, None)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
        // An unknown attribute drops nothing silently.
        let out = "<|open|>tools<|sep|><|open|>call tool=\"f\" id=\"x\"<|sep|><|close|>call<|sep|>";
        assert_eq!(
            run(out, None)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
        // Outside the tools channel a call is not this format's call.
        assert!(run("<|open|>call tool=\"f\"<|sep|><|close|>call<|sep|>", None).is_empty());
        // Nor is Kimi K2's markup.
        assert!(run("<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>", None).is_empty());
    }

    #[test]
    fn reasoning_field_calls_are_reasoning() {
        let r = "<|open|>tools<|sep|><|open|>call tool=\"f\"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>";
        let mut input = Input::new("");
        input.reasoning_field = Some(r);
        let c = KIMI_K3.extract(&input, Strictness::Strict);
        assert!(c[0].source.is_reasoning());
        // The think channel left in the output is reasoning too.
        let out =
            format!("<|open|>think<|sep|>maybe {r}<|close|>think<|sep|><|open|>response<|sep|>No.");
        assert_eq!(run(&out, None)[0].source, Source::OutputReasoning);
    }
}
