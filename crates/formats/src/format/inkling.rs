//! `inkling`: its row, models and profile. Read by [`crate::families::jsonlike::inkling`].

use super::prelude::*;

/// The `inkling` format.
pub(crate) const FORMAT: Def = Def {
    position: 440,
    extractor: || crate::families::jsonlike::inkling::extractor(),
    group: Group::JsonLike,
    models: &["inkling"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "inkling",
        families: "Inkling",
        engine: Engine::JsonBlock,
        opener: "<|message_model|>NAME<|content_invoke_tool_json|>",
        separator: None,
        closers: &["<|end_message|>"],
        blocks: &[("<|content_invoke_tool_json|>", "<|end_message|>")],
        parameter: None,
        // The header names the tool: held as call markup.
        openers: Some(&["<|content_invoke_tool_json|>", "<|message_model|>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: "{\"name\": NAME, \"args\": {…}}: args is the arguments key (or the SPEC §9 keys); a <|message_model|> header naming another tool than the payload is malformed",
    },
};
