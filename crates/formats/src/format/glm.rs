//! `glm`: its row, models and profile. Read by [`crate::families::tagged::glm`].

use super::hermes::{CLOSE, OPEN};
use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::glm::Tokens;

/// GLM's key opener (Hunyuan and HY v4 write the same pairs).
pub(crate) const KEY: &str = "<arg_key>";
/// Closes [`KEY`].
pub(crate) const KEY_END: &str = "</arg_key>";
/// GLM's value opener.
pub(crate) const VALUE: &str = "<arg_value>";
/// Closes [`VALUE`].
pub(crate) const VALUE_END: &str = "</arg_value>";
/// The row's parameter markup: `<arg_key>KEY</arg_key><arg_value>`, `</arg_value>`.
pub(crate) const PARAMETER: (&str, &str) = (cat!(KEY, "KEY", KEY_END, VALUE), VALUE_END);

/// GLM-4.5 / 4.6 / 4.7.
pub(crate) const GLM_TOKENS: Tokens<'static> = Tokens {
    mode: "glm",
    open: OPEN,
    close: CLOSE,
    key: KEY,
    key_end: KEY_END,
    value: Some(VALUE),
    value_end: VALUE_END,
    sep: None,
    block: None,
    json_values: false,
};

/// The key/value engine ([`glm`], which also reads Hunyuan's and LongCat's
/// spellings) with GLM's tokens.
pub(crate) const GLM: Configured = Configured {
    example: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Antwerp</arg_value>\n</tool_call>",
    describe: "GLM-4.5/4.6/4.7: <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>; values typed by the tool schema",
    config: Config::KeyValue(GLM_TOKENS),
};

/// The `glm` format.
pub(crate) const FORMAT: Def = Def {
    position: 80,
    extractor: || Box::new(GLM),
    group: Group::Tagged,
    models: &[
        "glm-4.5", "glm-4.6", "glm-4.7", "glm-5",
        // Poolside Laguna (poolside_v1) writes GLM-4.5's key/value calls.
        "poolside", "laguna",
    ],
    bare_reader: false,
    profile: Some(Profile {
        name: "glm",
        rank: 8,
    }),
    row: Format {
        name: "glm",
        families: "GLM-4.5 / 4.6 / 4.7",
        engine: Engine::TaggedParameters,
        opener: OPEN,
        separator: Some(KEY),
        closers: &[VALUE_END, CLOSE],
        blocks: &[(OPEN, CLOSE)],
        parameter: Some(PARAMETER),
        openers: Some(&[OPEN]),
        payload: PayloadKind::TaggedValues,
        conventions: "name right after <tool_call>; <arg_key>k</arg_key><arg_value>v</arg_value> pairs; values are raw text (the template does not escape them), so a </tool_call> inside <arg_value> ends the call there, as vLLM's glm45/glm47 parsers cut at the first </tool_call>, and the cut value is malformed",
        ..NO_EXTRAS
    },
};
