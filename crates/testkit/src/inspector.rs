//! The inspector's test harness: a deterministic test engine and helpers to
//! drive the app without a terminal. The screens must not change when the
//! real extractors evolve, so most tests judge with [`Fake`].

use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{Event as TermEvent, KeyCode, KeyEvent, KeyModifiers};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use toolgate_core::{
    Call, Candidate, Decision, FailureKind, Gate, Label, ParseFailure, Repair, SchemaValidation,
    Source, Span, Telemetry, Transcript,
};
use toolgate_formats::Strictness;
use toolgate_tui::theme::Theme;
use toolgate_tui::worker::execute;
use toolgate_tui::{App, Event, Replayer};
use toolgate_validator::{GateCheck, ModeResult, PipelineResult, Replay};

/// Two modes: `tag` (`<tool name="f">{…}</tool>`, primary) and `hermes`
/// (`<tool_call>{"name": …, "arguments": …}</tool_call>`, fallback), plus
/// `native` when the transcript has `tool_calls`. Lenient `tag` reads single
/// quotes as double quotes.
pub struct Fake;

/// The modes [`Fake`] reads.
pub const MODES: [&str; 3] = ["tag", "hermes", "native"];

fn find_all(out: &str, open: &str, close: &str) -> Vec<(usize, usize, usize, Option<usize>)> {
    // (start, payload start, payload end, close end)
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(i) = out[at..].find(open) {
        let start = at + i;
        let body = start + open.len();
        match out[body..].find(close) {
            Some(j) => {
                found.push((start, body, body + j, Some(body + j + close.len())));
                at = body + j + close.len();
            }
            None => {
                found.push((start, body, out.len(), None));
                break;
            }
        }
    }
    found
}

fn candidate(
    mode: &str,
    strictness: Strictness,
    out: &str,
    hit: (usize, usize, usize, Option<usize>),
) -> Candidate {
    let (start, mut body, end, close) = hit;
    let mut name = None;
    if mode == "tag" {
        // <tool name="f">
        let head = &out[body..end];
        if let Some(rest) = head.strip_prefix('"')
            && let Some(q) = rest.find('"')
        {
            name = Some(rest[..q].to_string());
            body += 1 + q + 1;
            if out[body..].starts_with('>') {
                body += 1;
            }
        }
    }
    let mut payload = out[body..end].to_string();
    let mut repairs = Vec::new();
    if strictness == Strictness::Lenient && payload.contains('\'') {
        payload = payload.replace('\'', "\"");
        repairs.push(Repair::SingleQuotes);
    }
    let arguments = if close.is_none() {
        Err(ParseFailure::new(
            FailureKind::Truncated,
            "the output ends inside the call",
            out.len(),
        ))
    } else {
        match serde_json::from_str::<Value>(&payload) {
            Ok(Value::Object(obj)) if mode == "hermes" => {
                name = obj.get("name").and_then(Value::as_str).map(str::to_string);
                Ok(obj
                    .get("arguments")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default())
            }
            Ok(Value::Object(obj)) => Ok(obj),
            Ok(_) => Err(ParseFailure::new(
                FailureKind::Malformed,
                "not an object",
                body,
            )),
            Err(e) => {
                // serde_json columns are 1-based chars on one line: good enough here.
                let off = body + e.column().saturating_sub(1).min(end - body);
                Err(ParseFailure::new(
                    FailureKind::Malformed,
                    e.to_string(),
                    off,
                ))
            }
        }
    };
    Candidate {
        mode: mode.to_string().into(),
        source: Source::Output,
        span: Span::new(start, close.unwrap_or(out.len())),
        raw: payload,
        name,
        arguments: arguments.map(std::sync::Arc::new),
        repairs,
    }
}

