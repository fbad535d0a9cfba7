//! Shapes from SGLang, SMG's `tool_parser` and llama.cpp that are newer than
//! the peer corpus (`../shared/corpora/peers`: SGLang at cd6efcb9, llama.cpp
//! at d8a24cce) or missing from it, re-typed with our own values (wire shape
//! only), each judged the way `auto` judges the model that writes it: the
//! model name picks the mode (`mode_for_model`), and that mode's strict and
//! lenient labels and strict calls are asserted.
//!
//! Sources (read at the stop-48 survey):
//! - SGLang `python/sglang/srt/function_call/deepseekv41_detector.py` and
//!   `test/registered/unit/function_call/test_deepseekv41_detector.py`;
//!   SMG `crates/tool_parser/tests/tool_parser_deepseek_v41.rs` (DeepSeek
//!   V4.1's spaced DSML tags);
//! - SGLang `gigachat35_detector.py` and llama.cpp
//!   `models/templates/GigaChat3.5.jinja` (GigaChat 3.5's GCML);
//! - SGLang's `step3p5` parser (its Qwen3-Coder detector) and llama.cpp
//!   `models/templates/StepFun3.7-Flash.jinja` (StepFun 3.5 / 3.7 write
//!   Qwen3-Coder XML, after a `<think>` the template opened);
//! - llama.cpp `models/templates/Kimi-K3.jinja` and xgrammar's `kimi_k3`
//!   structural tag (the call's arguments as one JSON object in
//!   `<|open|>json type="object"<|sep|>` … `<|close|>json<|sep|>`);
//! - SGLang `test_malformed_tool_call_payloads.py`,
//!   `test_zero_argument_tool_call.py`, `trinity_detector.py`,
//!   `ling3_detector.py`, `test_gemma4_detector_string_delimiters.py`; SMG `tool_parser_undeclared_names.rs`: where the
//!   peer extracts a call toolgate refuses, the case says why (fail-closed).
#![allow(clippy::unwrap_used)]

mod common;

use common::Want;
use serde_json::{Value, json};
use toolgate_core::Label;
use toolgate_validator::{Engine, Profile};

use Label::{MalformedJson, NoCall, Pass, WrongTool};

/// One re-typed case.
struct Case {
    /// Where the shape comes from, and what it pins.
    source: &'static str,
    /// The model that writes it; `None`: the mode is given.
    model: Option<&'static str>,
    mode: &'static str,
    output: &'static str,
    strict: Label,
    lenient: Label,
    /// The strict calls, `[[name, arguments], …]`, when the mode parses.
    calls: Option<Value>,
}

fn tools() -> Value {
    let tool = |name: &str, props: Value| {
        json!({"type": "function", "function": {"name": name,
            "parameters": {"type": "object", "properties": props}}})
    };
    json!([
        tool(
            "get_weather",
            json!({"city": {"type": "string"}, "days": {"type": "integer"}})
        ),
        tool("get_time", json!({})),
        tool(
            "lookup",
            json!({"query": {"type": "string"}, "limit": {"type": "integer"}, "flags": {"type": "array"}})
        ),
    ])
}

