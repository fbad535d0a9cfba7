//! `gigachat35`: GigaChat 3.5's GCML calls, DeepSeek's DSML grammar under
//! the `｜GCML｜` marker (the `｜` is U+FF5C).
//!
//! # Wire format
//!
//! ```text
//! <｜GCML｜tool_calls>
//! <｜GCML｜invoke name="get_weather">
//! <｜GCML｜parameter name="city" string="true">Москва</｜GCML｜parameter>
//! <｜GCML｜parameter name="days" string="false">3</｜GCML｜parameter>
//! </｜GCML｜invoke>
//! </｜GCML｜tool_calls>
//! ```
//!
//! gives `get_weather` with `{"city": "Москва", "days": 3}`. Derived from
//! SGLang's reference detector (`sgl-project/sglang`,
//! `python/sglang/srt/function_call/gigachat35_detector.py`: invokes are
//! read only after `<｜GCML｜tool_calls>`, each parameter's `string`
//! attribute says text or JSON) and the GigaChat 3.5 chat template
//! (`models/templates/GigaChat3.5.jinja` in llama.cpp).
//!
//! Where it differs from GigaChat 3 ([`crate::format::gigachat`]): no JSON
//! call object at all; the `gigachat` fragment of a model name stays
//! GigaChat 3's, `gigachat3.5` picks this mode.
//!
//! - Values are typed like `deepseek_dsml`: `string="true"` text,
//!   `string="false"` JSON (text that is not JSON stays a string), no
//!   attribute: the tool's schema. No JSON invoke body.
//! - Invokes count only inside `<｜GCML｜tool_calls>` (SGLang reads none
//!   before it); a block whose closer is missing runs to the end of the
//!   output, where an open invoke is `truncated`.

use super::minimax_m2::XML;
use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::{Syntax, Typing};

/// The call block.
const CALLS: &str = "<｜GCML｜tool_calls>";
/// Closes [`CALLS`].
const CALLS_END: &str = "</｜GCML｜tool_calls>";
/// The invoke opener, up to its attributes.
const INVOKE: &str = "<｜GCML｜invoke ";
/// Closes an invoke.
const INVOKE_END: &str = "</｜GCML｜invoke>";
/// The parameter opener, up to its attributes.
const PARAM: &str = "<｜GCML｜parameter ";
/// Closes a parameter.
const PARAM_END: &str = "</｜GCML｜parameter>";

/// The `gigachat35` extractor: the invoke engine with GCML's tokens.
pub(crate) const GIGACHAT35: Configured = Configured {
    example: "<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n<｜GCML｜parameter name=\"city\" string=\"true\">Antwerp</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
    describe: "GigaChat 3.5 GCML: <｜GCML｜tool_calls><｜GCML｜invoke name=\"f\"><｜GCML｜parameter name=\"k\" string=\"true|false\">v</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>",
    config: Config::Invoke(Syntax {
        mode: "gigachat35",
        invoke: INVOKE,
        invoke_end: INVOKE_END,
        param: PARAM,
        param_end: PARAM_END,
        block: Some((CALLS, CALLS_END)),
        typing: Typing::StringAttr,
        json_body: false,
        xml_text: false,
        ..XML
    }),
};

/// The `gigachat35` format.
pub(crate) const FORMAT: Def = Def {
    position: 345,
    extractor: || Box::new(GIGACHAT35),
    group: Group::Tagged,
    models: &["gigachat3.5", "gigachat-3.5"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "gigachat35",
        families: "GigaChat 3.5",
        engine: Engine::TaggedParameters,
        opener: cat!(CALLS, INVOKE, "name=\"NAME\">"),
        separator: Some(cat!(PARAM, "name=\"KEY\" string=\"true|false\">")),
        closers: &[PARAM_END, INVOKE_END, CALLS_END],
        blocks: &[(CALLS, CALLS_END)],
        parameter: Some((cat!(PARAM, "name=\"KEY\" string=\"true\">"), PARAM_END)),
        openers: Some(&[CALLS, INVOKE]),
        payload: PayloadKind::TaggedValues,
        conventions: "string=\"false\" values are JSON; invokes only inside <｜GCML｜tool_calls>",
        ..NO_EXTRAS
    },
};
