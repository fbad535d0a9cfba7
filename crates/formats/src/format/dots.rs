//! `dots`: rednote-hilab's dots models, MiniMax-M2's invokes in a wrapper of
//! their own (vLLM's and SGLang's `dots` parsers).
//!
//! # Wire format
//!
//! ```text
//! <dots_function_call>
//! <invoke name="get_weather">
//! <parameter name="city">Antwerp</parameter>
//! </invoke>
//! </dots_function_call>
//! ```
//!
//! Several invokes in one block, or several blocks, are parallel calls;
//! invokes count only inside the block; values are typed by the tool's
//! schema like `minimax_m2`'s. A block cut off at the end of the output is
//! `truncated` (the missing-closer rule).
//!
//! Not read: vLLM also accepts one JSON call object as the whole block body;
//! the invoke engine reads invokes only, so such a block gives no candidate
//! (a `no_call`, never a call). No model-name fragment is listed: which
//! dots checkpoints write this format is not stated by the parser, so
//! `auto` does not guess it.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::Syntax;
use super::minimax_m2::XML;

/// The dots call block.
const OPEN: &str = "<dots_function_call>";
/// Closes [`OPEN`].
const CLOSE: &str = "</dots_function_call>";

/// The `dots` extractor: the invoke engine inside the dots block.
const DOTS: Configured = Configured {
    example: "<dots_function_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Antwerp</parameter>\n</invoke>\n</dots_function_call>",
    describe: "dots: <dots_function_call><invoke name=\"f\"><parameter name=\"k\">v</parameter></invoke></dots_function_call>; values typed by the tool schema",
    config: Config::Invoke(Syntax {
        mode: "dots",
        block: Some((OPEN, CLOSE)),
        ..XML
    }),
};

/// The `dots` format.
pub(crate) const FORMAT: Def = Def {
    position: 245,
    extractor: || Box::new(DOTS),
    group: Group::Tagged,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "dots",
        families: "dots (rednote-hilab)",
        engine: Engine::TaggedParameters,
        opener: cat!(OPEN, XML.invoke, "name=\"NAME\">"),
        separator: Some(cat!(XML.param, "name=\"KEY\">")),
        closers: &[XML.param_end, XML.invoke_end, CLOSE],
        blocks: &[(OPEN, CLOSE)],
        parameter: Some((cat!(XML.param, "name=\"KEY\">"), XML.param_end)),
        openers: Some(&[OPEN, XML.invoke]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <invoke>; values typed by the tool schema; a JSON call object as the block body is not read",
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::families::tagged::testutil::{one_type, typed};
    use serde_json::json;
    use toolgate_core::{FailureKind, Source};

    #[test]
    fn parallel_invokes_typed_by_the_schema() {
        let out = "Checking.\n<dots_function_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Seattle</parameter>\n<parameter name=\"days\">5</parameter>\n</invoke>\n<invoke name=\"get_time\">\n</invoke>\n</dots_function_call>";
        let pt = one_type("get_weather", "days", "integer");
        let c = typed(&DOTS, out, Some(&pt));
        assert_eq!(c.len(), 2);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"city": "Seattle", "days": 5})
        );
        assert_eq!(c[1].call().unwrap().name, "get_time");
        assert_eq!(
            typed(&DOTS, out, None)[0].call().unwrap().arguments["days"],
            "5"
        );
    }

    #[test]
    fn an_invoke_outside_the_block_or_in_another_wrapper_is_not_a_call() {
        for out in [
            "<invoke name=\"f\"><parameter name=\"a\">1</parameter></invoke>",
            "<minimax:tool_call><invoke name=\"f\"></invoke></minimax:tool_call>",
            "<dots_function_call>{\"name\": \"f\", \"arguments\": {}}</dots_function_call>",
        ] {
            assert!(typed(&DOTS, out, None).is_empty(), "{out}");
        }
    }

    #[test]
    fn cut_off_and_in_reasoning() {
        let cut = typed(
            &DOTS,
            "<dots_function_call>\n<invoke name=\"f\">\n<parameter name=\"a\">1",
            None,
        );
        assert_eq!(cut[0].failure().unwrap().kind, FailureKind::Truncated);
        let c = typed(
            &DOTS,
            "<think><dots_function_call><invoke name=\"f\"></invoke></dots_function_call></think>ok",
            None,
        );
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].source, Source::OutputReasoning);
    }
}
