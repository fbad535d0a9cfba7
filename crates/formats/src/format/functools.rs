//! `functools`: its row, models and profile. Read by [`crate::families::jsonlike::functools`].

use super::prelude::*;

/// The `functools` format.
pub(crate) const FORMAT: Def = Def {
    position: 290,
    extractor: || crate::families::jsonlike::functools::extractor(),
    group: Group::JsonLike,
    models: &["phi-4-mini", "firefunction"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "functools",
        families: "Phi-4-mini, FireFunction v2",
        engine: Engine::JsonBlock,
        opener: "functools",
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["functools"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
