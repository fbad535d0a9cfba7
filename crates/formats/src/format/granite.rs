//! `granite`: IBM Granite 3.x — `<|tool_call|>` followed by a JSON array of
//! call objects (no closing token; the stop token ends the turn).
//!
//! ```text
//! <|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
//! ```
//!
//! vLLM's `granite` parser also accepts `<tool_call>` as the opener (Granite
//! 3.1 writes it that way in some templates), so both are openers here. A
//! single object instead of the array is read as one call. Text after the
//! list is ordinary content; an output that ends inside the list is
//! `truncated`.

use super::hermes::OPEN;
use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// Granite's call token; vLLM's parser also accepts Hermes's `<tool_call>`.
const TOKEN: &str = "<|tool_call|>";

/// The `granite` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "granite",
        example: r#"<|tool_call|> [{"name": "get_weather", "arguments": {"city": "Tokyo"}}]"#,
        describe: "Granite 3.x: <|tool_call|> + a JSON array of {\"name\", \"arguments\"} objects",
        blocks: vec![Block::open(TOKEN), Block::open(OPEN)],
        payload: Payload::Calls { sep: None },
    })
}

/// The `granite` format.
pub(crate) const FORMAT: Def = Def {
    position: 270,
    extractor,
    group: Group::JsonLike,
    models: &["granite-3", "granite-4", "granite3", "granite4"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "granite",
        families: "Granite 3.x",
        engine: Engine::JsonBlock,
        opener: TOKEN,
        closers: &[],
        blocks: &[],
        openers: Some(&[TOKEN, OPEN]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
