//! The hostile-input audit's probes (issue 9), end to end through
//! `toolgate parse --tools T -` and `toolgate label`: each asserts the
//! decision and label the fail-closed rules promise.
#![allow(clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use support::toolgate_stdin as toolgate;

/// `toolgate parse --tools tools.json -` with one tool `t` of schema
/// `params`, the output on stdin; the printed JSON and stderr.
fn parse(params: &Value, output: &str) -> (Value, String) {
    parse_tools(&json!([{"name": "t", "parameters": params}]), output)
}

fn parse_tools(tools: &Value, output: &str) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tools.json"), tools.to_string()).unwrap();
    let out = toolgate(
        dir.path(),
        &["parse", "--tools", "tools.json", "-"],
        Some(output),
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    (serde_json::from_slice(&out.stdout).unwrap(), stderr)
}

/// A `tag` call (the default profile's primary mode) to tool `t`.
fn tag_call(args: &str) -> String {
    format!("<tool name=\"t\">{args}</tool>")
}

#[test]
fn number_literals_that_round_never_execute() {
    let amount = json!({"type": "object",
        "properties": {"amount_minor": {"type": "integer", "minimum": 1}},
        "required": ["amount_minor"], "additionalProperties": false});
    let ratio = json!({"type": "object",
        "properties": {"x": {"type": "number", "minimum": 1}},
        "required": ["x"], "additionalProperties": false});
    let id = json!({"type": "object",
        "properties": {"id": {"type": "number"}},
        "required": ["id"], "additionalProperties": false});
    for (schema, args) in [
        (&amount, r#"{"amount_minor": 1.9999999999999999}"#),
        (&ratio, r#"{"x": 0.99999999999999999}"#),
        (&id, r#"{"id": 9007199254740993.0}"#),
        (&id, r#"{"id": 1e-400}"#),
    ] {
        let (v, _) = parse(schema, &tag_call(args));
        assert_eq!(v["decision"], "reject", "{args}: {v}");
        assert_eq!(v["gate"], "parse", "{args}: {v}");
        assert_eq!(v["label"], "malformed_json", "{args}: {v}");
        assert!(
            v["reason"]
                .as_str()
                .unwrap()
                .contains("cannot be passed on exactly"),
            "{args}: {v}"
        );
    }
    // The same numbers written exactly execute.
    let (v, _) = parse(&amount, &tag_call(r#"{"amount_minor": 2}"#));
    assert_eq!(v["decision"], "execute", "{v}");
    let (v, _) = parse(&id, &tag_call(r#"{"id": 9007199254740992.0}"#));
    assert_eq!(v["decision"], "execute", "{v}");
}

/// `toolgate label --format jsonl FILE` in `dir`: the one record.
fn label_record(dir: &Path, file: &str) -> Value {
    let out = toolgate(dir, &["label", "--format", "jsonl", file], None);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    let record = serde_json::from_str(lines.next().unwrap()).unwrap();
    assert_eq!(lines.next(), None);
    record
}

#[test]
fn native_object_arguments_go_through_the_json_reader() {
    let tools = json!([{"type": "function", "function": {"name": "pay", "parameters": {
        "type": "object",
        "properties": {"amount": {"type": "integer", "minimum": 1}, "to": {"type": "string"}},
        "required": ["amount", "to"], "additionalProperties": false}}}]);
    let dir = tempfile::tempdir().unwrap();
    for (name, args) in [
        ("dup", r#"{"amount": 500, "to": "alice", "to": "mallory"}"#),
        ("round", r#"{"amount": 0.99999999999999999, "to": "a"}"#),
        (
            "wide",
            r#"{"amount": 123456789012345678901234567890, "to": "a"}"#,
        ),
        ("ok", r#"{"amount": 5, "to": "a"}"#),
    ] {
        let text = format!(
            r#"{{"tools": {tools}, "output": "", "tool_calls": [{{"type": "function",
                "function": {{"name": "pay", "arguments": {args}}}}}]}}"#
        );
        fs::write(dir.path().join(format!("{name}.json")), text).unwrap();
        let r = label_record(dir.path(), &format!("{name}.json"));
        let want = if name == "ok" {
            "pass"
        } else {
            "malformed_json"
        };
        assert_eq!(r["labels"]["native"], want, "{name}: {r}");
        assert_eq!(r["lenient"]["native"], want, "{name}: {r}");
    }
}

#[test]
fn undeclared_key_check_fails_closed_where_it_cannot_follow_the_schema() {
    let mut all: Vec<Value> = (0..300).map(|_| json!({})).collect();
    all.push(json!({"properties": {"a": {"type": "string"}}}));
    let cases = [
        (
            json!({"type": "object",
                "$defs": {"x": {"type": "object", "additionalProperties": true}},
                "properties": {"p": {"$id": "https://example.com/p",
                    "$defs": {"x": {"type": "object", "properties": {"a": {"type": "string"}}}},
                    "$ref": "#/$defs/x"}}}),
            r#"{"p": {"a": "x", "evil": 1}}"#,
            "schema_violation",
        ),
        (
            json!({"type": "object",
                "$defs": {"n": {"$dynamicAnchor": "n", "type": "object", "properties": {"a": {"type": "string"}}}},
                "properties": {"p": {"$dynamicRef": "#n"}}}),
            r#"{"p": {"a": "x", "evil": 1}}"#,
            "hallucinated_param",
        ),
        (
            json!({"type": "object", "allOf": all}),
            r#"{"a": "x", "evil": 1}"#,
            "schema_violation",
        ),
        (
            json!({"type": "object", "patternProperties": {"^arg_\\d+$": {"type": "string"}}}),
            "{\"arg_\u{663}\": \"x\"}",
            "hallucinated_param",
        ),
    ];
    for (schema, args, label) in cases {
        let (v, _) = parse(&schema, &tag_call(args));
        assert_eq!(v["decision"], "reject", "{args}: {v}");
        assert_eq!(v["gate"], "schema", "{args}: {v}");
        assert_eq!(v["label"], label, "{args}: {v}");
    }
}

#[test]
fn format_is_asserted_and_a_repeated_tool_name_is_unusable() {
    let email = json!({"$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object", "properties": {"to": {"type": "string", "format": "email"}},
        "required": ["to"], "additionalProperties": false});
    let (v, _) = parse(&email, &tag_call(r#"{"to": "not an email"}"#));
    assert_eq!(v["decision"], "reject", "{v}");
    assert_eq!(v["gate"], "schema", "{v}");
    assert_eq!(v["label"], "schema_violation", "{v}");
    let (v, _) = parse(&email, &tag_call(r#"{"to": "a@example.com"}"#));
    assert_eq!(v["decision"], "execute", "{v}");

    // Two definitions of `t`: the first would allow `path`, the second
    // nothing. Neither wins: the tool is unusable, with a warning.
    let tools = json!([
        {"name": "t", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}},
        {"name": "t", "parameters": {"type": "object", "properties": {}, "additionalProperties": false}}
    ]);
    let (v, stderr) = parse_tools(&tools, &tag_call(r#"{"path": "/"}"#));
    assert_eq!(v["decision"], "reject", "{v}");
    assert_eq!(v["gate"], "schema", "{v}");
    assert!(
        v["reason"].as_str().unwrap().contains("defined 2 times"),
        "{v}"
    );
    assert!(
        stderr.contains("toolgate: tools: tools[1] repeats the name `t`: the tool is unusable"),
        "{stderr}"
    );
}

/// `{"$defs": {"d0": {"$ref": "#/$defs/d1"}, …}}` with `links` links.
fn ref_chain(links: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..links {
        defs.insert(
            format!("d{i}"),
            json!({"$ref": format!("#/$defs/d{}", i + 1)}),
        );
    }
    defs.insert(format!("d{links}"), json!({"type": "object"}));
    json!({"$defs": defs, "$ref": "#/$defs/d0"})
}

/// `d_i = {"allOf": [{"$ref": d_i+1}, {"$ref": d_i+1}]}`, `depth` deep.
fn ref_dag(depth: usize) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..depth {
        let next = format!("#/$defs/d{}", i + 1);
        defs.insert(
            format!("d{i}"),
            json!({"allOf": [{"$ref": next}, {"$ref": next}]}),
        );
    }
    defs.insert(format!("d{depth}"), json!({"type": "object"}));
    json!({"$defs": defs, "$ref": "#/$defs/d0"})
}

#[test]
fn a_12000_link_ref_chain_is_an_unusable_tool_not_an_abort() {
    let dir = tempfile::tempdir().unwrap();
    let good = json!({"tools": [{"name": "t", "parameters": {"type": "object"}}],
        "output": "<tool name=\"t\">{}</tool>"});
    let chain = json!({"tools": [{"name": "t", "parameters": ref_chain(12_000)}],
        "output": "<tool name=\"t\">{}</tool>"});
    assert!(chain.to_string().len() > 300_000);
    fs::write(dir.path().join("a_good.json"), good.to_string()).unwrap();
    fs::write(dir.path().join("b_chain.json"), chain.to_string()).unwrap();
    let out = toolgate(dir.path(), &["label", "--format", "jsonl", "."], None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let records: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "the whole batch is reported");
    assert_eq!(records[0]["labels"]["tag"], "pass");
    assert_eq!(records[1]["labels"]["tag"], "schema_violation");
    assert_eq!(records[1]["profile"]["gate"], "schema");
}

#[test]
fn an_exponential_allof_dag_is_refused_at_compile_time() {
    let started = std::time::Instant::now();
    let (v, _) = parse(&ref_dag(40), &tag_call("{}"));
    assert_eq!(v["decision"], "reject", "{v}");
    assert_eq!(v["gate"], "schema", "{v}");
    assert!(
        v["reason"]
            .as_str()
            .unwrap()
            .contains("more than 100000 subschemas"),
        "{v}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

/// Probe (stop 43): a `<think>` inside the first call's string argument
/// made everything after it reasoning, so a second call to a tool not in
/// the list went unjudged and the first executed alone; an orphan
/// `</think>` in the first call's argument did the same to the calls
/// before it. The marker is the argument's text: the whole output is
/// judged and rejected at `allowlist`.
#[test]
fn a_reasoning_marker_inside_an_argument_hides_no_call() {
    let tools = json!([
        {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
    ]);
    for (first, second) in [("get_weather", "rm_rf"), ("rm_rf", "get_weather")] {
        for marker in [
            "<think>",
            "</think>",
            "[THINK]",
            "<|channel|>analysis<|message|>",
        ] {
            let output = format!(
                "<tool name=\"{first}\">{{\"city\": \"{marker}\"}}</tool>\n<tool name=\"{second}\">{{\"city\": \"x\"}}</tool>"
            );
            let (v, _) = parse_tools(&tools, &output);
            assert_eq!(v["decision"], "reject", "{output}: {v}");
            assert_eq!(v["gate"], "allowlist", "{output}: {v}");
            assert_eq!(v["label"], "wrong_tool", "{output}: {v}");
        }
    }
}
