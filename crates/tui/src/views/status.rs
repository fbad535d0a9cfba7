//! The status bar: the watcher's state and the roots, load progress, the
//! unreadable count, the last message and the help key on the first row;
//! the count of each label shown below.

use crate::component::{Command, Component};
use crate::keys::{Action, KeyList};
use crate::row::Row;
use crate::store::WatchState;
use crate::text;
use crate::theme::Theme;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span as TSpan};
use ratatui::widgets::Paragraph;
use std::path::PathBuf;
use toolgate_core::Label;

/// The status bar (stateless).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StatusBar;

/// What the status bar is drawn from.
pub struct StatusProps<'a> {
    /// The shown rows (their labels are counted).
    pub rows: &'a [Row],
    /// Watched roots and how the user wrote them.
    pub roots: &'a [(PathBuf, String)],
    /// The watcher's state.
    pub watch: &'a WatchState,
    /// The watcher's last error.
    pub watch_error: Option<&'a str>,
    /// Load progress: files loaded, files known, scans outstanding.
    pub progress: (usize, usize, usize),
    /// How many files or lines are unreadable.
    pub unreadable: usize,
    /// The one-off message.
    pub message: Option<&'a str>,
    /// The key map (the keys of help and of the unreadable list).
    pub keys: &'a KeyList,
    /// Colors or not.
    pub theme: &'a Theme,
    /// Whether the status bar has the focus.
    pub focused: bool,
}

impl Component for StatusBar {
    type Props<'a> = StatusProps<'a>;
    /// Whether Enter asked for the unreadable list.
    type Answer = bool;

    fn draw(&self, props: &StatusProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        let theme = props.theme;
        let mut spans = Vec::new();
        let mut counts = [0usize; 12];
        for r in props.rows {
            if let Some(l) = r.label
                && let Some(i) = Label::ALL.iter().position(|x| *x == l)
            {
                counts[i] += 1;
            }
        }
        for (i, n) in counts.iter().enumerate() {
            if *n > 0 {
                let l = Label::ALL[i];
                spans.push(TSpan::styled(format!("{} {n}", l.as_str()), theme.label(l)));
                spans.push(TSpan::raw(" "));
            }
        }
        if spans.is_empty() {
            spans.push(TSpan::styled("no labels ", theme.dim()));
        }
        let counts_line = Line::from(std::mem::take(&mut spans));
        let roots: Vec<&str> = props.roots.iter().map(|(_, s)| s.as_str()).collect();
        let state = match props.watch {
            WatchState::Off => TSpan::styled("not watching", theme.dim()),
            WatchState::Watching => TSpan::styled("watching", theme.ok()),
            WatchState::Degraded(why) => {
                TSpan::styled(format!("watch: {}", text::one_line(why)), theme.bad())
            }
        };
        spans.push(state);
        if let Some(e) = props.watch_error {
            spans.push(TSpan::styled(
                format!(" (last error: {})", text::one_line(e)),
                theme.bad(),
            ));
        }
        spans.push(TSpan::raw(format!(
            " {} ",
            text::one_line(&roots.join(" "))
        )));
        let (loaded, known, scans) = props.progress;
        if scans > 0 {
            spans.push(TSpan::styled("│ scanning… ", theme.header()));
        } else if loaded < known {
            spans.push(TSpan::styled(
                format!("│ loading {loaded}/{known} "),
                theme.header(),
            ));
        }
        if props.unreadable > 0 {
            spans.push(TSpan::styled(
                format!(
                    "│ ⚠ {} unreadable ({}) ",
                    props.unreadable,
                    props.keys.keys_of(Action::Unreadable)
                ),
                theme.bad(),
            ));
        }
        if let Some(msg) = props.message {
            spans.push(TSpan::raw(format!("│ {} ", text::one_line(msg))));
        }
        // The help hint always shows: whatever comes before it (a long watcher
        // error, a long message) is cut to leave it room.
        let help = TSpan::styled(
            format!("│ {} help", props.keys.keys_of(Action::Help)),
            theme.dim(),
        );
        let room = usize::from(area.width).saturating_sub(help.width());
        let mut spans = text::truncate_spans(spans, room);
        spans.push(help);
        let style = if props.focused {
            Style::new().add_modifier(Modifier::REVERSED)
        } else {
            Style::new()
        };
        let mut lines = vec![Line::from(spans)];
        lines.extend(text::wrap(vec![counts_line], usize::from(area.width)));
        frame.render_widget(Paragraph::new(lines).style(style), area);
    }

    fn event(&mut self, _key: &KeyEvent, action: Option<Action>, _: &StatusProps<'_>) -> bool {
        action == Some(Action::Open)
    }

    fn commands(&self) -> Vec<Command> {
        vec![Command::bound(
            Action::Open,
            "open (status bar: unreadable)",
        )]
    }
}
