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
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <atem:invoke> (may be namespaced); strings as is, lists and objects as JSON, typed by the tool schema",
        ..NO_EXTRAS
    },
};
