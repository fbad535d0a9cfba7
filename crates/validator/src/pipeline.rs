//! The pipeline for one output: extract, select, gate, decide (SPEC §4).
//!
//! 1. **Select.** The primary mode's live candidates (reasoning excluded) are
//!    the candidates when there are any. Otherwise, when the profile enables
//!    fallbacks, the first fallback mode with live candidates wins
//!    (`fallback_used`). With `allow_repairs` the lenient variant of each mode
//!    is used, otherwise the strict one.
//! 2. **Gate**, in the order of SPEC §9; the first failing gate decides:
//!    - `intent` (fallback only): a line of the output or of the reasoning
//!      field that is exactly one of the profile's intent tokens (surrounding
//!      whitespace ignored);
//!    - `single` (fallback only): exactly one candidate; more → reject with a
//!      message asking for exactly one call in the primary format;
//!    - `size`: each candidate's payload (`raw`) within the fallback or the
//!      primary limit;
//!    - `parse`: every candidate parsed (and, unless the profile allows
//!      repairs, none was repaired);
//!    - `allowlist`: every tool name is allowlisted;
//!    - `schema`: every call passes [`Toolset::check`] (the tool's schema,
//!      strictly). The expectation never gates execution.
//! 3. **Decide**: `execute` the normalized calls when every gate passes,
//!    `no_call` when no mode found a candidate, else `reject`.
//!
//! The label is computed separately (SPEC §5) from the selected mode's
//! candidates — or the primary mode's when no mode found any — and a gate
//! never changes it. Every gate is evaluated for display, even after the
//! first failure; only the first failure is the decision.
//!
//! Telemetry `parse_mode` uses seed 000's wording: `primary` when the primary
//! mode produced the candidates (whatever its name), the fallback mode's name
//! when a fallback did, `none` otherwise. [`run`] emits the record as a
//! `tracing` event with target `toolgate::telemetry`.

use crate::labeler::{Labeled, Prepared, label, label_prepared};
use crate::toolset::clip;
use crate::{Profile, Toolset};
use std::collections::BTreeSet;
use toolgate_core::{Candidate, Decision, Expectation, Gate, Label, SchemaValidation, Telemetry};
use toolgate_formats::{Extractor, Input, Strictness};

/// One gate's verdict on a set of candidates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GateCheck {
    /// The gate.
    pub gate: Gate,
    /// Whether it passed (`true` also when it does not apply).
    pub passed: bool,
    /// Why it passed or failed ("not applicable to primary candidates", …).
    pub reason: String,
}

/// What the pipeline produced for one output under one profile.
#[derive(Clone, Debug, PartialEq)]
pub struct PipelineResult {
    /// The profile's name.
    pub profile: String,
    /// The mode whose candidates were selected, if any.
    pub parse_mode: Option<String>,
    /// Whether a fallback mode was used.
    pub fallback_used: bool,
    /// The selected candidates (live ones: reasoning excluded).
    pub candidates: Vec<Candidate>,
    /// Every gate, in check order.
    pub gates: Vec<GateCheck>,
    /// The decision.
    pub decision: Decision,
    /// The telemetry record.
    pub telemetry: Telemetry,
    /// The label of the selected candidates (SPEC §5: gates never change it).
    pub label: Label,
    /// Why that label.
    pub label_reason: String,
}

/// How a mode's candidates meet the gates: as the profile's primary mode or
/// as a fallback.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The profile's primary mode: `intent` and `single` do not apply; the
    /// primary size limit.
    Primary,
    /// A fallback: every gate applies; the fallback size limit.
    Fallback,
}

impl Role {
    /// The role `mode`'s candidates meet in `profile`, for replay: fallback
    /// when it is one of the profile's (enabled) fallbacks; primary when it
    /// is the primary — and when it is neither, as if it were primary (the
    /// pipeline never selects it, and a fallback's `need_tool: yes` would
    /// misdescribe it).
    pub fn of(profile: &Profile, mode: &str) -> Role {
        if profile.primary != mode
            && profile.fallbacks_enabled
            && profile.fallbacks.iter().any(|f| f == mode)
        {
            Role::Fallback
        } else {
            Role::Primary
        }
    }
}

/// The gates, decision and telemetry for one mode's candidates.
#[derive(Clone, Debug, PartialEq)]
pub struct Gated {
    /// Every gate, in check order.
    pub gates: Vec<GateCheck>,
    /// The decision.
    pub decision: Decision,
    /// The telemetry record.
    pub telemetry: Telemetry,
}

/// Runs the profile's pipeline on one output: extracts with the profile's
/// modes (from `extractors`; a mode with no extractor finds nothing), selects,
/// gates, decides, labels, and emits the telemetry event.
pub fn run(
    profile: &Profile,
    extractors: &[Box<dyn Extractor>],
    input: &Input<'_>,
    toolset: &Toolset,
    expect: Option<&Expectation>,
) -> PipelineResult {
    let result = run_quiet(profile, extractors, input, toolset, expect);
    emit(&result);
    result
}

