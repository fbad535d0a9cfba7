//! `minicpm5`: MiniCPM5 XML function elements.
//!
//! # Wire format
//!
//! ```text
//! Intro.
//! <function name="get_weather"><param name="city">上海</param><param name="date">2024-06-27</param></function>
//! <function name="noop"></function>
//! ```
//!
//! gives `get_weather` with `{"city": "上海", "date": "2024-06-27"}` and
//! `noop` with `{}`. Values are XML text: `<![CDATA[…]]>` is taken
//! literally and entities (`&lt;`, `&amp;`, `&#x4E0A;` …) are decoded, while
//! a bare `&` stays as written; then they are typed by the tool schema like
//! `qwen_xml` (SPEC §9). A parameter without `name`, or given twice, is
//! `malformed`; a `<function>` cut off at the end of the output is
//! `truncated`.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::Syntax;
use super::minimax_m2::XML;
use super::qwen_xml::{FUNCTION_END, FUNCTION_TAG};

/// The `minicpm5` extractor: the invoke engine with MiniCPM5's tokens.
pub(crate) const MINICPM5: Configured = Configured {
    example: "<function name=\"get_weather\"><param name=\"city\">Antwerp</param></function>",
    describe: "MiniCPM5: <function name=\"f\"><param name=\"k\">v</param></function>; XML text (CDATA, entities), typed by the tool schema",
    config: Config::Invoke(Syntax {
        mode: "minicpm5",
        invoke: cat!(FUNCTION_TAG, " "),
        invoke_end: FUNCTION_END,
        param: "<param ",
        param_end: "</param>",
        block: None,
        json_body: false,
        xml_text: true,
        ..XML
    }),
};

/// The `minicpm5` format.
pub(crate) const FORMAT: Def = Def {
    position: 160,
    extractor: || Box::new(MINICPM5),
    group: Group::Tagged,
    models: &["minicpm5", "minicpm-5"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "minicpm5",
        families: "MiniCPM5",
        engine: Engine::TaggedParameters,
        opener: cat!(FUNCTION_TAG, " name=\"NAME\">"),
        separator: Some("<param name=\"KEY\">"),
        closers: &["</param>", FUNCTION_END],
        blocks: &[(cat!(FUNCTION_TAG, " name="), FUNCTION_END)],
        parameter: Some(("<param name=\"KEY\">", "</param>")),
        openers: Some(&[FUNCTION_TAG]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "XML text (CDATA, entities); values typed by the tool schema",
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
        crate::families::tagged::testutil::typed(&MINICPM5, out, pt)
    }

    #[test]
    fn pass_parallel_cdata_and_entities() {
        let out = "Head\n<function name=\"get_weather\"><param name=\"city\"><![CDATA[北\n京]]></param><param name=\"note\">A &amp; B &lt;3 & more</param></function>\nTXT\n<function name=\"noop\"></function>\n";
        let c = run(out, None);
        assert_eq!(c.len(), 2);
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"city": "北\n京", "note": "A & B <3 & more"})
        );
        assert_eq!(c[1].call().unwrap().name, "noop");
    }

    #[test]
    fn typed_values_and_wrong_type_stays_string() {
        let pt = ParamTypes {
            tools: HashMap::from([(
                "sum".to_string(),
                HashMap::from([
                    ("nums".to_string(), vec!["array".to_string()]),
                    ("exact".to_string(), vec!["boolean".to_string()]),
                ]),
            )]),
        };
        let out = "<function name=\"sum\"><param name=\"nums\">[1, 2]</param><param name=\"exact\">yes</param></function>";
        assert_eq!(
            json!(run(out, Some(&pt))[0].call().unwrap().arguments),
            json!({"nums": [1, 2], "exact": "yes"})
        );
    }

    #[test]
    fn truncated_malformed_reasoning() {
        let out = "<function name=\"get_weather\"><param name=\"city\">北京</param>";
        let f = run(out, None)[0].failure().unwrap().clone();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, out.len()));
        for out in [
            "<function name=\"f\"><param>x</param></function>",
            "<function name=\"f\"><param name=\"a\">1</param><param name=\"a\">2</param></function>",
        ] {
            assert_eq!(
                run(out, None)[0].failure().unwrap().kind,
                FailureKind::Malformed,
                "{out}"
            );
        }
        // Qwen's `<function=f>` is another family.
        assert!(run("<function=f>\n</function>", None).is_empty());
        let out = "<think><function name=\"f\"></function></think>";
        assert_eq!(run(out, None)[0].source, Source::OutputReasoning);
    }
}
