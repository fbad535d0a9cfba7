//! Tests of the importers: each format's documented shape, from text, and
//! the shipped fixtures under `examples/captures/` through the loader.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::load::{Loaded, load_file, load_kind};
use crate::transcript::Transcript;

/// The importer's typed notes of a loaded transcript (none when not imported).
fn notes(t: &Transcript) -> Vec<(NoteKind, String)> {
    t.origin
        .as_ref()
        .map(|o| o.notes.clone())
        .unwrap_or_default()
}

fn load(name: &str, text: &str) -> Vec<Loaded> {
    let path = Path::new(name);
    load_kind(path, text, detect(path, text), &Companions::default())
}

fn ok(loaded: &[Loaded]) -> Vec<&Transcript> {
    loaded
        .iter()
        .map(|l| l.as_ref().unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

fn args(t: &Transcript, i: usize) -> &str {
    t.tool_calls.as_ref().unwrap()[i]["function"]["arguments"]
        .as_str()
        .unwrap()
}

fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/captures")
        .join(rel)
}

#[test]
fn chat_pair_every_choice_is_a_sample_and_parts_are_text() {
    let text = r#"{"request": {"model": "m", "n": 2, "max_tokens": 50,
        "tools": [{"type": "function", "function": {"name": "f"}}]},
      "response": {"choices": [
        {"index": 0, "message": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
          "reasoning": "r0"}, "finish_reason": "stop"},
        {"index": 1, "message": {"content": "<tool_call>{}</tool_call>", "reasoning_content": "r1",
          "tool_calls": null}, "finish_reason": "length"}]}}"#;
    let loaded = load("p.json", text);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 2);
    assert_eq!((ts[0].id.as_str(), ts[0].sample), ("p#0", Some(0)));
    assert_eq!((ts[1].id.as_str(), ts[1].sample), ("p#1", Some(1)));
    assert_eq!(ts[0].output, "ab");
    assert_eq!(ts[0].reasoning.as_deref(), Some("r0"));
    assert_eq!(ts[0].tool_calls, None);
    assert_eq!(ts[1].reasoning.as_deref(), Some("r1"));
    assert_eq!(ts[1].tool_calls, Some(vec![]));
    assert_eq!(ts[1].finish_reason.as_deref(), Some("length"));
    assert_eq!(ts[0].tools[0].name, "f");
    assert_eq!(ts[0].raw["import"]["request"]["max_tokens"], 50);
}

#[test]
fn chat_tool_choice_becomes_expect() {
    let pair = |choice: &str| {
        format!(
            r#"{{"request": {{"tool_choice": {choice}, "parallel_tool_calls": false}},
                "response": {{"choices": [{{"message": {{"content": "x"}}, "finish_reason": "stop"}}]}}}}"#
        )
    };
    let expect = |choice: &str| {
        let loaded = load("c.json", &pair(choice));
        ok(&loaded)[0].expect.clone()
    };
    assert_eq!(expect(r#""none""#).unwrap().calls, vec![]);
    let named = expect(r#"{"type": "function", "function": {"name": "get_time"}}"#).unwrap();
    assert_eq!(named.calls[0].name, "get_time");
    assert_eq!(expect(r#""required""#), None);
    assert_eq!(expect(r#""auto""#), None);
    let loaded = load("c.json", &pair(r#""auto""#));
    assert_eq!(
        ok(&loaded)[0].raw["import"]["request"]["parallel_tool_calls"],
        false
    );
}

#[test]
fn a_stored_expect_and_labels_of_the_pair_win() {
    let text = r#"{"id": "mine", "task": "t", "expect": {"calls": [{"name": "x"}]}, "labels": {"native": "pass"},
        "request": {"tool_choice": "none"}, "response": {"choices": [{"message": {"content": ""}}]}}"#;
    let loaded = load("x.json", text);
    let t = ok(&loaded)[0];
    assert_eq!(t.id, "mine");
    assert_eq!(t.task.as_deref(), Some("t"));
    assert_eq!(t.expect.as_ref().unwrap().calls[0].name, "x");
    assert_eq!(t.raw["labels"]["native"], "pass");
}

#[test]
fn chat_content_that_is_not_text_is_reported() {
    let text =
        r#"{"choices": [{"message": {"content": [{"type": "image_url", "image_url": {}}]}}]}"#;
    let loaded = load("bad.json", text);
    let e = loaded[0].as_ref().unwrap_err();
    assert!(
        e.reason
            .contains("`content[0]` is not a text part (type image_url)"),
        "{e}"
    );
}

#[test]
fn openai_stream_reassembles_tool_calls_by_index() {
    let text = concat!(
        "data: {\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi \"}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":\"{\\\"y\\\"\"}}]}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"there\",\"tool_calls\":[{\"index\":1,\"function\":{\"name\":\"ignored\",\"arguments\":\": 2}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"completion_tokens\":9}}\n\n",
        "data: [DONE]\n",
    );
    assert_eq!(detect(Path::new("s.sse"), text), Some(Kind::OpenaiStream));
    let loaded = load("s.sse", text);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 1);
    let t = ts[0];
    assert_eq!(t.id, "s");
    assert_eq!(t.output, "Hi there");
    assert_eq!(
        t.chunks.as_deref(),
        Some(&["Hi ".to_string(), "there".to_string()][..])
    );
    assert!(t.warnings.is_empty(), "{:?}", t.warnings);
    let calls = t.tool_calls.as_ref().unwrap();
    assert_eq!(calls[0]["function"]["name"], "f");
    // A later, different name piece joins the first (s48: never a rename).
    assert_eq!(calls[1]["function"]["name"], "gignored");
    assert_eq!(calls[1]["id"], "b");
    assert_eq!(args(t, 1), "{\"y\": 2}");
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(t.raw["import"]["usage"]["completion_tokens"], 9);
}

#[test]
fn an_unterminated_stream_keeps_its_cut_off_arguments() {
    let text = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"city\\\": \\\"Ant\"}}]}}]}\n";
    let loaded = load("cut.sse", text);
    let t = ok(&loaded)[0];
    // Cut (probe 44): `""`, what was received kept beside it.
    assert_eq!(args(t, 0), "");
    assert_eq!(t.raw["import"]["truncated_input"], "{\"city\": \"Ant");
    assert_eq!(t.raw["import"]["unterminated"], true);
}

#[test]
fn batch_output_joins_its_input_in_any_order_and_reports_errors() {
    let input = concat!(
        "{\"custom_id\": \"a\", \"method\": \"POST\", \"url\": \"/v1/chat/completions\", \"body\": {\"model\": \"m\", \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"fa\"}}]}}\n",
        "{\"custom_id\": \"b\", \"method\": \"POST\", \"url\": \"/v1/chat/completions\", \"body\": {\"model\": \"m\", \"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"fb\"}}]}}\n",
    );
    let output = concat!(
        "{\"custom_id\": \"b\", \"response\": {\"status_code\": 200, \"body\": {\"choices\": [{\"message\": {\"content\": \"B\"}}]}}, \"error\": null}\n",
        "{\"custom_id\": \"zz\", \"response\": null, \"error\": {\"code\": \"rate_limit\", \"message\": \"slow down\"}}\n",
        "{\"custom_id\": \"a\", \"response\": {\"choices\": [{\"message\": {\"content\": \"A\"}}]}, \"error\": null}\n",
        "{\"custom_id\": \"c\", \"response\": {\"status_code\": 500, \"body\": {\"error\": {\"message\": \"boom\"}}}}\n",
        "{\"custom_id\": \"nope\", \"response\": {\"choices\": [{\"message\": {\"content\": \"?\"}}]}}\n",
    );
    let (ip, op) = (Path::new("in.jsonl"), Path::new("out.jsonl"));
    assert_eq!(detect(ip, input), Some(Kind::BatchInput));
    assert_eq!(detect(op, output), Some(Kind::BatchOutput));
    assert!(convert(ip, input, Kind::BatchInput, &Companions::default()).is_empty());
    let mut companions = Companions::default();
    companions.add(ip, input, Kind::BatchInput);
    let loaded = load_kind(op, output, Some(Kind::BatchOutput), &companions);
    let summary: Vec<String> = loaded
        .iter()
        .map(|l| match l {
            Ok(t) => format!("{} {} {}", t.id, t.output, t.tools[0].name),
            Err(e) => format!("line {}: {}", e.line.unwrap(), e.reason),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "b B fb",
            "line 2: Batch request `zz` failed: rate_limit: slow down",
            "a A fa",
            "line 4: Batch request `c` failed with status 500: boom",
            "line 5: no Batch input line with custom_id `nope` among the files given (tools unknown): pass the input JSONL too",
        ]
    );
}

/// s50 audit: two Batch inputs given together (two batches in one
/// folder, each numbering its lines `request-1` …) shared one map by
/// `custom_id`, the last line read winning: an output line of the first
/// batch was judged against the second batch's tools without a word (here
/// `fa` called with only `fb` declared: a hallucinated tool). A `custom_id`
/// naming two bodies is refused; one named twice with the same body still
/// joins. Likewise a BFCL id naming two questions.
#[test]
fn a_custom_id_naming_two_requests_is_refused_not_joined_with_either() {
    let line = |id: &str, tool: &str| {
        format!(
            "{{\"custom_id\": \"{id}\", \"method\": \"POST\", \"url\": \"/v1/chat/completions\", \"body\": {{\"model\": \"m\", \"tools\": [{{\"type\": \"function\", \"function\": {{\"name\": \"{tool}\"}}}}]}}}}\n"
        )
    };
    let first = line("request-1", "fa") + &line("request-2", "fa");
    let second = line("request-1", "fb") + &line("request-2", "fa");
    let output = concat!(
        "{\"custom_id\": \"request-1\", \"response\": {\"status_code\": 200, \"body\": {\"choices\": [{\"message\": {\"content\": \"A\"}}]}}}\n",
        "{\"custom_id\": \"request-2\", \"response\": {\"status_code\": 200, \"body\": {\"choices\": [{\"message\": {\"content\": \"B\"}}]}}}\n",
    );
    let mut companions = Companions::default();
    companions.add(Path::new("a/in.jsonl"), &first, Kind::BatchInput);
    companions.add(Path::new("b/in.jsonl"), &second, Kind::BatchInput);
    let loaded = load_kind(
        Path::new("a/out.jsonl"),
        output,
        Some(Kind::BatchOutput),
        &companions,
    );
    let summary: Vec<String> = loaded
        .iter()
        .map(|l| match l {
            Ok(t) => format!("{} {} {}", t.id, t.output, t.tools[0].name),
            Err(e) => format!("line {}: {}", e.line.unwrap(), e.reason),
        })
        .collect();
    assert_eq!(
        summary,
        [
            "line 1: custom_id `request-1` names different requests in the Batch input files given (two batches?): which one this line answers is a guess; import each batch's output with its own input",
            "request-2 B fa",
        ]
    );

    let question = |f: &str| {
        format!(
            "{{\"id\": \"simple_0\", \"question\": [], \"function\": [{{\"name\": \"{f}\", \"parameters\": {{\"type\": \"dict\", \"properties\": {{}}}}}}]}}\n"
        )
    };
    let mut companions = Companions::default();
    companions.add(Path::new("v3/q.json"), &question("f"), Kind::BfclData);
    companions.add(Path::new("v4/q.json"), &question("g"), Kind::BfclData);
    let result = "{\"id\": \"simple_0\", \"result\": \"[f()]\"}\n";
    let loaded = load_kind(
        Path::new("result.json"),
        result,
        Some(Kind::Bfcl),
        &companions,
    );
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "BFCL id `simple_0` names different questions or answers in the data files given: which one this line answers is a guess; import it with one version of the data"
    );
}

#[test]
fn responses_items_become_native_calls_with_a_derived_finish_reason() {
    let text = r#"{"object": "response", "status": "incomplete",
        "incomplete_details": {"reason": "max_output_tokens"},
        "output": [{"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
                   {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Sure."}]},
                   {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"a\": 1"}]}"#;
    assert_eq!(detect(Path::new("r.json"), text), Some(Kind::Responses));
    let loaded = load("r.json", text);
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "Sure.");
    assert_eq!(t.reasoning.as_deref(), Some("think"));
    // The call ends the output of an `incomplete` response: cut
    // ([`stopped_early`]), what was received kept.
    assert_eq!(args(t, 0), "");
    assert_eq!(t.raw["import"]["truncated_input"], "{\"a\": 1");
    assert_eq!(t.tool_calls.as_ref().unwrap()[0]["id"], "c1");
    assert_eq!(t.finish_reason.as_deref(), Some("length"));
    assert_eq!(t.raw["import"]["finish_reason_derived"], true);
    assert_eq!(t.raw["import"]["raw_text"], false);
    assert!(!t.has_raw_text());
}

/// Probe C, issue 41: a `function_call` item whose own `status` is
/// `incomplete` was read whole, and ran when its arguments happened to
/// parse. It is cut off: `""` arguments (`truncation`), what was received
/// kept, as for Anthropic's `tool_use` cut by `max_tokens` — in a bare
/// response, its stream and a `/v1/responses` Batch body alike.
#[test]
fn responses_an_incomplete_function_call_item_is_cut_off() {
    let item = |status: &str| {
        format!(
            r#"{{"type": "function_call", "id": "fc", "call_id": "c", "name": "f", "arguments": "{{\"city\":\"A\"}}", "status": "{status}"}}"#
        )
    };
    let response = |status: &str, details: &str, item: &str| {
        format!(
            r#"{{"object": "response", "status": "{status}", "incomplete_details": {details}, "output": [{item}]}}"#
        )
    };
    let cut = response(
        "incomplete",
        r#"{"reason": "max_output_tokens"}"#,
        &item("incomplete"),
    );
    let loaded = load("r.json", &cut);
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), "");
    assert_eq!(t.raw["import"]["truncated_input"], "{\"city\":\"A\"}");
    assert_eq!(t.finish_reason.as_deref(), Some("length"));
    // The item's word holds even in a response said to be complete.
    let loaded = load(
        "r.json",
        &response("completed", "null", &item("incomplete")),
    );
    assert_eq!(args(ok(&loaded)[0], 0), "");
    // A completed item is read as sent, with nothing kept aside.
    let loaded = load("r.json", &response("completed", "null", &item("completed")));
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), "{\"city\":\"A\"}");
    assert_eq!(t.raw["import"].get("truncated_input"), None);
    // Streamed: the done item carries the status.
    let done = format!(
        r#"{{"type":"response.output_item.done","output_index":0,"item":{}}}"#,
        item("incomplete")
    );
    let terminal = format!(
        r#"{{"type":"response.incomplete","response":{}}}"#,
        response("incomplete", r#"{"reason": "max_output_tokens"}"#, "")
    );
    let loaded = load("s.sse", &responses_sse(&[CREATED, &done, &terminal]));
    let t = ok(&loaded)[0];
    assert_eq!(
        (args(t, 0), t.finish_reason.as_deref()),
        ("", Some("length"))
    );
    // A Batch output line of a `/v1/responses` request.
    let mut companions = Companions::default();
    companions.batch.insert(
        "r3".into(),
        json!({"model": "gpt-5", "tools": [{"type": "function", "name": "f"}]}),
    );
    let line = format!(
        r#"{{"id": "b3", "custom_id": "r3", "response": {{"status_code": 200, "body": {cut}}}, "error": null}}"#
    );
    let path = Path::new("batch_output.jsonl");
    let loaded = load_kind(path, &line, detect(path, &line), &companions);
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), "");
    assert_eq!(t.raw["import"]["truncated_input"], "{\"city\":\"A\"}");
    assert_eq!(t.finish_reason.as_deref(), Some("length"));
}

#[test]
fn anthropic_blocks_and_stop_reasons() {
    let text = r#"{"request": {"tools": [{"name": "f", "input_schema": {"type": "object"}},
                                        {"type": "web_search_20250305", "name": "web_search"}],
                              "tool_choice": {"type": "tool", "name": "f"}},
        "response": {"type": "message", "role": "assistant", "model": "claude",
          "content": [{"type": "thinking", "thinking": "hm"}, {"type": "text", "text": "ok"},
                      {"type": "tool_use", "id": "t1", "name": "f", "input": {"x": [1, 2]}}],
          "stop_reason": "max_tokens"}}"#;
    let loaded = load("a.json", text);
    let t = ok(&loaded)[0];
    assert_eq!(t.model.as_deref(), Some("claude"));
    assert_eq!(t.tools.len(), 1);
    assert_eq!(t.raw["import"]["server_tools_skipped"][0], "web_search");
    assert_eq!(
        (t.output.as_str(), t.reasoning.as_deref()),
        ("ok", Some("hm"))
    );
    // Probe C, bug 4: `max_tokens` with a `tool_use` last: the call is cut
    // off (Anthropic's documentation), whatever `input` holds.
    assert_eq!(args(t, 0), "");
    assert_eq!(t.raw["import"]["truncated_input"], "{\"x\":[1,2]}");
    assert_eq!(t.finish_reason.as_deref(), Some("length"));
    assert_eq!(t.expect.as_ref().unwrap().calls[0].name, "f");
}

/// Probe C, bug 4: only the last block is cut by the limit (a `tool_use`
/// followed by text is whole), and a context-window stop is a `length`.
#[test]
fn anthropic_a_tool_use_cut_by_the_limit_is_only_the_last_block() {
    let doc = |blocks: &str, stop: &str| {
        format!(r#"{{"type": "message", "content": [{blocks}], "stop_reason": "{stop}"}}"#)
    };
    let call = r#"{"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}"#;
    let then_text = format!(r#"{call}, {{"type": "text", "text": "and"}}"#);
    let loaded = load("a.json", &doc(&then_text, "max_tokens"));
    assert_eq!(args(ok(&loaded)[0], 0), "{\"a\":1}");
    let loaded = load("a.json", &doc(call, "model_context_window_exceeded"));
    let t = ok(&loaded)[0];
    assert_eq!(
        (args(t, 0), t.finish_reason.as_deref()),
        ("", Some("length"))
    );
    let loaded = load("a.json", &doc(call, "tool_use"));
    assert_eq!(args(ok(&loaded)[0], 0), "{\"a\":1}");
}

#[test]
fn anthropic_stream_accumulates_input_json_per_block() {
    let text = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude\",\"content\":[]}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"u\",\"name\":\"g\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"a\\\":\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" 1}\"}}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    assert_eq!(
        detect(Path::new("a.sse"), text),
        Some(Kind::AnthropicStream)
    );
    let loaded = load("a.sse", text);
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), "{\"a\": 1}");
    // No delta at all: the start event's empty input.
    assert_eq!(args(t, 1), "{}");
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
}

#[test]
fn otel_new_and_old_conventions() {
    let new = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"spanId": "s1", "name": "chat", "attributes": [
            {"key": "gen_ai.request.model", "value": {"stringValue": "gpt"}},
            {"key": "gen_ai.tool.definitions", "value": {"stringValue": "[{\"type\": \"function\", \"name\": \"f\", \"parameters\": {\"type\": \"object\"}}]"}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": "[{\"role\": \"assistant\", \"parts\": [{\"type\": \"reasoning\", \"content\": \"r\"}, {\"type\": \"tool_call\", \"id\": \"c\", \"name\": \"f\", \"arguments\": {\"k\": 1}}], \"finish_reason\": \"tool_call\"}]"}}
        ]},
        {"spanId": "s2", "name": "execute_tool f", "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}]}
    ]}]}]});
    let loaded = load("o.json", &new.to_string());
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 1, "the tool-execution span is not an exchange");
    let t = ts[0];
    assert_eq!(t.id, "o:s1");
    assert_eq!(t.model.as_deref(), Some("gpt"));
    assert_eq!(t.tools[0].name, "f");
    assert_eq!(t.reasoning.as_deref(), Some("r"));
    assert_eq!(args(t, 0), "{\"k\":1}");
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));

    let old = serde_json::json!({"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId": "s3", "attributes": [
        {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-old"}},
        {"key": "gen_ai.completion.0.content", "value": {"stringValue": "text"}},
        {"key": "gen_ai.completion.0.finish_reason", "value": {"stringValue": "stop"}},
        {"key": "gen_ai.completion.1.tool_calls.0.name", "value": {"stringValue": "g"}},
        {"key": "gen_ai.completion.1.tool_calls.0.arguments", "value": {"stringValue": "{\"z\": true}"}}
    ]}]}]}]});
    let loaded = load("old.json", &old.to_string());
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 2);
    assert_eq!(
        (ts[0].id.as_str(), ts[0].output.as_str()),
        ("old:s3#0", "text")
    );
    assert_eq!(ts[1].sample, Some(1));
    assert_eq!(args(ts[1], 0), "{\"z\": true}");

    let empty = r#"{"resourceSpans": []}"#;
    let loaded = load("e.json", empty);
    assert!(
        loaded[0]
            .as_ref()
            .unwrap_err()
            .reason
            .starts_with("no GenAI span"),
        "{:?}",
        loaded[0]
    );
}

#[test]
fn bfcl_types_are_normalized_and_answers_become_expect() {
    let schema = serde_json::json!({"type": "dict", "properties": {
        "a": {"type": "float"}, "b": {"type": "any"}, "c": {"type": "tuple", "items": {"type": "String"}},
        "d": {"type": "dict", "properties": {"e": {"type": "long"}}}}, "required": ["a"]});
    assert_eq!(
        bfcl::normalize(&schema, 0),
        serde_json::json!({"type": "object", "properties": {
            "a": {"type": "number"}, "b": {}, "c": {"type": "array", "items": {"type": "string"}},
            "d": {"type": "object", "properties": {"e": {"type": "integer"}}}}, "required": ["a"]})
    );
    let score = concat!(
        "{\"accuracy\": 0.5, \"correct_count\": 1, \"total_count\": 2}\n",
        "{\"id\": \"simple_9\", \"model_name\": \"m\", \"test_category\": \"simple\", \"valid\": false,",
        " \"prompt\": {\"function\": [{\"name\": \"f\", \"parameters\": {\"type\": \"dict\", \"properties\": {\"x\": {\"type\": \"integer\"}, \"u\": {\"type\": \"string\"}}}}]},",
        " \"model_result_raw\": \"[f(x=2)]\", \"possible_answer\": [{\"f\": {\"x\": [1, 2], \"u\": [\"\", \"cm\"]}}]}\n",
        "{\"id\": \"irrelevance_3\", \"result\": [{\"f\": \"{\\\"x\\\": 1}\"}]}\n",
        "{\"id\": \"multi_turn_1\", \"result\": [[{\"f\": \"{}\"}]]}\n",
    );
    assert_eq!(detect(Path::new("score.json"), score), Some(Kind::Bfcl));
    let loaded = load("score.json", score);
    assert_eq!(loaded.len(), 3);
    let t = loaded[0].as_ref().unwrap();
    assert_eq!(t.output, "[f(x=2)]");
    assert_eq!(t.tools[0].parameters.as_ref().unwrap()["type"], "object");
    let expected = serde_json::json!({"properties": {"x": {"enum": [1, 2]},
        // Optional: also the strings BFCL standardizes to `""`.
        "u": {"anyOf": [
            {"type": "string", "pattern": "^[ ,./\\-_*^]*[cC][ ,./\\-_*^]*[mM][ ,./\\-_*^]*$"},
            {"type": "string", "pattern": "^[ ,./\\-_*^]*$"}]}}, "required": ["x"],
        "additionalProperties": false});
    assert_eq!(
        t.expect.as_ref().unwrap().calls[0]
            .arguments
            .as_ref()
            .unwrap(),
        &expected
    );
    let fc = loaded[1].as_ref().unwrap();
    assert_eq!(fc.expect.as_ref().unwrap().calls, vec![]);
    assert_eq!(args(fc, 0), "{\"x\": 1}");
    assert!(!fc.has_raw_text());
    let e = loaded[2].as_ref().unwrap_err();
    assert_eq!(e.line, Some(4));
    assert!(e.reason.contains("multi-turn"), "{e}");
}

#[test]
fn detection_of_each_fixture() {
    let cases = [
        ("openai-chat/pair_n2.json", Some(Kind::OpenaiChat)),
        ("openai-chat/stream.sse", Some(Kind::OpenaiStream)),
        ("openai-chat/stream.request.json", Some(Kind::OpenaiRequest)),
        ("openai-batch/batch_input.jsonl", Some(Kind::BatchInput)),
        ("openai-batch/batch_output.jsonl", Some(Kind::BatchOutput)),
        ("openai-batch/vllm_output.jsonl", Some(Kind::BatchOutput)),
        ("responses/function_call.json", Some(Kind::Responses)),
        ("responses/stream.sse", Some(Kind::ResponsesStream)),
        ("responses/stream.request.json", Some(Kind::OpenaiRequest)),
        ("anthropic/tool_use.json", Some(Kind::Anthropic)),
        ("anthropic/stream.sse", Some(Kind::AnthropicStream)),
        ("otel/spans.json", Some(Kind::Otel)),
        ("otel/old_attributes.jsonl", Some(Kind::Otel)),
        ("bfcl/BFCL_v3_simple.json", Some(Kind::BfclData)),
        (
            "bfcl/BFCL_v3_simple_possible_answer.json",
            Some(Kind::BfclData),
        ),
        ("bfcl/BFCL_v3_simple_result.json", Some(Kind::Bfcl)),
        ("bfcl/BFCL_v3_simple_FC_result.json", Some(Kind::Bfcl)),
        ("bfcl/BFCL_v3_simple_score.json", Some(Kind::Bfcl)),
    ];
    for (rel, kind) in cases {
        let path = fixture(rel);
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(detect(&path, &text), kind, "{rel}");
    }
}

/// The fixtures through the loader, as `label` reads them: companions are
/// found beside each file.
#[test]
fn fixtures_load_with_their_companions() {
    let ids = |rel: &str| -> Vec<String> {
        load_file(&fixture(rel))
            .into_iter()
            .map(|l| l.map(|t| t.id).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    };
    assert_eq!(ids("openai-chat/pair_n2.json"), ["pair_n2#0", "pair_n2#1"]);
    assert_eq!(ids("openai-chat/stream.sse"), ["stream"]);
    assert_eq!(ids("openai-chat/stream.request.json"), Vec::<String>::new());
    assert_eq!(ids("responses/stream.sse"), ["stream"]);
    let stream = load_file(&fixture("responses/stream.sse"));
    assert_eq!(stream[0].as_ref().unwrap().tools[0].name, "get_weather");
    assert_eq!(
        ids("openai-batch/batch_output.jsonl"),
        ["smalltalk", "time-now", "weather-antwerp"]
    );
    assert_eq!(
        ids("openai-batch/vllm_output.jsonl"),
        ["time-now", "weather-antwerp"]
    );
    assert_eq!(
        ids("bfcl/BFCL_v3_simple_result.json"),
        ["simple_0", "simple_1", "simple_2"]
    );
    let batch = load_file(&fixture("openai-batch/batch_output.jsonl"));
    let time = batch[1].as_ref().unwrap();
    // The joined input line's two tools, narrowed to the one its
    // `tool_choice` names (`choice::narrowing`, as the proxy reads it).
    assert_eq!(time.tools.len(), 1, "tools from the joined input line");
    assert_eq!(time.tools[0].name, "get_time");
    assert_eq!(time.expect.as_ref().unwrap().calls[0].name, "get_time");
    let bfcl = load_file(&fixture("bfcl/BFCL_v3_simple_result.json"));
    let first = bfcl[0].as_ref().unwrap();
    assert_eq!(first.tools[0].name, "calculate_triangle_area");
    assert!(
        first.expect.is_some(),
        "expect from the possible-answer file"
    );
}

/// Issue 22: a streamed call whose `arguments` was null in every delta was
/// `""` (labeled `truncation`) even when the stream said the call was done.
#[test]
fn a_complete_streamed_call_with_null_arguments_is_an_empty_object() {
    let stream = |finish: &str, done: bool| {
        let mut s = String::from(
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"get_time\",\"arguments\":null}}]}}]}\n\n\
             data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{}}]}}]}\n\n",
        );
        s.push_str(&format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},\"finish_reason\":{finish}}}]}}\n\n"
        ));
        if done {
            s.push_str("data: [DONE]\n");
        }
        s
    };
    let read = |finish: &str, done: bool| {
        let loaded = load("n.sse", &stream(finish, done));
        let t = ok(&loaded)[0].clone();
        let a = args(&t, 0).to_string();
        (a, notes(&t))
    };
    for (finish, done) in [
        ("\"tool_calls\"", true),
        ("\"tool_calls\"", false),
        ("\"stop\"", true),
        ("\"eos\"", true),
        ("null", true),
    ] {
        let (a, notes) = read(finish, done);
        assert_eq!(a, "{}", "{finish} {done}");
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].0, NoteKind::ArgumentsAbsent);
    }
    // Cut off, or stopped at the token limit: the call may have been cut
    // before its arguments, so it stays `""` (truncation), with no note.
    for (finish, done) in [
        ("\"length\"", true),
        ("\"content_filter\"", true),
        ("null", false),
    ] {
        assert_eq!(
            read(finish, done),
            (String::new(), vec![]),
            "{finish} {done}"
        );
    }
    // Arguments sent as an object, not its text, are kept as its text: a
    // complete call never passes with fewer arguments than were sent.
    let object = stream("\"tool_calls\"", true).replace("null}", "{\"tz\": \"UTC\"}}");
    let loaded = load("o.sse", &object);
    assert_eq!(args(ok(&loaded)[0], 0), r#"{"tz":"UTC"}"#);
    // An empty string delta is argument text: `""` stays `""`.
    let empty = stream("\"tool_calls\"", true).replace("null}", "\"\"}");
    let loaded = load("e.sse", &empty);
    assert_eq!(args(ok(&loaded)[0], 0), "");
}

