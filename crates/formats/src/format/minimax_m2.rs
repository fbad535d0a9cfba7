//! `minimax_m2`: MiniMax-M2 XML invokes.
//!
//! # Wire format
//!
//! ```text
//! <minimax:tool_call>
//! <invoke name="get_weather">
//! <parameter name="city">Seattle</parameter>
//! <parameter name="days">5</parameter>
//! </invoke>
//! </minimax:tool_call>
//! ```
//!
//! gives `{"name": "get_weather", "arguments": {"city": "Seattle", "days": 5}}`
//! when the schema types `days` as an integer (else `"5"`): values are typed
//! like `qwen_xml` (SPEC §9). Several `<invoke>` blocks are parallel calls.
//! Invokes count only inside `<minimax:tool_call>` (a bare `<invoke>` in
//! prose is not a call); a block cut off at the end of the output is
//! `truncated`.

use super::prelude::*;
use super::qwen_xml::PARAM_END;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::{Syntax, Typing};

/// The usual spelling of the invoke engine, MiniMax-M2's: `<invoke `,
/// `<parameter ` (closed as Qwen3-Coder's, [`PARAM_END`]), `>` ends a tag,
/// `name` names the tool and the key, values typed by the schema, no
/// namespace. The invoke rows set their own tokens and take the rest from
/// here; declared formats take its defaults ([`crate::declared`]).
pub(crate) const XML: Syntax<'static> = Syntax {
    mode: "",
    invoke: "<invoke ",
    invoke_end: "</invoke>",
    param: "<parameter ",
    param_end: PARAM_END,
    block: None,
    tag_end: ">",
    name_attr: "name",
    invoke_attrs: &[],
    key_attr: "name",
    typing: Typing::Schema,
    attr_entities: false,
    json_body: false,
    xml_text: false,
    element_params: false,
    ns: None,
};

/// MiniMax-M2's call block.
const BLOCK: &str = "<minimax:tool_call>";
/// Closes [`BLOCK`].
const BLOCK_END: &str = "</minimax:tool_call>";

/// The `minimax_m2` extractor: the invoke engine with MiniMax-M2's tokens.
pub(crate) const MINIMAX_M2: Configured = Configured {
    example: "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Antwerp</parameter>\n</invoke>\n</minimax:tool_call>",
    describe: "MiniMax-M2: <minimax:tool_call><invoke name=\"f\"><parameter name=\"k\">v</parameter></invoke></minimax:tool_call>; values typed by the tool schema",
    config: Config::Invoke(Syntax {
        mode: "minimax_m2",
        block: Some((BLOCK, BLOCK_END)),
        json_body: false,
        xml_text: false,
        ..XML
    }),
};

/// The `minimax_m2` format.
pub(crate) const FORMAT: Def = Def {
    position: 130,
    extractor: || Box::new(MINIMAX_M2),
    group: Group::Tagged,
    models: &["minimax-m2"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "minimax_m2",
        families: "MiniMax-M2",
        engine: Engine::TaggedParameters,
        opener: cat!(BLOCK, XML.invoke, "name=\"NAME\">"),
        separator: Some(cat!(XML.param, "name=\"KEY\">")),
        closers: &[XML.param_end, XML.invoke_end, BLOCK_END],
        blocks: &[(BLOCK, BLOCK_END)],
        parameter: Some((cat!(XML.param, "name=\"KEY\">"), XML.param_end)),
        openers: Some(&[BLOCK, XML.invoke]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <invoke>; values typed by the tool schema",
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
        crate::families::tagged::testutil::typed(&MINIMAX_M2, out, pt)
    }

    #[test]
    fn pass_parallel_and_typed() {
        let pt = ParamTypes {
            tools: HashMap::from([(
                "get_weather".to_string(),
                HashMap::from([("days".to_string(), vec!["integer".to_string()])]),
            )]),
        };
        let out = "<minimax:tool_call><invoke name=\"get_weather\"><parameter name=\"city\">Seattle</parameter><parameter name=\"days\">5</parameter></invoke><invoke name=\"get_weather\"><parameter name=\"days\">soon</parameter></invoke></minimax:tool_call>";
        let c = run(out, Some(&pt));
        assert_eq!(c.len(), 2);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"city": "Seattle", "days": 5})
        );
        // Wrong type stays a string.
        assert_eq!(c[1].call().unwrap().arguments["days"], "soon");
        let c = run(out, None);
        assert_eq!(c[0].call().unwrap().arguments["days"], "5");
    }

    #[test]
    fn empty_invoke_truncation_and_malformed() {
        let out = "\n</think>\n\n<minimax:tool_call>\n<invoke name=\"empty_args\">\n</invoke>\n</minimax:tool_call>";
        let c = run(out, None);
        assert!(c[0].call().unwrap().arguments.is_empty());
        assert_eq!(c[0].source, Source::Output);
        let out = "<minimax:tool_call><invoke name=\"f\"><parameter name=\"city\">Sea";
        let f = run(out, None)[0].failure().unwrap().clone();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, out.len()));
        let out = "<minimax:tool_call><invoke name=\"f\"><parameter name=\"a\">1<parameter name=\"b\">2</parameter></invoke></minimax:tool_call>";
        assert_eq!(
            run(out, None)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
    }

    #[test]
    fn invokes_outside_the_block_and_reasoning() {
        assert!(run("I would write <invoke name=\"f\"></invoke> here.", None).is_empty());
        let out = "<think><minimax:tool_call><invoke name=\"f\"></invoke></minimax:tool_call></think>done";
        assert_eq!(run(out, None)[0].source, Source::OutputReasoning);
    }
}
