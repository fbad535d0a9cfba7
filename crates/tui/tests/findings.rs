//! Server findings in the inspector: a `!` marker in the list and the
//! findings in Detail, apart from the labels. Uses the bundled
//! `transcripts/findings/` through the real engine; skips when absent.
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::KeyCode;
use toolgate_testkit::inspector::*;
use toolgate_tui::{App, Event, WatchEvent};
use toolgate_validator::{Engine, Profile};

/// The bundled findings, loaded and watched; `None` when absent.
fn findings() -> Option<App> {
    let root = bundled_root("findings")?;
    let engine = Engine::new(Profile::default());
    let mut app = app_for(&root, "findings", &engine);
    settle_with(&mut app, &engine);
    app.update(Event::Watch(WatchEvent::Started(vec![root])));
    Some(app)
}

/// Searches for `id`, which becomes the selected transcript.
fn select(app: &mut App, id: &str) {
    key(app, KeyCode::Char('/'));
    keys(app, id);
    key(app, KeyCode::Enter);
    assert_eq!(app.current().unwrap().entry.transcript.id, id);
}

#[test]
fn findings_show_as_a_marker_and_in_detail() {
    let Some(mut app) = findings() else {
        return;
    };
    assert_eq!(app.rows.len(), 10);
    select(&mut app, "server_dropped");
    let text = screen(&render(&app, 120, 40));
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
    let Some(mut app) = findings() else {
        return;
    };
    select(&mut app, "tools_unknown");
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
