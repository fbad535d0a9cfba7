//! `tag`: its row, models and profile. Read by [`crate::irregular::tag`].

use super::prelude::*;
use crate::irregular::tag::Tag;

/// Opens a call (`<tool name="NAME">`): the tag's name, then a space, `>`
/// or `/`.
pub(crate) const OPEN: &str = "<tool";
/// Closes a call.
pub(crate) const CLOSE: &str = "</tool>";

/// The `tag` extractor: its engine with this file's tokens.
pub(crate) const TAG: Tag = Tag {
    open: OPEN,
    close: CLOSE,
};

/// The `tag` format.
pub(crate) const FORMAT: Def = Def {
    position: 10,
    extractor: || Box::new(TAG),
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
        opener: cat!(OPEN, " name=\"NAME\">"),
        closers: &[CLOSE],
        blocks: &[(cat!(OPEN, " name="), CLOSE)],
        openers: Some(&[OPEN]),
        payload: PayloadKind::JsonArguments,
        conventions: "name in the name attribute; body is the JSON arguments object",
        ..NO_EXTRAS
    },
};
