//! `minimax_m3`: MiniMax-M3 element invokes, namespaced or not.
//!
//! # Wire format
//!
//! ```text
//! ]<]minimax[>[<tool_call>
//! ]<]minimax[>[<invoke name="get_weather">
//! ]<]minimax[>[<city>Seattle]<]minimax[>[</city>
//! ]<]minimax[>[<days>5]<]minimax[>[</days>
//! ]<]minimax[>[</invoke>
//! ]<]minimax[>[</tool_call>
//! ```
//!
//! gives `get_weather` with `{"city": "Seattle", "days": 5}` when the schema
//! types `days` as an integer (else `"5"`). Derived from vLLM's reference
//! parser (`vllm-project/vllm`, `vllm/tool_parsers/`, `MinimaxM3ToolParser`,
//! its Python fallback: the M3 chat template prefixes every tag with the
//! literal namespace string `]<]minimax[>[`, which the parser removes before
//! reading `<invoke>` elements) and the M3 chat template's tool-call
//! rendering.
//!
//! Where it differs from MiniMax-M2 ([`crate::format::minimax_m2`]): the block is
//! `<tool_call>`, not `<minimax:tool_call>`, and each argument is an element
//! named by its key (`<city>…</city>`) instead of `<parameter name="city">`.
//!
//! - The namespace token may stand before any tag, or not at all: the same
//!   calls written without it (`<tool_call><invoke name="f"><city>…`, what a
//!   stack that strips it passes on) read the same.
//! - Values are raw text typed by the tool's schema like `qwen_xml` (SPEC
//!   §9). A value holding elements of its own is read as vLLM reads it
//!   where the schema types the argument as an object or an array: children
//!   all `<item>` are a list, other children an object keyed by their tags,
//!   a leaf its text with surrounding whitespace removed, kept a string
//!   (`elements`). Elsewhere, and where the nesting is broken (a closer that
//!   does not match, a child given twice, text beside children), it is
//!   `malformed`: never a call run with a value guessed from markup.
//! - Invokes count only inside `<tool_call>`; a block whose closer is
//!   missing runs to the end of the output, and an invoke cut off there is
//!   `truncated`.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::Syntax;
use super::hermes::{CLOSE, OPEN};
use super::minimax_m2::XML;
use super::xml_call::CITY_END;

/// The `minimax_m3` extractor: the invoke engine with element parameters and
/// MiniMax-M3's namespace token.
pub(crate) const MINIMAX_M3: Configured = Configured {
    example: "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<city>Antwerp]<]minimax[>[</city>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
    describe: "MiniMax-M3: ]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"f\">]<]minimax[>[<k>v]<]minimax[>[</k>]<]minimax[>[</invoke>]<]minimax[>[</tool_call> (the namespace token optional); values typed by the tool schema",
    config: Config::Invoke(Syntax {
        mode: "minimax_m3",
        param: "<",
        param_end: "</",
        block: Some((OPEN, CLOSE)),
        element_params: true,
        ns: Some(NS),
        ..XML
    }),
};

/// The namespace token of MiniMax-M3's tags.
const NS: &str = "]<]minimax[>[";

/// The `minimax_m3` format.
pub(crate) const FORMAT: Def = Def {
    position: 210,
    extractor: || Box::new(MINIMAX_M3),
    group: Group::Tagged,
    models: &["minimax-m3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "minimax_m3",
        families: "MiniMax-M3",
        engine: Engine::TaggedParameters,
        opener: cat!(NS, OPEN, NS, XML.invoke, "name=\"NAME\">"),
        separator: Some(cat!(NS, "<KEY>")),
        closers: &[
            cat!(NS, CITY_END),
            cat!(NS, XML.invoke_end),
            cat!(NS, CLOSE),
        ],
        blocks: &[(OPEN, CLOSE)],
        parameter: Some((cat!(NS, "<KEY>"), cat!(NS, "</KEY>"))),
        openers: Some(&[NS, OPEN, XML.invoke]),
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <invoke>; one <KEY>v</KEY> element per argument; the ]<]minimax[>[ token before a tag is optional; values typed by the tool schema; nested elements are not read (malformed)",
        ..NO_EXTRAS
    },
};
