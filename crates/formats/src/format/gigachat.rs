//! `gigachat`: its row, models and profile. Read by [`crate::families::jsonlike::gigachat`].

use super::prelude::*;

/// The `gigachat` format.
pub(crate) const FORMAT: Def = Def {
    position: 340,
    extractor: || crate::families::jsonlike::gigachat::extractor(),
    group: Group::JsonLike,
    models: &["gigachat"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "gigachat",
        families: "GigaChat 3 / 3.1",
        engine: Engine::JsonBlock,
        opener: "function call<|role_sep|> / <|function_call|>",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        // `<|message_sep|>` opens the function-call message: held as markup.
        openers: Some(&["<|function_call|>", "function call", "<|message_sep|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