fn extract(mode: &str, t: &Transcript, strictness: Strictness) -> Vec<Candidate> {
    match mode {
        "tag" => find_all(&t.output, "<tool name=", "</tool>")
            .into_iter()
            .map(|h| candidate("tag", strictness, &t.output, h))
            .collect(),
        "hermes" => find_all(&t.output, "<tool_call>", "</tool_call>")
            .into_iter()
            .map(|h| candidate("hermes", strictness, &t.output, h))
            .collect(),
        _ => t
            .tool_calls
            .iter()
            .flatten()
            .enumerate()
            .map(|(i, c)| {
                let f = c.get("function").cloned().unwrap_or(Value::Null);
                let args = f.get("arguments").and_then(Value::as_str).unwrap_or("");
                Candidate {
                    mode: "native".into(),
                    source: Source::Native,
                    span: Span::new(i, i + 1),
                    raw: args.to_string(),
                    name: f.get("name").and_then(Value::as_str).map(str::to_string),
                    arguments: serde_json::from_str::<Map<String, Value>>(args)
                        .map(std::sync::Arc::new)
                        .map_err(|e| ParseFailure::new(FailureKind::Truncated, e.to_string(), 0)),
                    repairs: vec![],
                }
            })
            .collect(),
    }
}

fn label_of(t: &Transcript, cands: &[Candidate]) -> (Label, String) {
    let expected = t.expect.as_ref().map(|e| e.calls.len());
    if cands.is_empty() {
        return match expected {
            Some(0) => (Label::Pass, String::new()),
            _ => (
                Label::NoCall,
                "a call was expected and the mode found no candidate".into(),
            ),
        };
    }
    if expected == Some(0) {
        return (Label::SpuriousCall, "no call was expected".into());
    }
    for c in cands {
        if let Some(f) = c.failure() {
            let label = if f.kind == FailureKind::Truncated {
                Label::Truncation
            } else {
                Label::MalformedJson
            };
            return (label, f.message.clone());
        }
    }
    for c in cands {
        let name = c.name.clone().unwrap_or_default();
        if t.tool(&name).is_none() {
            return (Label::WrongTool, format!("`{name}` is not allowlisted"));
        }
    }
    (Label::Pass, String::new())
}

fn gates(t: &Transcript, cands: &[Candidate], fallback: bool) -> Vec<GateCheck> {
    let check = |gate, passed, reason: &str| GateCheck {
        gate,
        passed,
        reason: reason.to_string().into(),
    };
    let intent = !fallback || t.output.lines().any(|l| l.trim() == "CALL_TOOL");
    let parsed = cands.iter().all(|c| c.failure().is_none());
    let allowed = cands
        .iter()
        .all(|c| c.name.as_deref().is_some_and(|n| t.tool(n).is_some()));
    vec![
        check(
            Gate::Intent,
            intent,
            if intent {
                "not applicable to primary candidates"
            } else {
                "no CALL_TOOL line"
            },
        ),
        check(
            Gate::Single,
            !fallback || cands.len() <= 1,
            "at most one fallback candidate",
        ),
        check(Gate::Size, true, "within 64 KiB"),
        check(
            Gate::Parse,
            parsed,
            if parsed {
                "every candidate parsed"
            } else {
                "a candidate failed to parse"
            },
        ),
        check(
            Gate::Allowlist,
            allowed,
            if allowed {
                "every tool is allowlisted"
            } else {
                "a tool is not allowlisted"
            },
        ),
        check(Gate::Schema, true, "arguments pass the schema"),
    ]
}

