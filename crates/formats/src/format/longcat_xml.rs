//! `longcat_xml`: its row, models and profile. Read by [`crate::families::tagged::longcat_xml`].

use super::prelude::*;

/// The `longcat_xml` format.
pub(crate) const FORMAT: Def = Def {
    position: 190,
    extractor: || Box::new(crate::families::tagged::longcat_xml::LONGCAT_XML),
    group: Group::Tagged,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "longcat_xml",
        families: "LongCat Flash Lite and later (XML arguments)",
        engine: Engine::TaggedParameters,
        opener: "<longcat_tool_call>",
        separator: Some("<longcat_arg_key>"),
        closers: &["</longcat_arg_value>", "</longcat_tool_call>"],
        blocks: &[("<longcat_tool_call>", "</longcat_tool_call>")],
        parameter: Some((
            "<longcat_arg_key>KEY</longcat_arg_key><longcat_arg_value>",
            "</longcat_arg_value>",
        )),
        openers: Some(&["<longcat_tool_call>"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name right after <longcat_tool_call>; <longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v</longcat_arg_value> pairs",
    },
};
