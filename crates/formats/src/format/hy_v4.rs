//! `hy_v4`: its row, models and profile. Read by [`crate::families::tagged::hy_v4`].

use super::prelude::*;

/// The `hy_v4` format.
pub(crate) const FORMAT: Def = Def {
    position: 240,
    extractor: || Box::new(crate::families::tagged::hy_v4::HY_V4),
    group: Group::Tagged,
    models: &["hy-v4"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "hy_v4",
        families: "HY v4 (Hunyuan 4)",
        engine: Engine::TaggedParameters,
        opener: "<tool_calls><tool_call>",
        separator: Some("<arg_key>"),
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
        conventions: "name right after <tool_call> (no <tool_sep>), then <arg_key>k</arg_key><arg_value>v</arg_value> pairs; calls count only inside <tool_calls>",
    },
};
