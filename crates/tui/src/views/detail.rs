//! The detail pane: the profile's verdict, server findings, the selected
//! mode's label, decision, gates, candidates, normalized calls and
//! telemetry, and what the transcript says about itself.

use super::{Pane, Selected, pane, section, variant};
use crate::component::{Command, Component};
use crate::keys::Action;
use crate::layout::{inner_rows, inner_width, page, scroll_to};
use crate::row::{Row, display_path};
use crate::text;
use crate::theme::Theme;
use crate::views::modes::gate_checked;
use ratatui::Frame;
use ratatui::crossterm::event::KeyEvent;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span as TSpan};
use ratatui::widgets::Paragraph;
use toolgate_core::{Label, Source};
use toolgate_validator::{ModeResult, Replay};

/// The detail pane and its scroll.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DetailView {
    /// The first row shown.
    pub scroll: usize,
}

/// Every row of the detail pane for a pane drawn in `area`, wrapped.
pub fn lines(sel: &Selected<'_>, area: Rect) -> Vec<Line<'static>> {
    let width = inner_width(area);
    let theme = sel.theme;
    let Some(row) = sel.row else {
        return vec![Line::styled("(no transcript selected)", theme.dim())];
    };
    let Some(replay) = row.replay() else {
        return vec![Line::styled(text::one_line(row.replay_note()), theme.dim())];
    };
    let Some(m) = sel.result else {
        return vec![Line::styled(
            format!(
                "mode {} was not run for this transcript",
                text::one_line(sel.mode)
            ),
            theme.dim(),
        )];
    };
    let mut lines = Vec::new();
    verdict(&mut lines, row, replay, theme);
    mode_and_decision(&mut lines, row, m, sel);
    gates(&mut lines, m, theme);
    candidates(&mut lines, m, theme);
    calls_and_telemetry(&mut lines, m, theme);
    about(&mut lines, row, sel);
    text::wrap(lines, width)
}

/// The profile's verdict, the server findings and who judged.
fn verdict(lines: &mut Vec<Line<'static>>, row: &Row, replay: &Replay, theme: &Theme) {
    let p = &replay.profile;
    let mut profile = vec![
        TSpan::styled(
            format!("profile {}", text::one_line(&p.profile)),
            theme.header(),
        ),
        TSpan::raw(" label "),
        TSpan::styled(p.label.as_str(), theme.label(p.label)),
        TSpan::raw(" decision "),
        TSpan::styled(p.decision.kind(), theme.decision(p.decision.kind())),
    ];
    if let Some(g) = p.decision.gate() {
        profile.push(TSpan::raw(format!(" ({g})")));
    }
    profile.push(TSpan::raw(format!(
        " via {}{}",
        text::one_line(p.parse_mode.as_deref().unwrap_or("none")),
        if p.fallback_used { " (fallback)" } else { "" }
    )));
    lines.push(Line::from(profile));
    // Server findings describe the serving stack, not the model: shown
    // apart from the labels, right under the profile.
    for f in &replay.findings {
        // `tools_unknown` and `failed_generation` describe the capture, not
        // the server.
        let about = if f.kind.describes_capture() {
            "capture"
        } else {
            "server"
        };
        lines.push(Line::styled(
            format!("! {about} {}: {}", f.kind, text::one_line(&f.detail)),
            theme.bad(),
        ));
    }
    if let Some((judge, source)) = &row.entry.judge {
        lines.push(Line::styled(
            format!(
                "judged by {} ({})",
                text::one_line(&judge.name),
                text::one_line(source)
            ),
            theme.dim(),
        ));
    }
}

/// The mode's label (and its role in the profile), why, the closest
/// allowlisted names of a wrong tool, and the decision.
fn mode_and_decision(
    lines: &mut Vec<Line<'static>>,
    row: &Row,
    m: &ModeResult,
    sel: &Selected<'_>,
) {
    let theme = sel.theme;
    let mut mode_line = vec![
        TSpan::styled(
            format!("{} ({})", text::one_line(&m.mode), variant(sel.lenient)),
            theme.header(),
        ),
        TSpan::raw(" label "),
        TSpan::styled(m.label.as_str(), theme.label(m.label)),
    ];
    if let Some((judge, _)) = &row.entry.judge {
        let role = if judge.primary == m.mode {
            "the profile's primary".to_string()
        } else if judge.fallbacks_enabled && judge.fallbacks.contains(&m.mode) {
            "a fallback of the profile".to_string()
        } else {
            "gates: if this mode were primary".to_string()
        };
        mode_line.push(TSpan::styled(format!(" · {role}"), theme.dim()));
    }
    lines.push(Line::from(mode_line));
    if !m.reason.is_empty() {
        lines.extend(text::plain(&m.reason, theme.dim()));
    }
    if m.label == Label::WrongTool {
        for c in &m.candidates {
            let Some(name) = &c.name else { continue };
            if let Some((_, near)) = row.entry.closest.iter().find(|(n, _)| n == name) {
                lines.push(Line::from(vec![
                    TSpan::raw(format!("`{}` is not allowlisted; ", text::one_line(name))),
                    match near {
                        Some(near) => {
                            TSpan::styled(format!("closest: {}", text::one_line(near)), theme.ok())
                        }
                        None => TSpan::styled("no allowlisted name is close", theme.dim()),
                    },
                ]));
            }
        }
    }
    let mut decision = vec![
        TSpan::raw("decision "),
        TSpan::styled(m.decision.kind(), theme.decision(m.decision.kind())),
    ];
    let mut reemit_text = None;
    if let toolgate_core::Decision::Reject {
        gate,
        reason,
        reemit,
    } = &m.decision
    {
        decision.push(TSpan::raw(format!(
            " at {gate}: {}",
            text::one_line(reason)
        )));
        reemit_text = reemit.as_deref();
    }
    lines.push(Line::from(decision));
    if let Some(r) = reemit_text {
        lines.push(Line::raw("re-emit message:"));
        lines.extend(text::plain(r, theme.dim()));
    }
}

/// Every gate: checked or not, passed or not, why.
fn gates(lines: &mut Vec<Line<'static>>, m: &ModeResult, theme: &Theme) {
    lines.push(section(theme, "gates"));
    for g in &m.gates {
        lines.push(Line::from(vec![
            if !gate_checked(m, g) {
                TSpan::styled("– ", theme.dim())
            } else if g.passed {
                TSpan::styled("✓ ", theme.ok())
            } else {
                TSpan::styled("✗ ", theme.bad())
            },
            TSpan::raw(format!("{:<9} ", g.gate.as_str())),
            TSpan::styled(text::one_line(&g.reason), theme.dim()),
        ]));
    }
}

/// Every candidate: where, which name, what was repaired, why it failed.
fn candidates(lines: &mut Vec<Line<'static>>, m: &ModeResult, theme: &Theme) {
    lines.push(section(
        theme,
        &format!("candidates ({})", m.candidates.len()),
    ));
    for (i, c) in m.candidates.iter().enumerate() {
        let mut s = format!(
            "#{} {} {}..{} name {}",
            i + 1,
            match c.source {
                Source::Output => "output",
                Source::OutputReasoning => "in reasoning",
                Source::ReasoningField => "reasoning field",
                Source::Native => "native call",
            },
            c.span.start,
            c.span.end,
            c.name
                .as_deref()
                .map(text::one_line)
                .unwrap_or_else(|| "?".into())
        );
        if !c.repairs.is_empty() {
            let names: Vec<&str> = c.repairs.iter().map(|r| r.as_str()).collect();
            s.push_str(&format!(" repairs {}", names.join(",")));
        }
        lines.push(Line::raw(s));
        if let Some(f) = c.failure() {
            lines.push(Line::styled(
                format!(
                    "   {} at byte {}: {}",
                    f.kind,
                    f.offset,
                    text::one_line(&f.message)
                ),
                theme.bad(),
            ));
        }
    }
}

/// The normalized calls and the telemetry, as JSON.
fn calls_and_telemetry(lines: &mut Vec<Line<'static>>, m: &ModeResult, theme: &Theme) {
    lines.push(section(theme, "normalized calls"));
    let calls: Vec<serde_json::Value> = m.calls.iter().map(|c| c.to_json()).collect();
    lines.extend(text::plain(
        &serde_json::to_string_pretty(&calls).unwrap_or_default(),
        Style::new(),
    ));
    lines.push(section(theme, "telemetry"));
    let telemetry = serde_json::to_value(&m.telemetry)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_default();
    lines.extend(text::plain(&telemetry, Style::new()));
}

/// What the transcript says about itself: where it is, how it ended, what
/// it expects, its tools, its stored labels and warnings.
fn about(lines: &mut Vec<Line<'static>>, row: &Row, sel: &Selected<'_>) {
    let theme = sel.theme;
    lines.push(section(theme, "transcript"));
    let t = &row.entry.transcript;
    let mut about = vec![display_path(sel.roots, &t.path)];
    if let Some(l) = t.line {
        about[0].push_str(&format!(":{l}"));
    }
    if let Some(f) = &t.finish_reason {
        about.push(format!("finish_reason {f}"));
    }
    about.push(match &t.expect {
        None => "no expectation".into(),
        Some(e) if e.calls.is_empty() => "expects no call".into(),
        Some(e) => {
            let names: Vec<&str> = e.calls.iter().map(|c| c.name.as_str()).collect();
            format!("expects {}", names.join(", "))
        }
    });
    let tools: Vec<&str> = t.tools.iter().map(|d| d.name.as_str()).collect();
    about.push(format!(
        "tools: {}",
        if tools.is_empty() {
            "none".into()
        } else {
            tools.join(", ")
        }
    ));
    for a in about {
        lines.push(Line::raw(text::one_line(&a)));
    }
    match &t.stored_labels {
        None => lines.push(Line::styled("no stored labels", theme.dim())),
        Some(stored) => {
            let pairs: Vec<String> = stored.iter().map(|(m, l)| format!("{m}: {l}")).collect();
            lines.push(Line::raw(text::one_line(&format!(
                "stored: {}",
                pairs.join(", ")
            ))));
        }
    }
    for w in t.warnings.iter().chain(&t.tool_problems) {
        lines.push(Line::styled(
            format!("⚠ {}", text::one_line(w)),
            theme.bad(),
        ));
    }
}

impl Component for DetailView {
    type Props<'a> = Pane<'a>;
    /// Whether the key moved the pane.
    type Answer = bool;

    fn draw(&self, props: &Pane<'_>, frame: &mut Frame<'_>, area: Rect) {
        let lines = lines(&props.sel, area);
        let rows = inner_rows(area);
        let start = self.scroll.min(lines.len().saturating_sub(rows));
        let shown: Vec<Line<'static>> = lines.into_iter().skip(start).take(rows).collect();
        frame.render_widget(
            Paragraph::new(shown).block(pane(
                props.sel.theme,
                Line::raw(" Detail "),
                props.focused,
            )),
            area,
        );
    }

    fn event(&mut self, _key: &KeyEvent, action: Option<Action>, props: &Pane<'_>) -> bool {
        let Some(action) = action.filter(|a| a.is_movement()) else {
            return false;
        };
        let page = page(props.area);
        let total = lines(&props.sel, props.area).len();
        self.scroll = scroll_to(self.scroll, action, page, total.saturating_sub(page));
        true
    }

    fn commands(&self) -> Vec<Command> {
        super::movement()
    }
}
