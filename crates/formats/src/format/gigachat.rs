//! `gigachat`: GigaChat 3 — a role-separated function-call message, or (3.1)
//! the `<|function_call|>` token, followed by one JSON call object.
//!
//! ```text
//! I'll check that for you.<|message_sep|>
//!
//! function call<|role_sep|>
//! {"name": "manage_user_memory", "arguments": {"action": "create", "id": "preferences"}}
//!
//! <|function_call|>{"name": "manage_user_memory", "arguments": {}}
//! ```
//!
//! The object's own end ends the call (a trailing `</s>` is content). An
//! output that ends inside it is `truncated`.

use super::prelude::*;
use crate::Extractor;
use crate::families::jsonlike::marked::{Block, Marked, Payload};

/// The `gigachat` extractor.
pub fn extractor() -> Box<dyn Extractor> {
    Box::new(Marked {
        name: "gigachat",
        example: "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"manage_user_memory\", \"arguments\": {\"action\": \"create\"}}",
        describe: "GigaChat 3: `function call<|role_sep|>` (3.1: <|function_call|>) + a JSON call object",
        blocks: vec![
            Block::open("function call<|role_sep|>"),
            Block::open("<|function_call|>"),
        ],
        payload: Payload::Calls { sep: None },
    })
}

/// The `gigachat` format.
pub(crate) const FORMAT: Def = Def {
    position: 340,
    extractor,
    group: Group::JsonLike,
    models: &["gigachat"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "gigachat",
        families: "GigaChat 3 / 3.1",
        engine: Engine::JsonBlock,
        opener: "function call<|role_sep|> / <|function_call|>",
        closers: &[],
        blocks: &[],
        // `<|message_sep|>` opens the function-call message: held as markup.
        openers: Some(&["<|function_call|>", "function call", "<|message_sep|>"]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
