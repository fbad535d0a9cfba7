//! `command_r`: its row, models and profile. Read by [`crate::families::jsonlike::command_r`].

use super::prelude::*;

/// The `command_r` format.
pub(crate) const FORMAT: Def = Def {
    position: 360,
    extractor: || crate::families::jsonlike::command_r::extractor(),
    group: Group::JsonLike,
    models: &["command-r", "command-a"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "command_r",
        families: "Command R7B, Command R+, Command A",
        engine: Engine::JsonBlock,
        opener: "<|START_ACTION|> (R+: Action: + ```json)",
        separator: None,
        closers: &["<|END_ACTION|>"],
        blocks: &[("<|START_ACTION|>", "<|END_ACTION|>")],
        parameter: None,
        openers: Some(&["<|START_ACTION|>", "Action:"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
