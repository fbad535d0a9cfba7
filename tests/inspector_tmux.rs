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
/// `toolgate inspect DIR` in a new detached tmux session of `width`×30
/// named after `tag`; the session is killed when the returned value drops.
fn inspect_in_tmux(tag: &str, dir: &std::path::Path, width: u32) -> Session {
    let name = format!("tg-{tag}-{}", std::process::id());
    let command = format!(
        "{} inspect {}",
        env!("CARGO_BIN_EXE_toolgate"),
        dir.display()
    );
    let started = Command::new("tmux")
        .args([
            "new-session",
            "-d",
            "-s",
            &name,
            "-x",
            &width.to_string(),
            "-y",
            "30",
        ])
        .arg(command)
        .status()
        .unwrap();
    assert!(started.success());
    Session(name)
}

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

    let session = inspect_in_tmux("test", dir.path(), 160);

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

/// Runs `toolgate ARGS` in the repository in a `width`-column tmux
/// terminal and returns what it printed (the whole scrollback), or `None`
/// when tmux is not installed.
fn in_terminal(width: u16, args: &str) -> Option<String> {
    if Command::new("tmux").arg("-V").output().is_err() {
        return None;
    }
    let name = format!("tg-fit-{}-{width}-{}", std::process::id(), args.len());
    let session = Session(name.clone());
    let command = format!(
        "env -u COLUMNS {} {args}; echo __DONE__; sleep 60",
        env!("CARGO_BIN_EXE_toolgate")
    );
    // Two tests starting the tmux server at once can race: try again.
    let mut started = false;
    for _ in 0..10 {
        started = Command::new("tmux")
            .args([
                "new-session",
                "-d",
                "-s",
                &name,
                "-x",
                &width.to_string(),
                "-y",
                "50",
            ])
            .args(["-c", env!("CARGO_MANIFEST_DIR")])
            .arg(&command)
            .status()
            .unwrap()
            .success();
        if started {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    assert!(started, "tmux new-session failed");
    let start = Instant::now();
    loop {
        let out = Command::new("tmux")
            .args(["capture-pane", "-t", &session.0, "-p", "-S", "-", "-E", "-"])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if let Some((printed, _)) = text.split_once("__DONE__") {
            return Some(printed.to_string());
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "`toolgate {args}` did not finish:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Issue 26: at 120 columns `matrix` cut model names until rows read
/// `llama-3…` three times, and `label` cut paths from the right. Every row
/// of the bundled corpus, at 80 and 120 columns, fits the terminal and
/// tells itself apart by its first column (the model, the transcript).
#[test]
fn matrix_and_label_rows_are_distinguishable_at_80_and_120_columns() {
    for width in [80u16, 120] {
        for args in ["matrix transcripts --by model", "label transcripts"] {
            let Some(printed) = in_terminal(width, args) else {
                eprintln!("tmux is not installed: skipped");
                return;
            };
            let lines: Vec<&str> = printed.lines().filter(|l| !l.trim().is_empty()).collect();
            let header = lines
                .iter()
                .position(|l| l.starts_with("MODEL") || l.starts_with("TRANSCRIPT"))
                .unwrap_or_else(|| panic!("{args} at {width}: no header:\n{printed}"));
            // The table ends where the summary on stderr begins (in tmux
            // both streams share the screen).
            let rows: Vec<&str> = lines[header + 1..]
                .iter()
                .take_while(|l| !l.starts_with("toolgate:"))
                .copied()
                .collect();
            assert!(rows.len() > 40, "{args} at {width}:\n{printed}");
            for row in &rows {
                assert!(
                    row.chars().count() <= usize::from(width),
                    "{args} at {width}: too wide: {row}"
                );
            }
            let mut firsts = std::collections::HashSet::new();
            for row in &rows {
                let first = row.split("  ").next().unwrap();
                assert!(
                    firsts.insert(first),
                    "{args} at {width}: `{first}` names two rows:\n{printed}"
                );
            }
            if args.starts_with("matrix") {
                // The interval and the rate are never cut.
                assert!(
                    rows.iter().all(|r| r.contains("0.") && r.contains(']')),
                    "{printed}"
                );
            }
        }
    }
}

/// SIGTERM, SIGINT or SIGHUP left the terminal in raw mode on the
/// alternate screen, the mouse captured and the cursor hidden: the shell
/// after a `kill` was unusable. Each now restores it and exits 128 + the
/// signal.
#[test]
fn a_termination_signal_restores_the_terminal() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.json"), r#"{"output": "x"}"#).unwrap();
    for (signal, number) in [("TERM", 15), ("INT", 2), ("HUP", 1)] {
        let name = format!("tg-sig-{}-{signal}", std::process::id());
        let session = Session(name.clone());
        let pid_file = dir.path().join(format!("{signal}.pid"));
        // `exec` in a subshell: its pid is the inspector's.
        let command = format!(
            "sh -c 'echo $$ > {pid}; exec {bin} inspect {dir} --mouse'; \
             echo EXIT=$?; stty -a | grep -o -- '-icanon' || echo COOKED; sleep 60",
            pid = pid_file.display(),
            bin = env!("CARGO_BIN_EXE_toolgate"),
            dir = dir.path().display(),
        );
        let started = Command::new("tmux")
            .args(["new-session", "-d", "-s", &name, "-x", "120", "-y", "30"])
            .arg(command)
            .status()
            .unwrap();
        assert!(started.success());
        let (listed, s) = wait_for(&session.0, &["Transcripts 1 of 1"]);
        assert!(listed, "the list never showed:\n{s}");
        let pid = std::fs::read_to_string(&pid_file).unwrap();
        let killed = Command::new("kill")
            .args([format!("-{signal}"), pid.trim().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let exit = format!("EXIT={}", 128 + number);
        let (exited, s) = wait_for(&session.0, &[&exit]);
        assert!(exited, "SIG{signal}: no {exit}:\n{s}");
        let (cooked, s) = wait_for(&session.0, &["COOKED"]);
        assert!(cooked, "SIG{signal}: the terminal stayed raw:\n{s}");
        let modes = Command::new("tmux")
            .args([
                "display",
                "-p",
                "-t",
                &name,
                "#{alternate_on} #{mouse_any_flag} #{cursor_flag}",
            ])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&modes.stdout).trim(),
            "0 0 1",
            "SIG{signal}: alternate screen, mouse capture, cursor"
        );
    }
}

/// Detection ran once, at startup: two `zz-model` transcripts added to
/// an empty folder while the inspector ran were judged by the default
/// profile (`reject`), where `toolgate label` detects `bracket` (`pass`,
/// `execute`). Their model is detected again once they land.
#[test]
fn transcripts_added_later_are_judged_by_the_profile_detected_for_them() {
    if Command::new("tmux").arg("-V").output().is_err() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let session = inspect_in_tmux("later", dir.path(), 160);
    let (listed, s) = wait_for(&session.0, &["Transcripts 0 of 0"]);
    assert!(listed, "the list never showed:\n{s}");
    let tools = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]"#;
    for i in 1..=2 {
        std::fs::write(
            dir.path().join(format!("b{i}.json")),
            format!(
                r#"{{"id": "b{i}", "model": "zz-model", "tools": {tools}, "output": "[get_weather(city=\"Paris\")]"}}"#
            ),
        )
        .unwrap();
    }
    let (judged, s) = wait_for(
        &session.0,
        &["b1 ", "zz-model", "pass", "execute", "bracket"],
    );
    assert!(judged, "b1 was not judged by the detected profile:\n{s}");
    let (said, s) = wait_for(
        &session.0,
        &["judged by bracket (detected from 2 transcripts)"],
    );
    assert!(said, "{s}");
}
