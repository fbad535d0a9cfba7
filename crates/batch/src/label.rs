//! The label engine: what `toolgate label` keeps of each replay ([`Labels`],
//! made on the replay workers by a [`Summarizer`]) and the record it prints.
//!
//! `--format jsonl` is the machine interface (SPEC §7), one line per
//! transcript with keys in this order:
//!
//! ```json
//! {"path": "transcripts/hermes/parallel.json", "id": "parallel",
//!  "model": "qwen3-8b", "task": "weather_two_cities",
//!  "labels":  {"tag": "no_call", "json": "no_call", "hermes": "pass"},
//!  "lenient": {"tag": "no_call", "json": "no_call", "hermes": "pass"},
//!  "profile": {"name": "default", "parse_mode": "none", "fallback_used": false,
//!              "candidate_count": 0, "decision": "no_call", "gate": null,
//!              "label": "no_call", "calls": [],
//!              "source": "default", "source_detail": "default"},
//!  "stored":  {"hermes": "pass"}}
//! ```
//!
//! An unreadable file (or JSONL line) yields `{"path": …, "error": …}`.
//!
//! `profile.parse_mode` names the mode whose candidates the pipeline selected
//! (`hermes`, `json`, …) or `none`; unlike the telemetry record, which keeps
//! seed 000's wording (`primary` for the primary mode), it never says
//! `primary`, so records of different profiles compare directly.
//!
//! The profile is `auto`'s choice for the transcript's model unless
//! `--profile` names one: `profile.source` says why (`given`, `configured`,
//! `by name`, `detected`, `default`) and `profile.source_detail` says it in
//! words (`by name (qwen3)`, `detected from 4 transcripts`, `--profile`).
//! Both come after the keys of SPEC §7.
//!
//! With `--check` (or `--changed`) each record also names what changed:
//! `"changed": [{"mode", "stored", "now", "why", "candidate"}, …]` before
//! `findings` ([`Why`]); the binary renders the same for a reviewer
//! (`--format markdown|github`).

use serde::Serialize;
use serde_json::{Value, json};
use std::sync::Arc;
use toolgate_core::jsonout;
use toolgate_core::relabel::{self, Difference};
use toolgate_core::{Label, StoredLabels, Transcript};
use toolgate_validator::{Chosen, Engine, Finding, ModeResult, Outcome};

/// What `label` keeps of one replay.
pub struct Labels {
    /// The replayed modes, engine order (one list shared by the batch).
    pub modes: Arc<ModeNames>,
    /// Strict label per mode, in the order of `modes`.
    pub strict: Vec<Label>,
    /// Lenient label per mode, same order.
    pub lenient: Vec<Label>,
    /// The profile's summary (`profile` member of the record).
    pub profile: ProfileSummary,
    /// The profile's label.
    pub profile_label: Label,
    /// Server findings (apart from the labels).
    pub findings: Vec<Finding>,
    /// The label of a mode that reads nothing ([`relabel::quiet_label`]).
    pub quiet: Label,
    /// What `--write` would change ([`differences`]), worked out on the worker.
    pub diffs: Vec<Difference>,
    /// Why each difference is what it is now (only with `--check` or
    /// `--changed`, for transcripts that differ), worked out on the worker.
    pub whys: Vec<Why>,
    /// No stored labels, and `--require-labels` makes that a difference.
    pub unlabeled: bool,
    /// The `--format jsonl` line (or `--format json` record), rendered on
    /// the worker when it will be printed: UTF-8 bytes, printed as they are.
    pub line: Option<Vec<u8>>,
}

/// The `profile` member of a record.
#[derive(Clone, Debug)]
pub struct ProfileSummary {
    name: String,
    parse_mode: String,
    fallback_used: bool,
    candidate_count: usize,
    decision: &'static str,
    gate: Option<&'static str>,
    label: &'static str,
    /// The executed calls, rendered as JSON when summarized (no copy of
    /// their arguments kept).
    calls: Vec<u8>,
    source: &'static str,
    source_detail: String,
}

