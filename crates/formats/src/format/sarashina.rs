//! `sarashina`: SB Intuitions Sarashina — a Python-literal list of call
//! dicts, after a `<|tool_calls|>` marker or, since servers strip that
//! special token when they detokenize, standing alone at the start of the
//! output (reasoning aside).
//!
//! ```text
//! <|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]
//! [{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}, {'name': 'get_time', 'arguments': {}}]
//! ```
//!
//! Follows the only public description found: the Sarashina parser of SMG
//! (`smg-project/smg`, pull request 1937, `crates/tool_parser/src/parsers/sarashina.rs`):
//! single-quoted Python dicts with `name` and `arguments` keys in a list,
//! the marker optional. Sarashina's own chat template was not found in the
//! sources read (CONFORMANCE.md says so); a closer, if the template has
//! one, is not known, so the literal's own end ends the call.
//!
//! Decisions, by the `marked` engine with the pythonic engine's literal
//! reader ([`crate::irregular::bracket`]): Python spellings (`'x'`, `True`,
//! `None`) are valid strictly, as in `bracket`; each dict is a SPEC §9 call
//! object (unknown keys refused, a dict without a name key is not a call);
//! an element that is not a dict is `malformed`; an output that ends inside
//! the list is `truncated`. Without the marker, only a `[` followed by `{`
//! at the start of the output or of a reasoning span opens a call: a list
//! after prose is text.

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `sarashina` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "sarashina",
        example: "<|tool_calls|>[{'name': 'get_weather', 'arguments': {'city': 'Tokyo'}}]",
        describe: "Sarashina: <|tool_calls|> (often stripped) + a Python-literal list of {'name', 'arguments'} dicts",
        blocks: vec![Block::open("<|tool_calls|>"), Block::bare()],
        payload: Payload::PythonCalls,
    })
}

/// The `sarashina` format.
pub(crate) const FORMAT: Def = Def {
    position: 430,
    extractor,
    group: Group::JsonLike,
    models: &["sarashina"],
    bare_reader: true,
    profile: None,
    row: Format {
        name: "sarashina",
        families: "SB Intuitions Sarashina",
        engine: Engine::JsonBlock,
        opener: "<|tool_calls|> (often stripped: then [ at the start of the output)",
        closers: &[],
        blocks: &[],
        openers: Some(&["<|tool_calls|>", "["]),
        payload: PayloadKind::PythonLiterals,
        conventions: "[{'name': NAME, 'arguments': {…}}, …] as Python literals (SPEC §9 keys); without the marker only a [ followed by { at the start of the output or of a reasoning span",
        ..NO_EXTRAS
    },
};
