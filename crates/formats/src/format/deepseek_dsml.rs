//! `deepseek_dsml`: DeepSeek V3.2 / V4 DSML calls (the `｜` is U+FF5C).
//!
//! # Wire format
//!
//! ```text
//! <｜DSML｜function_calls>
//! <｜DSML｜invoke name="search">
//! <｜DSML｜parameter name="query" string="true">WebNav benchmark</｜DSML｜parameter>
//! <｜DSML｜parameter name="topn" string="false">10</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! <｜DSML｜invoke name="submit"/>
//! </｜DSML｜function_calls>
//! ```
//!
//! gives `search` with `{"query": "WebNav benchmark", "topn": 10}` and
//! `submit` with `{}`. V4 writes `<｜DSML｜tool_calls>` for the block; the
//! block tags are not needed to find an invoke (the `<｜DSML｜` prefix is
//! unique).
//!
//! - `string="true"`: the text is a string, whatever the schema says;
//!   `string="false"`: the text is read as JSON (the lenient variant applies
//!   the JSON repairs), and text that is not JSON stays a string (the
//!   validator labels it); no attribute: typed by the schema like
//!   `qwen_xml`. One leading and one trailing newline are removed.
//! - An invoke body may be a JSON object instead of parameters
//!   (`<｜DSML｜invoke name="f">{"city": "SF"}</｜DSML｜invoke>`).
//! - A parameter named `arguments` stays a parameter called `arguments`:
//!   nothing is unwrapped or guessed.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::{Syntax, Typing};
use super::minimax_m2::XML;

/// The `deepseek_dsml` extractor: the invoke engine with DeepSeek DSML's tokens.
pub(crate) const DEEPSEEK_DSML: Configured = Configured {
    example: "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Antwerp</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
    describe: "DeepSeek V3.2/V4 DSML: <｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"k\" string=\"true|false\">v</｜DSML｜parameter></｜DSML｜invoke>",
    config: Config::Invoke(Syntax {
        mode: "deepseek_dsml",
        invoke: "<｜DSML｜invoke ",
        invoke_end: "</｜DSML｜invoke>",
        param: "<｜DSML｜parameter ",
        param_end: "</｜DSML｜parameter>",
        block: None,
        typing: Typing::StringAttr,
        json_body: true,
        xml_text: false,
        ..XML
    }),
};

/// The `deepseek_dsml` format.
pub(crate) const FORMAT: Def = Def {
    position: 120,
    extractor: || Box::new(DEEPSEEK_DSML),
    group: Group::Tagged,
    models: &["deepseek-v3.2", "deepseek-v4"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "deepseek_dsml",
        families: "DeepSeek V3.2 / V4",
        engine: Engine::TaggedParameters,
        opener: "<｜DSML｜function_calls><｜DSML｜invoke name=\"NAME\">",
        separator: Some("<｜DSML｜parameter name=\"KEY\" string=\"true|false\">"),
        closers: &[
            "</｜DSML｜parameter>",
            "</｜DSML｜invoke>",
            "</｜DSML｜function_calls>",
        ],
        blocks: &[("<｜DSML｜function_calls>", "</｜DSML｜function_calls>")],
        parameter: Some((
            "<｜DSML｜parameter name=\"KEY\" string=\"true\">",
            "</｜DSML｜parameter>",
        )),
        openers: Some(&["<｜DSML｜"]),
        payload: PayloadKind::TaggedValues,
        conventions: "string=\"false\" values are JSON",
        ..NO_EXTRAS
    },
};
