//! `granite_fc`: its row, models and profile. Read by [`crate::families::jsonlike::granite_fc`].

use super::prelude::*;

/// The `granite_fc` format.
pub(crate) const FORMAT: Def = Def {
    position: 280,
    extractor: || crate::families::jsonlike::granite_fc::extractor(),
    group: Group::JsonLike,
    models: &["granite-20b-functioncalling"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "granite_fc",
        families: "Granite-20B-FC",
        engine: Engine::JsonBlock,
        opener: "<function_call>",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["<function_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
