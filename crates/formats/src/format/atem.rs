//! `atem`: Muse Glimmer's ATEM function calls.
//!
//! # Wire format
//!
//! ```text
//! <atem:function_calls>
//! <atem:invoke name="get_weather">
//! <atem:parameter name="city">Antwerp</atem:parameter>
//! <atem:parameter name="days">3</atem:parameter>
//! </atem:invoke>
//! </atem:function_calls>
//! ```
//!
//! gives `{"name": "get_weather", "arguments": {"city": "Antwerp", "days": 3}}`
//! when the schema types `days` as an integer (else `"3"`). The model's own
//! instructions say strings and scalars are written as is and lists and
//! objects as JSON, which is the `qwen_xml` typing of SPEC §9 (a value is a
//! string unless the schema types it otherwise; one leading and one trailing
//! newline removed). The invoke engine ([`crate::families::tagged::invoke`]) reads it, as it
//! reads MiniMax-M2: invokes count only inside `<atem:function_calls>`,
//! several invokes are parallel calls, and a block cut off at the end of the
//! output is `truncated`. Tool names may be namespaced (`default.terminal`).

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::Syntax;
use super::minimax_m2::XML;

/// The `atem` extractor: the invoke engine with ATEM's tokens.
pub(crate) const ATEM: Configured = Configured {
    example: "<atem:function_calls>\n<atem:invoke name=\"get_weather\">\n<atem:parameter name=\"city\">Antwerp</atem:parameter>\n</atem:invoke>\n</atem:function_calls>",
    describe: "Muse Glimmer ATEM: <atem:function_calls><atem:invoke name=\"f\"><atem:parameter name=\"k\">v</atem:parameter></atem:invoke></atem:function_calls>; values typed by the tool schema",
    config: Config::Invoke(Syntax {
        mode: "atem",
        invoke: "<atem:invoke ",
        invoke_end: "</atem:invoke>",
        param: "<atem:parameter ",
        param_end: "</atem:parameter>",
        block: Some(("<atem:function_calls>", "</atem:function_calls>")),
        json_body: false,
        xml_text: false,
        ..XML
    }),
};

/// The `atem` format.
pub(crate) const FORMAT: Def = Def {
    position: 180,
    extractor: || Box::new(ATEM),
    group: Group::Tagged,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "atem",
        families: "Muse Glimmer (Muse Spark)",
        engine: Engine::TaggedParameters,
        opener: "<atem:function_calls><atem:invoke name=\"NAME\">",
        separator: Some("<atem:parameter name=\"KEY\">"),
        closers: &[
            "</atem:parameter>",
            "</atem:invoke>",
            "</atem:function_calls>",
        ],
        blocks: &[("<atem:function_calls>", "</atem:function_calls>")],
        parameter: Some(("<atem:parameter name=\"KEY\">", "</atem:parameter>")),
        openers: Some(&["<atem:function_calls>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <atem:invoke> (may be namespaced); strings as is, lists and objects as JSON, typed by the tool schema",
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::input::ParamTypes;
    use serde_json::json;
    use std::collections::HashMap;
    use toolgate_core::Candidate;
    use toolgate_core::{FailureKind, Source};

    fn run(out: &str, pt: Option<&ParamTypes>) -> Vec<Candidate> {
        crate::families::tagged::testutil::typed(&ATEM, out, pt)
    }

    fn typed(tool: &str, param: &str, ty: &str) -> ParamTypes {
        ParamTypes {
            tools: HashMap::from([(
                tool.to_string(),
                HashMap::from([(param.to_string(), vec![ty.to_string()])]),
            )]),
        }
    }

    #[test]
    fn single_call_after_prose() {
        let out = "Checking the queue.\n<atem:function_calls>\n<atem:invoke name=\"default.terminal\">\n<atem:parameter name=\"command\">echo hi</atem:parameter>\n</atem:invoke>\n</atem:function_calls>";
        let c = run(out, None);
        assert_eq!(c.len(), 1);
        let call = c[0].call().unwrap();
        assert_eq!(call.name, "default.terminal");
        assert_eq!(json!(call.arguments), json!({"command": "echo hi"}));
    }

    #[test]
    fn parallel_invokes_and_typed_values() {
        let pt = typed("get_weather", "days", "integer");
        let out = "<atem:function_calls><atem:invoke name=\"get_weather\"><atem:parameter name=\"city\">Tokyo</atem:parameter><atem:parameter name=\"days\">3</atem:parameter></atem:invoke><atem:invoke name=\"get_weather\"><atem:parameter name=\"days\">soon</atem:parameter></atem:invoke></atem:function_calls>";
        let c = run(out, Some(&pt));
        assert_eq!(c.len(), 2);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"city": "Tokyo", "days": 3})
        );
        // Text that does not read as the schema's type stays a string.
        assert_eq!(c[1].call().unwrap().arguments["days"], "soon");
        // Untyped: a string.
        assert_eq!(run(out, None)[0].call().unwrap().arguments["days"], "3");
    }

    #[test]
    fn lists_and_objects_are_json_when_the_schema_says_so() {
        let pt = typed("f", "tags", "array");
        let out = "<atem:function_calls><atem:invoke name=\"f\"><atem:parameter name=\"tags\">[\"a\", \"b\"]</atem:parameter></atem:invoke></atem:function_calls>";
        assert_eq!(
            run(out, Some(&pt))[0].call().unwrap().arguments["tags"],
            json!(["a", "b"])
        );
    }

    #[test]
    fn no_arguments() {
        let out = "<atem:function_calls>\n<atem:invoke name=\"get_time\">\n</atem:invoke>\n</atem:function_calls>";
        let c = run(out, None);
        assert!(c[0].call().unwrap().arguments.is_empty());
    }

    #[test]
    fn cut_mid_serialization_is_truncated() {
        let out = "Waiting.\n<atem:function_calls>\n<atem:invoke name=\"default.terminal\">";
        let f = run(out, None)[0].failure().unwrap().clone();
        assert_eq!(f.kind, FailureKind::Truncated);
        let out = "<atem:function_calls><atem:invoke name=\"f\"><atem:parameter name=\"city\">Tok";
        let f = run(out, None)[0].failure().unwrap().clone();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, out.len()));
    }

    #[test]
    fn a_value_running_into_the_next_parameter_is_malformed() {
        let out = "<atem:function_calls><atem:invoke name=\"f\"><atem:parameter name=\"a\">1<atem:parameter name=\"b\">2</atem:parameter></atem:invoke></atem:function_calls>";
        assert_eq!(
            run(out, None)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
    }

    #[test]
    fn invokes_outside_the_block_and_in_reasoning() {
        assert!(
            run(
                "I would write <atem:invoke name=\"f\"></atem:invoke> here.",
                None
            )
            .is_empty()
        );
        // Other families' invokes are not ATEM.
        assert!(
            run(
                "<minimax:tool_call><invoke name=\"f\"></invoke></minimax:tool_call>",
                None
            )
            .is_empty()
        );
        let out = "<think><atem:function_calls><atem:invoke name=\"f\"></atem:invoke></atem:function_calls></think>done";
        assert_eq!(run(out, None)[0].source, Source::OutputReasoning);
    }
}