impl ProfileSummary {
    /// The decision's kind (`execute`, `no_call`, `reject`): `profile.decision`.
    pub fn decision(&self) -> &'static str {
        self.decision
    }

    /// The gate that rejected, if one did: `profile.gate`.
    pub fn gate(&self) -> Option<&'static str> {
        self.gate
    }

    /// Appends the member's JSON object (keys in this order).
    fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"name\":");
        jsonout::write_line(out, &self.name);
        out.extend_from_slice(b",\"parse_mode\":");
        jsonout::write_line(out, &self.parse_mode);
        out.extend_from_slice(b",\"fallback_used\":");
        out.extend_from_slice(if self.fallback_used {
            b"true"
        } else {
            b"false"
        });
        out.extend_from_slice(b",\"candidate_count\":");
        out.extend_from_slice(self.candidate_count.to_string().as_bytes());
        // Decision kinds, gates, labels and sources are plain identifiers.
        let ident = |out: &mut Vec<u8>, s: &str| {
            out.push(b'"');
            out.extend_from_slice(s.as_bytes());
            out.push(b'"');
        };
        out.extend_from_slice(b",\"decision\":");
        ident(out, self.decision);
        out.extend_from_slice(b",\"gate\":");
        match self.gate {
            Some(g) => ident(out, g),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"label\":");
        ident(out, self.label);
        out.extend_from_slice(b",\"calls\":");
        out.extend_from_slice(&self.calls);
        out.extend_from_slice(b",\"source\":");
        ident(out, self.source);
        out.extend_from_slice(b",\"source_detail\":");
        jsonout::write_line(out, &self.source_detail);
        out.push(b'}');
    }
}

/// Summarizes a replay for `label`.
pub fn summarize(t: &Transcript, replay: &Outcome<'_>, chosen: &Chosen) -> Labels {
    let p = &replay.profile;
    let profile = ProfileSummary {
        name: p.profile.clone(),
        parse_mode: p.parse_mode.as_deref().unwrap_or("none").to_string(),
        fallback_used: p.telemetry.fallback_used,
        candidate_count: p.telemetry.candidate_count,
        decision: p.decision.kind(),
        gate: p.decision.gate().map(|g| g.as_str()),
        label: p.label.as_str(),
        calls: {
            // Room for typical calls (none: just `[]`), at most 64 KiB.
            let calls_len = p.decision.calls().len();
            let room = if calls_len == 0 {
                2
            } else {
                calls_len.saturating_mul(512)
            };
            let mut calls = Vec::with_capacity(room.min(1 << 16));
            write_calls(&mut calls, p.decision.calls());
            calls
        },
        source: chosen.source.kind(),
        source_detail: chosen.source.to_string(),
    };
    Labels {
        modes: shared_modes(replay),
        strict: replay.strict.iter().map(|m| m.label).collect(),
        lenient: replay.lenient.iter().map(|m| m.label).collect(),
        profile,
        profile_label: p.label,
        findings: replay.findings.clone(),
        quiet: relabel::quiet_label(t.expect.as_ref()),
        diffs: Vec::new(),
        whys: Vec::new(),
        unlabeled: false,
        line: None,
    }
}

/// Appends `calls` as JSON, byte for byte as serde_json writes them
/// (`[{"name": …, "arguments": {…}}, …]`), strings and values by
/// [`jsonout::write_str`] and [`jsonout::write_map`].
fn write_calls(out: &mut Vec<u8>, calls: &[toolgate_core::Call]) {
    out.push(b'[');
    for (i, call) in calls.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"name\":");
        jsonout::write_str(out, &call.name);
        out.extend_from_slice(b",\"arguments\":");
        jsonout::write_map(out, &call.arguments);
        out.push(b'}');
    }
    out.push(b']');
}

