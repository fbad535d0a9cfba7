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
    value: "<longcat_arg_value>",
    value_end: "</longcat_arg_value>",
    sep: None,
    block: None,
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
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name right after <longcat_tool_call>; <longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v</longcat_arg_value> pairs",
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::input::ParamTypes;
    use serde_json::json;
    use std::collections::HashMap;
    use toolgate_core::Candidate;
    use toolgate_core::{FailureKind, Source};

    fn run(out: &str, pt: Option<&ParamTypes>) -> Vec<Candidate> {
        crate::families::tagged::testutil::typed(&LONGCAT_XML, out, pt)
    }

    #[test]
    fn newline_and_inline_forms_and_typing() {
        let pt = ParamTypes {
            tools: HashMap::from([(
                "get_weather".to_string(),
                HashMap::from([("days".to_string(), vec!["integer".to_string()])]),
            )]),
        };
        for out in [
            "<longcat_tool_call>get_weather\n<longcat_arg_key>city</longcat_arg_key>\n<longcat_arg_value>Antwerp</longcat_arg_value>\n<longcat_arg_key>days</longcat_arg_key>\n<longcat_arg_value>3</longcat_arg_value>\n</longcat_tool_call>",
            "<longcat_tool_call>get_weather<longcat_arg_key>city</longcat_arg_key><longcat_arg_value>Antwerp</longcat_arg_value><longcat_arg_key>days</longcat_arg_key><longcat_arg_value>3</longcat_arg_value></longcat_tool_call>",
        ] {
            let c = run(out, Some(&pt));
            assert_eq!(c.len(), 1);
            let call = c[0].call().unwrap();
            assert_eq!(call.name, "get_weather");
            assert_eq!(json!(call.arguments), json!({"city": "Antwerp", "days": 3}));
        }
    }

    #[test]
    fn parallel_calls_and_no_arguments() {
        let out = "<longcat_tool_call>get_weather<longcat_arg_key>city</longcat_arg_key><longcat_arg_value>Tokyo</longcat_arg_value></longcat_tool_call>\n<longcat_tool_call>get_time</longcat_tool_call>";
        let c = run(out, None);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].call().unwrap().name, "get_time");
        assert!(c[1].call().unwrap().arguments.is_empty());
    }

    #[test]
    fn truncated_and_malformed() {
        let out = "<longcat_tool_call>get_weather<longcat_arg_key>city</longcat_arg_key><longcat_arg_value>Tok";
        let f = run(out, None)[0].failure().unwrap().clone();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, out.len()));
        let out = "<longcat_tool_call>f<longcat_arg_key>a</longcat_arg_key><longcat_arg_value>1<longcat_arg_key>b</longcat_arg_key><longcat_arg_value>2</longcat_arg_value></longcat_tool_call>";
        assert_eq!(
            run(out, None)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
    }

    #[test]
    fn json_bodies_and_glm_tags_are_other_modes() {
        assert!(
            run(
                "<longcat_tool_call>{\"name\": \"f\", \"arguments\": {}}</longcat_tool_call>",
                None
            )
            .is_empty()
        );
        assert!(
            run(
                "<tool_call>f<arg_key>a</arg_key><arg_value>1</arg_value></tool_call>",
                None
            )
            .is_empty()
        );
    }

    #[test]
    fn reasoning_only() {
        let out = "<think><longcat_tool_call>f</longcat_tool_call></think>Done.";
        let c = run(out, None);
        assert_eq!(c[0].source, Source::OutputReasoning);
    }
}
