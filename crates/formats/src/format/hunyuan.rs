//! `hunyuan`: Hunyuan / HY v3 calls, the GLM key/value shape with a
//! `<tool_sep>` after the function name, inside `<tool_calls>`.
//!
//! # Wire format
//!
//! ```text
//! <tool_calls>
//! <tool_call>get_weather<tool_sep>
//! <arg_key>city</arg_key>
//! <arg_value>Beijing</arg_value>
//! </tool_call>
//! <tool_call>get_current_date<tool_sep></tool_call>
//! </tool_calls>
//! ```
//!
//! gives two calls: `get_weather` with `{"city": "Beijing"}` and
//! `get_current_date` with `{}`. Values are typed by the tool schema exactly
//! like [`crate::families::tagged::glm`]; the `<tool_calls>` wrapper is optional. A
//! `<tool_call>` without `<tool_sep>` after its first word is not this
//! format (GLM, Hermes), except inside `<tool_calls>` when the call closes
//! right after its name: `<tool_calls><tool_call>get_current_date</tool_call></tool_calls>`
//! is a call without arguments (a model that drops the separator when it has
//! no arguments; SGLang's `hunyuan` detector and vLLM's `hy_v3` parser split
//! the name from the arguments the same way). Hunyuan-A13B's
//! `<tool_calls>[{…JSON…}]</tool_calls>` belongs to the JSON families.

use super::glm::{PARAMETER, VALUE_END};
use super::hermes::{CLOSE, OPEN};
use super::prelude::*;
use super::tool_calls_tag::{SECTION, SECTION_END};

/// Hunyuan's separator after the tool name.
const SEP: &str = "<tool_sep>";
use crate::families::configured::{Config, Configured};
use crate::families::tagged::glm::Tokens;

/// Hunyuan / HY v3: `<tool_call>f<tool_sep><arg_key>…`, inside
/// `<tool_calls>` (where a call may close right after its name).
pub(crate) const HUNYUAN_TOKENS: Tokens<'static> = Tokens {
    mode: "hunyuan",
    sep: Some(SEP),
    block: Some((SECTION, SECTION_END)),
    ..super::glm::GLM_TOKENS
};

/// The `hunyuan` extractor: the key/value engine with Hunyuan's tokens.
pub(crate) const HUNYUAN: Configured = Configured {
    example: "<tool_calls><tool_call>get_weather<tool_sep><arg_key>city</arg_key><arg_value>Beijing</arg_value></tool_call></tool_calls>",
    describe: "Hunyuan / HY v3: <tool_calls><tool_call>f<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value></tool_call></tool_calls>",
    config: Config::KeyValue(HUNYUAN_TOKENS),
};

/// The `hunyuan` format.
pub(crate) const FORMAT: Def = Def {
    position: 140,
    extractor: || Box::new(HUNYUAN),
    group: Group::Tagged,
    models: &["hunyuan", "hy-v3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "hunyuan",
        families: "Hunyuan / HY v3",
        engine: Engine::TaggedParameters,
        opener: cat!(SECTION, OPEN),
        separator: Some(SEP),
        closers: &[VALUE_END, CLOSE, SECTION_END],
        blocks: &[(SECTION, SECTION_END), (OPEN, CLOSE)],
        parameter: Some(PARAMETER),
        openers: Some(&[SECTION, OPEN]),
        payload: PayloadKind::TaggedValues,
        conventions: "NAME<tool_sep> then <arg_key>k</arg_key><arg_value>v</arg_value> pairs",
        ..NO_EXTRAS
    },
};
