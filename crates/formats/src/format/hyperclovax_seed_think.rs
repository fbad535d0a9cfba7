//! `hyperclovax_seed_think`: HyperCLOVAX-SEED-Think (the 32B) calls, GLM's
//! key/value markup whose values are JSON text.
//!
//! # Wire format
//!
//! ```text
//! <tool_call>get_weather
//! <arg_key>city</arg_key>
//! <arg_value>"Seoul"</arg_value>
//! <arg_key>days</arg_key>
//! <arg_value>3</arg_value>
//! </tool_call>
//! ```
//!
//! gives `get_weather` with `{"city": "Seoul", "days": 3}`. Derived from
//! vLLM's reference parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/hyperclovax_seed_think_tool_parser.py`, and its
//! tests): the name is the first line of a `<tool_call>`, then
//! `<arg_key>`/`<arg_value>` pairs, each value read as JSON when it is JSON
//! and kept as text otherwise (`<arg_value>Seoul</arg_value>` is `"Seoul"`
//! too). The 14B writes another format (`hyperclovax_14b`).
//!
//! Read by the key/value engine ([`crate::families::tagged::glm`]) with
//! GLM's tokens and its `json_values` option: the only difference from
//! `glm`, which keeps a string parameter's text as written, quotes
//! included (SPEC §9). A JSON value is taken as the model wrote it, whatever
//! the schema says (a number written for a string parameter is a number),
//! as DSML's `string="false"`. Every other GLM rule holds: a key without a
//! value, a key given twice or stray text `malformed`, output ending inside
//! a call `truncated`.
//!
//! Not read: the JSON call list vLLM's parser also accepts, in the same
//! output, when the output holds no `<tool_call>` (after `</think>`, a list
//! or one object, `[{"name": …, "parameters": {…}}]`). The model writes it
//! only when the server's structured-output grammar forced it
//! (`tool_choice` required or named, thinking on; the parser takes every
//! `tool_choice` for that); it is the grammar's format, not the template's,
//! and the `json` mode reads exactly that output (the whole output,
//! reasoning aside). Reading it here would make this row a bare reader of
//! every JSON output (DECISIONS.md, stop 50), as `hyperclovax_14b` does not
//! read the 14B's header-less list either.

use super::glm::{GLM_TOKENS, KEY, PARAMETER, VALUE_END};
use super::hermes::{CLOSE, OPEN};
use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::glm::Tokens;

/// The `hyperclovax_seed_think` extractor: the key/value engine, GLM's
/// tokens, values read as JSON first.
pub(crate) const HYPERCLOVAX_SEED_THINK: Configured = Configured {
    example: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>\"Seoul\"</arg_value>\n</tool_call>",
    describe: "HyperCLOVAX-SEED-Think (32B): <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>; values read as JSON first",
    config: Config::KeyValue(Tokens {
        mode: "hyperclovax_seed_think",
        json_values: true,
        ..GLM_TOKENS
    }),
};

/// The `hyperclovax_seed_think` format.
pub(crate) const FORMAT: Def = Def {
    position: 416,
    extractor: || Box::new(HYPERCLOVAX_SEED_THINK),
    group: Group::Tagged,
    models: &["hyperclovax-seed-think"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "hyperclovax_seed_think",
        families: "HyperCLOVAX-SEED-Think (32B)",
        engine: Engine::TaggedParameters,
        opener: OPEN,
        separator: Some(KEY),
        closers: &[VALUE_END, CLOSE],
        blocks: &[(OPEN, CLOSE)],
        parameter: Some(PARAMETER),
        openers: Some(&[OPEN]),
        payload: PayloadKind::TaggedValues,
        conventions: "name right after <tool_call>; <arg_key>k</arg_key><arg_value>v</arg_value> pairs; each value read as JSON when it is JSON (\"Seoul\" is Seoul, 3 is a number), else kept as text",
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

    fn types(params: &[(&str, &str)]) -> ParamTypes {
        let p = params
            .iter()
            .map(|(k, t)| (k.to_string(), vec![t.to_string()]))
            .collect();
        ParamTypes {
            tools: HashMap::from([("get_weather".to_string(), p)]),
        }
    }

    fn args(e: &dyn Extractor, out: &str, pt: &ParamTypes) -> serde_json::Value {
        let mut input = Input::new(out);
        input.param_types = Some(pt);
        let c = e.extract(&input, Strictness::Strict);
        assert_eq!(c.len(), 1, "{c:?}");
        json!(c[0].call().unwrap().arguments)
    }

    /// vLLM's JSON-list fallback (the output a forced `tool_choice` gives,
    /// no `<tool_call>` in it) is no candidate here: the `json` mode reads
    /// it, with the calls vLLM reads (DECISIONS.md, stop 50).
    #[test]
    fn a_forced_json_list_is_the_json_mode_s_reading() {
        let out = "The user wants Seoul.</think>\n\n[{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Seoul\"}}]";
        let input = Input::new(out);
        assert!(
            HYPERCLOVAX_SEED_THINK
                .extract(&input, Strictness::Strict)
                .is_empty()
        );
        let c = crate::irregular::json::Json.extract(&input, Strictness::Strict);
        let live: Vec<_> = c.iter().filter(|c| c.is_live()).collect();
        assert_eq!(live.len(), 1, "{c:?}");
        let call = live[0].call().unwrap();
        assert_eq!(call.name, "get_weather");
        assert_eq!(json!(call.arguments), json!({"city": "Seoul"}));
    }

    /// vLLM's `test_single_tool_call` and `test_arg_value_falls_back_to_raw_string`:
    /// a JSON string value is its text without the quotes, a bare word
    /// stays that word, a JSON number is a number. `glm` reads the same
    /// output with the quotes kept in the string.
    #[test]
    fn values_are_read_as_json_first() {
        let pt = types(&[("city", "string"), ("unit", "string"), ("days", "integer")]);
        let out = "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>\"Seoul\"</arg_value>\n<arg_key>unit</arg_key>\n<arg_value>celsius</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>";
        assert_eq!(
            args(&HYPERCLOVAX_SEED_THINK, out, &pt),
            json!({"city": "Seoul", "unit": "celsius", "days": 3})
        );
        assert_eq!(
            args(&super::super::glm::GLM, out, &pt),
            json!({"city": "\"Seoul\"", "unit": "celsius", "days": 3})
        );
        // JSON as written, whatever the schema says: a number for a string,
        // an object, a quoted number for an integer.
        let out = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>12345</arg_value><arg_key>opts</arg_key><arg_value>{\"a\": [1, null]}</arg_value><arg_key>days</arg_key><arg_value>\"3\"</arg_value></tool_call>";
        assert_eq!(
            args(&HYPERCLOVAX_SEED_THINK, out, &pt),
            json!({"city": 12345, "opts": {"a": [1, null]}, "days": "3"})
        );
    }
}
