//! End-to-end tests of the `toolgate` binary on temporary directories.
//!
//! They lean on the simplest formats (`hermes`, the seed `json` fallback)
//! and the default profile, so that work on other extractors does not move
//! them.
#![allow(clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use support::{stderr, stdout, toolgate_stdin};

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
  "description": "Weather for a city",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                 "required": ["city"], "additionalProperties": false}}}]"#;

fn hermes_call(city: &str) -> String {
    format!(
        r#"<tool_call>{{"name": "get_weather", "arguments": {{"city": "{city}"}}}}</tool_call>"#
    )
}

/// A flat transcript object with the weather tool.
fn transcript(id: &str, model: &str, task: &str, output: &str) -> Value {
    json!({
        "id": id,
        "model": model,
        "task": task,
        "tools": serde_json::from_str::<Value>(TOOLS).unwrap(),
        "output": output,
        "expect": {"calls": [{"name": "get_weather"}]},
    })
}

fn toolgate(dir: &Path, args: &[&str]) -> Output {
    toolgate_stdin(dir, args, None)
}

fn jsonl(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

/// Every mode name, in engine order, as `toolgate formats` lists them.
fn engine_modes(dir: &Path) -> Vec<String> {
    let out = toolgate(dir, &["formats", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|m| m["mode"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn jsonl_record_has_the_spec_keys_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let t = transcript("w1", "qwen3-8b", "weather", &hermes_call("Antwerp"));
    fs::write(dir.path().join("w1.json"), t.to_string()).unwrap();

    let out = toolgate(dir.path(), &["label", "--format", "jsonl", "w1.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "no diagnostics for a clean batch");
    let records = jsonl(&out);
    assert_eq!(records.len(), 1);
    let r = &records[0];
    assert_eq!(
        keys(r),
        [
            "path",
            "id",
            "model",
            "task",
            "labels",
            "lenient",
            "profile",
            "stored",
            "findings",
            "schema_version"
        ]
    );
    // No native calls: no server findings.
    assert_eq!(r["findings"], json!([]));
    assert_eq!(r["path"], "w1.json");
    assert_eq!(r["id"], "w1");
    assert_eq!(r["model"], "qwen3-8b");
    assert_eq!(r["task"], "weather");
    assert_eq!(r["stored"], Value::Null);
    // One key per mode, in engine order; no `native` without `tool_calls`.
    let modes: Vec<String> = engine_modes(dir.path())
        .into_iter()
        .filter(|m| m != "native")
        .collect();
    assert_eq!(keys(&r["labels"]), modes);
    assert_eq!(keys(&r["lenient"]), modes);
    assert_eq!(r["labels"]["hermes"], "pass");
    assert_eq!(r["labels"]["tag"], "no_call");
    assert_eq!(r["lenient"]["hermes"], "pass");
    // auto: qwen3 models speak hermes (the family table); the source
    // comes after the SPEC §7 keys.
    assert_eq!(
        r["profile"].to_string(),
        json!({"name": "hermes", "parse_mode": "hermes", "fallback_used": false,
               "candidate_count": 1, "decision": "execute", "gate": null,
               "label": "pass",
               "calls": [{"name": "get_weather", "arguments": {"city": "Antwerp"}}],
               "source": "by name", "source_detail": "by name (qwen3)"})
        .to_string()
    );

    let out = toolgate(
        dir.path(),
        &[
            "label",
            "--format",
            "jsonl",
            "--profile",
            "default",
            "w1.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &jsonl(&out)[0];
    // The default profile (tag, then json, then bracket) finds nothing here.
    assert_eq!(
        r["profile"].to_string(),
        json!({"name": "default", "parse_mode": "none", "fallback_used": false,
               "candidate_count": 0, "decision": "no_call", "gate": null,
               "label": "no_call", "calls": [],
               "source": "given", "source_detail": "--profile"})
        .to_string()
    );
    let out = toolgate(
        dir.path(),
        &[
            "label",
            "--format",
            "jsonl",
            "--profile",
            "hermes",
            "w1.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &jsonl(&out)[0];
    assert_eq!(
        keys(&r["profile"]),
        [
            "name",
            "parse_mode",
            "fallback_used",
            "candidate_count",
            "decision",
            "gate",
            "label",
            "calls",
            "source",
            "source_detail"
        ]
    );
    assert_eq!(r["profile"]["name"], "hermes");
    assert_eq!(r["profile"]["parse_mode"], "hermes");
    assert_eq!(r["profile"]["decision"], "execute");
    assert_eq!(r["profile"]["label"], "pass");
    assert_eq!(
        r["profile"]["calls"],
        json!([{"name": "get_weather", "arguments": {"city": "Antwerp"}}])
    );
}

#[test]
fn native_mode_appears_only_with_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = transcript("n1", "m", "weather", "");
    t["tool_calls"] = json!([{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Gent\"}"}}]);
    fs::write(dir.path().join("n1.json"), t.to_string()).unwrap();
    let out = toolgate(dir.path(), &["label", "--format", "jsonl", "n1.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &jsonl(&out)[0];
    assert_eq!(r["labels"]["native"], "pass");
    assert_eq!(keys(&r["labels"]).last(), Some(&"native"));
}

#[test]
fn check_fails_then_write_then_check_passes_keeping_other_bytes() {
    let dir = tempfile::tempdir().unwrap();
    // Odd but meaningful formatting that a re-serializer would change.
    let prefix = format!(
        "{{\n  \"zeta\": 1.50,\n  \"id\": \"w2\",\n  \"tools\": {TOOLS},\n  \"output\": {},\n  \"expect\": {{\"calls\": [{{\"name\": \"get_weather\"}}]}},\n  \"labels\": ",
        serde_json::to_string(&hermes_call("Gent")).unwrap()
    );
    let original = format!("{prefix}{{\"hermes\": \"no_call\"}}\n}}\n");
    let path = dir.path().join("w2.json");
    fs::write(&path, &original).unwrap();

    let out = toolgate(dir.path(), &["label", "--check", "w2.json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    let rows: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["TRANSCRIPT", "ID", "MODE", "STORED", "NOW"],
            vec!["w2.json", "w2", "hermes", "no_call", "pass"],
            // Modes that now read a call but have no stored label: --write
            // would add them, so --check names them.
            vec!["w2.json", "w2", "llama3", "(absent)", "pass"],
            vec!["w2.json", "w2", "granite", "(absent)", "pass"],
        ]
    );
    assert!(stderr(&out).contains("1 transcript(s) with labels differing"));

    let out = toolgate(
        dir.path(),
        &["label", "--changed", "--format", "jsonl", "w2.json"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(jsonl(&out)[0]["stored"], json!({"hermes": "no_call"}));

    let out = toolgate(
        dir.path(),
        &["label", "--write", "--format", "jsonl", "w2.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = fs::read_to_string(&path).unwrap();
    assert!(written.starts_with(&prefix), "{written}");
    assert!(written.ends_with("\n}\n"), "{written}");
    let value: Value = serde_json::from_str(&written).unwrap();
    assert_eq!(value["labels"]["hermes"], "pass");
    // Only the labels a reviewer needs: modes that found something, and the
    // modes already stored; never the 30-odd modes that read nothing.
    assert_eq!(value["labels"].get("tag"), None);
    let stored = keys(&value["labels"]);
    assert!(
        stored.len() < engine_modes(dir.path()).len() / 2,
        "{stored:?}"
    );
    assert!(
        value["labels"]
            .as_object()
            .unwrap()
            .values()
            .all(|l| l != "no_call"),
        "{value}"
    );

    let out = toolgate(dir.path(), &["label", "--check", "w2.json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn write_groups_jsonl_lines_and_keeps_bad_lines() {
    let dir = tempfile::tempdir().unwrap();
    let a = transcript("a", "m", "t", &hermes_call("Gent"));
    let b = transcript("b", "m", "t", "no call here");
    let text = format!("{a}\nnot json\n{b}\n");
    let path = dir.path().join("batch.jsonl");
    fs::write(&path, &text).unwrap();
    let out = toolgate(dir.path(), &["label", "--write", "--format", "jsonl", "."]);
    assert_eq!(out.status.code(), Some(2), "a bad line is unreadable input");
    let written = fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[1], "not json");
    let a: Value = serde_json::from_str(lines[0]).unwrap();
    let b: Value = serde_json::from_str(lines[2]).unwrap();
    assert_eq!(a["labels"]["hermes"], "pass");
    // Nothing found in any mode: an empty map says "labeled, nothing to see".
    assert_eq!(b["labels"], json!({}));
}

#[test]
fn unreadable_file_exits_2_names_it_and_still_prints_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let good = transcript("good", "m", "t", &hermes_call("Gent"));
    fs::write(dir.path().join("a_good.json"), good.to_string()).unwrap();
    fs::write(dir.path().join("b_bad.json"), "{\"output\": ").unwrap();
    fs::write(dir.path().join("c_nooutput.json"), "{\"id\": \"x\"}").unwrap();
    fs::write(
        dir.path().join("d_latin1.json"),
        b"{\"output\": \"caf\xe9\"}",
    )
    .unwrap();
    let out = toolgate(dir.path(), &["label", "--format", "jsonl", "."]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    for name in ["b_bad.json", "c_nooutput.json", "d_latin1.json"] {
        assert!(err.contains(name), "{err}");
    }
    let records = jsonl(&out);
    assert_eq!(records.len(), 4);
    assert_eq!(records[0]["id"], "good");
    for r in &records[1..] {
        assert_eq!(keys(r), ["path", "error", "schema_version"]);
    }
    assert!(records[2]["error"].as_str().unwrap().contains("output"));

    // The table names them on stderr too, and still lists the good one.
    let out = toolgate(dir.path(), &["label", "."]);
    assert_eq!(out.status.code(), Some(2));
    let table = stdout(&out);
    assert_eq!(table.lines().count(), 2, "{table}");
    assert!(
        table.lines().nth(1).unwrap().starts_with("./a_good.json"),
        "{table}"
    );
    assert!(stderr(&out).contains("b_bad.json"));
    // `--format json` is one array of the same records.
    let out = toolgate(dir.path(), &["label", "--format", "json", "."]);
    assert_eq!(out.status.code(), Some(2));
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 4);
    assert_eq!(list[0]["id"], "good");
    assert_eq!(keys(&list[3]), ["path", "error", "schema_version"]);
}

#[test]
fn table_never_prints_raw_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let t = transcript(
        "evil\u{1b}[2J\u{202e}",
        "m\u{7}",
        "t\n2",
        &hermes_call("Gent"),
    );
    fs::write(dir.path().join("evil.json"), t.to_string()).unwrap();
    let out = toolgate(dir.path(), &["label", "evil.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("evil\\x1b[2J\\u{202e}"), "{text}");
    assert!(text.contains("t\\n2"), "{text}");
    assert!(
        !text
            .chars()
            .any(|c| c == '\u{1b}' || c == '\u{7}' || c == '\u{202e}')
    );
    // JSON output escapes them too, and still means the same.
    let out = toolgate(dir.path(), &["label", "--format", "json", "evil.json"]);
    let text = stdout(&out);
    assert!(!text.chars().any(|c| c == '\u{1b}' || c == '\u{202e}'));
    let list: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(list[0]["id"], "evil\u{1b}[2J\u{202e}");
}

#[test]
fn parse_executes_a_valid_hermes_call_from_stdin() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tools.json"), TOOLS).unwrap();
    let out = toolgate_stdin(
        dir.path(),
        &["parse", "--profile", "hermes", "--tools", "tools.json", "-"],
        Some(&hermes_call("Antwerp")),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        keys(&v),
        [
            "decision",
            "gate",
            "reason",
            "reemit",
            "calls",
            "label",
            "telemetry",
            "schema_version"
        ]
    );
    assert_eq!(v["decision"], "execute");
    assert_eq!(v["gate"], Value::Null);
    assert_eq!(
        v["calls"],
        json!([{"name": "get_weather", "arguments": {"city": "Antwerp"}}])
    );
    assert_eq!(v["label"], "pass");
    assert_eq!(v["telemetry"]["decision"], "execute");
    assert_eq!(v["telemetry"]["schema_validation"], "pass");
    assert_eq!(v["telemetry"]["candidate_count"], 1);
}

#[test]
fn parse_rejects_at_the_allowlist_and_intent_gates() {
    let dir = tempfile::tempdir().unwrap();
    // A transcript object works as a tools file too.
    let t = transcript("x", "m", "t", "");
    fs::write(dir.path().join("t.json"), t.to_string()).unwrap();
    let out = toolgate_stdin(
        dir.path(),
        &["parse", "--profile", "hermes", "--tools", "t.json"],
        Some(r#"<tool_call>{"name": "delete_everything", "arguments": {}}</tool_call>"#),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "a rejection is data: {}",
        stderr(&out)
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["decision"], "reject");
    assert_eq!(v["gate"], "allowlist");
    assert!(v["reason"].as_str().unwrap().contains("delete_everything"));
    assert_eq!(v["calls"], json!([]));
    assert_eq!(v["label"], "wrong_tool");

    // The default profile's json fallback needs explicit tool intent.
    fs::write(
        dir.path().join("out.txt"),
        r#"{"name": "get_weather", "arguments": {"city": "Gent"}}"#,
    )
    .unwrap();
    let out = toolgate(dir.path(), &["parse", "--tools", "t.json", "out.txt"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["decision"], "reject");
    assert_eq!(v["gate"], "intent");
    assert_eq!(v["label"], "pass");
    assert_eq!(v["telemetry"]["fallback_used"], true);
    assert_eq!(v["reemit"], Value::Null);

    // With intent, two fallback calls are rejected with a re-emit request.
    let out = toolgate_stdin(
        dir.path(),
        &["parse", "--tools", "t.json", "-"],
        Some("need_tool: yes\n[get_weather(city=\"Gent\"), get_weather(city=\"Antwerp\")]"),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["decision"], "reject");
    assert_eq!(v["gate"], "single");
    assert_eq!(v["telemetry"]["candidate_count"], 2);
    assert!(v["reemit"].as_str().unwrap().contains("tag"), "{v}");
}

#[test]
fn parse_of_an_unreadable_input_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolgate(dir.path(), &["parse", "missing.txt"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("missing.txt"));
    fs::write(dir.path().join("tools.json"), "{\"no\": 1}").unwrap();
    let out = toolgate_stdin(dir.path(), &["parse", "--tools", "tools.json"], Some("hi"));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("tools.json"));
}

/// Regression (s48-files): a file saved with a UTF-8 BOM (Notepad,
/// PowerShell) gave `parse` an output starting with U+FEFF, so its first
/// line was not the model's: `need_tool: yes` there went unseen and a
/// fallback call was rejected at `intent`, where the same text without the
/// BOM executes; and a tools file with a BOM was refused (`expected value
/// at line 1 column 1`). A BOM belongs to the file, as in a transcript
/// file: `parse FILE`, `parse -` and `parse --stream` all leave it out. A
/// UTF-16 input or tools file is named as such.
#[test]
fn parse_leaves_a_files_bom_out_and_names_utf16() {
    let dir = tempfile::tempdir().unwrap();
    let text = "need_tool: yes\n[get_weather(city=\"Antwerp\")]";
    fs::write(dir.path().join("out.txt"), format!("\u{feff}{text}")).unwrap();
    fs::write(dir.path().join("tools.json"), format!("\u{feff}{TOOLS}")).unwrap();
    let decision = |out: &Output| -> (String, String) {
        assert_eq!(out.status.code(), Some(0), "{}", stderr(out));
        // `parse` prints one document; `--stream` its `end` event last.
        let text = stdout(out);
        let v: Value = serde_json::from_str(&text)
            .or_else(|_| serde_json::from_str(text.trim().lines().last().unwrap()))
            .unwrap();
        (
            v["decision"].as_str().unwrap().to_string(),
            v["calls"].to_string(),
        )
    };
    let want = (
        "execute".to_string(),
        r#"[{"name":"get_weather","arguments":{"city":"Antwerp"}}]"#.to_string(),
    );
    let args = ["parse", "--profile", "default", "--tools", "tools.json"];
    let file = toolgate(dir.path(), &[&args[..], &["out.txt"]].concat());
    assert_eq!(decision(&file), want);
    let piped = toolgate_stdin(
        dir.path(),
        &[&args[..], &["-"]].concat(),
        Some(&format!("\u{feff}{text}")),
    );
    assert_eq!(decision(&piped), want);
    let streamed = toolgate(dir.path(), &[&args[..], &["--stream", "out.txt"]].concat());
    assert_eq!(decision(&streamed), want);
    // UTF-16 (PowerShell's `>`): named, for the input and the tools file.
    let utf16: Vec<u8> = "\u{feff}hi"
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    fs::write(dir.path().join("u16.txt"), &utf16).unwrap();
    for args in [
        &["parse", "u16.txt"][..],
        &["parse", "--tools", "u16.txt", "out.txt"],
    ] {
        let out = toolgate(dir.path(), args);
        assert_eq!(out.status.code(), Some(2));
        assert!(
            stderr(&out).contains("u16.txt: UTF-16LE text (byte-order mark FF FE), not UTF-8"),
            "{}",
            stderr(&out)
        );
    }
}

/// Regression (s48-files): a JSONL file of UTF-16 gave one error per line
/// (`not valid UTF-8` on line 1, `expected value` on the others), so did
/// a pretty-printed one, and a directory's `.jsonl.gz` was passed over in
/// silence. Each is one error naming what the file is, exit 2, and the
/// batch goes on.
#[test]
fn label_names_a_utf16_or_compressed_file_once() {
    let dir = tempfile::tempdir().unwrap();
    let line = transcript("a", "m", "t", &hermes_call("Paris")).to_string();
    let text = format!("{line}\r\n{line}\r\n{line}\r\n");
    let utf16: Vec<u8> = format!("\u{feff}{text}")
        .encode_utf16()
        .flat_map(u16::to_le_bytes)
        .collect();
    fs::create_dir(dir.path().join("logs")).unwrap();
    fs::write(dir.path().join("logs/ps.jsonl"), &utf16).unwrap();
    fs::write(dir.path().join("logs/old.jsonl.gz"), [0x1f, 0x8b, 8, 0]).unwrap();
    fs::write(dir.path().join("logs/ok.jsonl"), &text).unwrap();
    let pretty = serde_json::to_string_pretty(&transcript("p", "m", "t", "x")).unwrap();
    fs::write(dir.path().join("logs/pretty.jsonl"), pretty).unwrap();
    let out = toolgate(dir.path(), &["label", "--format", "jsonl", "logs"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let records = jsonl(&out);
    let errors: Vec<(&str, &str)> = records
        .iter()
        .filter_map(|r| Some((r["path"].as_str()?, r.get("error")?.as_str()?)))
        .collect();
    assert_eq!(
        errors,
        vec![
            (
                "logs/old.jsonl.gz",
                "gzip-compressed: not read (decompress it first, e.g. `gunzip -k`)"
            ),
            (
                "logs/pretty.jsonl",
                "pretty-printed JSON, not JSON lines (its first line is only `{` or `[`): not \
                 read; a `.jsonl` file holds one transcript per line (e.g. `jq -c . FILE`), a \
                 `.json` file one transcript"
            ),
            (
                "logs/ps.jsonl",
                "line 1: UTF-16LE text (byte-order mark FF FE), not UTF-8: not read (toolgate \
                 reads UTF-8; convert it first, e.g. `iconv -f UTF-16LE -t UTF-8`; PowerShell's \
                 `>` writes UTF-16)"
            ),
        ]
    );
    assert_eq!(
        records.iter().filter(|r| r.get("error").is_none()).count(),
        3
    );
}

#[test]
fn formats_lists_the_seed_modes_with_examples() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolgate(dir.path(), &["formats"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    for mode in ["tag", "json", "bracket", "hermes"] {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(mode)),
            "{mode} missing:\n{text}"
        );
    }
    assert!(text.contains("example: <tool_call>"), "{text}");
    // The format table's row: engine, closers, the stop token and its stack.
    assert!(
        text.contains("engine: json_block  payload: json_call  closers: </tool_call>"),
        "{text}"
    );
    assert!(
        text.contains("stop token: <|call|> may be missing (stripped by vLLM"),
        "{text}"
    );
    let out = toolgate(dir.path(), &["formats", "--format", "json"]);
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let atem = list
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["mode"] == "atem")
        .unwrap();
    assert_eq!(atem["engine"], "tagged_parameters");
    assert_eq!(atem["closers"][2], "</atem:function_calls>");
    let modes = engine_modes(dir.path());
    assert_eq!(&modes[..3], ["tag", "json", "bracket"]);
}

#[test]
fn profiles_lists_the_builtins() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolgate(dir.path(), &["profiles"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["default", "tag", "json,", "bracket"]),
        "{text}"
    );
    assert!(text.lines().any(|l| l.starts_with("hermes ")), "{text}");
}

#[test]
fn unknown_profile_exits_2_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("t.json"),
        transcript("t", "m", "t", "hi").to_string(),
    )
    .unwrap();
    let out = toolgate(
        dir.path(),
        &["label", "--profile", "no-such-profile", "t.json"],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("unknown profile `no-such-profile`"), "{err}");
    assert!(err.contains("hermes"), "lists the built-ins: {err}");
    assert_eq!(stdout(&out), "");
}

/// `--profile auto` is what its absence means, as the help says (and as
/// the proxy and the Python package take it); it was an unknown profile.
#[test]
fn profile_auto_is_the_same_as_no_profile() {
    let dir = tempfile::tempdir().unwrap();
    // A Llama 3 model's bare JSON call: its own profile reads it, the
    // default profile does not execute it.
    let model = "meta-llama/Llama-3.1-8B-Instruct";
    let output = r#"{"name": "get_weather", "parameters": {"city": "Gent"}}"#;
    fs::write(
        dir.path().join("t.json"),
        transcript("t", model, "t", output).to_string(),
    )
    .unwrap();
    fs::write(dir.path().join("out.txt"), output).unwrap();
    fs::write(dir.path().join("tools.json"), TOOLS).unwrap();
    let label = ["label", "--format", "jsonl", "t.json"];
    let parse = [
        "parse",
        "--tools",
        "tools.json",
        "--model",
        model,
        "out.txt",
    ];
    for args in [&label[..], &parse[..]] {
        let plain = toolgate(dir.path(), args);
        let mut with = vec![args[0], "--profile", "auto"];
        with.extend(&args[1..]);
        let auto = toolgate(dir.path(), &with);
        assert_eq!(auto.status.code(), Some(0), "{with:?}: {}", stderr(&auto));
        assert_eq!(stdout(&auto), stdout(&plain), "{with:?}");
        assert!(
            stdout(&auto).contains("\"execute\""),
            "{with:?}: {}",
            stdout(&auto)
        );
    }
    // Another profile with --model is still refused: it would not be used.
    let out = toolgate(
        dir.path(),
        &["parse", "--profile", "hermes", "--model", "m", "out.txt"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("it cannot be used with --profile hermes"),
        "{}",
        stderr(&out)
    );
}

/// The fifth probe (stop 42): `--patterns /dev/zero` and `--formats
/// /dev/zero` read without end (5–6 GB in ten seconds). Configuration
/// files are read as transcripts are: regular files only, within a size.
#[test]
fn configuration_files_are_read_within_bounds() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("out.txt"), "hi").unwrap();
    for flag in ["--patterns", "--formats"] {
        let out = toolgate(dir.path(), &["parse", flag, "/dev/zero", "out.txt"]);
        assert_eq!(out.status.code(), Some(2), "{flag}");
        let err = stderr(&out);
        assert!(
            err.contains("/dev/zero: a character device: only regular files are read"),
            "{flag}: {err}"
        );
    }
}

/// The seventh probe (stop 42): an OpenAI `custom` tool (free-text input
/// checked by a grammar) was allowlisted as a function taking no
/// arguments, so a call to it executed with `{}`. A tool of another type
/// than `function` is not allowlisted: the call is refused.
#[test]
fn a_tool_that_is_not_a_function_is_not_allowlisted() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(
        dir.path().join("tools.json"),
        r#"[{"type": "custom", "name": "grammar_tool", "format": {"type": "grammar",
            "grammar": {"syntax": "lark", "definition": "start: /[a-z]+/"}}}]"#,
    )
    .unwrap();
    fs::write(
        dir.path().join("out.txt"),
        "<tool_call>\n{\"name\": \"grammar_tool\", \"arguments\": {}}\n</tool_call>",
    )
    .unwrap();
    let out = toolgate(
        dir.path(),
        &[
            "parse",
            "--profile",
            "hermes",
            "--tools",
            "tools.json",
            "out.txt",
        ],
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["decision"], "reject", "{v}");
    assert_eq!(v["gate"], "allowlist", "{v}");
    assert!(
        stderr(&out).contains("is a `custom` tool, not a function"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn matrix_reports_the_wilson_interval_and_flags_wide_cells() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    for (i, city) in ["Gent", "Antwerp", "Brugge"].iter().enumerate() {
        lines.push(transcript(&format!("q{i}"), "qwen", "weather", &hermes_call(city)).to_string());
    }
    lines.push(transcript("q3", "qwen", "weather", "I cannot call tools.").to_string());
    for i in 0..2 {
        lines.push(transcript(&format!("o{i}"), "other", "weather", "no").to_string());
    }
    fs::write(dir.path().join("runs.jsonl"), lines.join("\n")).unwrap();
    let out = toolgate(
        dir.path(),
        &[
            "matrix",
            "--profile",
            "hermes",
            "--format",
            "json",
            "runs.jsonl",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["schema_version"], 1);
    let cells = doc["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2);
    let other = &cells[0];
    assert_eq!(other["keys"], json!({"model": "other", "task": "weather"}));
    assert_eq!(other["n"], 2);
    assert_eq!(other["passes"], 0);
    assert_eq!(other["ci_low"], 0.0);
    assert_eq!(other["ci_high"], 0.6576);
    assert_eq!(other["labels"], json!({"no_call": 2}));
    // 0 of 2: [0, 0.66] mirrors 2 of 2's [0.34, 1], which spans both.
    assert_eq!(other["flag"], true);
    let qwen = &cells[1];
    assert_eq!(
        keys(qwen),
        [
            "keys",
            "n",
            "passes",
            "rate",
            "ci_low",
            "ci_high",
            "labels",
            "flag",
            "inconclusive",
            "pass_k",
            "samples",
            "dominant_failure",
            "retry_advice",
            "findings",
            "profile"
        ]
    );
    assert_eq!(
        qwen["profile"],
        json!({"name": "hermes", "source": "given", "source_detail": "--profile"})
    );
    assert_eq!(qwen["n"], 4);
    assert_eq!(qwen["passes"], 3);
    assert_eq!(qwen["rate"], 0.75);
    // 3 of 4: Wilson 95% [0.3006, 0.9544] spans both "broken" and "fine".
    assert_eq!(qwen["ci_low"], 0.3006);
    assert_eq!(qwen["ci_high"], 0.9544);
    assert_eq!(qwen["labels"], json!({"no_call": 1, "pass": 3}));
    assert_eq!(qwen["flag"], true);

    let out = toolgate(
        dir.path(),
        &[
            "matrix",
            "--profile",
            "hermes",
            "--by",
            "model",
            "runs.jsonl",
        ],
    );
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let row = text.lines().find(|l| l.starts_with("qwen")).unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        [
            "qwen",
            "4",
            "3",
            "0.75",
            "[0.30,",
            "0.95]",
            "inconclusive",
            "hermes",
            "--profile",
            // pass^4 of 3 passes in 4 samples: no 4 samples all pass.
            "0.00",
            "(k=4)",
            "0/1/0",
            "no_call:1",
            "pass:3"
        ]
    );
    let out = toolgate(
        dir.path(),
        &[
            "matrix",
            "--profile",
            "hermes",
            "--format",
            "markdown",
            "runs.jsonl",
        ],
    );
    assert!(
        stdout(&out).starts_with("| model | task | n | pass |"),
        "{}",
        stdout(&out)
    );
}

/// The markdown matrix is meant for PR comments: a model or task name is
/// inert text there. It escaped only `|` and HTML, so a model named
/// ``back`tick*_[x](http://e)`` rendered as a live link (with code and
/// emphasis); its cells now take the review's rule
/// (`sanitize::markdown_text`).
#[test]
fn markdown_cells_are_inert_text() {
    let dir = tempfile::tempdir().unwrap();
    let line = transcript(
        "m0",
        "back`tick*_[x](http://e)|y",
        "t_[y](http://e)*`z`",
        &hermes_call("Gent"),
    );
    fs::write(dir.path().join("runs.jsonl"), line.to_string()).unwrap();
    let out = toolgate(
        dir.path(),
        &[
            "matrix",
            "--profile",
            "hermes",
            "--format",
            "markdown",
            "runs.jsonl",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let row = text.lines().nth(2).unwrap();
    let cells: Vec<&str> = row.split(" | ").collect();
    assert_eq!(
        cells[..2],
        [
            r"| back\`tick\*\_\[x\](http://e)\|y",
            r"t\_\[y\](http://e)\*\`z\`"
        ],
        "{text}"
    );
}

#[test]
fn detect_recommends_hermes_for_a_hermes_model() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    for (i, city) in ["Gent", "Antwerp", "Brugge"].iter().enumerate() {
        lines.push(
            transcript(&format!("h{i}"), "hermes-3", "weather", &hermes_call(city)).to_string(),
        );
    }
    fs::write(dir.path().join("h.jsonl"), lines.join("\n")).unwrap();
    let out = toolgate(dir.path(), &["detect", "--format", "json", "h.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let groups: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let g = &groups[0];
    assert_eq!(g["model"], "hermes-3");
    assert_eq!(g["n"], 3);
    assert_eq!(g["best_mode"], "hermes");
    assert_eq!(g["best_mode_passes"], 3);
    assert_eq!(
        g["modes"]["hermes"],
        json!({"found_share": 1.0, "found": 3, "passes": 3})
    );
    assert_eq!(g["modes"]["tag"]["found"], 0);
    assert_eq!(g["leaked"], 0);
    assert_eq!(g["recommended_profile"], "hermes");

    let out = toolgate(dir.path(), &["detect", "h.jsonl"]);
    let text = stdout(&out);
    let row = text.lines().nth(1).unwrap();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>(),
        [
            "hermes-3", "3", "hermes", "3", "0", "hermes", "by", "name", "(hermes)"
        ]
    );
}

#[test]
fn detect_counts_leaked_markup_no_mode_reads() {
    let dir = tempfile::tempdir().unwrap();
    // The marker token with no call object after it: tool syntax leaked into
    // prose, and no mode has a candidate to show for it.
    let leaked = transcript(
        "l",
        "leaky",
        "weather",
        "I would write TOOL_CALL here, but no.",
    );
    let clean = transcript("c", "leaky", "weather", "It is sunny in Gent.");
    let text = format!("{leaked}\n{clean}\n");
    fs::write(dir.path().join("l.jsonl"), text).unwrap();
    let out = toolgate(dir.path(), &["detect", "--format", "json", "l.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let groups: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let g = &groups[0];
    assert_eq!(g["n"], 2);
    assert_eq!(g["leaked"], 1);
    assert_eq!(g["modes"]["marker"]["found"], 0);
    assert_eq!(g["best_mode"], Value::Null);
    // Every model gets a recommendation: nothing parses, so the default.
    assert_eq!(g["recommended_profile"], "default");
    assert_eq!(g["profile_source"], "default");
}

const EXECUTE_PATTERN: &str = r#"
[[pattern]]
name = "execute_bracket"
type = "bracket"
regex = '\[EXECUTE:(\w+):([^\]]+)\]'
tool_name_group = 1
parameter_mapping = { "2" = "command" }
"#;

#[test]
fn custom_patterns_from_toolgate_toml_and_patterns_flag_are_modes() {
    let dir = tempfile::tempdir().unwrap();
    let t = json!({
        "id": "x1",
        "tools": [{"name": "bash", "parameters": {"type": "object",
                   "properties": {"command": {"type": "string"}}, "required": ["command"]}}],
        "output": "[EXECUTE:bash:ls -la /tmp]",
    });
    fs::write(dir.path().join("x1.json"), t.to_string()).unwrap();
    // Other top-level settings in toolgate.toml are not the patterns' business.
    fs::write(
        dir.path().join("toolgate.toml"),
        format!("[inspector]\ntheme = \"dark\"\n{EXECUTE_PATTERN}"),
    )
    .unwrap();
    let out = toolgate(dir.path(), &["label", "--format", "jsonl", "x1.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &jsonl(&out)[0];
    assert_eq!(keys(&r["labels"]).last(), Some(&"execute_bracket"));
    assert_eq!(r["labels"]["execute_bracket"], "pass");
    let out = toolgate(dir.path(), &["formats"]);
    assert!(
        stdout(&out)
            .lines()
            .any(|l| l.starts_with("execute_bracket "))
    );

    // A pattern may not take a built-in mode's name.
    fs::remove_file(dir.path().join("toolgate.toml")).unwrap();
    fs::write(
        dir.path().join("p.toml"),
        EXECUTE_PATTERN.replace("execute_bracket", "hermes"),
    )
    .unwrap();
    let out = toolgate(dir.path(), &["label", "--patterns", "p.toml", "x1.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("pattern `hermes`: the name is a built-in mode's name"),
        "{}",
        stderr(&out)
    );
    // Nor may `toolgate.toml` and `--patterns` both define one name.
    fs::write(dir.path().join("toolgate.toml"), EXECUTE_PATTERN).unwrap();
    fs::write(dir.path().join("p.toml"), EXECUTE_PATTERN).unwrap();
    let out = toolgate(dir.path(), &["label", "--patterns", "p.toml", "x1.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("pattern `execute_bracket` has the name of another mode"),
        "{}",
        stderr(&out)
    );
    fs::remove_file(dir.path().join("toolgate.toml")).unwrap();
    // A profile file may make a custom mode primary.
    fs::write(dir.path().join("p.toml"), EXECUTE_PATTERN).unwrap();
    fs::write(
        dir.path().join("exec.toml"),
        "name = \"exec\"\nprimary = \"execute_bracket\"\n",
    )
    .unwrap();
    let out = toolgate(
        dir.path(),
        &[
            "label",
            "--format",
            "jsonl",
            "--patterns",
            "p.toml",
            "--profile",
            "exec.toml",
            "x1.json",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = &jsonl(&out)[0];
    assert_eq!(r["profile"]["name"], "exec");
    assert_eq!(r["profile"]["decision"], "execute");
    assert_eq!(
        r["profile"]["calls"],
        json!([{"name": "bash", "arguments": {"command": "ls -la /tmp"}}])
    );
}

/// Issue 3: on a directory mixing hermes, qwen_xml and harmony transcripts,
/// `detect` names the right profile for each model (the bundled corpus).
#[test]
fn detect_names_the_profile_of_each_model_in_the_bundled_corpus() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = toolgate(
        root,
        &[
            "detect",
            "--format",
            "json",
            "transcripts/hermes",
            "transcripts/qwen_xml",
            "transcripts/harmony",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let groups: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let profile_of = |model: &str| {
        groups
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["model"] == model)
            .map(|g| g["recommended_profile"].clone())
    };
    assert_eq!(profile_of("hermes-3-llama-3.1-8b"), Some(json!("hermes")));
    assert_eq!(
        profile_of("qwen3-coder-30b-a3b-instruct"),
        Some(json!("qwen3-coder"))
    );
    assert_eq!(profile_of("gpt-oss-20b"), Some(json!("gpt-oss")));
    assert!(groups.as_array().unwrap().iter().all(|g| g["leaked"] == 0));
}

// ---------------------------------------------------------------------------
// `label --write` safety, special files and silent no-ops (issues 9 and 10).

/// Runs toolgate, killing it after `secs` (a hang is a failure, not a stuck
/// test run).
fn toolgate_within(dir: &Path, args: &[&str], secs: u64) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > std::time::Duration::from_secs(secs) {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!("toolgate {args:?} hung: {}", stderr(&out));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn write_keeps_the_labels_of_custom_modes_it_did_not_replay() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = transcript("c", "m", "t", &hermes_call("Gent"));
    t["labels"] = json!({"hermes": "pass", "my_pattern": "pass"});
    let path = dir.path().join("c.json");
    fs::write(&path, serde_json::to_string_pretty(&t).unwrap()).unwrap();
    let out = toolgate(dir.path(), &["label", "--write", "c.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not compared: my_pattern"),
        "{}",
        stderr(&out)
    );
    let value: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(value["labels"]["my_pattern"], "pass");
    // --check does not fail forever on what it cannot replay.
    let out = toolgate(dir.path(), &["label", "--check", "c.json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
}

#[test]
fn check_and_write_together_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.json"), "{\"output\": \"\"}").unwrap();
    let out = toolgate(dir.path(), &["label", "--check", "--write", "a.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot be used with"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("a.json")).unwrap(),
        "{\"output\": \"\"}"
    );
}

#[test]
fn check_reports_a_mode_that_now_needs_a_label_and_write_converges() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = transcript("n", "m", "t", &hermes_call("Gent"));
    t["labels"] = json!({"tag": "no_call"});
    let path = dir.path().join("n.json");
    fs::write(&path, serde_json::to_string_pretty(&t).unwrap()).unwrap();
    let out = toolgate(dir.path(), &["label", "--check", "n.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out)
            .lines()
            .any(|l| l.split_whitespace().collect::<Vec<_>>()
                == ["n.json", "n", "hermes", "(absent)", "pass"]),
        "{}",
        stdout(&out)
    );
    let out = toolgate(dir.path(), &["label", "--write", "n.json"]);
    assert_eq!(out.status.code(), Some(0));
    let once = fs::read(&path).unwrap();
    let out = toolgate(dir.path(), &["label", "--write", "n.json"]);
    assert!(
        stderr(&out).contains("1 file(s) already current"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read(&path).unwrap(),
        once,
        "a second --write changes nothing"
    );
    let out = toolgate(dir.path(), &["label", "--check", "n.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let value: Value = serde_json::from_slice(&once).unwrap();
    assert_eq!(value["labels"]["tag"], "no_call", "a stored mode stays");
}

/// A repeated `labels` member is ambiguous (which labels were stored?):
/// the file is refused, named with the key, and left as it is; a member
/// spelled with an escape is the one `labels` member and is rewritten.
#[test]
fn duplicate_labels_are_refused_and_escaped_labels_members_converge() {
    let dir = tempfile::tempdir().unwrap();
    let out_json = serde_json::to_string(&hermes_call("Gent")).unwrap();
    let dup = format!(
        "{{\"labels\": {{\"hermes\": \"no_call\"}}, \"tools\": {}, \"output\": {out_json}, \"labels\": {{\"hermes\": \"malformed_json\"}}}}",
        TOOLS.replace('\n', " ")
    );
    let escaped = format!(
        "{{\"tools\": {}, \"output\": {out_json}, \"label\\u0073\": {{\"hermes\": \"no_call\"}}}}",
        TOOLS.replace('\n', " ")
    );
    fs::write(dir.path().join("dup.json"), &dup).unwrap();
    fs::write(dir.path().join("esc.json"), &escaped).unwrap();
    let out = toolgate(dir.path(), &["label", "--write", "."]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("dup.json: ambiguous: duplicate key `labels` at line 1 column"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("dup.json")).unwrap(),
        dup
    );
    let out = toolgate(dir.path(), &["label", "--check", "esc.json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        stdout(&out),
        stderr(&out)
    );
    {
        let text = fs::read_to_string(dir.path().join("esc.json")).unwrap();
        assert_eq!(
            text.matches("\"labels\"").count() + text.matches("label\\u0073").count(),
            1,
            "{text}"
        );
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["labels"]["hermes"], "pass", "{text}");
    }
}

#[test]
fn write_removes_temp_files_a_killed_run_left() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.json"), "{\"output\": \"\"}").unwrap();
    // A pid beyond Linux's pid_max: never a live process.
    let stale = dir.path().join(".a.json.toolgate-999999999.tmp");
    fs::write(&stale, "half a file").unwrap();
    let out = toolgate(dir.path(), &["label", "--write", "a.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    if cfg!(target_os = "linux") {
        assert!(!stale.exists());
        assert!(stderr(&out).contains("left by an interrupted write"));
    }
}

#[test]
fn a_bom_on_a_jsonl_file_keeps_line_one_readable() {
    let dir = tempfile::tempdir().unwrap();
    let a = transcript("a", "m", "t", &hermes_call("Gent"));
    fs::write(dir.path().join("b.jsonl"), format!("\u{feff}{a}\n")).unwrap();
    let out = toolgate(
        dir.path(),
        &["label", "--write", "--format", "jsonl", "b.jsonl"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(jsonl(&out)[0]["labels"]["hermes"], "pass");
    let text = fs::read_to_string(dir.path().join("b.jsonl")).unwrap();
    assert!(text.starts_with('\u{feff}'));
    assert!(text.contains("\"labels\": {"), "{text}");
}

#[cfg(unix)]
#[test]
fn special_files_are_reported_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("x.json");
    let made = Command::new("mkfifo").arg(&fifo).status();
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.json")).unwrap();
    fs::write(dir.path().join("ok.json"), "{\"output\": \"\"}").unwrap();
    let out = toolgate_within(dir.path(), &["label", "--format", "jsonl", "."], 30);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("zero.json: a character device: only regular files are read"),
        "{err}"
    );
    if made.is_ok_and(|s| s.success()) {
        assert!(
            err.contains("x.json: a FIFO: only regular files are read"),
            "{err}"
        );
    }
    assert!(jsonl(&out).iter().any(|r| r["id"] == "ok"));

    let out = toolgate(dir.path(), &["label", "--max-file-size", "8", "ok.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out)
            .contains("ok.json: 14 bytes, over the 8-byte limit (--max-file-size): not read"),
        "{}",
        stderr(&out)
    );
    let out = toolgate(dir.path(), &["label", "--max-file-size", "1K", "ok.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn an_empty_folder_is_said_and_a_missing_path_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("empty")).unwrap();
    for cmd in ["label", "matrix", "detect"] {
        let out = toolgate(dir.path(), &[cmd, "empty"]);
        assert_eq!(out.status.code(), Some(0), "{cmd}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("no transcripts (.json or .jsonl files) under empty"),
            "{cmd}: {}",
            stderr(&out)
        );
        let out = toolgate(dir.path(), &[cmd, "missing"]);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", stderr(&out));
        assert!(stderr(&out).contains("missing"), "{cmd}: {}", stderr(&out));
    }
}

#[cfg(unix)]
#[test]
fn symlinked_subfolders_are_walked_once() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    fs::create_dir(&real).unwrap();
    fs::write(
        real.join("a.json"),
        transcript("a", "m", "t", "hi").to_string(),
    )
    .unwrap();
    let top = dir.path().join("top");
    fs::create_dir(&top).unwrap();
    std::os::unix::fs::symlink(&real, top.join("linked")).unwrap();
    std::os::unix::fs::symlink(&top, top.join("loop")).unwrap();
    let out = toolgate_within(dir.path(), &["label", "--format", "jsonl", "top"], 30);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ids: Vec<Value> = jsonl(&out).iter().map(|r| r["id"].clone()).collect();
    assert_eq!(ids, [json!("a")]);
}

// ---------------------------------------------------------------------------
// CLI conventions (issue 10 item 10).

#[test]
fn version_names_the_git_commit() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolgate(dir.path(), &["--version"]);
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    let want_prefix = format!("toolgate {} (", env!("CARGO_PKG_VERSION"));
    assert!(text.starts_with(&want_prefix), "{text}");
    let commit = text
        .trim_end()
        .strip_prefix(&want_prefix)
        .unwrap()
        .strip_suffix(')')
        .unwrap();
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    match head {
        Ok(h) if h.status.success() => {
            assert_eq!(commit, String::from_utf8(h.stdout).unwrap().trim());
        }
        _ => assert_eq!(commit, "unknown commit"),
    }
}

#[test]
fn completions_for_every_shell_and_a_bad_shell_is_usage() {
    let dir = tempfile::tempdir().unwrap();
    for (shell, marker) in [
        ("bash", "_toolgate()"),
        ("zsh", "#compdef toolgate"),
        ("fish", "complete -c toolgate"),
    ] {
        let out = toolgate(dir.path(), &["completions", shell]);
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains(marker), "{shell}: {text}");
        assert!(
            text.contains("label") && text.contains("max-file-size"),
            "{shell}"
        );
    }
    let out = toolgate(dir.path(), &["completions", "cmd.exe"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn every_json_output_carries_the_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    let t = transcript("w1", "qwen3-8b", "weather", &hermes_call("Antwerp"));
    fs::write(dir.path().join("w1.json"), t.to_string()).unwrap();
    fs::write(dir.path().join("tools.json"), TOOLS).unwrap();
    let last_key_is_version = |v: &Value, what: &str| {
        let obj = v.as_object().unwrap_or_else(|| panic!("{what}: {v}"));
        assert_eq!(
            obj.keys().next_back().map(String::as_str),
            Some("schema_version"),
            "{what}"
        );
        assert_eq!(obj["schema_version"], 1, "{what}");
    };
    for args in [
        vec!["label", "--format", "json", "w1.json"],
        vec!["matrix", "--format", "json", "w1.json"],
        vec!["detect", "--format", "json", "w1.json"],
        vec!["formats", "--format", "json"],
        vec!["profiles", "--format", "json"],
    ] {
        let out = toolgate(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
        // The matrix is one document (schema_version, by, cells, routing).
        if args[0] == "matrix" {
            assert_eq!(v["schema_version"], 1, "{v}");
            assert!(!v["cells"].as_array().unwrap().is_empty());
            continue;
        }
        let items = v.as_array().unwrap_or_else(|| panic!("{args:?}: {v}"));
        assert!(!items.is_empty(), "{args:?}");
        for item in items {
            last_key_is_version(item, &args.join(" "));
        }
    }
    let out = toolgate(dir.path(), &["label", "--format", "jsonl", "w1.json"]);
    last_key_is_version(&jsonl(&out)[0], "label jsonl");
    let out = toolgate_stdin(
        dir.path(),
        &["parse", "--tools", "tools.json", "-"],
        Some("hi"),
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    last_key_is_version(&v, "parse");
}

#[test]
fn the_label_table_fits_the_terminal_width() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for width in [80usize, 100, 120] {
        let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["label", "transcripts"])
            .current_dir(root)
            .env("COLUMNS", width.to_string())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.lines().count() > 200);
        let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= width, "{widest} > {width} columns");
        // Labels and decisions are never cut.
        assert!(text.contains("hallucinated_param") && text.contains("reject (allowlist)"));
        assert!(!text.lines().any(|l| l.contains("reject (…")), "{text}");
    }
}

#[cfg(unix)]
#[test]
fn no_color_is_honored_on_a_terminal() {
    // `script` gives the command a pseudo-terminal, where clap would color.
    let script = Command::new("script").arg("--version").output();
    if !script.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: no `script` for a pseudo-terminal");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.json"), "{\"output\": \"\"}").unwrap();
    let bin = env!("CARGO_BIN_EXE_toolgate");
    for cmd in [
        "--help",
        "label --help",
        "label a.json",
        "label --bogus",
        "profiles",
        "formats",
    ] {
        let out = Command::new("script")
            .args(["-qec", &format!("{bin} {cmd}"), "/dev/null"])
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .env("TERM", "xterm-256color")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(!text.is_empty(), "{cmd}");
        assert!(
            !text.contains('\u{1b}'),
            "`{cmd}` wrote an escape sequence: {text:?}"
        );
    }
}

#[test]
fn parse_without_tools_judges_with_the_tool_list_unknown() {
    // As a transcript without `tools` (SPEC §4): every call rejected at
    // `allowlist`, the label decided without blaming the model for the
    // missing list, the finding said; `--tools` with `[]` is a list that
    // allows nothing, and the model's call is then a `wrong_tool`.
    let dir = tempfile::tempdir().unwrap();
    let call = r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Gent"}}</tool_call>"#;
    let out = toolgate_stdin(dir.path(), &["parse", "--profile", "hermes"], Some(call));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (&v["decision"], &v["gate"], &v["label"]),
        (&json!("reject"), &json!("allowlist"), &json!("pass"))
    );
    assert_eq!(v["findings"][0]["kind"], "tools_unknown", "{v}");
    let out = toolgate_stdin(
        dir.path(),
        &["parse", "--profile", "hermes", "--stream"],
        Some(call),
    );
    let end: Value = serde_json::from_str(stdout(&out).lines().last().unwrap()).unwrap();
    assert_eq!(end["event"], "end");
    for k in ["decision", "gate", "label", "findings", "calls"] {
        assert_eq!(end[k], v[k], "{k}: stream == batch");
    }
    fs::write(dir.path().join("none.json"), "[]").unwrap();
    let out = toolgate_stdin(
        dir.path(),
        &["parse", "--profile", "hermes", "--tools", "none.json"],
        Some(call),
    );
    let v: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(v["label"], "wrong_tool");
    assert!(v.get("findings").is_none(), "{v}");
}

/// Regression (probe44b, item 1): `--write` replaced a file a logger held
/// open for appending, and every line the logger wrote afterwards went to
/// the replaced copy and was lost. Such a file is refused (exit 2, left as
/// it is); once the writer is gone it is labelled.
#[cfg(target_os = "linux")]
#[test]
fn write_refuses_a_file_another_process_holds_open_for_writing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log.jsonl");
    let original = format!("{}\n", transcript("a", "m", "t", &hermes_call("Gent")));
    fs::write(&path, &original).unwrap();
    let mut holder = Command::new("sh")
        .args(["-c", "exec 3>>\"$1\"; exec sleep 30", "sh"])
        .arg(&path)
        .spawn()
        .unwrap();
    // Until the holder has the file open (its `sleep` keeps descriptor 3).
    let fd3 = format!("/proc/{}/fd/3", holder.id());
    let start = std::time::Instant::now();
    while fs::read_link(&fd3).ok().as_deref() != Some(path.as_path()) {
        assert!(start.elapsed().as_secs() < 10, "the holder never opened it");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let out = toolgate(dir.path(), &["label", "--write", "log.jsonl"]);
    holder.kill().unwrap();
    holder.wait().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains(&format!(
            "cannot write labels to log.jsonl: the file is open for writing by process {} (sleep)",
            holder.id()
        )),
        "{said}"
    );
    assert_eq!(fs::read_to_string(&path).unwrap(), original);

    let out = toolgate(dir.path(), &["label", "--write", "log.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(fs::read_to_string(&path).unwrap().contains("\"labels\""));
}

/// Regression (s47-files): `label --write` replaced a hard-linked file by a
/// rename, so the other name silently kept the old labels. Refused now,
/// naming the file and the link count (exit 2, both names left as they
/// were). A symlinked transcript file is written through: the link stays
/// a link (never replaced by a regular file) and its target gets the labels.
#[cfg(unix)]
#[test]
fn write_refuses_a_hard_linked_file_and_writes_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let corpus = dir.path().join("corpus");
    fs::create_dir(&data).unwrap();
    fs::create_dir(&corpus).unwrap();
    let original = format!("{}\n", transcript("a", "m", "t", &hermes_call("Gent")));
    fs::write(data.join("real.jsonl"), &original).unwrap();
    fs::hard_link(data.join("real.jsonl"), corpus.join("also.jsonl")).unwrap();
    let out = toolgate(&corpus, &["label", "--write", "also.jsonl"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            "toolgate: cannot write labels to also.jsonl: the file has 2 hard links: not \
             replaced, since its other name(s) would keep the old labels; label a copy, or \
             remove the other link(s)"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        fs::read_to_string(data.join("real.jsonl")).unwrap(),
        original
    );
    assert_eq!(
        fs::read_to_string(corpus.join("also.jsonl")).unwrap(),
        original
    );

    fs::remove_file(corpus.join("also.jsonl")).unwrap();
    std::os::unix::fs::symlink("../data/real.jsonl", corpus.join("link.jsonl")).unwrap();
    let out = toolgate(&corpus, &["label", "--write", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let link = fs::symlink_metadata(corpus.join("link.jsonl")).unwrap();
    assert!(link.file_type().is_symlink(), "the link was replaced");
    assert_eq!(
        fs::read_link(corpus.join("link.jsonl")).unwrap(),
        Path::new("../data/real.jsonl")
    );
    let stored: Value =
        serde_json::from_str(fs::read_to_string(data.join("real.jsonl")).unwrap().trim()).unwrap();
    assert_eq!(stored["labels"]["hermes"], "pass");
    let leftovers: Vec<_> = fs::read_dir(&corpus)
        .unwrap()
        .chain(fs::read_dir(&data).unwrap())
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}
