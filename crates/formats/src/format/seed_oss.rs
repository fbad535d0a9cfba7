//! `seed_oss`: ByteDance Seed-OSS calls, Qwen3-Coder's function blocks in
//! Seed's own wrapper.
//!
//! # Wire format
//!
//! ```text
//! <seed:tool_call>
//! <function=get_weather>
//! <parameter=city>Barcelona, Spain</parameter>
//! </function>
//! </seed:tool_call>
//! ```
//!
//! gives `get_weather` with `{"city": "Barcelona, Spain"}`. Derived from the
//! Seed-OSS chat template (`ByteDance-Seed/Seed-OSS-36B-Instruct`,
//! `chat_template.jinja`: each assistant call rendered as
//! `<seed:tool_call>` + `<function=NAME>` + one `<parameter=KEY>` per
//! argument) and vLLM's reference parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/seed_oss_tool_parser.py`). Reasoning is Seed's
//! `<seed:think>` block, which [`crate::reasoning`] knows.
//!
//! The blocks are read by the `qwen_xml` engine ([`crate::families::tagged::qwen_xml`]) with
//! this wrapper, so the rules of that row hold here (values typed by the
//! tool's schema, text beside a block inside the wrapper is `malformed`, a
//! wrapper cut off at the end is `truncated`), except one: a `<function=`
//! block outside the wrapper is not a Seed-OSS call (vLLM's `seed_oss`
//! parser reads only wrapped blocks), so Qwen outputs yield nothing here.
//! Until this row existed, `qwen_xml` also read this wrapper; it now reads
//! Seed-OSS's blocks as bare blocks, as vLLM's `qwen3_coder` does.

use super::prelude::*;
use super::qwen_xml::{FUNCTION, FUNCTION_END, PARAM, PARAM_END, QWEN};
use crate::families::configured::{Config, Configured};
use crate::families::tagged::qwen_xml::FunctionXml;

/// Seed's wrapper around the function blocks.
const WRAPPER: (&str, &str) = ("<seed:tool_call>", "</seed:tool_call>");

/// The `seed_oss` extractor: the `<function=…>` engine in Seed's wrapper.
pub(crate) const SEED_OSS: Configured = Configured {
    example: "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Antwerp</parameter>\n</function>\n</seed:tool_call>",
    describe: "Seed-OSS: <seed:tool_call><function=f><parameter=k>v</parameter></function></seed:tool_call>; values typed by the tool schema",
    config: Config::FunctionXml(FunctionXml {
        mode: "seed_oss",
        wrappers: &[WRAPPER],
        bare: false,
        ..QWEN
    }),
};

/// The `seed_oss` format.
pub(crate) const FORMAT: Def = Def {
    position: 230,
    extractor: || Box::new(SEED_OSS),
    group: Group::Tagged,
    models: &["seed-oss"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "seed_oss",
        families: "Seed-OSS",
        engine: Engine::TaggedParameters,
        opener: cat!(WRAPPER.0, FUNCTION, "NAME>"),
        separator: Some(cat!(PARAM, "KEY>")),
        closers: &[PARAM_END, FUNCTION_END, WRAPPER.1],
        blocks: &[WRAPPER, (FUNCTION, FUNCTION_END)],
        parameter: Some((cat!(PARAM, "KEY>"), PARAM_END)),
        openers: Some(&[WRAPPER.0, FUNCTION]),
        payload: PayloadKind::TaggedValues,
        conventions: "qwen_xml's function blocks in <seed:tool_call>; a bare <function=…> block is a call only in an output without the wrapper",
        ..NO_EXTRAS
    },
};
