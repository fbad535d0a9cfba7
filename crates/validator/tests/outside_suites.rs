//! Issue 22, "go looking for the next ones": cases re-typed (wire shape
//! only, our own values) from tool-call parsing tests and recorded traffic of
//! projects that are not in `../shared/corpora/peers`, each run through the
//! matching toolgate mode, with the label toolgate gives strict and lenient
//! and the calls it reads. Where toolgate's judgement differs from the outside
//! project on purpose, the case says so and CONFORMANCE.md ("Outside suites
//! (issue 22)") says why.
//!
//! Sources:
//! - huggingface/transformers `tests/utils/test_chat_parsing.py` and
//!   `tests/utils/test_chat_parsing_utils.py` (response templates: Cohere,
//!   ERNIE, gpt-oss, SmolLM3, Qwen3-Coder, Gemma 4);
//! - theroyallab/tabbyAPI `tests/tool_parser_test.py`,
//!   `tests/test_xml_tool_calls.py` (fenced JSON, Qwen3-Coder XML, GLM-4.5);
//! - huggingface/text-generation-inference
//!   `integration-tests/models/__snapshots__/test_tools_llama/*.json`
//!   (recorded responses of TGI 1.4, 2.x and 3.x);
//! - waybarrios/vllm-mlx `tests/test_gpt_oss_tool_parsing.py` (harmony),
//!   `tests/test_gemma4_tool_parser.py`, `tests/test_harmony_parsers.py`;
//! - ollama/ollama `tools/tools_test.go` (`TestParseToolCalls`: Mistral,
//!   Command R+, FireFunction, Llama-3-Groq, xLAM, Qwen 2.5 outputs);
//! - edge cases the same suites exercise (unicode, escapes, nested JSON,
//!   empty arguments, whitespace, parallel calls, text around, cut-offs).
#![allow(clippy::unwrap_used)]

mod common;

use common::Want;
use serde_json::{Value, json};
use toolgate_core::Label;
use toolgate_validator::{Engine, Profile};

/// One outside case.
struct Case {
    /// `project:file:test` it was re-typed from (or what it probes).
    source: &'static str,
    mode: &'static str,
    output: &'static str,
    /// Native `tool_calls`, when the case is a recorded response.
    tool_calls: Option<Value>,
    /// Names of the expected calls; `Some([])` = no call expected.
    expect: Option<&'static [&'static str]>,
    strict: Label,
    lenient: Label,
    /// The calls the strict mode reads (name, arguments), when it parses.
    calls: Option<Value>,
}

fn tools() -> Value {
    let obj = |props: Value| json!({"type": "object", "properties": props});
    let tool = |name: &str, params: Value| json!({"type": "function", "function": {"name": name, "parameters": params}});
    json!([
        tool(
            "get_weather",
            obj(json!({
            "city": {"type": "string"}, "days": {"type": "integer"},
            "date": {"type": "string"}, "units": {"type": "string"},
            "location": {"type": "string"}, "format": {"enum": ["celsius", "fahrenheit"]},
            "locations": {"type": "array", "items": {"type": "object"}},
            "opts": {"type": "object"}}))
        ),
        tool("now", obj(json!({}))),
        tool(
            "simple_tool",
            obj(json!({"temperature_format": {"type": "string"}}))
        ),
        tool("greet_user", obj(json!({"greeting": {"type": "string"}}))),
        tool(
            "search",
            obj(json!({"query": {"type": "string"}, "q": {"type": "string"}}))
        ),
        tool(
            "calculate_sum",
            obj(json!({"numbers": {"type": "array"}, "precision": {"type": "integer"}}))
        ),
        tool(
            "foo",
            obj(json!({
            "bool_value": {"type": "boolean"}, "list_value": {"type": "array"},
            "null_value": {"type": "null"}, "number_value": {"type": "integer"},
            "string_value": {"type": "string"}, "struct_value": {"type": "object"}}))
        ),
    ])
}

fn case(
    source: &'static str,
    mode: &'static str,
    output: &'static str,
    expect: Option<&'static [&'static str]>,
    strict: Label,
    lenient: Label,
    calls: Option<Value>,
) -> Case {
    Case {
        source,
        mode,
        output,
        tool_calls: None,
        expect,
        strict,
        lenient,
        calls,
    }
}

fn native(source: &'static str, call: Value, strict: Label, calls: Option<Value>) -> Case {
    Case {
        source,
        mode: "native",
        output: "",
        tool_calls: Some(json!([call])),
        expect: None,
        strict,
        lenient: strict,
        calls,
    }
}

use Label::{
    EscapingError, MalformedJson, NoCall, ParallelCollapse, Pass, SpuriousCall, Truncation,
    WrongTool,
};

