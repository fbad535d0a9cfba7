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
    json_body_tags: None,
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
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <invoke>; values typed by the tool schema",
        ..NO_EXTRAS
    },
};
