//! `nemotron`: NVIDIA Nemotron Nano v2 — `<TOOLCALL>` around a JSON array of
//! call objects.
//!
//! ```text
//! <TOOLCALL>[{"name": "special_function", "arguments": {"arg1": 1}}]</TOOLCALL>
//! ```

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `nemotron` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "nemotron",
        example: r#"<TOOLCALL>[{"name": "special_function", "arguments": {"arg1": 1}}]</TOOLCALL>"#,
        describe: "Nemotron Nano v2: <TOOLCALL> + a JSON array of call objects + </TOOLCALL>",
        blocks: vec![Block::pair("<TOOLCALL>", "</TOOLCALL>")],
        payload: Payload::Calls { sep: None },
    })
}

/// The `nemotron` format.
pub(crate) const FORMAT: Def = Def {
    position: 320,
    extractor,
    group: Group::JsonLike,
    models: &["nemotron-nano-9b-v2", "nemotron-nano-12b-v2"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "nemotron",
        families: "Nemotron Nano v2",
        engine: Engine::JsonBlock,
        opener: "<TOOLCALL>",
        closers: &["</TOOLCALL>"],
        blocks: &[("<TOOLCALL>", "</TOOLCALL>")],
        openers: Some(&["<TOOLCALL>"]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
