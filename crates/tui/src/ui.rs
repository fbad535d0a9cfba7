//! Drawing: a pure function of [`App`]. Every string that came from a
//! transcript passes through [`crate::text`] (and so through
//! `toolgate_core::sanitize`) before it reaches a cell.

use crate::app::{App, Focus, Overlay, PromptKind, WatchState};
use crate::elide::Elide;
use crate::keys::Action;
use crate::layout::{layout, list_column_widths, list_offset, output_start, overlay_rect};
use crate::text::{self, Marks};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span as TSpan};
use ratatui::widgets::{
    Block, Borders, Cell, Clear, HighlightSpacing, Paragraph, Row as TRow, Table, TableState,
};
use toolgate_core::{Gate, Label, Source};
use toolgate_validator::{GateCheck, ModeResult};

/// Draws the whole screen.
pub fn draw(app: &App, frame: &mut Frame<'_>) {
    let areas = layout(frame.area(), app.prompt.is_some());
    draw_list(app, frame, areas.list);
    draw_output(app, frame, areas.output);
    draw_modes(app, frame, areas.modes);
    draw_detail(app, frame, areas.detail);
    if let Some(area) = areas.prompt {
        draw_prompt(app, frame, area);
    }
    draw_status(app, frame, areas.status);
    if app.overlay != Overlay::None {
        draw_overlay(app, frame);
    }
}

fn block<'a>(app: &App, title: Line<'a>, pane: Focus) -> Block<'a> {
    let style = if app.focus == pane {
        app.theme.focused()
    } else {
        Style::new()
    };
    Block::new()
        .borders(Borders::ALL)
        .border_style(style)
        .title(title)
}

fn label_span(app: &App, label: Option<Label>) -> TSpan<'static> {
    match label {
        Some(l) => TSpan::styled(l.as_str(), app.theme.label(l)),
        None => TSpan::styled("-", app.theme.dim()),
    }
}

fn opt(s: Option<&str>) -> String {
    s.map(text::one_line).unwrap_or_else(|| "-".into())
}

