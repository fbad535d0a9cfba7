//! Regression tests for the inspector defects of issue 10 item 4 and the
//! unknown-name de-duplication of issue 9 item 10; each failed before its fix.
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::KeyCode;
use std::time::{Duration, Instant};
use toolgate_testkit::inspector::*;
use toolgate_tui::{Entry, Event, Job, Replayer, WatchEvent};

const EXPECT: &str = r#", "expect": {"calls": [{"name": "get_weather"}]}"#;
const CALL: &str = "<tool name=\"get_weather\">{\"city\": \"Antwerp\"}</tool>";

fn many(n: usize, pass_every: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| {
            let output = if i % pass_every == 0 { CALL } else { "no call" };
            (
                format!("t{i:03}.json"),
                transcript(&format!("t{i:03}"), "m", "t", output, EXPECT),
            )
        })
        .collect()
}

fn refs(files: &[(String, String)]) -> Vec<(&str, String)> {
    files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect()
}

#[test]
fn a_filter_applied_while_scrolled_down_shows_a_full_page() {
    // 60 transcripts, every fifth a pass: `G`, then `f label:pass` Enter.
    let files = many(60, 5);
    let (_dir, mut app) = loaded(&refs(&files));
    sized(&mut app, 120, 40);
    key(&mut app, KeyCode::Char('G'));
    assert!(app.list.top > 0);
    key(&mut app, KeyCode::Char('f'));
    type_prompt(&mut app, "label:pass");
    assert_eq!(app.rows.len(), 12);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("Transcripts 12 of 60"), "{text}");
    let shown = text.lines().filter(|l| l.contains(" t0")).count();
    assert_eq!(shown, 12, "every matching row fits and is shown:\n{text}");
    assert_eq!(app.list.top, 0);
}

#[test]
fn m_never_steps_onto_native_for_a_transcript_without_tool_calls() {
    let files = vec![(
        "a.json".to_string(),
        transcript("plain", "m", "t", CALL, EXPECT),
    )];
    let (_dir, mut app) = loaded(&refs(&files));
    assert_eq!(app.mode_name(), "tag");
    key(&mut app, KeyCode::Char('m'));
    assert_eq!(app.mode.as_deref(), Some("hermes"));
    key(&mut app, KeyCode::Char('m'));
    assert_eq!(
        app.mode, None,
        "past hermes: follow the profile, not native"
    );
    // Backwards from the profile's mode (tag) wraps to the last mode run.
    key(&mut app, KeyCode::Char('M'));
    assert_eq!(app.mode.as_deref(), Some("hermes"), "not native");
    key(&mut app, KeyCode::Char('M'));
    assert_eq!(app.mode.as_deref(), Some("tag"));
    key(&mut app, KeyCode::Char('M'));
    assert_eq!(app.mode, None);
    assert!(
        app.current_mode().is_some(),
        "every step lands on a mode run"
    );
}

#[test]
fn gates_that_were_not_checked_show_a_dash() {
    // tag finds a call (primary: the fake engine says intent does "not
    // apply"); hermes finds nothing, so it checks nothing.
    let files = vec![(
        "a.json".to_string(),
        transcript("one", "m", "t", CALL, EXPECT),
    )];
    let (_dir, mut app) = loaded(&refs(&files));
    sized(&mut app, 120, 40);
    let buf = render(&app, 120, 40);
    let text = screen(&buf);
    let row = |mode: &str| {
        text.lines()
            .find(|l| {
                l.contains(&format!(" {mode} ")) && l.contains("no_call")
                    || l.contains(&format!("▶{mode} "))
            })
            .unwrap_or_else(|| panic!("{mode} row:\n{text}"))
            .to_string()
    };
    assert!(row("tag").contains("–✓✓✓✓✓"), "{}", row("tag"));
    // (The fake fails hermes' intent gate even without candidates; the real
    // validator passes every gate "no candidates". A failure always shows.)
    assert!(row("hermes").contains("✗–––––"), "{}", row("hermes"));
    // The detail pane says the same.
    assert!(text.contains("– intent"), "{text}");
}

#[test]
fn accept_all_reports_every_file_written() {
    let files = vec![
        (
            "a.json".to_string(),
            transcript("a", "m", "t", CALL, EXPECT),
        ),
        (
            "b.json".to_string(),
            transcript("b", "m", "t", CALL, EXPECT),
        ),
    ];
    let (_dir, mut app) = loaded(&refs(&files));
    keys(&mut app, "aa");
    assert_eq!(app.message.as_deref(), Some("writing labels to 2 files…"));
    settle(&mut app);
    assert_eq!(
        app.message.as_deref(),
        Some("wrote labels of 2 transcripts to 2 files")
    );
}