/// [`run`] without emitting the telemetry event.
pub(crate) fn run_quiet(
    profile: &Profile,
    extractors: &[Box<dyn Extractor>],
    input: &Input<'_>,
    toolset: &Toolset,
    expect: Option<&Expectation>,
) -> PipelineResult {
    let strictness = profile_strictness(profile);
    // Looked up once: the primary is both extracted and shown in re-emits.
    let primary = extractor_of(extractors, &profile.primary);
    run_with(
        profile,
        input,
        toolset,
        expect,
        |mode| {
            let found = if mode == profile.primary {
                primary
            } else {
                extractor_of(extractors, mode)
            };
            found
                .map(|e| {
                    let mut found = e.extract(input, strictness);
                    toolgate_formats::rules::cap_candidates(&mut found, input.max_candidates);
                    found
                })
                .unwrap_or_default()
        },
        primary,
    )
}

/// The strictness the profile's pipeline extracts with: lenient only when the
/// profile allows repaired calls to execute.
pub fn profile_strictness(profile: &Profile) -> Strictness {
    if profile.allow_repairs {
        Strictness::Lenient
    } else {
        Strictness::Strict
    }
}

/// [`run`] with extraction supplied by the caller (replay reuses the
/// candidates it already extracted) and without emitting the event.
/// `candidates_of(mode)` returns every candidate of that mode (reasoning ones
/// included); `primary` the primary mode's extractor, whose syntax the
/// re-emit message shows.
pub fn run_with<F>(
    profile: &Profile,
    input: &Input<'_>,
    toolset: &Toolset,
    expect: Option<&Expectation>,
    mut candidates_of: F,
    primary_mode: Option<&dyn Extractor>,
) -> PipelineResult
where
    F: FnMut(&str) -> Vec<Candidate>,
{
    let primary = candidates_of(&profile.primary);
    let mut selected: Option<(String, Role, Vec<Candidate>)> = None;
    // The primary's candidates are needed again only when no mode selects
    // any (for the label): kept here, moved when selected.
    let mut unselected = Some(primary);
    if unselected
        .as_ref()
        .is_some_and(|p| p.iter().any(Candidate::is_live))
    {
        selected = unselected
            .take()
            .map(|p| (profile.primary.clone(), Role::Primary, p));
    } else if profile.fallbacks_enabled {
        for mode in &profile.fallbacks {
            let found = candidates_of(mode);
            if found.iter().any(Candidate::is_live) {
                selected = Some((mode.clone(), Role::Fallback, found));
                break;
            }
        }
    }
    match selected {
        Some((mode, role, all)) => {
            // Label and gates share the live candidates, their calls and
            // each call's schema check.
            let prepared = Prepared::new(&all);
            let labeled = label_prepared(&prepared, expect, toolset, input.hit_length_limit);
            let gated = gate_prepared(profile, role, &mode, prepared, input, toolset, primary_mode);
            PipelineResult {
                profile: profile.name.clone(),
                parse_mode: Some(mode),
                fallback_used: role == Role::Fallback,
                candidates: all.into_iter().filter(Candidate::is_live).collect(),
                gates: gated.gates,
                decision: gated.decision,
                telemetry: gated.telemetry,
                label: labeled.label,
                label_reason: labeled.reason,
            }
        }
        None => {
            let primary = unselected.unwrap_or_default();
            let Labeled { label, reason } =
                label(&primary, expect, toolset, input.hit_length_limit);
            let gated = gate(
                profile,
                Role::Primary,
                &profile.primary,
                &[],
                input,
                toolset,
                None,
            );
            PipelineResult {
                profile: profile.name.clone(),
                parse_mode: None,
                fallback_used: false,
                candidates: Vec::new(),
                gates: gated.gates,
                decision: gated.decision,
                telemetry: gated.telemetry,
                label,
                label_reason: reason,
            }
        }
    }
}

/// The extractor of `mode` among `extractors`.
pub(crate) fn extractor_of<'e>(
    extractors: &'e [Box<dyn Extractor>],
    mode: &str,
) -> Option<&'e dyn Extractor> {
    extractors.iter().find(|e| e.name() == mode).map(|e| &**e)
}

