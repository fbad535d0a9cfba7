//! `xml_call`: its row, models and profile. Read by [`crate::families::tagged::xml_call`].

use super::prelude::*;

/// The `xml_call` format.
pub(crate) const FORMAT: Def = Def {
    position: 170,
    extractor: || Box::new(crate::families::tagged::xml_call::XmlCall),
    group: Group::Tagged,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "xml_call",
        families: "XML-prompted models",
        engine: Engine::Scanner,
        opener: "<tool_call name=\"NAME\"><args> (or <tool:call …><tool:args>)",
        separator: None,
        closers: &["</city>", "</args>", "</tool_call>"],
        blocks: &[
            ("<tool_call name=", "</tool_call>"),
            ("<tool:call", "</tool:call>"),
        ],
        parameter: Some(("<KEY>", "</KEY>")),
        openers: Some(&["<tool_call", "<tool:call"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "one element per argument inside <args>",
    },
};
