//! `marker`: its row, models and profile. Read by [`crate::irregular::marker`].

use super::prelude::*;
use crate::irregular::marker::Marker;

/// The marker token, standing as a whole word before the call object.
pub(crate) const TOKEN: &str = "TOOL_CALL";

/// The `marker` extractor: its engine with this file's token.
pub(crate) const MARKER: Marker = Marker { marker: TOKEN };

/// The `marker` format.
pub(crate) const FORMAT: Def = Def {
    position: 40,
    extractor: || Box::new(MARKER),
    group: Group::Seed,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "marker",
        families: "seed (TOOL_CALL prompts)",
        engine: Engine::JsonBlock,
        opener: TOKEN,
        closers: &[],
        blocks: &[],
        openers: Some(&[TOKEN]),
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
        ..NO_EXTRAS
    },
};
