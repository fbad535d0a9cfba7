//! The Stream view (`w`): a transcript's recorded `chunks` stepped one delta
//! at a time through the hold-back, and at the last delta streamed vs batch.
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::KeyCode;
use toolgate_testkit::inspector::*;
use toolgate_tui::views::stream::StreamView;
use toolgate_tui::{App, Event, Overlay, WatchEvent};
use toolgate_validator::{Engine, Profile};

/// An app over a bundled directory, judged by the real engine, with `id` selected.
fn bundled(dir: &str, id: &str) -> Option<App> {
    let root = bundled_root(dir)?;
    let engine = Engine::new(Profile::builtin("hermes").unwrap());
    let mut app = app_for(&root, dir, &engine);
    sized(&mut app, 120, 50);
    settle_with(&mut app, &engine);
    app.update(Event::Watch(WatchEvent::Started(vec![root])));
    key(&mut app, KeyCode::Char('/'));
    keys(&mut app, id);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.current().unwrap().entry.transcript.id, id);
    Some(app)
}

#[test]
fn stepping_a_diverging_stream_shows_forwarded_held_opener_and_where_it_parts() {
    let Some(mut app) = bundled("findings", "stream_divergence") else {
        return;
    };
    key(&mut app, KeyCode::Char('w'));
    assert_eq!(app.overlay, Overlay::Stream(StreamView { step: 1 }));
    let text = screen(&render(&app, 120, 50));
    assert!(text.contains("delta 1/6"), "{text}");
    assert!(text.contains("forwarded (10 bytes)"), "{text}");
    assert!(text.contains("opener      not seen yet"), "{text}");
    assert!(!text.contains("end  "), "{text}");

    // `<tool_` is held (it could grow into the opener); `n` and `→` step.
    key(&mut app, KeyCode::Char('n'));
    let text = screen(&render(&app, 120, 50));
    assert!(text.contains("delta 2/6"), "{text}");
    assert!(text.contains("held back (6 bytes)"), "{text}");
    assert!(text.contains("this delta  <tool_"), "{text}");
    key(&mut app, KeyCode::Right);
    let text = screen(&render(&app, 120, 50));
    assert!(
        text.contains("opener      <tool_call> at byte 10"),
        "{text}"
    );
    assert!(text.contains("forwarded (10 bytes)"), "{text}");
    // `this delta` is one sanitized line: the newline shows as `\n`.
    assert!(text.contains(r#"this delta  call>\n{"name":"#), "{text}");

    // Back with `p`, then to the end with `G`: where streamed and batch part.
    key(&mut app, KeyCode::Char('p'));
    assert_eq!(app.overlay, Overlay::Stream(StreamView { step: 2 }));
    key(&mut app, KeyCode::Char('G'));
    assert_eq!(app.overlay, Overlay::Stream(StreamView { step: 6 }));
    let text = screen(&render(&app, 120, 50));
    assert!(text.contains("delta 6/6"), "{text}");
    assert!(
        text.contains("end  streamed ≠ batch: the chunks give 79 bytes, the recorded output has 92; they part at byte 79"),
        "{text}"
    );
    // Past the end stays at the end; Esc closes.
    key(&mut app, KeyCode::Right);
    assert_eq!(app.overlay, Overlay::Stream(StreamView { step: 6 }));
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn an_honest_stream_ends_equal_to_batch() {
    let Some(mut app) = bundled("hermes", "streamed_search") else {
        return;
    };
    key(&mut app, KeyCode::Char('w'));
    key(&mut app, KeyCode::End);
    let text = screen(&render(&app, 120, 50));
    assert!(text.contains("delta 10/10"), "{text}");
    assert!(
        text.contains("end  streamed = batch (decision `execute`)"),
        "{text}"
    );
    // The whole output is a call: nothing was forwarded, all is held.
    assert!(text.contains("forwarded (0 bytes)"), "{text}");
}

#[test]
fn chunk_text_is_sanitized_and_no_chunks_says_so() {
    let output = "Hi \u{1b}[31mred\u{202e} <tool>{}</tool>";
    let chunks = r#", "chunks": ["Hi \u001b[31mred", "\u202e <tool>{}</tool>"]"#;
    let (_dir, mut app) = loaded(&[
        ("a.json", transcript("a", "m", "t", output, chunks)),
        ("b.json", transcript("b", "m", "t", "plain", "")),
    ]);
    sized(&mut app, 120, 40);
    assert_eq!(app.current().unwrap().entry.transcript.id, "a");
    key(&mut app, KeyCode::Char('w'));
    key(&mut app, KeyCode::Char('n'));
    let buf = render(&app, 120, 40);
    let text = screen(&buf);
    assert!(
        text.contains(r"this delta  \u{202e} <tool>{}</tool>"),
        "{text}"
    );
    // The default profile's `[` opener (a JSON fallback) cuts inside the
    // escape sequence: both halves are shown escaped.
    assert!(text.contains("opener      [ at byte 4"), "{text}");
    assert!(text.contains(r"Hi \x1b"), "{text}");
    assert!(text.contains(r"[31mred\u{202e} <tool>{}</tool>"), "{text}");
    assert!(
        !text.contains('\u{1b}') && !text.contains('\u{202e}'),
        "{text}"
    );
    key(&mut app, KeyCode::Esc);
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(app.current().unwrap().entry.transcript.id, "b");
    key(&mut app, KeyCode::Char('w'));
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(
        app.message.as_deref(),
        Some("no recorded `chunks` in this transcript")
    );
}