/// The re-emit example: the primary mode's own example, calling a tool of
/// the allowlist — the first the rejected candidates name that is
/// allowlisted, else the allowlist's first. When the example names another
/// tool, its name (and its argument names, mapped in order onto the tool's
/// declared properties, required first) are rewritten where they stand as
/// whole words, and the result is kept only if the primary mode reads it
/// back as a call of that tool (else the name-only rewrite, else `None`).
/// Returns the tool too (`None` when nothing is allowlisted).
pub fn reemit_example(
    primary: &dyn Extractor,
    toolset: &Toolset,
    candidates: &[&Candidate],
) -> (Option<String>, Option<String>) {
    let tool = candidates
        .iter()
        .filter_map(|c| c.name.as_deref())
        .find(|n| toolset.is_allowed(n))
        .or_else(|| toolset.names().first().map(String::as_str));
    let example = primary.example();
    let Some(tool) = tool else {
        return (Some(example.to_string()), None);
    };
    let read = |text: &str| -> Option<Candidate> {
        primary
            .extract(&Input::new(text), Strictness::Strict)
            .into_iter()
            .find(|c| c.is_live())
    };
    let Some(shown) = read(example) else {
        // The example cannot be read back (a test double): keep it only if
        // it already names the tool.
        let keep = contains_word(example, tool);
        return (keep.then(|| example.to_string()), Some(tool.to_string()));
    };
    if shown.name.as_deref() == Some(tool) {
        return (Some(example.to_string()), Some(tool.to_string()));
    }
    let Some(old) = shown.name.as_deref() else {
        return (None, Some(tool.to_string()));
    };
    let renamed = replace_word(example, old, tool);
    let mut full = renamed.clone();
    // The values the rejected call gave the tool, where the example's
    // value can be swapped for one: the example then reads as the model's
    // own call (`{"city": "Antwerp"}`), not as the example's value under a
    // renamed key (`{"city": "rust memchr"}`).
    let mut valued = None;
    if let (Ok(args), Some(schema)) = (&shown.arguments, toolset.schema(tool)) {
        let own = candidates
            .iter()
            .find(|c| c.name.as_deref() == Some(tool))
            .and_then(|c| c.arguments.as_ref().ok());
        let names = schema.property_names();
        let mut with_values = renamed.clone();
        for ((key, value), new) in args.iter().zip(names) {
            full = replace_word(&full, key, new);
            with_values = replace_word(&with_values, key, new);
            if let (Some(ex), Some(mine)) = (value.as_str(), own.and_then(|o| o.get(new))) {
                let (ex, mine) = (serde_json::Value::from(ex).to_string(), mine.to_string());
                if mine.len() <= 200 {
                    with_values = with_values.replacen(&ex, &mine, 1);
                }
            }
        }
        valued = Some(with_values);
    }
    for text in valued.into_iter().chain([full, renamed]) {
        if let Some(c) = read(&text)
            && c.name.as_deref() == Some(tool)
            && c.failure().is_none()
        {
            return (Some(text), Some(tool.to_string()));
        }
    }
    (None, Some(tool.to_string()))
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// `text` with every whole-word occurrence of `word` replaced (a word is a
/// run of ASCII letters, digits and `_`).
fn replace_word(text: &str, word: &str, new: &str) -> String {
    if word.is_empty() {
        return text.to_string();
    }
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in text.match_indices(word) {
        let end = at + word.len();
        let before = at.checked_sub(1).and_then(|i| bytes.get(i)).copied();
        let after = bytes.get(end).copied();
        if before.is_some_and(is_word_byte) || after.is_some_and(is_word_byte) || at < last {
            continue;
        }
        out.push_str(&text[last..at]);
        out.push_str(new);
        last = end;
    }
    out.push_str(&text[last..]);
    out
}

fn contains_word(text: &str, word: &str) -> bool {
    replace_word(text, word, "") != text
}

/// Emits the telemetry record as a `tracing` event (target
/// `toolgate::telemetry`).
///
/// Text fields go through [`toolgate_core::sanitize::one_line`]: the reason
/// quotes model-chosen keys and tool names, and a subscriber writing to a
/// terminal (the CLI's stderr) must never receive raw control, bidi or
/// invisible characters from them.
pub fn emit(result: &PipelineResult) {
    use toolgate_core::sanitize::one_line;
    let t = &result.telemetry;
    let repairs: Vec<&str> = t.repairs.iter().map(|r| r.as_str()).collect();
    let schema_reason = one_line(t.schema_reason.as_deref().unwrap_or(""));
    tracing::info!(
        target: "toolgate::telemetry",
        profile = %one_line(&result.profile),
        parse_mode = %one_line(&t.parse_mode),
        fallback_used = t.fallback_used,
        candidate_count = t.candidate_count as u64,
        schema_validation = schema_validation_str(t.schema_validation),
        schema_reason = &*schema_reason,
        gate = t.gate.map_or("null", Gate::as_str),
        decision = %t.decision,
        repairs = %repairs.join(","),
        label = result.label.as_str(),
        "tool call decision"
    );
}

fn schema_validation_str(v: SchemaValidation) -> &'static str {
    match v {
        SchemaValidation::Pass => "pass",
        SchemaValidation::Fail => "fail",
        SchemaValidation::Skipped => "skipped",
    }
}

/// The gates, decision and telemetry for `candidates` (every candidate of
/// `mode`, reasoning ones included: only live ones are gated) met in `role`.
/// `primary_example` is shown in the re-emit message of the `single` gate.
pub fn gate(
    profile: &Profile,
    role: Role,
    mode: &str,
    candidates: &[Candidate],
    input: &Input<'_>,
    toolset: &Toolset,
    primary: Option<&dyn Extractor>,
) -> Gated {
    let prepared = Prepared::new(candidates);
    gate_prepared(profile, role, mode, prepared, input, toolset, primary)
}

