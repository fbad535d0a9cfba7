//! Screens rendered into a fixed-size `TestBackend` and snapshotted, plus
//! assertions on the specific cells that carry meaning (styles, escapes).
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::KeyCode;
use ratatui::style::{Color, Modifier};
use toolgate_testkit::inspector::*;
use toolgate_tui::theme::Theme;
use toolgate_tui::{Focus, Overlay};

const EXPECT_WEATHER: &str = r#", "expect": {"calls": [{"name": "get_weather"}]}"#;

fn corpus() -> Vec<(&'static str, String)> {
    vec![
        (
            "a_weather.json",
            transcript(
                "weather",
                "qwen3-8b",
                "weather_one_city",
                "<tool name=\"get_weather\">{\"city\": \"Antwerp\"}</tool>",
                &format!(r#"{EXPECT_WEATHER}, "labels": {{"tag": "pass", "hermes": "no_call"}}"#),
            ),
        ),
        (
            "b_quotes.json",
            transcript(
                "single_quotes",
                "phi-4-mini",
                "weather_one_city",
                "Sure.\n<tool name=\"get_weather\">{'city': 'Paris'}</tool>",
                &format!(r#"{EXPECT_WEATHER}, "labels": {{"tag": "pass", "hermes": "no_call"}}"#),
            ),
        ),
        (
            "c_wrong.json",
            transcript(
                "wrong_name",
                "llama-3.2-3b",
                "weather_one_city",
                "CALL_TOOL\n<tool_call>{\"name\": \"get_wether\", \"arguments\": {\"city\": \"Oslo\"}}</tool_call>",
                EXPECT_WEATHER,
            ),
        ),
        (
            "d_think.json",
            transcript(
                "thinks_first",
                "qwen3-8b",
                "chitchat",
                "<think>The user greets me; no tool needed.</think>Hello! How can I help?",
                r#", "expect": {"calls": []}"#,
            ),
        ),
        (
            "e_lines.jsonl",
            [
                transcript(
                    "cut_off",
                    "llama-3.2-3b",
                    "weather_one_city",
                    "<tool name=\"get_weather\">{\"city\": \"Ro",
                    r#", "finish_reason": "length""#,
                ),
                transcript(
                    "native_call",
                    "gpt-4o-mini",
                    "weather_one_city",
                    "",
                    r#", "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Lima\"}"}}]"#,
                ),
            ]
            .concat(),
        ),
    ]
}

fn select(app: &mut toolgate_tui::App, id: &str) {
    let i = app
        .rows
        .iter()
        .position(|r| r.entry.transcript.id == id)
        .unwrap();
    key(app, KeyCode::Char('g'));
    for _ in 0..i {
        key(app, KeyCode::Char('j'));
    }
    assert_eq!(app.current().unwrap().entry.transcript.id, id);
}

#[test]
fn main_screen_lists_every_transcript_with_label_decision_and_marker() {
    let (_dir, app) = loaded(&corpus());
    let buf = render(&app, 120, 40);
    let text = screen(&buf);
    insta::assert_snapshot!("main_screen", text);
    // The list: the changed marker is on the transcript whose stored `tag`
    // label (`pass`) differs from the current one (`malformed_json`).
    assert!(text.contains("│▶  weather"), "{text}");
    assert!(text.contains("│ * single_quotes"), "{text}");
    assert!(text.contains("│ + wrong_name"), "{text}");
    // Label colors.
    let (x, y) = find(&buf, "malformed_json").unwrap();
    assert_eq!(buf[(x, y)].fg, Color::Red);
    let (x, y) = find(&buf, "wrong_tool").unwrap();
    assert_eq!(buf[(x, y)].fg, Color::Magenta);
    // Counts for the filtered set in the status bar.
    assert!(
        text.contains("no_call 1 truncation 1 malformed_json 1 wrong_tool 1 pass 2"),
        "{text}"
    );
}

#[test]
fn output_pane_highlights_candidates_and_marks_the_failure_offset() {
    let (_dir, mut app) = loaded(&corpus());
    select(&mut app, "single_quotes");
    let buf = render(&app, 120, 40);
    let text = screen(&buf);
    insta::assert_snapshot!("output_failure", text);
    assert!(
        text.contains("Output  tag  strict · 1 found · ✗ malformed @"),
        "{text}"
    );
    // The candidate span is highlighted in the tag mode's color…
    let (x, y) = find(&buf, "<tool name=").unwrap();
    assert_eq!(buf[(x, y)].bg, Color::Cyan);
    // …text outside it is not…
    let (x, y) = find(&buf, "Sure.").unwrap();
    assert_eq!(buf[(x, y)].bg, Color::Reset);
    // …and the byte where parsing failed (the first single quote) is marked.
    let (x, y) = find(&buf, "{'city'").unwrap();
    assert_eq!(buf[(x + 1, y)].symbol(), "'");
    assert_eq!(buf[(x + 1, y)].bg, Color::Red);
}

#[test]
fn reasoning_is_dimmed_in_the_output_pane() {
    let (_dir, mut app) = loaded(&corpus());
    select(&mut app, "thinks_first");
    let buf = render(&app, 120, 40);
    let (x, y) = find(&buf, "The user greets me").unwrap();
    assert!(buf[(x, y)].modifier.contains(Modifier::DIM));
    let (x, y) = find(&buf, "Hello!").unwrap();
    assert!(!buf[(x, y)].modifier.contains(Modifier::DIM));
}

#[test]
fn modes_table_in_lenient_shows_the_repair_and_the_changed_label() {
    let (_dir, mut app) = loaded(&corpus());
    select(&mut app, "single_quotes");
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.focus, Focus::Modes);
    key(&mut app, KeyCode::Char('l'));
    let text = screen(&render(&app, 120, 40));
    insta::assert_snapshot!("modes_lenient", text);
    assert!(text.contains("Modes (lenient)"), "{text}");
    assert!(
        text.contains("tag    1    –✓✓✓✓✓ execute pass               ≠ single_quotes"),
        "{text}"
    );
}

#[test]
fn detail_shows_calls_telemetry_and_the_closest_allowlisted_name() {
    let (_dir, mut app) = loaded(&corpus());
    select(&mut app, "wrong_name");
    // The profile fell back to hermes, so hermes is shown.
    assert_eq!(app.mode_name(), "hermes");
    key(&mut app, KeyCode::BackTab);
    key(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus, Focus::Detail);
    let text = screen(&render(&app, 120, 40));
    insta::assert_snapshot!("detail_wrong_tool", text);
    assert!(
        text.contains("`get_wether` is not allowlisted; closest: get_weather"),
        "{text}"
    );
    // Scrolling the detail reaches the normalized calls and the telemetry.
    for _ in 0..14 {
        key(&mut app, KeyCode::Char('j'));
    }
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("\"name\": \"get_wether\""), "{text}");
    // Scrolling on reaches the telemetry record…
    let mut seen = String::new();
    for _ in 0..30 {
        key(&mut app, KeyCode::Char('j'));
        seen.push_str(&screen(&render(&app, 120, 40)));
    }
    assert!(seen.contains("\"gate\": \"allowlist\""), "{seen}");
    assert!(seen.contains("\"tool_result_status\": null"), "{seen}");
    // …and the transcript's own facts at the end.
    key(&mut app, KeyCode::Char('G'));
    let text = screen(&render(&app, 120, 40));
    insta::assert_snapshot!("detail_scrolled", text);
    assert!(text.contains("transcripts/c_wrong.json"), "{text}");
    assert!(text.contains("expects get_weather"), "{text}");
    assert!(text.contains("tools: get_weather"), "{text}");
    assert!(text.contains("no stored labels"), "{text}");
}

