//! The bundled corpus (`transcripts/` at the workspace root) through the
//! real engine: every transcript loads, and no screen of any of them, in
//! strict or lenient, carries a raw control character. Skips when the
//! corpus is absent. `TOOLGATE_TUI_CAPTURE=FILE` writes the 120×40 main
//! screen there (the README's capture).
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::KeyCode;
use toolgate_testkit::inspector::*;
use toolgate_tui::{Event, WatchEvent};
use toolgate_validator::{Engine, Profile};

#[test]
fn the_bundled_corpus_renders_safely_in_every_view() {
    let Some(root) = bundled_root("") else {
        return;
    };
    let engine = Engine::new(Profile::default());
    let mut app = app_for(&root, "transcripts", &engine);
    settle_with(&mut app, &engine);
    app.update(Event::Watch(WatchEvent::Started(vec![root])));
    assert!(
        app.rows.len() > 50,
        "only {} transcripts loaded",
        app.rows.len()
    );
    assert_eq!(app.rows.len(), app.total());

    // A transcript in a format the profile does not read opens on the mode
    // that does read it (here the default profile finds nothing in an
    // Apertus output; the `apertus` mode parses it).
    key(&mut app, KeyCode::Char('/'));
    keys(&mut app, "two_keys_element");
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        app.current().unwrap().entry.transcript.id,
        "two_keys_element"
    );
    assert_eq!(app.current().unwrap().entry.replay.profile.parse_mode, None);
    assert_eq!(app.mode_name(), "apertus");
    key(&mut app, KeyCode::Char('g'));

    // The README's capture shows a transcript with a candidate and a label.
    key(&mut app, KeyCode::Char('/'));
    keys(&mut app, "hallucinated_param");
    key(&mut app, KeyCode::Enter);
    // Esc drops the search (and its highlight), the selection stays.
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.list.search, None);
    let buf = render(&app, 120, 40);
    let text = screen(&buf);
    if let Some(path) = std::env::var_os("TOOLGATE_TUI_CAPTURE") {
        std::fs::write(path, &text).unwrap();
    }
    assert!(
        text.contains(&format!(
            "Transcripts {} of {}",
            app.rows.len(),
            app.rows.len()
        )),
        "{text}"
    );
    assert!(text.contains("watching transcripts"), "{text}");

    let unsafe_char = |c: char| {
        (c as u32) < 0x20
            || (0x7f..=0x9f).contains(&(c as u32))
            || ('\u{202a}'..='\u{202e}').contains(&c)
    };
    for lenient in [false, true] {
        key(&mut app, KeyCode::Char('g'));
        for i in 0..app.rows.len() {
            let buf = render(&app, 120, 40);
            let id = app.current().unwrap().entry.transcript.location();
            for cell in buf.content() {
                assert!(
                    !cell.symbol().chars().any(unsafe_char),
                    "{id} (lenient {lenient}): raw {:?}",
                    cell.symbol()
                );
            }
            if i + 1 < app.rows.len() {
                key(&mut app, KeyCode::Char('j'));
            }
        }
        key(&mut app, KeyCode::Char('l'));
    }
}