/// [`gate`] of prepared candidates.
fn gate_prepared(
    profile: &Profile,
    role: Role,
    mode: &str,
    prepared: Prepared<'_>,
    input: &Input<'_>,
    toolset: &Toolset,
    primary: Option<&dyn Extractor>,
) -> Gated {
    let live = &prepared.live;
    // Strict extraction records no repair: no set to build then.
    let repairs: Vec<_> = if live.iter().all(|(_, c)| c.repairs.is_empty()) {
        Vec::new()
    } else {
        live.iter()
            .flat_map(|(_, c)| c.repairs.iter().copied())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    };

    if live.is_empty() {
        let gates = Gate::ALL
            .iter()
            .map(|&g| GateCheck {
                gate: g,
                passed: true,
                reason: "no candidates".into(),
            })
            .collect();
        return Gated {
            gates,
            decision: Decision::NoCall,
            telemetry: Telemetry {
                parse_mode: "none".into(),
                fallback_used: false,
                candidate_count: 0,
                schema_validation: SchemaValidation::Skipped,
                schema_reason: None,
                gate: None,
                decision: "no_call".into(),
                repairs,
                tool_result_status: None,
            },
        };
    }

    let mut gates = Vec::with_capacity(Gate::ALL.len());
    let mut reemit = None;

    // intent
    gates.push(match role {
        Role::Primary => not_applicable(Gate::Intent),
        Role::Fallback => match intent_line(profile, input) {
            Some(token) => pass(Gate::Intent, format!("the output declares tool intent (`{token}`)")),
            None => fail(
                Gate::Intent,
                format!(
                    "fallback `{mode}` candidates need explicit tool intent: a line that is exactly one of {}",
                    quoted_list(&profile.intent_tokens)
                ),
            ),
        },
    });

    // single
    gates.push(match role {
        Role::Primary => not_applicable(Gate::Single),
        Role::Fallback if live.len() == 1 => pass(Gate::Single, "exactly one candidate"),
        Role::Fallback => {
            let rejected: Vec<&Candidate> = live.iter().map(|(_, c)| *c).collect();
            let (example, tool) = match primary {
                Some(p) => reemit_example(p, toolset, &rejected),
                None => (None, toolset.names().first().cloned()),
            };
            reemit = Some(reemit_message(
                live.len(),
                mode,
                &profile.primary,
                example.as_deref(),
                tool.as_deref(),
            ));
            fail(
                Gate::Single,
                format!(
                    "{} fallback `{mode}` candidates; a fallback may carry exactly one call",
                    live.len()
                ),
            )
        }
    });

    // size
    let (limit, which) = match role {
        Role::Primary => (profile.primary_size_limit, "primary"),
        Role::Fallback => (profile.fallback_size_limit, "fallback"),
    };
    gates.push(match live.iter().find(|(_, c)| c.raw.len() > limit) {
        Some((i, c)) => fail(
            Gate::Size,
            format!(
                "candidate #{i} payload is {} bytes, over the {limit}-byte {which} limit",
                c.raw.len()
            ),
        ),
        None => pass(
            Gate::Size,
            format!("every payload is within the {limit}-byte {which} limit"),
        ),
    });

    // parse
    let parse_problem = live.iter().find_map(|(i, c)| {
        if let Some(f) = c.failure() {
            Some(format!(
                "candidate #{i} failed to parse ({}): {}",
                f.kind,
                clip(&f.message, 160)
            ))
        } else if c.name.is_none() {
            Some(format!("candidate #{i} has no readable tool name"))
        } else if !c.repairs.is_empty() && !profile.allow_repairs {
            let names: Vec<&str> = c.repairs.iter().map(|r| r.as_str()).collect();
            Some(format!(
                "candidate #{i} was repaired ({}) and this profile does not execute repaired calls",
                names.join(", ")
            ))
        } else {
            None
        }
    });
    gates.push(match parse_problem {
        Some(reason) => fail(Gate::Parse, reason),
        None => pass(Gate::Parse, "every candidate parsed"),
    });

    // allowlist
    let calls = &prepared.calls;
    let not_allowed = live.iter().find_map(|(i, c)| {
        let name = c.name.as_deref()?;
        (!toolset.is_allowed(name)).then(|| {
            let hint = toolset
                .closest(name)
                .map(|n| format!(" (did you mean `{n}`?)"))
                .unwrap_or_default();
            format!(
                "candidate #{i}: tool `{}` is not allowlisted{hint}",
                clip(name, 80)
            )
        })
    });
    gates.push(match not_allowed {
        // Fail closed: nothing executes without an allowlist (SPEC §4).
        _ if !toolset.is_known() => fail(
            Gate::Allowlist,
            "tools unknown: the transcript has no tool list (`tools`), so nothing is allowlisted",
        ),
        Some(reason) => fail(Gate::Allowlist, reason),
        None => pass(Gate::Allowlist, "every tool name is allowlisted"),
    });

    // schema
    let schema_problem = calls
        .iter()
        .enumerate()
        .filter(|(_, (_, c))| toolset.is_allowed(c.name))
        .find_map(|(k, (i, _))| {
            prepared
                .check(toolset, k)
                .as_ref()
                .err()
                .map(|v| format!("candidate #{i}: {}", v.reason))
        });
    let all_parsed = calls.len() == live.len();
    let live_count = live.len();
    gates.push(match &schema_problem {
        None if !toolset.is_known() => {
            pass(Gate::Schema, "not checked: tools unknown (no tool schemas)")
        }
        Some(reason) => fail(Gate::Schema, reason.clone()),
        None if all_parsed => pass(Gate::Schema, "every call passes its tool's schema"),
        None => pass(
            Gate::Schema,
            "every call that parsed passes its tool's schema (the others cannot be checked)",
        ),
    });

    let first_failure = gates.iter().find(|g| !g.passed);
    let (decision, schema_validation, schema_reason) = match first_failure {
        Some(g) => {
            let (sv, sr) = if g.gate == Gate::Schema {
                (SchemaValidation::Fail, schema_problem.clone())
            } else {
                (SchemaValidation::Skipped, None)
            };
            let decision = Decision::Reject {
                gate: g.gate,
                reason: g.reason.clone(),
                reemit: if g.gate == Gate::Single { reemit } else { None },
            };
            (decision, sv, sr)
        }
        None => (
            Decision::Execute {
                calls: prepared.into_calls(),
            },
            SchemaValidation::Pass,
            None,
        ),
    };
    let telemetry = Telemetry {
        parse_mode: match role {
            Role::Primary => "primary".into(),
            Role::Fallback => mode.to_string(),
        },
        fallback_used: role == Role::Fallback,
        candidate_count: live_count,
        schema_validation,
        schema_reason,
        gate: decision.gate(),
        decision: decision.kind().into(),
        repairs,
        tool_result_status: None,
    };
    Gated {
        gates,
        decision,
        telemetry,
    }
}

