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

// ---- item 1: PR review output ----

/// A temp copy of a few bundled transcripts in `dir/corpus/`: two with an
/// edited stored label, one with no stored labels, one unchanged.
fn changed_corpus(dir: &Path) {
    let corpus = dir.join("corpus");
    fs::create_dir_all(&corpus).unwrap();
    let bundled = root().join("transcripts/hermes");
    let edits: [(&str, Option<(&str, &str)>); 4] = [
        ("not_allowlisted_tool.json", Some(("hermes", "pass"))),
        ("parallel_two_cities.json", Some(("hermes", "no_call"))),
        ("nullable_type_pass.json", None),
        ("pattern_violation.json", Some(("", ""))),
    ];
    for (name, edit) in edits {
        let mut t: Value =
            serde_json::from_str(&fs::read_to_string(bundled.join(name)).unwrap()).unwrap();
        match edit {
            Some(("", _)) => {}
            Some((mode, label)) => t["labels"][mode] = json!(label),
            None => {
                t.as_object_mut().unwrap().remove("labels");
            }
        }
        fs::write(corpus.join(name), serde_json::to_string_pretty(&t).unwrap()).unwrap();
    }
}

#[test]
fn check_markdown_is_a_reviewers_summary() {
    let dir = tempfile::tempdir().unwrap();
    changed_corpus(dir.path());
    let out = toolgate(
        dir.path(),
        &[
            "label",
            "--check",
            "--require-labels",
            "--format",
            "markdown",
            "--link-base",
            "https://github.com/o/r/blob/abc123/",
            "corpus/",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.len() < 65_536, "fits a PR comment");
    insta::assert_snapshot!("check_markdown", text);
}

#[test]
fn check_json_names_the_changed_modes_and_why() {
    let dir = tempfile::tempdir().unwrap();
    changed_corpus(dir.path());
    let out = toolgate(
        dir.path(),
        &["label", "--check", "--format", "jsonl", "corpus/"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let records: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 2, "{}", stdout(&out));
    let r = records
        .iter()
        .find(|r| r["id"] == "not_allowlisted_tool")
        .unwrap();
    let changed = r["changed"].as_array().unwrap();
    assert_eq!(changed.len(), 1);
    assert_eq!(changed[0]["mode"], "hermes");
    assert_eq!(changed[0]["stored"], "pass");
    assert_eq!(changed[0]["now"], "wrong_tool");
    assert!(
        changed[0]["why"]
            .as_str()
            .unwrap()
            .contains("not allowlisted")
    );
    assert!(
        changed[0]["candidate"]
            .as_str()
            .unwrap()
            .contains("cat_file")
    );
    // Still the last key.
    assert_eq!(
        r.as_object()
            .unwrap()
            .keys()
            .next_back()
            .map(String::as_str),
        Some("schema_version")
    );
}

#[test]
fn check_github_annotates_the_transcript_files() {
    let dir = tempfile::tempdir().unwrap();
    changed_corpus(dir.path());
    fs::write(dir.path().join("corpus/broken.json"), "{oops").unwrap();
    let out = toolgate(
        dir.path(),
        &[
            "label",
            "--check",
            "--require-labels",
            "--format",
            "github",
            "corpus/",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "an unreadable file: {}",
        stderr(&out)
    );
    let text = stdout(&out);
    assert!(
        text.lines().any(|l| l.starts_with(
            "::warning file=corpus/not_allowlisted_tool.json,title=toolgate%3A label changed::"
        ) && l.contains("hermes: label pass → wrong_tool")),
        "{text}"
    );
    assert!(
        text.lines().any(
            |l| l.starts_with("::warning file=corpus/nullable_type_pass.json")
                && l.contains("no stored labels")
        ),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("::error file=corpus/broken.json")),
        "{text}"
    );
    // Without --check there are no differences to annotate.
    let out = toolgate(dir.path(), &["label", "--format", "github", "corpus/"]);
    assert_eq!(out.status.code(), Some(2));
}

/// Regression: a newline in a file's name was written as a literal `\n` in
/// `file=`, so the annotation did not land on the file. GitHub decodes
/// `%0A` (and `%2C`, `%3A`, `%25`) in a property; an id's newline in the
/// message stays a visible escape, so it cannot start a command.
#[test]
fn check_github_encodes_a_newline_and_a_comma_in_the_file_property() {
    let dir = tempfile::tempdir().unwrap();
    let mut t = hermes_transcript("x\n::error::injected", "qwen3-8b", "weather", "Oslo");
    t["labels"] = json!({"hermes": "wrong_tool"});
    fs::write(dir.path().join("we\nird,1:2%.json"), t.to_string()).unwrap();
    fs::write(dir.path().join("bad\n,.json"), "{oops").unwrap();
    let out = toolgate(
        dir.path(),
        &[
            "label",
            "--check",
            "--format",
            "github",
            "we\nird,1:2%.json",
            "bad\n,.json",
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    // hermes changed; llama3 and granite were never stored.
    assert_eq!(lines.len(), 4, "{text}");
    assert!(
        lines[0].starts_with(
            "::warning file=we%0Aird%2C1%3A2%25.json,title=toolgate%3A label changed::\
             x\\n::error::injected: mode hermes: label wrong_tool → pass"
        ),
        "{text}"
    );
    assert!(
        lines[3].starts_with("::error file=bad%0A%2C.json,title=toolgate%3A unreadable::"),
        "{text}"
    );
}

/// A transcript without stored labels passed the check with a note.
#[test]
fn require_labels_fails_the_check_on_an_unreviewed_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let t = hermes_transcript("a", "qwen3-8b", "weather", "Oslo");
    fs::write(dir.path().join("a.json"), t.to_string()).unwrap();
    let out = toolgate(dir.path(), &["label", "--check", "a.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = toolgate(
        dir.path(),
        &["label", "--check", "--require-labels", "a.json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--require-labels"),
        "{}",
        stderr(&out)
    );
    assert!(stdout(&out).contains("(absent)"), "{}", stdout(&out));
    let out = toolgate(dir.path(), &["label", "--write", "a.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = toolgate(
        dir.path(),
        &["label", "--check", "--require-labels", "a.json"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Only with --check or --changed.
    let out = toolgate(dir.path(), &["label", "--require-labels", "a.json"]);
    assert_eq!(out.status.code(), Some(2));
    // `labels: null` stores nothing, as an absent member: it failed no
    // check, though `--write` fills it (the fifth probe, stop 42).
    let mut t = hermes_transcript("a", "qwen3-8b", "weather", "Oslo");
    t["labels"] = serde_json::Value::Null;
    fs::write(dir.path().join("a.json"), t.to_string()).unwrap();
    let out = toolgate(
        dir.path(),
        &["label", "--check", "--require-labels", "a.json"],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).contains("(absent)"), "{}", stdout(&out));
}

/// Regression: a transcript without stored labels whose every mode is
/// quiet (`--write` would store `labels: {}`) failed `--require-labels`
/// with exit 1, yet no format named it: only a count on stderr, no
/// annotation in `github`, nothing at all in `jsonl`.
#[test]
fn require_labels_names_an_unlabeled_transcript_with_nothing_to_store_in_every_format() {
    let dir = tempfile::tempdir().unwrap();
    let quiet = json!({"id": "q", "tools": [], "output": "hi"});
    fs::write(dir.path().join("quiet.json"), quiet.to_string()).unwrap();
    let line = json!({"id": "l", "tools": [], "output": "hello"});
    fs::write(dir.path().join("many.jsonl"), format!("{line}\n{line}\n")).unwrap();
    let check = |format: &str| {
        let out = toolgate(
            dir.path(),
            &[
                "label",
                "--check",
                "--require-labels",
                "--format",
                format,
                "quiet.json",
                "many.jsonl",
            ],
        );
        assert_eq!(out.status.code(), Some(1), "{format}: {}", stderr(&out));
        stdout(&out)
    };

    let table = check("table");
    assert!(
        table.contains("quiet.json    q   (every mode)  (absent)  {}"),
        "{table}"
    );
    assert!(
        table.contains("many.jsonl:2  l   (every mode)  (absent)  {}"),
        "{table}"
    );

    let markdown = check("markdown");
    assert!(
        markdown.contains("### [`quiet.json`](quiet.json) · `q`\n\nNo stored labels"),
        "{markdown}"
    );
    assert!(
        markdown.contains("### [`many.jsonl:2`](many.jsonl)"),
        "{markdown}"
    );
    assert!(
        markdown.contains("Every mode is quiet: `label --write` stores an empty `labels` member."),
        "{markdown}"
    );
    assert!(!markdown.contains("| mode |"), "{markdown}");

    let github = check("github");
    let annotations: Vec<&str> = github.lines().collect();
    assert_eq!(annotations.len(), 3, "{github}");
    assert!(
        annotations[0].starts_with(
            "::warning file=quiet.json,title=toolgate%3A no stored labels::q: no stored labels"
        ),
        "{github}"
    );
    assert!(
        annotations[2]
            .starts_with("::warning file=many.jsonl,line=2,title=toolgate%3A no stored labels::"),
        "{github}"
    );

    let jsonl = check("jsonl");
    let records: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), 3, "{jsonl}");
    assert_eq!(records[0]["path"], "quiet.json");
    assert_eq!(records[0]["stored"], Value::Null);
    assert_eq!(records[0]["changed"], json!([]));
    assert_eq!(records[2]["path"], "many.jsonl");
    assert_eq!(records[2]["id"], "l");
}

/// An imported capture cannot store labels, so `--require-labels` lets it
/// pass; the summary said it was failing and counted it with the plain
/// transcripts that do fail, while the exit code and stderr disagreed.
#[test]
fn require_labels_counts_only_transcripts_that_can_store_labels_as_failing() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("corpus")).unwrap();
    fs::copy(
        root().join("examples/captures/anthropic/tool_use.json"),
        dir.path().join("corpus/capture.json"),
    )
    .unwrap();
    let check = [
        "label",
        "--check",
        "--require-labels",
        "--format",
        "markdown",
        "corpus/",
    ];
    let out = toolgate(dir.path(), &check);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let note = "1 without stored labels (in captures that cannot store labels: not compared)";
    assert!(
        stdout(&out).contains(&format!("No label changed in 1 transcript(s); {note}.")),
        "{}",
        stdout(&out)
    );
    assert!(!stdout(&out).contains("failing"), "{}", stdout(&out));
    assert!(stderr(&out).contains(note), "{}", stderr(&out));

    let t = hermes_transcript("a", "qwen3-8b", "weather", "Oslo");
    fs::write(dir.path().join("corpus/a.json"), t.to_string()).unwrap();
    let out = toolgate(dir.path(), &check);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let note = "2 without stored labels (1 failing: `--require-labels`; \
                1 in captures that cannot store labels, not compared)";
    assert!(stdout(&out).contains(note), "{}", stdout(&out));
    assert!(
        stderr(&out).contains(&note.replace('`', "")),
        "{}",
        stderr(&out)
    );
}

/// `toolgate import`'s output is toolgate's own format, yet its `import`
/// member made `label --write` take it for the provider's capture: nothing
/// was stored ("toolgate import them first"), `--check` stayed failing
/// forever and `--require-labels` let every unlabeled import pass.
#[test]
fn import_output_stores_labels_and_is_required_to() {
    let dir = tempfile::tempdir().unwrap();
    let capture = root().join("examples/captures/anthropic/tool_use.json");
    let capture = capture.to_str().unwrap();
    let out = toolgate(dir.path(), &["import", capture, "--out", "imported"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let check = ["label", "--check", "--require-labels", "imported/"];
    let out = toolgate(dir.path(), &check);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("1 without stored labels (failing: --require-labels)"),
        "{}",
        stderr(&out)
    );

    let out = toolgate(dir.path(), &["label", "--write", "imported/"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("not stored"), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("stored labels of 1 transcript(s) in 1 file(s)"),
        "{}",
        stderr(&out)
    );
    let written = fs::read_to_string(dir.path().join("imported/tool_use.jsonl")).unwrap();
    let t: Value = serde_json::from_str(written.trim()).unwrap();
    assert!(t["labels"].is_object(), "{written}");
    assert_eq!(t["import"]["from"], "anthropic", "{written}");
    let out = toolgate(dir.path(), &check);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // A stored label that no longer holds is rewritten, then checks clean.
    let stale = written.replace(
        r#""labels": {"native": "pass"}"#,
        r#""labels": {"native": "truncation"}"#,
    );
    assert_ne!(stale, written);
    fs::write(dir.path().join("imported/tool_use.jsonl"), &stale).unwrap();
    let out = toolgate(dir.path(), &["label", "--check", "imported/"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = toolgate(dir.path(), &["label", "--write", "imported/"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = toolgate(dir.path(), &["label", "--check", "imported/"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// The `run:` steps of a GitHub Actions workflow, in order: (step name,
/// script). A block (`run: |`) is the lines indented below it.
fn workflow_runs(yaml: &str) -> Vec<(String, String)> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out = Vec::new();
    let mut name = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim_start().trim_start_matches("- ");
        let indent = line.len() - line.trim_start().len();
        if let Some(n) = trimmed.strip_prefix("name: ") {
            name = n.to_string();
        }
        if let Some(script) = trimmed.strip_prefix("run: ") {
            if script.trim() == "|" {
                let mut block = String::new();
                while i + 1 < lines.len() {
                    let next = lines[i + 1];
                    let next_indent = next.len() - next.trim_start().len();
                    if !next.trim().is_empty() && next_indent <= indent {
                        break;
                    }
                    block.push_str(next.trim_start());
                    block.push('\n');
                    i += 1;
                }
                out.push((name.clone(), block));
            } else {
                out.push((name.clone(), script.to_string()));
            }
        }
        i += 1;
    }
    out
}

#[test]
fn the_example_workflow_runs_its_toolgate_steps() {
    let yaml = fs::read_to_string(root().join("examples/ci/toolgate-labels.yml")).unwrap();
    let runs = workflow_runs(&yaml);
    let toolgate_runs: Vec<&(String, String)> = runs
        .iter()
        .filter(|(_, s)| s.lines().any(|l| l.trim_start().starts_with("toolgate ")))
        .collect();
    assert_eq!(toolgate_runs.len(), 2, "{runs:?}");
    let corpus = yaml
        .lines()
        .find_map(|l| l.trim().strip_prefix("CORPUS: "))
        .unwrap()
        .to_string();
    assert_eq!(corpus, "transcripts/");

    let dir = tempfile::tempdir().unwrap();
    changed_corpus(dir.path());
    fs::rename(dir.path().join("corpus"), dir.path().join("transcripts")).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_toolgate")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let run_steps = |dir: &Path| -> (String, Vec<String>) {
        let output_file = dir.join("github_output");
        fs::write(&output_file, "").unwrap();
        let mut logs = Vec::new();
        for (name, script) in &toolgate_runs {
            let out = std::process::Command::new("sh")
                .args(["-c", script])
                .current_dir(dir)
                .env("PATH", &path)
                .env("CORPUS", &corpus)
                .env("GITHUB_OUTPUT", &output_file)
                .env("GITHUB_SERVER_URL", "https://github.com")
                .env("GITHUB_REPOSITORY", "o/r")
                .env("GITHUB_SHA", "abc123")
                .env_remove("COLUMNS")
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(0),
                "step `{name}`: {}",
                stderr(&out)
            );
            logs.push(stdout(&out));
        }
        (fs::read_to_string(&output_file).unwrap(), logs)
    };
    let (outputs, logs) = run_steps(dir.path());
    assert_eq!(outputs.trim(), "status=1");
    let review = fs::read_to_string(dir.path().join("label-review.md")).unwrap();
    assert!(
        review
            .contains("(https://github.com/o/r/blob/abc123/transcripts/not_allowlisted_tool.json)"),
        "{review}"
    );
    assert!(review.contains("**`wrong_tool`**"), "{review}");
    assert!(
        logs[1].contains("::warning file=transcripts/parallel_two_cities.json"),
        "{}",
        logs[1]
    );

    // Accepted and stored: the check passes and nothing is annotated.
    let out = toolgate(dir.path(), &["label", "--write", "transcripts/"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let (outputs, logs) = run_steps(dir.path());
    assert_eq!(outputs.trim(), "status=0");
    assert_eq!(logs[1], "");
}

#[cfg(unix)]
#[test]
fn the_example_pre_commit_hook_refuses_changed_labels() {
    let dir = tempfile::tempdir().unwrap();
    changed_corpus(dir.path());
    let hook = root().join("examples/ci/pre-commit");
    let run = || {
        std::process::Command::new("sh")
            .arg(&hook)
            .current_dir(dir.path())
            .env("TOOLGATE", env!("CARGO_BIN_EXE_toolgate"))
            .env("TOOLGATE_CORPUS", "corpus/")
            .output()
            .unwrap()
    };
    let out = run();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("label --write corpus/"),
        "{}",
        stderr(&out)
    );
    let out = toolgate(dir.path(), &["label", "--write", "corpus/"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = run();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

// ---- item 5: the smaller ones ----

/// The help said 16, the parser takes up to 256.
#[test]
fn jobs_help_says_what_the_parser_accepts() {
    let dir = tempfile::tempdir().unwrap();
    let help = stdout(&toolgate(dir.path(), &["label", "--help"]));
    let jobs: String = help
        .split("--jobs")
        .nth(1)
        .unwrap()
        .split("--")
        .next()
        .unwrap()
        .to_string();
    assert!(jobs.contains("1 to 256"), "{jobs}");
    let t = hermes_transcript("a", "qwen3-8b", "weather", "Oslo");
    fs::write(dir.path().join("a.json"), t.to_string()).unwrap();
    let out = toolgate(dir.path(), &["label", "--jobs", "256", "a.json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let out = toolgate(dir.path(), &["label", "--jobs", "257", "a.json"]);
    assert_eq!(out.status.code(), Some(2));
}

/// A second import into the same --out silently replaced the first.
#[test]
fn a_second_import_into_the_same_out_is_refused_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let capture = root().join("examples/captures/anthropic/tool_use.json");
    let capture = capture.to_str().unwrap();
    let out = toolgate(dir.path(), &["import", capture, "--out", "imported"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let written = dir.path().join("imported/tool_use.jsonl");
    fs::write(&written, "kept\n").unwrap();
    let out = toolgate(dir.path(), &["import", capture, "--out", "imported"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("exists"), "{}", stderr(&out));
    assert!(stderr(&out).contains("--force"), "{}", stderr(&out));
    assert_eq!(fs::read_to_string(&written).unwrap(), "kept\n");
    let out = toolgate(
        dir.path(),
        &["import", capture, "--out", "imported", "--force"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_ne!(fs::read_to_string(&written).unwrap(), "kept\n");
}

/// "Address already in use" did not say which address.
#[test]
fn a_busy_listen_address_is_named() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = toolgate(
        dir.path(),
        &[
            "proxy",
            "--upstream",
            "http://127.0.0.1:9/v1",
            "--listen",
            &addr,
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&addr), "{}", stderr(&out));
    let t = hermes_transcript("a", "qwen3-8b", "weather", "Oslo");
    fs::write(dir.path().join("a.json"), t.to_string()).unwrap();
    let out = toolgate(dir.path(), &["mock-upstream", ".", "--listen", &addr]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains(&addr), "{}", stderr(&out));
}

/// README: "every JSON record ends with schema_version"; it was not so for
/// `parse --stream` events and the `matrix --format json` document.
#[test]
fn stream_events_and_the_matrix_document_end_with_the_schema_version() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("tools.json"), TOOLS).unwrap();
    let out = toolgate_stdin(
        dir.path(),
        &[
            "parse",
            "--stream",
            "--profile",
            "hermes",
            "--tools",
            "tools.json",
        ],
        Some(
            r#"Let me check. <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>"#,
        ),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    let events: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(events.len() >= 3, "{text}");
    for e in &events {
        let last = e.as_object().unwrap().keys().next_back().cloned();
        assert_eq!(last.as_deref(), Some("schema_version"), "{e}");
    }
    assert_eq!(events.last().unwrap()["event"], "end");

    let t = hermes_transcript("a", "qwen3-8b", "weather", "Oslo");
    fs::write(dir.path().join("a.json"), t.to_string()).unwrap();
    for args in [
        vec!["matrix", "a.json", "--format", "json"],
        vec![
            "matrix",
            "a.json",
            "--compare",
            "a.json",
            "--format",
            "json",
        ],
    ] {
        let out = toolgate(dir.path(), &args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
        let last = doc.as_object().unwrap().keys().next_back().cloned();
        assert_eq!(last.as_deref(), Some("schema_version"), "{args:?}");
    }
    // `flag` says what it flags: `inconclusive` (the old name kept).
    let out = toolgate(dir.path(), &["matrix", "a.json", "--format", "json"]);
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let cell = &doc["cells"][0];
    assert_eq!(cell["inconclusive"], true, "{cell}");
    assert_eq!(cell["flag"], cell["inconclusive"]);
}

/// A proxy recording cut short by a client disconnect was scored like a
/// real answer (its partial output a `truncation` or `no_call`).
#[test]
fn recordings_cut_short_are_not_scored_as_model_answers() {
    let dir = tempfile::tempdir().unwrap();
    let mut whole = hermes_transcript("whole", "qwen3-8b", "weather", "Oslo");
    whole["proxy"] =
        json!({"mode": "observe", "served": true, "error": null, "client_disconnected": false});
    let mut gone = hermes_transcript("gone", "qwen3-8b", "weather", "Oslo");
    gone["output"] = json!(r#"<tool_call>{"name": "get_wea"#);
    gone["proxy"] =
        json!({"mode": "observe", "served": true, "error": null, "client_disconnected": true});
    let mut failed = hermes_transcript("failed", "qwen3-8b", "weather", "Oslo");
    failed["output"] = json!("");
    failed["proxy"] = json!({"mode": "observe", "served": false, "error": "upstream timed out", "client_disconnected": false});
    let text = format!("{whole}\n{gone}\n{failed}\n");
    fs::write(dir.path().join("rec.jsonl"), text).unwrap();

    let out = toolgate(dir.path(), &["label", "--format", "jsonl", "rec.jsonl"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let ids: Vec<String> = stdout(&out)
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids, ["whole"]);
    assert!(
        stderr(&out).contains("2 proxy recording(s) cut short"),
        "{}",
        stderr(&out)
    );

    let out = toolgate(dir.path(), &["matrix", "rec.jsonl", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(doc["cells"][0]["n"], 1, "{doc}");
    assert_eq!(doc["cells"][0]["passes"], 1);
    assert!(stderr(&out).contains("cut short"), "{}", stderr(&out));
}

/// A check over an empty folder passed: nothing was checked.
#[test]
fn a_check_of_nothing_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("empty")).unwrap();
    let out = toolgate(dir.path(), &["label", "--check", "empty"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no transcript to check"),
        "{}",
        stderr(&out)
    );
}

/// `label`'s table cut the transcript path to 60 characters from the right
/// even when piped, losing the file name; model names were cut at 30.
#[test]
fn a_pipe_gets_whole_cells() {
    let dir = tempfile::tempdir().unwrap();
    let deep = "a-rather-long-directory-name/another-long-directory-name-here/yet-more";
    fs::create_dir_all(dir.path().join(deep)).unwrap();
    let model = "an-organisation/a-very-long-model-name-for-testing-v1.2-instruct-awq";
    let t = hermes_transcript("a", model, "weather", "Oslo");
    let path = format!("{deep}/the_file_name_that_tells_rows_apart.json");
    fs::write(dir.path().join(&path), t.to_string()).unwrap();
    let out = toolgate(dir.path(), &["label", "."]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("./{path}")), "{text}");
    assert!(text.contains(model), "{text}");
    let out = toolgate(dir.path(), &["matrix", ".", "--by", "model"]);
    assert!(stdout(&out).contains(model), "{}", stdout(&out));
}
