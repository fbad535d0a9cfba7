//! The proven scorer, end to end: the bundled suite `suites/core.jsonl` runs
//! through `toolgate run` against `toolgate mock-upstream`, which answers
//! with the known-good and known-bad outputs of
//! `tests/fixtures/core_answers.jsonl`; every transcript's label is asserted
//! (seed 002: the scorer passes before any model is scored).
//!
//! Model `answer-J` answers every task with that task's J-th fixture answer
//! (the last one when the task has fewer): `answer-0` is always right.
#![allow(clippy::unwrap_used)]

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Upstream(Child);

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn toolgate() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolgate"))
}

/// Starts `toolgate mock-upstream DIR` on a free port; its base URL.
fn start_upstream(dir: &Path) -> (Upstream, String) {
    let mut child = toolgate()
        .args([
            "mock-upstream",
            dir.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let guard = Upstream(child);
    let start = Instant::now();
    let mut lines = BufReader::new(stderr).lines();
    loop {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "mock-upstream did not start"
        );
        let line = lines
            .next()
            .expect("mock-upstream printed its address")
            .unwrap();
        if let Some(at) = line.find("http://") {
            let url = line[at..].split_whitespace().next().unwrap().to_string();
            // Keep draining stderr so the server never blocks on it.
            std::thread::spawn(move || for _ in lines {});
            return (guard, url);
        }
    }
}

#[test]
fn the_bundled_suite_against_the_mock_upstream_gets_every_fixture_label() {
    let suite_text = std::fs::read_to_string("suites/core.jsonl").unwrap();
    let tasks: Vec<Value> = suite_text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let answers: BTreeMap<String, Vec<(String, String)>> =
        std::fs::read_to_string("tests/fixtures/core_answers.jsonl")
            .unwrap()
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let list = v["answers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|a| {
                        (
                            a["output"].as_str().unwrap().to_string(),
                            a["label"].as_str().unwrap().to_string(),
                        )
                    })
                    .collect();
                (v["task"].as_str().unwrap().to_string(), list)
            })
            .collect();
    let width = answers.values().map(Vec::len).max().unwrap();

    // The mock's transcripts: one per (answer-J, task), keyed by the task's
    // messages so the mock picks it for exactly that request.
    let dir = tempfile::tempdir().unwrap();
    let answers_dir = dir.path().join("answers");
    std::fs::create_dir_all(&answers_dir).unwrap();
    let mut want: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut lines = Vec::new();
    for task in &tasks {
        let name = task["task"].as_str().unwrap();
        let list = &answers[name];
        for j in 0..width {
            let (output, label) = &list[j.min(list.len() - 1)];
            let model = format!("answer-{j}");
            lines.push(
                json!({"id": format!("{name}#{j}"), "model": model, "task": name,
                       "messages": task["messages"], "tools": task["tools"],
                       "output": output})
                .to_string(),
            );
            want.insert((model, name.to_string()), label.clone());
        }
    }
    std::fs::write(answers_dir.join("answers.jsonl"), lines.join("\n") + "\n").unwrap();

    let (_upstream, url) = start_upstream(&answers_dir);
    let out = dir.path().join("run");
    let mut args: Vec<String> = ["run", "suites/core.jsonl", "--base-url", &url, "-k", "1"]
        .map(String::from)
        .to_vec();
    for j in 0..width {
        args.push("--model".into());
        args.push(format!("answer-{j}"));
    }
    args.extend(
        [
            "--out",
            out.to_str().unwrap(),
            "--no-progress",
            "--retry-delay-ms",
            "1",
        ]
        .map(String::from),
    );
    let o = toolgate().args(&args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");

    // Every transcript's label in the fixture's mode (hermes).
    let o = toolgate()
        .args(["label", out.to_str().unwrap(), "--format", "jsonl"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut got: BTreeMap<(String, String), String> = BTreeMap::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        got.insert(
            (
                v["model"].as_str().unwrap().to_string(),
                v["task"].as_str().unwrap().to_string(),
            ),
            v["labels"]["hermes"].as_str().unwrap().to_string(),
        );
    }
    assert_eq!(got.len(), tasks.len() * width);
    let wrong: Vec<String> = want
        .iter()
        .filter(|(k, l)| got.get(*k) != Some(*l))
        .map(|(k, l)| format!("{k:?}: want {l}, got {:?}", got.get(k)))
        .collect();
    assert!(wrong.is_empty(), "{wrong:#?}");

    // And the matrix: the always-right model passes every task.
    let o = toolgate()
        .args([
            "matrix",
            out.to_str().unwrap(),
            "--by",
            "model",
            "--profile",
            "hermes",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    let right = doc["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["keys"]["model"] == "answer-0")
        .unwrap();
    assert_eq!(right["n"], json!(tasks.len()));
    assert_eq!(right["rate"], json!(1.0));
}
