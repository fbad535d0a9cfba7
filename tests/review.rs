//! Issue 26: the review and CI path — label diffs a reviewer can read in a
//! PR, gates that cannot pass by accident, overlapping paths read once,
//! mistyped commands, and the example CI workflow run as written.
#![allow(clippy::unwrap_used)]

mod support;

use serde_json::{Value, json};
use std::fs;
use std::path::Path;
use std::process::Output;
use support::{stderr, stdout, toolgate_stdin};

const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather",
  "description": "Weather for a city",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                 "required": ["city"], "additionalProperties": false}}}]"#;

fn toolgate(dir: &Path, args: &[&str]) -> Output {
    toolgate_stdin(dir, args, None)
}

fn hermes_transcript(id: &str, model: &str, task: &str, city: &str) -> Value {
    json!({
        "id": id,
        "model": model,
        "task": task,
        "tools": serde_json::from_str::<Value>(TOOLS).unwrap(),
        "output": format!(
            r#"<tool_call>{{"name": "get_weather", "arguments": {{"city": "{city}"}}}}</tool_call>"#
        ),
        "expect": {"calls": [{"name": "get_weather"}]},
    })
}

/// The bundled corpus, from the repository root.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

// ---- item 2: gates that cannot pass by accident ----

/// A mistyped `--compare` path made every cell `new` and exited 0: a
/// regression gate that always passed.
#[test]
fn compare_with_a_missing_baseline_exits_2_before_printing() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("new")).unwrap();
    let t = hermes_transcript("a", "qwen3-8b", "weather", "Oslo");
    fs::write(dir.path().join("new/a.json"), t.to_string()).unwrap();
    let out = toolgate(
        dir.path(),
        &[
            "matrix",
            "new",
            "--compare",
            "MISSING",
            "--fail-on-regression",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--compare baseline MISSING"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "", "no table before the error");
}

#[test]
fn compare_with_an_empty_unreadable_or_disjoint_baseline_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    for d in ["new", "empty", "bad", "other"] {
        fs::create_dir(dir.path().join(d)).unwrap();
    }
    let t = hermes_transcript("a", "qwen3-8b", "weather", "Oslo");
    fs::write(dir.path().join("new/a.json"), t.to_string()).unwrap();
    fs::write(dir.path().join("bad/a.json"), "{not json").unwrap();
    let other = hermes_transcript("a", "other-model", "weather", "Oslo");
    fs::write(dir.path().join("other/a.json"), other.to_string()).unwrap();
    for (base, says) in [
        ("empty", "holds no transcript"),
        ("bad", "unreadable"),
        ("other", "shares no cell"),
    ] {
        let out = toolgate(
            dir.path(),
            &[
                "matrix",
                "new",
                "--by",
                "model",
                "--compare",
                base,
                "--fail-on-regression",
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{base}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{base}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{base}: no table before the error");
    }
    // The same run against itself compares and passes.
    let out = toolgate(
        dir.path(),
        &[
            "matrix",
            "new",
            "--by",
            "model",
            "--compare",
            "new",
            "--fail-on-regression",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// A rate gate over nothing read (a mistyped path) passed too.
#[test]
fn fail_under_over_nothing_read_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolgate(dir.path(), &["matrix", "MISSING", "--fail-under", "0.8"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot decide on nothing"),
        "{}",
        stderr(&out)
    );
    assert_eq!(stdout(&out), "");
    let out = toolgate(dir.path(), &["matrix", "--fail-under", "1.5", "MISSING"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("between 0 and 1"), "{}", stderr(&out));
}

#[test]
fn matrix_and_detect_print_no_table_header_for_nothing_read() {
    let dir = tempfile::tempdir().unwrap();
    for cmd in ["matrix", "detect"] {
        let out = toolgate(dir.path(), &[cmd, "MISSING"]);
        assert_eq!(out.status.code(), Some(2), "{cmd}: {}", stderr(&out));
        assert_eq!(stdout(&out), "", "{cmd}");
        assert!(stderr(&out).contains("MISSING"), "{cmd}: {}", stderr(&out));
    }
}

/// `matrix transcripts/ transcripts/hermes` counted the hermes files twice.
#[test]
fn overlapping_paths_are_read_once() {
    let all = |args: &[&str]| -> usize {
        let out = toolgate(root(), args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
        doc["cells"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["n"].as_u64().unwrap() as usize)
            .sum()
    };
    let once = all(&[
        "matrix",
        "transcripts/",
        "--by",
        "model",
        "--format",
        "json",
    ]);
    let twice = all(&[
        "matrix",
        "transcripts/",
        "transcripts/hermes",
        "./transcripts/hermes/",
        "--by",
        "model",
        "--format",
        "json",
    ]);
    assert_eq!(once, twice);

    let dir = tempfile::tempdir().unwrap();
    let t = hermes_transcript("a", "qwen3-8b", "weather", "Oslo");
    fs::write(dir.path().join("f.json"), t.to_string()).unwrap();
    let out = toolgate(
        dir.path(),
        &["label", "--format", "jsonl", "f.json", "f.json", "."],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).lines().count(), 1, "{}", stdout(&out));
}

// ---- item 4: a mistyped command is not a path ----

#[test]
fn a_mistyped_command_is_an_error_with_a_suggestion() {
    let dir = tempfile::tempdir().unwrap();
    let out = toolgate(dir.path(), &["lable", "transcripts/"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did you mean `label`"),
        "{}",
        stderr(&out)
    );
    let out = toolgate(dir.path(), &["matirx"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did you mean `matrix`"),
        "{}",
        stderr(&out)
    );
    // Without a terminal, an unknown word is said to be no command (not
    // "needs a terminal").
    let out = toolgate(dir.path(), &["bogus"]);
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("`bogus` is not a toolgate command"), "{err}");
    assert!(!err.contains("terminal"), "{err}");
}

#[test]
fn an_existing_path_named_like_a_word_is_still_inspected() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("lable")).unwrap();
    let out = toolgate(dir.path(), &["lable"]);
    // The inspector needs a terminal: it gets that far, no typo error.
    assert!(
        !stderr(&out).contains("not a toolgate command"),
        "{}",
        stderr(&out)
    );
}
