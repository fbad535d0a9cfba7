//! `deepseek_dsml_plain`: DeepSeek V3.2 DSML calls written without the
//! `｜DSML｜` marker.
//!
//! # Wire format
//!
//! ```text
//! <function_calls>
//! <invoke name="search">
//! <parameter name="query" string="true">WebNav benchmark</parameter>
//! <parameter name="topn" string="false">10</parameter>
//! </invoke>
//! </function_calls>
//! ```
//!
//! gives `search` with `{"query": "WebNav benchmark", "topn": 10}`. This is
//! [`crate::format::deepseek_dsml`] with the `｜DSML｜` token missing from every tag:
//! what reaches a client when the model drops it, or when a stack decodes
//! with the special token skipped (vLLM issue #30541, "missing dsml token").
//! Derived from SGLang's reference detector (`sgl-project/sglang`,
//! `python/sglang/srt/function_call/deepseekv32_detector.py`, its
//! "simplified format tokens (without DSML)") and the DeepSeek-V3.2
//! encoding's DSML rendering.
//!
//! - Values are typed exactly like `deepseek_dsml`: `string="true"` text,
//!   `string="false"` JSON, no attribute: the tool's schema; an invoke body
//!   may be a JSON object; `<invoke name="f"/>` has no arguments.
//! - Invokes count only inside `<function_calls>` (a bare `<invoke>` in
//!   prose is not a call, and MiniMax-M2's `<minimax:tool_call>` block is
//!   another format's); a block whose closer is missing runs to the end of
//!   the output, where an open invoke is `truncated`.

use super::prelude::*;
use super::olmo::{CLOSE, OPEN};
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::{Syntax, Typing};
use super::minimax_m2::XML;

/// The `deepseek_dsml_plain` extractor: the invoke engine with DSML's
/// grammar and plain tag names.
pub(crate) const DEEPSEEK_DSML_PLAIN: Configured = Configured {
    example: "<function_calls>\n<invoke name=\"get_weather\">\n<parameter name=\"city\" string=\"true\">Antwerp</parameter>\n</invoke>\n</function_calls>",
    describe: "DeepSeek V3.2 DSML without the ｜DSML｜ marker: <function_calls><invoke name=\"f\"><parameter name=\"k\" string=\"true|false\">v</parameter></invoke></function_calls>",
    config: Config::Invoke(Syntax {
        mode: "deepseek_dsml_plain",
        block: Some((OPEN, CLOSE)),
        typing: Typing::StringAttr,
        json_body: true,
        ..XML
    }),
};

/// The `deepseek_dsml_plain` format.
pub(crate) const FORMAT: Def = Def {
    position: 220,
    extractor: || Box::new(DEEPSEEK_DSML_PLAIN),
    group: Group::Tagged,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "deepseek_dsml_plain",
        families: "DeepSeek V3.2 (DSML without the ｜DSML｜ marker)",
        engine: Engine::TaggedParameters,
        opener: cat!(OPEN, XML.invoke, "name=\"NAME\">"),
        separator: Some("<parameter name=\"KEY\" string=\"true|false\">"),
        closers: &[XML.param_end, XML.invoke_end, CLOSE],
        blocks: &[(OPEN, CLOSE)],
        parameter: Some(("<parameter name=\"KEY\" string=\"true\">", XML.param_end)),
        openers: Some(&[OPEN, XML.invoke]),
        payload: PayloadKind::TaggedValues,
        conventions: "string=\"false\" values are JSON; invokes only inside <function_calls>",
        ..NO_EXTRAS
    },
};
