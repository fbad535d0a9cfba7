//! `functools`: Phi-4-mini and FireFunction v2 — the word `functools`
//! followed by a JSON array of call objects.
//!
//! ```text
//! functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]
//! ```
//!
//! FireFunction v2 writes a space before it (` functools[…]`); text after the
//! list is content. An output that ends inside the list is `truncated`.

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `functools` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "functools",
        example: r#"functools[{"name": "get_weather", "arguments": {"city": "Tokyo"}}]"#,
        describe: "Phi-4-mini / FireFunction v2: functools + a JSON array of call objects",
        blocks: vec![Block::open("functools")],
        payload: Payload::Calls { sep: None },
    })
}

/// The `functools` format.
pub(crate) const FORMAT: Def = Def {
    position: 290,
    extractor,
    group: Group::JsonLike,
    models: &["phi-4-mini", "firefunction"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "functools",
        families: "Phi-4-mini, FireFunction v2",
        engine: Engine::JsonBlock,
        opener: "functools",
        closers: &[],
        blocks: &[],
        openers: Some(&["functools"]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
