//! `minicpm5`: its row, models and profile. Read by [`crate::families::tagged::minicpm5`].

use super::prelude::*;

/// The `minicpm5` format.
pub(crate) const FORMAT: Def = Def {
    position: 160,
    extractor: || Box::new(crate::families::tagged::minicpm5::MINICPM5),
    group: Group::Tagged,
    models: &["minicpm5", "minicpm-5"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "minicpm5",
        families: "MiniCPM5",
        engine: Engine::TaggedParameters,
        opener: "<function name=\"NAME\">",
        separator: Some("<param name=\"KEY\">"),
        closers: &["</param>", "</function>"],
        blocks: &[("<function name=", "</function>")],
        parameter: Some(("<param name=\"KEY\">", "</param>")),
        openers: Some(&["<function"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "XML text (CDATA, entities); values typed by the tool schema",
    },
};
