//! `mistral`: its row, models and profile. Read by [`crate::families::jsonlike::mistral`].

use super::prelude::*;
use crate::families::jsonlike::mistral::Mistral;
use crate::find::StaticFinder;

/// Opens every call (xLAM's wrapper too: `xlam`).
pub(crate) const TOKEN: &str = "[TOOL_CALLS]";
/// Between a v11+ call's name (or id) and its arguments.
pub(crate) const ARGS: &str = "[ARGS]";
/// Between a v11+ call's name and its optional id.
pub(crate) const CALL_ID: &str = "[CALL_ID]";

static TOKEN_FINDER: StaticFinder = StaticFinder::new(TOKEN);

/// The `mistral` extractor: its scanner with this file's tokens.
pub(crate) const MISTRAL: Mistral = Mistral {
    token: &TOKEN_FINDER,
    args: ARGS,
    call_id: CALL_ID,
};

/// The `mistral` format.
pub(crate) const FORMAT: Def = Def {
    position: 250,
    extractor: || Box::new(MISTRAL),
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
        opener: TOKEN,
        separator: Some(cat!(ARGS, " / ", CALL_ID)),
        closers: &[],
        blocks: &[],
        openers: Some(&[TOKEN]),
        payload: PayloadKind::JsonArguments,
        conventions: "NAME[ARGS]{…}, NAME[CALL_ID]id[ARGS]{…}, NAME{…}, or a JSON call list",
        ..NO_EXTRAS
    },
};
