//! Key (and mouse) handling, by feeding events to `App::update`.
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::{
    Event as TermEvent, KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};
use toolgate_testkit::inspector::*;
use toolgate_tui::app::SortKey;
use toolgate_tui::views::diff::DiffView;
use toolgate_tui::{App, Event, Focus, Job, Overlay};

fn corpus() -> Vec<(&'static str, String)> {
    let expect = r#", "expect": {"calls": [{"name": "get_weather"}]}"#;
    vec![
        (
            "a.json",
            transcript(
                "weather",
                "qwen3-8b",
                "weather",
                "<tool name=\"get_weather\">{\"city\": \"Antwerp\"}</tool>",
                &format!(r#"{expect}, "labels": {{"tag": "pass", "hermes": "no_call"}}"#),
            ),
        ),
        (
            "b.json",
            transcript(
                "quotes",
                "phi-4-mini",
                "weather",
                "<tool name=\"get_weather\">{'city': 'Paris'}</tool>",
                &format!(r#"{expect}, "labels": {{"tag": "pass", "hermes": "no_call"}}"#),
            ),
        ),
        (
            "c.json",
            transcript(
                "fallback",
                "llama-3.2-3b",
                "weather",
                "<tool_call>{\"name\": \"get_weather\", \"arguments\": {}}</tool_call>",
                expect,
            ),
        ),
        (
            "d.jsonl",
            [
                transcript(
                    "hello",
                    "qwen3-8b",
                    "chat",
                    "Hi!",
                    r#", "expect": {"calls": []}"#,
                ),
                transcript("silent", "gpt-4o-mini", "weather", "I don't know.", expect),
            ]
            .concat(),
        ),
    ]
}

fn ids(app: &App) -> Vec<String> {
    app.rows
        .iter()
        .map(|r| r.entry.transcript.id.clone())
        .collect()
}

fn selected(app: &App) -> String {
    app.current().unwrap().entry.transcript.id.clone()
}

#[test]
fn moving_through_the_list() {
    let (_dir, mut app) = loaded(&corpus());
    assert_eq!(
        ids(&app),
        ["weather", "quotes", "fallback", "hello", "silent"]
    );
    assert_eq!(selected(&app), "weather");
    keys(&mut app, "jj");
    assert_eq!(selected(&app), "fallback");
    key(&mut app, KeyCode::Up);
    assert_eq!(selected(&app), "quotes");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Char('G'));
    assert_eq!(selected(&app), "silent");
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(selected(&app), "silent", "stops at the end");
    key(&mut app, KeyCode::Char('g'));
    assert_eq!(selected(&app), "weather");
    key(&mut app, KeyCode::Char('k'));
    assert_eq!(selected(&app), "weather", "stops at the top");
    key(&mut app, KeyCode::PageDown);
    assert_eq!(selected(&app), "silent");
    key(&mut app, KeyCode::PageUp);
    assert_eq!(selected(&app), "weather");
}

#[test]
fn tab_and_shift_tab_cycle_the_panes() {
    let (_dir, mut app) = loaded(&corpus());
    let mut seen = vec![app.focus];
    for _ in 0..5 {
        key(&mut app, KeyCode::Tab);
        seen.push(app.focus);
    }
    assert_eq!(
        seen,
        [
            Focus::List,
            Focus::Output,
            Focus::Modes,
            Focus::Detail,
            Focus::Status,
            Focus::List
        ]
    );
    app.update(Event::Input(TermEvent::Key(KeyEvent::new(
        KeyCode::BackTab,
        KeyModifiers::SHIFT,
    ))));
    assert_eq!(app.focus, Focus::Status);
}

#[test]
fn m_and_shift_m_cycle_modes_and_come_back_to_following_the_profile() {
    let (_dir, mut app) = loaded(&corpus());
    keys(&mut app, "jj");
    // `fallback` was decided by the hermes fallback: that is what is shown.
    assert_eq!(
        (app.mode.clone(), app.mode_name()),
        (None, "hermes".to_string())
    );
    // `fallback` has no `tool_calls`: native was not run, hermes is the
    // last mode, so `m` wraps to the first.
    key(&mut app, KeyCode::Char('m'));
    assert_eq!(app.mode.as_deref(), Some("tag"));
    key(&mut app, KeyCode::Char('m'));
    assert_eq!(app.mode.as_deref(), Some("hermes"));
    key(&mut app, KeyCode::Char('m'));
    assert_eq!(
        app.mode, None,
        "past the last mode: follow the profile again"
    );
    key(&mut app, KeyCode::Char('M'));
    assert_eq!(app.mode.as_deref(), Some("tag"));
    key(&mut app, KeyCode::Char('M'));
    assert_eq!(app.mode, None);
    // In the modes pane, j/k pick the row.
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Tab);
    key(&mut app, KeyCode::Char('k'));
    assert_eq!(app.mode.as_deref(), Some("tag"));
    assert_eq!(app.current_mode().unwrap().mode, "tag");
}

