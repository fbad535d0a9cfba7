//! The help overlay is made of the views' commands: every key a view
//! answers is among its commands, and every command shows in the help.
#![allow(clippy::unwrap_used)]

use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use toolgate_testkit::inspector::*;
use toolgate_tui::Overlay;
use toolgate_tui::component::{Command, Component, Keys};
use toolgate_tui::keys::{Key, KeyList};
use toolgate_tui::views::confirm::{ConfirmProps, ConfirmView};
use toolgate_tui::views::copy::{CopyProps, CopyView};
use toolgate_tui::views::detail::DetailView;
use toolgate_tui::views::diff::{DiffProps, DiffView};
use toolgate_tui::views::help::{HelpProps, HelpView};
use toolgate_tui::views::modes::ModesView;
use toolgate_tui::views::output::OutputView;
use toolgate_tui::views::picker::{PickerProps, PickerView};
use toolgate_tui::views::prompt::{Prompt, PromptAnswer, PromptKind};
use toolgate_tui::views::review::{ReviewProps, ReviewView};
use toolgate_tui::views::status::StatusBar;
use toolgate_tui::views::stream::{StreamProps, StreamView};
use toolgate_tui::views::unreadable::{UnreadableProps, UnreadableView};
use toolgate_tui::views::{Answer, Pane};

fn corpus() -> Vec<(&'static str, String)> {
    let stream = r#", "chunks": ["Hi <to", "ol_call>{", "}</tool_call>"]"#;
    vec![
        (
            "a.json",
            transcript("one", "qwen3-8b", "t", "<tool_call>{}</tool_call>", stream),
        ),
        ("b.json", transcript("two", "qwen3-8b", "t", "hello", "")),
    ]
}

/// Every key worth trying: the key map's, every view's own, and a few
/// no view names.
fn probe_keys(keys: &KeyList, commands: &[Command]) -> Vec<KeyEvent> {
    let mut out: Vec<Key> = keys.bindings.iter().flat_map(|b| b.keys.clone()).collect();
    for c in commands {
        if let Keys::Local { keys, .. } = c.keys {
            out.extend_from_slice(keys);
        }
    }
    out.extend([
        Key::ch('x'),
        Key::ch('z'),
        Key::ch(' '),
        Key::plain(KeyCode::Left),
        Key::plain(KeyCode::Right),
        Key::plain(KeyCode::Backspace),
        Key::plain(KeyCode::F(1)),
    ]);
    out.iter()
        .map(|k| KeyEvent::new(k.code, k.modifiers))
        .collect()
}

/// Whether `view`'s commands name `key`: an action the key map gives it,
/// one of its own keys, or "every other key".
fn declared(commands: &[Command], keys: &KeyList, key: &KeyEvent) -> bool {
    let action = keys.action(key);
    commands.iter().any(|c| match c.keys {
        Keys::Bound(a) => action == Some(a),
        Keys::Local { keys, .. } => keys.iter().any(|k| k.code == key.code),
        Keys::Rest { .. } => true,
    })
}

/// Feeds every probe key to a fresh copy of `view`; each one it answers
/// (`answered`) must be among its commands. Returns how many it answered.
fn check<C: Component + Clone>(
    name: &str,
    view: &C,
    props: &C::Props<'_>,
    keys: &KeyList,
    answered: impl Fn(&C::Answer) -> bool,
) -> usize {
    let commands = view.commands();
    let mut n = 0;
    for key in probe_keys(keys, &commands) {
        let mut v = view.clone();
        let answer = v.event(&key, keys.action(&key), props);
        if answered(&answer) {
            n += 1;
            assert!(
                declared(&commands, keys, &key),
                "{name} answers {key:?}, which none of its commands names"
            );
        }
    }
    n
}

/// An overlay's answer counts unless it ignores the key or "scrolls" by an
/// action that moves nothing.
fn overlay_answered<R>(a: &Answer<R>) -> bool {
    match a {
        Answer::Ignored => false,
        Answer::Scroll(action) => action.is_movement(),
        _ => true,
    }
}