/// Issue 22: `label stream.sse` from the stream's own folder ignored
/// `stream.request.json` (the bare name's parent is `""`, and the request
/// was stored under `./stream`). Every spelling of the path must find it:
/// absolute, with `..`, through a symlinked folder, as a symlinked file
/// (the request beside the link or beside its target). The bare and `./`
/// spellings, which need a working directory, are pinned end to end in
/// `tests/import.rs`.
#[cfg(unix)]
#[test]
fn a_stream_finds_its_request_whatever_the_spelling_of_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    std::fs::create_dir(&real).unwrap();
    for name in ["stream.sse", "stream.request.json"] {
        std::fs::copy(fixture(&format!("openai-chat/{name}")), real.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(&real, dir.path().join("linked")).unwrap();
    let other = dir.path().join("other");
    std::fs::create_dir(&other).unwrap();
    std::os::unix::fs::symlink(real.join("stream.sse"), other.join("alias.sse")).unwrap();
    let tools = |path: &Path| -> Vec<String> {
        let loaded = load_file(path);
        ok(&loaded)[0]
            .tools
            .iter()
            .map(|t| t.name.clone())
            .collect()
    };
    for path in [
        real.join("stream.sse"),
        real.join("../real/./stream.sse"),
        dir.path().join("linked/stream.sse"),
        other.join("alias.sse"),
    ] {
        assert_eq!(tools(&path), ["get_weather"], "{}", path.display());
    }
    // Beside the link, under the link's own stem, a request wins over none.
    std::fs::write(
        other.join("alias.request.json"),
        r#"{"messages": [], "tools": [{"type": "function", "function": {"name": "beside_link"}}]}"#,
    )
    .unwrap();
    assert_eq!(tools(&other.join("alias.sse")), ["beside_link"]);
    // And given on the command line in another spelling than the stream.
    let mut companions = Companions::default();
    let request = real.join("stream.request.json");
    let text = std::fs::read_to_string(&request).unwrap();
    companions.add(
        &dir.path().join("linked/stream.request.json"),
        &text,
        Kind::OpenaiRequest,
    );
    let stream_text = std::fs::read_to_string(real.join("stream.sse")).unwrap();
    let loaded = load_kind(
        &real.join("stream.sse"),
        &stream_text,
        Some(Kind::OpenaiStream),
        &companions,
    );
    assert_eq!(ok(&loaded)[0].tools[0].name, "get_weather");
    // A symlinked Batch output finds its input beside the file it points to.
    for name in ["batch_output.jsonl", "batch_input.jsonl"] {
        std::fs::copy(fixture(&format!("openai-batch/{name}")), real.join(name)).unwrap();
    }
    std::os::unix::fs::symlink(real.join("batch_output.jsonl"), other.join("out.jsonl")).unwrap();
    let loaded = load_file(&other.join("out.jsonl"));
    assert_eq!(ok(&loaded).len(), 3);
}

/// Issue 22: a Groq-style stream that ends with an error carrying
/// `failed_generation` lost the model's text (the error was a load error
/// and the transcript, if any, had an empty output).
#[test]
fn a_stream_ending_in_failed_generation_keeps_the_text_as_output() {
    let error = r#"data: {"error":{"message":"Failed to call a function. See 'failed_generation' for more details.","type":"invalid_request_error","code":"tool_use_failed","failed_generation":"<function=get_weather>{\"city\": \"Antwerp\"}</function>"}}"#;
    let full = "<function=get_weather>{\"city\": \"Antwerp\"}</function>";
    // The error alone (Groq buffers a call's text), or after some content.
    for (before, chunks) in [
        ("", vec![full.to_string()]),
        (
            "data: {\"object\":\"chat.completion.chunk\",\"model\":\"llama\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"<function=\"}}]}\n\n",
            vec![
                "<function=".to_string(),
                full["<function=".len()..].to_string(),
            ],
        ),
        (
            "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"other\"}}]}\n\n",
            vec![full.to_string()],
        ),
    ] {
        let text = format!("{before}{error}\n\n");
        assert_eq!(detect(Path::new("g.sse"), &text), Some(Kind::OpenaiStream));
        let loaded = load("g.sse", &text);
        let ts = ok(&loaded);
        assert_eq!(ts.len(), 1, "{before}");
        let t = ts[0];
        assert_eq!(t.output, full);
        assert_eq!(t.chunks.as_deref(), Some(&chunks[..]), "{before}");
        // No `tool_calls` delta: the capture holds no native calls (a
        // `[]` claimed a parser that found none, the seventh probe).
        assert_eq!(t.tool_calls, None, "the server streamed no call");
        assert_eq!(t.finish_reason, None);
        assert!(t.raw["import"].get("unterminated").is_none());
        let notes = notes(t);
        assert_eq!(notes.len(), 1);
        assert_eq!(notes[0].0, NoteKind::FailedGeneration);
        assert!(notes[0].1.contains("`tool_use_failed`"), "{}", notes[0].1);
    }
    // An error without a failed generation is still reported as one.
    let loaded = load("e.sse", "data: {\"error\":{\"message\":\"overloaded\"}}\n");
    let e = loaded[0].as_ref().unwrap_err();
    assert!(e.reason.starts_with("the stream reports an error"), "{e}");
}

/// The same error answered without streaming, captured as a pair.
#[test]
fn a_pair_whose_response_is_a_failed_generation_keeps_the_text() {
    let text = r#"{"request": {"model": "llama", "tools": [{"type": "function", "function": {"name": "web_search"}}]},
      "response": {"error": {"message": "Failed to call a function.", "type": "invalid_request_error",
        "code": "tool_use_failed", "failed_generation": "web_search{\"query\": \"x\"}</function>"}}}"#;
    let loaded = load("p.json", text);
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "web_search{\"query\": \"x\"}</function>");
    assert_eq!(t.tool_calls, Some(vec![]));
    assert_eq!(t.tools[0].name, "web_search");
    assert_eq!(notes(t)[0].0, NoteKind::FailedGeneration);
    // An error without one is still not a transcript.
    let plain = r#"{"request": {}, "response": {"error": {"message": "rate limited"}}}"#;
    let e = load("q.json", plain)[0].clone().unwrap_err();
    assert_eq!(
        e.reason,
        "the response is an error, not an answer: `error`: rate limited"
    );
}

/// An SSE capture of `events` (JSON texts), each with its `event:` line as
/// the Responses API sends it.
fn responses_sse(events: &[&str]) -> String {
    events
        .iter()
        .map(|e| {
            let v: Value = serde_json::from_str(e).unwrap();
            format!("event: {}\ndata: {e}\n\n", v["type"].as_str().unwrap())
        })
        .collect()
}

const CREATED: &str = r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5-mini","output":[]}}"#;

/// Issue 22: a Responses API stream gave "the response has no choices".
/// Items are rebuilt per `output_index` (a delta carrying only `item_id`
/// finds its item), argument deltas of parallel calls interleave, and the
/// finish reason comes from the final status.
#[test]
fn responses_stream_rebuilds_reasoning_text_and_calls_by_output_index() {
    let text = responses_sse(&[
        CREATED,
        r#"{"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}"#,
        r#"{"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}}"#,
        r#"{"type":"response.reasoning_summary_text.delta","sequence_number":3,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"Two cities, "}"#,
        r#"{"type":"response.reasoning_summary_text.delta","sequence_number":4,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"two calls."}"#,
        r#"{"type":"response.output_item.added","sequence_number":5,"output_index":1,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}"#,
        r#"{"type":"response.output_text.delta","sequence_number":6,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"Checking "}"#,
        r#"{"type":"response.output_text.delta","sequence_number":7,"item_id":"msg_1","output_index":1,"content_index":0,"delta":"both."}"#,
        r#"{"type":"response.output_item.added","sequence_number":8,"output_index":2,"item":{"id":"fc_a","type":"function_call","call_id":"call_a","name":"get_weather","arguments":"","status":"in_progress"}}"#,
        r#"{"type":"response.output_item.added","sequence_number":9,"output_index":3,"item":{"id":"fc_b","type":"function_call","call_id":"call_b","name":"get_weather","arguments":"","status":"in_progress"}}"#,
        r#"{"type":"response.function_call_arguments.delta","sequence_number":10,"item_id":"fc_a","output_index":2,"delta":"{\"city\":"}"#,
        r#"{"type":"response.function_call_arguments.delta","sequence_number":11,"item_id":"fc_b","delta":"{\"city\":\"Ghent\"}"}"#,
        r#"{"type":"response.function_call_arguments.delta","sequence_number":12,"item_id":"fc_a","output_index":2,"delta":"\"Antwerp\"}"}"#,
        r#"{"type":"response.function_call_arguments.done","sequence_number":13,"item_id":"fc_b","output_index":3,"arguments":"{\"city\":\"Ghent\"}"}"#,
        r#"{"type":"response.completed","sequence_number":14,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-5-mini","output":[],"usage":{"output_tokens":40}}}"#,
    ]);
    let path = Path::new("rs.sse");
    assert_eq!(detect(path, &text), Some(Kind::ResponsesStream));
    let loaded = load("rs.sse", &text);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 1);
    let t = ts[0];
    assert_eq!(t.id, "rs");
    assert_eq!(t.output, "Checking both.");
    assert_eq!(
        t.chunks.as_deref(),
        Some(&["Checking ".to_string(), "both.".to_string()][..])
    );
    assert_eq!(t.reasoning.as_deref(), Some("Two cities, two calls."));
    let calls = t.tool_calls.as_ref().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["id"], "call_a");
    assert_eq!(args(t, 0), "{\"city\":\"Antwerp\"}");
    assert_eq!(calls[1]["id"], "call_b");
    assert_eq!(args(t, 1), "{\"city\":\"Ghent\"}");
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(t.raw["import"]["from"], "openai-responses-stream");
    assert_eq!(t.raw["import"]["status"], "completed");
    assert_eq!(t.raw["import"]["usage"]["output_tokens"], 40);
    assert!(!t.has_raw_text());
}

/// The done item and a terminal `output` are the server's final word.
#[test]
fn responses_stream_prefers_done_items_and_the_final_output() {
    let added = r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"c1","name":"f","arguments":""}}"#;
    let delta = r#"{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":0,"delta":"{\"x\":"}"#;
    let done = r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"fc_1","type":"function_call","call_id":"c1","name":"f","arguments":"{\"x\":1}","status":"completed"}}"#;
    let completed = |output: &str| {
        format!(
            r#"{{"type":"response.completed","response":{{"object":"response","status":"completed","output":{output}}}}}"#
        )
    };
    // The final output refines the streamed call `c1` (its whole
    // arguments, over the cut-off deltas): the same call, its word wins.
    let final_output = r#"[{"type":"function_call","id":"fc_1","call_id":"c1","name":"f","arguments":"{\"x\":2}","status":"completed"}]"#;
    for (events, name, arguments) in [
        (vec![CREATED, added, delta, done], "f", "{\"x\":1}"),
        (vec![CREATED, added, delta], "f", "{\"x\":"),
    ] {
        let mut events: Vec<String> = events.into_iter().map(str::to_string).collect();
        events.push(completed("[]"));
        let refs: Vec<&str> = events.iter().map(String::as_str).collect();
        let loaded = load("d.sse", &responses_sse(&refs));
        let t = ok(&loaded)[0];
        assert_eq!(t.tool_calls.as_ref().unwrap()[0]["function"]["name"], name);
        assert_eq!(args(t, 0), arguments);
    }
    let text = responses_sse(&[CREATED, added, delta, &completed(final_output)]);
    let loaded = load("d.sse", &text);
    let t = ok(&loaded)[0];
    assert_eq!(t.tool_calls.as_ref().unwrap()[0]["function"]["name"], "f");
    assert_eq!(args(t, 0), "{\"x\":2}");
    // A stream of lifecycle events only: the final output is all there is.
    let final_only = responses_sse(&[CREATED, &completed(final_output)]);
    let loaded = load("d.sse", &final_only);
    assert_eq!(args(ok(&loaded)[0], 0), "{\"x\":2}");
}

/// Probe (f1): a terminal event whose `output` left out a `function_call`
/// the events streamed replaced the streamed items, so the call vanished
/// and the answer was read as text (`no_call`) — while a streaming client
/// (the OpenAI SDK's event handlers) saw the call and may have run it. A
/// final output holding a call the stream never sent is the same
/// disagreement the other way. Either refuses the stream, naming the calls.
#[test]
fn a_responses_stream_whose_final_output_disagrees_on_the_calls_is_refused() {
    let text_added = r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}"#;
    let text_delta = r#"{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":"Checking."}"#;
    let call_added = r#"{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"c1","name":"delete_file","arguments":""}}"#;
    let call_args = r#"{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":"{\"path\":\"/tmp/a\"}"}"#;
    let call_done = r#"{"type":"response.output_item.done","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"c1","name":"delete_file","arguments":"{\"path\":\"/tmp/a\"}","status":"completed"}}"#;
    let message = r#"{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Checking."}]}"#;
    let final_call = r#"{"id":"fc_1","type":"function_call","call_id":"c1","name":"delete_file","arguments":"{\"path\":\"/tmp/a\"}","status":"completed"}"#;
    let terminal = |kind: &str, output: &str| {
        let status = kind.trim_start_matches("response.");
        let details = if status == "incomplete" {
            r#""incomplete_details":{"reason":"max_output_tokens"},"#
        } else {
            ""
        };
        format!(
            r#"{{"type":"{kind}","response":{{"object":"response","status":"{status}",{details}"output":[{output}]}}}}"#
        )
    };
    // The call vanishes from the final output, after `.done` or after its
    // arguments only, in a completed or an incomplete response.
    for kind in ["response.completed", "response.incomplete"] {
        for events in [
            vec![
                CREATED, text_added, text_delta, call_added, call_args, call_done,
            ],
            vec![CREATED, text_added, text_delta, call_added, call_args],
        ] {
            let mut events: Vec<String> = events.into_iter().map(str::to_string).collect();
            events.push(terminal(kind, message));
            let refs: Vec<&str> = events.iter().map(String::as_str).collect();
            let loaded = load("v.sse", &responses_sse(&refs));
            assert_eq!(loaded.len(), 1, "the error, and no transcript");
            let e = loaded[0].as_ref().unwrap_err();
            assert_eq!(e.line, Some(events.len() * 3 - 1), "at the terminal event");
            assert_eq!(
                e.reason,
                format!(
                    "the `{kind}` event's `output` and the streamed items disagree on the calls: the stream sent `function_call` \"delete_file\" (`c1`) that the final `output` leaves out: a streaming client saw the streamed calls, so the stream is not imported"
                )
            );
        }
    }
    // A call in the final output the stream never sent (it streamed text).
    let other = r#"{"type":"function_call","id":"fc_9","call_id":"c9","name":"g","arguments":"{}","status":"completed"}"#;
    let loaded = load(
        "w.sse",
        &responses_sse(&[
            CREATED,
            text_added,
            text_delta,
            &terminal("response.completed", &format!("{message},{other}")),
        ]),
    );
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "the `response.completed` event's `output` and the streamed items disagree on the calls: the final `output` holds `function_call` \"g\" (`c9`) that the stream never sent: a streaming client saw the streamed calls, so the stream is not imported"
    );
    // A call replaced by another: both named.
    let loaded = load(
        "x.sse",
        &responses_sse(&[
            CREATED,
            call_added,
            call_args,
            &terminal("response.completed", other),
        ]),
    );
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "the `response.completed` event's `output` and the streamed items disagree on the calls: the stream sent `function_call` \"delete_file\" (`c1`) that the final `output` leaves out; the final `output` holds `function_call` \"g\" (`c9`) that the stream never sent: a streaming client saw the streamed calls, so the stream is not imported"
    );
    // Agreeing: the streamed call, refined, and the text.
    let loaded = load(
        "y.sse",
        &responses_sse(&[
            CREATED,
            text_added,
            text_delta,
            call_added,
            call_args,
            &terminal("response.completed", &format!("{message},{final_call}")),
        ]),
    );
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "Checking.");
    assert_eq!(args(t, 0), "{\"path\":\"/tmp/a\"}");
}

#[test]
fn responses_stream_finish_reason_comes_from_the_final_status() {
    let text_item = r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hello"}"#;
    let call = r#"{"type":"response.output_item.added","output_index":1,"item":{"id":"fc_1","type":"function_call","call_id":"c1","name":"f","arguments":""}}"#;
    let cut = r#"{"type":"response.function_call_arguments.delta","output_index":1,"delta":"{\"city\": \"Ant"}"#;
    let incomplete = r#"{"type":"response.incomplete","response":{"object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}}"#;
    let filtered = r#"{"type":"response.incomplete","response":{"object":"response","status":"incomplete","incomplete_details":{"reason":"content_filter"},"output":[]}}"#;
    let completed = r#"{"type":"response.completed","response":{"object":"response","status":"completed","output":[]}}"#;
    let finish = |events: &[&str]| {
        let loaded = load("f.sse", &responses_sse(events));
        let t = ok(&loaded)[0].clone();
        (
            t.finish_reason.clone(),
            t.raw["import"].get("unterminated").cloned(),
        )
    };
    assert_eq!(
        finish(&[CREATED, text_item, completed]),
        (Some("stop".into()), None)
    );
    assert_eq!(
        finish(&[CREATED, text_item, call, cut, incomplete]),
        (Some("length".into()), None)
    );
    assert_eq!(
        finish(&[CREATED, text_item, filtered]),
        (Some("content_filter".into()), None)
    );
    // No terminal event: cut off, no finish reason, the last call cut
    // (probe 44), the arguments received kept.
    assert_eq!(
        finish(&[CREATED, text_item, call, cut]),
        (None, Some(json!(true)))
    );
    let loaded = load("f.sse", &responses_sse(&[CREATED, call, cut]));
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), "");
    assert_eq!(t.raw["import"]["truncated_input"], "{\"city\": \"Ant");
}

#[test]
fn responses_stream_failures_are_reported_with_their_code() {
    let failed = r#"{"type":"response.failed","response":{"object":"response","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}}"#;
    let loaded = load("x.sse", &responses_sse(&[CREATED, failed]));
    let e = loaded[0].as_ref().unwrap_err();
    // At the `response.failed` event's line, not the stream's first.
    assert_eq!(e.line, Some(5));
    assert_eq!(e.reason, "the response failed: `server_error`: boom");
    let error =
        r#"{"type":"error","code":"rate_limit_exceeded","message":"slow down","param":null}"#;
    let loaded = load("y.sse", &responses_sse(&[CREATED, error]));
    assert_eq!(loaded.len(), 1, "the error, and no transcript");
    let e = loaded[0].as_ref().unwrap_err();
    assert_eq!(e.line, Some(5));
    assert_eq!(
        e.reason,
        "the stream reports an error: `rate_limit_exceeded`: slow down (the stream from line 2 is not imported)"
    );
    // Bare JSON lines of events read too.
    let jsonl = format!(
        "{CREATED}\n{{\"type\":\"response.output_text.delta\",\"output_index\":0,\"delta\":\"hi\"}}\n"
    );
    assert_eq!(
        detect(Path::new("z.jsonl"), &jsonl),
        Some(Kind::ResponsesStream)
    );
    let loaded = load("z.jsonl", &jsonl);
    assert_eq!(ok(&loaded)[0].output, "hi");
}

/// Issue 22: an SSE file with 200,000 choice indexes took 688 MB. Every
/// per-stream and per-file count is capped while reading, with an error
/// that says what was not read.
#[test]
fn stream_counts_are_capped_while_reading_with_a_clear_error() {
    use super::sse::{MAX_FILE_STREAMS, MAX_LINE_ERRORS, MAX_STREAM_CHOICES, MAX_STREAM_PARTS};
    let first_ok = |loaded: &[Loaded]| -> Transcript {
        loaded.iter().find_map(|l| l.as_ref().ok()).unwrap().clone()
    };
    let errors = |loaded: &[Loaded]| -> Vec<String> {
        loaded
            .iter()
            .filter_map(|l| l.as_ref().err().map(|e| e.reason.clone()))
            .collect()
    };
    // Choice indexes of one chat stream.
    let mut text = String::new();
    for i in 0..MAX_STREAM_CHOICES + 50 {
        text.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":{i},\"delta\":{{\"content\":\"x\"}}}}]}}\n"
        ));
    }
    text.push_str("data: [DONE]\n");
    let loaded = load("c.sse", &text);
    assert_eq!(
        loaded.iter().filter(|l| l.is_ok()).count(),
        MAX_STREAM_CHOICES
    );
    assert_eq!(
        errors(&loaded),
        [format!(
            "more than {MAX_STREAM_CHOICES} choice indexes in one stream: choice {MAX_STREAM_CHOICES} and later new ones are not read"
        )]
    );
    // Tool-call indexes of one choice.
    let mut text = String::new();
    for i in 0..MAX_STREAM_PARTS + 5 {
        text.push_str(&format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{i},\"function\":{{\"name\":\"f\",\"arguments\":\"{{}}\"}}}}]}}}}]}}\n"
        ));
    }
    let loaded = load("t.sse", &text);
    assert_eq!(
        first_ok(&loaded).tool_calls.as_ref().unwrap().len(),
        MAX_STREAM_PARTS
    );
    assert!(errors(&loaded)[0].starts_with(&format!(
        "more than {MAX_STREAM_PARTS} tool calls in choice 0"
    )));
    // Output items of one Responses stream.
    let mut events = vec![CREATED.to_string()];
    for i in 0..MAX_STREAM_PARTS + 5 {
        events.push(format!(
            r#"{{"type":"response.output_text.delta","output_index":{i},"content_index":0,"delta":"x"}}"#
        ));
    }
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    let loaded = load("r.sse", &responses_sse(&refs));
    assert_eq!(first_ok(&loaded).output.len(), MAX_STREAM_PARTS);
    assert!(errors(&loaded)[0].starts_with(&format!("more than {MAX_STREAM_PARTS} output items")));
    // Content parts of one Responses output item.
    let mut events = vec![CREATED.to_string()];
    for i in 0..MAX_STREAM_PARTS + 5 {
        events.push(format!(
            r#"{{"type":"response.output_text.delta","output_index":0,"content_index":{i},"delta":"x"}}"#
        ));
    }
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    let loaded = load("p.sse", &responses_sse(&refs));
    assert_eq!(first_ok(&loaded).output.len(), MAX_STREAM_PARTS);
    assert!(errors(&loaded)[0].starts_with(&format!(
        "more than {MAX_STREAM_PARTS} content parts in output item 0"
    )));
    // Content blocks of one Anthropic message.
    let mut text =
        String::from("data: {\"type\":\"message_start\",\"message\":{\"role\":\"assistant\"}}\n");
    for i in 0..MAX_STREAM_PARTS + 5 {
        text.push_str(&format!(
            "data: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"text_delta\",\"text\":\"x\"}}}}\n"
        ));
    }
    let loaded = load("a.sse", &text);
    assert_eq!(first_ok(&loaded).output.len(), MAX_STREAM_PARTS);
    assert!(
        errors(&loaded)[0].starts_with(&format!("more than {MAX_STREAM_PARTS} content blocks"))
    );
    // Streams of one file.
    let one = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\ndata: [DONE]\n";
    let text = one.repeat(MAX_FILE_STREAMS + 3);
    let loaded = load("s.sse", &text);
    assert_eq!(
        loaded.iter().filter(|l| l.is_ok()).count(),
        MAX_FILE_STREAMS
    );
    let first_unread = 2 * MAX_FILE_STREAMS + 1;
    assert_eq!(
        errors(&loaded),
        [format!(
            "more than {MAX_FILE_STREAMS} streams in one file: line {first_unread} and the rest are not read"
        )]
    );
    // Anthropic messages: the first event of the one over the cap is named.
    let one = "data: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\ndata: {\"type\":\"message_stop\"}\n";
    let text = format!("{}event: ping\ndata: {{}}\n", one.repeat(MAX_FILE_STREAMS));
    let loaded = load("a.sse", &text);
    assert_eq!(loaded.len(), MAX_FILE_STREAMS);
    assert!(errors(&loaded).is_empty());
    let loaded = load("a.sse", &one.repeat(MAX_FILE_STREAMS + 3));
    assert_eq!(
        loaded.iter().filter(|l| l.is_ok()).count(),
        MAX_FILE_STREAMS
    );
    assert_eq!(
        errors(&loaded),
        [format!(
            "more than {MAX_FILE_STREAMS} streams in one file: line {first_unread} and the rest are not read"
        )]
    );
    // Unreadable lines: the first ones one by one, then a count.
    let text = "data: nope\n".repeat(MAX_LINE_ERRORS + 20);
    let loaded = load("e.sse", &text);
    let errs = errors(&loaded);
    assert_eq!(errs.len(), MAX_LINE_ERRORS + 1);
    assert!(errs[0].starts_with("not valid JSON"), "{}", errs[0]);
    assert_eq!(
        errs[MAX_LINE_ERRORS],
        format!("20 more errors not shown (only the first {MAX_LINE_ERRORS} are reported)")
    );
}