#[test]
fn search_with_n_and_shift_n() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('/'));
    assert!(app.prompt.is_some());
    type_prompt(&mut app, "QWEN");
    assert!(app.prompt.is_none());
    assert_eq!(
        selected(&app),
        "weather",
        "the first match, from the selection on"
    );
    key(&mut app, KeyCode::Char('n'));
    assert_eq!(selected(&app), "hello");
    key(&mut app, KeyCode::Char('n'));
    assert_eq!(selected(&app), "weather", "wraps around");
    key(&mut app, KeyCode::Char('N'));
    assert_eq!(selected(&app), "hello");
    key(&mut app, KeyCode::Char('/'));
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Backspace);
    key(&mut app, KeyCode::Backspace);
    type_prompt(&mut app, "nowhere");
    assert_eq!(app.message.as_deref(), Some("no match for `nowhere`"));
    assert_eq!(selected(&app), "hello");
}

#[test]
fn filter_by_label_mode_model_and_changed() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('f'));
    type_prompt(&mut app, "label:pass");
    // `fallback` is a pass whose decision is reject (intent): labels, not gates.
    assert_eq!(ids(&app), ["weather", "fallback", "hello"]);
    let text = screen(&render(&app, 120, 40));
    assert!(
        text.contains("Transcripts 3 of 5 · sort path · filter label:pass"),
        "{text}"
    );
    assert!(
        text.contains("\npass 3\n"),
        "counts are for the filtered set:\n{text}"
    );
    key(&mut app, KeyCode::Esc);
    assert_eq!(ids(&app).len(), 5, "Esc clears the filter");

    key(&mut app, KeyCode::Char('f'));
    type_prompt(&mut app, "changed");
    assert_eq!(ids(&app), ["quotes"]);
    key(&mut app, KeyCode::Esc);

    key(&mut app, KeyCode::Char('f'));
    type_prompt(&mut app, "model:LLAMA");
    assert_eq!(ids(&app), ["fallback"]);
    key(&mut app, KeyCode::Esc);

    // mode: makes labels (and the label filter) refer to that mode.
    key(&mut app, KeyCode::Char('f'));
    type_prompt(&mut app, "mode:hermes label:no_call");
    assert_eq!(ids(&app), ["weather", "quotes", "silent"]);
    assert_eq!(app.mode.as_deref(), Some("hermes"));
    key(&mut app, KeyCode::Esc);

    key(&mut app, KeyCode::Char('f'));
    type_prompt(&mut app, "label:nope");
    assert_eq!(app.message.as_deref(), Some("unknown label `nope`"));
    // A typo keeps what was typed, to be corrected; Esc puts the list back.
    let prompt = app.prompt.as_ref().expect("the prompt stays open");
    assert_eq!(prompt.input.value(), "label:nope");
    assert_eq!(prompt.error.as_deref(), Some("unknown label `nope`"));
    key(&mut app, KeyCode::Esc);
    assert!(app.prompt.is_none());
    assert_eq!(ids(&app).len(), 5, "a bad filter changes nothing");
}

