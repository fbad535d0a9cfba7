//! `deepseek_dsml_plain`: its row, models and profile. Read by [`crate::families::tagged::deepseek_dsml_plain`].

use super::prelude::*;

/// The `deepseek_dsml_plain` format.
pub(crate) const FORMAT: Def = Def {
    position: 220,
    extractor: || Box::new(crate::families::tagged::deepseek_dsml_plain::DEEPSEEK_DSML_PLAIN),
    group: Group::Tagged,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "deepseek_dsml_plain",
        families: "DeepSeek V3.2 (DSML without the ｜DSML｜ marker)",
        engine: Engine::TaggedParameters,
        opener: "<function_calls><invoke name=\"NAME\">",
        separator: Some("<parameter name=\"KEY\" string=\"true|false\">"),
        closers: &["</parameter>", "</invoke>", "</function_calls>"],
        blocks: &[("<function_calls>", "</function_calls>")],
        parameter: Some(("<parameter name=\"KEY\" string=\"true\">", "</parameter>")),
        openers: Some(&["<function_calls>", "<invoke "]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "string=\"false\" values are JSON; invokes only inside <function_calls>",
    },
};