fn mode_result(t: &Transcript, mode: &str, strictness: Strictness, fallback: bool) -> ModeResult {
    let candidates = extract(mode, t, strictness);
    let (label, reason) = label_of(t, &candidates);
    let gates = gates(t, &candidates, fallback);
    let calls: Vec<Call> = candidates.iter().filter_map(Candidate::call).collect();
    let failed = gates.iter().find(|g| !g.passed);
    let decision = if candidates.is_empty() {
        Decision::NoCall
    } else if let Some(g) = failed {
        Decision::Reject {
            gate: g.gate,
            reason: g.reason.to_string(),
            reemit: None,
        }
    } else {
        Decision::Execute {
            calls: calls.clone(),
        }
    };
    let telemetry = Telemetry {
        parse_mode: if candidates.is_empty() {
            "none".into()
        } else {
            mode.to_string().into()
        },
        fallback_used: fallback && !candidates.is_empty(),
        candidate_count: candidates.len(),
        schema_validation: if candidates.is_empty() {
            SchemaValidation::Skipped
        } else {
            SchemaValidation::Pass
        },
        schema_reason: None,
        gate: decision.gate(),
        decision: decision.kind().into(),
        repairs: candidates.iter().flat_map(|c| c.repairs.clone()).collect(),
        tool_result_status: None,
    };
    ModeResult {
        mode: mode.into(),
        strictness,
        candidates,
        calls,
        label,
        reason,
        gates,
        decision,
        telemetry,
    }
}

impl Replayer for Fake {
    fn modes(&self) -> Vec<String> {
        MODES.iter().map(|m| m.to_string()).collect()
    }
    fn profile_name(&self) -> String {
        "default".into()
    }
    fn replay(&self, t: &Transcript) -> Replay {
        if t.output.contains("PANIC") {
            panic!("the fake engine was told to panic");
        }
        let modes: Vec<&str> = MODES
            .iter()
            .copied()
            .filter(|m| *m != "native" || t.tool_calls.is_some())
            .collect();
        let strict: Vec<ModeResult> = modes
            .iter()
            .map(|m| mode_result(t, m, Strictness::Strict, *m == "hermes"))
            .collect();
        let lenient: Vec<ModeResult> = modes
            .iter()
            .map(|m| mode_result(t, m, Strictness::Lenient, *m == "hermes"))
            .collect();
        let chosen = if !strict[0].candidates.is_empty() {
            &strict[0]
        } else {
            &strict[1]
        };
        let found = !chosen.candidates.is_empty();
        let profile = PipelineResult {
            profile: "default".into(),
            parse_mode: found.then(|| chosen.mode.clone()),
            fallback_used: found && chosen.mode == "hermes",
            candidates: chosen.candidates.clone(),
            gates: chosen.gates.clone(),
            decision: chosen.decision.clone(),
            telemetry: chosen.telemetry.clone(),
            label: if found { chosen.label } else { strict[0].label },
            label_reason: chosen.reason.clone(),
        };
        Replay {
            strict,
            lenient,
            profile,
            findings: Vec::new(),
        }
    }
}

/// The tools every [`transcript`] declares: `get_weather(city)`.
pub const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]"#;

/// A transcript file body.
pub fn transcript(id: &str, model: &str, task: &str, output: &str, extra: &str) -> String {
    let output = serde_json::to_string(output).unwrap();
    format!(
        "{{\"id\": \"{id}\", \"model\": \"{model}\", \"task\": \"{task}\", \"tools\": {TOOLS}, \"output\": {output}{extra}}}\n"
    )
}

/// A temp dir holding `files`, and an app over it (root shown as
/// `transcripts`), fully loaded.
pub fn loaded(files: &[(&str, String)]) -> (tempfile::TempDir, App) {
    let dir = tempfile::tempdir().unwrap();
    for (name, body) in files {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, body).unwrap();
    }
    let root = std::fs::canonicalize(dir.path()).unwrap();
    let mut app = App::new(
        vec![(root, "transcripts".into())],
        Fake.modes(),
        "default".into(),
        "tag",
    );
    app.theme = Theme { color: true };
    // As the run loop does: the app replays a small selected transcript
    // itself, with the replayer that loads.
    app.set_replayer(std::sync::Arc::new(Fake));
    settle(&mut app);
    app.update(Event::Watch(toolgate_tui::WatchEvent::Started(vec![])));
    (dir, app)
}

/// Runs every requested job inline until none is left, then folds them in
/// (and runs the replay of the selected transcript the app then asks for).
pub fn settle(app: &mut App) {
    settle_with(app, &Fake);
}

