//! The modes table: every mode run for the selected transcript (strict or
//! lenient as toggled) with its candidates, gates, decision, label,
//! whether strict and lenient disagree, and the repairs lenient made.
//! Moving in it picks the mode the other panes show.

use super::{Pane, label_span, pane, variant};
use crate::component::{Command, Component};
use crate::keys::Action;
use crate::layout::{list_offset, scroll_to, table_rows};
use crate::row::Row;
use crate::text;
use crate::theme::Theme;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span as TSpan};
use ratatui::widgets::{
    Block, Borders, Cell, HighlightSpacing, Paragraph, Row as TRow, Table, TableState,
};
use toolgate_core::Gate;
use toolgate_validator::{GateCheck, ModeResult};

/// The modes table (stateless: the mode shown is the app's navigation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModesView;

/// What the modes table is drawn from.
#[derive(Clone, Copy)]
pub struct ModesProps<'a> {
    /// The selection and the pane.
    pub pane: Pane<'a>,
    /// No mode is picked: the profile's is shown.
    pub following: bool,
    /// Only the modes that found candidates are listed.
    pub only_found: bool,
}

/// The table's rows for `row`: every mode run (strict or lenient), or only
/// those that found candidates; none until the row has its whole replay.
pub fn shown(
    row: Option<&Row>,
    lenient: bool,
    only_found: bool,
) -> impl Iterator<Item = &ModeResult> {
    let results = match row.and_then(Row::replay) {
        Some(replay) if lenient => replay.lenient.as_slice(),
        Some(replay) => replay.strict.as_slice(),
        None => &[],
    };
    results
        .iter()
        .filter(move |m| !only_found || !m.candidates.is_empty())
}

/// The names of the table's rows for `row` ([`shown`]), read from its
/// summary: moving through the modes needs no whole replay.
pub fn names(row: Option<&Row>, lenient: bool, only_found: bool) -> Vec<&str> {
    let Some(row) = row else {
        return Vec::new();
    };
    row.entry
        .replay
        .modes(lenient)
        .filter(|(_, m)| !only_found || m.found)
        .map(|(mode, _)| mode)
        .collect()
}

/// Whether `check` was actually checked: a mode without live candidates
/// checks nothing (the validator reports every gate as passed, "no
/// candidates"), and a gate that does not apply to the mode's role (intent
/// and single for primary candidates) is reported as passed "not
/// applicable…". Both are shown as `–`, as the help says.
pub fn gate_checked(m: &ModeResult, check: &GateCheck) -> bool {
    !check.passed
        || (m.candidates.iter().any(|c| c.is_live()) && !check.reason.starts_with("not applicable"))
}

/// The symbol of `gate` in `m`: ✓ passed, ✗ failed, – not checked.
pub fn gate_symbol(theme: &Theme, m: &ModeResult, gate: Gate) -> TSpan<'static> {
    match m.gates.iter().find(|g| g.gate == gate) {
        Some(g) if !gate_checked(m, g) => TSpan::styled("–", theme.dim()),
        Some(g) if g.passed => TSpan::styled("✓", theme.ok()),
        Some(_) => TSpan::styled("✗", theme.bad()),
        None => TSpan::styled("–", theme.dim()),
    }
}

impl Component for ModesView {
    type Props<'a> = ModesProps<'a>;
    /// The mode a movement landed on.
    type Answer = Option<String>;

