//! `tag`: its row, models and profile. Read by [`crate::modes::tag`].

use super::prelude::*;

/// The `tag` format.
pub(crate) const FORMAT: Def = Def {
    position: 10,
    extractor: || Box::new(crate::modes::tag::Tag),
    group: Group::Seed,
    models: &[],
    bare_reader: false,
    profile: Some(Profile {
        name: "default",
        rank: 0,
    }),
    row: Format {
        name: "tag",
        families: "seed (toolgate's own prompt format)",
        engine: Engine::JsonBlock,
        opener: "<tool name=\"NAME\">",
        separator: None,
        closers: &["</tool>"],
        blocks: &[("<tool name=", "</tool>")],
        parameter: None,
        openers: Some(&["<tool"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "name in the name attribute; body is the JSON arguments object",
    },
};