#[test]
fn sort_cycles_and_keeps_the_selection() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(selected(&app), "quotes");
    key(&mut app, KeyCode::Char('s'));
    assert_eq!(app.list.sort, SortKey::Id);
    assert_eq!(
        ids(&app),
        ["fallback", "hello", "quotes", "silent", "weather"]
    );
    assert_eq!(
        selected(&app),
        "quotes",
        "the selection follows the transcript"
    );
    keys(&mut app, "ssss");
    assert_eq!(app.list.sort, SortKey::Decision);
    assert_eq!(
        ids(&app),
        ["weather", "hello", "silent", "fallback", "quotes"]
    );
}

#[test]
fn l_toggles_lenient_results() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('j'));
    assert_eq!(app.current_mode().unwrap().label.as_str(), "malformed_json");
    key(&mut app, KeyCode::Char('l'));
    assert!(app.lenient);
    assert_eq!(app.current_mode().unwrap().label.as_str(), "pass");
    assert_eq!(app.current_mode().unwrap().candidates[0].repairs.len(), 1);
}

#[test]
fn accept_writes_the_current_labels_into_the_file_atomically() {
    let (dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Char('a'));
    assert_eq!(app.overlay, Overlay::ConfirmAccept);
    let text = screen(&render(&app, 120, 40));
    assert!(
        text.contains("y / Enter   this transcript (quotes)"),
        "{text}"
    );
    key(&mut app, KeyCode::Char('y'));
    let jobs = app.take_jobs();
    let path = path_in(dir.path(), "b.json");
    assert_eq!(
        jobs,
        vec![Job::WriteLabels {
            path: path.clone(),
            updates: vec![(
                None,
                vec![
                    ("tag".into(), "malformed_json".into()),
                    ("hermes".into(), "no_call".into())
                ]
            )],
            // The text the row was read from: a changed file is not written.
            fingerprint: Some(toolgate_core::load::Fingerprint::of(
                &std::fs::read(&path).unwrap()
            )),
        }]
    );
    for job in jobs {
        app.update(toolgate_tui::worker::execute(job, &Fake));
    }
    settle(&mut app);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        written["labels"],
        serde_json::json!({"tag": "malformed_json", "hermes": "no_call"})
    );
    assert_eq!(
        written["output"],
        "<tool name=\"get_weather\">{'city': 'Paris'}</tool>"
    );
    assert!(
        app.message
            .as_deref()
            .unwrap()
            .starts_with("wrote labels of 1 transcript to transcripts/b.json")
    );
    assert!(!app.current().unwrap().changed);

    // `a a`: every shown transcript whose labels changed or were never stored.
    key(&mut app, KeyCode::Char('a'));
    key(&mut app, KeyCode::Char('a'));
    let jobs = app.take_jobs();
    assert_eq!(jobs.len(), 2, "c.json and d.jsonl: {jobs:?}");
    assert!(
        matches!(&jobs[1], Job::WriteLabels { updates, .. } if updates.len() == 2 && updates[0].0 == Some(1) && updates[1].0 == Some(2))
    );
    for job in jobs {
        app.update(toolgate_tui::worker::execute(job, &Fake));
    }
    settle(&mut app);
    assert!(app.rows.iter().all(|r| !r.changed && !r.unlabeled));
    let jsonl = std::fs::read_to_string(path_in(dir.path(), "d.jsonl")).unwrap();
    let labels: Vec<serde_json::Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["labels"].clone())
        .collect();
    assert_eq!(
        labels,
        vec![
            // No mode reads anything in either transcript: the labels a
            // reviewer needs are none (`pass` is what reading nothing gives
            // when no call is expected; toolgate_core::relabel, the rule
            // `label --write` follows).
            serde_json::json!({}),
            serde_json::json!({})
        ]
    );

    // Anything else cancels.
    key(&mut app, KeyCode::Char('a'));
    key(&mut app, KeyCode::Char('x'));
    assert!(app.take_jobs().is_empty());
    assert_eq!(app.message.as_deref(), Some("accept cancelled"));
}

