//! `qwen_xml`: Qwen3-Coder's `<function=…>` blocks in Hermes's
//! `<tool_call>` wrapper, read by the function-block engine
//! ([`crate::families::tagged::qwen_xml`]). Its tags are spelled here and
//! only here: Seed-OSS ([`super::seed_oss`]) and the `xml_parameters`
//! payload of patterns ([`crate::patterns`]) name these constants.

use super::hermes::{CLOSE, OPEN};
use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::qwen_xml::FunctionXml;

/// The function tag's name, which MiniCPM5 ([`super::minicpm5`]) writes
/// with attributes.
pub(crate) const FUNCTION_TAG: &str = "<function";
/// The function block opener; the name and `>` follow.
pub(crate) const FUNCTION: &str = cat!(FUNCTION_TAG, "=");
/// The function block closer.
pub(crate) const FUNCTION_END: &str = "</function>";
/// The parameter opener; the key and `>` follow.
pub(crate) const PARAM: &str = "<parameter=";
/// The parameter closer.
pub(crate) const PARAM_END: &str = "</parameter>";

/// Qwen3-Coder's spelling of the function-block engine.
pub(crate) const QWEN: FunctionXml<'static> = FunctionXml {
    mode: "qwen_xml",
    function: FUNCTION,
    function_end: FUNCTION_END,
    param: PARAM,
    param_end: PARAM_END,
    wrappers: &[(OPEN, CLOSE)],
    bare: true,
};

/// The `qwen_xml` extractor.
pub(crate) const QWEN_XML: Configured = Configured {
    example: "<tool_call>\n<function=get_weather>\n<parameter=city>\nAntwerp\n</parameter>\n</function>\n</tool_call>",
    describe: "Qwen3-Coder XML: <tool_call><function=f><parameter=k>v</parameter></function></tool_call>; values typed by the tool schema",
    config: Config::FunctionXml(QWEN),
};

/// The `qwen_xml` format.
pub(crate) const FORMAT: Def = Def {
    position: 70,
    extractor: || Box::new(QWEN_XML),
    group: Group::Tagged,
    // StepFun 3.5 and 3.7 write Qwen3-Coder's XML (their chat templates;
    // SGLang's `step3p5` is its Qwen3-Coder detector): the longer fragment
    // wins over `step3`'s `step-3` at the same place in the name.
    models: &[
        "qwen3-coder",
        "qwen3.5",
        "step-3.5",
        "step3.5",
        "step3p5",
        "step-3.7",
        "step3.7",
        "nemotron-3-nano",
        // IQuest-Coder V1 and MiMo-V2-Flash write Qwen3-Coder's XML calls
        // (vLLM's `iquest_coder` parser subclasses `qwen3_coder`;
        // `mimov2_flash`'s tests feed it this markup). IQuest-Coder V2 has
        // its own call tokens, so only V1 is named.
        "iquest-coder-v1",
        "mimo-v2",
    ],
    bare_reader: false,
    profile: Some(Profile {
        name: "qwen3-coder",
        rank: 2,
    }),
    row: Format {
        name: "qwen_xml",
        families: "Qwen3-Coder",
        engine: Engine::TaggedParameters,
        opener: cat!(OPEN, FUNCTION, "NAME>"),
        separator: Some(cat!(PARAM, "KEY>")),
        closers: &[PARAM_END, FUNCTION_END, CLOSE],
        blocks: &[(OPEN, CLOSE), (FUNCTION, FUNCTION_END)],
        parameter: Some((cat!(PARAM, "KEY>"), PARAM_END)),
        openers: Some(&[OPEN, FUNCTION]),
        payload: PayloadKind::TaggedValues,
        conventions: "name after <function=; one <parameter=k>v</parameter> per argument; a bare <function=…> block is a call only in an output without <tool_call> markup (vLLM's qwen3_coder reads bare blocks only then), else malformed; values are raw text, so a </function> or </tool_call> inside a value ends the call there (as vLLM cuts) and the cut value is malformed",
        ..NO_EXTRAS
    },
};
