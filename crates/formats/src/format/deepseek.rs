//! `deepseek`: its row, models and profile. Read by [`crate::families::tagged::deepseek`].

use super::prelude::*;

/// The `deepseek` format.
pub(crate) const FORMAT: Def = Def {
    position: 100,
    extractor: || Box::new(crate::families::tagged::deepseek::DeepSeek),
    group: Group::Tagged,
    models: &["deepseek-v3", "deepseek-r1"],
    bare_reader: false,
    profile: Some(Profile {
        name: "deepseek",
        rank: 6,
    }),
    row: Format {
        name: "deepseek",
        families: "DeepSeek V3 / R1 / V3.1",
        engine: Engine::NameThenJson,
        opener: "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>",
        separator: Some("<｜tool▁sep｜>"),
        closers: &["```", "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>"],
        blocks: &[
            ("<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"),
            ("<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>"),
        ],
        parameter: None,
        openers: Some(&["<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::JsonArguments,
        conventions: "V3: function<｜tool▁sep｜>NAME + fenced JSON; V3.1: NAME<｜tool▁sep｜>JSON",
    },
};