/// Appends `s` as a JSON string, `null` when absent.
fn write_opt_str(out: &mut Vec<u8>, s: Option<&str>) {
    match s {
        Some(s) => jsonout::write_str(out, s),
        None => out.extend_from_slice(b"null"),
    }
}

/// The replay's mode names, shared with the previous transcript this thread
/// summarized when they are the same (they are, but for `auto` profiles
/// whose modes are not reported): no name is copied per transcript.
fn shared_modes(replay: &Outcome<'_>) -> Arc<ModeNames> {
    use std::cell::RefCell;
    thread_local! {
        static LAST: RefCell<Option<Arc<ModeNames>>> = const { RefCell::new(None) };
    }
    LAST.with(|last| {
        let mut last = last.borrow_mut();
        if let Some(names) = last.as_ref()
            && names.names.len() == replay.strict.len()
            && names
                .names
                .iter()
                .zip(&replay.strict)
                .all(|(n, m)| n == m.mode)
        {
            return Arc::clone(names);
        }
        let names = Arc::new(ModeNames::new(
            replay.strict.iter().map(|m| m.mode.to_string()).collect(),
        ));
        *last = Some(Arc::clone(&names));
        names
    })
}

/// Mode names, with each one's JSON member for every label rendered once
/// (`"hermes":"pass"`).
pub struct ModeNames {
    names: Vec<String>,
    /// Per mode, per label (`Label::ALL` order), the member's bytes.
    members: Vec<Vec<Vec<u8>>>,
}

impl ModeNames {
    fn new(names: Vec<String>) -> ModeNames {
        let members = names
            .iter()
            .map(|name| {
                let mut key = Vec::with_capacity(name.len() + 3);
                jsonout::write_line(&mut key, name.as_str());
                key.push(b':');
                Label::ALL
                    .iter()
                    .map(|label| {
                        // Label names are plain ASCII identifiers.
                        let mut member = key.clone();
                        member.push(b'"');
                        member.extend_from_slice(label.as_str().as_bytes());
                        member.push(b'"');
                        member
                    })
                    .collect()
            })
            .collect();
        ModeNames { names, members }
    }
}

impl Labels {
    /// `execute`, `no_call`, `reject (gate)`: made only for the table.
    pub fn decision(&self) -> String {
        match self.profile.gate {
            Some(gate) => format!("{} ({gate})", self.profile.decision),
            None => self.profile.decision.to_string(),
        }
    }

    /// `(mode, strict label)` pairs, engine order.
    pub fn strict_pairs(&self) -> Vec<(String, Label)> {
        pairs(&self.modes.names, &self.strict)
    }

    /// `(mode, lenient label)` pairs, engine order.
    pub fn lenient_pairs(&self) -> Vec<(String, Label)> {
        pairs(&self.modes.names, &self.lenient)
    }
}

fn pairs(modes: &[String], labels: &[Label]) -> Vec<(String, Label)> {
    modes.iter().cloned().zip(labels.iter().copied()).collect()
}

/// The `findings` member: `[{"kind": …, "detail": …}, …]`.
struct Findings<'a>(&'a [Finding]);

impl Serialize for Findings<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct One<'a> {
            kind: &'a str,
            detail: &'a str,
        }
        s.collect_seq(self.0.iter().map(|f| One {
            kind: f.kind.as_str(),
            detail: &f.detail,
        }))
    }
}

/// The `changed` member: `[{"mode", "stored", "now", "why", "candidate"}, …]`.
struct Changed<'a>(&'a [Why]);

impl Serialize for Changed<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct One<'a> {
            mode: &'a str,
            stored: Option<&'a str>,
            now: &'a str,
            why: &'a str,
            candidate: Option<&'a str>,
        }
        s.collect_seq(self.0.iter().map(|w| One {
            mode: &w.mode,
            stored: w.stored.as_deref(),
            now: w.now.as_str(),
            why: &w.why,
            candidate: w.candidate.as_deref(),
        }))
    }
}

