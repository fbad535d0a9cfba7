//! `minimax_m2`: its row, models and profile. Read by [`crate::families::tagged::minimax_m2`].

use super::prelude::*;

/// The `minimax_m2` format.
pub(crate) const FORMAT: Def = Def {
    position: 130,
    extractor: || Box::new(crate::families::tagged::minimax_m2::MINIMAX_M2),
    group: Group::Tagged,
    models: &["minimax-m2"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "minimax_m2",
        families: "MiniMax-M2",
        engine: Engine::TaggedParameters,
        opener: "<minimax:tool_call><invoke name=\"NAME\">",
        separator: Some("<parameter name=\"KEY\">"),
        closers: &["</parameter>", "</invoke>", "</minimax:tool_call>"],
        blocks: &[("<minimax:tool_call>", "</minimax:tool_call>")],
        parameter: Some(("<parameter name=\"KEY\">", "</parameter>")),
        openers: Some(&["<minimax:tool_call>", "<invoke "]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <invoke>; values typed by the tool schema",
    },
};