fn cases() -> Vec<Case> {
    let c = |source, model, mode, output, strict, lenient, calls| Case {
        source,
        model,
        mode,
        output,
        strict,
        lenient,
        calls,
    };
    vec![
        // DeepSeek V4.1: the DSML grammar with a space before each tag name.
        c(
            "sglang deepseekv41 / smg tool_parser_deepseek_v41: two spaced invokes after prose",
            Some("deepseek-ai/DeepSeek-V4.1-Flash"),
            "deepseek_v41",
            "Let me check.\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"city\" string=\"true\">Lyon</｜DSML｜ parameter>\n<｜DSML｜ parameter name=\"days\" string=\"false\">2</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n<｜DSML｜ invoke name=\"lookup\">\n<｜DSML｜ parameter name=\"query\" string=\"true\">{\"k\": 1}</｜DSML｜ parameter>\n<｜DSML｜ parameter name=\"flags\" string=\"false\">[2, false, null]</｜DSML｜ parameter>\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
            Pass,
            Pass,
            Some(json!([
                ["get_weather", {"city": "Lyon", "days": 2}],
                ["lookup", {"query": "{\"k\": 1}", "flags": [2, false, null]}]
            ])),
        ),
        c(
            "smg tool_parser_deepseek_v41: a JSON invoke body",
            Some("deepseek-v41-flash"),
            "deepseek_v41",
            "\n\n<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">{\"city\": \"Lyon\"}</｜DSML｜ invoke>\n</｜DSML｜ calls>",
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        c(
            "smg tool_parser_deepseek_v41: V4's unspaced tags are not a V4.1 call",
            Some("deepseek-ai/DeepSeek-V4.1-Flash"),
            "deepseek_v41",
            "<｜DSML｜tool_calls>\n<｜DSML｜invoke name=\"get_time\">\n</｜DSML｜invoke>\n</｜DSML｜tool_calls>",
            NoCall,
            NoCall,
            None,
        ),
        c(
            "smg tool_parser_deepseek_v41: V4.1's spaced tags are not a V4 call",
            Some("deepseek-ai/DeepSeek-V4-Flash"),
            "deepseek_dsml",
            "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_time\">\n</｜DSML｜ invoke>\n</｜DSML｜ calls>",
            NoCall,
            NoCall,
            None,
        ),
        c(
            "deepseek_v41: output cut inside a parameter",
            Some("deepseek-v4.1"),
            "deepseek_v41",
            "<｜DSML｜ calls>\n<｜DSML｜ invoke name=\"get_weather\">\n<｜DSML｜ parameter name=\"city\" string=\"true\">Ly",
            Label::Truncation,
            Label::Truncation,
            None,
        ),
        // GigaChat 3.5: DSML's grammar under the GCML marker.
        c(
            "sglang gigachat35 / GigaChat3.5.jinja: one GCML invoke",
            Some("ai-sage/GigaChat3.5-10B-A1.8B"),
            "gigachat35",
            "Сейчас узнаю.\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n<｜GCML｜parameter name=\"city\" string=\"true\">Казань</｜GCML｜parameter>\n<｜GCML｜parameter name=\"days\" string=\"false\">5</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Казань", "days": 5}]])),
        ),
        c(
            "sglang gigachat35: an invoke before the block is not read (the detector reads after the opener only)",
            Some("gigachat3.5"),
            "gigachat35",
            "<｜GCML｜invoke name=\"get_time\">\n</｜GCML｜invoke>\nno block",
            NoCall,
            NoCall,
            None,
        ),
        c(
            "vllm gigachat35 reasoning test: the Reasoning template opens <think>; the call after the lone </think> runs",
            Some("ai-sage/GigaChat3.5-432B-A28B"),
            "gigachat35",
            "Need the weather tool.</think>\n\n<｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_weather\">\n<｜GCML｜parameter name=\"city\" string=\"true\">Омск</｜GCML｜parameter>\n</｜GCML｜invoke>\n</｜GCML｜tool_calls>",
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Омск"}]])),
        ),
        c(
            "gigachat35: a GCML block written before the lone </think> is reasoning",
            Some("gigachat3.5"),
            "gigachat35",
            "Maybe <｜GCML｜tool_calls>\n<｜GCML｜invoke name=\"get_time\">\n</｜GCML｜invoke>\n</｜GCML｜tool_calls> no.</think>\n\nIt is noon.",
            NoCall,
            NoCall,
            None,
        ),
        c(
            "gigachat 3 keeps its own format",
            Some("ai-sage/GigaChat3-10B-A1.8B"),
            "gigachat",
            "<|function_call|>{\"name\": \"get_time\", \"arguments\": {}}",
            Pass,
            Pass,
            Some(json!([["get_time", {}]])),
        ),
        // StepFun 3.5 / 3.7: Qwen3-Coder XML, not Step-3's steptml.
        c(
            "sglang step3p5: Qwen3-Coder XML",
            Some("stepfun-ai/Step-3.5-Flash"),
            "qwen_xml",
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nLyon\n</parameter>\n</function>\n</tool_call>",
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        c(
            "StepFun3.7-Flash.jinja: the call after the </think> of a template-opened block",
            Some("stepfun-ai/Step-3.7-Flash"),
            "qwen_xml",
            "The user wants Lyon.\n</think>\n<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
            Pass,
            Pass,
            Some(json!([["get_weather", {"days": 3}]])),
        ),
        // Kimi K3: arguments as one JSON object in a JSON block.
        c(
            "Kimi-K3.jinja / xgrammar kimi_k3 structural tag: the raw JSON argument block",
            Some("moonshotai/Kimi-K3"),
            "kimi_k3",
            "<|open|>tools<|sep|><|open|>call tool=\"lookup\" index=\"1\"<|sep|><|open|>json type=\"object\"<|sep|>{\"query\": \"k3\", \"limit\": 4}<|close|>json<|sep|><|close|>call<|sep|><|close|>tools<|sep|>",
            Pass,
            Pass,
            Some(json!([["lookup", {"query": "k3", "limit": 4}]])),
        ),
        c(
            "kimi_k3: text after the JSON block in the call",
            Some("kimi-k3"),
            "kimi_k3",
            "<|open|>tools<|sep|><|open|>call tool=\"lookup\"<|sep|><|open|>json type=\"object\"<|sep|>{\"query\": \"k3\"}<|close|>json<|sep|>{\"limit\": 1}<|close|>call<|sep|><|close|>tools<|sep|>",
            MalformedJson,
            MalformedJson,
            None,
        ),
        c(
            "kimi_k3: a JSON block that is not closed before the call's closer",
            Some("kimi-k3"),
            "kimi_k3",
            "<|open|>tools<|sep|><|open|>call tool=\"lookup\"<|sep|><|open|>json type=\"object\"<|sep|>{\"query\": \"k3\"}<|close|>call<|sep|><|close|>tools<|sep|>",
            MalformedJson,
            MalformedJson,
            None,
        ),
        c(
            "kimi_k3: the output ends inside the JSON block",
            Some("kimi-k3"),
            "kimi_k3",
            "<|open|>tools<|sep|><|open|>call tool=\"lookup\"<|sep|><|open|>json type=\"object\"<|sep|>{\"query\": \"k",
            Label::Truncation,
            Label::Truncation,
            None,
        ),
        // Peers that extract what toolgate refuses (toolgate right: fail-closed).
        c(
            "sglang test_malformed_tool_call_payloads: a valid call beside a non-object element; SGLang keeps the valid call, toolgate rejects the whole output (one malformed element, nothing executes)",
            None,
            "hermes",
            "<tool_call>[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}, \"junk\"]</tool_call>",
            MalformedJson,
            MalformedJson,
            None,
        ),
        c(
            "sglang test_malformed_tool_call_payloads: an array of non-objects",
            None,
            "hermes",
            "<tool_call>[7, 8]</tool_call>",
            MalformedJson,
            MalformedJson,
            None,
        ),
        c(
            "sglang test_zero_argument_tool_call: a call without an arguments key is a call with {}",
            None,
            "hermes",
            "<tool_call>\n{\"name\": \"get_time\"}\n</tool_call>\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}\n</tool_call>",
            Pass,
            Pass,
            Some(json!([["get_time", {}], ["get_weather", {"city": "Lyon"}]])),
        ),
        c(
            "smg tool_parser_undeclared_names: SMG drops the undeclared call and runs the declared one; toolgate rejects the output (wrong_tool)",
            None,
            "mistral",
            "[TOOL_CALLS] [{\"name\": \"drop_db\", \"arguments\": {}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}]",
            WrongTool,
            WrongTool,
            None,
        ),
        c(
            "smg tool_parser_qwen_xml: at the end of a stream SMG closes a call cut after a complete parameter and emits it; toolgate labels the cut call truncation",
            None,
            "qwen_xml",
            "<tool_call><function=get_weather><parameter=city>Lyon</parameter>",
            Label::Truncation,
            Label::Truncation,
            None,
        ),
        c(
            "sglang trinity: the detector strips <think> tags and runs a call written inside reasoning; toolgate never runs a call from reasoning",
            None,
            "hermes",
            "<think>I'll call it: <tool_call>\n{\"name\": \"get_time\", \"arguments\": {}}\n</tool_call></think>Done thinking.",
            NoCall,
            NoCall,
            None,
        ),
        c(
            "sglang test_gemma4_detector_string_delimiters: a string missing its opening <|\"|> is repaired by SGLang; toolgate reads an unquoted word as no value (malformed)",
            None,
            "gemma",
            "<|tool_call>call:lookup{query:cheap flights<|\"|>}<tool_call|>",
            MalformedJson,
            MalformedJson,
            None,
        ),
        c(
            "sglang ling3: the name right before the first <arg_key>, no newline",
            None,
            "glm",
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Lyon</arg_value></tool_call>",
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        c(
            "sglang ling3: a call closed right after its name has no arguments",
            None,
            "glm",
            "<tool_call>get_time</tool_call>",
            Pass,
            Pass,
            Some(json!([["get_time", {}]])),
        ),
    ]
}

#[test]
fn newer_peer_shapes_get_the_model_profiles_labels_and_calls() {
    let engine = Engine::new(Profile::default());
    let mut wrong = Vec::new();
    for c in cases() {
        if let Some(model) = c.model {
            let by_name = toolgate_formats::mode_for_model(model).map(|m| m.0);
            if by_name != Some(c.mode) {
                wrong.push(format!(
                    "{}: {model} is judged by {by_name:?}, want {}",
                    c.source, c.mode
                ));
            }
        }
        let t = json!({"output": c.output, "tools": tools()});
        let want = Want {
            source: c.source,
            mode: c.mode,
            strict: c.strict,
            lenient: c.lenient,
            calls: c.calls.as_ref(),
        };
        wrong.extend(common::mismatch(&engine, &t, &want));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
