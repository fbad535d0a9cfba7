//! `apertus`: Swiss AI Apertus — `<|tools_prefix|>`, a JSON array of objects
//! whose single key is the tool name and whose value is the arguments,
//! `<|tools_suffix|>`.
//!
//! ```text
//! <|tools_prefix|>[{"get_weather": {"location": "London"}}, {"get_time": {"location": "London"}}]<|tools_suffix|>
//! ```
//!
//! An element with more than one member, or that is not an object, is
//! `malformed`; arguments go through the SPEC §9 rules (a JSON string holding
//! JSON is double-encoded). Without `<|tools_suffix|>` the array's own end
//! ends the block; an output that ends inside the array is `truncated` (the
//! name of its first call is still reported).

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `apertus` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "apertus",
        example: r#"<|tools_prefix|>[{"get_weather": {"location": "London"}}]<|tools_suffix|>"#,
        describe: "Apertus: <|tools_prefix|> + [{\"tool_name\": {arguments}}, …] + <|tools_suffix|>",
        blocks: vec![Block::pair("<|tools_prefix|>", "<|tools_suffix|>")],
        payload: Payload::NameKeyed,
    })
}

/// The `apertus` format.
pub(crate) const FORMAT: Def = Def {
    position: 350,
    extractor,
    group: Group::JsonLike,
    models: &["apertus"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "apertus",
        families: "Swiss AI Apertus",
        engine: Engine::JsonBlock,
        opener: "<|tools_prefix|>",
        closers: &["<|tools_suffix|>"],
        blocks: &[("<|tools_prefix|>", "<|tools_suffix|>")],
        openers: Some(&["<|tools_prefix|>"]),
        payload: PayloadKind::JsonArguments,
        conventions: "[{\"NAME\": {arguments}}, …]: the tool name is the key",
        ..NO_EXTRAS
    },
};
