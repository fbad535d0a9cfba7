//! The window every overlay opens in: a bordered rectangle over the
//! screen ([`crate::layout::overlay_rect`]), its content wrapped to the
//! width and scrolled, with a hint when it holds more than fits.

use crate::layout::{inner_rows, inner_width, overlay_rect};
use crate::text;
use crate::theme::Theme;
use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::text::Line;
use ratatui::widgets::{Block, Borders, Clear, Paragraph};

/// The window an overlay is drawn in: its colors and how far it is
/// scrolled.
#[derive(Clone, Copy)]
pub struct Window<'a> {
    /// Colors or not.
    pub theme: &'a Theme,
    /// The first row shown.
    pub scroll: usize,
}

/// What an overlay holds: its title and every row (not yet wrapped).
pub type Content = (String, Vec<Line<'static>>);

/// `content` wrapped to the overlay's width on a screen of `screen`.
pub fn wrapped(content: Content, screen: Rect) -> Content {
    let width = inner_width(overlay_rect(screen));
    (content.0, text::wrap(content.1, width))
}

/// Draws `content`, wrapped, in the overlay window of `screen`, from the
/// window's scroll (clamped to the last page).
pub fn draw(frame: &mut Frame<'_>, screen: Rect, content: Content, window: Window<'_>) {
    let Window { theme, scroll } = window;
    let area = overlay_rect(screen);
    let (title, lines) = wrapped(content, screen);
    let rows = inner_rows(area);
    let start = scroll.min(lines.len().saturating_sub(rows));
    // Say so when the overlay holds more than fits (the help on a short
    // terminal): it scrolls.
    let hint = if lines.len() > rows {
        " Esc close · ↑/↓ scroll "
    } else {
        " Esc close "
    };
    let shown: Vec<Line<'static>> = lines.into_iter().skip(start).take(rows).collect();
    frame.render_widget(Clear, area);
    let block = Block::new()
        .borders(Borders::ALL)
        .border_style(theme.focused())
        .title(Line::raw(title))
        .title_bottom(Line::styled(hint, theme.dim()));
    frame.render_widget(Paragraph::new(shown).block(block), area);
}
