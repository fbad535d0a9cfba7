//! `bracket`: its row, models and profile. Read by [`crate::irregular::bracket`].

use super::prelude::*;

/// The `bracket` format.
pub(crate) const FORMAT: Def = Def {
    position: 30,
    extractor: || Box::new(crate::irregular::bracket::Bracket),
    group: Group::Seed,
    models: &[],
    bare_reader: true,
    profile: None,
    row: Format {
        name: "bracket",
        families: "Llama 3.2 pythonic prompts, seed",
        engine: Engine::Pythonic,
        opener: "[",
        separator: Some(","),
        closers: &["]"],
        blocks: &[],
        openers: Some(&["["]),
        payload: PayloadKind::PythonLiterals,
        conventions: "name(arg=value, …); arguments must be named",
        ..NO_EXTRAS
    },
};
