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
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <invoke>; values typed by the tool schema; a JSON call object as the block body is not read",
        ..NO_EXTRAS
    },
};
