//! `internlm`: InternLM2 action tokens — `<|action_start|><|plugin|>`, one
//! JSON call object (arguments under `parameters`), `<|action_end|>`.
//!
//! ```text
//! <|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>
//! ```
//!
//! Only the `<|plugin|>` action is a tool call (`<|interpreter|>` runs code
//! and is not). Without `<|action_end|>` (servers strip stop tokens) the
//! object's own end ends the call; an output that ends inside it is
//! `truncated`.

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `internlm` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "internlm",
        example: r#"<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>"#,
        describe: "InternLM2: <|action_start|><|plugin|> + a JSON call object + <|action_end|>",
        blocks: vec![Block::pair("<|action_start|><|plugin|>", "<|action_end|>")],
        payload: Payload::Calls { sep: None },
    })
}

/// The `internlm` format.
pub(crate) const FORMAT: Def = Def {
    position: 300,
    extractor,
    group: Group::JsonLike,
    models: &["internlm2", "internlm3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "internlm",
        families: "InternLM2 / 2.5",
        engine: Engine::JsonBlock,
        opener: "<|action_start|><|plugin|>",
        closers: &["<|action_end|>"],
        blocks: &[("<|action_start|>", "<|action_end|>")],
        openers: Some(&["<|action_start|>"]),
        stop_token: Some(StopToken {
            token: "<|action_end|>",
            stripped_by: "lmdeploy: a stop word of the InternLM2 chat template",
        }),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
