//! `minimax_m3`: its row, models and profile. Read by [`crate::families::tagged::minimax_m3`].

use super::prelude::*;

/// The `minimax_m3` format.
pub(crate) const FORMAT: Def = Def {
    position: 210,
    extractor: || Box::new(crate::families::tagged::minimax_m3::MINIMAX_M3),
    group: Group::Tagged,
    models: &["minimax-m3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "minimax_m3",
        families: "MiniMax-M3",
        engine: Engine::TaggedParameters,
        opener: "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"NAME\">",
        separator: Some("]<]minimax[>[<KEY>"),
        closers: &[
            "]<]minimax[>[</city>",
            "]<]minimax[>[</invoke>",
            "]<]minimax[>[</tool_call>",
        ],
        blocks: &[("<tool_call>", "</tool_call>")],
        parameter: Some(("]<]minimax[>[<KEY>", "]<]minimax[>[</KEY>")),
        openers: Some(&["]<]minimax[>[", "<tool_call>", "<invoke "]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <invoke>; one <KEY>v</KEY> element per argument; the ]<]minimax[>[ token before a tag is optional; values typed by the tool schema; nested elements are not read (malformed)",
    },
};
