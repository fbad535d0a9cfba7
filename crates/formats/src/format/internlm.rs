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
//!
//! vLLM decodes with `spaces_between_special_tokens` on by default, so a
//! served output reads `<|action_start|> <|plugin|>` (one space between the
//! two tokens); that spelling opens a call too (Intern-S1, whose vLLM
//! parser `intern_s1_tool_parser.py` reads both). Any other text between
//! the two tokens is not this opener.

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The action opener, the plugin (tool) action and the action closer.
const START: &str = "<|action_start|>";
const PLUGIN: &str = "<|plugin|>";
const END: &str = "<|action_end|>";
/// The call opener as the model writes it, and as vLLM's detokenizer
/// shows it (a space between the two special tokens).
const OPEN: &str = cat!(START, PLUGIN);
const OPEN_SPACED: &str = cat!(START, " ", PLUGIN);

/// The `internlm` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "internlm",
        example: r#"<|action_start|><|plugin|>{"name": "get_weather", "parameters": {"city": "Tokyo"}}<|action_end|>"#,
        describe: "InternLM2: <|action_start|><|plugin|> + a JSON call object + <|action_end|>",
        blocks: vec![Block::pair(OPEN, END), Block::pair(OPEN_SPACED, END)],
        payload: Payload::Calls { sep: None },
    })
}

/// The `internlm` format.
pub(crate) const FORMAT: Def = Def {
    position: 300,
    extractor,
    group: Group::JsonLike,
    models: &["internlm2", "internlm3", "intern-s1"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "internlm",
        families: "InternLM2 / 2.5, Intern-S1",
        engine: Engine::JsonBlock,
        opener: OPEN,
        closers: &[END],
        blocks: &[(START, END)],
        openers: Some(&[START]),
        stop_token: Some(StopToken {
            token: END,
            stripped_by: "lmdeploy: a stop word of the InternLM2 chat template",
        }),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