/// Found in other projects' bug reports (Ollama streams `index: 0` for every
/// parallel call; older Ollama and Mistral omit `index`; Gemini shims give
/// 0): keyed by `index` alone, two calls became one call with both argument
/// texts concatenated (`{"city":"A"}{"city":"B"}`), labeled as the model's
/// malformed JSON. A new `id` starts a new call; a fragment without `id`
/// continues the latest call at its index (its list position without one).
#[test]
fn streamed_calls_sharing_or_lacking_an_index_are_told_apart_by_id() {
    let chunk = |calls: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":{calls}}}}}]}}\n\n"
        )
    };
    let end = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n";
    let calls_of = |text: &str| {
        let loaded = load("i.sse", text);
        let t = ok(&loaded)[0].clone();
        let calls: Vec<(String, String, String)> = t
            .tool_calls
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["id"].as_str().unwrap_or("").to_string(),
                    c["function"]["name"].as_str().unwrap().to_string(),
                    c["function"]["arguments"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        (calls, notes(&t))
    };
    let expected = vec![
        (
            "a".to_string(),
            "w".to_string(),
            "{\"city\":\"A\"}".to_string(),
        ),
        (
            "b".to_string(),
            "w".to_string(),
            "{\"city\":\"B\"}".to_string(),
        ),
    ];
    // Every call at index 0, each in fragments.
    let text = [
        chunk(r#"[{"index":0,"id":"a","function":{"name":"w","arguments":"{\"city\":"}}]"#),
        chunk(r#"[{"index":0,"function":{"arguments":"\"A\"}"}}]"#),
        chunk(r#"[{"index":0,"id":"b","function":{"name":"w","arguments":"{\"city\":"}}]"#),
        chunk(r#"[{"index":0,"function":{"arguments":"\"B\"}"}}]"#),
        end.to_string(),
    ]
    .concat();
    let (calls, notes) = calls_of(&text);
    assert_eq!(calls, expected);
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].0, NoteKind::IndexReused);
    // No index at all: whole calls one per chunk, or an id then fragments.
    let text = [
        chunk(r#"[{"id":"a","function":{"name":"w","arguments":"{\"city\":\"A\"}"}}]"#),
        chunk(r#"[{"id":"b","function":{"name":"w","arguments":"{\"city\":"}}]"#),
        chunk(r#"[{"function":{"arguments":"\"B\"}"}}]"#),
        end.to_string(),
    ]
    .concat();
    assert_eq!(calls_of(&text), (expected.clone(), vec![]));
    // Neither index nor id: the position in the chunk's list tells them apart.
    let text = [
        chunk(r#"[{"function":{"name":"w","arguments":"{\"city\":"}},{"function":{"name":"w","arguments":"{\"city\":\"B\"}"}}]"#),
        chunk(r#"[{"function":{"arguments":"\"A\"}"}}]"#),
        end.to_string(),
    ]
    .concat();
    let (calls, _) = calls_of(&text);
    let args: Vec<&str> = calls.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(args, [r#"{"city":"A"}"#, r#"{"city":"B"}"#]);
    // A proxy that gives every fragment a fresh id (even repeating the
    // name), or an empty id on continuations: still one call, its first id.
    let text = [
        chunk(r#"[{"index":0,"id":"a","function":{"name":"w","arguments":"{\"city\":"}}]"#),
        chunk(r#"[{"index":0,"id":"x1","function":{"name":"w","arguments":"\"A\""}}]"#),
        chunk(r#"[{"index":0,"id":"","function":{"arguments":"}"}}]"#),
        end.to_string(),
    ]
    .concat();
    let (calls, notes) = calls_of(&text);
    assert_eq!(
        calls,
        [(
            "a".to_string(),
            "w".to_string(),
            r#"{"city":"A"}"#.to_string()
        )]
    );
    assert_eq!(notes, vec![]);
    // A brace inside a string does not close the arguments early.
    let text = [
        chunk(r#"[{"index":0,"id":"a","function":{"name":"w","arguments":"{\"q\":\"}\""}}]"#),
        chunk(r#"[{"index":0,"id":"x2","function":{"name":"w","arguments":"}"}}]"#),
        end.to_string(),
    ]
    .concat();
    assert_eq!(calls_of(&text).0.len(), 1);
    // The same id repeated in every fragment is one call.
    let text = [
        chunk(r#"[{"index":0,"id":"a","function":{"name":"w","arguments":"{\"city\":"}}]"#),
        chunk(r#"[{"index":0,"id":"a","function":{"name":"w","arguments":"\"A\"}"}}]"#),
        chunk(r#"[{"index":1,"id":"b","function":{"name":"w","arguments":"{\"city\":\"B\"}"}}]"#),
        end.to_string(),
    ]
    .concat();
    assert_eq!(calls_of(&text), (expected, vec![]));
}

/// Probe s48: Gemini's OpenAI endpoint, older Ollama, LM Studio and
/// llama.cpp servers send each parallel call whole in one delta without
/// `index`, some with an empty `id`. One per chunk, both were read as one
/// call `w` with `{"city":"A"}{"city":"B"}` (the model blamed for the
/// server's framing); a later call's name was dropped. A named delta with
/// argument text after a whole call starts the next one; argument text
/// without a name after a whole call cannot be placed: the stream is
/// refused, named. A different name joins the first (never a rename).
#[test]
fn indexless_calls_with_empty_ids_are_told_apart_and_an_unplaceable_one_refused() {
    let chunk = |calls: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":{calls}}}}}]}}\n\n"
        )
    };
    let end = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n";
    let names_args = |text: &str| -> Vec<(String, String)> {
        let loaded = load("g.sse", text);
        let t = ok(&loaded)[0].clone();
        t.tool_calls
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["function"]["name"].as_str().unwrap().to_string(),
                    c["function"]["arguments"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let expected = vec![
        ("w".to_string(), r#"{"city":"A"}"#.to_string()),
        ("t".to_string(), r#"{"tz":"UTC"}"#.to_string()),
    ];
    for id in [r#""id":"","#, "", r#""id":null,"#] {
        let text = [
            chunk(&format!(
                r#"[{{{id}"type":"function","function":{{"name":"w","arguments":"{{\"city\":\"A\"}}"}}}}]"#
            )),
            chunk(&format!(
                r#"[{{{id}"type":"function","function":{{"name":"t","arguments":"{{\"tz\":\"UTC\"}}"}}}}]"#
            )),
            end.to_string(),
        ]
        .concat();
        assert_eq!(names_args(&text), expected, "id {id}");
    }
    // Split arguments still continue their call; a name repeated without
    // arguments (MiniMax through NIM repeats it) is the same call.
    let text = [
        chunk(r#"[{"id":"","function":{"name":"w","arguments":"{\"city\":"}}]"#),
        chunk(r#"[{"id":"","function":{"arguments":"\"A\"}"}}]"#),
        chunk(r#"[{"id":"","function":{"name":"w","arguments":""}}]"#),
        chunk(r#"[{"id":"","function":{"name":"t","arguments":"{\"tz\":\"UTC\"}"}}]"#),
        end.to_string(),
    ]
    .concat();
    assert_eq!(names_args(&text), expected);
    // Arguments without a name after a whole call: refused, named.
    let text = [
        chunk(r#"[{"id":"","function":{"name":"w","arguments":"{\"city\":\"A\"}"}}]"#),
        chunk(r#"[{"id":"","function":{"arguments":"{\"tz\":\"UTC\"}"}}]"#),
        end.to_string(),
    ]
    .concat();
    let loaded = load("u.sse", &text);
    let e = loaded[0].as_ref().unwrap_err();
    assert!(
        e.reason.contains("choice 0: a tool-call delta without `index` adds arguments to a call whose arguments are already whole JSON"),
        "{e}"
    );
    // A second name on an unfinished call joins the first: `wrm`, never
    // `w` run with the arguments given to `rm`.
    let text = [
        chunk(r#"[{"index":0,"id":"a","function":{"name":"w","arguments":""}}]"#),
        chunk(r#"[{"index":0,"id":"b","function":{"name":"rm","arguments":"{\"p\":\"/\"}"}}]"#),
        end.to_string(),
    ]
    .concat();
    assert_eq!(
        names_args(&text),
        [("wrm".to_string(), r#"{"p":"/"}"#.to_string())]
    );
}

/// Found while reading recorded streams: the legacy functions API streams
/// its call as `delta.function_call`, which was ignored — the capture read
/// as no call at all with `finish_reason: function_call`.
#[test]
fn a_streamed_legacy_function_call_is_a_native_call() {
    let text = concat!(
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"function_call\":{\"name\":\"get_time\",\"arguments\":\"\"}}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"function_call\":{\"arguments\":\"{\\\"tz\\\":\"}}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"function_call\":{\"arguments\":\"\\\"UTC\\\"}\"}}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"function_call\"}]}\n\n",
        "data: [DONE]\n",
    );
    let loaded = load("fc.sse", text);
    let t = ok(&loaded)[0];
    let calls = t.tool_calls.as_ref().unwrap();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0]["function"]["name"], "get_time");
    assert_eq!(args(t, 0), "{\"tz\":\"UTC\"}");
    assert_eq!(t.finish_reason.as_deref(), Some("function_call"));
}

/// Found in other projects' reports: Mistral's Magistral streams `content`
/// as a list of `thinking` and `text` parts; the list was ignored (the text
/// and the reasoning lost).
#[test]
fn magistral_thinking_parts_are_reasoning_and_text_parts_output() {
    let text = concat!(
        "data: {\"object\":\"chat.completion.chunk\",\"model\":\"magistral-medium-2509\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":[{\"type\":\"thinking\",\"thinking\":[{\"type\":\"text\",\"text\":\"The user greets. \"}]}]}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":[{\"type\":\"thinking\",\"thinking\":[{\"type\":\"text\",\"text\":\"Answer briefly.\"}]}]}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"Hello\"}]}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"!\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n",
    );
    let loaded = load("m.sse", text);
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "Hello!");
    assert_eq!(
        t.chunks.as_deref(),
        Some(&["Hello".to_string(), "!".to_string()][..])
    );
    assert_eq!(
        t.reasoning.as_deref(),
        Some("The user greets. Answer briefly.")
    );
}

/// An Anthropic stream cut off before `message_stop` is marked like an
/// OpenAI one; a tool_use block cut off before it closed, with no input
/// delta at all, is `""` (truncation), not the start event's `{}` — which
/// would make a cut-off call pass.
#[test]
fn a_cut_off_anthropic_stream_is_unterminated_and_its_open_empty_call_truncated() {
    let head = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude\",\"content\":[]}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n",
    );
    let stop0 =
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n";
    let tail = concat!(
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let read = |text: String| {
        let loaded = load("a.sse", &text);
        let t = ok(&loaded)[0].clone();
        (
            args(&t, 0).to_string(),
            t.raw["import"].get("unterminated").cloned(),
        )
    };
    assert_eq!(read(format!("{head}{stop0}{tail}")), ("{}".into(), None));
    // Without `message_stop` the last call is cut even when its block
    // closed (probe 44: the stop reason is unknown).
    assert_eq!(
        read(format!("{head}{stop0}")),
        (String::new(), Some(json!(true)))
    );
    assert_eq!(read(head.to_string()), (String::new(), Some(json!(true))));
}

/// Probe 44, bug 3: a stream that ended without its end (no `[DONE]` or
/// `finish_reason`, no `message_stop`, no terminal Responses event) was
/// judged whole when its last call's arguments parsed: `pass`/`execute`.
/// Its stop reason is unknown, so it is read as cut by the token limit, in
/// every stream importer: the last call's arguments are `""`
/// (`truncation`), those received kept in `import.truncated_input`. In a
/// chat stream only a choice without its `finish_reason` is cut; a stream
/// whose every choice finished is whole.
#[test]
fn a_stream_cut_off_without_a_stop_reason_cuts_its_last_call() {
    let chat = "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"c0\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": 1}\"}},{\"index\":1,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"city\\\": \\\"Ghent\\\"}\"}}]}}]}\n\n";
    let anthropic = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude\",\"content\":[]}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\": \\\"Ghent\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    );
    let responses = responses_sse(&[
        r#"{"type":"response.created","response":{"id":"r","status":"in_progress","output":[]}}"#,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"fc","type":"function_call","status":"in_progress","arguments":"","call_id":"c","name":"f"}}"#,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"fc","type":"function_call","status":"completed","arguments":"{\"city\": \"Ghent\"}","call_id":"c","name":"f"}}"#,
    ]);
    for (name, text) in [
        ("chat.sse", chat.to_string()),
        ("anthropic.sse", anthropic.to_string()),
        ("responses.sse", responses),
    ] {
        let loaded = load(name, &text);
        let t = ok(&loaded)[0];
        let calls = t.tool_calls.as_ref().unwrap();
        assert_eq!(args(t, calls.len() - 1), "", "{name}");
        assert_eq!(
            t.raw["import"]["truncated_input"], "{\"city\": \"Ghent\"}",
            "{name}"
        );
        assert_eq!(t.raw["import"]["unterminated"], true, "{name}");
        assert_eq!(t.finish_reason, None, "{name}");
        assert!(
            t.raw["import"].get("finish_reason_derived").is_none(),
            "{name}: no finish reason was derived"
        );
    }
    // Only the last call is cut: the one before it was whole.
    let loaded = load("chat.sse", chat);
    assert_eq!(args(ok(&loaded)[0], 0), "{\"a\": 1}");
    // Two choices, the stream cut after choice 0 finished: choice 1 alone
    // is cut; with every choice finished (no `[DONE]`) nothing is.
    let chunk = |i: u8, finish: &str| {
        format!(
            "data: {{\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":{i},\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"c{i}\",\"function\":{{\"name\":\"f\",\"arguments\":\"{{}}\"}}}}]}},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let cut = format!("{}{}", chunk(0, "\"tool_calls\""), chunk(1, "null"));
    let loaded = load("n.sse", &cut);
    let ts = ok(&loaded);
    assert_eq!((args(ts[0], 0), args(ts[1], 0)), ("{}", ""));
    assert_eq!(ts[0].raw["import"]["unterminated"], true);
    assert!(ts[0].raw["import"].get("truncated_input").is_none());
    assert_eq!(ts[1].raw["import"]["truncated_input"], "{}");
    let whole = format!(
        "{}{}",
        chunk(0, "\"tool_calls\""),
        chunk(1, "\"tool_calls\"")
    );
    let loaded = load("n.sse", &whole);
    let ts = ok(&loaded);
    assert_eq!((args(ts[0], 0), args(ts[1], 0)), ("{}", "{}"));
    assert!(ts[1].raw["import"].get("unterminated").is_none());
}

/// A streamed `refusal` was dropped; it is kept as a non-streamed one is.
#[test]
fn a_streamed_refusal_is_kept() {
    let text = concat!(
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":null,\"refusal\":\"\"}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"I can't \"}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"help.\"},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n",
    );
    let loaded = load("r.sse", text);
    let t = ok(&loaded)[0];
    assert_eq!(t.raw["import"]["refusal"], "I can't help.");
    assert_eq!(t.output, "");
    // Servers that send `"refusal": ""` with every chunk refused nothing.
    let empty = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\",\"refusal\":\"\"}}]}\n\ndata: [DONE]\n";
    let loaded = load("e.sse", empty);
    assert!(ok(&loaded)[0].raw["import"].get("refusal").is_none());
}

/// A capture that starts with an SSE `id:` or `retry:` field is a stream
/// (it was read as toolgate's own format and reported as not JSON), and
/// `response.text.delta` (the Realtime API's name) is output text.
#[test]
fn sse_captures_starting_with_id_or_retry_and_realtime_text_deltas() {
    let text = format!(
        "retry: 3000\nid: 1\n{}",
        responses_sse(&[
            CREATED,
            r#"{"type":"response.text.delta","output_index":0,"content_index":0,"delta":"hi"}"#,
            r#"{"type":"response.completed","response":{"object":"response","status":"completed","output":[]}}"#,
        ])
    );
    assert_eq!(
        detect(Path::new("x.sse"), &text),
        Some(Kind::ResponsesStream)
    );
    let loaded = load("x.sse", &text);
    assert_eq!(ok(&loaded)[0].output, "hi");
    let chat = "id: 7\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"}}]}\n\ndata: [DONE]\n";
    assert_eq!(detect(Path::new("c.sse"), chat), Some(Kind::OpenaiStream));
}

/// A Responses output holding items toolgate does not judge (built-in tool
/// calls) beside a function call names the skipped item types in a typed
/// note.
#[test]
fn responses_items_that_are_not_judged_are_named_in_a_note() {
    let text = r#"{"object": "response", "status": "completed", "output": [
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"type": "web_search_call", "id": "ws_1", "status": "completed"},
        {"type": "code_interpreter_call", "id": "ci_1", "code": "print(1)"},
        {"type": "code_interpreter_call", "id": "ci_2", "code": "print(2)"}]}"#;
    let loaded = load("r.json", text);
    let t = ok(&loaded)[0];
    assert_eq!(t.tool_calls.as_ref().map(Vec::len), Some(1));
    let notes = notes(t);
    assert_eq!(notes.len(), 1);
    assert_eq!(notes[0].0, NoteKind::ItemsSkipped);
    assert!(
        notes[0]
            .1
            .contains("web_search_call, code_interpreter_call"),
        "{}",
        notes[0].1
    );
    // Text, reasoning and function calls alone: no note.
    let plain = r#"{"object": "response", "output": [{"type": "message", "content": []}]}"#;
    assert_eq!(self::notes(ok(&load("p.json", plain))[0]), vec![]);
}

/// Streams saved the way SDK users dump them — a JSON array of chunk or
/// event objects in a `.json` file, or JSON lines of chunks without
/// `object` — were read as toolgate's own format or as a response without
/// `message`; they are streams.
#[test]
fn streams_saved_as_a_json_array_or_bare_chunk_lines_are_streams() {
    let chunks = r#"[
      {"id": "c", "object": "chat.completion.chunk", "model": "m", "choices": [{"index": 0, "delta": {"role": "assistant", "content": null, "tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}, "finish_reason": null}]},
      {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\": \"Paris\"}"}}]}, "finish_reason": null}]},
      {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}
    ]"#;
    assert_eq!(
        detect(Path::new("dump.json"), chunks),
        Some(Kind::OpenaiStream)
    );
    let loaded = load("dump.json", chunks);
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), r#"{"city": "Paris"}"#);
    assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    let events = format!(
        "[{CREATED}, {}]",
        r#"{"type":"response.output_text.delta","output_index":0,"delta":"hi"}"#
    );
    assert_eq!(
        detect(Path::new("ev.json"), &events),
        Some(Kind::ResponsesStream)
    );
    assert_eq!(ok(&load("ev.json", &events))[0].output, "hi");
    let bare = "{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n{\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n";
    assert_eq!(detect(Path::new("b.jsonl"), bare), Some(Kind::OpenaiStream));
    assert_eq!(ok(&load("b.jsonl", bare))[0].output, "ab");
    // An array of anything else is still not a capture.
    assert_eq!(detect(Path::new("n.json"), "[1, 2]"), None);
    // A repeated key in an element is refused at the element, as on a
    // line of its own (the array's elements are not parsed and written
    // again, which kept only the last copy).
    let twice = chunks.replacen(
        r#""finish_reason": "tool_calls""#,
        r#""finish_reason": "stop", "finish_reason": "tool_calls""#,
        1,
    );
    assert_ne!(twice, chunks);
    let loaded = load("dump.json", &twice);
    let e = loaded
        .iter()
        .find_map(|l| l.as_ref().err())
        .expect("the repeated key is refused");
    assert_eq!(e.line, Some(3), "{e}");
    assert!(e.reason.contains("duplicate key `finish_reason`"), "{e}");
}

/// A Responses request (`input` and `model`) is a stream's companion; an
/// object with a lone `input` is not taken for one (it would yield no
/// transcript and no error).
#[test]
fn a_responses_request_is_a_companion_and_a_lone_input_is_not() {
    let request = r#"{"model": "gpt-5-mini", "input": "hi", "tools": []}"#;
    assert_eq!(
        detect(Path::new("s.request.json"), request),
        Some(Kind::OpenaiRequest)
    );
    assert_eq!(detect(Path::new("x.json"), r#"{"input": "hi"}"#), None);
    let e = load("x.json", r#"{"input": "hi"}"#)[0].clone().unwrap_err();
    assert!(e.reason.contains("missing `output`"), "{e}");
}

/// A stream of some other API (here Cohere's v2 events) said "the
/// response has no `choices`", the very message a Responses stream gave
/// before it was read; it now says it is not a chat-completions stream.
#[test]
fn a_stream_of_another_api_is_reported_as_such() {
    let text = "event: message-start\ndata: {\"type\":\"message-start\",\"id\":\"x\"}\n\nevent: content-delta\ndata: {\"type\":\"content-delta\",\"index\":0,\"delta\":{\"message\":{\"content\":{\"text\":\"hi\"}}}}\n\n";
    let loaded = load("c.sse", text);
    assert_eq!(loaded.len(), 1);
    let e = loaded[0].as_ref().unwrap_err();
    assert_eq!(e.line, Some(2));
    assert!(
        e.reason
            .starts_with("no chunk of this stream has `choices`: not a chat-completions stream"),
        "{e}"
    );
}

/// Groq streams carry their usage under `x_groq`; it was dropped.
#[test]
fn groq_stream_usage_under_x_groq_is_kept() {
    let text = concat!(
        "data: {\"object\":\"chat.completion.chunk\",\"x_groq\":{\"id\":\"req_1\"},\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}]}\n\n",
        "data: {\"object\":\"chat.completion.chunk\",\"x_groq\":{\"id\":\"req_1\",\"usage\":{\"completion_tokens\":3}},\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n",
    );
    let loaded = load("g.sse", text);
    assert_eq!(
        ok(&loaded)[0].raw["import"]["usage"]["completion_tokens"],
        3
    );
}

/// Every prefix of each stream fixture (cut at every line) loads without a
/// panic; a transcript read from a prefix that lacks the stream's end is
/// marked `import.unterminated`, and one with it is not. A chat stream
/// ends with its only choice's `finish_reason` (what follows is usage and
/// `[DONE]`).
#[test]
fn every_cut_of_a_stream_fixture_is_read_and_marked_unterminated() {
    for (rel, end) in [
        ("openai-chat/stream.sse", "\"finish_reason\":\"tool_calls\""),
        ("responses/stream.sse", "\"type\":\"response.completed\""),
        ("anthropic/stream.sse", "\"type\":\"message_stop\""),
    ] {
        let text = std::fs::read_to_string(fixture(rel)).unwrap();
        let cuts: Vec<usize> = text.match_indices('\n').map(|(i, _)| i + 1).collect();
        for cut in cuts {
            let prefix = &text[..cut];
            let ended = prefix.contains(end);
            for loaded in load("cut.sse", prefix) {
                let Ok(t) = loaded else { continue };
                assert_eq!(
                    t.raw["import"].get("unterminated").is_some(),
                    !ended,
                    "{rel} cut at byte {cut}"
                );
            }
        }
    }
}

/// A capture file of bad lines made one error per line (a 10 MB file of
/// them, a million errors held at once); the first ones are reported and
/// the rest counted, as for streams.
#[test]
fn the_errors_of_a_capture_file_are_capped() {
    use super::sse::MAX_LINE_ERRORS;
    let good = r#"{"custom_id": "a", "response": {"choices": [{"message": {"content": "x"}}]}}"#;
    let text = format!("{good}\n{}", "{not json\n".repeat(MAX_LINE_ERRORS + 7));
    assert_eq!(detect(Path::new("b.jsonl"), &text), Some(Kind::BatchOutput));
    let loaded = load("b.jsonl", &text);
    let errs: Vec<&crate::load::LoadError> =
        loaded.iter().filter_map(|l| l.as_ref().err()).collect();
    assert_eq!(errs.len(), MAX_LINE_ERRORS + 1);
    assert!(errs[1].reason.starts_with("not valid JSON"), "{}", errs[1]);
    assert_eq!(
        errs[MAX_LINE_ERRORS].reason,
        format!("8 more errors not shown (only the first {MAX_LINE_ERRORS} are reported)")
    );
}

/// A response with more choices than any API gives (`n` ≤ 128) made one
/// transcript per choice without bound; it is refused with its count.
#[test]
fn a_response_with_too_many_choices_is_refused() {
    let choice = r#"{"message": {"content": "x"}, "finish_reason": "stop"}"#;
    let many = |n: usize| {
        format!(
            r#"{{"object": "chat.completion", "choices": [{}]}}"#,
            vec![choice; n].join(",")
        )
    };
    assert_eq!(ok(&load("a.json", &many(128))).len(), 128);
    let loaded = load("b.json", &many(129));
    assert_eq!(loaded.len(), 1);
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "the response has 129 choices, more than 128 (OpenAI's `n` is at most 128): not read"
    );
}

/// Issue 22: a Responses `custom_tool_call` (a `custom` tool: `name` and a
/// free-text `input`) was skipped, so the call the model made read as
/// `no_call`. Its input is not an arguments object (SPEC §1) and no label
/// says "cannot be judged": the response is refused as a load error that
/// names the call, in a pair, a bare response and a stream alike.
#[test]
fn a_responses_custom_tool_call_is_refused_with_the_call_named() {
    let item = r#"{"type": "custom_tool_call", "id": "ctc_1", "call_id": "call_9", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch", "status": "completed"}"#;
    let bare = format!(
        r#"{{"object": "response", "status": "completed", "output": [
        {{"type": "message", "content": [{{"type": "output_text", "text": "Patching."}}]}},
        {{"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{{}}"}}, {item}]}}"#
    );
    let pair = format!(
        r#"{{"request": {{"input": "fix it", "tools": [{{"type": "custom", "name": "apply_patch"}}]}}, "response": {bare}}}"#
    );
    for (name, text) in [("r.json", bare.as_str()), ("p.json", pair.as_str())] {
        let loaded = load(name, text);
        assert_eq!(loaded.len(), 1, "{name}");
        let e = loaded[0].as_ref().unwrap_err();
        assert!(
            e.reason.starts_with(
                "`output[2]` is a `custom_tool_call` of \"apply_patch\" (`call_9`): a custom tool's input is free text"
            ),
            "{name}: {e}"
        );
        assert!(e.reason.contains("SPEC §1"), "{e}");
    }
    // Streamed: the added item, its input deltas and the done event.
    let text = responses_sse(&[
        CREATED,
        r#"{"type":"response.output_item.added","output_index":0,"item":{"type":"custom_tool_call","id":"ctc_1","call_id":"call_9","name":"apply_patch","input":""}}"#,
        r#"{"type":"response.custom_tool_call_input.delta","item_id":"ctc_1","output_index":0,"delta":"*** Begin"}"#,
        r#"{"type":"response.custom_tool_call_input.done","item_id":"ctc_1","output_index":0,"input":"*** Begin Patch"}"#,
        r#"{"type":"response.completed","response":{"object":"response","status":"completed","output":[]}}"#,
    ]);
    assert_eq!(
        detect(Path::new("s.sse"), &text),
        Some(Kind::ResponsesStream)
    );
    let loaded = load("s.sse", &text);
    assert_eq!(loaded.len(), 1);
    let e = loaded[0].as_ref().unwrap_err();
    assert!(
        e.reason
            .contains("`custom_tool_call` of \"apply_patch\" (`call_9`)"),
        "{e}"
    );
    // Input deltas whose item was never announced are a custom call too
    // (not an empty message that drops them), and a cut-off stream is refused the same.
    let text = responses_sse(&[
        CREATED,
        r#"{"type":"response.custom_tool_call_input.delta","output_index":0,"delta":"*** Begin"}"#,
    ]);
    let loaded = load("u.sse", &text);
    assert_eq!(loaded.len(), 1);
    let e = loaded[0].as_ref().unwrap_err();
    assert!(
        e.reason
            .starts_with("`output[0]` is a `custom_tool_call` of \"\""),
        "{e}"
    );
    // A request that declares a custom tool but a response without its call
    // still imports (the tool is listed as skipped).
    let text = r#"{"request": {"tools": [{"type": "custom", "name": "apply_patch"}]},
        "response": {"object": "response", "output": [{"type": "message", "content": [{"type": "output_text", "text": "Done."}]}]}}"#;
    let loaded = load("q.json", text);
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "Done.");
    assert_eq!(t.raw["import"]["builtin_tools_skipped"], json!(["custom"]));
}

/// Probe: a Responses object whose run failed, did not finish (`in_progress`,
/// `queued`), was `cancelled`, or says `completed` with an `error`, became a
/// `no_call` transcript (output "", an invented `stop`). A provider error is
/// never a transcript: each is a load error naming the status and the
/// error; `incomplete` (finished, cut) still imports.
#[test]
fn a_responses_object_that_failed_or_did_not_finish_is_refused() {
    let doc = |status: &str, error: &str| {
        format!(
            r#"{{"request": {{"input": "w", "tools": []}}, "response": {{"id": "resp_1", "object": "response",
            "status": "{status}", "error": {error}, "output": [{{"type": "message",
            "content": [{{"type": "output_text", "text": "x"}}]}}]}}}}"#
        )
    };
    let reason = |text: &str| {
        let loaded = load("r.json", text);
        assert_eq!(loaded.len(), 1, "{text}");
        loaded[0].as_ref().unwrap_err().reason.clone()
    };
    let boom = r#"{"code": "server_error", "message": "boom"}"#;
    assert_eq!(
        reason(&doc("failed", boom)),
        "the response failed: `server_error`: boom"
    );
    for status in ["in_progress", "queued", "cancelled"] {
        assert_eq!(
            reason(&doc(status, "null")),
            format!(
                "the response's status is \"{status}\", not a finished answer (`completed` or `incomplete`)"
            )
        );
    }
    assert_eq!(
        reason(&doc("completed", r#"{"code": "e", "message": "m"}"#)),
        "the response carries an error: `e`: m"
    );
    assert_eq!(
        ok(&load("i.json", &doc("incomplete", "null")))[0].output,
        "x"
    );
    assert_eq!(
        ok(&load("c.json", &doc("completed", "null")))[0].output,
        "x"
    );
}

/// Probe: `response.failed` was reported at the stream's first line
/// (`response.created`); it is reported at its own. A terminal event whose
/// response carries an error is refused too, and a cut-off stream (its
/// status still `in_progress`) is still read as unterminated.
#[test]
fn a_failed_responses_stream_is_reported_at_the_failing_event() {
    let delta = r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Hello"}"#;
    let failed = r#"{"type":"response.failed","response":{"object":"response","status":"failed","error":{"code":"server_error","message":"boom"},"output":[]}}"#;
    let loaded = load("f.sse", &responses_sse(&[CREATED, delta, failed]));
    assert_eq!(loaded.len(), 1);
    let e = loaded[0].as_ref().unwrap_err();
    assert_eq!(
        (e.line, e.reason.as_str()),
        (Some(8), "the response failed: `server_error`: boom")
    );
    let errored = r#"{"type":"response.completed","response":{"object":"response","status":"completed","error":{"code":"e","message":"m"},"output":[]}}"#;
    let loaded = load("e.sse", &responses_sse(&[CREATED, delta, errored]));
    let e = loaded[0].as_ref().unwrap_err();
    assert_eq!(
        (e.line, e.reason.as_str()),
        (Some(8), "the response carries an error: `e`: m")
    );
    let loaded = load("c.sse", &responses_sse(&[CREATED, delta]));
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "Hello");
    assert_eq!(t.raw["import"]["unterminated"], true);
}

/// Probe: a Responses message part that is not text (`output_audio`) was
/// dropped silently; as in the chat importer, the document is unreadable.
#[test]
fn a_responses_content_part_that_is_not_text_is_refused() {
    let text = r#"{"object": "response", "status": "completed", "output": [{"type": "message",
        "content": [{"type": "output_text", "text": "a"}, {"type": "output_audio", "data": "…"}]}]}"#;
    let loaded = load("r.json", text);
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "`output[0].content[1]` is not a text part (type output_audio): the message cannot be read whole"
    );
}

/// Probe: after an error event the partial text was still written and
/// labeled (OpenAI `data: {"error"}` then `[DONE]`, an SSE `event: error`
/// not even reported, Anthropic's `overloaded_error`, a Responses `error`).
/// The errored stream yields no transcript and one error at the event's
/// line; the file's other streams are unaffected.
#[test]
fn a_stream_interrupted_by_an_error_is_not_imported() {
    let chunk = |text: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":null}}]}}\n\n"
        )
    };
    let good = format!("{}data: [DONE]\n\n", chunk("fine"));
    for (error, at, what) in [
        (
            "data: {\"error\":{\"message\":\"upstream died\"}}\n\ndata: [DONE]\n\n",
            3,
            "`error`: upstream died",
        ),
        (
            "event: error\ndata: {\"message\":\"boom\"}\n\n",
            4,
            "`error`: boom",
        ),
    ] {
        let text = format!("{}{error}{good}", chunk("Hello "));
        let loaded = load("e.sse", &text);
        let errors: Vec<_> = loaded.iter().filter_map(|l| l.as_ref().err()).collect();
        assert_eq!(errors.len(), 1, "{text}");
        assert_eq!(errors[0].line, Some(at), "{text}");
        assert_eq!(
            errors[0].reason,
            format!("the stream reports an error: {what} (the stream from line 1 is not imported)")
        );
        let ts: Vec<_> = loaded.iter().filter_map(|l| l.as_ref().ok()).collect();
        assert_eq!(ts.len(), 1, "only the other stream: {text}");
        assert_eq!(ts[0].output, "fine");
    }
    let anthropic = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n\n",
        "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
    );
    let loaded = load("a.sse", anthropic);
    assert_eq!(loaded.len(), 1);
    let e = loaded[0].as_ref().unwrap_err();
    assert_eq!(e.line, Some(11));
    assert_eq!(
        e.reason,
        "the stream reports an error: `overloaded_error`: Overloaded (the stream from line 2 is not imported)"
    );
}

/// Probe (s46): llama.cpp's server reports a failure mid-stream as an
/// `error:` field, then sends `data: [DONE]`. The importer ignored the
/// field, so the call cut by the failure was imported whole-looking and
/// labeled `pass` (execute). The field is an error event, as the proxy's
/// reader reads it ([`super::is_error_field`]): at its line, the stream it
/// interrupts not imported, its own payloads up to `[DONE]` dropped with
/// it; the file's other streams are read.
#[test]
fn an_sse_error_field_interrupts_the_stream() {
    let call = concat!(
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"\"}}]}}]}\n\n",
        "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"}\"}}]}}]}\n\n",
    );
    let good = "data: {\"id\":\"d\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"fine\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    for (error, what) in [
        (
            "error: {\"code\":500,\"message\":\"Input prompt is too big compared to KV size.\",\"type\":\"server_error\"}\n\n",
            "`500`: Input prompt is too big compared to KV size.",
        ),
        // Not JSON: its text. With a chunk of the stream after it (the
        // field's event's own data too): dropped up to `[DONE]`.
        (
            "error:boom\ndata: {\"id\":\"c\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "`error`: boom",
        ),
    ] {
        let text = format!("{call}{error}data: [DONE]\n\n{good}");
        let loaded = load("llama.sse", &text);
        let errors: Vec<_> = loaded.iter().filter_map(|l| l.as_ref().err()).collect();
        assert_eq!(errors.len(), 1, "{text}");
        assert_eq!(errors[0].line, Some(5), "{text}");
        assert_eq!(
            errors[0].reason,
            format!("the stream reports an error: {what} (the stream from line 1 is not imported)")
        );
        let ts: Vec<_> = loaded.iter().filter_map(|l| l.as_ref().ok()).collect();
        assert_eq!(ts.len(), 1, "only the other stream: {text}");
        assert_eq!(ts[0].output, "fine");
        assert_eq!(ts[0].tool_calls, None);
    }
    // A stream that fails before its first chunk is still a stream.
    let loaded = load(
        "llama.sse",
        "error: {\"code\":503,\"message\":\"Loading model\"}\n\ndata: [DONE]\n\n",
    );
    assert_eq!(loaded.len(), 1);
    let e = loaded[0].as_ref().unwrap_err();
    assert_eq!(e.line, Some(1));
    assert_eq!(
        e.reason,
        "the stream reports an error: `503`: Loading model"
    );
    // Anthropic's stream too; a field named otherwise is still ignored.
    let anthropic = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[]}}\n\n",
        "errors: x\nerror: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let loaded = load("a.sse", anthropic);
    assert_eq!(loaded.len(), 1);
    let e = loaded[0].as_ref().unwrap_err();
    assert_eq!(e.line, Some(5));
    assert_eq!(
        e.reason,
        "the stream reports an error: `overloaded_error`: Overloaded (the stream from line 2 is not imported)"
    );
}

/// Probe: a corrupt chunk in the middle of a stream was reported, yet the
/// stream was written with the text around it and `finish_reason: stop`.
/// A lost chunk could have held a call: that stream is not imported (the
/// error at the chunk's line says so); the file's other streams are.
#[test]
fn a_stream_with_an_unreadable_chunk_is_not_imported() {
    let chunk = |text: &str, finish: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let text = format!(
        "{}data: {{not json\n\n{}data: [DONE]\n\n{}data: [DONE]\n\n",
        chunk("Hello ", "null"),
        chunk("world", "\"stop\""),
        chunk("next", "\"stop\""),
    );
    let loaded = load("g.sse", &text);
    let errors: Vec<_> = loaded.iter().filter_map(|l| l.as_ref().err()).collect();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].line, Some(3));
    assert!(
        errors[0].reason.starts_with("not valid JSON")
            && errors[0].reason.ends_with(
                "(a lost chunk could have held a call: the stream holding this line is not imported)"
            ),
        "{}",
        errors[0]
    );
    let ts: Vec<_> = loaded.iter().filter_map(|l| l.as_ref().ok()).collect();
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].output, "next");
    // The same at the end of a cut-off stream: nothing is kept.
    let loaded = load("h.sse", &format!("{}data: [1]\n", chunk("Hi", "null")));
    assert_eq!(loaded.len(), 1);
    assert!(
        loaded[0]
            .as_ref()
            .unwrap_err()
            .reason
            .starts_with("the chunk is not a JSON object (a lost chunk"),
        "{:?}",
        loaded[0]
    );
}

