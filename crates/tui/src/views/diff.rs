//! The diff view: a unified diff (via `similar`) of two sides' label and
//! normalized calls (pretty JSON), or of stored against current labels.

use super::popup::{self, Content, Window};
use super::{Answer, Selected};
use crate::component::{Command, Component};
use crate::event::{Entry, current_labels};
use crate::keys::{Action, Key};
use crate::row::Row;
use crate::text;
use crate::theme::Theme;
use ratatui::Frame;
use ratatui::crossterm::event::{KeyCode, KeyEvent};
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Line;
use similar::TextDiff;
use toolgate_validator::ModeResult;

/// What the diff view compares.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DiffKind {
    /// The selected mode, strict against lenient.
    #[default]
    StrictVsLenient,
    /// The selected mode against another mode (`m`/`M` picks it).
    ModeVsMode,
    /// The stored labels against the current ones.
    StoredVsCurrent,
}

/// The text one side of a mode diff shows: its label, then its calls.
pub fn side_text(m: Option<&ModeResult>) -> String {
    match m {
        None => "(mode not run)\n".to_string(),
        Some(m) => {
            let calls: Vec<serde_json::Value> = m.calls.iter().map(|c| c.to_json()).collect();
            format!(
                "label: {}\ndecision: {}\ncalls: {}\n",
                m.label,
                m.decision.kind(),
                serde_json::to_string_pretty(&calls).unwrap_or_default()
            )
        }
    }
}

/// A unified diff of `a` and `b`, or `None` when they are equal.
pub fn unified(a_name: &str, a: &str, b_name: &str, b: &str) -> Option<String> {
    if a == b {
        return None;
    }
    let diff = TextDiff::from_lines(a, b);
    Some(
        diff.unified_diff()
            .context_radius(3)
            .header(a_name, b_name)
            .to_string(),
    )
}

/// The two sides of a stored-vs-current labels diff, one `mode: label` line
/// each: the stored labels (engine order first, then modes only the file
/// knows) and the current strict labels of the stored modes (every mode
/// when nothing is stored), as `toolgate label --check` compares.
pub fn stored_and_current(entry: &Entry) -> (String, String) {
    let current_all = current_labels(entry);
    let stored = match &entry.transcript.stored_labels {
        None => "(no labels stored)\n".to_string(),
        Some(map) => {
            let mut out = String::new();
            for (mode, _) in &current_all {
                if let Some(l) = map.get(mode) {
                    out.push_str(&format!("{mode}: {l}\n"));
                }
            }
            for (mode, l) in map {
                if !current_all.iter().any(|(m, _)| m == mode) {
                    out.push_str(&format!("{mode}: {l}\n"));
                }
            }
            out
        }
    };
    let stored_map = entry.transcript.stored_labels.as_ref();
    let current: String = current_all
        .iter()
        .filter(|(m, _)| stored_map.is_none_or(|s| s.contains_key(m)))
        .map(|(m, l)| format!("{m}: {l}\n"))
        .collect();
    (stored, current)
}

/// The rows of a unified diff, colored: headers, added, removed, hunks.
pub fn colored(diff: &str, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for l in diff.lines() {
        let style = if l.starts_with("+++") || l.starts_with("---") {
            theme.header()
        } else if l.starts_with('+') {
            theme.added()
        } else if l.starts_with('-') {
            theme.removed()
        } else if l.starts_with("@@") {
            theme.hunk()
        } else {
            Style::new()
        };
        lines.extend(text::plain(l, style));
    }
    lines
}

/// Title and colored rows of the diff overlay for the selected transcript
/// (`row`), whose shown `mode` is compared as `kind` says (strict or
/// `lenient` results where that matters).
pub fn diff_view(
    row: Option<&Row>,
    mode: &str,
    lenient: bool,
    theme: &Theme,
    kind: DiffKind,
    other: &str,
) -> (String, Vec<Line<'static>>) {
    let Some(row) = row else {
        return (" Diff ".into(), vec![Line::raw("(no transcript selected)")]);
    };
    let entry = &row.entry;
    let Some(replay) = row.replay() else {
        return (
            " Diff ".into(),
            vec![Line::styled(text::one_line(row.replay_note()), theme.dim())],
        );
    };
    let mode_result = |mode: &str| {
        if lenient {
            replay.lenient_mode(mode)
        } else {
            replay.strict_mode(mode)
        }
    };
    let (title, a_name, a, b_name, b) = match kind {
        DiffKind::StrictVsLenient => (
            format!(" Diff: {mode} strict vs lenient "),
            format!("{mode} (strict)"),
            side_text(replay.strict_mode(mode)),
            format!("{mode} (lenient)"),
            side_text(replay.lenient_mode(mode)),
        ),
        DiffKind::ModeVsMode => {
            let v = if lenient { "lenient" } else { "strict" };
            (
                format!(" Diff: {mode} vs {other} ({v}) "),
                format!("{mode} ({v})"),
                side_text(mode_result(mode)),
                format!("{other} ({v})"),
                side_text(mode_result(other)),
            )
        }
        DiffKind::StoredVsCurrent => {
            let (stored, current) = stored_and_current(entry);
            (
                " Diff: stored vs current labels ".to_string(),
                "stored".to_string(),
                stored,
                "current".to_string(),
                current,
            )
        }
    };
    let title = text::one_line(&title);
    let hint = Line::styled(
        "Tab: what to compare · m/M: other mode · j/k scroll · Esc close",
        theme.dim(),
    );
    let lines = match unified(&a_name, &a, &b_name, &b) {
        None => {
            let mut lines = vec![hint, Line::styled("(no difference)", theme.ok())];
            lines.extend(text::plain(&a, theme.dim()));
            lines
        }
        Some(diff) => {
            let mut lines = vec![hint];
            lines.extend(colored(&diff, theme));
            lines
        }
    };
    (title, lines)
}