/// An Anthropic request/response pair: a provider's capture, converted on
/// load, that `label --write` does not rewrite.
const ANTHROPIC_PAIR: &str = r#"{"request":{"model":"claude-sonnet-4","max_tokens":100,"tools":[{"name":"get_weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],"messages":[{"role":"user","content":"hi"}]},"response":{"id":"msg_1","type":"message","role":"assistant","model":"claude-sonnet-4","content":[{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],"stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":9}}}"#;

/// The inspector wrote `labels` into providers' capture files that
/// `label --write` refuses (`toolgate_batch::storable`): an Anthropic
/// pair was rewritten, and since it still read as never labeled, accepting
/// it could repeat forever. Accept (`a a`) and the review's accept now skip
/// them, leave their bytes alone and say why.
#[test]
fn accept_leaves_a_providers_capture_alone_and_says_why() {
    let files = vec![
        (
            "a.json".to_string(),
            transcript("a", "m", "t", CALL, EXPECT),
        ),
        ("pair.json".to_string(), ANTHROPIC_PAIR.to_string()),
    ];
    let (dir, mut app) = loaded(&refs(&files));
    let pair = path_in(dir.path(), "pair.json");
    assert_eq!(app.rows.len(), 2);
    let why = "their files are captures in another format (toolgate import them first)";

    keys(&mut app, "aa");
    let jobs = app.take_jobs();
    assert!(
        matches!(&jobs[..], [Job::WriteLabels { path, .. }] if *path == path_in(dir.path(), "a.json")),
        "{jobs:?}"
    );
    for job in jobs {
        app.update(toolgate_tui::worker::execute(job, &Fake));
    }
    settle(&mut app);
    assert_eq!(
        app.message.as_deref(),
        Some(
            format!(
                "wrote labels of 1 transcript to transcripts/a.json; 1 transcript not stored: {why}"
            )
            .as_str()
        )
    );
    assert_eq!(std::fs::read_to_string(&pair).unwrap(), ANTHROPIC_PAIR);

    // Again: nothing is written, and the status line says why.
    keys(&mut app, "aa");
    assert!(app.take_jobs().is_empty());
    assert_eq!(
        app.message.as_deref(),
        Some(format!("1 transcript not stored: {why}").as_str())
    );

    // The review's accept follows the same rule.
    key(&mut app, KeyCode::Char('r'));
    assert_eq!(app.review().unwrap().queue.len(), 1);
    key(&mut app, KeyCode::Char('a'));
    assert!(app.take_jobs().is_empty());
    assert_eq!(
        app.message.as_deref(),
        Some(format!("review: 0 accepted, 0 rejected, 0 skipped; 1 not stored: {why}").as_str())
    );
    settle(&mut app);
    assert_eq!(std::fs::read_to_string(&pair).unwrap(), ANTHROPIC_PAIR);
}

#[test]
fn a_failed_write_is_counted_apart_from_the_written_files() {
    let files = vec![
        (
            "a.json".to_string(),
            transcript("a", "m", "t", CALL, EXPECT),
        ),
        (
            "b.json".to_string(),
            transcript("b", "m", "t", CALL, EXPECT),
        ),
    ];
    let (dir, mut app) = loaded(&refs(&files));
    keys(&mut app, "aa");
    let jobs = app.take_jobs();
    assert_eq!(jobs.len(), 2);
    // b.json disappears before its write.
    std::fs::remove_file(path_in(dir.path(), "b.json")).unwrap();
    for job in jobs {
        app.update(toolgate_tui::worker::execute(job, &Fake));
    }
    let msg = app.message.clone().unwrap();
    assert!(
        msg.starts_with(
            "wrote labels of 1 transcript to transcripts/a.json; could not write 1 file (transcripts/b.json: "
        ),
        "{msg}"
    );
}

#[test]
fn a_long_watcher_error_never_pushes_help_off_the_status_bar() {
    let files = vec![(
        "a.json".to_string(),
        transcript("a", "m", "t", CALL, EXPECT),
    )];
    let (_dir, mut app) = loaded(&refs(&files));
    sized(&mut app, 100, 30);
    let raw = format!(
        "IO error: No space left on device (os error 28) about [\"{}\"]",
        "/very/long/path/".repeat(20)
    );
    app.update(Event::Watch(WatchEvent::Error(raw)));
    let text = screen(&render(&app, 100, 30));
    let status = text.lines().nth(27).unwrap();
    assert!(status.contains("last error: IO error"), "{status}");
    assert!(status.ends_with("│ ? help"), "{status}");
    assert!(status.contains('…'), "the error is cut, visibly: {status}");
}

