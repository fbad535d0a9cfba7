//! The transcript list: one row a transcript (id, path, model, task, the
//! shown label and decision, the judging profile under `auto`), with a
//! marker column, what the search and filter match highlighted, and the
//! id, path, model and task cut to keep what tells rows apart. Only the
//! visible window is built: the list may hold 10,000 rows.

use super::{label_span, opt, pane};
use crate::component::{Command, Component};
use crate::elide::Elide;
use crate::filter::Filter;
use crate::keys::Action;
use crate::layout::{list_column_widths, list_offset, scroll_to, table_rows};
use crate::row::{Row, SortKey};
use crate::text;
use crate::theme::Theme;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span as TSpan};
use ratatui::widgets::{Cell, HighlightSpacing, Paragraph, Row as TRow, Table, TableState};
use std::path::PathBuf;

/// The list: how it is narrowed and ordered, and the first row it shows
/// (it scrolls only as needed).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ListView {
    /// The first row shown.
    pub top: usize,
    /// The last search (highlighted; `n`/`N` step through its matches).
    pub search: Option<String>,
    /// The filter.
    pub filter: Filter,
    /// The order.
    pub sort: SortKey,
    /// Whether the order is reversed.
    pub reverse: bool,
}

/// What the list is drawn from.
#[derive(Clone, Copy)]
pub struct ListProps<'a> {
    /// The filtered, sorted rows.
    pub rows: &'a [Row],
    /// The selected row.
    pub selected: usize,
    /// Transcripts loaded before filtering.
    pub total: usize,
    /// Load progress: files loaded, files known, scans outstanding.
    pub progress: (usize, usize, usize),
    /// Watched roots and how the user wrote them.
    pub roots: &'a [(PathBuf, String)],
    /// Colors or not.
    pub theme: &'a Theme,
    /// Whether the list has the focus.
    pub focused: bool,
    /// The list's area (its page).
    pub area: Rect,
}

impl ListView {
    /// Moves the window as little as needed to show `selected`.
    pub fn follow(&mut self, selected: usize, len: usize, area: Rect) {
        self.top = list_offset(selected, self.top, len, area);
    }

    /// The title: counts, order, search, filter, rows without tools.
    fn title(&self, props: &ListProps<'_>) -> String {
        let rows = props.rows;
        let mut title = format!(
            " Transcripts {} of {} · sort {}",
            rows.len(),
            props.total,
            self.sort.name()
        );
        if self.reverse {
            title.push_str(" (reversed)");
        }
        if let Some(s) = self.search.as_deref() {
            let n = rows.iter().filter(|r| r.matches(s)).count();
            title.push_str(&format!(" · /{} {n} found", text::one_line(s)));
        }
        if !self.filter.is_empty() {
            title.push_str(&format!(" · filter {}", text::one_line(&self.filter.text)));
        }
        if let Some(mode) = &self.filter.mode {
            title.push_str(&format!(" · labels of {}", text::one_line(mode)));
        }
        // Rows judged without a tool list (SPEC §4), counted apart (`?` rows).
        let unknown = rows
            .iter()
            .filter(|r| r.entry.transcript.tools_unknown())
            .count();
        if unknown > 0 {
            title.push_str(&format!(" · {unknown} tools unknown"));
        }
        title.push(' ');
        title
    }
}

/// What an empty list says: loading, nothing matches, or nothing there.
fn empty_message(props: &ListProps<'_>) -> String {
    let (loaded, known, scans) = props.progress;
    if scans > 0 || loaded < known {
        "loading…".to_string()
    } else if props.total > 0 {
        "no transcript matches the filter (Esc clears it)".to_string()
    } else {
        let roots: Vec<&str> = props.roots.iter().map(|(_, s)| s.as_str()).collect();
        format!(
            "no transcripts under {} yet (.json / .jsonl files)",
            text::one_line(&roots.join(", "))
        )
    }
}

/// The id, path, model and task of the `shown` rows, each cut to its
/// column's width keeping what tells it from the others shown.
fn cut_columns(shown: &[&Row], column_widths: &[u16]) -> Vec<Vec<String>> {
    let texts: Vec<[String; 4]> = shown
        .iter()
        .map(|r| {
            let t = &r.entry.transcript;
            let path = match t.line {
                Some(l) => format!("{}:{l}", r.path),
                None => r.path.to_string(),
            };
            [
                text::one_line(&t.id),
                text::one_line(&path),
                opt(t.model.as_deref()),
                opt(t.task.as_deref()),
            ]
        })
        .collect();
    (0..4)
        .map(|k| {
            let column: Vec<&str> = texts.iter().map(|c| c[k].as_str()).collect();
            let how = if k == 1 { Elide::Start } else { Elide::Middle };
            match column_widths.get(k + 1) {
                Some(&w) => crate::elide::distinct_cuts(&column, usize::from(w), how),
                None => column.iter().map(|c| c.to_string()).collect(),
            }
        })
        .collect()
}