#[test]
fn help_opens_and_closes_and_q_quits() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('?'));
    assert_eq!(app.overlay, Overlay::Help);
    key(&mut app, KeyCode::Char('q'));
    assert_eq!(app.overlay, Overlay::None, "q closes an overlay first");
    assert!(!app.quit);
    key(&mut app, KeyCode::Char('q'));
    assert!(app.quit);
    let (_dir, mut app) = loaded(&corpus());
    app.update(Event::Input(TermEvent::Key(KeyEvent::new(
        KeyCode::Char('c'),
        KeyModifiers::CONTROL,
    ))));
    assert!(app.quit);
}

#[test]
fn diff_view_keys() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('d'));
    assert!(matches!(
        app.overlay,
        Overlay::Diff(DiffView {
            kind: toolgate_tui::app::DiffKind::StrictVsLenient,
            ..
        })
    ));
    key(&mut app, KeyCode::Char('m'));
    assert_eq!(
        app.overlay,
        Overlay::Diff(DiffView {
            kind: toolgate_tui::app::DiffKind::ModeVsMode,
            other: "native".into()
        })
    );
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("Diff: tag vs native (strict)"), "{text}");
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay, Overlay::None);
}

#[test]
fn mouse_click_selects_a_row_and_focuses_a_pane() {
    let (_dir, mut app) = loaded(&corpus());
    sized(&mut app, 120, 40);
    let click = |column, row| {
        Event::Input(TermEvent::Mouse(MouseEvent {
            kind: MouseEventKind::Down(MouseButton::Left),
            column,
            row,
            modifiers: KeyModifiers::NONE,
        }))
    };
    // Row 0 is the border, row 1 the header: row 5 is the fourth transcript.
    app.update(click(10, 5));
    assert_eq!(selected(&app), "hello");
    app.update(click(10, 30));
    assert_eq!(app.focus, Focus::Output);
}

#[test]
fn a_replay_that_panics_makes_one_unreadable_item_not_a_crash() {
    let mut files = corpus();
    files.push(("z.json", transcript("boom", "m", "t", "PANIC", "")));
    let (_dir, app) = loaded(&files);
    assert_eq!(app.rows.len(), 5);
    assert_eq!(app.unreadable.len(), 1);
    assert_eq!(
        app.unreadable[0].reason,
        "replay failed: the fake engine was told to panic"
    );
}

#[test]
fn the_list_scrolls_only_as_far_as_the_selection_needs() {
    let files: Vec<(String, String)> = (0..30)
        .map(|i| {
            (
                format!("t{i:02}.json"),
                transcript(&format!("t{i:02}"), "m", "t", "hi", ""),
            )
        })
        .collect();
    let files: Vec<(&str, String)> = files.iter().map(|(n, b)| (n.as_str(), b.clone())).collect();
    let (_dir, mut app) = loaded(&files);
    sized(&mut app, 120, 40);
    key(&mut app, KeyCode::Char('G'));
    assert_eq!((app.selected, app.list.top), (29, 18));
    key(&mut app, KeyCode::Char('k'));
    key(&mut app, KeyCode::Char('k'));
    assert_eq!(
        (app.selected, app.list.top),
        (27, 18),
        "moving inside the page does not scroll"
    );
    let text = screen(&render(&app, 120, 40));
    assert!(
        text.contains("│ + t18 ") && text.contains("│▶+ t27 ") && text.contains("│ + t29 "),
        "{text}"
    );
    key(&mut app, KeyCode::Char('g'));
    assert_eq!((app.selected, app.list.top), (0, 0));
}

#[test]
fn the_first_row_stays_selected_while_the_list_fills_in() {
    let dir = tempfile::tempdir().unwrap();
    let root = std::fs::canonicalize(dir.path()).unwrap();
    for name in ["a", "b", "c"] {
        std::fs::write(
            root.join(format!("{name}.json")),
            transcript(name, "m", "t", "hi", ""),
        )
        .unwrap();
    }
    let mut app = App::new(
        vec![(root.clone(), "t".into())],
        vec!["tag".into()],
        "default".into(),
        "tag",
    );
    let scan = app.take_jobs().remove(0);
    app.update(toolgate_tui::worker::execute(scan, &Fake));
    // The last file loads first.
    let mut loads = app.take_jobs();
    loads.reverse();
    for job in loads {
        app.update(toolgate_tui::worker::execute(job, &Fake));
        app.update(Event::Tick);
    }
    assert_eq!(ids(&app), ["a", "b", "c"]);
    assert_eq!(selected(&app), "a");
    // Once the user moved, the selection follows the transcript.
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Char('s'));
    key(&mut app, KeyCode::Char('s'));
    assert_eq!(selected(&app), "b");
}

