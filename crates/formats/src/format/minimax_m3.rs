//! `minimax_m3`: MiniMax-M3 element invokes, namespaced or not.
//!
//! # Wire format
//!
//! ```text
//! ]<]minimax[>[<tool_call>
//! ]<]minimax[>[<invoke name="get_weather">
//! ]<]minimax[>[<city>Seattle]<]minimax[>[</city>
//! ]<]minimax[>[<days>5]<]minimax[>[</days>
//! ]<]minimax[>[</invoke>
//! ]<]minimax[>[</tool_call>
//! ```
//!
//! gives `get_weather` with `{"city": "Seattle", "days": 5}` when the schema
//! types `days` as an integer (else `"5"`). Derived from vLLM's reference
//! parser (`vllm-project/vllm`, `vllm/tool_parsers/`, `MinimaxM3ToolParser`,
//! its Python fallback: the M3 chat template prefixes every tag with the
//! literal namespace string `]<]minimax[>[`, which the parser removes before
//! reading `<invoke>` elements) and the M3 chat template's tool-call
//! rendering.
//!
//! Where it differs from MiniMax-M2 ([`crate::format::minimax_m2`]): the block is
//! `<tool_call>`, not `<minimax:tool_call>`, and each argument is an element
//! named by its key (`<city>…</city>`) instead of `<parameter name="city">`.
//!
//! - The namespace token may stand before any tag, or not at all: the same
//!   calls written without it (`<tool_call><invoke name="f"><city>…`, what a
//!   stack that strips it passes on) read the same.
//! - Values are raw text typed by the tool's schema like `qwen_xml` (SPEC
//!   §9). A value holding elements of its own is read as vLLM reads it
//!   where the schema types the argument as an object or an array: children
//!   all `<item>` are a list, other children an object keyed by their tags,
//!   a leaf its text with surrounding whitespace removed, kept a string
//!   (`elements`). Elsewhere, and where the nesting is broken (a closer that
//!   does not match, a child given twice, text beside children), it is
//!   `malformed`: never a call run with a value guessed from markup.
//! - Invokes count only inside `<tool_call>`; a block whose closer is
//!   missing runs to the end of the output, and an invoke cut off there is
//!   `truncated`.

use super::prelude::*;
use crate::families::configured::{Config, Configured};
use crate::families::tagged::invoke::Syntax;
use super::hermes::{CLOSE, OPEN};
use super::minimax_m2::XML;
use super::xml_call::CITY_END;