/// The marker column: `*` labels changed, `?` tools unknown, `!` server
/// findings, `+` no stored labels.
fn marker(r: &Row, theme: &Theme) -> TSpan<'static> {
    if r.changed {
        TSpan::styled("*", theme.bad())
    } else if r.entry.transcript.tools_unknown() {
        TSpan::styled("?", theme.bad())
    } else if !r.entry.replay.findings.is_empty() {
        TSpan::styled("!", theme.bad())
    } else if r.unlabeled {
        TSpan::styled("+", theme.dim())
    } else {
        TSpan::raw(" ")
    }
}

impl Component for ListView {
    type Props<'a> = ListProps<'a>;
    /// The row a movement landed on.
    type Answer = Option<usize>;

    fn draw(&self, props: &ListProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        let theme = props.theme;
        let rows = props.rows;
        let block = pane(theme, Line::from(self.title(props)), props.focused);
        if rows.is_empty() {
            frame.render_widget(
                Paragraph::new(Line::styled(empty_message(props), theme.dim())).block(block),
                area,
            );
            return;
        }
        // With `auto`, the profile that judged each row (its source is in Detail).
        let judged = rows.iter().any(|r| r.entry.judge.is_some());
        let mut columns = vec!["", "id", "path", "model", "task", "label", "decision"];
        if judged {
            columns.push("profile");
        }
        let header = TRow::new(columns).style(theme.header());
        // What the search and the filter's words match is highlighted.
        let mut needles: Vec<&str> = self.filter.words.iter().map(String::as_str).collect();
        if let Some(s) = self.search.as_deref() {
            needles.push(s);
        }
        let mut model_needles = needles.clone();
        if let Some(m) = &self.filter.model {
            model_needles.push(m);
        }
        let hl = theme.matched();
        let cell = |s: &str, needles: &[&str]| Cell::from(text::highlight(s, needles, hl));
        // Only the visible window is built: the list may hold 10,000 rows.
        let offset = list_offset(props.selected, self.top, rows.len(), area);
        let visible = table_rows(area);
        let mut widths = vec![
            Constraint::Length(1),
            Constraint::Fill(3),
            Constraint::Fill(3),
            Constraint::Fill(2),
            Constraint::Fill(2),
            Constraint::Length(18),
            Constraint::Length(8),
        ];
        if judged {
            widths.push(Constraint::Fill(1));
        }
        // The id, path, model and task of the visible rows, each cut (as the
        // table's columns will be wide) keeping what tells it from the others
        // shown: proxy recordings differ only at the end of their names.
        let shown: Vec<&Row> = rows.iter().skip(offset).take(visible).collect();
        let column_widths = list_column_widths(&widths, area.width.saturating_sub(2));
        let cut_columns = cut_columns(&shown, &column_widths);
        let table_rows = shown.into_iter().enumerate().map(|(i, r)| {
            let shown = |k: usize| cut_columns[k][i].as_str();
            let mut cells = vec![
                Cell::from(marker(r, theme)),
                cell(shown(0), &needles),
                cell(shown(1), &needles),
                cell(shown(2), &model_needles),
                cell(shown(3), &needles),
                Cell::from(label_span(theme, r.label)),
                Cell::from(TSpan::styled(r.decision, theme.decision(r.decision))),
            ];
            if judged {
                let name = r.entry.judge.as_ref().map(|(p, _)| p.name.as_str());
                cells.push(Cell::from(TSpan::styled(opt(name), theme.dim())));
            }
            TRow::new(cells)
        });
        let table = Table::new(table_rows, widths)
            .header(header)
            .block(block)
            .row_highlight_style(theme.selected(props.focused))
            .highlight_symbol("▶")
            .highlight_spacing(HighlightSpacing::Always);
        let mut state =
            TableState::default().with_selected(Some(props.selected.saturating_sub(offset)));
        frame.render_stateful_widget(table, area, &mut state);
    }

    fn event(
        &mut self,
        _key: &KeyEvent,
        action: Option<Action>,
        props: &ListProps<'_>,
    ) -> Option<usize> {
        let action = action.filter(|a| a.is_movement())?;
        let page = table_rows(props.area);
        let max = props.rows.len().saturating_sub(1);
        Some(scroll_to(props.selected, action, page, max))
    }

    fn commands(&self) -> Vec<Command> {
        let mut commands = super::movement();
        commands.extend([
            Command::bound(
                Action::Search,
                "search id/path/model/task (live; Esc puts back)",
            ),
            Command::bound(Action::SearchNext, "next match"),
            Command::bound(Action::SearchPrev, "previous match"),
            Command::bound(
                Action::Filter,
                "filter (live): label:L mode:M model:X changed new, words",
            ),
            Command::bound(Action::Sort, "cycle sort order"),
            Command::bound(Action::ReverseSort, "reverse the sort order"),
            Command::bound(Action::Edit, "open the file in $VISUAL / $EDITOR"),
        ]);
        commands
    }
}
