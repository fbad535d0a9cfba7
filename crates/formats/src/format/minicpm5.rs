//! `minicpm5`: MiniCPM5 XML function elements.
//!
//! # Wire format
//!
//! ```text
//! Intro.
//! <function name="get_weather"><param name="city">上海</param><param name="date">2024-06-27</param></function>
//! <function name="noop"></function>
//! ```
//!
//! gives `get_weather` with `{"city": "上海", "date": "2024-06-27"}` and
//! `noop` with `{}`. Values are XML text: `<![CDATA[…]]>` is taken
//! literally and entities (`&lt;`, `&amp;`, `&#x4E0A;` …) are decoded, while
//! a bare `&` stays as written; then they are typed by the tool schema like
//! `qwen_xml` (SPEC §9). A parameter without `name`, or given twice, is
//! `malformed`; a `<function>` cut off at the end of the output is
//! `truncated`.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::Syntax;
use super::minimax_m2::XML;
use super::qwen_xml::{FUNCTION_END, FUNCTION_TAG};

/// The `minicpm5` extractor: the invoke engine with MiniCPM5's tokens.
pub(crate) const MINICPM5: Configured = Configured {
    example: "<function name=\"get_weather\"><param name=\"city\">Antwerp</param></function>",
    describe: "MiniCPM5: <function name=\"f\"><param name=\"k\">v</param></function>; XML text (CDATA, entities), typed by the tool schema",
    config: Config::Invoke(Syntax {
        mode: "minicpm5",
        invoke: cat!(FUNCTION_TAG, " "),
        invoke_end: FUNCTION_END,
        param: "<param ",
        param_end: "</param>",
        block: None,
        json_body: false,
        xml_text: true,
        ..XML
    }),
};

/// The `minicpm5` format.
pub(crate) const FORMAT: Def = Def {
    position: 160,
    extractor: || Box::new(MINICPM5),
    group: Group::Tagged,
    models: &["minicpm5", "minicpm-5"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "minicpm5",
        families: "MiniCPM5",
        engine: Engine::TaggedParameters,
        opener: cat!(FUNCTION_TAG, " name=\"NAME\">"),
        separator: Some("<param name=\"KEY\">"),
        closers: &["</param>", FUNCTION_END],
        blocks: &[(cat!(FUNCTION_TAG, " name="), FUNCTION_END)],
        parameter: Some(("<param name=\"KEY\">", "</param>")),
        openers: Some(&[FUNCTION_TAG]),
        payload: PayloadKind::TaggedValues,
        conventions: "XML text (CDATA, entities); values typed by the tool schema",
        ..NO_EXTRAS
    },
};