/// Whether `label --write` stores labels in this transcript's file: not in
/// captures converted on load other than a single chat pair (streams,
/// Batch, Responses, Anthropic, OTel, BFCL), which are the provider's files.
/// A file in toolgate's own format stores them, `toolgate import`'s output
/// included (its `import` member names the format it came from, yet the
/// file is toolgate's). The CLI and the inspector both ask this.
pub fn storable(t: &Transcript) -> bool {
    let from = t.origin.as_ref().and_then(|o| o.from.as_deref());
    !t.converted || from == Some("openai-chat") && t.sample.is_none()
}

/// Why [`storable`] refuses a transcript, as `label --write` and the
/// inspector say it.
pub const NOT_STORABLE: &str =
    "their files are captures in another format (toolgate import them first)";

/// Whether nothing is stored in the transcript's `labels`: no member, or
/// `labels: null`, which `--write` replaces with the labels as it would
/// fill an absent member (so `--check --require-labels` fails it, as it
/// fails an absent one).
pub fn unlabeled(t: &Transcript) -> bool {
    t.stored_labels.is_none()
}

/// The per-mode label summary of the table: the most common label stands for
/// the rest (`hermes:pass fence:malformed_json +12 no_call`).
pub fn mode_summary(labels: &[(String, Label)]) -> String {
    let mut counts: Vec<(Label, usize)> = Vec::new();
    for (_, l) in labels {
        match counts.iter_mut().find(|(c, _)| c == l) {
            Some((_, n)) => *n += 1,
            None => counts.push((*l, 1)),
        }
    }
    let Some(&(common, n_common)) = counts
        .iter()
        .max_by_key(|(l, n)| (*n, std::cmp::Reverse(*l)))
    else {
        return String::new();
    };
    let mut parts: Vec<String> = labels
        .iter()
        .filter(|(_, l)| *l != common)
        .map(|(m, l)| format!("{m}:{l}"))
        .collect();
    if parts.is_empty() {
        parts.push(format!("all {common}"));
    } else {
        parts.push(format!("+{n_common} {common}"));
    }
    parts.join(" ")
}

/// The stored `labels` member of a transcript, when it is an object.
pub fn stored(t: &Transcript) -> Option<&StoredLabels> {
    t.stored_labels.as_ref()
}

/// What `--write` would change in the stored labels (see
/// [`toolgate_core::relabel`]).
pub fn differences(t: &Transcript, labels: &Labels) -> Vec<Difference> {
    // Nothing is compared without stored labels: no pairs built for it.
    match stored(t) {
        Some(stored) => relabel::differences(
            &labels.strict_pairs(),
            &labels.lenient_pairs(),
            labels.quiet,
            Some(stored),
        ),
        None => Vec::new(),
    }
}

/// The SPEC §7 record of one transcript as one line of JSON, written
/// directly (no `Value` tree; the labels, the bulk of it, as plain bytes).
pub fn record_line(t: &Transcript, labels: &Labels, changed: Option<&[Why]>) -> Vec<u8> {
    let mut out = Vec::with_capacity(3072);
    out.extend_from_slice(b"{\"path\":");
    // A UTF-8 path displays as itself: no text made for it.
    match t.path.to_str() {
        Some(path) => jsonout::write_str(&mut out, path),
        None => jsonout::write_str(&mut out, &t.path.display().to_string()),
    }
    out.extend_from_slice(b",\"id\":");
    jsonout::write_str(&mut out, &t.id);
    out.extend_from_slice(b",\"model\":");
    write_opt_str(&mut out, t.model.as_deref());
    out.extend_from_slice(b",\"task\":");
    write_opt_str(&mut out, t.task.as_deref());
    out.extend_from_slice(b",\"labels\":");
    let start = out.len();
    write_mode_labels(&mut out, &labels.modes, &labels.strict);
    let end = out.len();
    out.extend_from_slice(b",\"lenient\":");
    if labels.lenient == labels.strict {
        // Mostly so: the same object again, copied rather than rendered.
        out.extend_from_within(start..end);
    } else {
        write_mode_labels(&mut out, &labels.modes, &labels.lenient);
    }
    out.extend_from_slice(b",\"profile\":");
    labels.profile.write(&mut out);
    out.extend_from_slice(b",\"stored\":");
    match stored(t) {
        Some(stored) => write_stored(&mut out, stored),
        None => out.extend_from_slice(b"null"),
    }
    if let Some(whys) = changed {
        out.extend_from_slice(b",\"changed\":");
        jsonout::write_line(&mut out, &Changed(whys));
    }
    out.extend_from_slice(b",\"findings\":");
    jsonout::write_line(&mut out, &Findings(&labels.findings));
    out.extend_from_slice(b",\"schema_version\":");
    out.extend_from_slice(jsonout::SCHEMA_VERSION.to_string().as_bytes());
    out.push(b'}');
    out
}

