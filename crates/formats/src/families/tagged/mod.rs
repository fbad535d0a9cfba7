//! Families whose calls are markup with key/value parameters or special
//! tokens around JSON. One module per wire format:
//!
//! | mode | models | shape |
//! |---|---|---|
//! | [`qwen_xml`] | Qwen3-Coder, Qwen3.5, StepFun 3.5 | `<tool_call><function=f><parameter=k>v</parameter></function></tool_call>` |
//! | [`glm`] | GLM-4.5/4.6/4.7, Poolside v1 | `<tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>` |
//! | [`kimi`] | Kimi K2 | `<\|tool_call_begin\|>functions.f:0<\|tool_call_argument_begin\|>{…}<\|tool_call_end\|>` |
//! | [`deepseek`] | DeepSeek V3, R1, V3.1 | `<｜tool▁call▁begin｜>function<｜tool▁sep｜>f` + fenced JSON, or `f<｜tool▁sep｜>{…}` |
//! | [`harmony`] | gpt-oss | `<\|channel\|>commentary to=functions.f <\|constrain\|>json<\|message\|>{…}<\|call\|>` |
//! | [`deepseek_dsml`] | DeepSeek V3.2, V4 | `<｜DSML｜invoke name="f"><｜DSML｜parameter name="k" string="true">v</｜DSML｜parameter>…` |
//! | [`minimax_m2`] | MiniMax-M2 | `<minimax:tool_call><invoke name="f"><parameter name="k">v</parameter></invoke>…` |
//! | [`hunyuan`] | Hunyuan, HY v3 | `<tool_calls><tool_call>f<tool_sep><arg_key>k</arg_key><arg_value>v</arg_value></tool_call>…` |
//! | [`step3`] | Step-3 | `<steptml:invoke name="f"><steptml:parameter name="k">v</steptml:parameter></steptml:invoke>` |
//! | [`minicpm5`] | MiniCPM5 | `<function name="f"><param name="k">v</param></function>` |
//! | [`xml_call`] | vllm-chill XML tools | `<tool_call name="f"><args><k>v</k></args></tool_call>` |
//! | [`atem`] | Muse Glimmer | `<atem:function_calls><atem:invoke name="f"><atem:parameter name="k">v</atem:parameter></atem:invoke>…` |
//! | [`longcat_xml`] | LongCat (XML arguments) | `<longcat_tool_call>f<longcat_arg_key>k</longcat_arg_key><longcat_arg_value>v</longcat_arg_value>…` |
//! | [`minimax_m3`] | MiniMax-M3 | `]<]minimax[>[<tool_call>]<]minimax[>[<invoke name="f">]<]minimax[>[<k>v]<]minimax[>[</k>…` (the namespace token optional) |
//! | [`deepseek_dsml_plain`] | DeepSeek V3.2 (marker dropped) | `<function_calls><invoke name="f"><parameter name="k" string="true">v</parameter></invoke></function_calls>` |
//! | [`seed_oss`] | Seed-OSS | `<seed:tool_call><function=f><parameter=k>v</parameter></function></seed:tool_call>` |
//! | [`hy_v4`] | HY v4 (Hunyuan 4) | `<tool_calls><tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call></tool_calls>` |
//! | [`kimi_k3`] | Kimi K3 | `<\|open\|>tools<\|sep\|><\|open\|>call tool="f" index="1"<\|sep\|><\|open\|>argument key="k" type="string"<\|sep\|>v<\|close\|>argument<\|sep\|>…` |
//!
//! XML-ish values are typed by the tool's schema (SPEC §9): a string unless
//! the schema says otherwise, then read as JSON, and left a string when they
//! do not read as that type (the validator labels `type_coercion`); one
//! leading and one trailing newline are removed. Every scanner is linear:
//! openers are found with `memchr::memmem`, and closers through a memoizing
//! finder, so a missing closer is searched for once, not once per opener.

use crate::Extractor;
use crate::families::configured::{Config, Configured};

pub(crate) mod common;
mod elements;
pub(crate) mod invoke;
pub(crate) mod name_json;
pub(crate) mod params;

pub mod atem;
pub mod deepseek;
pub mod deepseek_dsml;
pub mod glm;
pub mod harmony;
pub mod hunyuan;
pub mod kimi;
// formats-a (issue 27 item 6)
pub mod deepseek_dsml_plain;
pub mod hy_v4;
pub mod kimi_k3;
pub mod longcat_xml;
pub mod minicpm5;
pub mod minimax_m2;
pub mod minimax_m3;
pub mod qwen_xml;
pub mod seed_oss;
pub mod step3;
pub mod xml_call;

/// The `glm` row: the key/value engine ([`glm`], which also reads Hunyuan's
/// and LongCat's spellings) with GLM's tokens. Kept here, beside the list,
/// so that the engine's file does not import the configuration dispatch
/// that imports it.
const GLM: Configured = Configured {
    example: "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Antwerp</arg_value>\n</tool_call>",
    describe: "GLM-4.5/4.6/4.7: <tool_call>f<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>; values typed by the tool schema",
    config: Config::KeyValue(glm::GLM_TOKENS),
};

