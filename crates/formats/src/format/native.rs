//! `native`: its row, models and profile. Read by [`crate::irregular::native`].

use super::prelude::*;

/// The `native` format.
pub(crate) const FORMAT: Def = Def {
    position: 460,
    extractor: || Box::new(crate::irregular::native::Native),
    group: Group::Seed,
    models: &[],
    bare_reader: false,
    profile: Some(Profile {
        name: "native",
        rank: 9,
    }),
    row: Format {
        name: "native",
        families: "any OpenAI-compatible server's tool_calls",
        engine: Engine::Scanner,
        opener: "tool_calls",
        closers: &[],
        blocks: &[],
        openers: Some(&[]),
        payload: PayloadKind::JsonArguments,
        conventions: "function.name; function.arguments a JSON string (or object)",
        ..NO_EXTRAS
    },
};
