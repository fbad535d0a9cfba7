//! `deepseek_dsml`: its row, models and profile. Read by [`crate::families::tagged::deepseek_dsml`].

use super::prelude::*;

/// The `deepseek_dsml` format.
pub(crate) const FORMAT: Def = Def {
    position: 120,
    extractor: || Box::new(crate::families::tagged::deepseek_dsml::DEEPSEEK_DSML),
    group: Group::Tagged,
    models: &["deepseek-v3.2", "deepseek-v4"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "deepseek_dsml",
        families: "DeepSeek V3.2 / V4",
        engine: Engine::TaggedParameters,
        opener: "<｜DSML｜function_calls><｜DSML｜invoke name=\"NAME\">",
        separator: Some("<｜DSML｜parameter name=\"KEY\" string=\"true|false\">"),
        closers: &[
            "</｜DSML｜parameter>",
            "</｜DSML｜invoke>",
            "</｜DSML｜function_calls>",
        ],
        blocks: &[("<｜DSML｜function_calls>", "</｜DSML｜function_calls>")],
        parameter: Some((
            "<｜DSML｜parameter name=\"KEY\" string=\"true\">",
            "</｜DSML｜parameter>",
        )),
        openers: Some(&["<｜DSML｜"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "string=\"false\" values are JSON",
    },
};