#[test]
fn the_path_column_tells_rows_with_the_same_id_apart() {
    let files = vec![
        (
            "run1/a.json",
            transcript("same", "m", "t", "hi", r#", "expect": {"calls": []}"#),
        ),
        (
            "run2/a.jsonl",
            transcript("same", "m", "t", "hi", r#", "expect": {"calls": []}"#),
        ),
    ];
    let (_dir, app) = loaded(&files);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains(" id "), "{text}");
    assert!(text.contains(" path "), "{text}");
    assert!(
        text.contains("same") && text.contains("run1/a.json "),
        "{text}"
    );
    assert!(text.contains("run2/a.jsonl:1"), "{text}");
}

#[test]
fn search_is_live_with_a_match_count_and_highlights() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('/'));
    keys(&mut app, "qw");
    // Applied as typed: the selection is already on the first match.
    assert_eq!(selected(&app), "weather");
    assert_eq!(app.prompt.as_ref().unwrap().matches, 2);
    let buf = render(&app, 120, 40);
    let text = screen(&buf);
    assert!(text.contains("2 matches"), "{text}");
    // The match is highlighted in the model column.
    let (x, y) = find(&buf, "qwen3-8b").unwrap();
    let yellow = Some(ratatui::style::Color::Yellow);
    assert_eq!(buf[(x, y)].style().fg, yellow);
    assert_eq!(buf[(x + 1, y)].style().fg, yellow);
    assert_ne!(buf[(x + 2, y)].style().fg, yellow, "only `qw` is marked");
    keys(&mut app, "zz");
    assert_eq!(app.prompt.as_ref().unwrap().matches, 0);
    assert!(screen(&render(&app, 120, 40)).contains("no match"));
    // Esc: the search before the prompt, and the selection, come back.
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.list.search, None);
    assert_eq!(selected(&app), "weather");
    // Enter keeps it; the title counts the matches.
    key(&mut app, KeyCode::Char('/'));
    type_prompt(&mut app, "weather");
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("· /weather 4 found"), "{text}");
}

#[test]
fn filter_is_live_and_counts_what_it_shows() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('f'));
    keys(&mut app, "model:qwen");
    assert_eq!(app.prompt.as_ref().unwrap().error, None);
    assert_eq!(ids(&app), ["weather", "hello"], "applied while typing");
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("2 of 5"), "{text}");
    // An unfinished token is an error shown, and (issue 26) the list shows
    // nothing rather than what the word `label` matches.
    keys(&mut app, " label:");
    assert_eq!(app.list.filter.text, "model:qwen label:");
    assert!(app.prompt.as_ref().unwrap().error.is_some());
    assert!(ids(&app).is_empty(), "{:?}", ids(&app));
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("unknown label ``"), "{text}");
    keys(&mut app, "bogus");
    assert!(ids(&app).is_empty(), "label:bogus matches nothing");
    for _ in 0.."bogus".len() {
        key(&mut app, KeyCode::Backspace);
    }
    keys(&mut app, "pass");
    assert_eq!(ids(&app), ["weather", "hello"]);
    assert!(app.prompt.as_ref().unwrap().error.is_none());
    key(&mut app, KeyCode::Enter);
    assert!(app.prompt.is_none());
    assert_eq!(app.list.filter.text, "model:qwen label:pass");
}

