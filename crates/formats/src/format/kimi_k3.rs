//! `kimi_k3`: Kimi K3 XTML calls.
//!
//! # Wire format
//!
//! ```text
//! <|open|>tools<|sep|>
//! <|open|>call tool="get_weather" index="1"<|sep|>
//! <|open|>argument key="city" type="string"<|sep|>Beijing<|close|>argument<|sep|>
//! <|open|>argument key="days" type="number"<|sep|>3<|close|>argument<|sep|>
//! <|close|>call<|sep|>
//! <|close|>tools<|sep|>
//! ```
//!
//! gives `get_weather` with `{"city": "Beijing", "days": 3}`. Derived from
//! vLLM's reference parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/kimi_k3_tool_parser.py`) and the XTML the Kimi-K3
//! chat template renders for assistant tool calls (`<|open|>call tool=…
//! index=…<|sep|>`, one `<|open|>argument key=… type=…<|sep|>` per argument).
//!
//! Where it differs from Kimi K2 ([`crate::format::kimi`]): K2 writes a call id
//! `functions.NAME:INDEX` and one JSON arguments object between special
//! tokens; K3 writes XML-like elements whose brackets are the special tokens
//! `<|open|>`, `<|close|>` and `<|sep|>`, the tool in a `tool` attribute,
//! the 1-based `index` attribute optional, and each argument its own element
//! with a `key` and a `type`.
//!
//! - `type="string"`: the text is the string, verbatim; any other type
//!   (`number`, `boolean`, `object`, …): the text is read as JSON, and text
//!   that is not JSON stays a string (the validator labels it); no `type`:
//!   typed by the tool's schema like `qwen_xml`. One leading and one
//!   trailing newline are removed.
//! - A call's arguments may instead be one JSON object in a JSON block,
//!   `<|open|>json type="object"<|sep|>{"city": "Beijing"}<|close|>json<|sep|>`
//!   (the template renders arguments given as a JSON string so; xgrammar's
//!   `kimi_k3` structural tag allows it): the object is the arguments, only
//!   blank text may follow the block, and text that is not one JSON object
//!   is `malformed`.
//! - Attribute values are XML-escaped (`&quot;`, `&amp;`), as vLLM decodes
//!   them.
//! - Calls count only inside `<|open|>tools<|sep|>`; a section whose closer
//!   is missing runs to the end of the output. An attribute other than
//!   `tool` and `index` on a call, or other than `key` and `type` on an
//!   argument, is `malformed` (never an argument dropped).
//! - K3's reasoning is its `think` channel, which serving stacks split into
//!   the reasoning field (vLLM's `kimi_k3` reasoning parser), or leave in the
//!   output as `<|open|>think<|sep|>` … `<|close|>think<|sep|>`, a reasoning
//!   span ([`crate::reasoning`]); a call in either is reasoning like any
//!   other.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::{Syntax, Typing};
use super::minimax_m2::XML;

/// The `kimi_k3` extractor: the invoke engine with Kimi K3's XTML tokens.
pub(crate) const KIMI_K3: Configured = Configured {
    example: "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|><|open|>argument key=\"city\" type=\"string\"<|sep|>Antwerp<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    describe: "Kimi K3 XTML: <|open|>tools<|sep|><|open|>call tool=\"f\" index=\"1\"<|sep|><|open|>argument key=\"k\" type=\"string\"<|sep|>v<|close|>argument<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
    config: Config::Invoke(Syntax {
        mode: "kimi_k3",
        invoke: "<|open|>call ",
        invoke_end: "<|close|>call<|sep|>",
        param: "<|open|>argument ",
        param_end: "<|close|>argument<|sep|>",
        block: Some(("<|open|>tools<|sep|>", "<|close|>tools<|sep|>")),
        tag_end: "<|sep|>",
        name_attr: "tool",
        invoke_attrs: &["index"],
        key_attr: "key",
        typing: Typing::TypeAttr,
        attr_entities: true,
        json_body_tags: Some(("<|open|>json type=\"object\"<|sep|>", "<|close|>json<|sep|>")),
        ..XML
    }),
};

/// The `kimi_k3` format.
pub(crate) const FORMAT: Def = Def {
    position: 200,
    extractor: || Box::new(KIMI_K3),
    group: Group::Tagged,
    models: &["kimi-k3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "kimi_k3",
        families: "Kimi K3",
        engine: Engine::TaggedParameters,
        opener: "<|open|>tools<|sep|><|open|>call tool=\"NAME\" index=\"N\"<|sep|>",
        separator: Some("<|open|>argument key=\"KEY\" type=\"TYPE\"<|sep|>"),
        closers: &[
            "<|close|>argument<|sep|>",
            "<|close|>call<|sep|>",
            "<|close|>tools<|sep|>",
        ],
        blocks: &[("<|open|>tools<|sep|>", "<|close|>tools<|sep|>")],
        parameter: Some((
            "<|open|>argument key=\"KEY\" type=\"string\"<|sep|>",
            "<|close|>argument<|sep|>",
        )),
        openers: Some(&["<|open|>tools<|sep|>", "<|open|>call "]),
        payload: PayloadKind::TaggedValues,
        conventions: "tool attribute names the tool, index optional; type=\"string\" values verbatim, other types JSON, no type: typed by the tool schema",
        ..NO_EXTRAS
    },
};