/// An OTLP document of the given spans, each `(spanId, attributes, status)`.
fn otel_doc(spans: &[(&str, Value, Value)]) -> String {
    let spans: Vec<Value> = spans
        .iter()
        .map(|(id, attrs, status)| json!({"spanId": id, "name": "chat m", "attributes": attrs, "status": status}))
        .collect();
    json!({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}).to_string()
}

fn otel_attrs(parts: &str, extra: &[Value]) -> Value {
    let mut attrs = vec![
        json!({"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}),
        json!({"key": "gen_ai.output.messages", "value": {"stringValue": format!("[{{\"role\": \"assistant\", \"parts\": {parts}}}]")}}),
    ];
    attrs.extend(extra.iter().cloned());
    Value::Array(attrs)
}

/// Probe: a span with status ERROR (`code` 2 or `STATUS_CODE_ERROR`, with
/// `error.type`) became a transcript of its partial output. It is a load
/// error for that span naming the status message; the document's other
/// spans still import.
#[test]
fn an_otel_span_with_status_error_is_refused_and_the_others_import() {
    let text_part = r#"[{"type": "text", "content": "partial"}]"#;
    let error_type = [json!({"key": "error.type", "value": {"stringValue": "timeout"}})];
    // The code as a number, its name, the number as a string, the name in
    // another case (probe F: `"2"` and `"Error"` were read as answers).
    for code in [
        json!(2),
        json!("STATUS_CODE_ERROR"),
        json!("2"),
        json!("Error"),
    ] {
        let text = otel_doc(&[
            (
                "a1",
                otel_attrs(text_part, &error_type),
                json!({"code": code, "message": "deadline exceeded"}),
            ),
            ("a2", otel_attrs(text_part, &[]), json!({"code": 1})),
        ]);
        let loaded = load("o.json", &text);
        assert_eq!(loaded.len(), 2, "{code}");
        assert_eq!(
            loaded[0].as_ref().unwrap_err().reason,
            "span `a1`: the span's status is ERROR (deadline exceeded; error.type timeout): a failed call is not the model's answer"
        );
        assert_eq!(loaded[1].as_ref().unwrap().id, "o:a2");
    }
    // toolgate's proxy marks a gate's reject ERROR: the server answered,
    // and that answer is the recording.
    let reject =
        [json!({"key": "error.type", "value": {"stringValue": "toolgate.reject.allowlist"}})];
    let loaded = load(
        "r.json",
        &otel_doc(&[(
            "r",
            otel_attrs(text_part, &reject),
            json!({"code": 2, "message": "toolgate.reject.allowlist"}),
        )]),
    );
    assert_eq!(ok(&loaded)[0].output, "partial");
    // A failed chat span that recorded no output is reported too.
    let no_output = json!([{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]);
    let loaded = load(
        "n.json",
        &otel_doc(&[("a3", no_output, json!({"code": 2}))]),
    );
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "span `a3`: the span's status is ERROR: a failed call is not the model's answer"
    );
    // Probe C, bug 7: `error.type` without an ERROR status (the status
    // unset, or no status at all) was read as the model's empty answer,
    // `no_call`. The conventions set it only on failure.
    let rate = [json!({"key": "error.type", "value": {"stringValue": "RateLimitError"}})];
    for status in [json!({}), json!({"code": 0}), Value::Null] {
        let loaded = load(
            "e.json",
            &otel_doc(&[("s4", otel_attrs("[]", &rate), status.clone())]),
        );
        assert_eq!(
            loaded[0].as_ref().unwrap_err().reason,
            "span `s4`: the span has `error.type` RateLimitError (set only when the operation failed): a failed call is not the model's answer",
            "{status}"
        );
    }
    // Probe F, t5: an `error.type` that is not a string (an HTTP status as
    // `intValue`, in either of its JSON spellings, a double, a bool) was
    // not seen, and the failed span read as an answer.
    for (value, shown) in [
        (json!({"intValue": "500"}), "500"),
        (json!({"intValue": 504}), "504"),
        (json!({"doubleValue": 1.5}), "1.5"),
        (json!({"boolValue": true}), "true"),
    ] {
        let attr = [json!({"key": "error.type", "value": value})];
        let loaded = load(
            "e.json",
            &otel_doc(&[("s5", otel_attrs("[]", &attr), Value::Null)]),
        );
        assert_eq!(
            loaded[0].as_ref().unwrap_err().reason,
            format!(
                "span `s5`: the span has `error.type` {shown} (set only when the operation failed): a failed call is not the model's answer"
            ),
        );
    }
}

/// Probe: a `blob` part of an output message was dropped silently, and
/// tool definitions that are not a JSON list made the tools unknown without
/// a word. Both make the span unreadable (reported), as in the other
/// importers.
#[test]
fn an_otel_span_with_an_unknown_part_or_unreadable_definitions_is_refused() {
    let blob = r#"[{"type": "text", "content": "a"}, {"type": "blob", "mime_type": "image/png", "content": "AA=="}]"#;
    let loaded = load(
        "b.json",
        &otel_doc(&[("s", otel_attrs(blob, &[]), json!({}))]),
    );
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "span `s`: `gen_ai.output.messages[0].parts[1]` is not a text, reasoning or tool_call part (type blob)"
    );
    let text_part = r#"[{"type": "text", "content": "a"}]"#;
    for defs in ["{not json", "{\"a\": 1}"] {
        let attr = [json!({"key": "gen_ai.tool.definitions", "value": {"stringValue": defs}})];
        let loaded = load(
            "d.json",
            &otel_doc(&[("s", otel_attrs(text_part, &attr), json!({}))]),
        );
        assert_eq!(
            loaded[0].as_ref().unwrap_err().reason,
            "span `s`: `gen_ai.tool.definitions` is not a JSON list: the tools cannot be read",
            "{defs}"
        );
    }
}

/// Probe 6, bug 3: an OTel output message whose `finish_reason` is a
/// provider error (`error`, as OpenRouter sends it; `abort`) was imported
/// and its whole-looking call executed; the chat importer refuses the same
/// choice. It is a load error naming the span, in either convention and
/// from `gen_ai.response.finish_reasons`; the other spans still import.
#[test]
fn an_otel_message_ending_in_a_provider_error_is_refused() {
    let call =
        r#"[{"type": "tool_call", "id": "t1", "name": "f", "arguments": {"city": "Paris"}}]"#;
    let with_reason = |reason: &str| {
        let messages =
            format!(r#"[{{"role": "assistant", "parts": {call}, "finish_reason": "{reason}"}}]"#);
        json!([
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": messages}}
        ])
    };
    let reasons = [json!({"key": "gen_ai.response.finish_reasons",
        "value": {"arrayValue": {"values": [{"stringValue": "error"}]}}})];
    let old = json!([
        {"key": "gen_ai.completion.0.tool_calls.0.name", "value": {"stringValue": "f"}},
        {"key": "gen_ai.completion.0.tool_calls.0.arguments", "value": {"stringValue": "{}"}},
        {"key": "gen_ai.completion.0.finish_reason", "value": {"stringValue": "error"}}
    ]);
    let loaded = load(
        "o.json",
        &otel_doc(&[
            ("e1", with_reason("error"), Value::Null),
            ("e2", with_reason("abort"), Value::Null),
            ("e3", otel_attrs(call, &reasons), Value::Null),
            ("e4", old, Value::Null),
            ("ok", with_reason("tool_calls"), Value::Null),
        ]),
    );
    let why = |i: usize| loaded[i].as_ref().unwrap_err().reason.clone();
    let tail = "(a provider error never becomes a transcript)";
    assert_eq!(
        why(0),
        format!(
            "span `e1`: the output message ended in a provider error, not an answer: `finish_reason` \"error\" {tail}"
        )
    );
    assert!(why(1).starts_with("span `e2`: ") && why(1).contains(r#""abort""#));
    assert!(why(2).starts_with("span `e3`: ") && why(2).contains(tail));
    assert!(why(3).starts_with("span `e4`: ") && why(3).contains(tail));
    assert_eq!(loaded[4].as_ref().unwrap().id, "o:ok");
    // Of several messages, only the one that ended in the error.
    let two = r#"[{"role": "assistant", "parts": [{"type": "text", "content": "a"}], "finish_reason": "stop"},
        {"role": "assistant", "parts": [{"type": "text", "content": "b"}], "finish_reason": "error"}]"#;
    let attrs = json!([{"key": "gen_ai.output.messages", "value": {"stringValue": two}}]);
    let loaded = load("n.json", &otel_doc(&[("s", attrs, Value::Null)]));
    assert_eq!(loaded.len(), 2);
    assert_eq!(loaded[0].as_ref().unwrap().output, "a");
    assert!(
        loaded[1]
            .as_ref()
            .unwrap_err()
            .reason
            .starts_with("span `s`: output message 1 ended in a provider error")
    );
}

/// Probe 6, bug 4: an OTel message that stopped at the token limit in the
/// provider's spelling (Anthropic's `max_tokens`, Gemini's `MAX_TOKENS`)
/// with a tool call last kept that call, which executed; the Anthropic
/// importer cuts it (`truncation`). The reason is written `length` and the
/// last call cut as the Anthropic importer cuts it, its arguments kept as
/// `import.truncated_input` — in a message's `finish_reason`, in
/// `gen_ai.response.finish_reasons` and in the older attributes. A call
/// followed by text, and OpenAI's `length`, are left as recorded.
#[test]
fn an_otel_call_cut_by_the_token_limit_is_truncation() {
    let call = r#"{"type": "tool_call", "id": "t1", "name": "f", "arguments": {"city": "Paris"}}"#;
    let message = |parts: &str, reason: &str| {
        let messages =
            format!(r#"[{{"role": "assistant", "parts": {parts}, "finish_reason": "{reason}"}}]"#);
        json!([{"key": "gen_ai.output.messages", "value": {"stringValue": messages}}])
    };
    let reasons = [json!({"key": "gen_ai.response.finish_reasons",
        "value": {"arrayValue": {"values": [{"stringValue": "max_tokens"}]}}})];
    let old = json!([
        {"key": "gen_ai.completion.0.content", "value": {"stringValue": "Let me look."}},
        {"key": "gen_ai.completion.0.tool_calls.0.name", "value": {"stringValue": "f"}},
        {"key": "gen_ai.completion.0.tool_calls.0.arguments", "value": {"stringValue": "{\"city\": \"Paris\"}"}},
        {"key": "gen_ai.completion.0.finish_reason", "value": {"stringValue": "max_tokens"}}
    ]);
    let both = format!("[{call}, {call}]");
    let loaded = load(
        "o.json",
        &otel_doc(&[
            (
                "a",
                message(&format!("[{call}]"), "max_tokens"),
                Value::Null,
            ),
            ("b", otel_attrs(&format!("[{call}]"), &reasons), Value::Null),
            ("c", message(&both, "MAX_TOKENS"), Value::Null),
            (
                "d",
                message(&format!("[{call}]"), "model_context_window_exceeded"),
                Value::Null,
            ),
            ("e", old, Value::Null),
        ]),
    );
    for t in ok(&loaded) {
        assert_eq!(t.finish_reason.as_deref(), Some("length"), "{}", t.id);
        let last = t.tool_calls.as_ref().unwrap().len() - 1;
        assert_eq!(args(t, last), "", "{}", t.id);
        let kept = t.raw["import"]["truncated_input"].as_str().unwrap();
        assert!(kept.contains("Paris"), "{}", t.id);
        // Only the last call is cut.
        if last > 0 {
            assert_eq!(args(t, 0), r#"{"city":"Paris"}"#);
        }
    }
    let text = r#"{"type": "text", "content": "done"}"#;
    let loaded = load(
        "k.json",
        &otel_doc(&[
            (
                "f",
                message(&format!("[{call}, {text}]"), "max_tokens"),
                Value::Null,
            ),
            ("g", message(&format!("[{call}]"), "length"), Value::Null),
        ]),
    );
    let ts = ok(&loaded);
    assert_eq!(ts[0].finish_reason.as_deref(), Some("length"));
    for t in ts {
        assert_eq!(args(t, 0), r#"{"city":"Paris"}"#, "{}", t.id);
        assert!(t.raw["import"].get("truncated_input").is_none());
    }
    // The conventions' finish reasons are OpenAI's words: an instrumentation
    // that follows them writes Anthropic's or Gemini's stop at the limit as
    // `length`. From a provider that parses calls server-side (its arguments
    // look whole even when cut), `length` cuts the last call too; from
    // OpenAI it stays as recorded.
    let with = |provider_key: &str, provider: &str, parts: &str, reason: &str| {
        let mut attrs = message(parts, reason);
        if let Value::Array(list) = &mut attrs {
            list.push(json!({"key": provider_key, "value": {"stringValue": provider}}));
        }
        attrs
    };
    let one = format!("[{call}]");
    let loaded = load(
        "p.json",
        &otel_doc(&[
            (
                "h",
                with("gen_ai.provider.name", "anthropic", &one, "length"),
                Value::Null,
            ),
            (
                "i",
                with("gen_ai.system", "gcp.gemini", &one, "length"),
                Value::Null,
            ),
            (
                "j",
                with("gen_ai.provider.name", "aws.bedrock", &both, "length"),
                Value::Null,
            ),
            (
                "l",
                with("gen_ai.provider.name", "openai", &one, "length"),
                Value::Null,
            ),
            (
                "m",
                with("gen_ai.provider.name", "anthropic", &one, "tool_call"),
                Value::Null,
            ),
        ]),
    );
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 5);
    for t in &ts[..3] {
        let last = t.tool_calls.as_ref().unwrap().len() - 1;
        assert_eq!(args(t, last), "", "{}", t.id);
        assert!(
            t.raw["import"]["truncated_input"]
                .as_str()
                .unwrap()
                .contains("Paris")
        );
    }
    assert_eq!(
        args(ts[2], 0),
        r#"{"city":"Paris"}"#,
        "only the last call is cut"
    );
    for t in &ts[3..] {
        assert_eq!(args(t, 0), r#"{"city":"Paris"}"#, "{}", t.id);
        assert!(t.raw["import"].get("truncated_input").is_none(), "{}", t.id);
    }
}

/// Probe: a BFCL result whose `result` is BFCL's inference-error marker
/// became the model's answer (prompt mode: its `output`). It is a load
/// error with its line; the other lines import.
#[test]
fn a_bfcl_inference_error_is_refused_and_the_other_lines_import() {
    let text = concat!(
        "{\"id\": \"simple_0\", \"result\": \"Error during inference: timeout\"}\n",
        "{\"id\": \"simple_1\", \"result\": \"[math.factorial(number=5)]\"}\n",
    );
    let loaded = load("BFCL_v3_simple_result.json", text);
    assert_eq!(loaded.len(), 2);
    let e = loaded[0].as_ref().unwrap_err();
    assert_eq!(e.line, Some(1));
    assert_eq!(
        e.reason,
        "BFCL line `simple_0`: the result is BFCL's inference error, not the model's answer: Error during inference: timeout"
    );
    assert_eq!(
        loaded[1].as_ref().unwrap().output,
        "[math.factorial(number=5)]"
    );
}

/// Probe: a `tool_use` whose `input` was a JSON string was decoded and ran
/// as if the model had written that object. The Messages API always sends
/// an object: anything else is refused, naming the block. A stream's
/// `partial_json` is text by design and still reads.
#[test]
fn an_anthropic_tool_use_input_that_is_not_an_object_is_refused() {
    let doc = |input: &str| {
        format!(
            r#"{{"type": "message", "content": [{{"type": "tool_use", "id": "toolu_1", "name": "get_weather"{input}}}], "stop_reason": "tool_use"}}"#
        )
    };
    for (input, got) in [
        (r#", "input": "{\"location\":\"SF\"}""#, "a string"),
        (r#", "input": null"#, "null"),
        ("", "missing"),
    ] {
        let loaded = load("a.json", &doc(input));
        assert_eq!(
            loaded[0].as_ref().unwrap_err().reason,
            format!(
                "`content[0]` (tool_use \"get_weather\"): `input` must be an object, as the Messages API sends it, and it is {got}: the capture is not what the API returned"
            )
        );
    }
    assert_eq!(
        args(
            ok(&load("a.json", &doc(r#", "input": {"location": "SF"}"#)))[0],
            0
        ),
        "{\"location\":\"SF\"}"
    );
    let text = std::fs::read_to_string(fixture("anthropic/stream.sse")).unwrap();
    assert!(!ok(&load("s.sse", &text)).is_empty());
}

/// Probe: Anthropic `image`, `server_tool_use` and `web_search_tool_result`
/// blocks were dropped without a word. Server tool blocks follow the
/// Responses rule (skipped beside a `tool_use`, note `items_skipped`; alone,
/// a load error); a block that is neither text, thinking, a call nor a
/// server tool's makes the message unreadable.
#[test]
fn anthropic_server_tool_blocks_are_noted_and_unknown_blocks_refused() {
    let text = r#"{"type": "message", "content": [{"type": "text", "text": "Searching."},
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}},
        {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": []},
        {"type": "tool_use", "id": "t1", "name": "f", "input": {}}], "stop_reason": "tool_use"}"#;
    let loaded = load("s.json", text);
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "Searching.");
    assert_eq!(
        notes(t),
        vec![(
            NoteKind::ItemsSkipped,
            "server tool blocks not read as calls or text: server_tool_use, web_search_tool_result (only `tool_use` blocks are native calls)".to_string()
        )]
    );
    let text = r#"{"type": "message", "content": [{"type": "image", "source": {}}], "stop_reason": "end_turn"}"#;
    assert_eq!(
        load("i.json", text)[0].as_ref().unwrap_err().reason,
        "`content[0]` is a `image` block, neither text, thinking, a tool call nor a server tool's: the message cannot be read whole"
    );
}

/// Probe: an Anthropic error body (in a pair, or alone) said "the response
/// has no `choices`" (or "missing `output`"); it is named as the error it
/// is, with its type and message, as OpenAI's and vLLM's error bodies are.
#[test]
fn an_error_body_is_reported_as_the_error_it_is() {
    let anthropic =
        r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#;
    let pair = format!(
        r#"{{"request": {{"model": "claude", "max_tokens": 10}}, "response": {anthropic}}}"#
    );
    for (name, text, what) in [
        ("p.json", pair.as_str(), "`overloaded_error`: Overloaded"),
        ("a.json", anthropic, "`overloaded_error`: Overloaded"),
        (
            "o.json",
            r#"{"error": {"message": "Rate limit reached", "type": "rate_limit", "code": 429}}"#,
            "`429`: Rate limit reached",
        ),
        (
            "v.json",
            r#"{"object": "error", "message": "model overloaded", "code": 503}"#,
            "`503`: model overloaded",
        ),
    ] {
        let loaded = load(name, text);
        assert_eq!(
            loaded[0].as_ref().unwrap_err().reason,
            format!("the response is an error, not an answer: {what}"),
            "{name}"
        );
    }
}

/// Probe: a request's `tools` of the wrong type (an object) was read as
/// `tools: []`, a known empty allowlist that blames every call as
/// `wrong_tool`. Every importer that reads a request's tools refuses it
/// (`null` still declares none).
#[test]
fn a_request_whose_tools_is_not_a_list_is_refused_everywhere() {
    let why = "the request's `tools` must be a list: the tools cannot be read";
    let chat = r#"{"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]}"#;
    let responses = r#"{"object": "response", "status": "completed", "output": []}"#;
    let anthropic = r#"{"type": "message", "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn"}"#;
    for response in [chat, responses, anthropic] {
        let text = format!(
            r#"{{"request": {{"model": "m", "tools": {{"a": 1}}}}, "response": {response}}}"#
        );
        let loaded = load("p.json", &text);
        assert_eq!(loaded[0].as_ref().unwrap_err().reason, why, "{response}");
        let text =
            format!(r#"{{"request": {{"model": "m", "tools": null}}, "response": {response}}}"#);
        let loaded = load("n.json", &text);
        assert!(
            ok(&loaded)[0].tools.is_empty(),
            "null declares none: {response}"
        );
    }
    let legacy = format!(r#"{{"request": {{"functions": "f"}}, "response": {chat}}}"#);
    assert_eq!(
        load("l.json", &legacy)[0].as_ref().unwrap_err().reason,
        "the request's `functions` must be a list: the tools cannot be read"
    );
    // A Batch output line joined with an input whose `tools` is not a list.
    let mut companions = Companions::default();
    companions
        .batch
        .insert("r1".into(), json!({"model": "m", "tools": {"a": 1}}));
    let output =
        format!(r#"{{"custom_id": "r1", "response": {{"status_code": 200, "body": {chat}}}}}"#);
    let out = convert(
        Path::new("b.jsonl"),
        &output,
        Kind::BatchOutput,
        &companions,
    );
    assert_eq!(out[0].as_ref().unwrap_err().reason, why);
}

/// Probe: `finish_reason: 7` was dropped (read as absent, then derivable);
/// a finish reason that is not a string or null is refused, in a response
/// and in a stream.
#[test]
fn a_finish_reason_that_is_not_a_string_is_refused() {
    let text = r#"{"choices": [{"message": {"content": "hi"}, "finish_reason": 7}]}"#;
    assert_eq!(
        load("f.json", text)[0].as_ref().unwrap_err().reason,
        "`choices[0].finish_reason` must be a string or null"
    );
    let stream = concat!(
        "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"},\"finish_reason\":7}]}\n\n",
        "data: [DONE]\n\n",
    );
    let loaded = load("f.sse", stream);
    assert_eq!(loaded.len(), 1);
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "choice 0: `finish_reason` must be a string or null"
    );
}

/// Probe: `{"model": "m", "output": []}` was taken for an empty Responses
/// object (a `no_call` transcript), and made a whole file of such lines
/// Responses (`output: 5` then said "the response has no `output` array").
/// Without `object: "response"`, a `resp_` id or a typed first item it is
/// not one: read as toolgate's format, which says what is wrong.
#[test]
fn an_output_list_alone_is_not_a_responses_object() {
    let text = "{\"model\":\"m\",\"output\":5}\n{\"model\":\"m\",\"output\":[]}\n";
    assert_eq!(detect(Path::new("o.jsonl"), text), None);
    let loaded = load("o.jsonl", text);
    assert_eq!(loaded.len(), 2);
    for l in &loaded {
        assert_eq!(l.as_ref().unwrap_err().reason, "`output` must be a string");
    }
    for responses in [
        r#"{"object": "response", "output": []}"#,
        r#"{"id": "resp_1", "output": []}"#,
        r#"{"output": [{"type": "message", "content": []}]}"#,
    ] {
        assert_eq!(
            detect(Path::new("r.json"), responses),
            Some(Kind::Responses),
            "{responses}"
        );
    }
}

/// Probe C, bug 1: a stream cut short by a provider error (OpenRouter's
/// `finish_reason: "error"`, vLLM's and SGLang's `abort`) after a call's
/// name and before its arguments was read as a complete call with `{}`:
/// `delete_files {}` executed. It is a load error at the error's line.
#[test]
fn a_stream_ending_in_a_provider_error_is_not_a_transcript() {
    let stream = |last_choice: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{{\"name\":\"delete_files\"}}}}]}},\"finish_reason\":null}}]}}\n\n\
             data: {{\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{{}},{last_choice}}}]}}\n\n\
             data: [DONE]\n"
        )
    };
    for (last, what) in [
        (r#""finish_reason":"error""#, r#"`finish_reason` "error""#),
        (r#""finish_reason":"abort""#, r#"`finish_reason` "abort""#),
        (
            r#""finish_reason":"error","error":{"code":502,"message":"Provider disconnected"}"#,
            "`502`: Provider disconnected",
        ),
    ] {
        let loaded = load("cut.sse", &stream(last));
        assert_eq!(loaded.len(), 1, "{last}");
        let e = loaded[0].as_ref().unwrap_err();
        assert_eq!(e.line, Some(3), "{last}");
        assert_eq!(
            e.reason,
            format!(
                "the stream's choice 0 ended in a provider error, not an answer: {what} (a provider error never becomes a transcript) (the stream from line 1 is not imported)"
            )
        );
    }
    // A finish reason this reader does not know is not a clean end: the
    // arguments that never arrived stay `""` (truncation), not `{}`.
    let loaded = load("u.sse", &stream(r#""finish_reason":"timeout""#));
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), "");
    assert_eq!(notes(t), vec![]);
}

/// Probe C, bug 2: a choice that carries a provider error (OpenRouter puts
/// `error` on the choice, with `finish_reason: "error"`) was read as the
/// model's empty answer, `no_call`. It is a load error, as a top-level
/// `error` is.
#[test]
fn a_choice_ending_in_a_provider_error_is_not_a_transcript() {
    let pair = |choice_tail: &str| {
        format!(
            r#"{{"request": {{"tools": []}}, "response": {{"object": "chat.completion",
                "choices": [{{"index": 0, "message": {{"role": "assistant", "content": ""}}{choice_tail}}}]}}}}"#
        )
    };
    for (tail, what) in [
        (
            r#", "finish_reason": "error", "error": {"code": 502, "message": "Upstream error"}"#,
            "`502`: Upstream error",
        ),
        (
            r#", "finish_reason": "error""#,
            r#"`finish_reason` "error""#,
        ),
        (
            r#", "finish_reason": "abort""#,
            r#"`finish_reason` "abort""#,
        ),
        (
            r#", "finish_reason": "stop", "error": {"message": "late"}"#,
            "`error`: late",
        ),
    ] {
        let loaded = load("p.json", &pair(tail));
        assert_eq!(
            loaded[0].as_ref().unwrap_err().reason,
            format!(
                "`choices[0]` ended in a provider error, not an answer: {what} (a provider error never becomes a transcript)"
            ),
            "{tail}"
        );
    }
    assert!(load("p.json", &pair(r#", "finish_reason": "stop""#))[0].is_ok());
}

/// Issue 41: a chat completion with both `choices` and a top-level `error`
/// (a gateway reporting an upstream timeout beside the text it had) was
/// read as the answer, because the top-level error was only looked at when
/// `choices` was absent. It is a load error naming the error, in a pair,
/// a bare response and a Batch body; a null `error` is no error.
#[test]
fn a_completion_with_choices_and_a_top_level_error_is_not_a_transcript() {
    let response = |error: &str| {
        format!(
            r#"{{"id": "c", "object": "chat.completion", "model": "m", "choices": [{{"index": 0,
                "message": {{"role": "assistant", "content": "Sorry, upstream timed out"}},
                "finish_reason": "stop"}}], "error": {error}}}"#
        )
    };
    let timeout = response(r#"{"message": "timeout"}"#);
    let why = "the response is an error, not an answer: `error`: timeout";
    let pair = format!(r#"{{"request": {{"tools": []}}, "response": {timeout}}}"#);
    for text in [&pair, &timeout] {
        let loaded = load("p.json", text);
        assert_eq!(loaded.len(), 1);
        assert_eq!(loaded[0].as_ref().unwrap_err().reason, why, "{text}");
    }
    let loaded = load("p.json", &response("null"));
    assert_eq!(ok(&loaded)[0].output, "Sorry, upstream timed out");
    let mut companions = Companions::default();
    companions.batch.insert("r1".into(), json!({"tools": []}));
    let line = format!(
        r#"{{"custom_id": "r1", "response": {{"status_code": 200, "body": {}}}, "error": null}}"#,
        timeout.replace('\n', " ")
    );
    let path = Path::new("batch_output.jsonl");
    let loaded = load_kind(path, &line, detect(path, &line), &companions);
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        format!("Batch request `r1`: {why}")
    );
}

/// Probe C, bug 3: a Chat Completions call of a `custom` tool (free-text
/// `input`) was copied as a function call with no arguments text and
/// blamed on the model as `malformed_json`. It is refused, as the
/// Responses importer refuses `custom_tool_call`, streamed or not.
#[test]
fn a_chat_custom_tool_call_is_refused_by_name() {
    let text = r#"{"request": {"tools": []}, "response": {"choices": [{"index": 0,
        "message": {"role": "assistant", "content": null, "tool_calls": [
          {"id": "call_2", "type": "function", "function": {"name": "f", "arguments": "{}"}},
          {"id": "call_1", "type": "custom", "custom": {"name": "code_exec", "input": "print('hi')"}}]},
        "finish_reason": "tool_calls"}]}}"#;
    assert_eq!(
        load("c.json", text)[0].as_ref().unwrap_err().reason,
        "`choices[0].message.tool_calls[1]` is a call of the custom tool \"code_exec\" (`call_1`): a custom tool's input is free text, not a JSON arguments object (SPEC §1): the call cannot be judged, and the response is not imported rather than read as `malformed_json` or `no_call`"
    );
    let stream = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"custom\",\"custom\":{\"name\":\"code_exec\",\"input\":\"print(1)\"}}]},\"finish_reason\":null}]}\n\n\
                  data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n";
    let loaded = load("c.sse", stream);
    let e = loaded[0].as_ref().unwrap_err();
    assert_eq!(e.line, Some(1));
    assert!(
        e.reason.starts_with(
            "choice 0: a streamed tool call is a call of the custom tool \"code_exec\" (`call_1`)"
        ),
        "{}",
        e.reason
    );
}

/// Probe C, bug 5: a response whose only calls were server-side tool calls
/// (Responses `mcp_call`, `web_search_call`; Anthropic `server_tool_use`)
/// was the model's `no_call`, with only a note, although the model did
/// call a tool. It is a load error naming those calls. Probe F: with a
/// text answer after them (the model searched, then answered) the response
/// was refused too; that text is the answer, the calls noted as skipped.
#[test]
fn a_response_whose_only_calls_are_server_side_is_refused_by_name() {
    let why = |name: &str, text: &str| load(name, text)[0].as_ref().unwrap_err().reason.clone();
    let tail = ": the provider runs them, they are not calls of the request's function tools and cannot be judged, and the response is not imported rather than read as `no_call`";
    let responses = |text: &str| {
        format!(
            r#"{{"object": "response", "status": "completed", "output": [
        {{"type": "mcp_list_tools", "id": "l1", "server_label": "d", "tools": []}},
        {{"type": "mcp_call", "id": "mcp_1", "name": "ask_question", "arguments": "{{}}"}},
        {{"type": "web_search_call", "id": "ws_1", "status": "completed"}},
        {{"type": "message", "content": [{{"type": "output_text", "text": "{text}"}}]}}]}}"#
        )
    };
    assert_eq!(
        why("r.json", &responses(" ")),
        format!(
            "the response's only tool calls are server-side (mcp_call \"ask_question\", web_search_call){tail}"
        )
    );
    let anthropic = |text: &str| {
        format!(
            r#"{{"type": "message", "content": [
        {{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {{"query": "q"}}}},
        {{"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}},
        {{"type": "text", "text": "{text}"}}], "stop_reason": "end_turn"}}"#
        )
    };
    assert_eq!(
        why("a.json", &anthropic("")),
        format!(
            "the response's only tool calls are server-side (server_tool_use \"web_search\"){tail}"
        )
    );
    for (name, text) in [
        ("r.json", responses("Sunny.")),
        ("a.json", anthropic("Sunny.")),
    ] {
        let loaded = load(name, &text);
        let t = ok(&loaded)[0];
        assert_eq!(t.output, "Sunny.", "{name}");
        assert_eq!(t.tool_calls, Some(vec![]), "{name}");
        assert_eq!(notes(t)[0].0, NoteKind::ItemsSkipped, "{name}");
    }
    // Items that are not calls (an MCP tool list) alone are still skipped.
    let list = r#"{"object": "response", "status": "completed", "output": [
        {"type": "mcp_list_tools", "id": "l1", "server_label": "d", "tools": []}]}"#;
    assert_eq!(
        notes(ok(&load("l.json", list))[0])[0].0,
        NoteKind::ItemsSkipped
    );
}

