//! `deepseek_dsml`: DeepSeek V3.2 / V4 DSML calls (the `｜` is U+FF5C).
//!
//! # Wire format
//!
//! ```text
//! <｜DSML｜function_calls>
//! <｜DSML｜invoke name="search">
//! <｜DSML｜parameter name="query" string="true">WebNav benchmark</｜DSML｜parameter>
//! <｜DSML｜parameter name="topn" string="false">10</｜DSML｜parameter>
//! </｜DSML｜invoke>
//! <｜DSML｜invoke name="submit"/>
//! </｜DSML｜function_calls>
//! ```
//!
//! gives `search` with `{"query": "WebNav benchmark", "topn": 10}` and
//! `submit` with `{}`. V4 writes `<｜DSML｜tool_calls>` for the block; the
//! block tags are not needed to find an invoke (the `<｜DSML｜` prefix is
//! unique).
//!
//! - `string="true"`: the text is a string, whatever the schema says;
//!   `string="false"`: the text is read as JSON (the lenient variant applies
//!   the JSON repairs), and text that is not JSON stays a string (the
//!   validator labels it); no attribute: typed by the schema like
//!   `qwen_xml`. One leading and one trailing newline are removed.
//! - An invoke body may be a JSON object instead of parameters
//!   (`<｜DSML｜invoke name="f">{"city": "SF"}</｜DSML｜invoke>`).
//! - A parameter named `arguments` stays a parameter called `arguments`:
//!   nothing is unwrapped or guessed.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::{Syntax, Typing};
use super::minimax_m2::XML;

/// The `deepseek_dsml` extractor: the invoke engine with DeepSeek DSML's tokens.
pub(crate) const DEEPSEEK_DSML: Configured = Configured {
    example: "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter name=\"city\" string=\"true\">Antwerp</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
    describe: "DeepSeek V3.2/V4 DSML: <｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"k\" string=\"true|false\">v</｜DSML｜parameter></｜DSML｜invoke>",
    config: Config::Invoke(Syntax {
        mode: "deepseek_dsml",
        invoke: "<｜DSML｜invoke ",
        invoke_end: "</｜DSML｜invoke>",
        param: "<｜DSML｜parameter ",
        param_end: "</｜DSML｜parameter>",
        block: None,
        typing: Typing::StringAttr,
        json_body: true,
        xml_text: false,
        ..XML
    }),
};

/// The `deepseek_dsml` format.
pub(crate) const FORMAT: Def = Def {
    position: 120,
    extractor: || Box::new(DEEPSEEK_DSML),
    group: Group::Tagged,
    models: &["deepseek-v3.2", "deepseek-v4"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "deepseek_dsml",
        families: "DeepSeek V3.2 / V4",
        engine: Engine::TaggedParameters,
        opener: "<｜DSML｜function_calls><｜DSML｜invoke name=\"NAME\">",
        separator: Some("<｜DSML｜parameter name=\"KEY\" string=\"true|false\">"),
        closers: &[
            "</｜DSML｜parameter>",
            "</｜DSML｜invoke>",
            "</｜DSML｜function_calls>",
        ],
        blocks: &[("<｜DSML｜function_calls>", "</｜DSML｜function_calls>")],
        parameter: Some((
            "<｜DSML｜parameter name=\"KEY\" string=\"true\">",
            "</｜DSML｜parameter>",
        )),
        openers: Some(&["<｜DSML｜"]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "string=\"false\" values are JSON",
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::Extractor;
    use crate::input::ParamTypes;
    use crate::input::{Input, Strictness};
    use serde_json::json;
    use std::collections::HashMap;
    use toolgate_core::Candidate;
    use toolgate_core::{FailureKind, Repair, Source};

    fn run(out: &str, pt: Option<&ParamTypes>, s: Strictness) -> Vec<Candidate> {
        let mut input = Input::new(out);
        input.param_types = pt;
        DEEPSEEK_DSML.extract(&input, s)
    }

    #[test]
    fn string_attribute_decides_the_type() {
        let out = "Sure.\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"search\">\n<｜DSML｜parameter name=\"query\" string=\"true\">42</｜DSML｜parameter>\n<｜DSML｜parameter name=\"topn\" string=\"false\">10</｜DSML｜parameter>\n<｜DSML｜parameter name=\"cfg\" string=\"false\">{\"a\":[1]}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c.len(), 1);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"query": "42", "topn": 10, "cfg": {"a": [1]}})
        );
        assert_eq!(c[0].source, Source::Output);
    }

    #[test]
    fn parallel_self_closing_and_json_body() {
        let out = "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"a\">\n{\"city\": \"SF\"}\n</｜DSML｜invoke>\n<｜DSML｜invoke name=\"submit\"/>\n<｜DSML｜invoke name=\"b\">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].call().unwrap().arguments["city"], "SF");
        assert!(c[1].call().unwrap().arguments.is_empty());
        assert_eq!(c[2].call().unwrap().name, "b");
    }

    #[test]
    fn schema_types_untagged_values_and_wrong_type_stays_string() {
        let pt = ParamTypes {
            tools: HashMap::from([(
                "f".to_string(),
                HashMap::from([("n".to_string(), vec!["integer".to_string()])]),
            )]),
        };
        let out = "<｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"n\">7</｜DSML｜parameter><｜DSML｜parameter name=\"m\" string=\"false\">not json</｜DSML｜parameter></｜DSML｜invoke>";
        let c = run(out, Some(&pt), Strictness::Strict);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"n": 7, "m": "not json"})
        );
        let out = "<｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"n\">seven</｜DSML｜parameter></｜DSML｜invoke>";
        assert_eq!(
            run(out, Some(&pt), Strictness::Strict)[0]
                .call()
                .unwrap()
                .arguments["n"],
            "seven"
        );
    }

    #[test]
    fn lenient_json_values_record_repairs() {
        let out = "<｜DSML｜invoke name=\"f\"><｜DSML｜parameter name=\"o\" string=\"false\">{'a': 1}</｜DSML｜parameter></｜DSML｜invoke>";
        assert_eq!(
            run(out, None, Strictness::Strict)[0]
                .call()
                .unwrap()
                .arguments["o"],
            "{'a': 1}"
        );
        let c = run(out, None, Strictness::Lenient);
        assert_eq!(c[0].call().unwrap().arguments["o"], json!({"a": 1}));
        assert_eq!(c[0].repairs, vec![Repair::SingleQuotes]);
    }

    #[test]
    fn truncated_and_malformed() {
        let out = "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n<｜DSML｜parameter name=\"q\" string=\"true\">Tok";
        let c = run(out, None, Strictness::Strict);
        let f = c[0].failure().unwrap();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, out.len()));
        assert_eq!(c[0].name.as_deref(), Some("f"));
        let out = "<｜DSML｜invoke name=\"f\"><｜DSML｜parameter string=\"true\">x</｜DSML｜parameter></｜DSML｜invoke><｜DSML｜invoke name=\"g\"/>";
        let c = run(out, None, Strictness::Strict);
        assert_eq!(c[0].failure().unwrap().kind, FailureKind::Malformed);
        assert_eq!(c[1].call().unwrap().name, "g");
    }

    #[test]
    fn reasoning_only() {
        let out = "maybe <｜DSML｜invoke name=\"f\"/></think>no call";
        assert_eq!(
            run(out, None, Strictness::Strict)[0].source,
            Source::OutputReasoning
        );
    }
}
