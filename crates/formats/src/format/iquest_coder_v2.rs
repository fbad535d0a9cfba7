//! `iquest_coder_v2`: IQuest-Coder V2 calls, GLM's key/value arguments in
//! IQuest's own call tag.
//!
//! # Wire format
//!
//! ```text
//! <iquestcoder_tool_call>get_weather
//! <arg_key>city</arg_key>
//! <arg_value>Antwerp</arg_value>
//! </iquestcoder_tool_call>
//! ```
//!
//! gives `get_weather` with `{"city": "Antwerp"}`; a call without arguments
//! is `<iquestcoder_tool_call>get_time</iquestcoder_tool_call>`. Derived
//! from vLLM's reference parser (`vllm-project/vllm`,
//! `vllm/tool_parsers/iquest_coder_v2_tool_parser.py`, and its tests: the
//! name runs to the first `<arg_key>`, then `<arg_key>`/`<arg_value>`
//! pairs, a string parameter kept verbatim and others read as JSON).
//! IQuest-Coder V1 writes Qwen3-Coder's XML instead (`qwen_xml`).
//!
//! Read by the key/value engine ([`crate::families::tagged::glm`]) with GLM's
//! parameter tags, so every GLM rule holds: values typed by the tool schema
//! (SPEC §9), a key without a value, a key given twice or stray text
//! `malformed` (vLLM drops a call whose `<arg_value>` is not closed), output
//! ending inside a call `truncated`.

use super::glm::{GLM_TOKENS, KEY, PARAMETER, VALUE_END};
use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::glm::Tokens;

/// IQuest-Coder V2's call opener and closer.
const OPEN: &str = "<iquestcoder_tool_call>";
const CLOSE: &str = "</iquestcoder_tool_call>";

/// The `iquest_coder_v2` extractor: the key/value engine, GLM's parameter
/// tags in IQuest's call tag.
pub(crate) const IQUEST_CODER_V2: Configured = Configured {
    example: "<iquestcoder_tool_call>get_weather<arg_key>city</arg_key><arg_value>Antwerp</arg_value></iquestcoder_tool_call>",
    describe: "IQuest-Coder V2: <iquestcoder_tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></iquestcoder_tool_call>; values typed by the tool schema",
    config: Config::KeyValue(Tokens {
        mode: "iquest_coder_v2",
        open: OPEN,
        close: CLOSE,
        ..GLM_TOKENS
    }),
};

/// The `iquest_coder_v2` format.
pub(crate) const FORMAT: Def = Def {
    position: 415,
    extractor: || Box::new(IQUEST_CODER_V2),
    group: Group::Tagged,
    models: &["iquest-coder-v2"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "iquest_coder_v2",
        families: "IQuest-Coder V2",
        engine: Engine::TaggedParameters,
        opener: OPEN,
        separator: Some(KEY),
        closers: &[VALUE_END, CLOSE],
        blocks: &[(OPEN, CLOSE)],
        parameter: Some(PARAMETER),
        openers: Some(&[OPEN]),
        payload: PayloadKind::TaggedValues,
        conventions: "name right after <iquestcoder_tool_call>; <arg_key>k</arg_key><arg_value>v</arg_value> pairs",
        ..NO_EXTRAS
    },
};
