//! `step3`: Step-3 "steptml" invokes between fullwidth-bar tokens.
//!
//! # Wire format
//!
//! ```text
//! <｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Tokyo</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_sep｜><｜tool_call_begin｜><steptml:invoke name="get_time"></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>
//! ```
//!
//! gives `get_weather` with `{"city": "Tokyo"}` and `get_time` with `{}`.
//! The `steptml:` tags carry the call; the surrounding tokens are optional.
//! Values are typed by the tool schema like `qwen_xml` (SPEC §9).

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::Syntax;
use super::minimax_m2::XML;

/// The `step3` extractor: the invoke engine with Step-3's tokens.
pub(crate) const STEP3: Configured = Configured {
    example: "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"get_weather\"><steptml:parameter name=\"city\">Antwerp</steptml:parameter></steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
    describe: "Step-3 steptml: <steptml:invoke name=\"f\"><steptml:parameter name=\"k\">v</steptml:parameter></steptml:invoke>; values typed by the tool schema",
    config: Config::Invoke(Syntax {
        mode: "step3",
        invoke: "<steptml:invoke ",
        invoke_end: "</steptml:invoke>",
        param: "<steptml:parameter ",
        param_end: "</steptml:parameter>",
        block: None,
        json_body: false,
        xml_text: false,
        ..XML
    }),
};

/// The `step3` format.
pub(crate) const FORMAT: Def = Def {
    position: 150,
    extractor: || Box::new(STEP3),
    group: Group::Tagged,
    models: &["step3", "step-3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "step3",
        families: "Step-3",
        engine: Engine::TaggedParameters,
        opener: "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"NAME\">",
        separator: Some("<steptml:parameter name=\"KEY\">"),
        closers: &[
            "</steptml:parameter>",
            "</steptml:invoke>",
            "<｜tool_call_end｜>",
            "<｜tool_calls_end｜>",
        ],
        blocks: &[
            ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),
            ("<｜tool_call_begin｜>", "<｜tool_call_end｜>"),
        ],
        parameter: Some(("<steptml:parameter name=\"KEY\">", "</steptml:parameter>")),
        // The section tokens are held too: they are call markup, never
        // content to forward, though a candidate starts at `<steptml:`.
        openers: Some(&[
            "<steptml:",
            "<｜tool_calls_begin｜>",
            "<｜tool_call_begin｜>",
        ]),
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <steptml:invoke>; values typed by the tool schema",
        ..NO_EXTRAS
    },
};
