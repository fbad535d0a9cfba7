//! Issue 22 at the command line: `import` keeps `tools` (and every other
//! member) of toolgate-format transcripts, and `label` and `matrix` count
//! the transcripts judged with tools unknown (SPEC §4).
#![allow(clippy::unwrap_used)]

mod support;

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use support::{stderr, stdout, toolgate_stdin};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn toolgate(dir: &Path, args: &[&str]) -> std::process::Output {
    toolgate_stdin(dir, args, None)
}

/// Every JSON object of the toolgate files under `dir`, by (file stem, index).
fn objects(dir: &Path) -> Vec<Value> {
    let (files, errors) = toolgate_core::load::collect_files(&[dir.to_path_buf()]);
    assert!(errors.is_empty(), "{errors:?}");
    let mut out = Vec::new();
    for f in files {
        let text = fs::read_to_string(&f).unwrap();
        if f.extension().is_some_and(|e| e == "jsonl") {
            out.extend(
                text.lines()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| serde_json::from_str::<Value>(l).unwrap()),
            );
        } else {
            out.push(serde_json::from_str(&text).unwrap());
        }
    }
    out
}

/// `import transcripts/ --out X` kept `tools` in 4 of 308 files, and
/// relabeling X then reported 185 changes: the batch loader keeps `tools`
/// out of the raw object it wrote back.
#[test]
fn importing_the_bundled_corpus_keeps_tools_and_labels_do_not_change() {
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().to_str().unwrap();
    let run = toolgate(&root(), &["import", "transcripts", "--out", out]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));

    // Every member of every flat transcript is kept, `tools` included (the
    // `request`/`response` pairs are converted to the flat form, their
    // request's tools becoming `tools`).
    let before = objects(&root().join("transcripts"));
    let after = objects(out_dir.path());
    assert_eq!(before.len(), after.len());
    let flat: Vec<&Value> = before
        .iter()
        .filter(|v| v.get("output").is_some())
        .collect();
    assert!(flat.len() > 250, "{}", flat.len());
    for v in &flat {
        assert!(after.contains(v), "not kept as it was: {}", v["id"]);
    }
    for v in before.iter().filter(|v| v.get("output").is_none()) {
        let tools = &v["request"]["tools"];
        assert!(
            after
                .iter()
                .any(|a| a["tools"] == *tools && a["labels"] == v["labels"]),
            "{}",
            v["request"]
        );
    }
    let with_tools = |list: &[Value]| {
        list.iter()
            .filter(|v| v.get("tools").is_some() || v.get("request").is_some())
            .count()
    };
    assert_eq!(with_tools(&after), with_tools(&before));

    let check = toolgate(&root(), &["label", "--check", out]);
    assert_eq!(
        check.status.code(),
        Some(0),
        "{}{}",
        stdout(&check),
        stderr(&check)
    );
    assert!(
        stderr(&check).contains("0 transcript(s) with labels differing"),
        "{}",
        stderr(&check)
    );
}

const UNKNOWN: &str = r#"{"id": "u", "model": "qwen3-8b", "task": "w", "output": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"}"#;
const EMPTY: &str = r#"{"id": "e", "model": "qwen3-8b", "task": "w", "tools": [], "output": "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}</tool_call>"}"#;

fn corpus() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("t.jsonl"),
        format!("{UNKNOWN}\n{UNKNOWN}\n{EMPTY}\n"),
    )
    .unwrap();
    dir
}

#[test]
fn label_counts_the_transcripts_judged_with_tools_unknown() {
    let dir = corpus();
    let run = toolgate(dir.path(), &["label", "t.jsonl"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(
        stderr(&run).contains("2 transcript(s) judged with tools unknown"),
        "{}",
        stderr(&run)
    );
    let table = stdout(&run);
    assert!(table.contains("reject (allowlist)"), "{table}");

    let run = toolgate(dir.path(), &["label", "--format", "jsonl", "t.jsonl"]);
    let records: Vec<Value> = stdout(&run)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds = |r: &Value| -> Vec<String> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(records.len(), 3);
    for r in &records[..2] {
        assert_eq!(kinds(r), ["tools_unknown"], "{r}");
        assert_eq!(r["labels"]["hermes"], "pass", "{r}");
        assert_eq!(r["profile"]["decision"], "reject");
        assert_eq!(r["profile"]["gate"], "allowlist");
    }
    // `tools: []` is an empty allowlist, not unknown.
    assert!(kinds(&records[2]).is_empty(), "{}", records[2]);
    assert_eq!(records[2]["labels"]["hermes"], "wrong_tool");
}

#[test]
fn matrix_counts_the_transcripts_judged_with_tools_unknown() {
    let dir = corpus();
    let run = toolgate(dir.path(), &["matrix", "t.jsonl"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    assert!(stdout(&run).contains("tools_unknown:2"), "{}", stdout(&run));
    assert!(
        stderr(&run).contains("2 transcript(s) judged with tools unknown"),
        "{}",
        stderr(&run)
    );
    let run = toolgate(dir.path(), &["matrix", "--format", "json", "t.jsonl"]);
    let doc: Value = serde_json::from_str(&stdout(&run)).unwrap();
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1);
    assert_eq!(cells[0]["findings"]["tools_unknown"], 2, "{}", cells[0]);
    assert_eq!(cells[0]["n"], 3);
}

/// Issue 22: a third of real captures were judged `wrong_tool` because an
/// importer that found no request wrote `tools: []`.
#[test]
fn importing_bare_responses_writes_no_tools_and_blames_no_model() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("chat.json"),
        r#"{"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
          "content": null, "tool_calls": [{"id": "c1", "type": "function",
            "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]}}]}"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("message.json"),
        r#"{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
        "content": [{"type": "tool_use", "id": "tu1", "name": "get_weather", "input": {"city": "Paris"}}],
        "stop_reason": "tool_use"}"#,
    )
    .unwrap();
    let run = toolgate(
        dir.path(),
        &["import", "chat.json", "message.json", "--out", "out"],
    );
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    for name in ["chat", "message"] {
        let text = fs::read_to_string(dir.path().join(format!("out/{name}.jsonl"))).unwrap();
        let v: Value = serde_json::from_str(text.trim()).unwrap();
        assert!(v.get("tools").is_none(), "{name}: {v}");
    }
    let run = toolgate(dir.path(), &["label", "--format", "jsonl", "out"]);
    assert_eq!(run.status.code(), Some(0), "{}", stderr(&run));
    let records: Vec<Value> = stdout(&run)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2);
    for r in &records {
        assert_eq!(r["labels"]["native"], "pass", "{r}");
        assert_eq!(r["profile"]["gate"], "allowlist", "{r}");
        assert_eq!(r["findings"][0]["kind"], "tools_unknown", "{r}");
    }
}