/// The message asking the model to re-emit exactly one call in the primary
/// format; without an example in that format, it names an allowlisted tool.
pub fn reemit_message(
    count: usize,
    mode: &str,
    primary: &str,
    example: Option<&str>,
    tool: Option<&str>,
) -> String {
    let mut msg = format!(
        "Your reply contained {count} tool calls in the `{mode}` format, which cannot be executed. \
         Re-emit exactly one tool call, in the `{primary}` format"
    );
    match (example, tool) {
        (Some(example), _) => {
            msg.push_str(", for example:\n");
            msg.push_str(example);
        }
        (None, Some(tool)) => {
            msg.push_str(&format!(" (for example a call of `{tool}`)."));
        }
        (None, None) => msg.push('.'),
    }
    msg
}

/// The first intent token that stands alone on a line of the output or of the
/// reasoning field.
fn intent_line<'p>(profile: &'p Profile, input: &Input<'_>) -> Option<&'p str> {
    let texts = std::iter::once(input.output).chain(input.reasoning_field);
    for text in texts {
        // The first line (by position) that is, trimmed, a trimmed token;
        // on one line, the first such token of the profile. Each token is
        // searched for instead of splitting and trimming every line.
        let mut best: Option<(usize, &str)> = None;
        for token in &profile.intent_tokens {
            if let Some(at) = first_line_of(text, token.trim())
                && best.is_none_or(|(b, _)| at < b)
            {
                best = Some((at, token.as_str()));
            }
        }
        if let Some((_, token)) = best {
            return Some(token);
        }
    }
    None
}

