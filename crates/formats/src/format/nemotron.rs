//! `nemotron`: its row, models and profile. Read by [`crate::families::jsonlike::nemotron`].

use super::prelude::*;

/// The `nemotron` format.
pub(crate) const FORMAT: Def = Def {
    position: 320,
    extractor: || crate::families::jsonlike::nemotron::extractor(),
    group: Group::JsonLike,
    models: &["nemotron-nano-9b-v2", "nemotron-nano-12b-v2"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "nemotron",
        families: "Nemotron Nano v2",
        engine: Engine::JsonBlock,
        opener: "<TOOLCALL>",
        separator: None,
        closers: &["</TOOLCALL>"],
        blocks: &[("<TOOLCALL>", "</TOOLCALL>")],
        parameter: None,
        openers: Some(&["<TOOLCALL>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonCall,
        conventions: CALL_KEYS,
    },
};