/// The diff view: what it compares, and the other mode of a mode diff.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DiffView {
    /// What is compared.
    pub kind: DiffKind,
    /// The other mode for [`DiffKind::ModeVsMode`].
    pub other: String,
}

/// What the diff view is drawn from.
pub struct DiffProps<'a> {
    /// The selection (row, mode, strict or lenient).
    pub sel: Selected<'a>,
    /// The overlay window: colors and scroll.
    pub window: Window<'a>,
}

/// The mode after (or before) `mode` in `modes`, wrapping around.
pub fn cycle(modes: &[String], mode: &str, forward: bool) -> String {
    let n = modes.len();
    if n == 0 {
        return mode.to_string();
    }
    let i = modes.iter().position(|m| m == mode).unwrap_or(0);
    modes[if forward {
        (i + 1) % n
    } else {
        (i + n - 1) % n
    }]
    .clone()
}

const TAB: &[Key] = &[Key::plain(KeyCode::Tab), Key::ch('m'), Key::ch('M')];

impl DiffView {
    /// Title and rows.
    pub fn content(&self, props: &DiffProps<'_>) -> Content {
        let sel = &props.sel;
        diff_view(
            sel.row,
            sel.mode,
            sel.lenient,
            sel.theme,
            self.kind,
            &self.other,
        )
    }
}

impl Component for DiffView {
    type Props<'a> = DiffProps<'a>;
    /// `Handled`: it compares something else now (the window goes back
    /// to the top).
    type Answer = Answer<()>;

    fn draw(&self, props: &DiffProps<'_>, frame: &mut Frame<'_>, area: Rect) {
        popup::draw(frame, area, self.content(props), props.window);
    }

    fn event(
        &mut self,
        key: &KeyEvent,
        action: Option<Action>,
        props: &DiffProps<'_>,
    ) -> Answer<()> {
        match (key.code, action) {
            (KeyCode::Tab, _) => {
                self.kind = match self.kind {
                    DiffKind::StrictVsLenient => DiffKind::ModeVsMode,
                    DiffKind::ModeVsMode => DiffKind::StoredVsCurrent,
                    DiffKind::StoredVsCurrent => DiffKind::StrictVsLenient,
                };
                Answer::Handled
            }
            (_, Some(Action::NextMode | Action::PrevMode)) => {
                self.other = cycle(
                    props.sel.modes,
                    &self.other,
                    action == Some(Action::NextMode),
                );
                self.kind = DiffKind::ModeVsMode;
                Answer::Handled
            }
            (_, Some(Action::Close | Action::Diff | Action::Quit)) => Answer::Close,
            (_, Some(a)) => Answer::Scroll(a),
            _ => Answer::Ignored,
        }
    }

    fn commands(&self) -> Vec<Command> {
        let mut commands = vec![
            Command::bound(Action::Diff, "diff view (Tab: what to compare)"),
            Command::local(
                "diff view",
                TAB,
                "Tab: strict vs lenient → mode vs mode → stored vs current; m/M: other mode",
            ),
            Command::also(Action::NextMode),
            Command::also(Action::PrevMode),
            Command::also(Action::Close),
            Command::also(Action::Quit),
        ];
        commands.extend(super::movement());
        commands
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn unified_diff_of_labels() {
        let d = unified(
            "stored",
            "tag: pass\njson: no_call\n",
            "current",
            "tag: pass\njson: pass\n",
        )
        .unwrap();
        assert_eq!(
            d,
            "--- stored\n+++ current\n@@ -1,2 +1,2 @@\n tag: pass\n-json: no_call\n+json: pass\n"
        );
        assert_eq!(unified("a", "x\n", "b", "x\n"), None);
    }
}