#[test]
fn diff_view_compares_strict_and_lenient_then_stored_and_current() {
    let (_dir, mut app) = loaded(&corpus());
    select(&mut app, "single_quotes");
    key(&mut app, KeyCode::Char('d'));
    let buf = render(&app, 120, 40);
    let text = screen(&buf);
    insta::assert_snapshot!("diff_strict_lenient", text);
    assert!(text.contains("Diff: tag strict vs lenient"), "{text}");
    assert!(text.contains("-label: malformed_json"), "{text}");
    assert!(text.contains("+label: pass"), "{text}");
    let (x, y) = find(&buf, "+label: pass").unwrap();
    assert_eq!(buf[(x, y)].fg, Color::Green);
    let (x, y) = find(&buf, "-label: malformed_json").unwrap();
    assert_eq!(buf[(x, y)].fg, Color::Red);
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Tab);
    let text = screen(&render(&app, 120, 40));
    insta::assert_snapshot!("diff_stored_current", text);
    assert!(text.contains("-tag: pass"), "{text}");
    assert!(text.contains("+tag: malformed_json"), "{text}");
}

#[test]
fn help_overlay_lists_every_key() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('?'));
    assert_eq!(app.overlay, Overlay::Help);
    let text = screen(&render(&app, 120, 40));
    insta::assert_snapshot!("help", text);
    for c in app.commands() {
        if let toolgate_tui::component::Keys::Bound(action) = c.keys {
            assert!(text.contains(c.help), "missing {action:?} in\n{text}");
        }
    }
}