/// Probe C, bug 6: a Batch output line of a `/v1/responses` batch said "the
/// response has no `choices`", a failed one included. Its body is read as
/// the Responses importer reads one, and a failed body says it failed.
#[test]
fn batch_output_of_responses_bodies_is_read_as_responses() {
    let input = "{\"custom_id\": \"r1\", \"method\": \"POST\", \"url\": \"/v1/responses\", \"body\": {\"model\": \"m\", \"tools\": [{\"type\": \"function\", \"name\": \"get_weather\", \"parameters\": {\"type\": \"object\"}}]}}\n";
    let output = concat!(
        "{\"custom_id\": \"r1\", \"response\": {\"status_code\": 200, \"body\": {\"object\": \"response\", \"status\": \"completed\", \"model\": \"m\", \"output\": [{\"type\": \"function_call\", \"call_id\": \"c\", \"name\": \"get_weather\", \"arguments\": \"{\\\"city\\\":\\\"A\\\"}\"}]}}, \"error\": null}\n",
        "{\"custom_id\": \"r2\", \"response\": {\"status_code\": 200, \"body\": {\"object\": \"response\", \"status\": \"failed\", \"error\": {\"code\": \"server_error\", \"message\": \"boom\"}, \"output\": []}}, \"error\": null}\n",
    );
    let mut companions = Companions::default();
    companions.add(Path::new("in.jsonl"), input, Kind::BatchInput);
    let loaded = load_kind(
        Path::new("out.jsonl"),
        output,
        Some(Kind::BatchOutput),
        &companions,
    );
    let t = loaded[0].as_ref().unwrap();
    assert_eq!(t.id, "r1");
    assert_eq!(t.tools[0].name, "get_weather");
    assert_eq!(args(t, 0), r#"{"city":"A"}"#);
    assert_eq!(t.raw["import"]["from"], Kind::Responses.name());
    let e = loaded[1].as_ref().unwrap_err();
    assert_eq!(
        (e.line, e.reason.as_str()),
        (
            Some(2),
            "Batch request `r2` (a Responses body): the response failed: `server_error`: boom"
        )
    );
}

/// Probe F, t6: a stream cut off before its end and followed by the next
/// one in the same file was read as one stream with both: msg_B's text and
/// id with msg_A's `delete_file` call, finish `stop`. A new
/// `message_start`, `response.created`, or a chunk of another completion
/// ends the stream before it, which is then cut off (unterminated).
#[test]
fn a_cut_off_stream_is_never_merged_into_the_next() {
    let ev = |e: &str| {
        let v: Value = serde_json::from_str(e).unwrap();
        format!("event: {}\ndata: {e}\n\n", v["type"].as_str().unwrap())
    };
    let start = |id: &str| {
        ev(&format!(
            r#"{{"type":"message_start","message":{{"id":"{id}","type":"message","role":"assistant","content":[]}}}}"#
        ))
    };
    let anthropic = [
        start("msg_A"),
        ev(r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"t","name":"delete_file","input":{}}}"#),
        ev(r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"/etc/passwd\"}"}}"#),
        ev(r#"{"type":"content_block_stop","index":0}"#),
        start("msg_B"),
        ev(r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#),
        ev(r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Nice."}}"#),
        ev(r#"{"type":"content_block_stop","index":0}"#),
        ev(r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"}}"#),
        ev(r#"{"type":"message_stop"}"#),
    ]
    .concat();
    let created = |id: &str| {
        format!(
            r#"{{"type":"response.created","response":{{"id":"{id}","object":"response","status":"in_progress","output":[]}}}}"#
        )
    };
    let responses = responses_sse(&[
        &created("resp_A"),
        r#"{"type":"response.output_item.done","output_index":0,"item":{"type":"function_call","id":"fc","call_id":"c","name":"delete_file","arguments":"{\"path\": \"/etc/passwd\"}","status":"completed"}}"#,
        &created("resp_B"),
        r#"{"type":"response.output_text.delta","output_index":0,"content_index":0,"delta":"Nice."}"#,
        r#"{"type":"response.completed","response":{"id":"resp_B","object":"response","status":"completed","output":[]}}"#,
    ]);
    for (name, text, first) in [
        ("a.sse", anthropic, "msg_A"),
        ("r.sse", responses, "resp_A"),
    ] {
        let loaded = load(name, &text);
        let ts = ok(&loaded);
        assert_eq!(ts.len(), 2, "{name}");
        assert_eq!(ts[0].raw["import"]["response_id"], first, "{name}");
        assert_eq!(ts[0].raw["import"]["unterminated"], true, "{name}");
        assert_eq!(ts[0].finish_reason, None, "{name}");
        assert_eq!(ts[0].output, "", "{name}");
        assert_eq!(ts[1].output, "Nice.", "{name}");
        assert_eq!(ts[1].tool_calls, Some(vec![]), "{name}: no call of msg_A");
        assert_eq!(ts[1].finish_reason.as_deref(), Some("stop"), "{name}");
        assert!(ts[1].raw["import"].get("unterminated").is_none(), "{name}");
    }
}

/// Probe F, t6: chat chunks as JSON lines without `[DONE]` (one completion
/// after another) were read as one stream, marked unterminated though each
/// finished; with an aborted completion between two good ones, the good
/// first one was lost with it. A chunk of another completion (`id`), or a
/// delta for a choice that already finished, begins the next stream; a
/// stream whose every choice finished is not unterminated.
#[test]
fn chat_chunks_of_several_completions_without_done_are_streams_of_their_own() {
    let chunk = |id: &str, delta: &str, finish: &str| {
        let id = if id.is_empty() {
            String::new()
        } else {
            format!("\"id\":\"{id}\",")
        };
        format!(
            "{{{id}\"object\":\"chat.completion.chunk\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n"
        )
    };
    for ids in [["a", "b", "c"], ["", "", ""]] {
        let text = [
            chunk(ids[0], r#"{"content":"Hello."}"#, "null"),
            chunk(ids[0], "{}", r#""stop""#),
            chunk(ids[1], r#"{"content":"Hal"}"#, "null"),
            chunk(ids[1], "{}", r#""abort""#),
            chunk(ids[2], r#"{"content":"Bye."}"#, "null"),
            chunk(ids[2], "{}", r#""stop""#),
        ]
        .concat();
        let loaded = load("m.jsonl", &text);
        let errors: Vec<_> = loaded.iter().filter_map(|l| l.as_ref().err()).collect();
        let ts: Vec<_> = loaded.iter().filter_map(|l| l.as_ref().ok()).collect();
        let outputs: Vec<_> = ts.iter().map(|t| t.output.as_str()).collect();
        assert_eq!(outputs, ["Hello.", "Bye."], "{ids:?}");
        for t in &ts {
            assert_eq!(t.finish_reason.as_deref(), Some("stop"));
            assert!(t.raw["import"].get("unterminated").is_none(), "{ids:?}");
        }
        assert_eq!(errors.len(), 1, "{ids:?}");
        assert_eq!(errors[0].line, Some(4));
        assert!(
            errors[0]
                .reason
                .ends_with("(the stream from line 3 is not imported)"),
            "{}",
            errors[0].reason
        );
    }
    // A completion cut off before the next one begins is unterminated (each
    // opens with its `role` chunk, as every server's does).
    let text = [
        chunk("a", r#"{"role":"assistant","content":""}"#, "null"),
        chunk("a", r#"{"content":"Hel"}"#, "null"),
        chunk("c", r#"{"role":"assistant","content":"Bye."}"#, "null"),
        chunk("c", "{}", r#""stop""#),
    ]
    .concat();
    let loaded = load("m.jsonl", &text);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 2);
    assert_eq!(ts[0].output, "Hel");
    assert_eq!(ts[0].raw["import"]["unterminated"], true);
    assert_eq!(ts[1].output, "Bye.");
    assert!(ts[1].raw["import"].get("unterminated").is_none());
}

/// Probe I, 1: since a chunk of another `id` began the next stream, a
/// server that gives every chunk its own id (LiteLLM streaming
/// `ollama_chat`, Foundry Local, old llama.cpp and ms-swift) had one tool
/// call split into a transcript per chunk, exit 0; a trailing usage chunk
/// of another id was "the response has no `choices`". Such a stream is one
/// transcript; a cut-off stream before the next completion still is not
/// merged into it.
#[test]
fn a_stream_whose_chunks_each_have_their_own_id_is_one_stream() {
    let chunk = |id: &str, choices: &str| {
        format!(
            "data: {{\"id\":\"{id}\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{choices}]}}\n\n"
        )
    };
    let choice = |delta: &str, finish: &str| {
        format!(r#"{{"index":0,"delta":{delta},"finish_reason":{finish}}}"#)
    };
    let call = |fragment: &str| {
        choice(
            &format!(r#"{{"tool_calls":[{{"index":0,{fragment}}}]}}"#),
            "null",
        )
    };
    // LiteLLM's ollama_chat: the call with the role, the finish apart.
    let litellm = [
        chunk(
            "x1",
            &choice(
                r#"{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]}"#,
                "null",
            ),
        ),
        chunk("x2", &choice("{}", r#""tool_calls""#)),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    // Fragments, each chunk with an id of its own.
    let fragments = [
        chunk(
            "y1",
            &choice(r#"{"role":"assistant","content":null}"#, "null"),
        ),
        chunk(
            "y2",
            &call(
                r#""id":"c1","type":"function","function":{"name":"get_weather","arguments":""}"#,
            ),
        ),
        chunk("y3", &call(r#""function":{"arguments":"{\"city\": "}"#)),
        chunk("y4", &call(r#""function":{"arguments":"\"Paris\"}"}"#)),
        chunk("y5", &choice("{}", r#""tool_calls""#)),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    // ms-swift: `role` on every chunk, an id per chunk, the call at the end.
    let swift = [
        chunk("z1", &choice(r#"{"role":"assistant","content":""}"#, "null")),
        chunk("z2", &choice(r#"{"role":"assistant","content":""}"#, "null")),
        chunk(
            "z3",
            &choice(
                r#"{"role":"assistant","content":"","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]}"#,
                r#""tool_calls""#,
            ),
        ),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    for (name, text) in [("l", litellm), ("f", fragments), ("s", swift)] {
        let loaded = load("s.sse", &text);
        let ts = ok(&loaded);
        assert_eq!(ts.len(), 1, "{name}");
        assert_eq!(ts[0].tool_calls.as_ref().unwrap().len(), 1, "{name}");
        assert_eq!(args(ts[0], 0), r#"{"city": "Paris"}"#, "{name}");
        assert_eq!(ts[0].finish_reason.as_deref(), Some("tool_calls"), "{name}");
        assert!(ts[0].raw["import"].get("unterminated").is_none(), "{name}");
    }
    // Text, each chunk with an id of its own.
    let text = [
        chunk(
            "t1",
            &choice(r#"{"role":"assistant","content":"Hel"}"#, "null"),
        ),
        chunk("t2", &choice(r#"{"content":"lo"}"#, "null")),
        chunk("t3", &choice("{}", r#""stop""#)),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let loaded = load("t.sse", &text);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].output, "Hello");
    // The usage chunk after the finish, of another id, is the stream's.
    let text = [
        chunk("u1", &choice(r#"{"role":"assistant","content":"Hi"}"#, "null")),
        chunk("u1", &choice("{}", r#""stop""#)),
        "data: {\"id\":\"u2\",\"object\":\"chat.completion.chunk\",\"choices\":[],\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":1,\"total_tokens\":2}}\n\n".to_string(),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let loaded = load("u.sse", &text);
    assert_eq!(loaded.len(), 1);
    let ts = ok(&loaded);
    assert_eq!(ts[0].output, "Hi");
    assert_eq!(ts[0].raw["import"]["usage"]["completion_tokens"], 1);
    // Such a server's stream cut off, then the next completion: two streams.
    let text = [
        chunk("v1", &choice(r#"{"role":"assistant","content":""}"#, "null")),
        chunk(
            "v2",
            &call(r#""id":"c1","type":"function","function":{"name":"delete_file","arguments":"{\"pa"}"#),
        ),
        chunk("w1", &choice(r#"{"role":"assistant","content":"Nice."}"#, "null")),
        chunk("w2", &choice("{}", r#""stop""#)),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let loaded = load("v.sse", &text);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 2);
    assert_eq!(ts[0].raw["import"]["unterminated"], true);
    assert_eq!(ts[0].tool_calls.as_ref().unwrap().len(), 1);
    assert_eq!(ts[1].output, "Nice.");
    assert_eq!(ts[1].tool_calls, None, "no call of the cut-off stream");
    assert_eq!(ts[1].finish_reason.as_deref(), Some("stop"));
}

/// Probe F, t1: the chunks after an in-stream provider error (OpenRouter's
/// trailing `stop` chunk with usage, vLLM's usage chunk after `abort`)
/// were read as a stream of their own: a transcript with no output and no
/// call, `no_call`, or a second error "the response has no `choices`". They
/// belong to the dropped stream: one error, no transcript.
#[test]
fn the_chunks_after_a_provider_error_are_dropped_with_its_stream() {
    let call = "data: {\"id\":\"g\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"ci\"}}]},\"finish_reason\":null}]}\n\n";
    for (error, trailing) in [
        (
            r#"{"id":"g","choices":[{"index":0,"delta":{},"finish_reason":"error","error":{"code":502,"message":"gone"}}]}"#,
            r#"{"id":"g","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"completion_tokens":3}}"#,
        ),
        (
            r#"{"id":"g","choices":[{"index":0,"delta":{},"finish_reason":"abort"}]}"#,
            r#"{"id":"g","choices":[],"usage":{"completion_tokens":3}}"#,
        ),
        (
            r#"{"error":{"code":502,"message":"gone"}}"#,
            r#"{"id":"g","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"completion_tokens":3}}"#,
        ),
    ] {
        let text = format!("{call}data: {error}\n\ndata: {trailing}\n\ndata: [DONE]\n\n");
        let loaded = load("e.sse", &text);
        assert_eq!(loaded.len(), 1, "{error}");
        let e = loaded[0].as_ref().unwrap_err();
        assert_eq!(e.line, Some(3), "{error}");
        assert!(
            e.reason
                .ends_with("(the stream from line 1 is not imported)"),
            "{e}"
        );
    }
}

/// Probe F, t1: with `n` > 1, one choice ending in a provider error made
/// the whole response an error (JSON), or left the other choice a
/// transcript without its call, `no_call` (stream). The errored choice is
/// refused and reported; the other is its own transcript, as a sample.
#[test]
fn one_errored_choice_of_several_refuses_only_that_choice() {
    let json = r#"{"request": {"n": 2, "tools": [{"type": "function", "function": {"name": "get_weather"}}]},
      "response": {"choices": [
        {"index": 0, "message": {"role": "assistant", "content": "partial"}, "finish_reason": "error", "error": {"code": 502, "message": "died"}},
        {"index": 1, "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}, "finish_reason": "tool_calls"}]}}"#;
    let stream = concat!(
        "data: {\"id\":\"g\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"partial\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"g\",\"choices\":[{\"index\":1,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"Paris\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"g\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"error\",\"error\":{\"code\":502,\"message\":\"died\"}}]}\n\n",
        "data: {\"id\":\"g\",\"choices\":[{\"index\":1,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    for (name, text, line) in [("p.json", json, None), ("s.sse", stream, Some(5))] {
        let loaded = load(name, text);
        assert_eq!(loaded.len(), 2, "{name}");
        let e = loaded.iter().find_map(|l| l.as_ref().err()).unwrap();
        assert_eq!(e.line, line, "{name}");
        assert!(e.reason.contains("`502`: died"), "{e}");
        let t = ok(&loaded[..]
            .iter()
            .filter(|l| l.is_ok())
            .cloned()
            .collect::<Vec<_>>())[0]
            .clone();
        assert_eq!(t.sample, Some(1), "{name}");
        assert_eq!(args(&t, 0), r#"{"city":"Paris"}"#, "{name}");
        assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"), "{name}");
    }
}

/// Probe F, t3: a `function_call` item still `in_progress` in an
/// incomplete response (the call being generated when the output stopped)
/// was read whole and executed. Only a `completed` item (or one without
/// `status`) is a finished call; the other is cut: `""`, kept aside. A
/// stream's item whose added event said `in_progress` is finished when
/// the response completed, and cut when it did not.
#[test]
fn responses_a_function_call_item_not_completed_is_cut_off() {
    let text = r#"{"object": "response", "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "output": [
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{\"city\":\"Paris\"}", "status": "completed"},
        {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{\"city\":\"Berlin\"}", "status": "in_progress"},
        {"type": "function_call", "call_id": "c3", "name": "f", "arguments": "{\"city\":\"Gent\"}"}]}"#;
    let loaded = load("r.json", text);
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), r#"{"city":"Paris"}"#);
    assert_eq!(args(t, 1), "");
    // The last one, without `status`, ends the output of an `incomplete`
    // response: it is cut too ([`stopped_early`]); the item cut by its
    // status keeps its arguments in `truncated_input`.
    assert_eq!(args(t, 2), "");
    assert_eq!(t.raw["import"]["truncated_input"], r#"{"city":"Berlin"}"#);
    // In a completed response an item without `status` is whole.
    let completed = text.replace(
        r#""status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}, "#,
        r#""status": "completed", "#,
    );
    let loaded = load("r.json", &completed);
    assert_eq!(args(ok(&loaded)[0], 2), r#"{"city":"Gent"}"#);
    let added = r#"{"type":"response.output_item.added","output_index":0,"item":{"id":"fc","type":"function_call","call_id":"c","name":"f","arguments":"","status":"in_progress"}}"#;
    let delta = r#"{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"city\":\"A\"}"}"#;
    for (terminal, arguments) in [
        (
            r#"{"type":"response.completed","response":{"object":"response","status":"completed","output":[]}}"#,
            r#"{"city":"A"}"#,
        ),
        (
            r#"{"type":"response.incomplete","response":{"object":"response","status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}}"#,
            "",
        ),
    ] {
        let loaded = load("s.sse", &responses_sse(&[CREATED, added, delta, terminal]));
        assert_eq!(args(ok(&loaded)[0], 0), arguments, "{terminal}");
    }
}

/// Probe F, t7: an Anthropic or Responses line in a chat JSONL file was
/// reported as "the response has no `choices`". The error says what the
/// line is and how to import it; the chat lines still import.
#[test]
fn a_line_of_another_format_in_a_chat_file_says_what_it_is() {
    let text = concat!(
        "{\"request\": {}, \"response\": {\"choices\": [{\"index\": 0, \"message\": {\"content\": \"hi\"}, \"finish_reason\": \"stop\"}]}}\n",
        "{\"request\": {}, \"response\": {\"type\": \"message\", \"content\": [{\"type\": \"text\", \"text\": \"hi\"}], \"stop_reason\": \"end_turn\"}}\n",
        "{\"request\": {}, \"response\": {\"object\": \"response\", \"status\": \"completed\", \"output\": []}}\n",
    );
    let loaded = load("m.jsonl", text);
    assert_eq!(ok(&loaded[..1])[0].output, "hi");
    let reasons: Vec<_> = loaded[1..]
        .iter()
        .map(|l| l.as_ref().unwrap_err().reason.clone())
        .collect();
    assert_eq!(
        reasons,
        [
            "an Anthropic message, not a chat completion: import it on its own (--from anthropic)",
            "a Responses API response, not a chat completion: import it on its own (--from openai-responses)",
        ]
    );
}

/// The review of stop 41: the importer read `finish_reason: ""` as a finish
/// (and a stream without ids split at the next text), and the last finish
/// won where the proxy keeps the first. `""` and `"null"` are no finish,
/// and the first finish stands (Dynamo's empty `stop` after `tool_calls`).
#[test]
fn an_empty_or_null_finish_is_none_and_the_first_finish_stands() {
    let chunk = |delta: &str, finish: &str| {
        format!(
            "data: {{\"object\":\"chat.completion.chunk\",\"model\":\"m\",\"choices\":[{{\"index\":0,\"delta\":{delta},\"finish_reason\":{finish}}}]}}\n\n"
        )
    };
    let text = [
        chunk(r#"{"role":"assistant","content":"Hel"}"#, r#""""#),
        chunk(r#"{"content":"lo"}"#, r#""null""#),
        chunk("{}", r#""stop""#),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let loaded = load("e.sse", &text);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].output, "Hello");
    assert_eq!(ts[0].finish_reason.as_deref(), Some("stop"));
    let dynamo = [
        chunk(
            r#"{"role":"assistant","tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]}"#,
            r#""tool_calls""#,
        ),
        chunk(r#"{"content":null,"tool_calls":null}"#, r#""stop""#),
        "data: [DONE]\n\n".to_string(),
    ]
    .concat();
    let loaded = load("d.sse", &dynamo);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].finish_reason.as_deref(), Some("tool_calls"));
}

/// Probe 4, bug 1: a pair document's own members were copied over what the
/// importer read, so a top-level `tool_calls` beside a response that made
/// no call became the model's call (and executed). What the importer reads
/// from the capture wins; a differing member of the same name is dropped
/// and named in `import.ignored_members`, a logger's `model` included.
#[test]
fn a_wrapper_member_never_replaces_what_the_capture_says() {
    let invented = r#"[{"id": "x", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Evil\"}"}}]"#;
    let chat = format!(
        r#"{{"request": {{"model": "gpt-4o", "tools": [{{"type": "function", "function": {{"name": "get_weather"}}}}]}},
        "response": {{"model": "gpt-4o-2024", "choices": [{{"index": 0, "message": {{"content": "I won't call anything.", "tool_calls": []}}, "finish_reason": "stop"}}]}},
        "tool_calls": {invented}, "tools": [{{"name": "rm"}}], "reasoning": "x", "finish_reason": "tool_calls",
        "import": {{"raw_text": true}}, "model": "logged", "task": "t"}}"#
    );
    let anthropic = format!(
        r#"{{"request": {{"tools": [{{"name": "get_weather", "input_schema": {{"type": "object"}}}}]}},
        "response": {{"type": "message", "model": "claude", "content": [{{"type": "text", "text": "I won't call anything."}}], "stop_reason": "end_turn"}},
        "tool_calls": {invented}, "tools": [{{"name": "rm"}}], "reasoning": "x", "finish_reason": "tool_calls",
        "import": {{"raw_text": true}}, "model": "logged", "task": "t"}}"#
    );
    for (name, text, model) in [
        ("c.json", chat, "gpt-4o-2024"),
        ("a.json", anthropic, "claude"),
    ] {
        let loaded = load(name, &text);
        let t = ok(&loaded)[0];
        assert_eq!(t.tool_calls, Some(vec![]), "{name}");
        assert_eq!(t.output, "I won't call anything.", "{name}");
        assert_eq!(t.finish_reason.as_deref(), Some("stop"), "{name}");
        assert_eq!(t.model.as_deref(), Some(model), "{name}");
        assert_eq!(t.raw["tools"][0]["function"]["name"], "get_weather");
        assert_eq!(t.task.as_deref(), Some("t"), "{name}");
        let mut ignored: Vec<&str> = t.raw["import"]["ignored_members"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        ignored.sort_unstable();
        assert_eq!(
            ignored,
            [
                "finish_reason",
                "import",
                "model",
                "reasoning",
                "tool_calls",
                "tools"
            ],
            "{name}"
        );
    }
    // A member equal to what was read is not named; a `model` the capture
    // lacks is the document's. (A document with a string `output` is
    // toolgate's own transcript, not a pair: not an import.)
    let same = r#"{"model": "m", "response": {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]},
        "finish_reason": "stop"}"#;
    let loaded = load("s.json", same);
    let t = ok(&loaded)[0];
    assert_eq!(t.model.as_deref(), Some("m"));
    assert!(t.raw["import"].get("ignored_members").is_none());
}

/// Probe 4, bug 2: a pair document's request headers, API keys and a
/// logger's metadata holding keys were copied verbatim into the
/// transcript, a file meant to be committed. Credential-named members at
/// any depth are replaced by `[redacted]` and their paths listed.
#[test]
fn credentials_in_a_wrapper_never_reach_the_transcript() {
    let text = r#"{"request": {"model": "gpt-4o"},
        "response": {"choices": [{"message": {"content": "hi"}, "finish_reason": "stop"}]},
        "request_headers": {"Authorization": "Bearer sk-proj-SECRET1", "OpenAI-Organization": "org-x",
          "x-api-key": "SECRET2", "Cookie": "s=SECRET3"},
        "api_key": "SECRET4",
        "metadata": {"user_api_key": "SECRET5", "litellm_params": {"api_key": "SECRET6"},
          "hops": [{"Proxy-Authorization": "SECRET7", "Client_Secret": "SECRET8"}],
          "refresh_token": "SECRET9", "password": null, "max_tokens": 5}}"#;
    let loaded = load("s.json", text);
    let t = ok(&loaded)[0];
    let written = serde_json::to_string(&t.raw).unwrap();
    assert!(!written.contains("SECRET"), "{written}");
    assert_eq!(t.raw["request_headers"]["Authorization"], REDACTED);
    assert_eq!(t.raw["request_headers"]["OpenAI-Organization"], "org-x");
    assert_eq!(t.raw["metadata"]["max_tokens"], 5);
    assert_eq!(t.raw["metadata"]["password"], Value::Null);
    let mut paths: Vec<&str> = t.raw["import"]["redacted_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "api_key",
            "metadata.hops[0].Client_Secret",
            "metadata.hops[0].Proxy-Authorization",
            "metadata.litellm_params.api_key",
            "metadata.refresh_token",
            "metadata.user_api_key",
            "request_headers.Authorization",
            "request_headers.Cookie",
            "request_headers.x-api-key",
        ]
    );
}

/// Probe 44, item 5: credentials a logger keeps where no member name says
/// so (LiteLLM's `api_base` with `?key=`, a URL's password, header lists,
/// headers as JSON text or a curl command, a plain `key`) were written as
/// they came. The model's output, its call's arguments and the tools,
/// which hold the same shapes here, are written unchanged: they are what
/// is judged.
#[test]
fn credentials_a_logger_keeps_by_shape_never_reach_the_transcript() {
    let args = r#"{"url": "https://u:p@h/?key=AIzaSyARGS0000000000000000000000000000", "auth": "Bearer sk-ARGS1234"}"#;
    let pair = json!({
        "request": {"model": "gpt-4o", "messages": [{"role": "user", "content": "Bearer sk-PROMPT123"}],
            "tools": [{"type": "function", "function": {"name": "fetch",
                "description": "-H 'Authorization: Bearer sk-TOOLDESC1'",
                "parameters": {"type": "object", "properties": {"url": {"type": "string"}}}}}]},
        "response": {"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "content": "Authorization: Bearer sk-OUTPUT123",
            "tool_calls": [{"id": "c1", "type": "function",
                "function": {"name": "fetch", "arguments": args}}]}}]},
        "api_base": "https://generativelanguage.googleapis.com/v1beta/models/gemini:generateContent?key=AIzaURLKEY10",
        "url": "https://user:PASSWORD11@proxy.example.com/v1",
        "headers": [["Authorization", "Bearer sk-LIST6"], ["Accept", "*/*"]],
        "har_headers": [{"name": "Authorization", "value": "Bearer sk-HAR8"}],
        "raw_request": "curl https://api.openai.com/v1/chat/completions -H 'Authorization: Bearer sk-CURL12' -d '{}'",
        "request_headers_json": "{\"Authorization\": \"Bearer sk-JSONSTR13\"}",
        "key": "sk-BAREKEY14",
        "upstream_note": {"scheme": "Bearer sk-SHAPE15"},
    });
    let loaded = load("cred.json", &pair.to_string());
    let t = ok(&loaded)[0];
    for (member, written) in [
        (
            "api_base",
            json!(
                "https://generativelanguage.googleapis.com/v1beta/models/gemini:generateContent?key=[redacted]"
            ),
        ),
        ("url", json!("https://[redacted]@proxy.example.com/v1")),
        (
            "headers",
            json!([["Authorization", "[redacted]"], ["Accept", "*/*"]]),
        ),
        (
            "har_headers",
            json!([{"name": "Authorization", "value": "[redacted]"}]),
        ),
        (
            "raw_request",
            json!(
                "curl https://api.openai.com/v1/chat/completions -H 'Authorization: [redacted]' -d '{}'"
            ),
        ),
        (
            "request_headers_json",
            json!("{\"Authorization\": \"[redacted]\"}"),
        ),
        ("key", json!("[redacted]")),
        ("upstream_note", json!({"scheme": "[redacted]"})),
    ] {
        assert_eq!(t.raw[member], written, "{member}");
    }
    let mut paths: Vec<&str> = t.raw["import"]["redacted_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "api_base",
            "har_headers[0].value",
            "headers[0][1]",
            "key",
            "raw_request",
            "request_headers_json",
            "upstream_note.scheme",
            "url",
        ]
    );
    // The judged data, as the capture holds it.
    assert_eq!(t.raw["output"], "Authorization: Bearer sk-OUTPUT123");
    assert_eq!(t.raw["tool_calls"][0]["function"]["arguments"], args);
    assert_eq!(
        t.raw["tools"][0]["function"]["description"],
        "-H 'Authorization: Bearer sk-TOOLDESC1'"
    );
}

/// Probe 6, bug 1: credential redaction ran over a carried `expect`, so
/// an expected argument named `page_token` had its schema replaced by
/// `"[redacted]"` and the model's right call was `schema_violation`.
/// `expect` and `labels` are toolgate's own members: carried as written.
#[test]
fn a_carried_expect_is_never_redacted() {
    let schema = json!({"type": "object", "properties": {"page_token": {"const": "abc"},
        "password": {"minLength": 8}}, "required": ["page_token"]});
    let text = format!(
        r#"{{"request": {{"tools": [{{"type": "function", "function": {{"name": "list_files",
          "parameters": {{"type": "object", "properties": {{"page_token": {{"type": "string"}}}}}}}}}}]}},
        "response": {{"choices": [{{"index": 0, "message": {{"tool_calls": [{{"id": "c1", "type": "function",
          "function": {{"name": "list_files", "arguments": "{{\"page_token\": \"abc\"}}"}}}}]}},
          "finish_reason": "tool_calls"}}]}},
        "expect": {{"calls": [{{"name": "list_files", "arguments": {schema}}}]}},
        "labels": {{"native": "pass"}}, "session": {{"refresh_token": "SECRET"}}}}"#
    );
    let loaded = load("page.json", &text);
    let t = ok(&loaded)[0];
    let expect = t.expect.as_ref().unwrap();
    assert_eq!(expect.calls[0].arguments.as_ref(), Some(&schema));
    assert_eq!(t.raw["labels"], json!({"native": "pass"}));
    // Credentials beside them are still redacted.
    assert_eq!(t.raw["session"]["refresh_token"], REDACTED);
    assert_eq!(
        t.raw["import"]["redacted_members"],
        json!(["session.refresh_token"])
    );
}

/// Probe 6, bug 2: a wrapper member named as one of the transcript's own
/// but of another type (a logger's numeric `id`, a list or a map of its
/// own `labels`, a `task` object, a string `expect`) made the whole record
/// unreadable, or stored labels of a mode named `env`. It is dropped and
/// named in `import.ignored_members`; the record is imported.
#[test]
fn a_wrapper_member_of_another_type_is_dropped_not_the_record() {
    let pair = |member: &str| {
        format!(
            r#"{{"request": {{"tools": [{{"type": "function", "function": {{"name": "get_weather"}}}}]}},
            "response": {{"choices": [{{"index": 0, "message": {{"tool_calls": [{{"id": "c1", "type": "function",
              "function": {{"name": "get_weather", "arguments": "{{}}"}}}}]}}, "finish_reason": "tool_calls"}}]}},
            {member}}}"#
        )
    };
    for (member, key) in [
        (r#""id": 12345"#, "id"),
        (r#""task": {"name": "x"}"#, "task"),
        (r#""labels": ["production", "latest"]"#, "labels"),
        (r#""labels": {"env": "prod"}"#, "labels"),
        (r#""labels": {"native": 1}"#, "labels"),
        (r#""expect": "a call""#, "expect"),
    ] {
        let loaded = load("w.json", &pair(member));
        let t = ok(&loaded)[0];
        assert_eq!(t.id, "w", "{member}");
        assert_eq!(t.task, None, "{member}");
        assert!(t.expect.is_none() && t.stored_labels.is_none(), "{member}");
        // The record's `id` is the file stem's, as without the member.
        let kept = if key == "id" { Some(&json!("w")) } else { None };
        assert_eq!(t.raw.get(key), kept, "{member}");
        assert_eq!(t.raw["import"]["ignored_members"], json!([key]), "{member}");
    }
    // Of the right type they are the transcript's, `null` as absent.
    let loaded = load(
        "w.json",
        &pair(
            r#""id": "p1", "task": "weather", "labels": {"native": "pass"}, "expect": null,
            "metadata": {"id": 7}"#,
        ),
    );
    let t = ok(&loaded)[0];
    assert_eq!((t.id.as_str(), t.task.as_deref()), ("p1", Some("weather")));
    assert_eq!(
        t.stored_labels.as_ref().unwrap().get("native").unwrap(),
        "pass"
    );
    assert!(t.raw["import"].get("ignored_members").is_none());
}

/// Probe 4, bug 4: a pair whose `request` was not a readable object
/// (`null`, JSON text as some loggers store it, a number) was read as a
/// request without tools — a known, empty allowlist that labels every call
/// `wrong_tool`. `null` is no request (tools unknown), JSON text is read
/// as the object it holds, anything else is a load error.
#[test]
fn a_request_that_is_not_an_object_is_never_an_empty_allowlist() {
    let chat = |request: &str| {
        format!(
            r#"{{"request": {request}, "response": {{"choices": [{{"message": {{"tool_calls": [{{"id": "c1", "type": "function",
            "function": {{"name": "get_weather", "arguments": "{{}}"}}}}]}}, "finish_reason": "tool_calls"}}]}}}}"#
        )
    };
    let anthropic = |request: &str| {
        format!(
            r#"{{"request": {request}, "response": {{"type": "message", "content": [{{"type": "tool_use", "id": "t1",
            "name": "get_weather", "input": {{}}}}], "stop_reason": "tool_use"}}}}"#
        )
    };
    let responses = |request: &str| {
        format!(
            r#"{{"request": {request}, "response": {{"object": "response", "status": "completed", "output": [
            {{"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{{}}"}}]}}}}"#
        )
    };
    for (name, text) in [
        ("c.json", chat("null")),
        ("a.json", anthropic("null")),
        ("r.json", responses("null")),
    ] {
        let loaded = load(name, &text);
        let t = ok(&loaded)[0];
        assert!(!t.tools_known, "{name}");
        assert!(t.raw.get("tools").is_none(), "{name}");
    }
    let tools =
        r#"{\"tools\": [{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"}}]}"#;
    let loaded = load("s.json", &chat(&format!("\"{tools}\"")));
    let t = ok(&loaded)[0];
    assert!(t.tools_known);
    assert_eq!(t.tools[0].name, "get_weather");
    let why = |name: &str, text: &str| load(name, text)[0].as_ref().unwrap_err().reason.clone();
    let not_object =
        "the `request` must be an object (or null when not captured): the request cannot be read";
    assert_eq!(why("c.json", &chat("5")), not_object);
    assert_eq!(why("a.json", &anthropic("[]")), not_object);
    assert_eq!(why("r.json", &responses("true")), not_object);
    assert_eq!(
        why("c.json", &chat(r#""[1]""#)),
        "the `request` is a string whose JSON is not an object: the request cannot be read"
    );
    let cut = why("c.json", &chat(r#""{\"tools\": ""#));
    assert!(
        cut.starts_with("the `request` is a string that is not a JSON object (not valid JSON: "),
        "{cut}"
    );
}

/// Probe 4, bug 4: a Responses request using a stored `prompt` has no
/// `tools` of its own, and a bare response has no request: the tools the
/// response echoes are the run's, read rather than `[]` or unknown.
#[test]
fn a_responses_answer_s_echoed_tools_stand_in_for_a_request_without_them() {
    let response = r#"{"object": "response", "status": "completed", "model": "o4-mini",
        "output": [{"type": "function_call", "status": "completed", "call_id": "c1", "name": "get_weather", "arguments": "{}"}],
        "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}, {"type": "web_search"}]}"#;
    let prompt = format!(
        r#"{{"request": {{"model": "o4-mini", "prompt": {{"id": "pmpt_abc"}}}}, "response": {response}}}"#
    );
    for (name, text) in [("p.json", prompt.as_str()), ("b.json", response)] {
        let loaded = load(name, text);
        let t = ok(&loaded)[0];
        assert!(t.tools_known, "{name}");
        let names: Vec<&str> = t.tools.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["get_weather"], "{name}");
        assert_eq!(t.raw["import"]["tools_from"], "response", "{name}");
        assert_eq!(
            t.raw["import"]["builtin_tools_skipped"],
            json!(["web_search"])
        );
    }
    // The request's own tools win over the echo; an empty echo is unknown.
    let own = format!(
        r#"{{"request": {{"tools": [{{"type": "function", "name": "mine"}}]}}, "response": {response}}}"#
    );
    let loaded = load("o.json", &own);
    let t = ok(&loaded)[0];
    assert_eq!(t.tools[0].name, "mine");
    assert!(t.raw["import"].get("tools_from").is_none());
    let empty = response.replace(r#""tools": ["#, r#""tools": [], "x": ["#);
    assert!(!ok(&load("e.json", &empty))[0].tools_known);
}

/// Probe 6, bug 6: a pair whose `response` is JSON text (as some loggers
/// store it, and the request beside it) was not detected as a pair, read
/// as toolgate's format and lost, while a string `request` was read. A
/// string `response` holding an object is read as that object, for every
/// provider; one holding anything else is a load error saying so.
#[test]
fn a_response_stored_as_json_text_is_read_as_the_object_it_holds() {
    let as_text = |v: Value| Value::String(v.to_string());
    let chat = json!({"choices": [{"index": 0, "message": {"tool_calls": [{"id": "c1", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]}, "finish_reason": "tool_calls"}]});
    let anthropic = json!({"type": "message", "content": [{"type": "tool_use", "id": "t1",
        "name": "get_weather", "input": {"city": "Paris"}}], "stop_reason": "tool_use"});
    let responses = json!({"object": "response", "status": "completed", "output": [{"type": "function_call",
        "call_id": "c1", "name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}]});
    let tools = json!({"tools": [{"type": "function", "function": {"name": "get_weather"}}]});
    for (response, kind) in [
        (chat, Kind::OpenaiChat),
        (anthropic, Kind::Anthropic),
        (responses, Kind::Responses),
    ] {
        let text =
            json!({"request": as_text(tools.clone()), "response": as_text(response)}).to_string();
        assert_eq!(detect(Path::new("r.json"), &text), Some(kind));
        let loaded = load("r.json", &text);
        let t = ok(&loaded)[0];
        assert_eq!(t.tool_calls.as_ref().unwrap().len(), 1, "{kind:?}");
        assert!(args(t, 0).contains("Paris"), "{kind:?}");
    }
    // Read as a chat pair (--from), a string that holds no object says so.
    let text = json!({"request": null, "response": "[1]"}).to_string();
    let loaded = load_kind(
        Path::new("s.json"),
        &text,
        Some(Kind::OpenaiChat),
        &Companions::default(),
    );
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "the `response` is a string whose JSON is not an object: the response cannot be read"
    );
}

/// Probe 6, bug 5: a Responses request with a stored `prompt` and
/// `tools: []` (as clients send it) hid the tools the response echoes: the
/// allowlist was empty and the model's call `wrong_tool`. A non-empty echo
/// wins over an empty declared list; with an empty echo too, `[]` stands.
#[test]
fn a_responses_echo_wins_over_an_empty_declared_tool_list() {
    let response = |tools: &str| {
        format!(
            r#"{{"object": "response", "status": "completed", "model": "gpt-5",
            "output": [{{"type": "function_call", "status": "completed", "call_id": "c1", "name": "get_weather", "arguments": "{{}}"}}],
            "tools": {tools}}}"#
        )
    };
    let echo = r#"[{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]"#;
    let text = format!(
        r#"{{"request": {{"prompt": {{"id": "pmpt_1"}}, "tools": []}}, "response": {}}}"#,
        response(echo)
    );
    let loaded = load("p.json", &text);
    let t = ok(&loaded)[0];
    let names: Vec<&str> = t.tools.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["get_weather"]);
    assert_eq!(t.raw["import"]["tools_from"], "response");
    let text = format!(
        r#"{{"request": {{"tools": []}}, "response": {}}}"#,
        response("[]")
    );
    let loaded = load("e.json", &text);
    let t = ok(&loaded)[0];
    assert!(t.tools_known && t.tools.is_empty());
    assert!(t.raw["import"].get("tools_from").is_none());
}

/// Probe 4, bug 3: Anthropic-defined client tools (`bash_20250124`,
/// `text_editor_*`, `computer_*`, `memory_*`) have no `input_schema` and
/// were left out of the allowlist as server tools, so the model's call of
/// `bash` was its `wrong_tool`. The client runs them: they are tools of
/// the request, with their schema; only server tools stay skipped.
#[test]
fn anthropic_defined_client_tools_are_in_the_allowlist() {
    let text = r#"{"request": {"tools": [
        {"type": "bash_20250124", "name": "bash"},
        {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
        {"type": "computer_20250124", "name": "computer", "display_width_px": 1024, "display_height_px": 768},
        {"type": "memory_20250818", "name": "memory"},
        {"name": "get_weather", "input_schema": {"type": "object"}},
        {"type": "web_search_20250305", "name": "web_search"},
        {"type": "code_execution_20250825", "name": "code_execution"}]},
      "response": {"type": "message", "content": [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls"}}],
        "stop_reason": "tool_use"}}"#;
    let loaded = load("a.json", text);
    let t = ok(&loaded)[0];
    let names: Vec<&str> = t.tools.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "bash",
            "str_replace_based_edit_tool",
            "computer",
            "memory",
            "get_weather"
        ]
    );
    assert_eq!(
        t.raw["tools"][0]["function"]["parameters"]["properties"]["command"]["type"],
        "string"
    );
    assert_eq!(
        t.raw["tools"][1]["function"]["parameters"],
        json!({"type": "object"})
    );
    assert_eq!(
        t.raw["import"]["anthropic_defined_tools"][0],
        json!({"name": "bash", "type": "bash_20250124"})
    );
    assert_eq!(
        t.raw["import"]["server_tools_skipped"],
        json!(["web_search", "code_execution"])
    );
}

/// Probe 4, bug 5: a tool call after preamble text imported as the
/// model's `no_call`. A server-side call is skipped only when a text
/// answer follows it; Anthropic's `pause_turn` holds no answer yet; and a
/// call of a built-in tool the client runs (computer use, shell, apply
/// patch) is never server-side: refused as a custom tool call is.
#[test]
fn a_call_after_a_preamble_is_never_the_model_s_no_call() {
    let why = |name: &str, text: &str| load(name, text)[0].as_ref().unwrap_err().reason.clone();
    let message = r#"{"type": "message", "content": [{"type": "output_text", "text": "I'll list the files."}]}"#;
    for kind in [
        "shell_call",
        "computer_call",
        "local_shell_call",
        "apply_patch_call",
    ] {
        let text = format!(
            r#"{{"object": "response", "status": "completed", "output": [{message},
            {{"type": "{kind}", "id": "x_1", "call_id": "call_1", "action": {{}}, "status": "completed"}}]}}"#
        );
        assert_eq!(
            why("r.json", &text),
            format!(
                "`output[1]` is a `{kind}` (`call_1`): a call of a built-in tool the client runs (not the provider), whose action is not a function tool's arguments object: the call cannot be judged, and the response is not imported rather than read as `no_call`"
            )
        );
    }
    let tail = ": the provider runs them, they are not calls of the request's function tools and cannot be judged, and the response is not imported rather than read as `no_call`";
    let searched = format!(
        r#"{{"object": "response", "status": "completed", "output": [{message},
        {{"type": "web_search_call", "id": "ws_1", "status": "completed"}}]}}"#
    );
    assert_eq!(
        why("r.json", &searched),
        format!("the response's only tool calls are server-side (web_search_call){tail}")
    );
    let anthropic = |blocks: &str, stop: &str| {
        format!(
            r#"{{"type": "message", "content": [{{"type": "text", "text": "Let me search."}},
            {{"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {{"query": "q"}}}}{blocks}],
            "stop_reason": "{stop}"}}"#
        )
    };
    assert_eq!(
        why("a.json", &anthropic("", "end_turn")),
        format!(
            "the response's only tool calls are server-side (server_tool_use \"web_search\"){tail}"
        )
    );
    assert_eq!(
        why("a.json", &anthropic("", "pause_turn")),
        "the message stopped with `pause_turn`: Anthropic paused the turn (its server tools were running) before the answer, which the capture does not hold; it is not imported rather than read as `no_call`"
    );
    // Text after the search is the answer.
    let answered = anthropic(
        r#", {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []}, {"type": "text", "text": " Sunny."}"#,
        "end_turn",
    );
    let loaded = load("a.json", &answered);
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "Let me search. Sunny.");
    assert_eq!(notes(t)[0].0, NoteKind::ItemsSkipped);
}

/// Found by the import probe: a stream that follows the event-stream format
/// was refused line by line ("not valid JSON … trailing characters") when a
/// server split one event's JSON over several `data:` lines (the format
/// joins them with `\n`) or ended its lines with a lone CR (allowed as
/// CRLF and LF are). Lines end at CRLF, LF or CR, and the `data:` lines of
/// one event are one payload; a capture without blank lines between its
/// events still reads one payload per line.
#[test]
fn sse_joins_an_event_s_data_lines_and_ends_lines_at_cr() {
    let errors = |loaded: &[Loaded]| -> Vec<String> {
        loaded
            .iter()
            .filter_map(|l| l.as_ref().err().map(|e| e.reason.clone()))
            .collect()
    };
    let opening = r#"{"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"role":"assistant"}}]}"#;
    let call = [
        "{\"object\":\"chat.completion.chunk\",",
        " \"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c1\",",
        " \"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]},",
        " \"finish_reason\":\"tool_calls\"}]}",
    ];
    let multiline = format!(
        "data: {opening}\n\n{}\n\ndata: [DONE]\n\n",
        call.map(|l| format!("data: {l}")).join("\n")
    );
    let check = |name: &str, text: &str| {
        let loaded = load(name, text);
        assert_eq!(errors(&loaded), Vec::<String>::new(), "{name}");
        let ts = ok(&loaded);
        assert_eq!(ts.len(), 1, "{name}");
        assert_eq!(
            ts[0].tool_calls.as_ref().unwrap()[0]["function"]["name"],
            "get_weather"
        );
        assert_eq!(args(ts[0], 0), "{\"city\": \"Paris\"}", "{name}");
        assert_eq!(ts[0].finish_reason.as_deref(), Some("tool_calls"), "{name}");
        assert!(ts[0].raw["import"].get("unterminated").is_none(), "{name}");
    };
    check("multi.sse", &multiline);
    check("cr.sse", &multiline.replace('\n', "\r"));
    check("crlf.sse", &multiline.replace('\n', "\r\n"));
    // A broken multi-line payload is still refused, at each line.
    let cut = format!("data: {opening}\n\ndata: {{\"choices\":\ndata: [\n\ndata: [DONE]\n");
    let errs = errors(&load("cut.sse", &cut));
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].starts_with("not valid JSON"), "{}", errs[0]);
}

/// Found by the import probe: a chat span whose completion is in span
/// events (the older `gen_ai.content.completion`) beside a span with
/// `gen_ai.output.messages` was skipped in silence — "1 transcript(s)",
/// the second model call never mentioned. Each model call that is not read
/// is an error naming the span and why; other spans (a tool execution) are
/// still not exchanges.
#[test]
fn an_otel_model_call_that_is_not_read_is_an_error_naming_the_span() {
    let text_part = r#"[{"type": "text", "content": "hi"}]"#;
    let chat = json!([{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]);
    let mut doc: Value = serde_json::from_str(&otel_doc(&[
        ("s1", otel_attrs(text_part, &[]), Value::Null),
        ("s2", chat.clone(), Value::Null),
        ("s3", chat.clone(), Value::Null),
        ("s4", chat, Value::Null),
        (
            "s5",
            json!([{"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}]),
            Value::Null,
        ),
    ]))
    .unwrap();
    let spans = doc
        .pointer_mut("/resourceSpans/0/scopeSpans/0/spans")
        .unwrap();
    spans[1]["events"] = json!([
        {"name": "gen_ai.content.prompt", "attributes": []},
        {"name": "gen_ai.content.completion", "attributes": [{"key": "gen_ai.completion",
            "value": {"stringValue": "[{\"role\": \"assistant\", \"content\": \"hi\"}]"}}]}
    ]);
    spans[2]["attributes"]
        .as_array_mut()
        .unwrap()
        .push(json!({"key": "toolgate.content.omitted", "value": {"stringValue": "too_large"}}));
    let loaded = load("o.json", &doc.to_string());
    assert_eq!(loaded.len(), 4, "{loaded:?}");
    assert_eq!(loaded[0].as_ref().unwrap().id, "o:s1");
    let reasons: Vec<&str> = loaded[1..]
        .iter()
        .map(|l| l.as_ref().unwrap_err().reason.as_str())
        .collect();
    assert_eq!(
        reasons,
        [
            "span `s2`: its completion is in span events (`gen_ai.content.completion`), a convention this importer does not read: nothing of this span is imported (export `gen_ai.output.messages` or `gen_ai.completion.N.*` attributes)",
            "span `s3`: a model call whose content was omitted (`toolgate.content.omitted` too_large): no output to import",
            "span `s4`: a model call that recorded no output messages (content capture is opt-in: `gen_ai.output.messages` or `gen_ai.completion.N.*`): no output to import",
        ]
    );
}

/// The older-convention attributes of one message with the calls
/// `(M, name, arguments)`, as OpenLLMetry records them.
fn old_otel_calls(calls: &[(usize, &str, Option<&str>)]) -> Vec<Value> {
    let attr = |k: String, v: &str| json!({"key": k, "value": {"stringValue": v}});
    let mut attrs = vec![
        attr("gen_ai.system".into(), "openai"),
        attr("gen_ai.request.model".into(), "gpt-4o"),
        attr("gen_ai.completion.0.role".into(), "assistant"),
        attr("gen_ai.completion.0.finish_reason".into(), "tool_calls"),
    ];
    for (m, name, arguments) in calls {
        attrs.push(attr(
            format!("gen_ai.completion.0.tool_calls.{m}.name"),
            name,
        ));
        if let Some(a) = arguments {
            attrs.push(attr(
                format!("gen_ai.completion.0.tool_calls.{m}.arguments"),
                a,
            ));
        }
    }
    attrs
}

/// Probe 44, bug 4: a span whose SDK hit its attribute limit
/// (`droppedAttributesCount` > 0) was read as if whole: a call whose
/// `arguments` was evicted became `{}` (`pass`/`execute`), a call evicted
/// entirely vanished. Such a span is refused naming the span and the
/// count; the document's other spans still import, and a span that is no
/// model call (a tool execution) is not refused for it.
#[test]
fn an_otel_span_that_dropped_attributes_is_refused_and_the_others_import() {
    let span = |id: &str, attrs: Vec<Value>, dropped: Value| json!({"spanId": id, "name": "openai.chat", "attributes": attrs, "droppedAttributesCount": dropped});
    let evicted_arguments = old_otel_calls(&[(0, "f", Some(r#"{"city":"A"}"#)), (1, "f", None)]);
    let evicted_call = old_otel_calls(&[(0, "f", Some(r#"{"city":"A"}"#))]);
    let tool_span = vec![
        json!({"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}}),
        json!({"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}}),
    ];
    // A model call whose content attributes were all evicted, its
    // operation name with them.
    let nothing_left =
        vec![json!({"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o"}})];
    let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        span("a1", evicted_arguments, json!(3)),
        span("a2", evicted_call.clone(), json!("3")),
        span("a3", evicted_call, json!(0)),
        span("t", tool_span, json!(5)),
        span("a4", nothing_left, json!(40)),
    ]}]}]});
    let loaded = load("o.json", &doc.to_string());
    let got: Vec<String> = loaded
        .iter()
        .map(|l| match l {
            Ok(t) => format!("ok {}", t.id),
            Err(e) => e.reason.clone(),
        })
        .collect();
    let refused = |id: &str, n: u32| {
        format!(
            "span `{id}`: the span dropped {n} attribute(s) (`droppedAttributesCount`, an SDK's attribute limit): any of its `gen_ai.*` attributes may be lost — a call's arguments, a whole call, a message — so its calls cannot be read whole: nothing of this span is imported (raise the limit, `OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT`)"
        )
    };
    assert_eq!(
        got,
        [
            refused("a1", 3),
            refused("a2", 3),
            "ok o:a3".to_string(),
            refused("a4", 40),
        ]
    );
}

/// Probe 44, bug 4: `gen_ai.completion.N.tool_calls.M.*` with calls 0 and
/// 2 but no 1 imported as two calls; a lost call is refused as a span
/// that dropped attributes is, the span named, its other messages too.
#[test]
fn an_otel_gap_in_the_call_indexes_is_refused() {
    let mut attrs = old_otel_calls(&[
        (0, "f", Some(r#"{"city":"A"}"#)),
        (2, "f", Some(r#"{"city":"C"}"#)),
    ]);
    attrs.push(json!({"key": "gen_ai.completion.1.content", "value": {"stringValue": "hi"}}));
    let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        {"spanId": "g", "name": "openai.chat", "attributes": attrs},
        {"spanId": "w", "name": "openai.chat",
         "attributes": old_otel_calls(&[(0, "f", Some("{}")), (1, "f", Some("{}"))])},
    ]}]}]});
    let loaded = load("o.json", &doc.to_string());
    assert_eq!(loaded.len(), 2);
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "span `g`: output message 0 has no tool call 1 (`gen_ai.completion.0.tool_calls.1.*`) but has call 2: a call's attributes were lost (an SDK's attribute limit?), so the span's calls cannot be read whole: nothing of this span is imported"
    );
    let t = loaded[1].as_ref().unwrap();
    assert_eq!(
        (t.id.as_str(), t.tool_calls.as_ref().unwrap().len()),
        ("o:w", 2)
    );
}

/// Probe (f1): a span carrying both conventions was read by the new one
/// alone, `gen_ai.completion.N.*`'s calls dropped without a word when they
/// differed. Now their calls must agree — count, names, arguments (JSON
/// text and the value it spells are the same) — or the span is refused,
/// named; the document's other spans still import.
#[test]
fn an_otel_span_whose_two_conventions_disagree_on_the_calls_is_refused() {
    let new = |parts: &str| {
        json!({"key": "gen_ai.output.messages", "value": {"stringValue":
            format!("[{{\"role\": \"assistant\", \"parts\": {parts}, \"finish_reason\": \"tool_call\"}}]")}})
    };
    let span = |id: &str, parts: &str, old: &[(usize, &str, Option<&str>)]| {
        let mut attrs = old_otel_calls(old);
        attrs.push(new(parts));
        json!({"spanId": id, "name": "openai.chat", "attributes": attrs})
    };
    let f_paris =
        r#"{"type": "tool_call", "id": "c1", "name": "f", "arguments": {"city": "Paris"}}"#;
    let g = r#"{"type": "tool_call", "id": "c2", "name": "g", "arguments": {}}"#;
    let doc = json!({"resourceSpans": [{"scopeSpans": [{"spans": [
        // The old convention holds a second call the new one lost.
        span("count", &format!("[{f_paris}]"), &[(0, "f", Some(r#"{"city": "Paris"}"#)), (1, "g", Some("{}"))]),
        span("name", &format!("[{f_paris}]"), &[(0, "h", Some(r#"{"city": "Paris"}"#))]),
        span("args", &format!("[{f_paris}]"), &[(0, "f", Some(r#"{"city": "Rome"}"#))]),
        // Agreeing: the same calls, arguments as text on one side.
        span("same", &format!("[{f_paris}, {g}]"), &[(0, "f", Some(r#"{"city":"Paris"}"#)), (1, "g", Some("{}"))]),
    ]}]}]});
    let loaded = load("o.json", &doc.to_string());
    assert_eq!(loaded.len(), 4);
    let reason = |i: usize| loaded[i].as_ref().unwrap_err().reason.clone();
    assert_eq!(
        reason(0),
        "span `count`: output message 0: `gen_ai.output.messages` and `gen_ai.completion.0.*` disagree on the calls (1 calls [\"f\"] against 2 [\"f\", \"g\"]): read by one convention, the other's calls would vanish, so nothing of this span is imported"
    );
    assert_eq!(
        reason(1),
        "span `name`: output message 0: `gen_ai.output.messages` and `gen_ai.completion.0.*` disagree on the calls (call 0 differs in its name ([\"f\"] against [\"h\"])): read by one convention, the other's calls would vanish, so nothing of this span is imported"
    );
    assert_eq!(
        reason(2),
        "span `args`: output message 0: `gen_ai.output.messages` and `gen_ai.completion.0.*` disagree on the calls (call 0 differs in its arguments ([\"f\"] against [\"f\"])): read by one convention, the other's calls would vanish, so nothing of this span is imported"
    );
    let t = loaded[3].as_ref().unwrap();
    assert_eq!(t.id, "o:same");
    assert_eq!(t.raw["import"]["convention"], "gen_ai.output.messages");
    assert_eq!(args(t, 0), r#"{"city":"Paris"}"#);
    assert_eq!(t.tool_calls.as_ref().unwrap()[1]["function"]["name"], "g");
}

/// Probe 44, bug 1: a non-streamed message's legacy `function_call` was
/// read only without `tool_calls`. The OpenAI SDK's `model_dump()` writes
/// `tool_calls: null` beside it, so the call was dropped (`no_call` where
/// the model's call was a `schema_violation`); beside native calls it was
/// dropped too, and an unlisted legacy call passed with them. A stream of
/// both read the legacy call into the native call at index 0. Now each
/// keeps it, after the native calls, as the proxy gates them.
#[test]
fn a_legacy_function_call_is_read_beside_tool_calls_streamed_or_not() {
    let pair = |tool_calls: &str| {
        format!(
            r#"{{"request": {{"tools": [{{"type": "function", "function": {{"name": "get_weather"}}}}]}},
               "response": {{"choices": [{{"index": 0, "finish_reason": "tool_calls", "message": {{"role": "assistant", "content": null,
                 "function_call": {{"name": "delete_everything", "arguments": "{{}}"}}, "tool_calls": {tool_calls}}}}}]}}}}"#
        )
    };
    let names = |t: &Transcript| -> Vec<String> {
        t.tool_calls
            .as_ref()
            .unwrap()
            .iter()
            .map(|c| c["function"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let model_dump = load("y3.json", &pair("null"));
    let t = ok(&model_dump)[0];
    assert_eq!(names(t), ["delete_everything"]);
    assert_eq!(args(t, 0), "{}");
    let native = r#"[{"id": "c", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"A\"}"}}]"#;
    let both = load("y2.json", &pair(native));
    let t = ok(&both)[0];
    assert_eq!(names(t), ["get_weather", "delete_everything"]);
    assert_eq!((args(t, 0), args(t, 1)), (r#"{"city":"A"}"#, "{}"));
    let stream = concat!(
        "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"function_call\":{\"name\":\"delete_everything\",\"arguments\":\"{}\"},\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\":\\\"A\\\"}\"}}]},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
        "data: [DONE]\n",
    );
    let streamed = load("y2.sse", stream);
    let s = ok(&streamed)[0];
    assert_eq!(names(s), ["get_weather", "delete_everything"]);
    assert_eq!((args(s, 0), args(s, 1)), (r#"{"city":"A"}"#, "{}"));
}

/// Probe 44, bug 2: a Batch output line (OpenAI's, or vLLM run-batch's)
/// with `n` > 1 and one choice ending in a provider error (`error`,
/// `abort`) refused the whole line, the good choice lost with it. Its
/// choices are read as a pair's: only the errored one is refused.
#[test]
fn one_errored_choice_of_a_batch_line_refuses_only_that_choice() {
    let mut companions = Companions::default();
    companions.batch.insert(
        "d".into(),
        json!({"n": 2, "tools": [{"type": "function", "function": {"name": "get_weather"}}]}),
    );
    let completion = |finish: &str| {
        format!(
            r#"{{"object": "chat.completion", "model": "gpt-4o", "choices": [
              {{"index": 0, "message": {{"role": "assistant", "content": null, "tool_calls": [{{"id": "call_D0", "type": "function", "function": {{"name": "get_weather", "arguments": "{{\"city\":\"D0\"}}"}}}}]}}, "finish_reason": "tool_calls"}},
              {{"index": 1, "message": {{"role": "assistant", "content": "partial"}}, "finish_reason": "{finish}"}}]}}"#
        )
    };
    let openai = format!(
        r#"{{"custom_id": "d", "response": {{"status_code": 200, "body": {}}}, "error": null}}"#,
        completion("error").replace('\n', " ")
    );
    let vllm = format!(
        r#"{{"custom_id": "d", "response": {}, "error": null}}"#,
        completion("abort").replace('\n', " ")
    );
    for (line, finish) in [(openai, "error"), (vllm, "abort")] {
        let path = Path::new("batch_output.jsonl");
        let loaded = load_kind(path, &line, detect(path, &line), &companions);
        assert_eq!(loaded.len(), 2, "{finish}");
        let t = loaded[0].as_ref().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((t.id.as_str(), t.sample), ("d#0", Some(0)), "{finish}");
        assert_eq!(args(t, 0), r#"{"city":"D0"}"#);
        assert_eq!(t.raw["import"]["custom_id"], "d");
        let e = loaded[1].as_ref().unwrap_err();
        assert_eq!(e.line, Some(1));
        assert!(
            e.reason
                .starts_with(&format!("`choices[1]` ended in a provider error, not an answer: `finish_reason` \"{finish}\"")),
            "{e}"
        );
    }
}

/// Probe 44: an audio answer (gpt-4o-audio: `content` null, the spoken
/// text in `message.audio.transcript`) was imported with `output: ""`,
/// the model's words lost without a word. The transcript is the output,
/// and a note says so; a message with text content keeps its text.
#[test]
fn an_audio_answer_s_transcript_is_the_output_with_a_note() {
    let pair = |content: &str| {
        format!(
            r#"{{"request": {{"tools": []}}, "response": {{"choices": [{{"index": 0, "finish_reason": "stop",
               "message": {{"role": "assistant", "content": {content},
                 "audio": {{"id": "audio_1", "expires_at": 1, "data": "UklGRg==", "transcript": "It is sunny."}}}}}}]}}}}"#
        )
    };
    let loaded = load("a.json", &pair("null"));
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "It is sunny.");
    assert_eq!(
        notes(t),
        [(
            NoteKind::AudioTranscript,
            "the answer was audio: `output` is its `message.audio.transcript`".to_string()
        )]
    );
    let loaded = load("a.json", &pair(r#""Text.""#));
    let t = ok(&loaded)[0];
    assert_eq!(t.output, "Text.");
    assert_eq!(notes(t), []);
}

/// Probe 44: LiteLLM's `StandardLoggingPayload` has no `request`: the
/// request's tools are in `model_parameters`, which was not read, so every
/// such transcript was judged with its tools unknown. They are the tools
/// (`import.tools_from`); a payload without them, or a document with a
/// `request` (even null), is read as before.
#[test]
fn litellm_s_model_parameters_give_the_tools_of_a_logged_exchange() {
    let payload = |extra: &str, params: &str| {
        format!(
            r#"{{"id": "litellm-1", "call_type": "acompletion", "model": "gpt-4o", {extra}
               "messages": [{{"role": "user", "content": "w"}}],
               "response": {{"object": "chat.completion", "model": "gpt-4o", "choices": [{{"index": 0, "finish_reason": "tool_calls",
                 "message": {{"role": "assistant", "content": null, "tool_calls": [{{"id": "c", "type": "function",
                   "function": {{"name": "get_weather", "arguments": "{{\"city\":\"X\"}}"}}}}]}}}}]}},
               "model_parameters": {params}}}"#
        )
    };
    let tools = r#"{"tools": [{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}],
        "tool_choice": {"type": "function", "function": {"name": "get_weather"}}, "max_tokens": 50}"#;
    let loaded = load("l.json", &payload("", tools));
    let t = ok(&loaded)[0];
    assert!(t.tools_known);
    assert_eq!(t.tools.len(), 1);
    assert_eq!(t.tools[0].name, "get_weather");
    assert_eq!(t.expect.as_ref().unwrap().calls[0].name, "get_weather");
    assert_eq!(t.raw["import"]["tools_from"], "model_parameters");
    assert_eq!(t.raw["import"]["request"]["max_tokens"], 50);
    for (extra, params) in [
        ("", r#"{"temperature": 0.2}"#),
        ("", r#"{"tools": null}"#),
        (r#""request": null,"#, tools),
    ] {
        let loaded = load("l.json", &payload(extra, params));
        let t = ok(&loaded)[0];
        assert!(!t.tools_known, "{extra} {params}");
        assert!(t.raw["import"].get("tools_from").is_none());
    }
}

/// Probe 44 (the content-filter class): a stop by the provider before the
/// model ended its answer — OpenAI's `content_filter`, Anthropic's
/// `refusal`, a Responses `incomplete` for any reason, Gemini's `SAFETY` in
/// a span — left a whole-looking last call that executed. One rule
/// ([`stopped_early`]) cuts that call in every importer, as `length` cuts a
/// parsed one: arguments `""` (`truncation`), what was received kept in
/// `import.truncated_input`; the finish reason is written as before, save
/// that an incomplete Responses object with function calls is no longer
/// derived `tool_calls`.
#[test]
fn a_stop_by_the_provider_cuts_the_last_call_in_every_importer() {
    let tool_calls = r#"[{"id": "c0", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}},
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"city\":\"X\"}"}}]"#;
    let completion = format!(
        r#"{{"id": "c", "object": "chat.completion", "model": "gpt-4o", "choices": [{{"index": 0,
        "message": {{"role": "assistant", "content": null, "tool_calls": {tool_calls}}},
        "finish_reason": "content_filter"}}]}}"#
    )
    .replace('\n', " ");
    let chat_stream = concat!(
        "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"city\\\":\\\"X\\\"}\"}}]}}]}\n\n",
        "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"content_filter\"}]}\n\n",
        "data: [DONE]\n\n",
    );
    let anthropic = r#"{"id": "m", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "tool_use", "id": "t", "name": "f", "input": {"city": "X"}}],
        "stop_reason": "refusal"}"#;
    let anthropic_stream = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"model\":\"claude\",\"content\":[]}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"f\",\"input\":{}}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"city\\\":\\\"X\\\"}\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"refusal\"}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    let responses = |reason: &str| {
        format!(
            r#"{{"id": "r", "object": "response", "status": "incomplete", "incomplete_details": {{"reason": "{reason}"}},
            "model": "gpt-5", "output": [{{"type": "reasoning", "summary": []}},
            {{"type": "function_call", "status": "completed", "call_id": "c1", "name": "f", "arguments": "{{\"city\":\"X\"}}"}}]}}"#
        )
    };
    let responses_stream = responses_sse(&[
        CREATED,
        r#"{"type":"response.output_item.done","output_index":0,"item":{"id":"fc","type":"function_call","status":"completed","arguments":"{\"city\":\"X\"}","call_id":"c1","name":"f"}}"#,
        r#"{"type":"response.incomplete","response":{"id":"resp_1","object":"response","status":"incomplete","incomplete_details":{"reason":"content_filter"},"model":"gpt-5-mini","output":[]}}"#,
    ]);
    let span = json!([{"key": "gen_ai.output.messages", "value": {"stringValue":
        r#"[{"role": "assistant", "parts": [{"type": "tool_call", "id": "t", "name": "f", "arguments": {"city": "X"}}], "finish_reason": "SAFETY"}]"#}}]);
    let cases = [
        ("chat.json", completion.clone(), "content_filter"),
        ("chat.sse", chat_stream.to_string(), "content_filter"),
        ("anthropic.json", anthropic.to_string(), "refusal"),
        ("anthropic.sse", anthropic_stream.to_string(), "refusal"),
        (
            "responses.json",
            responses("content_filter"),
            "content_filter",
        ),
        ("limit.json", responses("max_output_tokens"), "length"),
        ("responses.sse", responses_stream, "content_filter"),
        ("span.json", otel_doc(&[("s", span, Value::Null)]), "SAFETY"),
    ];
    for (name, text, finish) in &cases {
        let loaded = load(name, text);
        let t = ok(&loaded)[0];
        let last = t.tool_calls.as_ref().unwrap().len() - 1;
        assert_eq!(args(t, last), "", "{name}");
        let kept = t.raw["import"]["truncated_input"].as_str().unwrap();
        assert_eq!(kept.replace(' ', ""), r#"{"city":"X"}"#, "{name}");
        assert_eq!(t.finish_reason.as_deref(), Some(*finish), "{name}");
    }
    // Only the last call is cut: the one before it was whole.
    let loaded = load("chat.json", &completion);
    assert_eq!(args(ok(&loaded)[0], 0), r#"{"a": 1}"#);
    // A Batch output line (its body, or vLLM run-batch's `response`).
    let mut companions = Companions::default();
    companions.batch.insert("r1".into(), json!({"tools": []}));
    for line in [
        format!(
            r#"{{"custom_id": "r1", "response": {{"status_code": 200, "body": {completion}}}, "error": null}}"#
        ),
        format!(r#"{{"id": "v", "custom_id": "r1", "response": {completion}, "error": null}}"#),
    ] {
        let path = Path::new("batch_output.jsonl");
        let loaded = load_kind(path, &line, detect(path, &line), &companions);
        let t = ok(&loaded)[0];
        assert_eq!(args(t, 1), "", "{line}");
        assert_eq!(t.raw["import"]["truncated_input"], r#"{"city":"X"}"#);
    }
    // A call followed by text is whole, and a finish the model reached
    // cuts nothing; an incomplete Responses object whose output ends in a
    // message keeps its call, and derives its reason all the same.
    let then_text = anthropic.replace(
        r#"}}],"#,
        r#"}}, {"type": "text", "text": "I can't help with that."}],"#,
    );
    let answered = responses("content_filter").replace(
        r#""}]}"#,
        r#""}, {"type": "message", "content": [{"type": "output_text", "text": "ok"}]}]}"#,
    );
    for (name, text) in &[
        ("a.json", then_text),
        ("r.json", answered),
        ("c.json", completion.replace("content_filter", "tool_calls")),
    ] {
        let loaded = load(name, text);
        let t = ok(&loaded)[0];
        let last = t.tool_calls.as_ref().unwrap().len() - 1;
        assert_eq!(args(t, last), r#"{"city":"X"}"#, "{name}");
        assert!(t.raw["import"].get("truncated_input").is_none(), "{name}");
        if *name == "r.json" {
            assert_eq!(t.finish_reason.as_deref(), Some("content_filter"));
        }
    }
}

/// A call's arguments sent as a JSON object (Anthropic's `input`, an OTel
/// part's `arguments`, Ollama's object `arguments`) keep the literals a
/// float does not hold, as the loader keeps an object's exact text: read
/// back from floats, `123456789012345678901234567890` was written
/// `1.2345678901234568e+29` and passed where the same call as text is
/// `malformed`.
#[test]
fn object_arguments_keep_number_literals_a_float_does_not_hold() {
    let anthropic = r#"{"type": "message", "role": "assistant", "model": "claude",
      "content": [{"type": "tool_use", "id": "toolu_1", "name": "transfer",
        "input": {"account": 123456789012345678901234567890, "rate": 1.9999999999999999,
                  "tiny": 1e-400, "amount": 1.10, "n": 7}}],
      "stop_reason": "tool_use"}"#;
    let loaded = load("a.json", anthropic);
    let ts = ok(&loaded);
    assert_eq!(
        args(ts[0], 0),
        r#"{"account":123456789012345678901234567890,"rate":1.9999999999999999,"tiny":1e-400,"amount":1.1,"n":7}"#
    );
    // The same in an OTel part and in a chat completion's object arguments.
    let parts = r#"[{\"role\": \"assistant\", \"parts\": [{\"type\": \"tool_call\", \"id\": \"c\", \"name\": \"transfer\", \"arguments\": {\"account\": -123456789012345678901234567890}}], \"finish_reason\": \"tool_call\"}]"#;
    let otel = format!(
        r#"{{"resourceSpans": [{{"scopeSpans": [{{"spans": [{{"spanId": "s1", "name": "chat m",
          "attributes": [{{"key": "gen_ai.operation.name", "value": {{"stringValue": "chat"}}}},
            {{"key": "gen_ai.output.messages", "value": {{"stringValue": "{parts}"}}}}]}}]}}]}}]}}"#
    );
    let loaded = load("o.json", &otel);
    assert_eq!(
        args(ok(&loaded)[0], 0),
        r#"{"account":-123456789012345678901234567890}"#
    );
    let chat = r#"{"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
      "content": "", "tool_calls": [{"id": "c", "type": "function", "function": {"name": "transfer",
        "arguments": {"account": 123456789012345678901234567890}}}]}}]}"#;
    let loaded = load("c.json", chat);
    assert_eq!(
        args(ok(&loaded)[0], 0),
        r#"{"account":123456789012345678901234567890}"#
    );
}

/// A capture of a stack `import` does not read is refused naming what it
/// is, not with what toolgate's own format or a chat completion lacks
/// (`` missing `output` ``, `` `output` must be a string ``, `` no `choices` ``,
/// "not a JSON object"), which left a user guessing.
#[test]
fn a_capture_of_an_unread_format_is_named_in_its_error() {
    let gemini = r#"{"candidates": [{"content": {"parts": [{"functionCall": {"name": "f", "args": {}}}], "role": "model"}, "finishReason": "STOP"}]}"#;
    let cases = [
        ("g.json", gemini.to_string(), "a Gemini generateContent response"),
        ("gp.json", format!(r#"{{"request": {{"contents": []}}, "response": {gemini}}}"#), "the response is a Gemini generateContent response"),
        ("gs.json", format!("[{gemini}, {gemini}]"), "a JSON array of a Gemini generateContent response"),
        ("o.json", r#"{"model": "llama3.2", "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {}}}]}, "done": true}"#.to_string(), "an Ollama /api/chat response"),
        ("b.json", r#"{"output": {"message": {"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": "f", "input": {}}}]}}, "stopReason": "tool_use"}"#.to_string(), "a Bedrock Converse response"),
        ("h.har", r#"{"log": {"version": "1.2", "entries": []}}"#.to_string(), "a HAR capture"),
        ("ab.jsonl", r#"{"custom_id": "r1", "result": {"type": "succeeded", "message": {"type": "message", "content": []}}}"#.to_string() + "\n", "Batch output line `r1` is an Anthropic Message Batches result"),
    ];
    for (name, text, what) in cases {
        let loaded = load(name, &text);
        assert_eq!(loaded.len(), 1, "{name}");
        let reason = &loaded[0].as_ref().unwrap_err().reason;
        assert!(
            reason.starts_with(what) && reason.contains("not a format toolgate reads"),
            "{name}: {reason}"
        );
    }
}

/// A pair on a line of a JSONL whose first lines are flat transcripts is
/// read in toolgate's own form (`choices[0]`): where the chat importer
/// reads it otherwise it is refused, never read with a choice, a legacy
/// `function_call` or a provider's error dropped (the second choice's call
/// was lost, the answer a `no_call`).
#[test]
fn a_pair_the_toolgate_form_would_read_in_part_is_refused() {
    let flat = r#"{"id": "a", "output": "hi", "tools": []}"#;
    let head = [flat; 4].join("\n");
    let two = r#"{"id": "b", "request": {"model": "m", "tools": []}, "response": {"choices": [
        {"index": 0, "message": {"role": "assistant", "content": "no"}, "finish_reason": "stop"},
        {"index": 1, "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}}"#;
    let legacy = r#"{"id": "l", "request": {"model": "m", "tools": []}, "response": {"choices": [
        {"index": 0, "message": {"role": "assistant", "content": null, "function_call": {"name": "g", "arguments": "{}"}}, "finish_reason": "function_call"}]}}"#;
    let error = r#"{"id": "e", "request": {"model": "m"}, "response": {"error": {"message": "boom"},
        "choices": [{"index": 0, "message": {"role": "assistant", "content": ""}, "finish_reason": "stop"}]}}"#;
    let one = r#"{"id": "o", "request": {"model": "m", "tools": []}, "response": {"choices": [
        {"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}, "finish_reason": "tool_calls"}]}}"#;
    let cases = [
        (two, "the response holds 2 choices"),
        (
            legacy,
            "the answer holds 1 call(s) where `message.tool_calls` lists 0",
        ),
        (error, "the response is an error"),
    ];
    for (pair, why) in cases {
        let text = format!("{head}\n{}\n", pair.replace('\n', " "));
        let loaded = load("m.jsonl", &text);
        assert_eq!(loaded.len(), 5);
        let reason = &loaded[4].as_ref().unwrap_err().reason;
        assert!(reason.starts_with(why), "{reason}");
    }
    // A pair the form reads whole is read as before.
    let text = format!("{head}\n{}\n", one.replace('\n', " "));
    let loaded = load("m.jsonl", &text);
    let ts = ok(&loaded);
    assert_eq!((ts[4].id.as_str(), args(ts[4], 0)), ("o", "{}"));
}

/// Each line of a JSONL capture gets its own literals back: two lines'
/// integers beyond 64 bits are written as the same float.
#[test]
fn object_arguments_keep_their_own_lines_literals() {
    let line = |n: &str| {
        format!(
            r#"{{"type": "message", "role": "assistant", "model": "c", "content": [{{"type": "tool_use", "id": "t", "name": "f", "input": {{"a": {n}}}}}], "stop_reason": "tool_use"}}"#
        )
    };
    let text = format!(
        "{}\n{}\n",
        line("99999999999999999999999990"),
        line("99999999999999999999999991")
    );
    let loaded = load("a.jsonl", &text);
    let ts = ok(&loaded);
    assert_eq!(args(ts[0], 0), r#"{"a":99999999999999999999999990}"#);
    assert_eq!(args(ts[1], 0), r#"{"a":99999999999999999999999991}"#);
}

/// Probe s46, bug 1: a `tool_choice` of type `allowed_tools` (OpenAI,
/// 2025) narrows the allowlist to the tools it names, but it was kept only
/// as a request parameter: a call of a tool the request left out passed
/// (`pass`, `execute`) against the whole `tools` list. Chat Completions
/// nests the list (`allowed_tools.tools`), the Responses API does not;
/// a Responses object's echoed `tool_choice` narrows its echoed tools;
/// toolgate's own request/response form reads it the same way.
#[test]
fn allowed_tools_narrow_the_allowlist() {
    let chat_tools = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}},
        {"type": "function", "function": {"name": "delete_db", "parameters": {"type": "object"}}}]"#;
    let chat_choice = r#"{"type": "allowed_tools", "allowed_tools": {"mode": "required",
        "tools": [{"type": "function", "function": {"name": "get_weather"}}]}}"#;
    let chat = format!(
        r#"{{"request": {{"model": "gpt-5", "tools": {chat_tools}, "tool_choice": {chat_choice}}},
        "response": {{"choices": [{{"index": 0, "message": {{"role": "assistant", "content": null,
          "tool_calls": [{{"id": "c1", "type": "function", "function": {{"name": "delete_db", "arguments": "{{}}"}}}}]}},
          "finish_reason": "tool_calls"}}]}}}}"#
    );
    let resp_tools = r#"[{"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
        {"type": "function", "name": "delete_db", "parameters": {"type": "object"}}]"#;
    let resp_choice = r#"{"type": "allowed_tools", "mode": "auto",
        "tools": [{"type": "function", "name": "get_weather"}, {"type": "mcp", "server_label": "deepwiki"}]}"#;
    let output = r#"[{"type": "function_call", "status": "completed", "call_id": "c1", "name": "delete_db", "arguments": "{}"}]"#;
    let responses = format!(
        r#"{{"request": {{"tools": {resp_tools}, "tool_choice": {resp_choice}}},
        "response": {{"object": "response", "status": "completed", "output": {output}}}}}"#
    );
    // No request: the response echoes its tools and its tool choice.
    let echoed = format!(
        r#"{{"object": "response", "status": "completed", "output": {output},
        "tools": {resp_tools}, "tool_choice": {resp_choice}}}"#
    );
    for (name, text) in [
        ("c.json", chat.clone()),
        ("r.json", responses),
        ("e.json", echoed),
    ] {
        let loaded = load(name, &text);
        let t = ok(&loaded)[0];
        let names: Vec<&str> = t.tools.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["get_weather"], "{name}");
        assert_eq!(
            t.raw["import"]["tools_not_allowed"],
            json!(["delete_db"]),
            "{name}"
        );
    }
    // toolgate's own request/response form (a JSONL whose first line is a
    // flat transcript).
    let text = format!("{{\"output\": \"x\"}}\n{}\n", chat.replace('\n', " "));
    let path = Path::new("m.jsonl");
    let loaded = load_kind(path, &text, Some(Kind::Toolgate), &Companions::default());
    let t = ok(&loaded)[1];
    let names: Vec<&str> = t.tools.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["get_weather"]);
}

/// An `allowed_tools` choice whose list cannot be read is a load error
/// naming it, never the whole `tools` list.
#[test]
fn an_unreadable_allowed_tools_choice_is_refused() {
    for choice in [
        r#"{"type": "allowed_tools", "allowed_tools": {"mode": "auto"}}"#,
        r#"{"type": "allowed_tools", "mode": "auto", "tools": [{"type": "function"}]}"#,
    ] {
        let text = format!(
            r#"{{"request": {{"tools": [{{"type": "function", "function": {{"name": "f"}}}}], "tool_choice": {choice}}},
            "response": {{"choices": [{{"message": {{"content": "x"}}, "finish_reason": "stop"}}]}}}}"#
        );
        let loaded = load("u.json", &text);
        let reason = &loaded[0].as_ref().unwrap_err().reason;
        assert!(
            reason.starts_with("the request's `tool_choice` is `allowed_tools` ")
                && reason.ends_with("which tools the model was allowed to call cannot be read"),
            "{reason}"
        );
    }
}

