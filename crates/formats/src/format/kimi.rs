//! `kimi`: Kimi K2 special-token calls.
//!
//! # Wire format
//!
//! ```text
//! <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": "Beijing"}<|tool_call_end|><|tool_call_begin|>functions.get_weather:1<|tool_call_argument_begin|>{"city": "Shanghai"}<|tool_call_end|><|tool_calls_section_end|>
//! ```
//!
//! gives two `get_weather` calls. The call id is `functions.NAME:INDEX`; the
//! name is what stands between `functions.` and the last `:` (the prefix is
//! optional: `get_weather:0` names `get_weather`). The arguments are one JSON
//! object.
//!
//! - An id that is not `[functions.]NAME:INDEX` (`functions.f.0`, a bare
//!   counter `0`) is a `malformed` candidate without a name: the name is
//!   never guessed from the arguments or the tool list.
//! - The section markers are optional. A call whose `<|tool_call_end|>` is
//!   missing ends at the next `<|tool_call_begin|>`, the section end, or the
//!   end of the output; a complete JSON object there is a call like any
//!   other, an incomplete one at the end of the output is `truncated`.
//! - Arguments given as a JSON string holding an object (double-encoded) are
//!   `escaping`; the lenient variant decodes them and records the repair.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::name_json::{NameJson, indexed_name};

const MODE: &str = "kimi";
const CALL: &str = "<|tool_call_begin|>";
const ARGS: &str = "<|tool_call_argument_begin|>";
pub(crate) const CALL_END: &str = "<|tool_call_end|>";
const SECTION_END: &str = "<|tool_calls_section_end|>";

/// The `kimi` extractor: the name-then-JSON engine with Kimi's tokens.
pub(crate) const KIMI: Configured = Configured {
    example: "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{\"city\": \"Antwerp\"}<|tool_call_end|><|tool_calls_section_end|>",
    describe: "Kimi K2: <|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{json}<|tool_call_end|> inside <|tool_calls_section_begin|>…<|tool_calls_section_end|>",
    config: Config::NameJson(KIMI_TOKENS),
};

/// Kimi's spelling of the name-then-JSON shape.
const KIMI_TOKENS: NameJson<'static> = NameJson {
    mode: MODE,
    call: CALL,
    args: ARGS,
    call_end: CALL_END,
    section_end: Some(SECTION_END),
    namespace: Some("functions."),
    name_of: indexed_name,
    header: "functions.NAME:INDEX",
};

