//! The streaming batch (issue 11): input order, errors in place, `--modes`,
//! `--write` per file as the batch goes, and `auto` detection that needs a
//! second pass giving the same records as one that does not.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                 "required": ["city"], "additionalProperties": false}}}]"#;

fn kimi(city: &str) -> String {
    format!(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{{\"city\": \"{city}\"}}<|tool_call_end|><|tool_calls_section_end|>"
    )
}

fn hermes(city: &str) -> String {
    format!(
        "<tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}</tool_call>"
    )
}

fn line(id: &str, model: &str, output: &str) -> String {
    json!({
        "id": id, "model": model,
        "tools": serde_json::from_str::<Value>(TOOLS).unwrap(),
        "output": output,
        "expect": {"calls": [{"name": "get_weather"}]},
    })
    .to_string()
}

fn toolgate(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .envs(env.iter().copied())
        .output()
        .unwrap()
}

fn assert_ok(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn records(out: &Output) -> Vec<Value> {
    String::from_utf8(out.stdout.clone())
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn records_come_in_input_order_with_errors_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let mut expected = Vec::new();
    for f in 0..3 {
        let mut text = String::new();
        for i in 0..150 {
            let id = format!("f{f}-{i}");
            if i == 77 {
                text.push_str("{not json\n");
                expected.push(format!("error:{}", i + 1));
                continue;
            }
            text.push_str(&line(&id, "qwen3-8b", &hermes("Gent")));
            text.push('\n');
            expected.push(id);
        }
        fs::write(dir.path().join(format!("b{f}.jsonl")), text).unwrap();
    }
    // Whatever the number of workers (`--jobs`), the same order.
    for jobs in ["1", "2", "5"] {
        let out = toolgate(
            dir.path(),
            &["label", "--jobs", jobs, "--format", "jsonl", "."],
            &[],
        );
        assert_eq!(out.status.code(), Some(2), "a bad line exits 2");
        let got: Vec<String> = records(&out)
            .iter()
            .map(|r| match r.get("error") {
                Some(e) => format!(
                    "error:{}",
                    e.as_str()
                        .unwrap()
                        .split(':')
                        .next()
                        .unwrap()
                        .trim_start_matches("line ")
                ),
                None => r["id"].as_str().unwrap().to_string(),
            })
            .collect();
        assert_eq!(got, expected, "--jobs {jobs}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.matches("not valid JSON").count(), 3, "{err}");
    }
    let out = toolgate(dir.path(), &["label", "--jobs", "0", "."], &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--jobs"));
}

#[test]
fn modes_replays_only_the_listed_modes_and_write_keeps_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let mut t: Value = serde_json::from_str(&line("m1", "qwen3-8b", &hermes("Gent"))).unwrap();
    t["labels"] = json!({"hermes": "no_call", "llama3": "pass", "granite": "pass"});
    fs::write(dir.path().join("m1.json"), t.to_string()).unwrap();

    let out = toolgate(
        dir.path(),
        &[
            "label",
            "--modes",
            "hermes,kimi",
            "--format",
            "jsonl",
            "m1.json",
        ],
        &[],
    );
    assert_ok(&out);
    let r = &records(&out)[0];
    assert_eq!(r["labels"], json!({"hermes": "pass", "kimi": "no_call"}));
    assert_eq!(r["profile"]["label"], "pass");

    let out = toolgate(
        dir.path(),
        &["label", "--modes", "hermes", "--write", "m1.json"],
        &[],
    );
    assert_ok(&out);
    let stored: Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("m1.json")).unwrap()).unwrap();
    assert_eq!(
        stored["labels"],
        json!({"hermes": "pass", "llama3": "pass", "granite": "pass"})
    );

    let out = toolgate(
        dir.path(),
        &["label", "--modes", "hermes,nonsense", "m1.json"],
        &[],
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--modes: unknown mode \"nonsense\""), "{err}");

    // Without --modes, llama3 and granite read the hermes call too; a mode
    // that reads nothing (kimi) is left out of `--by mode` either way.
    let out = toolgate(
        dir.path(),
        &[
            "matrix",
            "--by",
            "mode",
            "--modes",
            "kimi,hermes",
            "--format",
            "json",
            "m1.json",
        ],
        &[],
    );
    assert_ok(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let modes: Vec<&str> = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["keys"]["mode"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["hermes"]);
}

#[test]
fn detection_over_a_second_pass_gives_the_same_records() {
    // A model no name reveals: its profile is detected from all of its
    // transcripts, so the writer holds them; with a tiny hold limit the batch
    // takes a second pass instead. Both must print the same records.
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..40 {
        let (model, output) = match i % 4 {
            0 => ("qwen3-8b", hermes("Gent")),
            1 => ("my-finetune", "Let me think about it.".to_string()),
            _ => ("my-finetune", kimi("Oslo")),
        };
        text.push_str(&line(&format!("d{i}"), model, &output));
        text.push('\n');
    }
    fs::write(dir.path().join("d.jsonl"), text).unwrap();
    let one = toolgate(dir.path(), &["label", "--format", "jsonl", "d.jsonl"], &[]);
    let two = toolgate(
        dir.path(),
        &["label", "--format", "jsonl", "d.jsonl"],
        &[("TOOLGATE_PENDING_LIMIT", "3")],
    );
    assert_eq!(one.status.code(), Some(0));
    assert_eq!(two.status.code(), Some(0));
    let (one, two) = (records(&one), records(&two));
    assert_eq!(one.len(), 40);
    assert_eq!(one, two);
    // Replayed again under the detected profile, from the whole transcript.
    let d2 = one.iter().find(|r| r["id"] == "d2").unwrap();
    assert_eq!(d2["profile"]["label"], "pass", "{d2}");
    assert_eq!(d2["profile"]["parse_mode"], "kimi", "{d2}");
    let finetune = one.iter().find(|r| r["model"] == "my-finetune").unwrap();
    assert_eq!(finetune["profile"]["name"], "kimi");
    assert_eq!(
        finetune["profile"]["source_detail"],
        "detected from 30 transcripts"
    );
    let qwen = one.iter().find(|r| r["model"] == "qwen3-8b").unwrap();
    assert_eq!(qwen["profile"]["source"], "by name");
}

#[test]
fn write_stores_each_file_once_even_when_named_twice() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    fs::create_dir(&sub).unwrap();
    let text = format!(
        "{}\n{}\n",
        line("w1", "qwen3-8b", &hermes("Gent")),
        line("w2", "qwen3-8b", "no call")
    );
    fs::write(sub.join("w.jsonl"), &text).unwrap();
    let out = toolgate(dir.path(), &["label", "--write", "sub", "sub/w.jsonl"], &[]);
    assert_ok(&out);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("stored labels of 2 transcript(s) in 1 file(s)"),
        "{err}"
    );
    let written = fs::read_to_string(sub.join("w.jsonl")).unwrap();
    let first: Value = serde_json::from_str(written.lines().next().unwrap()).unwrap();
    assert_eq!(first["labels"]["hermes"], "pass");
    let out = toolgate(dir.path(), &["label", "--check", "sub"], &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