/// The stored labels as a JSON object, in file order.
fn write_stored(out: &mut Vec<u8>, stored: &StoredLabels) {
    out.push(b'{');
    for (i, (mode, label)) in stored.in_file_order().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        jsonout::write_str(out, mode);
        out.push(b':');
        jsonout::write_str(out, label);
    }
    out.push(b'}');
}

/// The record of `--format json`: [`record_line`] read back, so both
/// formats hold the same members in the same order.
fn record_pretty(t: &Transcript, labels: &Labels, changed: Option<&[Why]>) -> String {
    match serde_json::from_slice::<Value>(&record_line(t, labels, changed)) {
        Ok(value) => jsonout::pretty(&value),
        // `record_line` writes valid JSON; this branch is never taken.
        Err(e) => {
            jsonout::pretty(&json!({"path": t.path.display().to_string(), "error": e.to_string()}))
        }
    }
}

/// Labels per mode as a JSON object, engine order, from the rendered members.
fn write_mode_labels(out: &mut Vec<u8>, modes: &ModeNames, labels: &[Label]) {
    out.push(b'{');
    for (i, (members, label)) in modes.members.iter().zip(labels).enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // `Label::ALL` lists the variants in declaration order: the
        // discriminant is the index (looked for if it ever were not).
        let at = match Label::ALL.get(*label as usize) {
            Some(l) if l == label => Some(*label as usize),
            _ => Label::ALL.iter().position(|l| l == label),
        };
        match at.and_then(|k| members.get(k)) {
            Some(member) => out.extend_from_slice(member),
            // Every label is in `Label::ALL`; rendered here if one were not.
            None => {
                jsonout::write_line(out, modes.names.get(i).map_or("", String::as_str));
                out.push(b':');
                jsonout::write_line(out, label.as_str());
            }
        }
    }
    out.push(b'}');
}

/// The record of an unreadable file or line.
pub fn error_record(e: &toolgate_core::LoadError) -> Value {
    let reason = match e.line {
        Some(line) => format!("line {line}: {}", e.reason),
        None => e.reason.clone(),
    };
    json!({"path": e.path.display().to_string(), "error": reason})
}

/// One changed label and why it is what it is now.
#[derive(Clone, Debug)]
pub struct Why {
    /// The mode.
    pub mode: String,
    /// The stored label (`None`: not stored).
    pub stored: Option<String>,
    /// The label now.
    pub now: Label,
    /// The rule or gate that decided ([`ModeResult::why`]).
    pub why: String,
    /// The raw candidate it was decided on, when the mode found one.
    pub candidate: Option<String>,
}

/// The why of every difference, from a full replay of the transcript under
/// the profile it was judged by (only transcripts whose labels changed pay
/// for it).
pub fn whys(engine: &Engine, t: &Transcript, chosen: &Chosen, diffs: &[Difference]) -> Vec<Why> {
    let replay = engine.replay_as(t, &chosen.profile);
    diffs
        .iter()
        .map(|d| {
            let result: Option<&ModeResult> = replay.strict_mode(&d.mode);
            Why {
                mode: d.mode.clone(),
                stored: d.stored.clone(),
                now: d.now,
                why: result.map(ModeResult::why).unwrap_or_default(),
                candidate: result
                    .and_then(ModeResult::deciding_candidate)
                    .map(|c| c.raw.trim().to_string()),
            }
        })
        .collect()
}