/// Probe s46, bug 2: an Anthropic message without a `stop_reason` (null:
/// the API sends that only in a stream's `message_start`; a logged
/// snapshot of a stream cut off) had its last `tool_use` read as whole, and
/// an SDK snapshot's input parsed from partial JSON looks whole: it passed
/// and ran. That call is cut, as an unterminated stream's is; with a stop
/// reason it is read as before.
#[test]
fn an_anthropic_message_without_a_stop_reason_has_its_last_call_cut() {
    let message = |stop: &str| {
        format!(
            r#"{{"request": {{"tools": [{{"name": "run", "input_schema": {{"type": "object"}}}}]}},
            "response": {{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
              "content": [{{"type": "tool_use", "id": "t1", "name": "run", "input": {{"command": "rm -rf /tmp/x"}}}}]{stop}}}}}"#
        )
    };
    for stop in [r#", "stop_reason": null"#, ""] {
        let loaded = load("a.json", &message(stop));
        let t = ok(&loaded)[0];
        assert_eq!(args(t, 0), "", "{stop}");
        assert_eq!(
            t.raw["import"]["truncated_input"],
            r#"{"command":"rm -rf /tmp/x"}"#
        );
        assert_eq!(t.raw["import"]["stop_reason_missing"], true);
    }
    let loaded = load("a.json", &message(r#", "stop_reason": "tool_use""#));
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), r#"{"command":"rm -rf /tmp/x"}"#);
    assert!(t.raw["import"].get("stop_reason_missing").is_none());
}