    fn draw(&self, props: &ModesProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        let sel = &props.pane.sel;
        let theme = sel.theme;
        let mut title = vec![TSpan::raw(format!(" Modes ({}) ", variant(sel.lenient)))];
        let Some(row) = sel.row else {
            frame.render_widget(
                Block::new().borders(Borders::ALL).title(Line::from(title)),
                area,
            );
            return;
        };
        if props.following {
            title.push(TSpan::styled("· following the profile ", theme.dim()));
        }
        if props.only_found {
            title.push(TSpan::styled("· with candidates only ", theme.dim()));
        }
        let Some(replay) = row.replay() else {
            let block = pane(theme, Line::from(title), props.pane.focused);
            let note = Line::styled(text::one_line(row.replay_note()), theme.dim());
            frame.render_widget(Paragraph::new(note).block(block), area);
            return;
        };
        let results: Vec<&ModeResult> = shown(sel.row, sel.lenient, props.only_found).collect();
        let others = if sel.lenient {
            &replay.strict
        } else {
            &replay.lenient
        };
        let header = TRow::new(["mode", "n", "gates", "decide", "label", "Δ", "repairs"])
            .style(theme.header());
        let rows = results.iter().copied().map(|m| {
            let live = m.candidates.iter().filter(|c| c.is_live()).count();
            let in_reasoning = m.candidates.len() - live;
            let n = if in_reasoning > 0 {
                format!("{live}+{in_reasoning}r")
            } else {
                live.to_string()
            };
            let gates: Vec<TSpan<'static>> = Gate::ALL
                .iter()
                .map(|g| gate_symbol(theme, m, *g))
                .collect();
            let other = others.iter().find(|o| o.mode == m.mode);
            let delta = match other {
                Some(o) if o.label != m.label => TSpan::styled("≠", theme.bad()),
                _ => TSpan::raw(" "),
            };
            let mut repairs: Vec<&str> = Vec::new();
            for r in m.candidates.iter().flat_map(|c| c.repairs.iter()) {
                if !repairs.contains(&r.as_str()) {
                    repairs.push(r.as_str());
                }
            }
            TRow::new(vec![
                Cell::from(text::one_line(&m.mode)),
                Cell::from(n),
                Cell::from(Line::from(gates)),
                Cell::from(TSpan::styled(
                    m.decision.kind(),
                    theme.decision(m.decision.kind()),
                )),
                Cell::from(label_span(theme, Some(m.label))),
                Cell::from(delta),
                Cell::from(repairs.join(",")),
            ])
        });
        // As wide as the longest mode name (custom patterns included), within reason.
        let mode_width = results
            .iter()
            .map(|m| m.mode.chars().count())
            .max()
            .unwrap_or(4)
            .clamp(4, 20) as u16;
        let widths = [
            Constraint::Length(mode_width),
            Constraint::Length(4),
            Constraint::Length(6),
            Constraint::Length(7),
            Constraint::Length(18),
            Constraint::Length(1),
            Constraint::Fill(1),
        ];
        let selected = results.iter().position(|m| m.mode == sel.mode);
        let table = Table::new(rows, widths)
            .header(header)
            .column_spacing(1)
            .block(pane(theme, Line::from(title), props.pane.focused))
            .row_highlight_style(theme.selected(props.pane.focused))
            .highlight_symbol("▶")
            .highlight_spacing(HighlightSpacing::Always);
        let mut state = TableState::default()
            .with_offset(list_offset(selected.unwrap_or(0), 0, results.len(), area))
            .with_selected(selected);
        frame.render_stateful_widget(table, area, &mut state);
    }

    /// A movement picks the mode it lands on.
    fn event(
        &mut self,
        _key: &KeyEvent,
        action: Option<Action>,
        props: &ModesProps<'_>,
    ) -> Option<String> {
        let action = action.filter(|a| a.is_movement())?;
        let sel = &props.pane.sel;
        sel.row?;
        let names = names(sel.row, sel.lenient, props.only_found);
        if names.is_empty() {
            return None;
        }
        let i = names.iter().position(|m| *m == sel.mode).unwrap_or(0);
        let page = table_rows(props.pane.area);
        let to = scroll_to(i, action, page, names.len() - 1);
        Some(names[to].to_string())
    }

    fn commands(&self) -> Vec<Command> {
        let mut commands = super::movement();
        commands.extend([
            Command::bound(Action::NextMode, "next parse mode"),
            Command::bound(Action::PrevMode, "previous parse mode"),
            Command::bound(Action::PickMode, "pick a mode: type to narrow, ↑/↓, Enter"),
            Command::bound(Action::FollowProfile, "follow the profile's mode again"),
            Command::bound(
                Action::OnlyFound,
                "modes table: only modes with candidates / all",
            ),
            Command::bound(Action::ToggleLenient, "strict / lenient results"),
        ]);
        commands
    }
}
