//! The inspector in a real terminal (tmux): the screen comes at once and
//! the `auto` profile detected behind it re-judges every transcript when it
//! is made (issue 11 item 5). Skips when tmux is not installed.
#![allow(clippy::unwrap_used)]

use std::process::Command;
use std::time::{Duration, Instant};

/// Kills the tmux session when the test ends, passed or not.
struct Session(String);

impl Drop for Session {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["kill-session", "-t", &self.0])
            .output();
    }
}

fn screen(session: &str) -> String {
    let out = Command::new("tmux")
        .args(["capture-pane", "-t", session, "-p"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Waits (at most 30 s) until a line of the screen holds every one of
/// `words`; the screen at the end either way.
fn wait_for(session: &str, words: &[&str]) -> (bool, String) {
    let start = Instant::now();
    loop {
        let s = screen(session);
        if s.lines().any(|l| words.iter().all(|w| l.contains(w))) {
            return (true, s);
        }
        if start.elapsed() > Duration::from_secs(30) {
            return (false, s);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn an_unknown_model_is_judged_by_the_profile_detected_behind_the_screen() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let tools = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]"#;
    let mut text = String::new();
    for i in 0..30 {
        // No name says which format `mystery-7b` writes: only detection can.
        text.push_str(&format!(
            r#"{{"id": "x{i}", "model": "mystery-7b", "tools": {tools}, "output": "<tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"Oslo\"}}}}</tool_call>", "expect": {{"calls": [{{"name": "get_weather"}}]}}}}"#
        ));
        text.push('\n');
    }
    std::fs::write(dir.path().join("a.jsonl"), text).unwrap();

    let name = format!("tg-test-{}", std::process::id());
    let session = Session(name.clone());
    let command = format!(
        "{} inspect {}",
        env!("CARGO_BIN_EXE_toolgate"),
        dir.path().display()
    );
    let started = Command::new("tmux")
        .args(["new-session", "-d", "-s", &name, "-x", "160", "-y", "30"])
        .arg(command)
        .status()
        .unwrap();
    assert!(started.success());

    let (listed, s) = wait_for(&session.0, &["Transcripts 30 of 30"]);
    assert!(listed, "the list never showed:\n{s}");
    // Judged by what detection found (hermes parses every output), not by
    // the default the model's name gives.
    let (judged, s) = wait_for(
        &session.0,
        &["x0 ", "mystery-7b", "pass", "execute", "hermes"],
    );
    assert!(judged, "x0 was not judged by the detected profile:\n{s}");
}
