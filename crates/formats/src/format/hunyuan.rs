//! `hunyuan`: its row, models and profile. Read by [`crate::families::tagged::hunyuan`].

use super::prelude::*;

/// The `hunyuan` format.
pub(crate) const FORMAT: Def = Def {
    position: 140,
    extractor: || Box::new(crate::families::tagged::hunyuan::HUNYUAN),
    group: Group::Tagged,
    models: &["hunyuan", "hy-v3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "hunyuan",
        families: "Hunyuan / HY v3",
        engine: Engine::TaggedParameters,
        opener: "<tool_calls><tool_call>",
        separator: Some("<tool_sep>"),
        closers: &["</arg_value>", "</tool_call>", "</tool_calls>"],
        blocks: &[
            ("<tool_calls>", "</tool_calls>"),
            ("<tool_call>", "</tool_call>"),
        ],
        parameter: Some(("<arg_key>KEY</arg_key><arg_value>", "</arg_value>")),
        openers: Some(&["<tool_calls>", "<tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "NAME<tool_sep> then <arg_key>k</arg_key><arg_value>v</arg_value> pairs",
    },
};
