//! `atem`: its row, models and profile. Read by [`crate::families::tagged::atem`].

use super::prelude::*;

/// The `atem` format.
pub(crate) const FORMAT: Def = Def {
    position: 180,
    extractor: || Box::new(crate::families::tagged::atem::ATEM),
    group: Group::Tagged,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "atem",
        families: "Muse Glimmer (Muse Spark)",
        engine: Engine::TaggedParameters,
        opener: "<atem:function_calls><atem:invoke name=\"NAME\">",
        separator: Some("<atem:parameter name=\"KEY\">"),
        closers: &[
            "</atem:parameter>",
            "</atem:invoke>",
            "</atem:function_calls>",
        ],
        blocks: &[("<atem:function_calls>", "</atem:function_calls>")],
        parameter: Some(("<atem:parameter name=\"KEY\">", "</atem:parameter>")),
        openers: Some(&["<atem:function_calls>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <atem:invoke> (may be namespaced); strings as is, lists and objects as JSON, typed by the tool schema",
    },
};