/// Probe s46, bug 3: a LiteLLM logging payload of a failed call
/// (`status: "failure"`, `response` null) was detected as a request
/// companion: `label` printed nothing for it and exited 0, `import` called
/// it a companion. With `response: {}` it was "no `choices`". Both are
/// load errors saying the logged call failed; a null `response` without
/// a failure status says no answer was captured.
#[test]
fn a_logged_failure_is_said_as_one() {
    let payload = |status: &str, response: &str| {
        format!(
            r#"{{"id": "abc", "call_type": "acompletion", "status": "{status}", "model": "gpt-4o",
            "messages": [{{"role": "user", "content": "hi"}}], "response": {response},
            "model_parameters": {{"tools": [{{"type": "function", "function": {{"name": "f"}}}}]}},
            "error_str": "RateLimitError: 429 https://api.example.com/v1?key=AIzaSyA0000000000000000000000000000"}}"#
        )
    };
    for response in ["null", "{}"] {
        let text = payload("failure", response);
        assert_eq!(detect(Path::new("l.json"), &text), Some(Kind::OpenaiChat));
        let loaded = load("l.json", &text);
        let reason = &loaded[0].as_ref().unwrap_err().reason;
        assert_eq!(
            reason,
            "the logged call failed (`status`: \"failure\"): RateLimitError: 429 \
             https://api.example.com/v1?key=[redacted]: it holds no answer, and a failure never \
             becomes a transcript"
        );
    }
    let loaded = load("l.json", &payload("success", "null"));
    assert_eq!(
        loaded[0].as_ref().unwrap_err().reason,
        "the `response` is null: no answer was captured, and nothing is imported"
    );
}

