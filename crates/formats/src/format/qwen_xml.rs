//! `qwen_xml`: its row, models and profile. Read by [`crate::families::tagged::qwen_xml`].

use super::prelude::*;

/// The `qwen_xml` format.
pub(crate) const FORMAT: Def = Def {
    position: 70,
    extractor: || Box::new(crate::families::tagged::qwen_xml::QwenXml),
    group: Group::Tagged,
    models: &["qwen3-coder", "qwen3.5"],
    bare_reader: false,
    profile: Some(Profile {
        name: "qwen3-coder",
        rank: 2,
    }),
    row: Format {
        name: "qwen_xml",
        families: "Qwen3-Coder",
        engine: Engine::TaggedParameters,
        opener: "<tool_call><function=NAME>",
        separator: Some("<parameter=KEY>"),
        closers: &["</parameter>", "</function>", "</tool_call>"],
        blocks: &[
            ("<tool_call>", "</tool_call>"),
            ("<function=", "</function>"),
        ],
        parameter: Some(("<parameter=KEY>", "</parameter>")),
        openers: Some(&["<tool_call>", "<function="]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name after <function=; one <parameter=k>v</parameter> per argument; a bare <function=…> block is a call only in an output without <tool_call> markup (vLLM's qwen3_coder reads bare blocks only then), else malformed; values are raw text, so a </function> or </tool_call> inside a value ends the call there (as vLLM cuts) and the cut value is malformed",
    },
};