#[test]
fn an_unreadable_file_is_counted_and_listed_with_its_reason() {
    let mut files = corpus();
    files.push((
        "g_half.json",
        "{\"id\": \"half\", \"output\": \"<tool".to_string(),
    ));
    let (_dir, mut app) = loaded(&files);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("⚠ 1 unreadable (u)"), "{text}");
    // Enter on the status bar opens the list.
    key(&mut app, KeyCode::BackTab);
    assert_eq!(app.focus, Focus::Status);
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.overlay, Overlay::Unreadable);
    let text = screen(&render(&app, 120, 40));
    insta::assert_snapshot!("unreadable", text);
    assert!(
        text.contains("transcripts/g_half.json  not valid JSON: EOF while parsing a string"),
        "{text}"
    );
}

#[test]
fn escape_sequences_in_a_transcript_never_reach_the_terminal() {
    let body = "{\"id\": \"esc\\u001b]0;pwned\\u0007\", \"model\": \"m\\u009b31m\", \"tools\": [],
        \"output\": \"\\u001b[31mRED\\u001b[0m <tool name=\\\"get_weather\\\">{\\\"city\\\": \\\"\\u001b[2J\\u202e\\\"}</tool>\"}";
    let (_dir, app) = loaded(&[("esc.json", body.to_string())]);
    let buf = render(&app, 120, 40);
    for cell in buf.content() {
        assert!(
            !cell.symbol().chars().any(|c| (c as u32) < 0x20
                || (0x7f..=0x9f).contains(&(c as u32))
                || c == '\u{202e}'),
            "raw control character in cell {:?}",
            cell.symbol()
        );
    }
    let text = screen(&buf);
    insta::assert_snapshot!("escapes", text);
    assert!(text.contains("esc\\x1b]0;pwned\\x07"), "{text}");
    assert!(text.contains("m\\x9b31m"), "{text}");
    assert!(text.contains("\\x1b[31mRED\\x1b[0m <tool name="), "{text}");
    // Spans still line up after escaping: the candidate starts at `<tool`.
    let (x, y) = find(&buf, "<tool name=").unwrap();
    assert_eq!(buf[(x, y)].bg, Color::Cyan);
    assert_eq!(buf[(x - 1, y)].bg, Color::Reset);
    // In the detail's JSON the escape is visible too.
    assert!(
        text.contains("\\u{202e}") || text.contains("\\u202e"),
        "{text}"
    );
}