/// Probe s46, bug 4: an audio answer whose `content` is written empty
/// (`""` or `[]`, not null) lost its transcript: `output` was `""`, a
/// spoken call a `no_call`. Empty content holds no text: the transcript is
/// the output, as with null.
#[test]
fn an_audio_answer_with_empty_content_keeps_its_transcript() {
    for content in [r#""""#, "[]"] {
        let text = format!(
            r#"{{"request": {{"tools": []}}, "response": {{"choices": [{{"index": 0, "finish_reason": "stop",
               "message": {{"role": "assistant", "content": {content},
                 "audio": {{"id": "audio_1", "expires_at": 1, "data": "UklGRg==", "transcript": "It is sunny."}}}}}}]}}}}"#
        );
        let loaded = load("a.json", &text);
        let t = ok(&loaded)[0];
        assert_eq!(t.output, "It is sunny.", "{content}");
        assert_eq!(notes(t)[0].0, NoteKind::AudioTranscript);
    }
}

/// Probe s47: a request's `parallel_tool_calls: false` was kept only as a
/// request parameter (`import.request`), so an answer of two calls was
/// decided `execute` by `label`/`import`, where the proxy rejected it at
/// the `single` gate. The importers carry it as the transcript's own
/// `parallel_tool_calls: false`, which the loader reads (`one_call`):
/// Chat Completions (pair, stream and Batch share the request reader),
/// the Responses API (the request's, else the response's echo), and
/// toolgate's own request/response form. `true`, `null` or no member sets
/// no limit and writes nothing; a pair document's own member never
/// replaces the request's.
#[test]
fn parallel_tool_calls_false_is_carried_into_the_transcript() {
    let tools = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]"#;
    let two = r#"[{"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
        {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]"#;
    let chat = |flag: &str| {
        format!(
            r#"{{"request": {{"model": "gpt-4o", "tools": {tools}{flag}}}, "parallel_tool_calls": true,
            "response": {{"choices": [{{"index": 0, "message": {{"role": "assistant", "content": null,
              "tool_calls": {two}}}, "finish_reason": "tool_calls"}}]}}}}"#
        )
    };
    let resp_output = r#"[{"type": "function_call", "status": "completed", "call_id": "a", "name": "get_weather", "arguments": "{}"},
        {"type": "function_call", "status": "completed", "call_id": "b", "name": "get_weather", "arguments": "{}"}]"#;
    let responses = |flag: &str| {
        format!(
            r#"{{"request": {{"tools": [{{"type": "function", "name": "get_weather", "parameters": {{"type": "object"}}}}]{flag}}},
            "response": {{"object": "response", "status": "completed", "output": {resp_output},
              "parallel_tool_calls": true}}}}"#
        )
    };
    let echoed = |flag: &str| {
        format!(r#"{{"object": "response", "status": "completed", "output": {resp_output}{flag}}}"#)
    };
    let cases = [
        ("c.json", chat(r#", "parallel_tool_calls": false"#), true),
        ("c.json", chat(r#", "parallel_tool_calls": true"#), false),
        ("c.json", chat(r#", "parallel_tool_calls": null"#), false),
        ("c.json", chat(""), false),
        (
            "r.json",
            responses(r#", "parallel_tool_calls": false"#),
            true,
        ),
        ("r.json", responses(""), false),
        ("e.json", echoed(r#", "parallel_tool_calls": false"#), true),
        ("e.json", echoed(r#", "parallel_tool_calls": true"#), false),
    ];
    for (name, text, one_call) in &cases {
        let loaded = load(name, text);
        let t = ok(&loaded)[0];
        assert_eq!(t.one_call, *one_call, "{name}: {text}");
        let member = t.raw.get("parallel_tool_calls");
        assert_eq!(
            member,
            one_call.then_some(&json!(false)),
            "{name}: only `false` is written: {text}"
        );
        // What `toolgate import` writes reads back the same.
        let written = serde_json::to_string(&t.raw).unwrap();
        let back = crate::load::parse_transcript(&written, Path::new("w.json"), None, "w").unwrap();
        assert_eq!(back.one_call, *one_call, "{name}: {written}");
    }
    // The pair document's own `parallel_tool_calls: true` (first case) is
    // not the request's: dropped and named.
    let loaded = load("c.json", &cases[0].1);
    let t = ok(&loaded)[0];
    assert_eq!(
        t.raw["import"]["ignored_members"],
        json!(["parallel_tool_calls"])
    );
    // toolgate's own request/response form reads the request's, as it
    // reads its tools (a JSONL whose first line is a flat transcript).
    let pair = chat(r#", "parallel_tool_calls": false"#)
        .replace('\n', " ")
        .replace(r#", "parallel_tool_calls": true"#, "");
    let text = format!("{{\"output\": \"x\"}}\n{pair}\n");
    let path = Path::new("m.jsonl");
    let loaded = load_kind(path, &text, Some(Kind::Toolgate), &Companions::default());
    let ts = ok(&loaded);
    assert!(!ts[0].one_call);
    assert!(ts[1].one_call);
}

/// A `parallel_tool_calls` that is not a boolean (or null) is a load error
/// naming it, as an unreadable `tool_choice` is: the proxy refuses such a
/// request (400 in enforce), and pydantic reads `"false"` or `0` as
/// `false` (vLLM then keeps one call), so reading it as no limit would
/// decide `execute` where the client asked for one call.
#[test]
fn an_unreadable_parallel_tool_calls_is_refused() {
    for value in [r#""false""#, "0", "[false]"] {
        let chat = format!(
            r#"{{"request": {{"tools": [], "parallel_tool_calls": {value}}},
            "response": {{"choices": [{{"message": {{"content": "x"}}, "finish_reason": "stop"}}]}}}}"#
        );
        let responses = format!(
            r#"{{"request": {{"parallel_tool_calls": {value}}},
            "response": {{"object": "response", "status": "completed", "output": []}}}}"#
        );
        for (name, text) in [("c.json", chat), ("r.json", responses)] {
            let loaded = load(name, &text);
            let reason = &loaded[0].as_ref().unwrap_err().reason;
            assert!(
                reason.starts_with(&format!(
                    "the request's `parallel_tool_calls` must be true or false, not {value}"
                )),
                "{name}: {reason}"
            );
        }
        // A transcript's own member, and its request's, likewise (the
        // request/response form is read by the chat importer's rule).
        for text in [
            format!(r#"{{"output": "x", "parallel_tool_calls": {value}}}"#),
            format!(
                r#"{{"request": {{"parallel_tool_calls": {value}}},
                "response": {{"choices": [{{"message": {{"content": "x"}}}}]}}}}"#
            ),
        ] {
            let err =
                crate::load::parse_transcript(&text, Path::new("t.json"), None, "t").unwrap_err();
            assert!(
                err.reason.contains(&format!(
                    "`parallel_tool_calls` must be true or false, not {value}"
                )),
                "{text}: {}",
                err.reason
            );
        }
    }
}

/// Probe s48: Anthropic's `tool_choice.disable_parallel_tool_use: true`
/// was not read, so a Messages answer of two `tool_use` blocks was decided
/// `execute` where the client asked for one call at most. It is the same
/// limit as `parallel_tool_calls: false` (the other way round), written as
/// the transcript's `parallel_tool_calls: false`: the JSON importer and the
/// stream importer (its request from `STEM.request.json`) alike; `false`,
/// `null`, no member or no `tool_choice` set no limit.
#[test]
fn anthropic_disable_parallel_tool_use_is_carried_into_the_transcript() {
    let (message, stream) = anthropic_two_calls();
    let request = |choice: &str| {
        format!(
            r#"{{"model": "claude-sonnet-4-5", "max_tokens": 1024,
            "tools": [{{"name": "get_weather", "input_schema": {{"type": "object"}}}}]{choice}}}"#
        )
    };
    let cases = [
        (
            r#", "tool_choice": {"type": "auto", "disable_parallel_tool_use": true}"#,
            true,
        ),
        (
            r#", "tool_choice": {"type": "any", "disable_parallel_tool_use": true}"#,
            true,
        ),
        (
            r#", "tool_choice": {"type": "auto", "disable_parallel_tool_use": false}"#,
            false,
        ),
        (
            r#", "tool_choice": {"type": "auto", "disable_parallel_tool_use": null}"#,
            false,
        ),
        (r#", "tool_choice": {"type": "auto"}"#, false),
        ("", false),
    ];
    for (choice, one_call) in cases {
        let req = request(choice);
        let pair = format!(r#"{{"request": {req}, "response": {message}}}"#);
        let loaded = load("a.json", &pair);
        let mut stream_companions = Companions::default();
        stream_companions.add(Path::new("s.request.json"), &req, Kind::OpenaiRequest);
        let streamed = load_kind(
            Path::new("s.sse"),
            &stream,
            detect(Path::new("s.sse"), &stream),
            &stream_companions,
        );
        for (what, loaded) in [("json", loaded), ("stream", streamed)] {
            let t = ok(&loaded)[0];
            assert_eq!(t.tool_calls.as_ref().unwrap().len(), 2, "{what} {choice}");
            assert_eq!(t.one_call, one_call, "{what} {choice}");
            assert_eq!(
                t.raw.get("parallel_tool_calls"),
                one_call.then_some(&json!(false)),
                "{what} {choice}: only the limit is written"
            );
            let written = serde_json::to_string(&t.raw).unwrap();
            let back =
                crate::load::parse_transcript(&written, Path::new("w.json"), None, "w").unwrap();
            assert_eq!(back.one_call, one_call, "{what}: {written}");
        }
    }
}

/// A `disable_parallel_tool_use` that is not a boolean (or null) is a load
/// error naming it, as an unreadable `parallel_tool_calls` is: read as no
/// limit, two calls would execute where the client may have asked for one.
#[test]
fn an_unreadable_disable_parallel_tool_use_is_refused() {
    let (message, stream) = anthropic_two_calls();
    for value in [r#""true""#, "1", "{}"] {
        let req = format!(
            r#"{{"tools": [{{"name": "get_weather", "input_schema": {{"type": "object"}}}}],
            "tool_choice": {{"type": "auto", "disable_parallel_tool_use": {value}}}}}"#
        );
        let pair = format!(r#"{{"request": {req}, "response": {message}}}"#);
        let mut companions = Companions::default();
        companions.add(Path::new("s.request.json"), &req, Kind::OpenaiRequest);
        let streamed = load_kind(
            Path::new("s.sse"),
            &stream,
            Some(Kind::AnthropicStream),
            &companions,
        );
        for (what, loaded) in [("json", load("a.json", &pair)), ("stream", streamed)] {
            let reason = &loaded[0].as_ref().unwrap_err().reason;
            assert!(
                reason.starts_with(&format!(
                    "the request's `tool_choice.disable_parallel_tool_use` must be true or false, not {value}"
                )),
                "{what}: {reason}"
            );
        }
    }
}

/// An Anthropic message of two `tool_use` blocks, as a JSON body and as
/// the stream that sends it.
fn anthropic_two_calls() -> (String, String) {
    let message = r#"{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
        "content": [{"type": "tool_use", "id": "toolu_a", "name": "get_weather", "input": {"location": "Paris"}},
                    {"type": "tool_use", "id": "toolu_b", "name": "get_weather", "input": {"location": "Rome"}}],
        "stop_reason": "tool_use", "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 40}}"#;
    let mut stream = String::from(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[],\"stop_reason\":null}}\n\n",
    );
    for (i, city) in ["Paris", "Rome"].iter().enumerate() {
        stream.push_str(&format!(
            "event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{i},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"toolu_{i}\",\"name\":\"get_weather\",\"input\":{{}}}}}}\n\n\
             event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{i},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{\\\"location\\\": \\\"{city}\\\"}}\"}}}}\n\n\
             event: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{i}}}\n\n"
        ));
    }
    stream.push_str(
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":40}}\n\n\
         event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
    );
    (message.to_string(), stream)
}

/// Probe s48: Anthropic's keep-alive `ping` began a stream: one before the
/// first `message_start` (or between two messages) was imported as an
/// empty, unterminated answer of its own, labeled `no_call`. A ping is part
/// of no message: the file holds the one message it sent.
#[test]
fn an_anthropic_ping_outside_a_message_is_not_a_stream() {
    let (_, stream) = anthropic_two_calls();
    let ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    for text in [
        format!("{ping}{stream}"),
        format!("{stream}{ping}"),
        stream.replacen(
            "event: content_block_start",
            &format!("{ping}event: content_block_start"),
            1,
        ),
    ] {
        let loaded = load("s.sse", &text);
        let ts = ok(&loaded);
        assert_eq!(ts.len(), 1, "{text}");
        assert_eq!(ts[0].id, "s");
        assert_eq!(ts[0].tool_calls.as_ref().unwrap().len(), 2);
        assert_eq!(ts[0].finish_reason.as_deref(), Some("tool_calls"));
    }
    // Between two messages: two transcripts, both whole.
    let text = format!("{stream}{ping}{stream}");
    let loaded = load("s.sse", &text);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 2);
    for t in ts {
        assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"), "{}", t.id);
        assert_eq!(t.raw["import"].get("unterminated"), None, "{}", t.id);
    }
}

/// Probe s48: block events an Anthropic stream cannot place were read into
/// the wrong block or reported as "`content[0]` has no `type`": a
/// `content_block_delta` of a block no `content_block_start` opened (the
/// lost start held the tool call's name and id), a block event without an
/// integer `index` (read as block 0, it replaced the first call), a block
/// started twice (the second start dropped what the first received). Each
/// is a load error saying which; the message is not imported.
#[test]
fn anthropic_block_events_that_cannot_be_placed_are_refused() {
    let (_, stream) = anthropic_two_calls();
    let unopened = stream.replacen(
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":7,",
        1,
    );
    let no_index = stream.replacen("\"index\":1,\"content_block\"", "\"content_block\"", 1);
    let twice = stream.replacen(
        "\"index\":1,\"content_block\"",
        "\"index\":0,\"content_block\"",
        1,
    );
    for (text, says) in [
        (
            unopened,
            "a `content_block_delta` of block 1, which no `content_block_start` opened",
        ),
        (
            no_index,
            "a `content_block_start` without an integer `index`",
        ),
        (twice, "content block 0 is started twice"),
    ] {
        let loaded = load("s.sse", &text);
        assert_eq!(loaded.len(), 1, "{text}");
        let e = loaded[0].as_ref().unwrap_err();
        assert!(e.reason.starts_with(says), "{e}");
        assert!(
            e.reason.ends_with(
                "the message is not imported (a lost, merged or grown block could have been a call)"
            ),
            "{e}"
        );
    }
    // A text delta whose start was lost is still text (no call is lost).
    let text = stream.replacen(
        "event: content_block_start",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":5,\"delta\":{\"type\":\"text_delta\",\"text\":\"ok\"}}\n\nevent: content_block_start",
        1,
    );
    let loaded = load("s.sse", &text);
    assert_eq!(ok(&loaded)[0].output, "ok");
}

/// The one load error of an Anthropic stream whose events cannot be placed.
fn anthropic_refusal(text: &str) -> String {
    let loaded = load("s.sse", text);
    assert_eq!(loaded.len(), 1, "{text}");
    let e = loaded[0].as_ref().unwrap_err();
    assert!(
        e.reason.ends_with(
            "; the message is not imported (a lost, merged or grown block could have been a call)"
        ),
        "{e}"
    );
    e.reason.clone()
}

/// Stop s49, bug 1: a `content_block_delta` after its block's
/// `content_block_stop` was appended to the closed block: a call's input
/// grew after it closed (`{"location": "Paris"}{"unit": "F"}`, read as
/// malformed and blamed on the model, or as another call). A delta of a stopped block cannot be
/// placed: a load error naming the event and the block.
#[test]
fn an_anthropic_delta_after_its_blocks_stop_is_refused() {
    let (_, stream) = anthropic_two_calls();
    let late_json = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"unit\\\": \\\"F\\\"}\"}}\n\n";
    let text = stream.replacen(
        "event: message_delta",
        &format!("{late_json}event: message_delta"),
        1,
    );
    assert_eq!(
        anthropic_refusal(&text),
        "a `content_block_delta` of block 0 after its `content_block_stop`: a closed block cannot grow; the message is not imported (a lost, merged or grown block could have been a call)"
    );
    // Between the block's stop and the next block's start, a text block's.
    let text_block = concat!(
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\"Done.\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
    );
    let late_text = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"text_delta\",\"text\":\" And more.\"}}\n\n";
    let whole = stream.replacen(
        "event: message_delta",
        &format!("{text_block}event: message_delta"),
        1,
    );
    let loaded = load("s.sse", &whole);
    assert_eq!(ok(&loaded)[0].output, "Done.");
    let text = stream.replacen(
        "event: message_delta",
        &format!("{text_block}{late_text}event: message_delta"),
        1,
    );
    assert!(
        anthropic_refusal(&text)
            .starts_with("a `content_block_delta` of block 2 after its `content_block_stop`"),
    );
}

/// Stop s49, bug 2 (decided, one rule with the chat stream's): a message
/// that reached `message_stop` without a `message_delta` never said why it
/// stopped. A chat stream that reached `[DONE]` without a `finish_reason`
/// ended: its calls are whole, a call without argument text `{}`, no
/// `finish_reason` written (DECISIONS, "A streamed call whose `arguments`
/// was null"; the proxy judges that choice whole too). `message_stop` is
/// the Anthropic stream's `[DONE]`: the same. Without `message_stop` both
/// are cut (`a_stream_cut_off_without_a_stop_reason_cuts_its_last_call`).
#[test]
fn a_stream_that_ended_without_a_stop_reason_reads_its_calls_whole() {
    let (_, stream) = anthropic_two_calls();
    let no_delta = stream.replacen(
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":40}}\n\n",
        "",
        1,
    );
    assert_ne!(no_delta, stream);
    let loaded = load("s.sse", &no_delta);
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), r#"{"location": "Paris"}"#);
    assert_eq!(args(t, 1), r#"{"location": "Rome"}"#);
    assert_eq!(t.finish_reason, None);
    assert_eq!(t.raw["import"].get("unterminated"), None);
    assert_eq!(t.raw["import"].get("stop_reason_missing"), None);
    assert_eq!(t.raw["import"].get("truncated_input"), None);
    // A call that received no input: the start event's `{}`, as a chat
    // call without argument text in a stream that reached `[DONE]`.
    let empty = no_delta.replacen(
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,",
        "event: ignored\ndata: {\"type\":\"ignored\",\"index\":1,",
        1,
    );
    assert_ne!(empty, no_delta);
    let loaded = load("s.sse", &empty);
    assert_eq!(args(ok(&loaded)[0], 1), "{}");
    let chat = concat!(
        "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"tool_calls\":[{\"index\":0,\"id\":\"c0\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\": 1}\"}},{\"index\":1,\"id\":\"c1\",\"function\":{\"name\":\"g\"}}]}}]}\n\n",
        "data: [DONE]\n\n",
    );
    let loaded = load("c.sse", chat);
    let t = ok(&loaded)[0];
    assert_eq!(args(t, 0), r#"{"a": 1}"#);
    assert_eq!(args(t, 1), "{}");
    assert_eq!(t.finish_reason, None);
    assert_eq!(t.raw["import"].get("unterminated"), None);
}

/// Stop s49: a `content_block_start` of an index already started — open,
/// or closed by its `content_block_stop` — is refused (probe s48's rule):
/// the second start would replace the first block's call.
#[test]
fn an_anthropic_block_started_again_is_refused_open_or_closed() {
    let (_, stream) = anthropic_two_calls();
    let restart = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_x\",\"name\":\"delete_file\",\"input\":{}}}\n\n";
    let open = stream.replacen(
        "event: content_block_delta",
        &format!("{restart}event: content_block_delta"),
        1,
    );
    let closed = stream.replacen(
        "event: message_delta",
        &format!("{restart}event: message_delta"),
        1,
    );
    for text in [open, closed] {
        assert_eq!(
            anthropic_refusal(&text),
            "content block 0 is started twice: the second start would replace what the first one received; the message is not imported (a lost, merged or grown block could have been a call)"
        );
    }
}

/// Stop s49: a second `message_start` begins another message (a file may
/// hold several); the one it interrupts never reached its `message_stop`:
/// it is `import.unterminated` and its last call cut (`""`, the input
/// received kept), as a stream the file ends inside. Nothing of one message
/// is read into the other.
#[test]
fn a_second_anthropic_message_start_begins_another_message() {
    let (_, stream) = anthropic_two_calls();
    let (head, _) = stream.split_once("event: message_delta").unwrap();
    let text = format!("{head}{stream}");
    let loaded = load("s.sse", &text);
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 2);
    assert_eq!(ts[0].id, "s:2");
    assert_eq!(args(ts[0], 0), r#"{"location": "Paris"}"#);
    assert_eq!(args(ts[0], 1), "");
    assert_eq!(
        ts[0].raw["import"]["truncated_input"],
        r#"{"location": "Rome"}"#
    );
    assert_eq!(ts[0].raw["import"]["unterminated"], true);
    assert_eq!(ts[0].finish_reason, None);
    assert_eq!(ts[1].tool_calls.as_ref().unwrap().len(), 2);
    assert_eq!(args(ts[1], 1), r#"{"location": "Rome"}"#);
    assert_eq!(ts[1].finish_reason.as_deref(), Some("tool_calls"));
    assert_eq!(ts[1].raw["import"].get("unterminated"), None);
}

/// Stop s49: an event of a message after its `message_stop` began a stream
/// of its own: a late `text_delta` or `message_delta` became an extra,
/// unterminated transcript, a late `content_block_start` a call of its
/// own. A block event or `message_delta` after `message_stop` (before the
/// next `message_start`) is refused, naming the event: the client's SDK
/// would have grown the finished message with it. A repeated
/// `message_stop` or a `ping` adds nothing; an error event after it
/// interrupts no message (the message stands, the error is said).
#[test]
fn anthropic_events_after_message_stop_are_refused() {
    let (_, stream) = anthropic_two_calls();
    for (kind, data) in [
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"x\": 1}"}}"#,
        ),
        (
            "content_block_delta",
            r#"{"type":"content_block_delta","index":9,"delta":{"type":"text_delta","text":"late"}}"#,
        ),
        (
            "content_block_start",
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"toolu_z","name":"f","input":{}}}"#,
        ),
        (
            "content_block_stop",
            r#"{"type":"content_block_stop","index":1}"#,
        ),
        (
            "message_delta",
            r#"{"type":"message_delta","delta":{"stop_reason":"max_tokens"}}"#,
        ),
    ] {
        let late = format!("event: {kind}\ndata: {data}\n\n");
        let text = format!("{stream}{late}");
        assert_eq!(
            anthropic_refusal(&text),
            format!(
                "a `{kind}` after `message_stop`: the message had ended, and what the event adds was never part of it; the message is not imported (a lost, merged or grown block could have been a call)"
            ),
            "{data}"
        );
        // The next message is read.
        let text = format!("{stream}{late}{stream}");
        let loaded = load("s.sse", &text);
        assert_eq!(loaded.len(), 2);
        assert!(loaded[0].is_err());
        assert_eq!(
            args(loaded[1].as_ref().unwrap(), 1),
            r#"{"location": "Rome"}"#
        );
    }
    let stop = "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";
    let ping = "event: ping\ndata: {\"type\": \"ping\"}\n\n";
    let loaded = load("s.sse", &format!("{stream}{stop}{ping}"));
    let ts = ok(&loaded);
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0].finish_reason.as_deref(), Some("tool_calls"));
    let error = "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    let loaded = load("s.sse", &format!("{stream}{error}"));
    assert_eq!(loaded.len(), 2);
    let (read, refused): (Vec<_>, Vec<_>) = loaded.iter().partition(|l| l.is_ok());
    assert_eq!(
        args(read[0].as_ref().unwrap(), 1),
        r#"{"location": "Rome"}"#
    );
    let e = refused[0].as_ref().unwrap_err();
    assert!(e.reason.contains("Overloaded"), "{e}");
    assert!(!e.reason.contains("is not imported"), "{e}");
}

/// Probe s48: a Responses stream's argument deltas for an output item no
/// `response.output_item.added`/`.done` sent (the event was lost), with a
/// final `output` that does not hold the call, were read as a call of `""`
/// (`wrong_tool`, blamed on the model). The call's name and id are unknown:
/// a load error saying so.
#[test]
fn responses_stream_arguments_of_an_item_never_sent_are_refused() {
    let ev = |t: &str, d: &str| format!("event: {t}\ndata: {d}\n\n");
    let text = [
        ev(
            "response.created",
            r#"{"type":"response.created","sequence_number":0,"response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5","output":[]}}"#,
        ),
        ev(
            "response.function_call_arguments.delta",
            r#"{"type":"response.function_call_arguments.delta","sequence_number":1,"item_id":"fc_9","output_index":0,"delta":"{\"city\":\"Paris\"}"}"#,
        ),
        ev(
            "response.completed",
            r#"{"type":"response.completed","sequence_number":2,"response":{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[]}}"#,
        ),
    ]
    .concat();
    let loaded = load("r.sse", &text);
    assert_eq!(loaded.len(), 1);
    let e = loaded[0].as_ref().unwrap_err();
    assert!(
        e.reason.starts_with(
            "a call's arguments were streamed for output item 0, which no `response.output_item.added` or `.done` sent"
        ),
        "{e}"
    );
    // With the added item, the same deltas are the call.
    let added = text.replacen(
        "event: response.function_call_arguments.delta",
        &format!(
            "{}event: response.function_call_arguments.delta",
            ev(
                "response.output_item.added",
                r#"{"type":"response.output_item.added","sequence_number":1,"output_index":0,"item":{"type":"function_call","id":"fc_9","call_id":"call_9","name":"get_weather","arguments":"","status":"in_progress"}}"#
            )
        ),
        1,
    );
    let loaded = load("r.sse", &added);
    let t = ok(&loaded)[0];
    assert_eq!(
        t.tool_calls.as_ref().unwrap()[0]["function"]["name"],
        "get_weather"
    );
    assert_eq!(args(t, 0), r#"{"city":"Paris"}"#);
}

/// Probe s48: a Responses stream whose `response.created` echoed
/// `parallel_tool_calls: false` and whose terminal event (trimmed by a
/// logger) left it out executed two calls: the terminal event's response
/// replaced the earlier one whole. The run's terms an earlier event echoed
/// stay unless the terminal event says otherwise.
#[test]
fn responses_stream_keeps_the_run_terms_an_earlier_event_echoed() {
    let ev = |t: &str, d: &str| format!("event: {t}\ndata: {d}\n\n");
    let fc = |i: u8, city: &str| {
        format!(
            r#"{{"type":"function_call","id":"fc_{i}","call_id":"call_{i}","name":"get_weather","arguments":"{{\"city\":\"{city}\"}}","status":"completed"}}"#
        )
    };
    let (a, b) = (fc(1, "Paris"), fc(2, "Rome"));
    let stream = |terminal_terms: &str| {
        [
            ev(
                "response.created",
                r#"{"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress","model":"gpt-5","output":[],"parallel_tool_calls":false}}"#,
            ),
            ev(
                "response.output_item.done",
                &format!(r#"{{"type":"response.output_item.done","output_index":0,"item":{a}}}"#),
            ),
            ev(
                "response.output_item.done",
                &format!(r#"{{"type":"response.output_item.done","output_index":1,"item":{b}}}"#),
            ),
            ev(
                "response.completed",
                &format!(
                    r#"{{"type":"response.completed","response":{{"id":"resp_1","object":"response","status":"completed","model":"gpt-5","output":[{a},{b}]{terminal_terms}}}}}"#
                ),
            ),
        ]
        .concat()
    };
    for (terms, one_call) in [
        ("", true),
        (r#","parallel_tool_calls":false"#, true),
        (r#","parallel_tool_calls":true"#, false),
    ] {
        let loaded = load("r.sse", &stream(terms));
        let t = ok(&loaded)[0];
        assert_eq!(t.tool_calls.as_ref().unwrap().len(), 2);
        assert_eq!(t.one_call, one_call, "{terms}");
    }
}

/// s50 audit: tool definitions recorded as an OTLP list attribute of
/// strings (`arrayValue` of each definition's JSON text, the one list type
/// most SDKs take) were read as a list of strings: every one dropped by the
/// loader, the span's tools known and empty, its calls blamed on tools it
/// declared. Each string is read as JSON; an element that is no
/// definition refuses the span, as definitions that are no list do.
#[test]
fn otel_tool_definitions_as_a_list_of_json_texts_are_read() {
    let call = r#"[{"type": "tool_call", "id": "t", "name": "f", "arguments": {"city": "X"}}]"#;
    let list = |values: Value| json!({"key": "gen_ai.tool.definitions", "value": {"arrayValue": {"values": values}}});
    let def = r#"{"type": "function", "name": "f", "parameters": {"type": "object"}}"#;
    let doc = otel_doc(&[(
        "s1",
        otel_attrs(call, &[list(json!([{"stringValue": def}]))]),
        json!({}),
    )]);
    let loaded = load("o.json", &doc);
    let t = ok(&loaded)[0];
    assert!(t.tools_known);
    assert_eq!(
        t.tools.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
        ["f"]
    );
    let doc = otel_doc(&[(
        "s1",
        otel_attrs(
            call,
            &[list(json!([{"stringValue": def}, {"intValue": 4}]))],
        ),
        json!({}),
    )]);
    assert_eq!(
        load("o.json", &doc)[0].as_ref().unwrap_err().reason,
        "span `s1`: `gen_ai.tool.definitions[1]` is not a tool definition (an object, or one as JSON text): the tools cannot be read"
    );
}

/// s50 audit: a stream whose lines end in a lone CR (the event-stream
/// format allows it) and that opens with a comment (`: keep-alive`) was
/// one line to detection, skipped as a comment: the file was read as JSON
/// (`not valid JSON`) and imported nothing. Its lines end where the
/// stream's do.
#[test]
fn a_cr_only_stream_opening_with_a_comment_is_detected() {
    let chunk = json!({"id": "c1", "object": "chat.completion.chunk", "model": "m",
        "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "stop"}]});
    let text = format!(": keep-alive\rdata: {chunk}\r\rdata: [DONE]\r\r");
    assert_eq!(detect(Path::new("s.sse"), &text), Some(Kind::OpenaiStream));
    let loaded = load("s.sse", &text);
    assert_eq!(ok(&loaded)[0].output, "hi");
}