/// [`settle`] with another engine.
pub fn settle_with(app: &mut App, replayer: &dyn Replayer) {
    loop {
        let jobs = app.take_jobs();
        if jobs.is_empty() {
            app.update(Event::Tick);
            match app.take_replay() {
                Some(job) => app.update(execute(job, replayer)),
                None => break,
            }
            continue;
        }
        for job in jobs {
            let ev = execute(job, replayer);
            app.update(ev);
        }
    }
}

/// One key press without modifiers.
pub fn key(app: &mut App, code: KeyCode) {
    app.update(Event::Input(TermEvent::Key(KeyEvent::new(
        code,
        KeyModifiers::NONE,
    ))));
}

/// `text` typed one key at a time.
pub fn keys(app: &mut App, text: &str) {
    for c in text.chars() {
        key(app, KeyCode::Char(c));
    }
}

/// Renders the app into a `w`×`h` test terminal (the app's size should match,
/// see [`sized`]).
pub fn render(app: &App, w: u16, h: u16) -> Buffer {
    let mut terminal = Terminal::new(TestBackend::new(w, h)).unwrap();
    terminal.draw(|f| toolgate_tui::draw(app, f)).unwrap();
    terminal.backend().buffer().clone()
}

/// The buffer as text, one line per row, trailing spaces trimmed.
pub fn screen(buf: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..buf.area.height {
        let mut line = String::new();
        for x in 0..buf.area.width {
            line.push_str(buf[(x, y)].symbol());
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Where `needle` starts on screen: (x, y) in cells.
pub fn find(buf: &Buffer, needle: &str) -> Option<(u16, u16)> {
    for y in 0..buf.area.height {
        let mut row = String::new();
        let mut xs = Vec::new();
        for x in 0..buf.area.width {
            let sym = buf[(x, y)].symbol();
            for _ in sym.chars() {
                xs.push(x);
            }
            row.push_str(sym);
        }
        if let Some(i) = row.find(needle) {
            let ci = row[..i].chars().count();
            return Some((xs[ci], y));
        }
    }
    None
}

/// `name` in `dir`, as the app sees it (canonical).
pub fn path_in(dir: &Path, name: &str) -> PathBuf {
    std::fs::canonicalize(dir).unwrap().join(name)
}

/// Tells the app the terminal is `w`×`h`.
pub fn sized(app: &mut App, w: u16, h: u16) {
    app.update(Event::Input(TermEvent::Resize(w, h)));
}

/// `text` typed into the open prompt, then Enter.
pub fn type_prompt(app: &mut App, text: &str) {
    keys(app, text);
    key(app, KeyCode::Enter);
}

/// The bundled corpus directory `transcripts/DIR` at the workspace root,
/// canonical; `None` (and a note on stderr) when it is absent, so the test
/// skips.
pub fn bundled_root(dir: &str) -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../transcripts")
        .join(dir);
    if !root.is_dir() {
        eprintln!("skipped: no bundled corpus at {}", root.display());
        return None;
    }
    Some(std::fs::canonicalize(root).unwrap())
}

/// An app over `root` (shown as `shown`) that reads the modes and profile of
/// the real `engine`, in color; nothing loaded yet.
pub fn app_for(root: &Path, shown: &str, engine: &toolgate_validator::Engine) -> App {
    let mut app = App::new(
        vec![(root.to_path_buf(), shown.into())],
        engine.modes(),
        engine.profile_name(),
        &engine.profile.primary,
    );
    app.theme = Theme { color: true };
    // As the run loop does, the app gets the replayer that loads. An engine
    // is not `Clone`: one with the built-in modes is built again (an engine
    // with custom modes leaves every replay to the jobs `settle_with` runs).
    let mut again = toolgate_validator::Engine::new(engine.profile.clone());
    again.max_candidates = engine.max_candidates;
    if again.modes() == engine.modes() {
        app.set_replayer(std::sync::Arc::new(again));
    }
    app
}