#[test]
fn no_color_uses_modifiers_and_no_colors_at_all() {
    let (_dir, mut app) = loaded(&corpus());
    app.theme = Theme { color: false };
    select(&mut app, "single_quotes");
    let buf = render(&app, 120, 40);
    for cell in buf.content() {
        assert_eq!(
            (cell.fg, cell.bg),
            (Color::Reset, Color::Reset),
            "colored cell {:?}",
            cell.symbol()
        );
    }
    let (x, y) = find(&buf, "<tool name=").unwrap();
    assert!(buf[(x, y)].modifier.contains(Modifier::UNDERLINED));
    let (x, y) = find(&buf, "{'city'").unwrap();
    assert!(buf[(x + 1, y)].modifier.contains(Modifier::REVERSED));
}

#[test]
fn first_screen_of_a_huge_directory_shows_progress_before_anything_loads() {
    let mut app = toolgate_tui::App::new(
        vec![("/big".into(), "big".into())],
        toolgate_tui::Replayer::modes(&Fake),
        "default".into(),
        "tag",
    );
    app.theme = Theme { color: true };
    let jobs = app.take_jobs();
    assert_eq!(jobs, vec![toolgate_tui::Job::Scan { dir: "/big".into() }]);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("loading…"), "{text}");
    assert!(text.contains("scanning…"), "{text}");
    let files: Vec<std::path::PathBuf> = (0..10_000)
        .map(|i| format!("/big/{i:05}.json").into())
        .collect();
    app.update(toolgate_tui::Event::Scanned {
        dir: "/big".into(),
        files,
        aliases: Default::default(),
        errors: vec![],
    });
    assert_eq!(app.take_jobs().len(), 10_000);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("loading 0/10000"), "{text}");
}

#[test]
fn tiny_terminals_render_every_view_without_panicking() {
    let (_dir, mut app) = loaded(&corpus());
    for (w, h) in [(1, 1), (12, 4), (30, 8), (60, 12)] {
        sized(&mut app, w, h);
        for c in ['?', 'd', 'u', 'a'] {
            key(&mut app, KeyCode::Char(c));
            let buf = render(&app, w, h);
            assert_eq!((buf.area.width, buf.area.height), (w, h));
            key(&mut app, KeyCode::Esc);
        }
        key(&mut app, KeyCode::Char('/'));
        keys(&mut app, "a very long search text that does not fit");
        let buf = render(&app, w, h);
        assert_eq!((buf.area.width, buf.area.height), (w, h));
        key(&mut app, KeyCode::Esc);
        for _ in 0..5 {
            key(&mut app, KeyCode::Tab);
            key(&mut app, KeyCode::Char('G'));
            key(&mut app, KeyCode::PageDown);
            render(&app, w, h);
        }
    }
    assert!(screen(&render(&app, 60, 12)).contains("Transcripts"));
}

#[test]
fn a_long_output_opens_at_its_first_candidate_and_scrolls_from_there() {
    let thinking: String = (1..=40).map(|i| format!("thought {i:02}\n")).collect();
    let output = format!(
        "<think>\n{thinking}</think>\n<tool name=\"get_weather\">{{\"city\": \"Gent\"}}</tool>"
    );
    let (_dir, mut app) = loaded(&[("long.json", transcript("long", "m", "t", &output, ""))]);
    let text = screen(&render(&app, 120, 40));
    assert!(
        text.contains("<tool name=\"get_weather\">{\"city\": \"Gent\"}</tool>"),
        "{text}"
    );
    assert!(
        text.contains("thought 40") && !text.contains("thought 01"),
        "{text}"
    );
    key(&mut app, KeyCode::Tab);
    assert_eq!(app.focus, Focus::Output);
    key(&mut app, KeyCode::Char('g'));
    let text = screen(&render(&app, 120, 40));
    assert!(
        text.contains("thought 01") && !text.contains("<tool name="),
        "{text}"
    );
    key(&mut app, KeyCode::Char('G'));
    let text = screen(&render(&app, 120, 40));
    assert!(
        text.contains("<tool name=") && !text.contains("thought 20"),
        "{text}"
    );
}