#[test]
fn the_mode_picker_narrows_as_you_type_and_f_follows_the_profile_again() {
    let (_dir, mut app) = loaded(&corpus());
    assert_eq!(selected(&app), "weather");
    key(&mut app, KeyCode::Char('o'));
    assert!(matches!(app.overlay, Overlay::ModePicker(_)));
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("Pick a mode"), "{text}");
    assert!(
        text.contains("not run for this transcript"),
        "native: {text}"
    );
    keys(&mut app, "ERM");
    assert_eq!(app.picker_modes("ERM"), ["hermes"]);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("▶ hermes"), "{text}");
    assert!(!text.contains(" tag "), "narrowed away: {text}");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(app.mode.as_deref(), Some("hermes"));
    // ↓ picks the next narrowed mode; a query matching nothing picks none.
    key(&mut app, KeyCode::Char('o'));
    keys(&mut app, "a");
    key(&mut app, KeyCode::Down);
    key(&mut app, KeyCode::Enter);
    assert_eq!(
        app.mode.as_deref(),
        Some("native"),
        "tag, native: the second"
    );
    key(&mut app, KeyCode::Char('o'));
    keys(&mut app, "zz");
    key(&mut app, KeyCode::Enter);
    assert_eq!(app.message.as_deref(), Some("no mode matches `zz`"));
    assert_eq!(app.mode.as_deref(), Some("native"));
    key(&mut app, KeyCode::Char('F'));
    assert_eq!(app.mode, None, "following the profile again");
    assert_eq!(app.mode_name(), "tag");
}

#[test]
fn c_shows_only_modes_with_candidates_and_a_click_picks_a_mode_row() {
    let (_dir, mut app) = loaded(&corpus());
    sized(&mut app, 120, 40);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains(" hermes "), "{text}");
    key(&mut app, KeyCode::Char('c'));
    assert!(app.only_found);
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("with candidates only"), "{text}");
    assert!(!text.contains(" hermes "), "hermes found nothing: {text}");
    assert_eq!(app.row_modes(), ["tag"]);
    key(&mut app, KeyCode::Char('c'));
    assert_eq!(app.row_modes(), ["tag", "hermes"]);

    let areas = toolgate_tui::layout::layout(app.size, false);
    // Border, header, then tag, hermes.
    app.update(Event::Input(TermEvent::Mouse(MouseEvent {
        kind: MouseEventKind::Down(MouseButton::Left),
        column: areas.modes.x + 3,
        row: areas.modes.y + 3,
        modifiers: KeyModifiers::NONE,
    })));
    assert_eq!(app.focus, Focus::Modes);
    assert_eq!(app.mode.as_deref(), Some("hermes"));
}

#[test]
fn y_copies_output_calls_or_a_repro_and_e_asks_for_the_editor() {
    use toolgate_tui::Effect;
    use toolgate_tui::clipboard::CopyWhat;
    let (_dir, mut app) = loaded(&corpus());
    keys(&mut app, "yo");
    let effects = app.take_effects();
    assert_eq!(
        effects,
        [Effect::Copy {
            what: CopyWhat::Output,
            text: "<tool name=\"get_weather\">{\"city\": \"Antwerp\"}</tool>".into()
        }]
    );
    assert_eq!(
        app.message.as_deref(),
        Some("copied the raw output (51 bytes) to the clipboard (OSC 52)")
    );
    keys(&mut app, "yc");
    let Effect::Copy { text, .. } = &app.take_effects()[0] else {
        panic!()
    };
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(text).unwrap(),
        serde_json::json!([{"name": "get_weather", "arguments": {"city": "Antwerp"}}])
    );
    keys(&mut app, "yx");
    assert!(app.take_effects().is_empty());
    assert_eq!(app.message.as_deref(), Some("copy cancelled"));

    // The repro is a transcript that loads and replays to the same label,
    // without the stored labels.
    keys(&mut app, "yr");
    let Effect::Copy { text, .. } = &app.take_effects()[0] else {
        panic!()
    };
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(value["id"], "weather_repro");
    assert!(value.get("labels").is_none() && value.get("model").is_none());
    let t = toolgate_core::load::load_str(std::path::Path::new("r.json"), text)
        .into_iter()
        .next()
        .unwrap()
        .unwrap();
    assert_eq!(t.tools.len(), 1);
    use toolgate_tui::Replayer;
    let replay = Fake.replay(&t);
    assert_eq!(
        replay.strict_mode("tag").unwrap().label,
        app.current_mode().unwrap().label
    );

    // e: the file, with its line for JSONL.
    keys(&mut app, "G");
    key(&mut app, KeyCode::Char('e'));
    let effects = app.take_effects();
    assert!(
        matches!(&effects[..], [Effect::Edit { path, line: Some(2) }] if path.ends_with("d.jsonl")),
        "{effects:?}"
    );
}

