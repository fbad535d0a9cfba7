//! `seed_oss`: its row, models and profile. Read by [`crate::families::tagged::seed_oss`].

use super::prelude::*;

/// The `seed_oss` format.
pub(crate) const FORMAT: Def = Def {
    position: 230,
    extractor: || Box::new(crate::families::tagged::seed_oss::SEED_OSS),
    group: Group::Tagged,
    models: &["seed-oss"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "seed_oss",
        families: "Seed-OSS",
        engine: Engine::TaggedParameters,
        opener: "<seed:tool_call><function=NAME>",
        separator: Some("<parameter=KEY>"),
        closers: &["</parameter>", "</function>", "</seed:tool_call>"],
        blocks: &[
            ("<seed:tool_call>", "</seed:tool_call>"),
            ("<function=", "</function>"),
        ],
        parameter: Some(("<parameter=KEY>", "</parameter>")),
        openers: Some(&["<seed:tool_call>", "<function="]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "qwen_xml's function blocks in <seed:tool_call>; a bare <function=…> block is a call only in an output without the wrapper",
    },
};
