//! The screen's geometry: where each pane goes, which rows of a list are
//! shown, the list's column widths, the overlay's rectangle and where the
//! output pane starts. Pure functions of sizes and positions, so that
//! [`crate::app::App`] (scrolling, mouse clicks) and the views (drawing)
//! agree on the same numbers without asking each other.

use crate::keys::Action;
use ratatui::layout::{Constraint, Layout, Rect};

/// Where each part of the screen goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Areas {
    /// The transcript list.
    pub list: Rect,
    /// The output pane.
    pub output: Rect,
    /// The modes table.
    pub modes: Rect,
    /// The detail pane.
    pub detail: Rect,
    /// The prompt line, when open.
    pub prompt: Option<Rect>,
    /// The status bar.
    pub status: Rect,
}

/// The screen layout for a terminal of `area`.
pub fn layout(area: Rect, prompt: bool) -> Areas {
    let [main, prompt_row, status] = Layout::vertical([
        Constraint::Min(3),
        Constraint::Length(u16::from(prompt)),
        Constraint::Length(3),
    ])
    .areas(area);
    let [list, bottom] =
        Layout::vertical([Constraint::Percentage(40), Constraint::Percentage(60)]).areas(main);
    let [output, right] =
        Layout::horizontal([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(bottom);
    let [modes, detail] =
        Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(right);
    Areas {
        list,
        output,
        modes,
        detail,
        prompt: prompt.then_some(prompt_row),
        status,
    }
}

/// The rows inside a bordered pane of `area` (zero when it is too short).
pub fn inner_rows(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(2))
}

/// The columns inside a bordered pane of `area`.
pub fn inner_width(area: Rect) -> usize {
    usize::from(area.width.saturating_sub(2))
}

/// How far a page key moves in a bordered pane of `area`: its inner rows,
/// at least one.
pub fn page(area: Rect) -> usize {
    inner_rows(area).max(1)
}

/// The data rows a bordered table with a header row shows in `area` (and
/// so how far a page key moves in it): at least one.
pub fn table_rows(area: Rect) -> usize {
    usize::from(area.height.saturating_sub(3)).max(1)
}

/// The screen row of a bordered table's first data row (below the
/// border and the header).
pub fn first_table_row(area: Rect) -> u16 {
    area.y + 2
}

/// How far a page key scrolls an overlay on a screen of `screen`.
pub fn overlay_page(screen: Rect) -> usize {
    usize::from(screen.height.saturating_sub(6)).max(1)
}

/// The first row shown of a table of `len` rows drawn in `area` (two
/// border rows and a header row) whose selection is `selected`, given the
/// first row shown before (`top`): it moves only as far as needed to keep
/// the selection visible, and never leaves rows empty below the last one
/// while earlier rows could fill them (a list that shrank under a
/// scrolled window shows a full page again).
pub fn list_offset(selected: usize, top: usize, len: usize, area: Rect) -> usize {
    let visible = table_rows(area);
    let top = top.min(len.saturating_sub(visible));
    if selected < top {
        selected
    } else if selected >= top + visible {
        selected + 1 - visible
    } else {
        top
    }
}

/// The width of each column of the list, as ratatui's `Table` lays them out
/// in `inner` columns: the highlight symbol's column first, then the
/// constraints with one column of spacing, from the start.
pub fn list_column_widths(widths: &[Constraint], inner: u16) -> Vec<u16> {
    let [_, columns] = Layout::horizontal([Constraint::Length(1), Constraint::Fill(0)])
        .areas(Rect::new(0, 0, inner, 1));
    Layout::horizontal(widths.to_vec())
        .flex(ratatui::layout::Flex::Start)
        .spacing(1)
        .split(columns)
        .iter()
        .map(|r| r.width)
        .collect()
}

/// The first output row shown: the user's `scroll`, else two rows above the
/// first candidate; clamped to the last page.
pub fn output_start(scroll: Option<usize>, total: usize, focus: usize, rows: usize) -> usize {
    scroll
        .unwrap_or(focus.saturating_sub(2))
        .min(total.saturating_sub(rows))
}

/// The rectangle overlays use on a screen of `area`.
pub fn overlay_rect(area: Rect) -> Rect {
    let w = area.width.saturating_mul(9) / 10;
    let h = area.height.saturating_mul(9) / 10;
    Rect::new(
        area.x + (area.width - w) / 2,
        area.y + (area.height - h) / 2,
        w,
        h,
    )
}

/// Where a movement `action` takes position `at` of a pane that shows
/// `page` rows at a time and can start at most at `max`.
pub fn scroll_to(at: usize, action: Action, page: usize, max: usize) -> usize {
    let to = match action {
        Action::Down => at.saturating_add(1),
        Action::Up => at.saturating_sub(1),
        Action::Top => 0,
        Action::Bottom => max,
        Action::PageDown => at.saturating_add(page),
        Action::PageUp => at.saturating_sub(page),
        _ => at,
    };
    to.min(max)
}