#[test]
fn unknown_tool_names_are_deduplicated_in_linear_time() {
    // 40,000 distinct unknown names, each found by tag in strict and lenient:
    // the old list scan did 1.6 billion comparisons.
    let n = 40_000;
    let mut output = String::new();
    for i in 0..n {
        output.push_str(&format!("<tool name=\"t{i}\">{{}}</tool>"));
    }
    let body = transcript("many", "m", "t", &output, EXPECT);
    let loaded = toolgate_core::load::load_str(std::path::Path::new("x.json"), &body);
    let t = loaded.into_iter().next().unwrap().unwrap();
    let replay = Fake.replay(&t);
    let start = Instant::now();
    let entry = Entry::new(t, replay);
    let took = start.elapsed();
    assert_eq!(entry.closest.len(), n);
    assert_eq!(entry.closest[0].0, "t0");
    assert_eq!(entry.closest[n - 1].0, format!("t{}", n - 1));
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

#[test]
fn jobs_are_unchanged_by_the_fixes() {
    // Sanity: accepting one transcript still asks for one write.
    let files = vec![(
        "a.json".to_string(),
        transcript("a", "m", "t", CALL, EXPECT),
    )];
    let (_dir, mut app) = loaded(&refs(&files));
    keys(&mut app, "ay");
    let jobs = app.take_jobs();
    assert!(matches!(jobs.as_slice(), [Job::WriteLabels { .. }]));
}

/// Issue 26: the rows of proxy recordings (`<ms>-<pid>-<counter>.jsonl`,
/// one line per attempt, ids `stem:LINE`) looked the same at 120 columns:
/// id and path were cut from the right, where they differ.
#[test]
fn proxy_recording_rows_are_distinguishable_at_120_columns() {
    let mut files = Vec::new();
    for n in 1..=6 {
        let mut body = String::new();
        for _ in 0..2 {
            let output = serde_json::to_string(CALL).unwrap();
            body.push_str(&format!(
                "{{\"model\": \"qwen3-8b-instruct-awq-recorded-by-the-proxy\", \"task\": \"weather\", \"tools\": {TOOLS}, \"output\": {output}, \"proxy\": {{\"mode\": \"observe\"}}}}\n"
            ));
        }
        files.push((
            format!("recordings/2026-11-25/1763900000000-424242-{n:06}.jsonl"),
            body,
        ));
    }
    let (_dir, mut app) = loaded(&refs(&files));
    sized(&mut app, 120, 40);
    let text = screen(&render(&app, 120, 40));
    let rows: Vec<&str> = text
        .lines()
        .filter(|l| l.contains(".jsonl:") && l.contains("execute"))
        .collect();
    assert_eq!(rows.len(), 12, "{text}");
    let mut seen = std::collections::HashSet::new();
    for row in &rows {
        // Without the marker and selection columns.
        let body: String = row.chars().skip(4).collect();
        assert!(seen.insert(body.clone()), "two rows read alike:\n{text}");
        assert!(
            row.contains(":1 ") || row.contains(":2 "),
            "the line number is kept: {row}"
        );
    }
}

/// Accepting wrote labels by JSONL line number into a file that changed
/// since its rows were read (a symlink's target edited outside the watched
/// folder, or a change the watcher missed): the lines had swapped, so the
/// text transcript got the call's labels. The write is now refused, the
/// status line says why, and the file is read again.
#[test]
fn accept_does_not_write_into_a_file_that_changed_since_it_was_read() {
    let call = transcript("callA", "m", "t", CALL, EXPECT);
    let text = transcript(
        "textB",
        "m",
        "t",
        "It is sunny.",
        r#", "expect": {"calls": []}"#,
    );
    let (dir, mut app) = loaded(&[("a.jsonl", format!("{call}{text}"))]);
    let path = path_in(dir.path(), "a.jsonl");
    assert_eq!(app.rows[0].entry.transcript.id, "callA");
    // Swapped behind the inspector's back (no watch event).
    let swapped = format!("{text}{call}");
    std::fs::write(&path, &swapped).unwrap();

    keys(&mut app, "aa");
    let jobs = app.take_jobs();
    assert!(
        matches!(
            &jobs[..],
            [Job::WriteLabels {
                fingerprint: Some(_),
                ..
            }]
        ),
        "{jobs:?}"
    );
    for job in jobs {
        app.update(toolgate_tui::worker::execute(job, &Fake));
    }
    assert_eq!(std::fs::read_to_string(&path).unwrap(), swapped);
    assert_eq!(
        app.message.as_deref(),
        Some(
            "could not write 1 file (transcripts/a.jsonl changed since its rows were read; \
             it is read again: check them and accept again)"
        )
    );
    // Read again: the rows are the file's current lines.
    settle(&mut app);
    assert_eq!(app.rows[0].entry.transcript.id, "textB");
    assert_eq!(app.rows[0].entry.transcript.line, Some(1));

    // Accepting the current rows writes, each transcript its own labels.
    keys(&mut app, "aa");
    settle(&mut app);
    let written = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<serde_json::Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["id"], "textB");
    assert_eq!(lines[0]["labels"], serde_json::json!({}));
    assert_eq!(lines[1]["id"], "callA");
    assert_eq!(lines[1]["labels"], serde_json::json!({"tag": "pass"}));
}
