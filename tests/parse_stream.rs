//! `toolgate parse --stream` end to end (issue 15): for every mode, the
//! mode's `toolgate formats` example behind a line of prose, fed through a
//! pipe in random pieces of 1–9 bytes, ends with exactly what `toolgate
//! parse` prints for the whole text, forwards exactly the prose (no call
//! markup), and forwards it before the input ends.
#![allow(clippy::unwrap_used)]

use serde_json::{Map, Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;
use toolgate_formats::{Input, Strictness};
use toolgate_testkit::generate::Rng;

const PROSE: &str = "Let me check that for you. ";

/// (mode, example) as `toolgate formats --format json` lists them.
fn modes(dir: &Path) -> Vec<(String, String)> {
    let out = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["formats", "--format", "json"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    list.as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["mode"].as_str().unwrap().to_string(),
                m["example"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// Tools that make every call of `example` in `mode` valid: each name with
/// an object schema naming its argument keys (as the format table tests do).
fn tools_for(mode: &str, example: &str) -> Value {
    let extractors = toolgate_formats::builtin();
    let e = extractors.iter().find(|e| e.name() == mode).unwrap();
    let mut tools: Vec<Value> = Vec::new();
    for c in e.extract(&Input::new(example), Strictness::Strict) {
        if let Some(call) = c.call() {
            let props: Map<String, Value> = call
                .arguments
                .keys()
                .map(|k| (k.clone(), json!({})))
                .collect();
            tools.push(json!({"name": call.name,
                "parameters": {"type": "object", "properties": props}}));
        }
    }
    Value::Array(tools)
}

fn batch(dir: &Path, profile: &str, text: &str) -> Value {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(["parse", "--profile", profile, "--tools", "tools.json", "-"])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The events of `parse --stream` fed `text` in pieces of 1–9 bytes, and
/// whether a `text` event had arrived before stdin was closed.
fn stream(dir: &Path, profile: &str, text: &str, rng: &mut Rng) -> (Vec<Value>, bool) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args([
            "parse",
            "--stream",
            "--profile",
            profile,
            "--tools",
            "tools.json",
        ])
        .current_dir(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<Value>();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if tx.send(v).is_err() {
                break;
            }
        }
    });
    let mut stdin = child.stdin.take().unwrap();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let n = (1 + rng.below(9)).min(bytes.len() - i);
        stdin.write_all(&bytes[i..i + n]).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(Duration::from_micros(300));
        i += n;
    }
    // Before closing stdin: wait (bounded) for the first text event.
    let mut events = Vec::new();
    let mut early = false;
    while let Ok(v) = rx.recv_timeout(Duration::from_millis(1500)) {
        let is_text = v["event"] == "text";
        events.push(v);
        if is_text {
            early = true;
            break;
        }
    }
    drop(stdin);
    events.extend(rx.iter());
    reader.join().unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    (events, early)
}

#[test]
fn every_mode_streams_the_prose_early_and_ends_as_batch() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(0x2545f4914f6cdd1d);
    let mut failures = Vec::new();
    let mut executed = 0;
    for (mode, example) in modes(dir.path()) {
        let profile = format!("{mode}.toml");
        std::fs::write(
            dir.path().join(&profile),
            format!("name = \"stream-{mode}\"\nprimary = \"{mode}\"\n"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tools.json"),
            tools_for(&mode, &example).to_string(),
        )
        .unwrap();
        let text = format!("{PROSE}{example}");
        let want = batch(dir.path(), &profile, &text);
        let (events, early) = stream(dir.path(), &profile, &text, &mut rng);
        let mut end = events.last().unwrap().clone();
        assert_eq!(end["event"], "end", "{mode}: {events:?}");
        end.as_object_mut().unwrap().remove("event");
        if end != want {
            failures.push(format!("{mode}: end {end} != parse {want}"));
        }
        let forwarded: String = events
            .iter()
            .filter(|e| e["event"] == "text")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        let opens = events.iter().filter(|e| e["event"] == "open").count();
        let closed = events.iter().filter(|e| e["event"] == "call").count();
        // `native` reads the server's `tool_calls`, never the text, `json`
        // only a whole output that is one call, and `xlam` a bare list only
        // at the start of the output: behind prose their example is text,
        // and all of it is shown.
        if want["decision"] != "execute" {
            if !matches!(mode.as_str(), "native" | "json" | "xlam") {
                failures.push(format!("{mode}: the example does not execute: {want}"));
            }
            if forwarded != text {
                failures.push(format!("{mode}: forwarded {forwarded:?}"));
            }
            continue;
        }
        executed += 1;
        if forwarded != PROSE {
            failures.push(format!("{mode}: forwarded {forwarded:?}, not the prose"));
        }
        if closed != want["calls"].as_array().unwrap().len() {
            failures.push(format!("{mode}: {closed} call events for {want}"));
        }
        // Every mode has openers now (harmony's header tokens, functionary's
        // `<function=` / `>>>` and its v3.2 start rule): the prose is
        // forwarded before the input ends, and the opener announced once.
        if !early || opens != 1 {
            failures.push(format!(
                "{mode}: early text {early}, {opens} open events: {events:?}"
            ));
        }
    }
    assert!(executed > 30, "{executed} modes executed their example");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Issue 15's Done-means for the two modes whose calls have no single fixed
/// opener (harmony: a header token or `to=`; functionary: `<function=`,
/// `>>>`, or a bare v3.2 segment at the start of the output): the prose and
/// part of the call are written in 1–9 byte pieces, and the prose arrives
/// as a `text` event while stdin is still open, before the call is complete.
#[test]
fn harmony_and_functionary_forward_the_prose_before_the_call_is_complete() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(0x9e3779b97f4a7c15);
    let all = modes(dir.path());
    let example = |m: &str| all.iter().find(|(n, _)| n == m).unwrap().1.clone();
    let cases = [
        ("harmony", example("harmony")),
        ("functionary", example("functionary")),
        (
            "functionary",
            ">>>get_time\n{\"city\": \"Paris\"}".to_string(),
        ),
    ];
    for (mode, call) in cases {
        let profile = format!("{mode}.toml");
        std::fs::write(
            dir.path().join(&profile),
            format!("name = \"stream-{mode}\"\nprimary = \"{mode}\"\n"),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("tools.json"),
            tools_for(mode, &call).to_string(),
        )
        .unwrap();
        let text = format!("{PROSE}{call}");
        let want = batch(dir.path(), &profile, &text);
        assert_eq!(want["decision"], "execute", "{mode}: {want}");
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
            .args(["parse", "--stream", "--profile", &profile])
            .args(["--tools", "tools.json"])
            .current_dir(dir.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel::<Value>();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let v: Value = serde_json::from_str(&line.unwrap()).unwrap();
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let mut stdin = child.stdin.take().unwrap();
        let mut write = |bytes: &[u8]| {
            let mut i = 0;
            while i < bytes.len() {
                let n = (1 + rng.below(9)).min(bytes.len() - i);
                stdin.write_all(&bytes[i..i + n]).unwrap();
                stdin.flush().unwrap();
                i += n;
            }
        };
        // The prose and half of the call: the call cannot be complete.
        let cut = PROSE.len() + call.len() / 2;
        write(&text.as_bytes()[..cut]);
        let mut early = String::new();
        let mut before = Vec::new();
        while early.len() < PROSE.len() {
            let Ok(v) = rx.recv_timeout(Duration::from_secs(10)) else {
                break;
            };
            if v["event"] == "text" {
                early.push_str(v["text"].as_str().unwrap());
            }
            before.push(v);
        }
        assert_eq!(
            early, PROSE,
            "{mode}: before the call was complete: {before:?}"
        );
        write(&text.as_bytes()[cut..]);
        drop(stdin);
        let events: Vec<Value> = before.into_iter().chain(rx.iter()).collect();
        reader.join().unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(0));
        let forwarded: String = events
            .iter()
            .filter(|e| e["event"] == "text")
            .map(|e| e["text"].as_str().unwrap())
            .collect();
        assert_eq!(forwarded, PROSE, "{mode}: no call markup forwarded");
        let mut end = events.last().unwrap().clone();
        assert_eq!(end["event"], "end", "{mode}");
        end.as_object_mut().unwrap().remove("event");
        assert_eq!(end, want, "{mode}: the end is what `parse` prints");
        let open: Vec<&Value> = events.iter().filter(|e| e["event"] == "open").collect();
        assert_eq!(open.len(), 1, "{mode}: {events:?}");
        assert_eq!(open[0]["offset"], PROSE.len(), "{mode}");
        assert_eq!(open[0]["modes"], json!([mode]), "{mode}");
    }
}

/// Functionary v3.2's first segment has no token (the generation prompt
/// wrote its `>>>`): an output that starts with `NAME\n{` announces an
/// `open` at byte 0 with the pseudo-token `NAME\n{`, forwards nothing, and
/// ends as `parse` does.
#[test]
fn functionary_v32_first_segment_opens_at_byte_zero() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(0x3c6ef372fe94f82b);
    std::fs::write(
        dir.path().join("functionary.toml"),
        "name = \"stream-functionary\"\nprimary = \"functionary\"\n",
    )
    .unwrap();
    let text = "get_time\n{\"city\": \"Paris\"}>>>get_date\n{}";
    std::fs::write(
        dir.path().join("tools.json"),
        tools_for("functionary", text).to_string(),
    )
    .unwrap();
    let want = batch(dir.path(), "functionary.toml", text);
    assert_eq!(want["decision"], "execute", "{want}");
    assert_eq!(want["calls"].as_array().unwrap().len(), 2, "{want}");
    let (events, early) = stream(dir.path(), "functionary.toml", text, &mut rng);
    assert!(!early, "nothing is forwarded: {events:?}");
    assert!(events.iter().all(|e| e["event"] != "text"), "{events:?}");
    let open: Vec<&Value> = events.iter().filter(|e| e["event"] == "open").collect();
    assert_eq!(
        open,
        [&json!({"event": "open", "offset": 0, "token": "NAME\n{",
                 "modes": ["functionary"], "schema_version": 1})]
    );
    let mut end = events.last().unwrap().clone();
    end.as_object_mut().unwrap().remove("event");
    assert_eq!(end, want);
}