fn draw_list(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let mut title = format!(
        " Transcripts {} of {} · sort {}",
        app.rows.len(),
        app.total(),
        app.sort.name()
    );
    if app.sort_reverse {
        title.push_str(" (reversed)");
    }
    if let Some(s) = &app.search {
        let n = app.rows.iter().filter(|r| app.is_match(r)).count();
        title.push_str(&format!(" · /{} {n} found", text::one_line(s)));
    }
    if !app.filter.is_empty() {
        title.push_str(&format!(" · filter {}", text::one_line(&app.filter.text)));
    }
    if let Some(mode) = &app.filter.mode {
        title.push_str(&format!(" · labels of {}", text::one_line(mode)));
    }
    // Rows judged without a tool list (SPEC §4), counted apart (`?` rows).
    let unknown = app
        .rows
        .iter()
        .filter(|r| r.entry.transcript.tools_unknown())
        .count();
    if unknown > 0 {
        title.push_str(&format!(" · {unknown} tools unknown"));
    }
    title.push(' ');
    let block = block(app, Line::from(title), Focus::List);
    if app.rows.is_empty() {
        let (loaded, known, scans) = app.progress();
        let msg = if scans > 0 || loaded < known {
            "loading…".to_string()
        } else if app.total() > 0 {
            "no transcript matches the filter (Esc clears it)".to_string()
        } else {
            let roots: Vec<&str> = app.roots.iter().map(|(_, s)| s.as_str()).collect();
            format!(
                "no transcripts under {} yet (.json / .jsonl files)",
                text::one_line(&roots.join(", "))
            )
        };
        frame.render_widget(
            Paragraph::new(Line::styled(msg, app.theme.dim())).block(block),
            area,
        );
        return;
    }
    // With `auto`, the profile that judged each row (its source is in Detail).
    let judged = app.rows.iter().any(|r| r.entry.judge.is_some());
    let mut columns = vec!["", "id", "path", "model", "task", "label", "decision"];
    if judged {
        columns.push("profile");
    }
    let header = TRow::new(columns).style(app.theme.header());
    // What the search and the filter's words match is highlighted.
    let mut needles: Vec<&str> = app.filter.words.iter().map(String::as_str).collect();
    if let Some(s) = &app.search {
        needles.push(s);
    }
    let mut model_needles = needles.clone();
    if let Some(m) = &app.filter.model {
        model_needles.push(m);
    }
    let hl = app.theme.matched();
    let cell = |s: &str, needles: &[&str]| Cell::from(text::highlight(s, needles, hl));
    // Only the visible window is built: the list may hold 10,000 rows.
    let offset = list_offset(app.selected, app.list_top, app.rows.len(), area);
    let visible = usize::from(area.height.saturating_sub(3)).max(1);
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
    let shown: Vec<&crate::app::Row> = app.rows.iter().skip(offset).take(visible).collect();
    let column_widths = list_column_widths(&widths, area.width.saturating_sub(2));
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
    let cut_columns: Vec<Vec<String>> = (0..4)
        .map(|k| {
            let column: Vec<&str> = texts.iter().map(|c| c[k].as_str()).collect();
            let how = if k == 1 { Elide::Start } else { Elide::Middle };
            match column_widths.get(k + 1) {
                Some(&w) => crate::elide::distinct_cuts(&column, usize::from(w), how),
                None => column.iter().map(|c| c.to_string()).collect(),
            }
        })
        .collect();
    let rows = shown.into_iter().enumerate().map(|(i, r)| {
        let shown = |k: usize| cut_columns[k][i].as_str();
        // `*` labels changed, `?` tools unknown, `!` server findings, `+`
        // no stored labels.
        let marker = if r.changed {
            TSpan::styled("*", app.theme.bad())
        } else if r.entry.transcript.tools_unknown() {
            TSpan::styled("?", app.theme.bad())
        } else if !r.entry.replay.findings.is_empty() {
            TSpan::styled("!", app.theme.bad())
        } else if r.unlabeled {
            TSpan::styled("+", app.theme.dim())
        } else {
            TSpan::raw(" ")
        };
        let mut cells = vec![
            Cell::from(marker),
            cell(shown(0), &needles),
            cell(shown(1), &needles),
            cell(shown(2), &model_needles),
            cell(shown(3), &needles),
            Cell::from(label_span(app, r.label)),
            Cell::from(TSpan::styled(r.decision, app.theme.decision(r.decision))),
        ];
        if judged {
            let name = r.entry.judge.as_ref().map(|(p, _)| p.name.as_str());
            cells.push(Cell::from(TSpan::styled(opt(name), app.theme.dim())));
        }
        TRow::new(cells)
    });
    let table = Table::new(rows, widths)
        .header(header)
        .block(block)
        .row_highlight_style(app.theme.selected(app.focus == Focus::List))
        .highlight_symbol("▶")
        .highlight_spacing(HighlightSpacing::Always);
    let mut state = TableState::default().with_selected(Some(app.selected.saturating_sub(offset)));
    frame.render_stateful_widget(table, area, &mut state);
}

fn mode_index(app: &App, mode: &str) -> usize {
    app.modes.iter().position(|m| m == mode).unwrap_or(0)
}