/// The `kimi` format.
pub(crate) const FORMAT: Def = Def {
    position: 90,
    extractor: || Box::new(KIMI),
    group: Group::Tagged,
    models: &["kimi-k2"],
    bare_reader: false,
    profile: Some(Profile {
        name: "kimi",
        rank: 7,
    }),
    row: Format {
        name: "kimi",
        families: "Kimi K2",
        engine: Engine::NameThenJson,
        opener: "<|tool_calls_section_begin|><|tool_call_begin|>",
        separator: Some("<|tool_call_argument_begin|>"),
        closers: &[CALL_END, "<|tool_calls_section_end|>"],
        blocks: &[
            ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"),
            ("<|tool_call_begin|>", CALL_END),
        ],
        parameter: None,
        openers: Some(&["<|tool_calls_section_begin|>", "<|tool_call_begin|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "functions.NAME:INDEX, then the JSON arguments object",
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use crate::families::tagged::testutil::cut_at_end;
    use super::*;
    use crate::Extractor;
    use crate::input::{Input, Strictness};
    use serde_json::json;
    use toolgate_core::Candidate;
    use toolgate_core::{FailureKind, Repair, Source};

    fn run(out: &str, s: Strictness) -> Vec<Candidate> {
        KIMI.extract(&Input::new(out), s)
    }

    #[test]
    fn many_calls_before_a_far_section_end_stay_linear() {
        // Issue 22: markers are looked for outside JSON strings; the walk to
        // the section end must stop at the next call, or 30,000 calls in
        // one section would each walk to its far end.
        let call = "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": \"<|tool_call_end|>\"}<|tool_call_end|>";
        let out = format!(
            "<|tool_calls_section_begin|>{}<|tool_calls_section_end|>",
            call.repeat(30_000)
        );
        let t = std::time::Instant::now();
        let c = run(&out, Strictness::Strict);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            t.elapsed()
        );
        assert_eq!(c.len(), crate::rules::DEFAULT_MAX_CANDIDATES);
        assert_eq!(
            c[0].call().unwrap().arguments["a"],
            json!("<|tool_call_end|>")
        );
    }

    #[test]
    fn pass_and_parallel() {
        let out = "Compare. <|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>{\"city\": \"Beijing\"}<|tool_call_end|><|tool_call_begin|>get_time:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>";
        let c = run(out, Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].call().unwrap().name, "get_weather");
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"city": "Beijing"})
        );
        assert_eq!(c[0].span.start, out.find("<|tool_call_begin|>").unwrap());
        assert_eq!(c[1].call().unwrap().name, "get_time");
        assert_eq!(c[0].source, Source::Output);
    }

    #[test]
    fn hyphens_and_dots_in_names() {
        let out = "<|tool_call_begin|>functions.mcp__portal__search-documents:0<|tool_call_argument_begin|>{}<|tool_call_end|>";
        assert_eq!(
            run(out, Strictness::Strict)[0].call().unwrap().name,
            "mcp__portal__search-documents"
        );
    }

    #[test]
    fn missing_end_markers() {
        let out = "<|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{\"x\": 1}<|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>{\"y\": 2}";
        let c = run(out, Strictness::Strict);
        assert_eq!(c.len(), 2);
        assert_eq!(c[0].call().unwrap().arguments["x"], 1);
        assert_eq!(c[1].call().unwrap().arguments["y"], 2);
    }

    #[test]
    fn open_call_cut_by_the_length_limit_is_truncated() {
        let out = "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"x\": 1}";
        let mut input = Input::new(out);
        input.hit_length_limit = true;
        let c = KIMI.extract(&input, Strictness::Strict);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
    }

    #[test]
    fn truncation() {
        for out in [
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0 <|tool_call_argument_begin|>{\"city\": \"Bei",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0",
        ] {
            let c = run(out, Strictness::Strict);
            cut_at_end(&c, out);
            assert_eq!(c[0].name.as_deref(), Some("get_weather"));
        }
    }

    #[test]
    fn malformed_payload_and_ids() {
        let out = "<|tool_call_begin|>functions.bad:0 <|tool_call_argument_begin|>{\"city\": \"Beijing\"<|tool_call_end|><|tool_call_begin|>functions.invalid.0 <|tool_call_argument_begin|>{}<|tool_call_end|><|tool_call_begin|>0<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_call_begin|>functions.good:3<|tool_call_argument_begin|>{}<|tool_call_end|>";
        let c = run(out, Strictness::Strict);
        assert_eq!(c.len(), 4);
        assert_eq!(c[0].name.as_deref(), Some("bad"));
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(c[1].name, None);
        assert_eq!(c[1].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(c[2].name, None);
        assert_eq!(c[3].call().unwrap().name, "good");
    }

    #[test]
    fn lenient_repairs_are_recorded() {
        let out = "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{'a': True,}<|tool_call_end|>";
        assert_eq!(
            run(out, Strictness::Strict)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
        let c = run(out, Strictness::Lenient);
        assert_eq!(json!(c[0].call().unwrap().arguments), json!({"a": true}));
        assert_eq!(
            c[0].repairs,
            vec![
                Repair::SingleQuotes,
                Repair::TrailingCommas,
                Repair::PythonLiterals
            ]
        );
        let out = "<|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>\"{\\\"a\\\": 1}\"<|tool_call_end|>";
        assert_eq!(
            run(out, Strictness::Strict)[0].failure().unwrap().kind,
            FailureKind::Escaping
        );
    }

    #[test]
    fn reasoning_only_and_no_call() {
        let out = "<think><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|></think>Answer.";
        let c = run(out, Strictness::Strict);
        assert_eq!(c[0].source, Source::OutputReasoning);
        assert!(
            run(
                "Reasoning. <|tool_calls_section_begin|><|tool_calls_section_end|>",
                Strictness::Strict
            )
            .is_empty()
        );
        assert!(
            run(
                "invalid_tool:0<|tool_call_argument_begin|>{}<|tool_call_end|>",
                Strictness::Strict
            )
            .is_empty()
        );
    }
}