/// `toolgate parse ARGS` with `input` on stdin.
fn parse_with_stdin(args: &[&str], input: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .arg("parse")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from a thread: a refused input is not read to its end.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// Probe bug C: `toolgate parse /dev/zero` grew by about 1.2 GB/s until
/// killed, and `--stream` held a 1 GB input whole. `parse` now reads at
/// most `--max-file-size` (label's option and default) plus one byte.
#[test]
fn parse_refuses_an_input_over_max_file_size_having_read_at_most_one_byte_more() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.txt");
    std::fs::write(&big, vec![b'a'; 2000]).unwrap();
    let exact = dir.path().join("exact.txt");
    std::fs::write(&exact, vec![b'a'; 1024]).unwrap();
    let big = big.to_str().unwrap();
    let exact = exact.to_str().unwrap();
    let refused = |args: &[&str], input: &[u8], shown: &str| {
        let out = parse_with_stdin(args, input);
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains(&format!(
                "{shown}: larger than --max-file-size (1024 bytes): not parsed"
            )),
            "{args:?}: {err}"
        );
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("\"end\""),
            "{args:?}: no end event"
        );
    };
    for stream in [&[][..], &["--stream"][..]] {
        let with = |rest: &[&'static str]| -> Vec<&str> {
            let mut args = vec!["--max-file-size", "1K"];
            args.extend_from_slice(stream);
            args.extend_from_slice(rest);
            args
        };
        refused(&with(&["/dev/zero"]), b"", "/dev/zero");
        refused(&with(&[]), &[b'a'; 5000], "<stdin>");
        refused(&with(&["-"]), &[b'a'; 1025], "<stdin>");
        let mut args = with(&[]);
        args.push(big);
        refused(&args, b"", big);
        refused(
            &with(&["--tools", "/dev/zero", "-"]),
            b"x",
            "tools file /dev/zero",
        );
        // At the limit: parsed.
        let mut args = with(&[]);
        args.push(exact);
        let out = parse_with_stdin(&args, b"");
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let out = parse_with_stdin(&with(&[]), &[b'a'; 1024]);
        assert_eq!(out.status.code(), Some(0), "{stream:?}");
    }
}