/// This group's modes, in replay order: the SPEC §3 modes first, then the
/// families the peer corpus adds.
pub fn all() -> Vec<Box<dyn Extractor>> {
    vec![
        Box::new(qwen_xml::QwenXml),
        Box::new(GLM),
        Box::new(kimi::KIMI),
        Box::new(deepseek::DeepSeek),
        Box::new(harmony::Harmony),
        Box::new(deepseek_dsml::DEEPSEEK_DSML),
        Box::new(minimax_m2::MINIMAX_M2),
        Box::new(hunyuan::HUNYUAN),
        Box::new(step3::STEP3),
        Box::new(minicpm5::MINICPM5),
        Box::new(xml_call::XmlCall),
        Box::new(atem::ATEM),
        Box::new(longcat_xml::LONGCAT_XML),
        // formats-a (issue 27 item 6): the formats the serving stacks added.
        Box::new(kimi_k3::KIMI_K3),
        Box::new(minimax_m3::MINIMAX_M3),
        Box::new(deepseek_dsml_plain::DEEPSEEK_DSML_PLAIN),
        Box::new(seed_oss::SEED_OSS),
        Box::new(hy_v4::HY_V4),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod testutil {
    //! Helpers for this group's unit tests.
    use crate::Extractor;
    use crate::input::{Input, ParamTypes, Strictness};
    use std::collections::HashMap;
    use toolgate_core::Candidate;

    /// The strict candidates of `out`, values typed by `pt` when given.
    pub fn typed(e: &dyn Extractor, out: &str, pt: Option<&ParamTypes>) -> Vec<Candidate> {
        let mut input = Input::new(out);
        input.param_types = pt;
        e.extract(&input, Strictness::Strict)
    }

    /// Asserts that the first candidate is `truncated` at the end of `out`.
    pub fn cut_at_end(c: &[Candidate], out: &str) {
        let f = c[0].failure().unwrap();
        assert_eq!(
            (f.kind, f.offset),
            (toolgate_core::FailureKind::Truncated, out.len()),
            "{out}"
        );
    }

    /// Schemas typing `key` of `tool` as `ty`.
    pub fn one_type(tool: &str, key: &str, ty: &str) -> ParamTypes {
        ParamTypes {
            tools: HashMap::from([(
                tool.to_string(),
                HashMap::from([(key.to_string(), vec![ty.to_string()])]),
            )]),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::input::{Input, Strictness};
    use proptest::prelude::*;

    /// Pieces of every tagged syntax, so random outputs hit the scanners'
    /// corners (cut tags, missing closers, nesting, reasoning markers).
    const PIECES: [&str; 58] = [
        "<atem:function_calls>",
        "<atem:invoke name=\"f\">",
        "<atem:parameter name=\"a\">",
        "</atem:parameter>",
        "<longcat_tool_call>",
        "<longcat_arg_key>",
        "<tool_call>",
        "</tool_call>",
        "<function=f>",
        "<function=",
        "</function>",
        "<parameter=a>",
        "</parameter>",
        "<arg_key>",
        "</arg_key>",
        "<arg_value>",
        "</arg_value>",
        "<tool_sep>",
        "<|tool_call_begin|>",
        "functions.f:0",
        "<|tool_call_argument_begin|>",
        "<|tool_call_end|>",
        "<｜tool▁call▁begin｜>",
        "<｜tool▁sep｜>",
        "<｜tool▁call▁end｜>",
        "function",
        "```json\n",
        "```",
        "<|channel|>commentary to=functions.f",
        "<|message|>",
        "<|call|>",
        "<|end|>",
        "<|start|>",
        "<｜DSML｜invoke name=\"f\"",
        "</｜DSML｜invoke>",
        "<｜DSML｜parameter name=\"k\" string=\"false\">",
        "</｜DSML｜parameter>",
        "<minimax:tool_call>",
        "<invoke name=\"f\">",
        "<parameter name=\"k\">",
        "<tool_call name=\"f\">",
        "<args>",
        "<think>",
        "</think>",
        "{\"a\": [1, \"x\"]}",
        "é\n ",
        // formats-a
        "<|open|>tools<|sep|>",
        "<|open|>call tool=\"f\"<|sep|>",
        "<|open|>argument key=\"k\" type=\"number\"<|sep|>",
        "<|close|>argument<|sep|>",
        "]<]minimax[>[",
        "<city>",
        "</city>",
        "<item>",
        "<function_calls>",
        "<parameter name=\"k\" string=\"true\">",
        "<seed:tool_call>",
        "</seed:tool_call>",
    ];

    fn run_all(out: &str) -> usize {
        let mut input = Input::new(out);
        input.reasoning_field = Some(out);
        let mut n = 0;
        for m in all() {
            for s in [Strictness::Strict, Strictness::Lenient] {
                for c in m.extract(&input, s) {
                    assert!(c.span.start <= c.span.end, "{}: {:?}", m.name(), c.span);
                    assert!(c.is_live() || c.source.is_reasoning());
                    n += 1;
                }
            }
        }
        n
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        #[test]
        fn never_panics_on_token_soup(idx in proptest::collection::vec(0usize..PIECES.len(), 0..40)) {
            let out: String = idx.iter().map(|i| PIECES[*i]).collect();
            run_all(&out);
        }

        #[test]
        fn never_panics_on_arbitrary_text(out in "\\PC{0,200}") {
            run_all(&out);
        }
    }

    #[test]
    fn registry_order_is_stable() {
        let names: Vec<String> = all().iter().map(|e| e.name().to_string()).collect();
        assert_eq!(
            names,
            [
                "qwen_xml",
                "glm",
                "kimi",
                "deepseek",
                "harmony",
                "deepseek_dsml",
                "minimax_m2",
                "hunyuan",
                "step3",
                "minicpm5",
                "xml_call",
                "atem",
                "longcat_xml",
                // formats-a
                "kimi_k3",
                "minimax_m3",
                "deepseek_dsml_plain",
                "seed_oss",
                "hy_v4",
            ]
        );
    }
}