/// Every row of the output pane for a pane drawn in `area`, wrapped, and
/// the row where the selected mode's first candidate starts (where the pane
/// scrolls to until the user scrolls it).
pub fn output_lines(app: &App, area: Rect) -> (Vec<Line<'static>>, usize) {
    let width = usize::from(area.width.saturating_sub(2));
    let Some(row) = app.current() else {
        return (
            vec![Line::styled("(no transcript selected)", app.theme.dim())],
            0,
        );
    };
    let t = &row.entry.transcript;
    let theme = &app.theme;
    let result = app.current_mode();
    let style = theme.candidate(mode_index(app, &app.mode_name()));
    let mut out_marks = Marks {
        reasoning: toolgate_formats::reasoning::spans(&t.output),
        ..Marks::default()
    };
    let mut field_marks = Marks {
        all_reasoning: true,
        ..Marks::default()
    };
    for c in result.map(|m| m.candidates.as_slice()).unwrap_or_default() {
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

fn draw_output(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let mut title = vec![TSpan::raw(" Output ")];
    if let Some(m) = app.current_mode() {
        let live = m.candidates.iter().filter(|c| c.is_live()).count();
        title.push(TSpan::styled(
            format!(" {} ", text::one_line(&m.mode)),
            app.theme.candidate(mode_index(app, &m.mode)),
        ));
        title.push(TSpan::raw(format!(
            " {} · {live} found ",
            variant(app.lenient),
        )));
        if let Some(f) = m.candidates.iter().find_map(|c| c.failure()) {
            title.push(TSpan::styled(
                format!("· ✗ {} @{} ", f.kind, f.offset),
                app.theme.bad(),
            ));
        }
    } else if app.current().is_some() {
        title.push(TSpan::styled(
            format!(
                "· {} not run for this transcript ",
                text::one_line(&app.mode_name())
            ),
            app.theme.dim(),
        ));
    }
    let (lines, focus) = output_lines(app, area);
    let rows = usize::from(area.height.saturating_sub(2));
    let start = output_start(app.output_scroll, lines.len(), focus, rows);
    let shown: Vec<Line<'static>> = lines.into_iter().skip(start).take(rows).collect();
    frame.render_widget(
        Paragraph::new(shown).block(block(app, Line::from(title), Focus::Output)),
        area,
    );
}

fn variant(lenient: bool) -> &'static str {
    if lenient { "lenient" } else { "strict" }
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
pub fn gate_symbol(app: &App, m: &ModeResult, gate: Gate) -> TSpan<'static> {
    match m.gates.iter().find(|g| g.gate == gate) {
        Some(g) if !gate_checked(m, g) => TSpan::styled("–", app.theme.dim()),
        Some(g) if g.passed => TSpan::styled("✓", app.theme.ok()),
        Some(_) => TSpan::styled("✗", app.theme.bad()),
        None => TSpan::styled("–", app.theme.dim()),
    }
}

fn draw_modes(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let mut title = vec![TSpan::raw(format!(" Modes ({}) ", variant(app.lenient)))];
    let Some(row) = app.current() else {
        frame.render_widget(
            Block::new().borders(Borders::ALL).title(Line::from(title)),
            area,
        );
        return;
    };
    if app.mode.is_none() {
        title.push(TSpan::styled("· following the profile ", app.theme.dim()));
    }
    if app.only_found {
        title.push(TSpan::styled("· with candidates only ", app.theme.dim()));
    }
    let results: Vec<&ModeResult> = app.shown_modes().collect();
    let others = if app.lenient {
        &row.entry.replay.strict
    } else {
        &row.entry.replay.lenient
    };
    let header = TRow::new(["mode", "n", "gates", "decide", "label", "Δ", "repairs"])
        .style(app.theme.header());
    let rows = results.iter().copied().map(|m| {
        let live = m.candidates.iter().filter(|c| c.is_live()).count();
        let in_reasoning = m.candidates.len() - live;
        let n = if in_reasoning > 0 {
            format!("{live}+{in_reasoning}r")
        } else {
            live.to_string()
        };
        let gates: Vec<TSpan<'static>> =
            Gate::ALL.iter().map(|g| gate_symbol(app, m, *g)).collect();
        let other = others.iter().find(|o| o.mode == m.mode);
        let delta = match other {
            Some(o) if o.label != m.label => TSpan::styled("≠", app.theme.bad()),
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
                app.theme.decision(m.decision.kind()),
            )),
            Cell::from(label_span(app, Some(m.label))),
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
    let name = app.mode_name();
    let selected = results.iter().position(|m| m.mode == name);
    let table = Table::new(rows, widths)
        .header(header)
        .column_spacing(1)
        .block(block(app, Line::from(title), Focus::Modes))
        .row_highlight_style(app.theme.selected(app.focus == Focus::Modes))
        .highlight_symbol("▶")
        .highlight_spacing(HighlightSpacing::Always);
    let mut state = TableState::default()
        .with_offset(list_offset(selected.unwrap_or(0), 0, results.len(), area))
        .with_selected(selected);
    frame.render_stateful_widget(table, area, &mut state);
}

fn section(app: &App, title: &str) -> Line<'static> {
    Line::styled(title.to_string(), app.theme.header())
}

/// Every row of the detail pane for a pane drawn in `area`, wrapped.
pub fn detail_lines(app: &App, area: Rect) -> Vec<Line<'static>> {
    let width = usize::from(area.width.saturating_sub(2));
    let Some(row) = app.current() else {
        return vec![Line::styled("(no transcript selected)", app.theme.dim())];
    };
    let Some(m) = app.current_mode() else {
        return vec![Line::styled(
            format!(
                "mode {} was not run for this transcript",
                text::one_line(&app.mode_name())
            ),
            app.theme.dim(),
        )];
    };
    let theme = &app.theme;
    let p = &row.entry.replay.profile;
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
    let mut lines = vec![Line::from(profile)];
    // Server findings describe the serving stack, not the model: shown
    // apart from the labels, right under the profile.
    for f in &row.entry.replay.findings {
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
    let mut mode_line = vec![
        TSpan::styled(
            format!("{} ({})", text::one_line(&m.mode), variant(app.lenient)),
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
    lines.push(section(app, "gates"));
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
    lines.push(section(
        app,
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
    lines.push(section(app, "normalized calls"));
    let calls: Vec<serde_json::Value> = m.calls.iter().map(|c| c.to_json()).collect();
    lines.extend(text::plain(
        &serde_json::to_string_pretty(&calls).unwrap_or_default(),
        Style::new(),
    ));
    lines.push(section(app, "telemetry"));
    let telemetry = serde_json::to_value(&m.telemetry)
        .and_then(|v| serde_json::to_string_pretty(&v))
        .unwrap_or_default();
    lines.extend(text::plain(&telemetry, Style::new()));
    lines.push(section(app, "transcript"));
    let t = &row.entry.transcript;
    let mut about = vec![app.display_path(&t.path)];
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
    text::wrap(lines, width)
}

fn draw_detail(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let lines = detail_lines(app, area);
    let rows = usize::from(area.height.saturating_sub(2));
    let start = app.detail_scroll.min(lines.len().saturating_sub(rows));
    let shown: Vec<Line<'static>> = lines.into_iter().skip(start).take(rows).collect();
    frame.render_widget(
        Paragraph::new(shown).block(block(app, Line::raw(" Detail "), Focus::Detail)),
        area,
    );
}

fn draw_prompt(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let Some(prompt) = &app.prompt else { return };
    let label = match prompt.kind {
        PromptKind::Search => "/",
        PromptKind::Filter => "filter (label:L mode:M model:X changed new words): ",
        PromptKind::Profile => "profile (a profile or mode name; empty: auto): ",
    };
    // Right-aligned: how many rows match, or why the filter is not valid.
    let (note, note_style) = match (&prompt.error, prompt.kind) {
        (Some(e), _) => (format!(" {} ", text::one_line(e)), app.theme.bad()),
        (None, PromptKind::Search) if prompt.input.value().trim().is_empty() => {
            (String::new(), app.theme.dim())
        }
        (None, PromptKind::Search) => (
            format!(
                " {} ",
                match prompt.matches {
                    0 => "no match".to_string(),
                    1 => "1 match".to_string(),
                    n => format!("{n} matches"),
                }
            ),
            app.theme.dim(),
        ),
        (None, PromptKind::Filter) => (
            format!(" {} of {} ", prompt.matches, app.total()),
            app.theme.dim(),
        ),
        (None, PromptKind::Profile) => (String::new(), app.theme.dim()),
    };
    let note_width = u16::try_from(unicode_width::UnicodeWidthStr::width(note.as_str()))
        .unwrap_or(u16::MAX)
        .min(area.width / 2);
    let [area, note_area] =
        Layout::horizontal([Constraint::Fill(1), Constraint::Length(note_width)]).areas(area);
    frame.render_widget(
        Paragraph::new(Line::styled(note, note_style)).alignment(ratatui::layout::Alignment::Right),
        note_area,
    );
    let width = usize::from(area.width).saturating_sub(label.chars().count() + 1);
    let scroll = prompt.input.visual_scroll(width);
    let value: String = text::one_line(prompt.input.value())
        .chars()
        .skip(scroll)
        .collect();
    frame.render_widget(
        Paragraph::new(Line::from(vec![
            TSpan::styled(label, app.theme.header()),
            TSpan::raw(value),
        ])),
        area,
    );
    let x = label.chars().count() + prompt.input.visual_cursor().saturating_sub(scroll);
    frame.set_cursor_position((
        area.x + u16::try_from(x).unwrap_or(u16::MAX).min(area.width),
        area.y,
    ));
}

fn draw_status(app: &App, frame: &mut Frame<'_>, area: Rect) {
    let theme = &app.theme;
    let mut spans = Vec::new();
    let mut counts = [0usize; 12];
    for r in &app.rows {
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
    let roots: Vec<&str> = app.roots.iter().map(|(_, s)| s.as_str()).collect();
    let state = match &app.watch {
        WatchState::Off => TSpan::styled("not watching", theme.dim()),
        WatchState::Watching => TSpan::styled("watching", theme.ok()),
        WatchState::Degraded(why) => {
            TSpan::styled(format!("watch: {}", text::one_line(why)), theme.bad())
        }
    };
    spans.push(state);
    if let Some(e) = &app.watch_error {
        spans.push(TSpan::styled(
            format!(" (last error: {})", text::one_line(e)),
            theme.bad(),
        ));
    }
    spans.push(TSpan::raw(format!(
        " {} ",
        text::one_line(&roots.join(" "))
    )));
    let (loaded, known, scans) = app.progress();
    if scans > 0 {
        spans.push(TSpan::styled("│ scanning… ", theme.header()));
    } else if loaded < known {
        spans.push(TSpan::styled(
            format!("│ loading {loaded}/{known} "),
            theme.header(),
        ));
    }
    if !app.unreadable.is_empty() {
        spans.push(TSpan::styled(
            format!(
                "│ ⚠ {} unreadable ({}) ",
                app.unreadable.len(),
                app.keys.keys_of(Action::Unreadable)
            ),
            theme.bad(),
        ));
    }
    if let Some(msg) = &app.message {
        spans.push(TSpan::raw(format!("│ {} ", text::one_line(msg))));
    }
    // The help hint always shows: whatever comes before it (a long watcher
    // error, a long message) is cut to leave it room.
    let help = TSpan::styled(
        format!("│ {} help", app.keys.keys_of(Action::Help)),
        theme.dim(),
    );
    let room = usize::from(area.width).saturating_sub(help.width());
    let mut spans = text::truncate_spans(spans, room);
    spans.push(help);
    let style = if app.focus == Focus::Status {
        Style::new().add_modifier(Modifier::REVERSED)
    } else {
        Style::new()
    };
    let mut lines = vec![Line::from(spans)];
    lines.extend(text::wrap(vec![counts_line], usize::from(area.width)));
    frame.render_widget(Paragraph::new(lines).style(style), area);
}

/// Title and rows of the open overlay on a screen of `screen`, wrapped to its width.
pub fn overlay_content(app: &App, screen: Rect) -> (String, Vec<Line<'static>>) {
    let rect = overlay_rect(screen);
    let width = usize::from(rect.width.saturating_sub(2));
    let (title, lines) = match &app.overlay {
        Overlay::None => (String::new(), Vec::new()),
        Overlay::Help => (" Keys ".to_string(), help_lines(app)),
        Overlay::Unreadable => (
            format!(" Unreadable files ({}) ", app.unreadable.len()),
            if app.unreadable.is_empty() {
                vec![Line::styled("every file was read", app.theme.dim())]
            } else {
                app.unreadable
                    .iter()
                    .map(|e| {
                        let at = match e.line {
                            Some(l) => format!("{}:{l}", app.display_path(&e.path)),
                            None => app.display_path(&e.path),
                        };
                        Line::from(vec![
                            TSpan::styled(text::one_line(&at), app.theme.header()),
                            TSpan::raw(format!("  {}", text::one_line(&e.reason))),
                        ])
                    })
                    .collect()
            },
        ),
        Overlay::Diff { kind, other } => crate::diff::diff_view(
            app.current(),
            &app.mode_name(),
            app.lenient,
            &app.theme,
            *kind,
            other,
        ),
        Overlay::ConfirmAccept => (" Accept labels ".to_string(), confirm_lines(app)),
        Overlay::Review => crate::review::view(app.review.as_ref(), app.current(), &app.theme),
        Overlay::Copy => (
            " Copy to the clipboard ".to_string(),
            vec![
                Line::raw("Copy, through the terminal (OSC 52), for the selected transcript:"),
                Line::raw(""),
                Line::raw("  o   the raw output"),
                Line::raw(format!(
                    "  c   the calls of {} (normalized, JSON)",
                    text::one_line(&app.mode_name())
                )),
                Line::raw(
                    "  r   a minimal repro transcript (output, expectation, the tools it names)",
                ),
                Line::raw("  any other key cancels"),
                Line::raw(""),
                Line::styled("inside tmux: set -g set-clipboard on", app.theme.dim()),
            ],
        ),
        Overlay::Stream { step } => {
            crate::stream::view(app.current(), &app.profile, &app.theme, *step)
        }
        Overlay::ModePicker { query, selected } => (
            " Pick a mode ".to_string(),
            picker_lines(app, query, *selected),
        ),
    };
    (title, text::wrap(lines, width))
}

/// How many rows the open overlay has (for scrolling).
pub fn overlay_rows(app: &App) -> usize {
    overlay_content(app, app.size).1.len()
}

fn picker_lines(app: &App, query: &str, selected: usize) -> Vec<Line<'static>> {
    let mut lines = vec![
        Line::from(vec![
            TSpan::styled("mode: ", app.theme.header()),
            TSpan::raw(text::one_line(query)),
            TSpan::styled("▏", app.theme.focused()),
        ]),
        Line::styled(
            "type to narrow · ↑/↓ · Enter picks · Esc closes",
            app.theme.dim(),
        ),
    ];
    let modes = app.picker_modes(query);
    if modes.is_empty() {
        lines.push(Line::styled("no mode matches", app.theme.dim()));
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
        match app
            .current()
            .and_then(|r| app.mode_result(&r.entry, mode, app.lenient))
        {
            Some(m) => {
                let live = m.candidates.iter().filter(|c| c.is_live()).count();
                spans.push(TSpan::raw(format!("{live:>3} found  ")));
                spans.push(label_span(app, Some(m.label)));
            }
            None => spans.push(TSpan::styled(
                "  not run for this transcript",
                app.theme.dim(),
            )),
        }
        let mut line = Line::from(spans);
        if i == selected {
            line = line.style(app.theme.selected(true));
        }
        lines.push(line);
    }
    lines
}

fn confirm_lines(app: &App) -> Vec<Line<'static>> {
    let id = app
        .current()
        .map(|r| text::one_line(&r.entry.transcript.id))
        .unwrap_or_default();
    let n = app.rows.iter().filter(|r| r.changed || r.unlabeled).count();
    vec![
        Line::raw("Write the current strict label of every mode into the transcript file"),
        Line::raw("(atomically; only its `labels` member changes)."),
        Line::raw(""),
        Line::raw(format!("  y / Enter   this transcript ({id})")),
        Line::raw(format!(
            "  a           all {n} shown transcripts whose labels changed or were never stored"
        )),
        Line::raw("  any key     cancel"),
    ]
}

fn help_lines(app: &App) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for b in &app.keys.bindings {
        let keys: Vec<String> = b.keys.iter().map(|k| k.display()).collect();
        lines.push(Line::from(vec![
            TSpan::styled(format!("{:<14}", keys.join(" ")), app.theme.header()),
            TSpan::raw(b.help),
        ]));
    }
    let extra = [
        "",
        "diff view     Tab: strict vs lenient → mode vs mode → stored vs current; m/M: other mode",
        "stream view   forwarded so far, held back, the opener; at the last delta streamed vs batch",
        "gates column  intent single size parse allowlist schema: ✓ passed, ✗ failed, – not checked",
        "list marker   * current labels differ from the stored ones, ? tools unknown (no `tools`: nothing executes), ! server findings, + never labeled",
        "modes Δ       ≠ strict and lenient labels differ; n: live candidates (+r in reasoning)",
        "output        candidates of the selected mode highlighted, reasoning dimmed,",
        "              the parse-failure byte marked; control characters shown as \\x1b",
    ];
    lines.extend(extra.iter().map(|s| Line::raw(*s)));
    lines
}

fn draw_overlay(app: &App, frame: &mut Frame<'_>) {
    let area = overlay_rect(frame.area());
    let (title, lines) = overlay_content(app, frame.area());
    let rows = usize::from(area.height.saturating_sub(2));
    let start = app.overlay_scroll.min(lines.len().saturating_sub(rows));
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
        .border_style(app.theme.focused())
        .title(Line::raw(title))
        .title_bottom(Line::styled(hint, app.theme.dim()));
    frame.render_widget(Paragraph::new(shown).block(block), area);
}
