//! `longcat`: Meituan LongCat — the Hermes shape under its own tag name.
//!
//! ```text
//! <longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>
//! ```
//!
//! One call object per tag; several tags are parallel calls.

use super::prelude::*;

/// LongCat's call tags (its XML-argument calls use them too: `longcat_xml`).
pub(crate) const OPEN: &str = "<longcat_tool_call>";
/// Closes [`OPEN`].
pub(crate) const CLOSE: &str = "</longcat_tool_call>";
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `longcat` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "longcat",
        example: r#"<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Tokyo"}}</longcat_tool_call>"#,
        describe: "LongCat: <longcat_tool_call> + a JSON call object + </longcat_tool_call>",
        blocks: vec![Block::pair(OPEN, CLOSE)],
        payload: Payload::Calls { sep: None },
    })
}

/// The `longcat` format.
pub(crate) const FORMAT: Def = Def {
    position: 330,
    extractor,
    group: Group::JsonLike,
    models: &["longcat"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "longcat",
        families: "Meituan LongCat",
        engine: Engine::JsonBlock,
        opener: OPEN,
        closers: &[CLOSE],
        blocks: &[(OPEN, CLOSE)],
        openers: Some(&[OPEN]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
