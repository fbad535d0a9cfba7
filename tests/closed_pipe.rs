//! A reader that closes stdout (or stderr) early — `toolgate label --check
//! DIR | head -1` — changes nothing about the exit code: the findings decide
//! it (1 differing, 2 unreadable), and no write to a closed pipe panics.
#![allow(clippy::unwrap_used)]

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};

/// `n` JSONL transcripts whose stored hermes label (`no_call`) differs from
/// the one a replay gives (`pass`): far more `--format jsonl` output than a
/// pipe holds, so the writes go on after the reader has gone.
fn differing(dir: &Path, n: usize) {
    let tools = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]"#;
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            r#"{{"id": "t{i}", "tools": {tools}, "output": "<tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Gent\"}}}}</tool_call>", "labels": {{"hermes": "no_call"}}}}"#
        ));
        text.push('\n');
    }
    std::fs::write(dir.join("many.jsonl"), text).unwrap();
}

/// Runs `toolgate label --check --format jsonl DIR`, reads one line of its
/// stdout and closes it; with `close_stderr`, stderr is closed before the
/// first write. Returns the exit code and what stderr said.
fn check_reading_one_line(dir: &Path, close_stderr: bool) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["label", "--check", "--format", "jsonl"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let reader = (!close_stderr).then(|| {
        std::thread::spawn(move || {
            let mut text = String::new();
            BufReader::new(stderr).read_to_string(&mut text).unwrap();
            text
        })
    });
    let mut first = String::new();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains("\"t0\""), "{first}");
    drop(stdout);
    let status = child.wait().unwrap();
    let said = reader.map(|r| r.join().unwrap()).unwrap_or_default();
    (status.code(), said)
}

/// Regression (probe44b, item 3): a broken pipe on stdout was exit 0, so
/// `label --check DIR | head` passed a CI gate with findings.
#[test]
fn findings_exit_1_when_stdout_closes_early() {
    let dir = tempfile::tempdir().unwrap();
    differing(dir.path(), 3000);
    let (code, said) = check_reading_one_line(dir.path(), false);
    assert_eq!(code, Some(1), "{said}");
    assert!(
        said.contains("3000 transcript(s) with labels differing"),
        "{said}"
    );
    assert!(
        !said.contains("error") && !said.contains("panicked"),
        "{said}"
    );
}

/// An unreadable file still makes it exit 2 when nobody reads stdout.
#[test]
fn unreadable_file_exits_2_when_stdout_closes_early() {
    let dir = tempfile::tempdir().unwrap();
    differing(dir.path(), 3000);
    std::fs::write(dir.path().join("zz-bad.json"), "not json").unwrap();
    let (code, said) = check_reading_one_line(dir.path(), false);
    assert_eq!(code, Some(2), "{said}");
    assert!(said.contains("zz-bad.json"), "{said}");
}

/// Regression (probe44b, item 3): `eprintln!` on a closed stderr panicked
/// (exit 101); the lines are dropped and the findings' code stays.
#[test]
fn closed_stderr_does_not_panic() {
    let dir = tempfile::tempdir().unwrap();
    differing(dir.path(), 3000);
    let (code, _) = check_reading_one_line(dir.path(), true);
    assert_eq!(code, Some(1));
}