#[test]
fn shift_s_reverses_the_sort_order_and_keeps_the_selection() {
    let (_dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('j'));
    key(&mut app, KeyCode::Char('S'));
    assert!(app.list.reverse);
    assert_eq!(
        ids(&app),
        ["silent", "hello", "fallback", "quotes", "weather"]
    );
    assert_eq!(selected(&app), "quotes");
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("sort path (reversed)"), "{text}");
    key(&mut app, KeyCode::Char('s'));
    assert_eq!(
        ids(&app),
        ["weather", "silent", "quotes", "hello", "fallback"],
        "by id, reversed"
    );
    key(&mut app, KeyCode::Char('S'));
    assert_eq!(
        ids(&app),
        ["fallback", "hello", "quotes", "silent", "weather"]
    );
}

#[test]
fn review_steps_through_changed_transcripts_with_the_reason_of_each_change() {
    let (dir, mut app) = loaded(&corpus());
    key(&mut app, KeyCode::Char('r'));
    assert!(matches!(app.overlay, Overlay::Review(_)));
    assert_eq!(app.review().unwrap().queue.len(), 4);
    assert_eq!(selected(&app), "quotes", "the first changed one");
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("Review 1/4: quotes · b.json"), "{text}");
    assert!(text.contains("tag: pass → malformed_json"), "{text}");
    assert!(text.contains("why: "), "{text}");
    assert!(
        text.contains("-tag: pass") && text.contains("+tag: malformed_json"),
        "{text}"
    );
    // hermes was stored as no_call and still is: not listed as changed.
    assert!(!text.contains("hermes: no_call →"), "{text}");

    // a: store the current labels of this one, and go on.
    key(&mut app, KeyCode::Char('a'));
    let jobs = app.take_jobs();
    assert!(
        matches!(&jobs[..], [Job::WriteLabels { path, updates, .. }] if *path == path_in(dir.path(), "b.json") && updates.len() == 1),
        "{jobs:?}"
    );
    assert_eq!(selected(&app), "fallback");
    let text = screen(&render(&app, 120, 40));
    assert!(text.contains("Review 2/4: fallback"), "{text}");
    assert!(text.contains("tag: (not stored) → no_call"), "{text}");
    for job in jobs {
        app.update(toolgate_tui::worker::execute(job, &Fake));
    }
    settle(&mut app);
    assert!(
        matches!(app.overlay, Overlay::Review(_)),
        "a reload does not end the review"
    );
    assert_eq!(selected(&app), "fallback");
    // r: keep the stored labels; s: skip; Esc: stop with a summary.
    key(&mut app, KeyCode::Char('r'));
    assert_eq!(selected(&app), "hello");
    key(&mut app, KeyCode::Char('s'));
    assert_eq!(selected(&app), "silent");
    key(&mut app, KeyCode::Esc);
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(
        app.message.as_deref(),
        Some("review: 1 accepted, 1 rejected, 1 skipped, 1 not reviewed")
    );
    assert!(app.take_jobs().is_empty(), "reject and skip write nothing");
    assert!(
        !app.rows
            .iter()
            .find(|r| r.entry.transcript.id == "quotes")
            .unwrap()
            .changed
    );

    // Nothing left to review once everything is accepted.
    keys(&mut app, "aa");
    settle(&mut app);
    key(&mut app, KeyCode::Char('r'));
    assert_eq!(app.overlay, Overlay::None);
    assert_eq!(
        app.message.as_deref(),
        Some("nothing to review: every shown transcript's labels are stored and current")
    );
}
