//! `deepseek_v41`: DeepSeek V4.1 DSML calls, whose tag names start with a
//! space after the `｜DSML｜` marker (the `｜` is U+FF5C).
//!
//! # Wire format
//!
//! ```text
//! <｜DSML｜ calls>
//! <｜DSML｜ invoke name="search">
//! <｜DSML｜ parameter name="query" string="true">WebNav benchmark</｜DSML｜ parameter>
//! <｜DSML｜ parameter name="topn" string="false">10</｜DSML｜ parameter>
//! </｜DSML｜ invoke>
//! </｜DSML｜ calls>
//! ```
//!
//! gives `search` with `{"query": "WebNav benchmark", "topn": 10}`. Derived
//! from SGLang's reference detector (`sgl-project/sglang`,
//! `python/sglang/srt/function_call/deepseekv41_detector.py`: V3.2's DSML
//! grammar with the block, invoke and parameter tag names ` calls`,
//! ` invoke`, ` parameter`, the leading space intended) and SMG's
//! `tool_parser` V4.1 dialect (`smg-project/smg`,
//! `crates/tool_parser/tests/tool_parser_deepseek_v41.rs`).
//!
//! Where it differs from V3.2 / V4 ([`crate::format::deepseek_dsml`]): only
//! the spelling of the tags. Each dialect reads only its own: V4's
//! `<｜DSML｜invoke` is not a V4.1 call and V4.1's `<｜DSML｜ invoke` is not a
//! V4 one, as in SMG, so a V4.1 model needs this mode (`deepseek-v4.1` in
//! its name picks it before `deepseek-v4`).
//!
//! - Values are typed exactly like `deepseek_dsml`: `string="true"` text,
//!   `string="false"` JSON (text that is not JSON stays a string), no
//!   attribute: the tool's schema; an invoke body may be a JSON object;
//!   `<｜DSML｜ invoke name="f"/>` has no arguments.
//! - An invoke counts without its block too (SMG reads an orphan invoke as
//!   a call), as in `deepseek_dsml`.

use super::minimax_m2::XML;
use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::{Syntax, Typing};

/// What opens every V4.1 tag: the DSML marker and the space.
const MARK: &str = "<｜DSML｜ ";
/// Every V4.1 closing tag's start.
const MARK_END: &str = "</｜DSML｜ ";
/// The call block.
const CALLS: &str = cat!(MARK, "calls>");
/// Closes [`CALLS`].
const CALLS_END: &str = cat!(MARK_END, "calls>");
/// The invoke opener, up to its attributes.
const INVOKE: &str = cat!(MARK, "invoke ");
/// Closes an invoke.
const INVOKE_END: &str = cat!(MARK_END, "invoke>");
/// The parameter opener, up to its attributes.
const PARAM: &str = cat!(MARK, "parameter ");
/// Closes a parameter.
const PARAM_END: &str = cat!(MARK_END, "parameter>");

/// The `deepseek_v41` extractor: the invoke engine with V4.1's spaced DSML
/// tags.
pub(crate) const DEEPSEEK_V41: Configured = Configured {
    example: "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"city\" string=\"true\">Antwerp</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
    describe: "DeepSeek V4.1 DSML (spaced tag names): <｜DSML｜ invoke name=\"f\"><｜DSML｜ parameter name=\"k\" string=\"true|false\">v</｜DSML｜ parameter></｜DSML｜ invoke>",
    config: Config::Invoke(Syntax {
        mode: "deepseek_v41",
        invoke: INVOKE,
        invoke_end: INVOKE_END,
        param: PARAM,
        param_end: PARAM_END,
        block: None,
        typing: Typing::StringAttr,
        json_body: true,
        xml_text: false,
        ..XML
    }),
};

/// The `deepseek_v41` format.
pub(crate) const FORMAT: Def = Def {
    position: 125,
    extractor: || Box::new(DEEPSEEK_V41),
    group: Group::Tagged,
    models: &["deepseek-v4.1", "deepseek-v41", "deepseek_v41"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "deepseek_v41",
        families: "DeepSeek V4.1",
        engine: Engine::TaggedParameters,
        opener: cat!(CALLS, INVOKE, "name=\"NAME\">"),
        separator: Some(cat!(PARAM, "name=\"KEY\" string=\"true|false\">")),
        closers: &[PARAM_END, INVOKE_END, CALLS_END],
        blocks: &[(CALLS, CALLS_END)],
        parameter: Some((cat!(PARAM, "name=\"KEY\" string=\"true\">"), PARAM_END)),
        openers: Some(&[MARK]),
        payload: PayloadKind::TaggedValues,
        conventions: "tag names start with a space after ｜DSML｜ (V4's unspaced tags are not V4.1's); string=\"false\" values are JSON",
        ..NO_EXTRAS
    },
};
