//! `functionary`: its row, models and profile. Read by [`crate::families::jsonlike::functionary`].

use super::prelude::*;

/// The `functionary` format.
pub(crate) const FORMAT: Def = Def {
    position: 370,
    extractor: || Box::new(crate::families::jsonlike::functionary::Functionary),
    group: Group::JsonLike,
    models: &["functionary"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "functionary",
        families: "Functionary v3.1 / v3.2",
        engine: Engine::NameThenJson,
        opener: "<function=NAME> (v3.2: >>>NAME)",
        separator: None,
        closers: &["</function>"],
        blocks: &[("<function=", "</function>")],
        parameter: None,
        // Plus v3.2's first segment at the start of the output, which has no
        // token: see `openers::StartRule`.
        openers: Some(&["<function=", ">>>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "name in the tag; body is the JSON arguments object",
    },
};
