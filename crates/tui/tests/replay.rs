//! The store keeps a summary of each transcript; the views of the selected
//! one show its whole replay, made again (on the UI thread for a small
//! transcript, on a worker otherwise).
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::KeyCode;
use toolgate_testkit::inspector::*;
use toolgate_tui::{App, Event, Job, Replayer};

fn corpus() -> Vec<(&'static str, String)> {
    vec![
        ("a.json", transcript("chat", "qwen3-8b", "chat", "Hi!", "")),
        (
            "b.json",
            transcript(
                "weather",
                "qwen3-8b",
                "weather",
                "<tool name=\"get_weather\">{\"city\": \"Antwerp\"}</tool>",
                "",
            ),
        ),
    ]
}

/// An app over `files`, loaded by hand as the run loop does but without
/// handing it a replayer: every replay of a selected transcript is a job.
fn loaded_without_replayer(files: &[(&str, String)]) -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        std::fs::write(dir.path().join(name), body).unwrap();
    }
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut app = App::new(
        vec![(root, "transcripts".into())],
        Fake.modes(),
        "default".into(),
        "tag",
    );
    loop {
        let jobs = app.take_jobs();
        if jobs.is_empty() {
            break;
        }
        for job in jobs {
            app.update(toolgate_tui::worker::execute(job, &Fake));
        }
    }
    app.update(Event::Tick);
    (dir, app)
}

#[test]
fn the_detail_of_the_selected_transcript_shows_its_whole_replay() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(app.current().unwrap().entry.transcript.id, "weather");
    let text = screen(&render(&app, 160, 60));
    // Candidates, gates and calls come from the whole replay, not the
    // summary the store keeps.
    assert!(text.contains("candidates (1)"), "{text}");
    assert!(text.contains("#1 output"), "{text}");
    assert!(text.contains("name get_weather"), "{text}");
    assert!(
        text.contains("✓ schema    arguments pass the schema"),
        "{text}"
    );
    assert!(text.contains("normalized calls"), "{text}");
    // The modes table's gates too.
    assert!(text.contains("tag    1    –✓✓✓✓✓ execute pass"), "{text}");
    assert_eq!(app.current_mode().unwrap().candidates.len(), 1);
    // Only the selected row carries a whole replay.
    let whole: Vec<bool> = app.rows.iter().map(|r| r.replay().is_some()).collect();
    assert_eq!(whole, [false, true]);
    // Back up: the first transcript's, the second's given back.
    key(&mut app, KeyCode::Char('k'));
    let whole: Vec<bool> = app.rows.iter().map(|r| r.replay().is_some()).collect();
    assert_eq!(whole, [true, false]);
}

#[test]
fn without_a_replayer_the_views_say_they_are_replaying_until_the_job_answers() {
    let (_dir, mut app) = loaded_without_replayer(&corpus());
    key(&mut app, KeyCode::Char('j'));
    // The first row's replay was asked for first; one replay at a time.
    let first = app.take_replay().unwrap();
    assert!(matches!(&first, Job::Replay(a) if a.0.transcript.id == "chat"));
    assert_eq!(app.take_replay(), None);
    let text = screen(&render(&app, 160, 60));
    assert!(text.contains("replaying this transcript…"), "{text}");
    assert!(!text.contains("candidates ("), "{text}");
    // The list is whole meanwhile: it reads the summaries.
    assert!(text.contains("weather"), "{text}");
    assert_eq!(app.current().unwrap().label.unwrap().as_str(), "pass");
    // Calls are not copied from a replay not made yet (the output is).
    keys(&mut app, "yc");
    assert_eq!(
        app.message.as_deref(),
        Some("not copied: replaying this transcript…")
    );
    assert!(app.take_effects().is_empty());
    app.message = None;

    // The answer for the first row comes; the selected one is asked next.
    app.update(toolgate_tui::worker::execute(first, &Fake));
    let second = app.take_replay().unwrap();
    assert!(matches!(&second, Job::Replay(a) if a.0.transcript.id == "weather"));
    app.update(toolgate_tui::worker::execute(second, &Fake));
    let text = screen(&render(&app, 160, 60));
    assert!(!text.contains("replaying this transcript…"), "{text}");
    assert!(text.contains("candidates (1)"), "{text}");
    assert!(text.contains("name get_weather"), "{text}");
    // Going back needs no replay: the last few are kept.
    key(&mut app, KeyCode::Char('k'));
    assert_eq!(app.take_replay(), None);
    assert!(app.current().unwrap().replay().is_some());
}

#[test]
fn a_big_transcript_is_replayed_on_a_worker_even_with_a_replayer() {
    let big = format!(
        "{}<tool name=\"get_weather\">{{\"city\": \"Ghent\"}}</tool>",
        "x".repeat(100 * 1024)
    );
    let (_dir, mut app, job) = replayed_on_a_worker(transcript("big", "m", "t", &big, ""), "big");
    app.update(toolgate_tui::worker::execute(job, &Fake));
    let text = screen(&render(&app, 160, 60));
    assert!(text.contains("name get_weather"), "{text}");
}

/// The corpus and `extra` (the third row, transcript `id`) loaded with a
/// replayer: the first row's replay is made on this thread; selecting the
/// third asks a worker for its replay, and the views say so meanwhile.
/// The app and the replay job asked for.
fn replayed_on_a_worker(extra: String, id: &str) -> (tempfile::TempDir, App, Job) {
    let mut files = corpus();
    files.push(("c.json", extra));
    let (dir, mut app) = loaded(&files);
    assert_eq!(
        app.take_replay(),
        None,
        "the small first row: on this thread"
    );
    keys(&mut app, "jj");
    assert_eq!(app.current().unwrap().entry.transcript.id, id);
    let job = app
        .take_replay()
        .unwrap_or_else(|| panic!("a replay job for `{id}`"));
    let text = screen(&render(&app, 160, 60));
    assert!(text.contains("replaying this transcript…"), "{text}");
    (dir, app, job)
}

/// Regression: the cost that keeps a selected transcript's replay on the UI
/// thread counted its texts only, not its tool definitions, whose compiling
/// is the slow part: a short output with 5,000 tools froze the inspector
/// for a second on every `j`. Its output is a few bytes; its tools, some
/// 300 KB, send it to a worker.
#[test]
fn a_transcript_with_many_tools_is_replayed_on_a_worker() {
    let tools: Vec<String> = (0..5_000)
        .map(|i| {
            format!(
                r#"{{"name": "t{i}", "description": "tool number {i}", "parameters": {{"type": "object", "properties": {{"city": {{"type": "string"}}}}}}}}"#
            )
        })
        .collect();
    let many = format!(
        "{{\"id\": \"many\", \"model\": \"m\", \"task\": \"t\", \"tools\": [{}], \"output\": \"<tool_call>{{\\\"name\\\": \\\"t0\\\", \\\"arguments\\\": {{}}}}</tool_call>\"}}\n",
        tools.join(", ")
    );
    let (_dir, mut app, job) = replayed_on_a_worker(many, "many");
    assert_eq!(app.current().unwrap().entry.transcript.tools.len(), 5_000);
    assert!(matches!(&job, Job::Replay(a) if a.0.transcript.id == "many"));
    assert!(app.current().unwrap().replay().is_none());
    app.update(toolgate_tui::worker::execute(job, &Fake));
    assert!(app.current().unwrap().replay().is_some());
    let text = screen(&render(&app, 160, 60));
    assert!(!text.contains("replaying this transcript…"), "{text}");
}
