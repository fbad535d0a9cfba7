//! `longcat`: its row, models and profile. Read by [`crate::families::jsonlike::longcat`].

use super::prelude::*;

/// The `longcat` format.
pub(crate) const FORMAT: Def = Def {
    position: 330,
    extractor: || crate::families::jsonlike::longcat::extractor(),
    group: Group::JsonLike,
    models: &["longcat"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "longcat",
        families: "Meituan LongCat",
        engine: Engine::JsonBlock,
        opener: "<longcat_tool_call>",
        separator: None,
        closers: &["</longcat_tool_call>"],
        blocks: &[("<longcat_tool_call>", "</longcat_tool_call>")],
        parameter: None,
        openers: Some(&["<longcat_tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