fn cases() -> Vec<Case> {
    const W: Option<&[&str]> = Some(&["get_weather"]);
    const NONE: Option<&[&str]> = Some(&[]);
    vec![
        // transformers tests/utils/test_chat_parsing.py
        case(
            "transformers:test_chat_parsing.py:test_cohere",
            "command_r",
            "<|START_THINKING|>A tool is needed.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"simple_tool\", \"parameters\": {\"temperature_format\": \"Kelvin\"}}\n]<|END_ACTION|><|END_OF_TURN_TOKEN|>",
            Some(&["simple_tool"]),
            Pass,
            Pass,
            Some(json!([["simple_tool", {"temperature_format": "Kelvin"}]])),
        ),
        case(
            "transformers:test_chat_parsing.py:test_ernie_with_tools",
            "hermes",
            "The user wants the weather in Ghent, so I call the tool.\n</think>\n\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Ghent\"}}\n</tool_call>\n</s>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"location": "Ghent"}]])),
        ),
        case(
            "transformers:test_chat_parsing.py:test_ernie_no_tools",
            "hermes",
            "A greeting; answer kindly.\n</think>\n\n<response>\nHello! How can I help?\n</response>\n</s>",
            NONE,
            Pass,
            Pass,
            Some(json!([])),
        ),
        case(
            "transformers:test_chat_parsing.py:test_gpt_oss_with_tool_call",
            "harmony",
            "<|channel|>analysis<|message|>I should call get_weather for Ghent.<|end|><|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{\n  \"location\": \"Ghent, BE\"\n}",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"location": "Ghent, BE"}]])),
        ),
        case(
            "transformers:test_chat_parsing.py:test_gpt_oss_no_tool_call",
            "harmony",
            "<|channel|>analysis<|message|>3+3 = 6, answer directly.<|end|><|start|>assistant<|channel|>final<|message|>6",
            NONE,
            Pass,
            Pass,
            Some(json!([])),
        ),
        case(
            "transformers:test_chat_parsing.py:test_smollm_thinking_and_tool_call",
            "hermes",
            "<think>\nThey said \"Hi!\"; greet back.\n</think>\n\n<tool_call>{\"name\": \"greet_user\", \"arguments\": {\"greeting\": \"Hi! I'm fine, and you?\"}}</tool_call>",
            Some(&["greet_user"]),
            Pass,
            Pass,
            Some(json!([["greet_user", {"greeting": "Hi! I'm fine, and you?"}]])),
        ),
        case(
            "transformers:test_chat_parsing.py:test_smollm_thinking_no_tool_call",
            "hermes",
            "<think>\nExplain tides.</think>\nTides come from the moon's pull.",
            NONE,
            Pass,
            Pass,
            Some(json!([])),
        ),
        case(
            "transformers:test_chat_parsing.py:test_qwen3_tool_calls",
            "qwen_xml",
            "<tool_call>\n<function=get_weather>\n<parameter=locations>\n[{\"country\": \"Belgium\", \"city\": \"Ghent\"}]\n</parameter>\n<parameter=units>\nkelvin\n</parameter>\n</function>\n</tool_call>",
            W,
            Pass,
            Pass,
            Some(
                json!([["get_weather", {"locations": [{"country": "Belgium", "city": "Ghent"}], "units": "kelvin"}]]),
            ),
        ),
        case(
            "transformers:test_chat_parsing.py:test_gemma4_tool_call",
            "gemma",
            "<|channel>thought\nA tool gives the temperature.<channel|><|tool_call>call:get_weather{days:0,location:<|\"|>Ghent, Belgium<|\"|>,units:<|\"|>kelvin<|\"|>}<tool_call|><|tool_response>",
            W,
            Pass,
            Pass,
            Some(
                json!([["get_weather", {"days": 0, "location": "Ghent, Belgium", "units": "kelvin"}]]),
            ),
        ),
        case(
            "transformers:test_chat_parsing.py:test_gemma4_complex_tool_call",
            "gemma",
            "<|channel>thought\nCall it.<channel|><|tool_call>call:foo{bool_value:false,list_value:[<|\"|>x<|\"|>,<|\"|>y<|\"|>],null_value:null,number_value:7,string_value:<|\"|>z<|\"|>,struct_value:{k:<|\"|>v<|\"|>}}<tool_call|>",
            Some(&["foo"]),
            Pass,
            Pass,
            Some(
                json!([["foo", {"bool_value": false, "list_value": ["x", "y"], "null_value": null,
                "number_value": 7, "string_value": "z", "struct_value": {"k": "v"}}]]),
            ),
        ),
        // tabbyAPI tests/tool_parser_test.py
        case(
            "tabbyAPI:tool_parser_test.py:test_from_json_handles_markdown_fences_and_flat_shape",
            "fence",
            "```json\n[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Busan\"}}]\n```",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Busan"}]])),
        ),
        case(
            "tabbyAPI:tool_parser_test.py:test_from_xml_parses_qwen3_coder_style_blocks",
            "qwen_xml",
            "<think>plan</think><tool_call><function=get_weather><parameter=city>\nBusan\n</parameter><parameter=days>\n5\n</parameter></function></tool_call>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Busan", "days": 5}]])),
        ),
        case(
            "tabbyAPI:tool_parser_test.py:test_from_auto_parses_json_inside_tool_call_wrapper",
            "hermes",
            "<tool_call>{\"name\": \"search\", \"arguments\": {\"query\": \"toolgate\"}}</tool_call>",
            Some(&["search"]),
            Pass,
            Pass,
            Some(json!([["search", {"query": "toolgate"}]])),
        ),
        case(
            "tabbyAPI:tool_parser_test.py:test_extract_content_and_tools_splits_content_from_xml_calls",
            "qwen_xml",
            "Calling a tool. <tool_call><function=search><parameter=q>\ntoolgate\n</parameter></function></tool_call> Finished.",
            Some(&["search"]),
            Pass,
            Pass,
            Some(json!([["search", {"q": "toolgate"}]])),
        ),
        case(
            "tabbyAPI:tool_parser_test.py:test_filter_by_name_keeps_only_requested_function",
            "json",
            "[{\"name\": \"now\", \"arguments\": {}},{\"name\": \"search\", \"arguments\": {}}]",
            Some(&["now", "search"]),
            Pass,
            Pass,
            Some(json!([["now", {}], ["search", {}]])),
        ),
        // tabbyAPI tests/test_xml_tool_calls.py (GLM-4.5)
        case(
            "tabbyAPI:test_xml_tool_calls.py:test_has_tool_call_positive",
            "glm",
            "Text first\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lyon</arg_value>\n</tool_call>\nText after",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        case(
            "tabbyAPI:test_xml_tool_calls.py:test_parse_multiple_tool_calls",
            "glm",
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lyon</arg_value>\n<arg_key>date</arg_key>\n<arg_value>2025-01-31</arg_value>\n</tool_call>\n\n<tool_call>calculate_sum\n<arg_key>numbers</arg_key>\n<arg_value>[2, 4, 6]</arg_value>\n<arg_key>precision</arg_key>\n<arg_value>1</arg_value>\n</tool_call>",
            Some(&["get_weather", "calculate_sum"]),
            Pass,
            Pass,
            Some(
                json!([["get_weather", {"city": "Lyon", "date": "2025-01-31"}],
                ["calculate_sum", {"numbers": [2, 4, 6], "precision": 1}]]),
            ),
        ),
        // Deliberate: tabbyAPI executes the call with `{}`; an unclosed value
        // is malformed here (a ghost success otherwise).
        case(
            "tabbyAPI:test_xml_tool_calls.py:test_parse_malformed_xml",
            "glm",
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lyon\n</tool_call>",
            W,
            MalformedJson,
            MalformedJson,
            None,
        ),
        // Deliberate: extraction keeps the unknown tool, the allowlist names it.
        case(
            "tabbyAPI:test_xml_tool_calls.py:test_no_matching_tools",
            "glm",
            "<tool_call>unknown_function\n<arg_key>param</arg_key>\n<arg_value>value</arg_value>\n</tool_call>",
            None,
            WrongTool,
            WrongTool,
            Some(json!([["unknown_function", {"param": "value"}]])),
        ),
        // TGI recorded responses (native).
        native(
            "tgi:test_flash_llama_grammar_tools.json (1.4, function.parameters)",
            json!({"id": 0, "type": "function", "function": {"description": null,
                "name": "get_weather", "parameters": {"format": "celsius", "location": "Ghent"}}}),
            Pass,
            Some(json!([["get_weather", {"format": "celsius", "location": "Ghent"}]])),
        ),
        native(
            "tgi:test_flash_llama_grammar_tools.json (2.x, arguments object)",
            json!({"id": "0", "type": "function", "function": {"description": null,
                "name": "get_weather", "arguments": {"format": "celsius", "location": "Ghent"}}}),
            Pass,
            Some(json!([["get_weather", {"format": "celsius", "location": "Ghent"}]])),
        ),
        native(
            "tgi:test_flash_llama_grammar_tools_nostream.json (3.x)",
            json!({"id": "0", "type": "function", "function": {"description": null,
                "name": "get_weather", "arguments": "{\"location\":\"Ghent\",\"format\":\"fahrenheit\"}"}}),
            Pass,
            Some(json!([["get_weather", {"location": "Ghent", "format": "fahrenheit"}]])),
        ),
        // Deliberate: TGI 3.1's stream put the name inside the arguments
        // (`_name`) and left `function.name` null; nothing names a tool.
        native(
            "tgi:test_flash_llama_grammar_tools_openai.json (3.1 stream)",
            json!({"id": "", "index": 0, "type": "function", "function": {"name": null,
                "arguments": "{\"function\": {\"_name\": \"get_weather\", \"location\": \"Ghent\"}}"}}),
            MalformedJson,
            None,
        ),
        // Deliberate: TGI 1.4.2's grammar output names no tool.
        case(
            "tgi:test_flash_llama_grammar_tools_choice.json (1.4.2 content)",
            "json",
            "{\"function\":{\"format\": \"celsius\", \"location\": \"Ghent\"}}",
            W,
            NoCall,
            NoCall,
            Some(json!([])),
        ),
        // Fixed: a fenced payload inside <tool_call> (Qwen2.5-Coder) is a
        // candidate: malformed strict, repaired lenient.
        case(
            "tabbyAPI fence stripping, kronk PR 950: hermes payload in a fence",
            "hermes",
            "<tool_call>\n```json\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}\n```\n</tool_call>",
            W,
            MalformedJson,
            Pass,
            None,
        ),
        case(
            "tabbyAPI fence stripping: mistral list in a fence",
            "mistral",
            "[TOOL_CALLS]```json\n[{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}]\n```",
            W,
            MalformedJson,
            Pass,
            None,
        ),
        // ollama tools/tools_test.go TestParseToolCalls.
        case(
            "ollama:tools_test.go:command r plus tool calls with json block format",
            "command_r",
            "Action: ```json\n\t[\n\t    {\"tool_name\": \"now\", \"parameters\": {}},\n\t    {\"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Lyon\"}}\n\t]\n\t```",
            Some(&["now", "get_weather"]),
            Pass,
            Pass,
            Some(json!([["now", {}], ["get_weather", {"city": "Lyon"}]])),
        ),
        case(
            "ollama:tools_test.go:firefunction tool calls with functools prefix",
            "functools",
            " functools[{\"name\": \"now\", \"arguments\": {}},{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}]",
            Some(&["now", "get_weather"]),
            Pass,
            Pass,
            Some(json!([["now", {}], ["get_weather", {"city": "Lyon"}]])),
        ),
        case(
            "ollama:tools_test.go:llama3 groq single tool call with xml tags",
            "hermes",
            "<tool_call>\n\t\t{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}\n\t\t</tool_call>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        case(
            "ollama:tools_test.go:qwen2.5 tool calls with prefix and trailing text",
            "hermes",
            "<tool_call> [{\"name\": \"now\", \"arguments\": {}}, {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}] </tool_call> more words",
            Some(&["now", "get_weather"]),
            Pass,
            Pass,
            Some(json!([["now", {}], ["get_weather", {"city": "Lyon"}]])),
        ),
        // Deliberate: ollama drops the cut-off second element; it is
        // reported, so one expected call meets two candidates.
        case(
            "ollama:tools_test.go:mistral malformed json with tool calls prefix",
            "mistral",
            "[TOOL_CALLS]  [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}},{\"name\": \"get_wea}]",
            W,
            SpuriousCall,
            SpuriousCall,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        // Deliberate: a bare list in later prose is not a mistral call.
        case(
            "ollama:tools_test.go:mistral multiple tool calls with text between and prefix",
            "mistral",
            "[TOOL_CALLS] [{\"name\": \"now\", \"arguments\": {}}]\nmore words and then [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}]",
            Some(&["now", "get_weather"]),
            ParallelCollapse,
            ParallelCollapse,
            Some(json!([["now", {}]])),
        ),
        // Deliberate: hermes reads the tagged call only, not bare JSON before it.
        case(
            "ollama:tools_test.go:qwen2.5 tool calls without and with prefix",
            "hermes",
            "{\"name\": \"now\", \"arguments\": {}} <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}</tool_call>",
            Some(&["now", "get_weather"]),
            ParallelCollapse,
            ParallelCollapse,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        // Deliberate: no name key at the top, so no mode reads xLAM's wrapper.
        case(
            "ollama:tools_test.go:xlam tool calls with wrapper object",
            "json",
            "{\"tool_calls\": [{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}]}",
            W,
            NoCall,
            NoCall,
            Some(json!([])),
        ),
        case(
            "ollama:tools_test.go:qwen3 invalid tool call with partial tool prefix",
            "hermes",
            "<think></think><tool_c fakeout {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}} </tool_call>",
            NONE,
            Pass,
            Pass,
            Some(json!([])),
        ),
        // Deliberate: the tag says "call", so a name-less object in it is a
        // malformed candidate, not nothing.
        case(
            "ollama:tools_test.go:qwen2.5 tool calls with prefix and invalid tool call",
            "hermes",
            "<tool_call> [{\"options\": \"foo\"}] </tool_call> ",
            NONE,
            SpuriousCall,
            SpuriousCall,
            Some(json!([])),
        ),
        // Deliberate: a list without commas is not JSON; nothing is repaired
        // in strict reading.
        case(
            "ollama:tools_test.go:model with prefix in template, prefix in output",
            "hermes",
            "<tool_call>[{\"name\": \"now\", \"arguments\": {}} {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}]</tool_call>",
            Some(&["now", "get_weather"]),
            ParallelCollapse,
            ParallelCollapse,
            Some(json!([])),
        ),
        // Fixed: a new channel ends an unterminated analysis message.
        case(
            "vllm-mlx:test_gpt_oss_tool_parsing.py:test_tools_branch_analysis_then_commentary_call_passes_through",
            "harmony",
            "<|channel|>analysis<|message|>Reading it.<|channel|>commentary to=functions.get_weather<|message|>{\"city\":\"Lyon\"}<|call|>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        // Deliberate: vllm-mlx returns no call for the cut-off commentary;
        // toolgate labels it (a call was expected).
        case(
            "vllm-mlx:test_gpt_oss_tool_parsing.py:test_tools_branch_strips_analysis_block_before_parser",
            "harmony",
            "<|channel|>analysis<|message|>I will use {\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}<|end|><|channel|>commentary to=functions.get_weather<|message|>{\"city\": \"Ly",
            W,
            Truncation,
            Truncation,
            Some(json!([])),
        ),
        // vllm-mlx tests/test_gemma4_tool_parser.py
        case(
            "vllm-mlx:test_gemma4_tool_parser.py:test_string_with_newline_and_quote",
            "gemma",
            "<|tool_call>call:foo{string_value:<|\"|>a\nb said \"hi\" {x: 1}, c:d<|\"|>,number_value:3,struct_value:{k:{deep:true}}}<tool_call|>",
            Some(&["foo"]),
            Pass,
            Pass,
            Some(
                json!([["foo", {"string_value": "a\nb said \"hi\" {x: 1}, c:d", "number_value": 3,
                "struct_value": {"k": {"deep": true}}}]]),
            ),
        ),
        case(
            "vllm-mlx:test_gemma4_tool_parser.py:test_quoted_keys",
            "gemma",
            "<think>t</think><|tool_call>call:get_weather{<|\"|>city<|\"|>:<|\"|>Lyon<|\"|>}<tool_call|>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        // Deliberate: one call per block in the gemma row; a second `call:`
        // in the same block is not read silently.
        case(
            "vllm-mlx:test_gemma4_tool_parser.py:test_multiple_tool_calls_in_one_block",
            "gemma",
            "<|tool_call>call:get_weather{city:<|\"|>Lyon<|\"|>}call:now{}<tool_call|>",
            Some(&["get_weather", "now"]),
            ParallelCollapse,
            ParallelCollapse,
            Some(json!([])),
        ),
        // Deliberate: the call token says "call"; an empty block is malformed.
        case(
            "vllm-mlx:test_gemma4_tool_parser.py:test_empty_tool_call_block",
            "gemma",
            "<|tool_call><tool_call|>",
            NONE,
            SpuriousCall,
            SpuriousCall,
            Some(json!([])),
        ),
        // Deliberate: without `<tool_call|>` the output ended inside the
        // block (SPEC §9; Gemma 4 ends its turn at `<|tool_response>`, after it).
        case(
            "vllm-mlx:test_gemma4_tool_parser.py:test_missing_end_delimiter",
            "gemma",
            "<|tool_call>call:get_weather{city:<|\"|>Lyon<|\"|>}",
            W,
            Truncation,
            Truncation,
            Some(json!([])),
        ),
        // vllm-mlx tests/test_harmony_parsers.py (newlines between tokens).
        case(
            "vllm-mlx:test_harmony_parsers.py:test_multiple_tool_calls",
            "harmony",
            "<|start|>\n<|channel|>analysis\n<|message|>Two calls.\n<|end|>\n<|channel|>commentary to=functions.get_weather\n<|constrain|>json\n<|message|>{\"city\": \"Lyon\"}\n<|call|>\n<|channel|>commentary to=functions.now\n<|message|>{}\n<|call|>\n<|channel|>final\n<|message|>Done.\n<|return|>",
            Some(&["get_weather", "now"]),
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}], ["now", {}]])),
        ),
        // Deliberate: vllm-mlx passes the raw text on as the arguments.
        case(
            "vllm-mlx:test_harmony_parsers.py:test_malformed_json_arguments",
            "harmony",
            "<|channel|>commentary to=functions.now\n<|constrain|>json\n<|message|>{invalid json here}\n<|call|>",
            Some(&["now"]),
            MalformedJson,
            MalformedJson,
            Some(json!([])),
        ),
        // Edge cases.
        case(
            "edge: unicode and \\u escapes, nested arguments",
            "hermes",
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Z\\u00fcrich 東京 🌧\", \"opts\": {\"a\": [1, {\"b\": null}], \"s\": \"x}y\"}}}\n</tool_call>",
            W,
            Pass,
            Pass,
            Some(
                json!([["get_weather", {"city": "Zürich 東京 🌧", "opts": {"a": [1, {"b": null}], "s": "x}y"}}]]),
            ),
        ),
        case(
            "edge: whitespace variants, arguments first, CRLF",
            "hermes",
            "<tool_call>\r\n\r\n   {\"arguments\" :{ } ,\t\"name\":\"now\" }  \r\n</tool_call>\r\n",
            Some(&["now"]),
            Pass,
            Pass,
            Some(json!([["now", {}]])),
        ),
        case(
            "edge: cut off inside the arguments",
            "hermes",
            "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Ly",
            W,
            Truncation,
            Truncation,
            None,
        ),
        // Deliberate: Python's json reads these; toolgate does not guess.
        case(
            "edge: \"arguments\": \"\" (Go salvagers read {})",
            "json",
            "{\"name\": \"now\", \"arguments\": \"\"}",
            Some(&["now"]),
            MalformedJson,
            MalformedJson,
            None,
        ),
        case(
            "edge: duplicate argument key",
            "json",
            "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"A\", \"city\": \"B\"}}",
            W,
            MalformedJson,
            MalformedJson,
            None,
        ),
        case(
            "edge: NaN",
            "llama3",
            "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": {\"days\": NaN}}",
            W,
            MalformedJson,
            MalformedJson,
            None,
        ),
        case(
            "edge: lone surrogate escape",
            "hermes",
            "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"\\ud800\"}}</tool_call>",
            W,
            EscapingError,
            EscapingError,
            None,
        ),
        case(
            "edge: OpenAI's own call shape written as text (arguments a JSON string)",
            "json",
            "{\"id\": \"call_1\", \"type\": \"function\", \"function\": {\"name\": \"now\", \"arguments\": \"{}\"}}",
            Some(&["now"]),
            EscapingError,
            Pass,
            None,
        ),
        case(
            "edge: a JSON-quoted string in an XML parameter stays the text",
            "qwen_xml",
            "<tool_call>\n<function=get_weather>\n<parameter=city>\n\"Lyon\"\n</parameter>\n</function>\n</tool_call>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "\"Lyon\""}]])),
        ),
        // vLLM tool-parser tests newer than the peer corpus (stop 48).
        case(
            "vllm:test_intern_s1_tool_parser.py:spaced special tokens",
            "internlm",
            "<|action_start|> <|plugin|>\n{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Lyon\"}}\n<|action_end|>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        case(
            "vllm:test_rwkv_tool_parser.py:markdown tool call",
            "fence",
            "**Tool Call:**\n```json\n{\n  \"name\": \"get_weather\",\n  \"arguments\": {\"city\": \"Lyon\"}\n}\n```",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        case(
            "vllm:test_cohere_command_tool_parser.py:citations, no tool call",
            "command_r",
            "<|START_THINKING|>Tides <co>moon</co: 0:[1]><|END_THINKING|>\n<|START_RESPONSE|>The moon <co>pulls</co: 0:[1,2]><|END_RESPONSE|>",
            NONE,
            Pass,
            Pass,
            Some(json!([])),
        ),
        case(
            "vllm:test_gigachat35_tool_parser.py:string=\"false\" JSON object",
            "gigachat35",
            "<｜GCML｜tool_calls><｜GCML｜invoke name=\"get_weather\"><｜GCML｜parameter name=\"city\" string=\"true\">Lyon</｜GCML｜parameter><｜GCML｜parameter name=\"opts\" string=\"false\">{\"a\": 1}</｜GCML｜parameter></｜GCML｜invoke></｜GCML｜tool_calls>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon", "opts": {"a": 1}}]])),
        ),
        case(
            "vllm:test_gigachat35_tool_parser.py:malformed input (invoke cut off)",
            "gigachat35",
            "<｜GCML｜tool_calls><｜GCML｜invoke name=\"get_weather\">",
            W,
            Truncation,
            Truncation,
            None,
        ),
        case(
            "vllm:test_iquest_coder_v2_tool_parser.py:typed arguments",
            "iquest_coder_v2",
            "<iquestcoder_tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>12345</arg_value>\n<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</iquestcoder_tool_call>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "12345", "days": 3}]])),
        ),
        // Stop 49: the three vLLM parsers CONFORMANCE listed as not read.
        case(
            "vllm:test_hyperclovax_seed_think_tool_parser.py:test_single_tool_call",
            "hyperclovax_seed_think",
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>\"Lyon\"</arg_value>\n<arg_key>units</arg_key>\n<arg_value>\"celsius\"</arg_value>\n</tool_call>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon", "units": "celsius"}]])),
        ),
        case(
            "vllm:test_hyperclovax_seed_think_tool_parser.py:test_arg_value_falls_back_to_raw_string",
            "hyperclovax_seed_think",
            "I'll check.<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Lyon</arg_value>\n</tool_call>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        // Deliberate: an empty call is `malformed` (vLLM: content).
        case(
            "vllm:test_hyperclovax_seed_think_tool_parser.py:test_malformed_tool_call_falls_back_to_content",
            "hyperclovax_seed_think",
            "<tool_call>\n</tool_call>",
            W,
            MalformedJson,
            MalformedJson,
            None,
        ),
        case(
            "vllm:test_k2_horizon_tool_parser.py:test_xml_default_parses_multiple_calls_and_coerces_schema",
            "k2_horizon",
            "Before <ifm|tool_calls><ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_value>123</ifm|arg_value><ifm|arg_key>days</ifm|arg_key><ifm|arg_value>3</ifm|arg_value></ifm|tool_call>\n<ifm|tool_call>now</ifm|tool_call></ifm|tool_calls> after.",
            Some(&["get_weather", "now"]),
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "123", "days": 3}], ["now", {}]])),
        ),
        // Deliberate: the xml_typed shape (a request's choice extraction
        // does not see) is a broken call in the default shape; vLLM's
        // default `xml` refuses it too (content).
        case(
            "vllm:test_k2_horizon_tool_parser.py:test_mismatched_formats_fail_closed (typed)",
            "k2_horizon",
            "<ifm|tool_calls><ifm|tool_call>get_weather<ifm|arg_key>city</ifm|arg_key><ifm|arg_type>string</ifm|arg_type><ifm|arg_value>Lyon</ifm|arg_value></ifm|tool_call></ifm|tool_calls>",
            W,
            MalformedJson,
            MalformedJson,
            None,
        ),
        // Deliberate: SPEC §9, a missing closer is `truncation` (vLLM: content).
        case(
            "vllm:test_k2_horizon_tool_parser.py:test_malformed_and_incomplete_input_is_content",
            "k2_horizon",
            "<ifm|tool_calls><ifm|tool_call>get_weather</ifm|tool_call>",
            W,
            Truncation,
            Truncation,
            None,
        ),
        case(
            "vllm:test_solar_open2_tool_parser.py:test_multiple_arguments_with_schema",
            "solar_open2",
            "Let me check.<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Lyon<|tool_arg:end|>\n<|tool_arg:start|>days<|tool_arg:value|>5<|tool_arg:end|>\n<|tool_call:end|>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon", "days": 5}]])),
        ),
        // Deliberate: a value without its `<|tool_arg:end|>` is `malformed`
        // (vLLM reads `oops` and runs both calls).
        case(
            "vllm:test_solar_open2_tool_parser.py:test_dropped_arg_end_does_not_swallow_later_calls",
            "solar_open2",
            "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>oops<|tool_call:end|><|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Lyon<|tool_arg:end|>\n<|tool_call:end|>",
            Some(&["get_weather", "get_weather"]),
            MalformedJson,
            MalformedJson,
            None,
        ),
        // Deliberate: a key given twice is ambiguous (vLLM keeps the first).
        case(
            "vllm:test_solar_open2_tool_parser.py:test_repeated_argument_name_keeps_first_value",
            "solar_open2",
            "<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Lyon<|tool_arg:end|>\n<|tool_arg:start|>city<|tool_arg:value|>Ghent<|tool_arg:end|>\n<|tool_call:end|>",
            W,
            MalformedJson,
            MalformedJson,
            None,
        ),
        // Stop 50: Solar Open 2's reasoning tokens are reasoning for every
        // mode. The template writes `<|think:start|>`, so the text before a
        // lone `<|think:end|>` is reasoning: the call drafted there is not
        // live (vLLM's reasoning parser moves a complete one into the
        // content and runs it), the one after it is.
        case(
            "vllm:solar_open2_reasoning_parser.py (a call inside the reasoning)",
            "solar_open2",
            "Maybe <|tool_call:start|>now\n<|tool_call:end|> first.<|think:end|>\n<|tool_call:start|>get_weather\n<|tool_arg:start|>city<|tool_arg:value|>Lyon<|tool_arg:end|>\n<|tool_call:end|>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        // Deliberate (stop 50): HyperCLOVAX-SEED-Think's parser also reads
        // a bare JSON list when the output holds no `<tool_call>` (what a
        // forced `tool_choice` gives); that is the `json` mode's reading.
        case(
            "vllm:hyperclovax_seed_think_tool_parser.py (JSON list fallback)",
            "hyperclovax_seed_think",
            "Seoul's weather.</think>\n\n[{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Seoul\"}}]",
            W,
            NoCall,
            NoCall,
            None,
        ),
        case(
            "vllm:hyperclovax_seed_think_tool_parser.py (JSON list fallback, json mode)",
            "json",
            "Seoul's weather.</think>\n\n[{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Seoul\"}}]",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Seoul"}]])),
        ),
        // Stop 50's sweep: SGLang detectors read by existing modes.
        case(
            "sglang:ling3_detector.py (name closed by <arg_key>, no newline)",
            "glm",
            "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Lyon</arg_value></tool_call><tool_call>now</tool_call>",
            Some(&["get_weather", "now"]),
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}], ["now", {}]])),
        ),
        case(
            "sglang:spark25_detector.py (values typed by the schema)",
            "glm",
            "<tool_call>get_weather\n<arg_key>city</arg_key><arg_value>Lyon</arg_value><arg_key>days</arg_key><arg_value>3</arg_value>\n</tool_call>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon", "days": 3}]])),
        ),
        case(
            "sglang:mimo_detector.py",
            "qwen_xml",
            "<tool_call>\n<function=get_weather>\n<parameter=city>Lyon</parameter>\n<parameter=days>2</parameter>\n</function>\n</tool_call>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon", "days": 2}]])),
        ),
        case(
            "sglang:cohere_command4_detector.py",
            "command_r",
            "<|START_THINKING|>Look it up.<|END_THINKING|><|START_ACTION|>[\n    {\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", \"parameters\": {\"city\": \"Lyon\"}}\n]<|END_ACTION|>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "Lyon"}]])),
        ),
        // Deliberate: Trinity's detector deletes `<think>` tags and runs a
        // call written inside them; here it is reasoning (SPEC §9).
        case(
            "sglang:trinity_detector.py (a call inside <think>)",
            "hermes",
            "<think>I'll call <tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}</tool_call></think>It is usually mild.",
            W,
            NoCall,
            NoCall,
            None,
        ),
        // Deliberate (stop 48): SPEC §9, a missing closer is `truncation`.
        case(
            "vllm:test_gemma4_regex_and_bare_calls.py:<turn|> instead of <tool_call|>",
            "gemma",
            "<|tool_call>call:get_weather{city:<|\"|>Lyon<|\"|>}<turn|>",
            W,
            Truncation,
            Truncation,
            None,
        ),
        // Deliberate: `call:` without the call token opens nothing.
        case(
            "vllm:test_gemma4_regex_and_bare_calls.py:bare call after <channel|>",
            "gemma",
            "<|channel>thought\nLook it up.\n<channel|>call:get_weather{city:<|\"|>Lyon<|\"|>}",
            W,
            NoCall,
            NoCall,
            None,
        ),
        case(
            "vllm:test_gemma4_regex_and_bare_calls.py:stray colon after <|tool_call>",
            "gemma",
            "<|tool_call>:call:get_weather{city:<|\"|>Lyon<|\"|>}<tool_call|>",
            W,
            MalformedJson,
            MalformedJson,
            None,
        ),
        // Deliberate: a parameter before `<function=…>` is a broken call.
        case(
            "vllm:test_mimov2_flash_tool_parser.py:parameter before the function tag",
            "qwen_xml",
            "<tool_call>\n<parameter=city>Lyon</parameter>\n<function=get_weather>\n</function>\n</tool_call>",
            W,
            MalformedJson,
            MalformedJson,
            None,
        ),
        // Deliberate: a key given twice is ambiguous (vLLM keeps the last).
        case(
            "vllm:test_hy_v4_duplicate_arg_key.py",
            "hy_v4",
            "<tool_calls><tool_call>get_weather<arg_key>city</arg_key><arg_value>Lyon</arg_value><arg_key>city</arg_key><arg_value>Ghent</arg_value></tool_call></tool_calls>",
            W,
            MalformedJson,
            MalformedJson,
            None,
        ),
        // Deliberate: double-encoded arguments are `escaping_error` strictly
        // (vLLM's nemotron_json and granite4 decode them).
        case(
            "vllm:test_nemotron_json_tool_parser.py:string arguments",
            "nemotron",
            "<TOOLCALL>[{\"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\": \\\"Lyon\\\"}\"}]</TOOLCALL>",
            W,
            EscapingError,
            Pass,
            None,
        ),
        // Deliberate: HyperCLOVAX writes JSON-quoted values in GLM's markup;
        // `glm` keeps a string parameter's text as written (SPEC §9): the
        // 32B's own mode, `hyperclovax_seed_think`, reads them as JSON
        // (below).
        case(
            "vllm:test_hyperclovax_seed_think_tool_parser.py:JSON-quoted arg_value",
            "glm",
            "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>\"Lyon\"</arg_value>\n</tool_call>",
            W,
            Pass,
            Pass,
            Some(json!([["get_weather", {"city": "\"Lyon\""}]])),
        ),
        // Deliberate: a call inside `<think>` is reasoning (SPEC §9).
        case(
            "vllm:test_trinity_tool_parser_simple.py:call inside think tags",
            "hermes",
            "<think>plan\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Lyon\"}}\n</tool_call>\nmore</think>",
            W,
            NoCall,
            NoCall,
            None,
        ),
        case(
            "edge: kimi section without its end token",
            "kimi",
            "<|tool_calls_section_begin|><|tool_call_begin|>functions.now:0<|tool_call_argument_begin|>{}<|tool_call_end|>",
            Some(&["now"]),
            Truncation,
            Truncation,
            None,
        ),
    ]
}

#[test]
fn outside_cases_get_the_documented_labels_and_calls() {
    let engine = Engine::new(Profile::default());
    let mut wrong = Vec::new();
    for c in cases() {
        let mut t = json!({"output": c.output, "tools": tools()});
        if let Some(names) = c.expect {
            t["expect"] =
                json!({"calls": names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()});
        }
        if let Some(calls) = &c.tool_calls {
            t["tool_calls"] = calls.clone();
        }
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