#[test]
fn every_key_a_view_answers_is_among_its_commands() {
    let (_dir, app) = loaded(&corpus());
    let keys = &app.keys;
    let area = Rect::new(0, 0, 60, 20);
    let sel = app.selected_props();
    let pane = Pane {
        sel,
        area,
        focused: true,
    };
    let window = app.window();
    // Panes answer the movements: j ↓ k ↑ g Home G End PgDn PgUp.
    let movements = 10;
    assert_eq!(
        check("list", &app.list, &app.list_props(area, true), keys, |a| {
            a.is_some()
        }),
        movements
    );
    assert_eq!(
        check("output", &OutputView::default(), &pane, keys, |a| *a),
        movements
    );
    assert_eq!(
        check("detail", &DetailView::default(), &pane, keys, |a| *a),
        movements
    );
    assert_eq!(
        check(
            "modes",
            &ModesView,
            &app.modes_props(area, true),
            keys,
            |a| a.is_some()
        ),
        movements
    );
    assert_eq!(
        check("status", &StatusBar, &app.status_props(), keys, |a| *a),
        1,
        "Enter"
    );
    let prompt = Prompt::new(
        PromptKind::Search,
        String::new(),
        0,
        Default::default(),
        None,
    );
    assert!(
        check("prompt", &prompt, &app.prompt_props(), keys, |a| {
            *a != PromptAnswer::Unchanged
        }) > 10
    );
    let commands = app.commands();
    let help = HelpProps {
        keys,
        commands: &commands,
        window,
    };
    assert!(check("help", &HelpView, &help, keys, overlay_answered) > movements);
    let unreadable = UnreadableProps {
        unreadable: &[],
        roots: &[],
        window,
    };
    assert!(
        check(
            "unreadable",
            &UnreadableView,
            &unreadable,
            keys,
            overlay_answered
        ) > movements
    );
    let copy = CopyProps {
        mode: "tag",
        window,
    };
    check("copy", &CopyView, &copy, keys, overlay_answered);
    let confirm = ConfirmProps {
        row: app.current(),
        rows: &app.rows,
        window,
    };
    check("accept", &ConfirmView, &confirm, keys, overlay_answered);
    let review = ReviewProps {
        row: app.current(),
        window,
    };
    assert!(
        check(
            "review",
            &ReviewView::default(),
            &review,
            keys,
            overlay_answered
        ) > movements
    );
    let diff = DiffProps { sel, window };
    assert!(check("diff", &DiffView::default(), &diff, keys, overlay_answered) > movements);
    let stream = StreamProps {
        row: app.current(),
        profile: "hermes",
        openers: &[],
        window,
    };
    assert!(
        check(
            "stream",
            &StreamView { step: 2 },
            &stream,
            keys,
            overlay_answered
        ) > movements
    );
    let picker = PickerProps {
        modes: &app.session.modes,
        row: app.current(),
        lenient: false,
        window,
    };
    assert!(
        check(
            "mode picker",
            &PickerView::default(),
            &picker,
            keys,
            overlay_answered
        ) > 10
    );
}

#[test]
fn every_command_of_every_view_shows_in_the_help() {
    let (_dir, mut app) = loaded(&corpus());
    // Tall enough that nothing scrolls away.
    sized(&mut app, 200, 80);
    key(&mut app, KeyCode::Char('?'));
    assert_eq!(app.overlay, Overlay::Help);
    let text = screen(&render(&app, 200, 80));
    let commands = app.commands();
    // Each key-map binding has a view that says what it does, on a line
    // that starts with its keys.
    for b in &app.keys.bindings {
        let help = commands
            .iter()
            .find_map(|c| match c.keys {
                Keys::Bound(a) if a == b.action && !c.help.is_empty() => Some(c.help),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no view says what {:?} does", b.action));
        let keys: Vec<String> = b.keys.iter().map(|k| k.display()).collect();
        let line = format!("{:<14}{help}", keys.join(" "));
        assert!(text.contains(&line), "missing `{line}` in\n{text}");
    }
    // A view's own keys show on its lines (the line of the action that
    // opens it, or its own).
    let mut views: Vec<&str> = Vec::new();
    for c in &commands {
        if let Keys::Local { name, .. } | Keys::Rest { name } = c.keys
            && !views.contains(&name)
        {
            views.push(name);
        }
    }
    for view in views {
        assert!(
            text.contains(&format!("{view:<14}")),
            "no help line for the {view}"
        );
    }
    for c in &commands {
        if !c.help.is_empty() {
            assert!(text.contains(c.help), "missing `{}` in\n{text}", c.help);
        }
    }
}

#[test]
fn a_key_without_help_of_its_own_is_told_by_a_line_of_its_view() {
    let (_dir, app) = loaded(&corpus());
    for commands in app.view_commands() {
        let told: Vec<&str> = commands.iter().map(|c| c.help).collect();
        let told = told.join(" ");
        for c in &commands {
            if let Keys::Local { name, keys } = c.keys {
                for k in keys {
                    let shown = k.display();
                    assert!(
                        told.contains(&shown),
                        "the {name}'s key {shown} is not told in `{told}`"
                    );
                }
            }
        }
    }
}
