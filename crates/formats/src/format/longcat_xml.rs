//! `longcat_xml`: LongCat (Flash Lite and later) calls with XML-style
//! key/value arguments — the GLM shape under LongCat's own tag names.
//!
//! # Wire format
//!
//! ```text
//! <longcat_tool_call>get_weather
//! <longcat_arg_key>city</longcat_arg_key>
//! <longcat_arg_value>Antwerp</longcat_arg_value>
//! </longcat_tool_call>
//! ```
//!
//! Read by the GLM engine ([`crate::families::tagged::glm`]) with LongCat's tokens, so every
//! GLM rule holds: values typed by the tool schema (SPEC §9), a key runs to
//! its closing tag, a key or value holding the format's own markup is
//! `malformed`, output ending inside a call is `truncated`. A
//! `<longcat_tool_call>` whose body is JSON is the `longcat` mode's, not
//! this one's: no candidate here.

use super::prelude::*;
use super::longcat::{CLOSE, OPEN};
use crate::families::configured::{Config, Configured};
use crate::families::tagged::glm::Tokens;

/// LongCat's XML-argument calls: `<longcat_tool_call>f<longcat_arg_key>…`.
pub(crate) const LONGCAT_XML_TOKENS: Tokens<'static> = Tokens {
    mode: "longcat_xml",
    open: OPEN,
    close: CLOSE,
    key: "<longcat_arg_key>",
    key_end: "</longcat_arg_key>",
    value: Some("<longcat_arg_value>"),
    value_end: "</longcat_arg_value>",
    sep: None,
    block: None,
    json_values: false,
};

/// The `longcat_xml` extractor: the key/value engine with LongCat's tokens.
pub(crate) const LONGCAT_XML: Configured = Configured {
    example: "<longcat_tool_call>get_weather\n<longcat_arg_key>city</longcat_arg_key>\n<longcat_arg_value>Antwerp</longcat_arg_value>\n</longcat_tool_call>",
    describe: "LongCat XML arguments: <longcat_tool_call>f<longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v</longcat_arg_value></longcat_tool_call>; values typed by the tool schema",
    config: Config::KeyValue(LONGCAT_XML_TOKENS),
};

/// The `longcat_xml` format.
pub(crate) const FORMAT: Def = Def {
    position: 190,
    extractor: || Box::new(LONGCAT_XML),
    group: Group::Tagged,
    models: &[],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "longcat_xml",
        families: "LongCat Flash Lite and later (XML arguments)",
        engine: Engine::TaggedParameters,
        opener: OPEN,
        separator: Some("<longcat_arg_key>"),
        closers: &["</longcat_arg_value>", CLOSE],
        blocks: &[(OPEN, CLOSE)],
        parameter: Some((
            "<longcat_arg_key>KEY</longcat_arg_key><longcat_arg_value>",
            "</longcat_arg_value>",
        )),
        openers: Some(&[OPEN]),
        payload: PayloadKind::TaggedValues,
        conventions: "name right after <longcat_tool_call>; <longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v</longcat_arg_value> pairs",
        ..NO_EXTRAS
    },
};
