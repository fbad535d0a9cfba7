//! The output pane: the raw output with the selected mode's candidates
//! highlighted, reasoning dimmed and the parse-failure byte marked, then
//! the reasoning field and the native `tool_calls`. It scrolls to the
//! first candidate until the user scrolls it.

use super::{Pane, Selected, pane, variant};
use crate::component::{Command, Component};
use crate::keys::Action;
use crate::layout::{inner_rows, inner_width, output_start, page, scroll_to};
use crate::text::{self, Marks};
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span as TSpan};
use ratatui::widgets::Paragraph;
use toolgate_core::Source;

/// The output pane and its scroll.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct OutputView {
    /// The first row shown; `None` until the user scrolls: the pane then
    /// shows the first candidate.
    pub scroll: Option<usize>,
}

/// Every row of the output pane for a pane drawn in `area`, wrapped, and
/// the row where the selected mode's first candidate starts (where the pane
/// scrolls to until the user scrolls it).
pub fn lines(sel: &Selected<'_>, area: Rect) -> (Vec<Line<'static>>, usize) {
    let width = inner_width(area);
    let theme = sel.theme;
    let Some(row) = sel.row else {
        return (
            vec![Line::styled("(no transcript selected)", theme.dim())],
            0,
        );
    };
    let t = &row.entry.transcript;
    let style = sel.mode_style(sel.mode);
    let mut out_marks = Marks {
        reasoning: toolgate_formats::reasoning_spans(&t.output),
        ..Marks::default()
    };
    let mut field_marks = Marks {
        all_reasoning: true,
        ..Marks::default()
    };
    for c in sel
        .result
        .map(|m| m.candidates.as_slice())
        .unwrap_or_default()
    {
        let marks = match c.source {
            Source::Output | Source::OutputReasoning => &mut out_marks,
            Source::ReasoningField => &mut field_marks,
            Source::Native => continue,
        };
        marks.candidates.push((c.span, style));
        if let Some(f) = c.failure() {
            marks.failures.push(f.offset);
        }
    }
    let first = out_marks
        .candidates
        .iter()
        .map(|(span, _)| span.start)
        .min();
    let mut lines = if t.output.is_empty() {
        vec![Line::styled("(empty output)", theme.dim())]
    } else {
        text::styled(
            &t.output,
            &out_marks,
            Style::new(),
            theme.reasoning(),
            theme.failure(),
        )
    };
    // The row of the first candidate: wrapped rows of the lines before it.
    let focus = match first {
        Some(start) if start <= text::DISPLAY_LIMIT && start <= t.output.len() => {
            let line = t.output.as_bytes()[..start]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            lines
                .iter()
                .take(line)
                .map(|l| text::wrap(vec![l.clone()], width).len())
                .sum()
        }
        _ => 0,
    };
    if let Some(reasoning) = &t.reasoning {
        lines.push(Line::styled("── reasoning field ──", theme.header()));
        lines.extend(text::styled(
            reasoning,
            &field_marks,
            Style::new(),
            theme.reasoning(),
            theme.failure(),
        ));
    }
    if let Some(calls) = &t.tool_calls {
        lines.push(Line::styled("── native tool_calls ──", theme.header()));
        let json = serde_json::to_string_pretty(calls).unwrap_or_default();
        lines.extend(text::plain(&json, Style::new()));
    }
    (text::wrap(lines, width), focus)
}

impl Component for OutputView {
    type Props<'a> = Pane<'a>;
    /// Whether the key moved the pane.
    type Answer = bool;

    fn draw(&self, props: &Pane<'_>, frame: &mut Frame<'_>, area: Rect) {
        let sel = &props.sel;
        let theme = sel.theme;
        let mut title = vec![TSpan::raw(" Output ")];
        if let Some(m) = sel.result {
            let live = m.candidates.iter().filter(|c| c.is_live()).count();
            title.push(TSpan::styled(
                format!(" {} ", text::one_line(&m.mode)),
                sel.mode_style(&m.mode),
            ));
            title.push(TSpan::raw(format!(
                " {} · {live} found ",
                variant(sel.lenient),
            )));
            if let Some(f) = m.candidates.iter().find_map(|c| c.failure()) {
                title.push(TSpan::styled(
                    format!("· ✗ {} @{} ", f.kind, f.offset),
                    theme.bad(),
                ));
            }
        } else if sel.row.is_some() {
            title.push(TSpan::styled(
                format!(
                    "· {} not run for this transcript ",
                    text::one_line(sel.mode)
                ),
                theme.dim(),
            ));
        }
        let (lines, focus) = lines(sel, area);
        let rows = inner_rows(area);
        let start = output_start(self.scroll, lines.len(), focus, rows);
        let shown: Vec<Line<'static>> = lines.into_iter().skip(start).take(rows).collect();
        frame.render_widget(
            Paragraph::new(shown).block(pane(theme, Line::from(title), props.focused)),
            area,
        );
    }

    fn event(&mut self, _key: &KeyEvent, action: Option<Action>, props: &Pane<'_>) -> bool {
        let Some(action) = action.filter(|a| a.is_movement()) else {
            return false;
        };
        let page = page(props.area);
        let (lines, focus) = lines(&props.sel, props.area);
        let at = output_start(self.scroll, lines.len(), focus, page);
        self.scroll = Some(scroll_to(
            at,
            action,
            page,
            lines.len().saturating_sub(page),
        ));
        true
    }

    fn commands(&self) -> Vec<Command> {
        super::movement()
    }
}
