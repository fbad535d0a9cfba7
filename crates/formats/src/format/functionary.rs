//! `functionary`: its row, models and profile. Read by [`crate::families::jsonlike::functionary`].

use super::prelude::*;
use super::qwen_xml::{FUNCTION, FUNCTION_END};
use crate::families::jsonlike::functionary::Functionary;

/// Opens a v3.1 call; the name and `>` follow. Qwen3-Coder's function tag,
/// spelled in its file.
const OPEN: &str = FUNCTION;
/// Closes a v3.1 call.
const CLOSE: &str = FUNCTION_END;
/// Opens a v3.2 turn segment after the first.
pub(crate) const V32_SEP: &str = ">>>";

/// The `functionary` extractor: its scanner with this file's tokens.
pub(crate) const FUNCTIONARY: Functionary = Functionary {
    open: OPEN,
    close: CLOSE,
    v32_sep: V32_SEP,
};

/// The `functionary` format.
pub(crate) const FORMAT: Def = Def {
    position: 370,
    extractor: || Box::new(FUNCTIONARY),
    group: Group::JsonLike,
    models: &["functionary"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "functionary",
        families: "Functionary v3.1 / v3.2",
        engine: Engine::NameThenJson,
        opener: cat!(OPEN, "NAME> (v3.2: ", V32_SEP, "NAME)"),
        closers: &[CLOSE],
        blocks: &[(OPEN, CLOSE)],
        // Plus v3.2's first segment at the start of the output, which has no
        // token: see `openers::StartRule`.
        openers: Some(&[OPEN, V32_SEP]),
        payload: PayloadKind::JsonArguments,
        conventions: "name in the tag; body is the JSON arguments object",
        ..NO_EXTRAS
    },
};
