//! `olmo`: its row, models and profile. Read by [`crate::families::jsonlike::olmo`].

use super::prelude::*;

/// The `olmo` format.
pub(crate) const FORMAT: Def = Def {
    position: 410,
    extractor: || crate::families::jsonlike::olmo::extractor(),
    group: Group::JsonLike,
    models: &["olmo-3", "olmo3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "olmo",
        families: "OLMo 3",
        engine: Engine::Pythonic,
        opener: "<function_calls>",
        separator: Some("a line break"),
        closers: &["</function_calls>"],
        blocks: &[("<function_calls>", "</function_calls>")],
        parameter: None,
        openers: Some(&["<function_calls>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::PythonLiterals,
        conventions: "one f(a=1) per line",
    },
};
