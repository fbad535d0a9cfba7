//! Server findings in the inspector: a `!` marker in the list and the
//! findings in Detail, apart from the labels. Uses the bundled
//! `transcripts/findings/` through the real engine; skips when absent.
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::KeyCode;
use toolgate_testkit::inspector::*;
use toolgate_tui::{Event, WatchEvent};
use toolgate_validator::{Engine, Profile};

#[test]
fn findings_show_as_a_marker_and_in_detail() {
    let Some(root) = bundled_root("findings") else {
        return;
    };
    let engine = Engine::new(Profile::default());
    let mut app = app_for(&root, "findings", &engine);
    settle_with(&mut app, &engine);
    app.update(Event::Watch(WatchEvent::Started(vec![root])));
    assert_eq!(app.rows.len(), 10);

    key(&mut app, KeyCode::Char('/'));
    keys(&mut app, "server_dropped");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.current().unwrap().entry.transcript.id, "server_dropped");
    let buf = render(&app, 120, 40);
    let text = screen(&buf);
    let row = text
        .lines()
        .find(|l| l.contains("server_dropped") && l.contains("qwen3-8b"))
        .unwrap_or_else(|| panic!("no list row for server_dropped:\n{text}"));
    assert!(row.contains("▶! server_dropped"), "{row}");
    assert!(
        text.contains("! server server_dropped: the raw text holds 1 call(s)"),
        "{text}"
    );
}

/// Issue 22: a transcript without `tools` is marked `?` in the list, the
/// list's title counts such rows, and Detail says why nothing executes.
#[test]
fn tools_unknown_shows_as_a_marker_a_count_and_in_detail() {
    let Some(root) = bundled_root("findings") else {
        return;
    };
    let engine = Engine::new(Profile::default());
    let mut app = app_for(&root, "findings", &engine);
    settle_with(&mut app, &engine);
    app.update(Event::Watch(WatchEvent::Started(vec![root])));
    key(&mut app, KeyCode::Char('/'));
    keys(&mut app, "tools_unknown");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.current().unwrap().entry.transcript.id, "tools_unknown");
    let text = screen(&render(&app, 160, 40));
    assert!(text.contains("· 1 tools unknown"), "{text}");
    let row = text
        .lines()
        .find(|l| l.contains("tools_unknown") && l.contains("qwen3-8b"))
        .unwrap_or_else(|| panic!("no list row for tools_unknown:\n{text}"));
    assert!(row.contains("▶? tools_unknown"), "{row}");
    assert!(
        text.contains("! capture tools_unknown: the transcript has no `tools`"),
        "{text}"
    );
}