/// The `minimax_m3` extractor: the invoke engine with element parameters and
/// MiniMax-M3's namespace token.
pub(crate) const MINIMAX_M3: Configured = Configured {
    example: "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">\n]<]minimax[>[<city>Antwerp]<]minimax[>[</city>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>",
    describe: "MiniMax-M3: ]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"f\">]<]minimax[>[<k>v]<]minimax[>[</k>]<]minimax[>[</invoke>]<]minimax[>[</tool_call> (the namespace token optional); values typed by the tool schema",
    config: Config::Invoke(Syntax {
        mode: "minimax_m3",
        param: "<",
        param_end: "</",
        block: Some((OPEN, CLOSE)),
        element_params: true,
        ns: Some(NS),
        ..XML
    }),
};

/// The namespace token of MiniMax-M3's tags.
const NS: &str = "]<]minimax[>[";

/// The `minimax_m3` format.
pub(crate) const FORMAT: Def = Def {
    position: 210,
    extractor: || Box::new(MINIMAX_M3),
    group: Group::Tagged,
    models: &["minimax-m3"],
    bare_reader: false,
    profile: None,
    row: Format {
        name: "minimax_m3",
        families: "MiniMax-M3",
        engine: Engine::TaggedParameters,
        opener: cat!(NS, OPEN, NS, XML.invoke, "name=\"NAME\">"),
        separator: Some(cat!(NS, "<KEY>")),
        closers: &[
            cat!(NS, CITY_END),
            cat!(NS, XML.invoke_end),
            cat!(NS, CLOSE),
        ],
        blocks: &[(OPEN, CLOSE)],
        parameter: Some((cat!(NS, "<KEY>"), cat!(NS, "</KEY>"))),
        openers: Some(&[NS, OPEN, XML.invoke]),
        triggers: None,
        stop_token: None,
        payload: PayloadKind::TaggedValues,
        conventions: "name attribute on <invoke>; one <KEY>v</KEY> element per argument; the ]<]minimax[>[ token before a tag is optional; values typed by the tool schema; nested elements are not read (malformed)",
    },
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::families::tagged::testutil::{one_type, typed};
    use crate::input::ParamTypes;
    use serde_json::json;
    use toolgate_core::{Candidate, FailureKind, Source};

    fn run(out: &str, pt: Option<&ParamTypes>) -> Vec<Candidate> {
        typed(&MINIMAX_M3, out, pt)
    }

    fn days_int() -> ParamTypes {
        one_type("get_weather", "days", "integer")
    }

    #[test]
    fn namespaced_and_plain_forms_read_alike() {
        let pt = days_int();
        let ns = "Checking.]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">]<]minimax[>[<city>Seattle]<]minimax[>[</city>]<]minimax[>[<days>5</days>\n]<]minimax[>[</invoke>\n]<]minimax[>[</tool_call>";
        let plain = "<tool_call>\n<invoke name=\"get_weather\">\n<city>Seattle</city>\n<days>5</days>\n</invoke>\n</tool_call>";
        for out in [ns, plain] {
            let c = run(out, Some(&pt));
            assert_eq!(c.len(), 1, "{out}");
            assert_eq!(
                json!(c[0].call().unwrap().arguments),
                json!({"city": "Seattle", "days": 5})
            );
            assert_eq!(c[0].source, Source::Output);
        }
        assert_eq!(run(plain, None)[0].call().unwrap().arguments["days"], "5");
    }

    #[test]
    fn parallel_and_empty_invokes() {
        let out = "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"a\">]<]minimax[>[</invoke>]<]minimax[>[<invoke name=\"b\">]<]minimax[>[<q>x</q>]<]minimax[>[</invoke>]<]minimax[>[</tool_call>";
        let c = run(out, None);
        assert_eq!(c.len(), 2);
        assert!(c[0].call().unwrap().arguments.is_empty());
        assert_eq!(c[1].call().unwrap().arguments["q"], "x");
    }

    #[test]
    fn cut_unclosed_nested_and_foreign() {
        let out = "]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"f\">]<]minimax[>[<city>Sea";
        let f = run(out, None)[0].failure().unwrap().clone();
        assert_eq!((f.kind, f.offset), (FailureKind::Truncated, out.len()));
        let out = "<tool_call><invoke name=\"f\"><city>Sea</invoke></tool_call>";
        assert_eq!(
            run(out, None)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
        // Nested values are not read, never guessed.
        let out =
            "<tool_call><invoke name=\"f\"><cities><item>a</item></cities></invoke></tool_call>";
        assert_eq!(
            run(out, None)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
        // MiniMax-M2's parameters and bare invokes are other formats' calls.
        assert!(
            run(
                "<minimax:tool_call><invoke name=\"f\"></invoke></minimax:tool_call>",
                None
            )
            .is_empty()
        );
        assert!(run("I would write <invoke name=\"f\"></invoke> here.", None).is_empty());
        let out = "<tool_call><invoke name=\"f\"><parameter name=\"k\">v</parameter></invoke></tool_call>";
        assert_eq!(
            run(out, None)[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
    }

    #[test]
    fn nested_elements_read_where_the_schema_types_an_object_or_array() {
        // vLLM's MinimaxM3ToolParser: children all `<item>` are a list, other
        // children an object keyed by their tags, a leaf its stripped text.
        let mut pt = one_type("plan", "stops", "array");
        pt.tools
            .get_mut("plan")
            .unwrap()
            .insert("where".into(), vec!["object".into()]);
        let ns = NS;
        let out = format!(
            "{ns}<tool_call>{ns}<invoke name=\"plan\">{ns}<stops>{ns}<item>Paris{ns}</item>{ns}<item> Lyon \n{ns}</item>{ns}</stops>{ns}<where>\n{ns}<city>Nice{ns}</city>{ns}<zip>06000{ns}</zip>{ns}<tags>{ns}<item>sea{ns}</item>{ns}</tags>\n{ns}</where>{ns}</invoke>{ns}</tool_call>"
        );
        let c = run(&out, Some(&pt));
        assert_eq!(
            json!(c[0].call().unwrap().arguments),
            json!({"stops": ["Paris", "Lyon"], "where": {"city": "Nice", "zip": "06000", "tags": ["sea"]}})
        );
        // Without the namespace token, the same.
        let plain = out.replace(NS, "");
        assert_eq!(
            json!(run(&plain, Some(&pt))[0].call().unwrap().arguments),
            json!({"stops": ["Paris", "Lyon"], "where": {"city": "Nice", "zip": "06000", "tags": ["sea"]}})
        );
        // A string parameter holding elements is still not read.
        let pt_str = one_type("plan", "stops", "string");
        let out =
            "<tool_call><invoke name=\"plan\"><stops><item>a</item></stops></invoke></tool_call>";
        assert_eq!(
            run(out, Some(&pt_str))[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
    }

    #[test]
    fn broken_nested_elements_are_malformed_never_guessed() {
        let pt = one_type("f", "v", "object");
        for body in [
            "<a>1</b>",         // a closer that does not match
            "<a><b>1</b>",      // an element left open
            "<a>1</a><a>2</a>", // a child given twice
            "x<a>1</a>",        // text beside elements
            "<a x=\"1\">1</a>", // not `<NAME>`
            "</a>",             // closes nothing
        ] {
            let out = format!(
                "<tool_call><invoke name=\"f\"><v>{body}</v></invoke></tool_call><tool_call><invoke name=\"g\"></invoke></tool_call>"
            );
            let c = run(&out, Some(&pt));
            assert_eq!(
                c[0].failure().unwrap().kind,
                FailureKind::Malformed,
                "{body}"
            );
            // The next call still reads.
            assert_eq!(c[1].call().unwrap().name, "g", "{body}");
        }
        // Deep nesting is capped like a JSON payload, without recursion.
        let depth = crate::jsonread::MAX_DEPTH + 1;
        let body = "<a>".repeat(depth) + &"</a>".repeat(depth);
        let out = format!("<tool_call><invoke name=\"f\"><v>{body}</v></invoke></tool_call>");
        let f = run(&out, Some(&pt))[0].failure().unwrap().clone();
        assert_eq!(f.kind, FailureKind::Malformed);
        assert!(f.message.contains("deeper"), "{}", f.message);
        let body = "<a>".repeat(100_000);
        let out = format!("<tool_call><invoke name=\"f\"><v>{body}</v></invoke></tool_call>");
        assert_eq!(
            run(&out, Some(&pt))[0].failure().unwrap().kind,
            FailureKind::Malformed
        );
    }

    #[test]
    fn reasoning_only() {
        let out = "<think>]<]minimax[>[<tool_call>]<]minimax[>[<invoke name=\"f\">]<]minimax[>[</invoke>]<]minimax[>[</tool_call></think>done";
        assert_eq!(run(out, None)[0].source, Source::OutputReasoning);
    }
}