/// The offset of the first occurrence of `word` (trimmed) in `text` that is
/// a whole line but for surrounding whitespace — as `str::lines` and
/// `str::trim` would find it. Linear: `word` starts and ends with a
/// non-whitespace character and holds no line break, so the non-overlapping
/// search misses no such occurrence (an overlapping earlier one would start
/// in the line's leading whitespace or on an earlier line), and the
/// whitespace checked around distinct occurrences never overlaps.
fn first_line_of(text: &str, word: &str) -> Option<usize> {
    if word.is_empty() || word.contains('\n') {
        return None;
    }
    let mut from = 0;
    while let Some(at) = toolgate_formats::util::find_from(text, word, from) {
        let before = text[..at].chars().rev().take_while(|&c| c != '\n');
        let after = text[at + word.len()..].chars().take_while(|&c| c != '\n');
        if before.chain(after).all(char::is_whitespace) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

fn quoted_list(items: &[String]) -> String {
    if items.is_empty() {
        return "(no intent tokens are configured)".into();
    }
    let quoted: Vec<String> = items.iter().map(|t| format!("`{t}`")).collect();
    quoted.join(", ")
}

fn not_applicable(gate: Gate) -> GateCheck {
    pass(gate, "not applicable to primary candidates")
}

fn pass(gate: Gate, reason: impl Into<String>) -> GateCheck {
    GateCheck {
        gate,
        passed: true,
        reason: reason.into(),
    }
}

fn fail(gate: Gate, reason: impl Into<String>) -> GateCheck {
    GateCheck {
        gate,
        passed: false,
        reason: reason.into(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::testutil::*;
    use serde_json::json;
    use toolgate_core::{Call, FailureKind, Repair};

    fn tools() -> Toolset {
        Toolset::new(&weather_tools())
    }

    #[test]
    fn intent_lines_are_found_as_splitting_and_trimming_every_line_finds_them() {
        // The rule before `first_line_of`: every line split and trimmed.
        fn by_lines<'p>(tokens: &'p [String], text: &str) -> Option<&'p str> {
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .find_map(|l| tokens.iter().find(|t| t.trim() == l))
                .map(String::as_str)
        }
        let tokens: Vec<String> = ["need_tool: yes", " CALL_TOOL ", "CALL", "", "a\nb", "é x"]
            .iter()
            .map(|t| t.to_string())
            .collect();
        let profile = Profile {
            intent_tokens: tokens.clone(),
            ..Profile::default()
        };
        let pieces = [
            "need_tool: yes",
            "CALL_TOOL",
            "CALL",
            "\n",
            "\r\n",
            " ",
            "\t",
            "\u{3000}",
            "x",
            "é x",
            "a",
            "b",
            "_TOOL",
            "need_tool:",
            " yes",
        ];
        let mut x = 0x853c_49e6_748f_ea9bu64;
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..8 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push_str(pieces[(x % pieces.len() as u64) as usize]);
            }
            let input = Input::new(&text);
            assert_eq!(
                intent_line(&profile, &input),
                by_lines(&tokens, &text),
                "{text:?}"
            );
        }
    }

    fn weather(mode: &str, city: &str) -> Candidate {
        ok(mode, "get_weather", json!({"city": city}))
    }

    /// Runs the default profile with `tag`, `json`, `bracket` returning the given candidates.
    fn run_default(
        output: &str,
        tag: Vec<Candidate>,
        json_: Vec<Candidate>,
        bracket: Vec<Candidate>,
    ) -> PipelineResult {
        let extractors = vec![
            Fixed::boxed("tag", tag),
            Fixed::boxed("json", json_),
            Fixed::boxed("bracket", bracket),
        ];
        run(
            &Profile::default(),
            &extractors,
            &Input::new(output),
            &tools(),
            None,
        )
    }

    fn reject(gate: Gate, reason: &str) -> Decision {
        Decision::Reject {
            gate,
            reason: reason.into(),
            reemit: None,
        }
    }

    #[test]
    fn primary_candidates_execute() {
        let r = run_default("<tool …>", vec![weather("tag", "Antwerp")], vec![], vec![]);
        assert_eq!(
            r.decision,
            Decision::Execute {
                calls: vec![Call::new("get_weather", json!({"city": "Antwerp"}))]
            }
        );
        assert_eq!(r.parse_mode.as_deref(), Some("tag"));
        assert!(!r.fallback_used);
        assert_eq!(r.label, Label::Pass);
        let t = &r.telemetry;
        assert_eq!(t.parse_mode, "primary");
        assert_eq!((t.fallback_used, t.candidate_count), (false, 1));
        assert_eq!(t.schema_validation, SchemaValidation::Pass);
        assert_eq!((t.gate, t.decision.as_str()), (None, "execute"));
        assert_eq!(t.tool_result_status, None);
        assert_eq!(r.gates[0].reason, "not applicable to primary candidates");
        assert_eq!(r.gates[1].reason, "not applicable to primary candidates");
        assert!(r.gates.iter().all(|g| g.passed));
        assert_eq!(
            r.gates.iter().map(|g| g.gate).collect::<Vec<_>>(),
            Gate::ALL
        );
    }

    #[test]
    fn no_candidates_anywhere_is_no_call_with_the_primary_label() {
        let r = run_default("just prose", vec![], vec![], vec![]);
        assert_eq!(r.decision, Decision::NoCall);
        assert_eq!((r.parse_mode, r.fallback_used), (None, false));
        assert_eq!(r.telemetry.parse_mode, "none");
        assert_eq!(r.telemetry.schema_validation, SchemaValidation::Skipped);
        assert_eq!(r.telemetry.decision, "no_call");
        assert_eq!(r.label, Label::NoCall);
        // With `expect` saying no call, the primary label is pass.
        let extractors = vec![Fixed::boxed("tag", vec![])];
        let e = expect(&[]);
        let r = run(
            &Profile::default(),
            &extractors,
            &Input::new("hi"),
            &tools(),
            Some(&e),
        );
        assert_eq!((r.decision, r.label), (Decision::NoCall, Label::Pass));
    }

    #[test]
    fn first_fallback_with_candidates_wins() {
        let out = "need_tool: yes\n[get_weather(city=\"Ghent\")]";
        let r = run_default(out, vec![], vec![], vec![weather("bracket", "Ghent")]);
        assert_eq!(r.parse_mode.as_deref(), Some("bracket"));
        assert!(r.fallback_used);
        assert_eq!(r.telemetry.parse_mode, "bracket");
        assert!(r.telemetry.fallback_used);
        assert_eq!(r.decision.kind(), "execute");
        let r = run_default(
            out,
            vec![],
            vec![weather("json", "A")],
            vec![weather("bracket", "B")],
        );
        assert_eq!(r.parse_mode.as_deref(), Some("json"));
        assert_eq!(r.decision.calls()[0].arguments["city"], "A");
    }

    #[test]
    fn reasoning_only_primary_candidates_do_not_select_the_primary() {
        let r = run_default(
            "CALL_TOOL\n{…}",
            vec![in_reasoning(weather("tag", "X"))],
            vec![weather("json", "A")],
            vec![],
        );
        assert_eq!(r.parse_mode.as_deref(), Some("json"));
        assert_eq!(r.candidates.len(), 1);
    }

    #[test]
    fn fallbacks_disabled_means_primary_only() {
        let p = Profile {
            fallbacks_enabled: false,
            ..Profile::default()
        };
        let extractors = vec![
            Fixed::boxed("tag", vec![]),
            Fixed::boxed("json", vec![weather("json", "A")]),
        ];
        let r = run(
            &p,
            &extractors,
            &Input::new("CALL_TOOL\n{}"),
            &tools(),
            None,
        );
        assert_eq!(r.decision, Decision::NoCall);
        assert_eq!(r.label, Label::NoCall);
    }

    #[test]
    fn intent_gate_alone_label_pass_decision_reject() {
        let r = run_default("{\"tool\": …}", vec![], vec![weather("json", "A")], vec![]);
        assert_eq!(
            r.decision,
            reject(
                Gate::Intent,
                "fallback `json` candidates need explicit tool intent: a line that is exactly one of `need_tool: yes`, `CALL_TOOL`"
            )
        );
        // The label describes the output; the gate only changes the decision.
        assert_eq!(r.label, Label::Pass);
        assert_eq!(r.telemetry.gate, Some(Gate::Intent));
        assert_eq!(r.telemetry.schema_validation, SchemaValidation::Skipped);
        // Every other gate still passed (evaluated for display).
        assert!(r.gates[1..].iter().all(|g| g.passed));
    }

    #[test]
    fn intent_token_must_stand_alone_on_a_line_in_output_or_reasoning() {
        let c = || vec![weather("json", "A")];
        assert_eq!(
            run_default("  CALL_TOOL  \n{}", vec![], c(), vec![])
                .decision
                .kind(),
            "execute"
        );
        assert_eq!(
            run_default("I will CALL_TOOL now\n{}", vec![], c(), vec![])
                .decision
                .gate(),
            Some(Gate::Intent)
        );
        assert_eq!(
            run_default("need_tool: yes please", vec![], c(), vec![])
                .decision
                .gate(),
            Some(Gate::Intent)
        );
        let extractors = vec![Fixed::boxed("tag", vec![]), Fixed::boxed("json", c())];
        let mut input = Input::new("{}");
        input.reasoning_field = Some("thinking...\nneed_tool: yes\n");
        let r = run(&Profile::default(), &extractors, &input, &tools(), None);
        assert_eq!(r.decision.kind(), "execute");
    }

    #[test]
    fn single_gate_alone_rejects_with_a_reemit_message() {
        let r = run_default(
            "CALL_TOOL",
            vec![],
            vec![weather("json", "A"), weather("json", "B")],
            vec![],
        );
        let expected_reemit = "Your reply contained 2 tool calls in the `json` format, which cannot be executed. \
             Re-emit exactly one tool call, in the `tag` format, for example:\n\
             <tool name=\"get_weather\">{\"city\": \"Antwerp\"}</tool>";
        assert_eq!(
            r.decision,
            Decision::Reject {
                gate: Gate::Single,
                reason: "2 fallback `json` candidates; a fallback may carry exactly one call"
                    .into(),
                reemit: Some(expected_reemit.into()),
            }
        );
        assert_eq!(r.telemetry.candidate_count, 2);
    }

    #[test]
    fn primary_candidates_may_be_several() {
        let r = run_default(
            "",
            vec![weather("tag", "A"), weather("tag", "B")],
            vec![],
            vec![],
        );
        assert_eq!(r.decision.calls().len(), 2);
    }

    #[test]
    fn size_gate_alone_per_call_and_per_role() {
        let mut big = weather("json", "A");
        big.raw = "x".repeat(2049);
        let r = run_default("CALL_TOOL", vec![], vec![big.clone()], vec![]);
        assert_eq!(
            r.decision,
            reject(
                Gate::Size,
                "candidate #0 payload is 2049 bytes, over the 2048-byte fallback limit"
            )
        );
        // The same payload is fine as a primary candidate (64 KiB limit)...
        big.mode = "tag".into();
        assert_eq!(
            run_default("", vec![big.clone()], vec![], vec![])
                .decision
                .kind(),
            "execute"
        );
        // ...until it exceeds that.
        big.raw = "x".repeat(65537);
        assert_eq!(
            run_default("", vec![big], vec![], vec![]).decision,
            reject(
                Gate::Size,
                "candidate #0 payload is 65537 bytes, over the 65536-byte primary limit"
            )
        );
    }

    #[test]
    fn parse_gate_alone_failed_or_repaired() {
        let bad = failed(
            "tag",
            Some("get_weather"),
            FailureKind::Malformed,
            "expected `}`",
        );
        let r = run_default("", vec![bad], vec![], vec![]);
        assert_eq!(
            r.decision,
            reject(
                Gate::Parse,
                "candidate #0 failed to parse (malformed): expected `}`"
            )
        );
        assert_eq!(r.label, Label::MalformedJson);
        let fixed = repaired(weather("tag", "A"), &[Repair::SingleQuotes]);
        let r = run_default("", vec![fixed.clone()], vec![], vec![]);
        assert_eq!(
            r.decision,
            reject(
                Gate::Parse,
                "candidate #0 was repaired (single_quotes) and this profile does not execute repaired calls"
            )
        );
        assert_eq!(r.telemetry.repairs, vec![Repair::SingleQuotes]);
        let lenient = Profile {
            allow_repairs: true,
            ..Profile::default()
        };
        let extractors = vec![Fixed::boxed("tag", vec![fixed])];
        let r = run(&lenient, &extractors, &Input::new(""), &tools(), None);
        assert_eq!(r.decision.kind(), "execute");
    }

    #[test]
    fn allowlist_gate_alone() {
        let r = run_default(
            "",
            vec![ok("tag", "get_wether", json!({"city": "A"}))],
            vec![],
            vec![],
        );
        assert_eq!(
            r.decision,
            reject(
                Gate::Allowlist,
                "candidate #0: tool `get_wether` is not allowlisted (did you mean `get_weather`?)"
            )
        );
        assert_eq!(r.label, Label::WrongTool);
    }

    #[test]
    fn schema_gate_alone_with_telemetry_reason() {
        let r = run_default(
            "",
            vec![ok("tag", "get_weather", json!({"city": "A", "days": "3"}))],
            vec![],
            vec![],
        );
        let Decision::Reject {
            gate,
            reason,
            reemit,
        } = &r.decision
        else {
            panic!("expected a rejection, got {:?}", r.decision)
        };
        assert_eq!((*gate, reemit), (Gate::Schema, &None));
        assert!(
            reason.starts_with("candidate #0: `get_weather`: wrong type at `/days`"),
            "{reason}"
        );
        assert_eq!(r.telemetry.schema_validation, SchemaValidation::Fail);
        assert_eq!(r.telemetry.schema_reason.as_deref(), Some(reason.as_str()));
        assert_eq!(r.label, Label::TypeCoercion);
    }

    #[test]
    fn expectation_never_gates_execution() {
        let extractors = vec![Fixed::boxed("tag", vec![weather("tag", "Ghent")])];
        let e = expect(&[(
            "get_weather",
            Some(json!({"properties": {"city": {"const": "Antwerp"}}})),
        )]);
        let r = run(
            &Profile::default(),
            &extractors,
            &Input::new(""),
            &tools(),
            Some(&e),
        );
        assert_eq!(r.decision.kind(), "execute");
        assert_eq!(r.label, Label::SchemaViolation);
    }

    #[test]
    fn gate_order_first_failure_is_reported() {
        // Fails intent, single, size, parse, allowlist and schema at once.
        let mut a = ok("json", "nope", json!({"x": 1}));
        a.raw = "x".repeat(5000);
        let b = failed("json", None, FailureKind::Malformed, "bad");
        let c = ok("json", "get_weather", json!({"days": "x"}));
        let all = vec![a, b, c];
        let order: Vec<Option<Gate>> = [
            ("{", all.clone()),
            ("CALL_TOOL", all.clone()),
            ("CALL_TOOL", vec![all[0].clone()]),
            ("CALL_TOOL", vec![all[1].clone()]),
            ("CALL_TOOL", vec![ok("json", "nope", json!({}))]),
            ("CALL_TOOL", vec![all[2].clone()]),
        ]
        .into_iter()
        .map(|(out, cands)| run_default(out, vec![], cands, vec![]).decision.gate())
        .collect();
        assert_eq!(
            order,
            Gate::ALL.iter().copied().map(Some).collect::<Vec<_>>()
        );
        let r = run_default("{", vec![], all, vec![]);
        let failed: Vec<Gate> = r
            .gates
            .iter()
            .filter(|g| !g.passed)
            .map(|g| g.gate)
            .collect();
        assert_eq!(failed, Gate::ALL);
    }

    #[test]
    fn repairs_in_telemetry_are_the_union() {
        let a = repaired(
            weather("tag", "A"),
            &[Repair::TrailingCommas, Repair::SingleQuotes],
        );
        let b = repaired(weather("tag", "B"), &[Repair::SingleQuotes]);
        let r = run_default("", vec![a, b], vec![], vec![]);
        assert_eq!(
            r.telemetry.repairs,
            vec![Repair::SingleQuotes, Repair::TrailingCommas]
        );
    }
}
