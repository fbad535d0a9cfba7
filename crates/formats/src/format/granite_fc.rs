//! `granite_fc`: Granite-20B-FunctionCalling — `<function_call>` followed by
//! one JSON call object; parallel calls repeat the marker.
//!
//! ```text
//! <function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}
//! <function_call> {"name": "get_time", "arguments": {"timezone": "Asia/Tokyo"}}
//! ```
//!
//! There is no closing token: the object's own end ends the call, and text
//! after it is content. An output that ends inside the object is `truncated`.

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `granite_fc` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "granite_fc",
        example: r#"<function_call> {"name": "get_weather", "arguments": {"city": "Tokyo"}}"#,
        describe: "Granite-20B-FC: <function_call> + one JSON call object, repeated for parallel calls",
        blocks: vec![Block::open("<function_call>")],
        payload: Payload::Calls { sep: None },
    })
}

/// The `granite_fc` format.
pub(crate) const FORMAT: Def = Def {
    position: 280,
    extractor,
    group: Group::JsonLike,
    models: &["granite-20b-functioncalling"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "granite_fc",
        families: "Granite-20B-FC",
        engine: Engine::JsonBlock,
        opener: "<function_call>",
        closers: &[],
        blocks: &[],
        openers: Some(&["<function_call>"]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
