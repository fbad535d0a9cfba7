//! `step3`: its row, models and profile. Read by [`crate::families::tagged::step3`].

use super::prelude::*;

/// The `step3` format.
pub(crate) const FORMAT: Def = Def {
    position: 150,
    extractor: || Box::new(crate::families::tagged::step3::STEP3),
    group: Group::Tagged,
    models: &["step3", "step-3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "step3",
        families: "Step-3",
        engine: Engine::TaggedParameters,
        opener: "<｜tool_calls_begin｜><｜tool_call_begin｜><steptml:invoke name=\"NAME\">",
        separator: Some("<steptml:parameter name=\"KEY\">"),
        closers: &[
            "</steptml:parameter>",
            "</steptml:invoke>",
            "<｜tool_call_end｜>",
            "<｜tool_calls_end｜>",
        ],
        blocks: &[
            ("<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"),
            ("<｜tool_call_begin｜>", "<｜tool_call_end｜>"),
        ],
        parameter: Some(("<steptml:parameter name=\"KEY\">", "</steptml:parameter>")),
        // The section tokens are held too: they are call markup, never
        // content to forward, though a candidate starts at `<steptml:`.
        openers: Some(&[
            "<steptml:",
            "<｜tool_calls_begin｜>",
            "<｜tool_call_begin｜>",
        ]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <steptml:invoke>; values typed by the tool schema",
    },
};
