//! The mode picker (`o`): type to narrow the engine's modes, ↑/↓ (Tab,
//! Ctrl-n/p) to move, Enter picks, Esc closes. Each mode shows what it
//! found in the selected transcript.

use super::popup::{self, Content, Window};
use super::{Answer, label_span};
use crate::component::{Command, Component};
use crate::keys::{Action, Key};
use crate::row::Row;
use crate::text;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::layout::Rect;
use ratatui::text::{Line, Span as TSpan};

/// The picker: what was typed and the highlighted entry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PickerView {
    /// What was typed.
    pub query: String,
    /// The highlighted entry among the narrowed modes.
    pub selected: usize,
}

/// What it is drawn from.
pub struct PickerProps<'a> {
    /// Every mode, in engine order.
    pub modes: &'a [String],
    /// The selected row.
    pub row: Option<&'a Row>,
    /// Whether lenient results are shown.
    pub lenient: bool,
    /// The overlay window: colors and scroll.
    pub window: Window<'a>,
}

/// The modes the picker offers for `query`: every mode whose name contains
/// it, ignoring case.
pub fn matching<'a>(modes: &'a [String], query: &str) -> Vec<&'a str> {
    let q = query.to_lowercase();
    modes
        .iter()
        .filter(|m| m.to_lowercase().contains(&q))
        .map(String::as_str)
        .collect()
}

const KEYS: &[Key] = &[
    Key::plain(KeyCode::Up),
    Key::plain(KeyCode::Down),
    Key::plain(KeyCode::Tab),
    Key::plain(KeyCode::BackTab),
    Key::ctrl('n'),
    Key::ctrl('p'),
    Key::plain(KeyCode::Enter),
    Key::plain(KeyCode::Esc),
    Key::ctrl('c'),
    Key::plain(KeyCode::Backspace),
];

impl PickerView {
    /// Title and rows.
    pub fn content(&self, props: &PickerProps<'_>) -> Content {
        (" Pick a mode ".to_string(), self.lines(props))
    }

    fn lines(&self, props: &PickerProps<'_>) -> Vec<Line<'static>> {
        let theme = props.window.theme;
        let (query, selected) = (self.query.as_str(), self.selected);
        let mut lines = vec![
            Line::from(vec![
                TSpan::styled("mode: ", theme.header()),
                TSpan::raw(text::one_line(query)),
                TSpan::styled("▏", theme.focused()),
            ]),
            Line::styled(
                "type to narrow · ↑/↓ · Enter picks · Esc closes",
                theme.dim(),
            ),
        ];
        let modes = matching(props.modes, query);
        if modes.is_empty() {
            lines.push(Line::styled("no mode matches", theme.dim()));
        }
        let width = modes
            .iter()
            .map(|m| m.chars().count())
            .max()
            .unwrap_or(4)
            .min(24);
        for (i, mode) in modes.iter().enumerate() {
            let marker = if i == selected { "▶ " } else { "  " };
            let mut spans = vec![
                TSpan::raw(marker),
                TSpan::raw(format!("{:<width$} ", text::one_line(mode))),
            ];
            match props
                .row
                .and_then(|r| crate::row::mode_summary(&r.entry, mode, props.lenient))
            {
                Some(m) => {
                    let live = m.live;
                    spans.push(TSpan::raw(format!("{live:>3} found  ")));
                    spans.push(label_span(theme, Some(m.label)));
                }
                None => spans.push(TSpan::styled("  not run for this transcript", theme.dim())),
            }
            let mut line = Line::from(spans);
            if i == selected {
                line = line.style(theme.selected(true));
            }
            lines.push(line);
        }
        lines
    }
}

impl Component for PickerView {
    type Props<'a> = PickerProps<'a>;
    /// The picked mode, or why none was.
    type Answer = Answer<Result<String, String>>;

    fn draw(&self, props: &PickerProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        popup::draw(frame, area, self.content(props), props.window);
    }

    fn event(
        &mut self,
        key: &KeyEvent,
        _: Option<Action>,
        props: &PickerProps<'_>,
    ) -> Answer<Result<String, String>> {
        let n = matching(props.modes, &self.query).len();
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Esc => return Answer::Close,
            KeyCode::Char('c') if ctrl => return Answer::Close,
            KeyCode::Enter => {
                return Answer::Ask(
                    match matching(props.modes, &self.query).get(self.selected) {
                        Some(m) => Ok(m.to_string()),
                        None => Err(format!("no mode matches `{}`", text::one_line(&self.query))),
                    },
                );
            }
            KeyCode::Down | KeyCode::Tab => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1))
            }
            KeyCode::Char('n') if ctrl => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1))
            }
            KeyCode::Up | KeyCode::BackTab => self.selected = self.selected.saturating_sub(1),
            KeyCode::Char('p') if ctrl => self.selected = self.selected.saturating_sub(1),
            KeyCode::Backspace => {
                self.query.pop();
                self.selected = 0;
            }
            KeyCode::Char(c) if !ctrl => {
                self.query.push(c);
                self.selected = 0;
            }
            _ => return Answer::Ignored,
        }
        Answer::Handled
    }

    fn commands(&self) -> Vec<Command> {
        vec![
            Command::local("mode picker", KEYS, ""),
            Command::rest(
                "mode picker",
                "type to narrow · ↑/↓ Tab/Shift-Tab Ctrl-n/Ctrl-p move · Backspace · Enter picks · Esc/Ctrl-c close",
            ),
        ]
    }
}
