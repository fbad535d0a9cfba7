//! The views: each a [`Component`](crate::component::Component) that owns
//! its state and draws from the row it shows. The four panes (list,
//! output, modes, detail), the status bar and the prompt line are always
//! there; the rest open as overlays over them.

pub mod confirm;
pub mod copy;
pub mod detail;
pub mod diff;
pub mod help;
pub mod list;
pub mod modes;
pub mod output;
pub mod picker;
pub mod popup;
pub mod prompt;
pub mod review;
pub mod status;
pub mod stream;
pub mod unreadable;

use crate::row::Row;
use crate::text;
use crate::theme::Theme;
use ratatui::style::Style;
use ratatui::text::{Line, Span as TSpan};
use ratatui::widgets::{Block, Borders};
use std::path::PathBuf;
use toolgate_core::Label;
use toolgate_validator::ModeResult;

/// What the output, modes and detail panes show: the selected row, seen
/// through the selected mode.
#[derive(Clone, Copy)]
pub struct Selected<'a> {
    /// The selected row.
    pub row: Option<&'a Row>,
    /// The mode shown.
    pub mode: &'a str,
    /// Its result for the row (strict or lenient as toggled).
    pub result: Option<&'a ModeResult>,
    /// Whether lenient results are shown.
    pub lenient: bool,
    /// Every mode, in engine order (a mode's color is its index).
    pub modes: &'a [String],
    /// Watched roots and how the user wrote them (for paths).
    pub roots: &'a [(PathBuf, String)],
    /// Colors or not.
    pub theme: &'a Theme,
}

impl Selected<'_> {
    /// The candidate color of `mode`.
    pub fn mode_style(&self, mode: &str) -> Style {
        let i = self.modes.iter().position(|m| m == mode).unwrap_or(0);
        self.theme.candidate(i)
    }
}

/// A pane's bordered block, highlighted when focused.
pub fn pane<'a>(theme: &Theme, title: Line<'a>, focused: bool) -> Block<'a> {
    let style = if focused {
        theme.focused()
    } else {
        Style::new()
    };
    Block::new()
        .borders(Borders::ALL)
        .border_style(style)
        .title(title)
}

/// A label in its color, or a dim `-`.
pub fn label_span(theme: &Theme, label: Option<Label>) -> TSpan<'static> {
    match label {
        Some(l) => TSpan::styled(l.as_str(), theme.label(l)),
        None => TSpan::styled("-", theme.dim()),
    }
}

/// An optional transcript field on one line, or `-`.
pub fn opt(s: Option<&str>) -> String {
    s.map(text::one_line).unwrap_or_else(|| "-".into())
}

/// `strict` or `lenient`.
pub fn variant(lenient: bool) -> &'static str {
    if lenient { "lenient" } else { "strict" }
}

/// A section heading.
pub fn section(theme: &Theme, title: &str) -> Line<'static> {
    Line::styled(title.to_string(), theme.header())
}

/// `page` rows of `lines` from `start` (clamped to the last page).
pub fn window(lines: Vec<Line<'static>>, start: usize, page: usize) -> Vec<Line<'static>> {
    let start = start.min(lines.len().saturating_sub(page));
    lines.into_iter().skip(start).take(page).collect()
}

/// What a pane is drawn from: the selection, where the pane is, whether
/// it has the focus.
#[derive(Clone, Copy)]
pub struct Pane<'a> {
    /// The selected row and mode.
    pub sel: Selected<'a>,
    /// The pane's area (pages and wrapping follow it).
    pub area: ratatui::layout::Rect,
    /// Whether the pane has the focus.
    pub focused: bool,
}

/// What an overlay makes of a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer<R> {
    /// Not a key of this overlay.
    Ignored,
    /// The overlay changed its own state.
    Handled,
    /// Scroll the overlay window.
    Scroll(crate::keys::Action),
    /// Close the overlay.
    Close,
    /// Close it, asking the app for `R`.
    Ask(R),
}

/// The six movement commands every scrolling view answers.
pub fn movement() -> Vec<crate::component::Command> {
    use crate::component::Command;
    use crate::keys::Action;
    vec![
        Command::bound(Action::Down, "down one line"),
        Command::bound(Action::Up, "up one line"),
        Command::bound(Action::Top, "first line"),
        Command::bound(Action::Bottom, "last line"),
        Command::bound(Action::PageDown, "page down"),
        Command::bound(Action::PageUp, "page up"),
    ]
}

/// Whether `key` is one of an overlay's own `keys`: by its code, whatever
/// the modifiers (as the overlays have always read them).
pub fn is_key(keys: &[crate::keys::Key], key: &ratatui::crossterm::event::KeyEvent) -> bool {
    keys.iter().any(|k| k.code == key.code)
}

/// A read-only overlay's answer: Esc, `q` or one of `closers` close it,
/// any other action scrolls it (one that is no movement keeps it in range).
pub fn close_or_scroll<R>(
    action: Option<crate::keys::Action>,
    closers: &[crate::keys::Action],
) -> Answer<R> {
    use crate::keys::Action;
    match action {
        Some(Action::Close | Action::Quit) => Answer::Close,
        Some(a) if closers.contains(&a) => Answer::Close,
        Some(a) => Answer::Scroll(a),
        _ => Answer::Ignored,
    }
}
