//! `mistral`: its row, models and profile. Read by [`crate::families::jsonlike::mistral`].

use super::prelude::*;

/// The `mistral` format.
pub(crate) const FORMAT: Def = Def {
    position: 250,
    extractor: || Box::new(crate::families::jsonlike::mistral::Mistral),
    group: Group::JsonLike,
    models: &[
        "mistral",
        "ministral",
        "devstral",
        "magistral",
        "mixtral",
        "codestral",
    ],
    bare_reader: false,
    profile: Some(Profile {
        name: "mistral",
        rank: 3,
    }),
    row: Format {
        name: "mistral",
        families: "Mistral / Mixtral / Magistral / Devstral",
        engine: Engine::NameThenJson,
        opener: "[TOOL_CALLS]",
        separator: Some("[ARGS] / [CALL_ID]"),
        closers: &[],
        blocks: &[],
        parameter: None,
        openers: Some(&["[TOOL_CALLS]"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "NAME[ARGS]{…}, NAME[CALL_ID]id[ARGS]{…}, NAME{…}, or a JSON call list",
    },
};
