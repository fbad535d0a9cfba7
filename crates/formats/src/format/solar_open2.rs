//! `solar_open2`: Upstage Solar Open 2 calls, key/value arguments whose
//! key's closer opens the value.
//!
//! # Wire format
//!
//! ```text
//! <|tool_call:start|>get_weather
//! <|tool_arg:start|>city<|tool_arg:value|>Seoul<|tool_arg:end|>
//! <|tool_call:end|>
//! ```
//!
//! gives `get_weather` with `{"city": "Seoul"}`; a call without arguments
//! is `<|tool_call:start|>get_time\n<|tool_call:end|>`. Derived from vLLM's
//! reference parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/solar_open2_tool_parser.py`, and its tests): the name
//! is the rest of the opener's line, then `<|tool_arg:start|>` pairs, each
//! key closed by `<|tool_arg:value|>`, which opens its value, values raw
//! text typed by the tool's schema.
//!
//! Read by the key/value engine ([`crate::families::tagged::glm`]) with no
//! value opener of its own (`Tokens::value: None`), so every key/value rule
//! holds. Where vLLM differs: a value whose `<|tool_arg:end|>` is missing,
//! a call whose `<|tool_call:end|>` is missing before the next call, a key
//! given twice and a call without a name are `malformed` here (vLLM reads
//! the value to the next marker, ends the call at the next opener, keeps
//! the first value, and runs a call named `""`); output ending inside a
//! call is `truncated` (vLLM keeps it as content).
//!
//! Reasoning is `<|think:start|>` … `<|think:end|>` (vLLM's `solar_open2`
//! reasoning parser), a reasoning span for every mode
//! ([`crate::reasoning`]); the template writes the opener, so the output
//! usually holds the closer alone and the text before it is reasoning. A
//! call written there is reasoning, never live; vLLM moves a complete one
//! out of the reasoning into the content and runs it.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::glm::Tokens;

/// Solar Open 2's call tokens.
const OPEN: &str = "<|tool_call:start|>";
const CLOSE: &str = "<|tool_call:end|>";
/// Its argument tokens: the key's closer opens the value.
const ARG: &str = "<|tool_arg:start|>";
const ARG_VALUE: &str = "<|tool_arg:value|>";
const ARG_END: &str = "<|tool_arg:end|>";

/// The `solar_open2` extractor: the key/value engine, the key's closer
/// opening the value.
pub(crate) const SOLAR_OPEN2: Configured = Configured {
    example: "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Seoul<|tool_arg:end|>\n<|tool_call:end|>",
    describe: "Solar Open 2: <|tool_call:start|>f\\n<|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|>\\n<|tool_call:end|>; values typed by the tool schema",
    config: Config::KeyValue(Tokens {
        mode: "solar_open2",
        open: OPEN,
        close: CLOSE,
        key: ARG,
        key_end: ARG_VALUE,
        value: None,
        value_end: ARG_END,
        sep: None,
        block: None,
        json_values: false,
    }),
};

/// The `solar_open2` format.
pub(crate) const FORMAT: Def = Def {
    position: 418,
    extractor: || Box::new(SOLAR_OPEN2),
    group: Group::Tagged,
    models: &["solar-open2", "solar-open-2"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "solar_open2",
        families: "Upstage Solar Open 2",
        engine: Engine::TaggedParameters,
        opener: OPEN,
        separator: Some(ARG),
        closers: &[ARG_END, CLOSE],
        blocks: &[(OPEN, CLOSE)],
        parameter: Some((cat!(ARG, "KEY", ARG_VALUE), ARG_END)),
        openers: Some(&[OPEN]),
        payload: PayloadKind::TaggedValues,
        conventions: "the name is the rest of the <|tool_call:start|> line; <|tool_arg:start|>k<|tool_arg:value|>v<|tool_arg:end|> pairs, the key's closer opening the value",
        ..NO_EXTRAS
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::input::{Input, ParamTypes, Strictness};
    use serde_json::json;
    use std::collections::HashMap;
    use toolgate_core::FailureKind;

    fn run(out: &str) -> Vec<toolgate_core::Candidate> {
        let p = HashMap::from([("max_results".to_string(), vec!["integer".to_string()])]);
        let pt = ParamTypes {
            tools: HashMap::from([("search".to_string(), p)]),
        };
        let mut input = Input::new(out);
        input.param_types = Some(&pt);
        SOLAR_OPEN2.extract(&input, Strictness::Strict)
    }

    /// vLLM's `test_multiple_arguments_with_schema` and `test_no_arguments`:
    /// the value starts right after `<|tool_arg:value|>` (its whitespace
    /// kept, one newline trimmed as everywhere) and is typed by the schema.
    #[test]
    fn the_key_closer_opens_the_value() {
        let out = "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|> vLLM tutorial<|tool_arg:end|>\n<|tool_arg:start|>max_results<|tool_arg:value|>5<|tool_arg:end|>\n<|tool_call:end|>\n<|tool_call:start|>get_time\n<|tool_call:end|>";
        let c = run(out);
        assert_eq!(c.len(), 2, "{c:?}");
        let first = c[0].call().unwrap();
        assert_eq!(first.name, "search");
        assert_eq!(
            json!(first.arguments),
            json!({"query": " vLLM tutorial", "max_results": 5})
        );
        let second = c[1].call().unwrap();
        assert_eq!((second.name.as_str(), second.arguments.len()), ("get_time", 0));
    }

    /// A value whose `<|tool_arg:end|>` is missing runs into the call's
    /// closer or the next key: `malformed` (vLLM's
    /// `test_dropped_arg_end_does_not_swallow_later_calls` reads `oops`);
    /// a value cut off by the end of the output is `truncated`.
    #[test]
    fn a_value_without_its_closer() {
        for out in [
            "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>oops<|tool_call:end|>",
            "<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>oops<|tool_arg:start|>max_results<|tool_arg:value|>5<|tool_arg:end|><|tool_call:end|>",
        ] {
            let c = run(out);
            let f = c[0].failure().unwrap();
            assert_eq!(f.kind, FailureKind::Malformed, "{out}");
            assert!(
                f.message.contains("`query` is not closed with `<|tool_arg:end|>`"),
                "{}",
                f.message
            );
        }
        let c = run("<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>Seo");
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
        let c = run("<|tool_call:start|>search\n<|tool_arg:start|>query<|tool_arg:value|>");
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
    }
}