/// The record `label` renders on the workers for each transcript it prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Record {
    /// One line of JSON (`--format jsonl`, [`record_line`]).
    Line,
    /// The same record, pretty-printed (`--format json`).
    Pretty,
}

/// How `label` summarizes each replay, on the replay workers.
#[derive(Clone, Copy)]
pub struct Summarizer<'e> {
    /// The engine the batch replays with (for the why of a changed label).
    pub engine: &'e Engine,
    /// `--check` or `--changed`: compare with the stored labels and say why
    /// each differing one is what it is now.
    pub compare: bool,
    /// `--require-labels`: a transcript without stored labels differs too.
    pub require_labels: bool,
    /// The record to render for a printed transcript, if any.
    pub record: Option<Record>,
}

impl Summarizer<'_> {
    /// [`summarize`], then the differences from the stored labels, their
    /// whys and the rendered record, as the options ask.
    pub fn summarize(&self, t: &Transcript, outcome: &Outcome<'_>, chosen: &Chosen) -> Labels {
        let mut labels = summarize(t, outcome, chosen);
        labels.diffs = differences(t, &labels);
        if self.compare && self.require_labels && unlabeled(t) && storable(t) {
            // Never reviewed: every label `--write` would store is new.
            let store = relabel::to_store(
                &labels.strict_pairs(),
                &labels.lenient_pairs(),
                labels.quiet,
                None,
            );
            labels.unlabeled = true;
            labels.diffs = labels
                .strict_pairs()
                .into_iter()
                .filter(|(mode, _)| store.iter().any(|(m, _)| m == mode))
                .map(|(mode, now)| Difference {
                    mode,
                    stored: None,
                    now,
                })
                .collect();
        }
        if self.compare && !labels.diffs.is_empty() {
            labels.whys = whys(self.engine, t, chosen, &labels.diffs);
        }
        // A transcript failing `--require-labels` is named even when every
        // mode is quiet and `--write` would store an empty `labels`: no
        // difference, but it fails the check all the same.
        if !self.compare || !labels.diffs.is_empty() || labels.unlabeled {
            let changed = self.compare.then_some(labels.whys.as_slice());
            labels.line = match self.record {
                Some(Record::Line) => Some(record_line(t, &labels, changed)),
                Some(Record::Pretty) => Some(record_pretty(t, &labels, changed).into_bytes()),
                None => None,
            };
        }
        labels
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn summary_names_the_exceptions_and_counts_the_rest() {
        let labels = vec![
            ("tag".to_string(), Label::NoCall),
            ("json".to_string(), Label::NoCall),
            ("hermes".to_string(), Label::Pass),
            ("fence".to_string(), Label::NoCall),
        ];
        assert_eq!(mode_summary(&labels), "hermes:pass +3 no_call");
        assert_eq!(mode_summary(&labels[..2]), "all no_call");
        assert_eq!(mode_summary(&[]), "");
    }

    #[test]
    fn calls_written_by_hand_are_byte_for_byte_serde_json_s() {
        let calls = [
            toolgate_core::Call::new(
                "get_weather\u{202e}\"",
                json!({"city": "東京 \u{7f}\n", "days": 3, "f": 1.5, "x": {"y": [null, true]}}),
            ),
            toolgate_core::Call::new("time_now", json!({})),
        ];
        for calls in [&calls[..], &calls[..1], &[]] {
            let mut by_hand = Vec::new();
            write_calls(&mut by_hand, calls);
            let mut by_serde = Vec::new();
            jsonout::write_line(&mut by_serde, calls);
            assert_eq!(
                String::from_utf8_lossy(&by_hand),
                String::from_utf8_lossy(&by_serde)
            );
        }
    }
}
