//! `k2_horizon`: K2 Horizon calls in IFM tokens, the GLM key/value shape
//! inside `<ifm|tool_calls>`.
//!
//! # Wire format
//!
//! ```text
//! <ifm|tool_calls><ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Antwerp</ifm|arg_value></ifm|tool_call>
//! <ifm|tool_call>get_time</ifm|tool_call></ifm|tool_calls>
//! ```
//!
//! gives `get_weather` with `{"city": "Antwerp"}` and `get_time` with `{}`.
//! Derived from vLLM's reference parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/k2_horizon_tool_parser.py`, and its tests), its
//! default `xml` shape: the name is the text of an `<ifm|tool_call>` up to
//! its first `<ifm|arg_key>`, then key/value pairs typed by the tool's
//! schema; only calls inside the `<ifm|tool_calls>` group count.
//!
//! Read by the key/value engine ([`crate::families::tagged::glm`]) in HY
//! v4's configuration (a section, no separator) with K2's tokens, so every
//! key/value rule holds: a key without a value, a key given twice or stray
//! text `malformed`; output ending inside the group `truncated` (vLLM
//! reads a group without its closer as content).
//!
//! Not read: the two other shapes the request chooses
//! (`chat_template_kwargs.tool_call_format`): `json` (a JSON call object in
//! `<ifm|tool_call>`: no candidate here) and `xml_typed` (an
//! `<ifm|arg_type>` between key and value: `malformed` here, the value
//! opener missing). Extraction sees the output, not the request.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::glm::Tokens;

/// K2 Horizon's group and call tokens.
const SECTION: &str = "<ifm|tool_calls>";
const SECTION_END: &str = "</ifm|tool_calls>";
const OPEN: &str = "<ifm|tool_call>";
const CLOSE: &str = "</ifm|tool_call>";
/// Its key and value tags.
const KEY: &str = "<ifm|arg_key>";
const KEY_END: &str = "</ifm|arg_key>";
const VALUE: &str = "<ifm|arg_value>";
const VALUE_END: &str = "</ifm|arg_value>";

/// The `k2_horizon` extractor: the key/value engine, K2's tokens, calls
/// counted inside the group.
pub(crate) const K2_HORIZON: Configured = Configured {
    example: "<ifm|tool_calls><ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>Antwerp</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
    describe: "K2 Horizon: <ifm|tool_calls><ifm|tool_call>f<ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v</ifm|arg_value></ifm|tool_call></ifm|tool_calls>; values typed by the tool schema",
    config: Config::KeyValue(Tokens {
        mode: "k2_horizon",
        open: OPEN,
        close: CLOSE,
        key: KEY,
        key_end: KEY_END,
        value: Some(VALUE),
        value_end: VALUE_END,
        sep: None,
        block: Some((SECTION, SECTION_END)),
        json_values: false,
    }),
};

/// The `k2_horizon` format.
pub(crate) const FORMAT: Def = Def {
    position: 417,
    extractor: || Box::new(K2_HORIZON),
    group: Group::Tagged,
    models: &["k2-horizon"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "k2_horizon",
        families: "K2 Horizon",
        engine: Engine::TaggedParameters,
        opener: cat!(SECTION, OPEN),
        separator: Some(KEY),
        closers: &[VALUE_END, CLOSE, SECTION_END],
        // The group's and the call's pairs and openers, as HY v4's row and
        // a declared key/value format with a `section` have them.
        blocks: &[(SECTION, SECTION_END), (OPEN, CLOSE)],
        parameter: Some((cat!(KEY, "KEY", KEY_END, VALUE), VALUE_END)),
        openers: Some(&[SECTION, OPEN]),
        payload: PayloadKind::TaggedValues,
        conventions: "name right after <ifm|tool_call>, then <ifm|arg_key>k</ifm|arg_key><ifm|arg_value>v</ifm|arg_value> pairs; calls count only inside <ifm|tool_calls>; the json and xml_typed shapes a request may ask for are not read",
        ..NO_EXTRAS
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::input::{Input, Strictness};
    use serde_json::json;
    use toolgate_core::FailureKind;

    fn run(out: &str) -> Vec<toolgate_core::Candidate> {
        K2_HORIZON.extract(&Input::new(out), Strictness::Strict)
    }

    /// vLLM's `test_xml_default_parses_multiple_calls_and_coerces_schema`:
    /// two calls in one group, text around it.
    #[test]
    fn calls_in_the_group() {
        let out = "Before <ifm|tool_calls><ifm|tool_call>lookup<ifm|arg_key>query</ifm|arg_key><ifm|arg_value>123</ifm|arg_value></ifm|tool_call>\n<ifm|tool_call>ping</ifm|tool_call></ifm|tool_calls> after.";
        let c = run(out);
        let calls: Vec<_> = c.iter().map(|c| c.call().unwrap()).collect();
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].name, "lookup");
        assert_eq!(json!(calls[0].arguments), json!({"query": "123"}));
        assert_eq!(calls[1].name, "ping");
    }

    /// Only calls inside the group count; the `json` shape is no candidate,
    /// the `xml_typed` shape is a broken call.
    #[test]
    fn outside_the_group_and_the_other_shapes() {
        assert!(run("<ifm|tool_call>ping</ifm|tool_call>").is_empty());
        assert!(run("<ifm|tool_calls><ifm|tool_call>{\"name\": \"ping\", \"arguments\": {}}</ifm|tool_call></ifm|tool_calls>").is_empty());
        let c = run("<ifm|tool_calls><ifm|tool_call>lookup<ifm|arg_key>limit</ifm|arg_key><ifm|arg_type>integer</ifm|arg_type><ifm|arg_value>2</ifm|arg_value></ifm|tool_call></ifm|tool_calls>");
        let f = c[0].failure().unwrap();
        assert_eq!(f.kind, FailureKind::Malformed);
        assert!(f.message.contains("has no `<ifm|arg_value>`"), "{}", f.message);
        // vLLM's incomplete input: the call cut off inside the group.
        let c = run("<ifm|tool_calls><ifm|tool_call>ping");
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Truncated);
    }
}
