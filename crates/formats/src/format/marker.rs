//! `marker`: its row, models and profile. Read by [`crate::modes::marker`].

use super::prelude::*;

/// The marker token, standing as a whole word before the call object.
pub(crate) const MARKER: &str = "TOOL_CALL";

/// The `marker` format.
pub(crate) const FORMAT: Def = Def {
    position: 40,
    extractor: || Box::new(crate::modes::marker::Marker),
    group: Group::Seed,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "marker",
        families: "seed (TOOL_CALL prompts)",
        engine: Engine::JsonBlock,
        opener: MARKER,
        separator: None,
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&[MARKER]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
