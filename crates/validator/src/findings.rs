//! Server findings (SPEC §5): what the serving stack did with the model's
//! output, kept apart from labels (labels describe the model).
//!
//! Findings compare the raw text — read in *the model's mode* — with the
//! server's native `tool_calls`, so most need a transcript that holds both.
//! Post-parse imports (Responses, Anthropic, OTel, FC-mode BFCL) have no raw
//! text: only `finish_reason_mismatch` applies to them.
//!
//! **The model's mode** is the mode of the profile that judges the
//! transcript when it reads the raw text (its primary mode, when that is not
//! `native` and finds a live candidate); otherwise the first text mode, in
//! engine order, whose live candidates all pass; otherwise the first text
//! mode with any live candidate. (When per-model `auto` profiles land, the
//! judging profile is the model's own, and the first rule covers it.)
//!
//! | finding | when |
//! |---|---|
//! | `markup_residue` | native calls present and the content still holds call markup (a text mode finds a live candidate in `output`) |
//! | `server_dropped` | the raw text holds a call that passes in the model's mode; native has none |
//! | `server_repaired` | native passes; the raw text's call (model's mode) is truncated, malformed or badly escaped |
//! | `count_mismatch` | native and raw call counts differ (both at least one) |
//! | `call_in_reasoning` | no native call and no live call in the text: the only call sits in reasoning |
//! | `finish_reason_mismatch` | `stop` or `length` with complete native calls (unless the request forced a named tool, where OpenAI answers `stop`), or `tool_calls` with none; never on a derived `finish_reason` |
//! | `empty_arguments` | a native `arguments: ""` for a tool without parameters whose raw call is complete: the server dropped the `{}`; `native` reads it as `{}` instead of labeling the model `truncation` |
//!
//! Two findings describe the capture itself rather than the server
//! ([`FindingKind::describes_capture`]); each applies to every row of the
//! transcript — every mode and the profile row:
//!
//! - `tools_unknown` (SPEC §4), on every transcript without a tool list (no
//!   `tools`, no request): its labels were decided without the tool
//!   definitions and nothing executes;
//! - `failed_generation` (issue 22), on every transcript whose importer
//!   noted that the capture is a server error carrying the model's text
//!   (Groq's `tool_use_failed` with `failed_generation`, typed note
//!   `failed_generation` in `import.notes`): the output is that text, and
//!   the empty `tool_calls` is the server's refusal, not a `no_call` answer.

use crate::mode_result::ModeResult;
use crate::profile::Profile;
use crate::stream::ChunkReplay;
use serde_json::Value;
use std::fmt;
use toolgate_core::{Candidate, Label, Source, ToolDef, Transcript};

/// What a finding says the server did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FindingKind {
    /// Native calls present and call markup still in `content`.
    MarkupResidue,
    /// The raw text holds a passing call; native has none.
    ServerDropped,
    /// Native passes; the raw text's call is truncated or malformed.
    ServerRepaired,
    /// Native and raw call counts differ.
    CountMismatch,
    /// The only call sits in reasoning.
    CallInReasoning,
    /// `finish_reason` disagrees with the native calls.
    FinishReasonMismatch,
    /// A native `arguments: ""` for a parameterless tool whose raw call is complete.
    EmptyArguments,
    /// The recorded `chunks`, replayed through the streaming pipeline, give
    /// another text or decision than the recorded `output`.
    StreamDivergence,
    /// The capture holds no tool list (SPEC §4): labels were decided
    /// without the tool definitions, and nothing executes.
    ToolsUnknown,
    /// The capture is a server error that carries the model's text
    /// (`failed_generation`): the output is that text, and the server
    /// returned no call because its parser failed on it.
    FailedGeneration,
}

impl FindingKind {
    /// Every kind, in report order.
    pub const ALL: [FindingKind; 10] = [
        FindingKind::MarkupResidue,
        FindingKind::ServerDropped,
        FindingKind::ServerRepaired,
        FindingKind::CountMismatch,
        FindingKind::CallInReasoning,
        FindingKind::FinishReasonMismatch,
        FindingKind::EmptyArguments,
        FindingKind::StreamDivergence,
        FindingKind::ToolsUnknown,
        FindingKind::FailedGeneration,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            FindingKind::MarkupResidue => "markup_residue",
            FindingKind::ServerDropped => "server_dropped",
            FindingKind::ServerRepaired => "server_repaired",
            FindingKind::CountMismatch => "count_mismatch",
            FindingKind::CallInReasoning => "call_in_reasoning",
            FindingKind::FinishReasonMismatch => "finish_reason_mismatch",
            FindingKind::EmptyArguments => "empty_arguments",
            FindingKind::StreamDivergence => "stream_divergence",
            FindingKind::ToolsUnknown => "tools_unknown",
            FindingKind::FailedGeneration => "failed_generation",
        }
    }

    /// Whether the finding describes the capture itself (what was recorded,
    /// and how) rather than what the serving stack did with the output.
    pub fn describes_capture(self) -> bool {
        matches!(
            self,
            FindingKind::ToolsUnknown | FindingKind::FailedGeneration
        )
    }
}

impl fmt::Display for FindingKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One server finding with the evidence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What.
    pub kind: FindingKind,
    /// Why, in words (untrusted names inside: sanitize before display).
    pub detail: String,
}

impl Finding {
    fn new(kind: FindingKind, detail: String) -> Finding {
        Finding { kind, detail }
    }
}

fn live(m: &ModeResult) -> impl Iterator<Item = &Candidate> {
    m.candidates.iter().filter(|c| c.is_live())
}

/// Whether the transcript still holds the model's raw text.
pub fn has_raw_text(t: &Transcript) -> bool {
    t.has_raw_text()
        && (!t.output.is_empty() || t.reasoning.as_deref().is_some_and(|r| !r.is_empty()))
}

/// The mode that reads the model's raw text (see the module docs).
pub fn model_mode<'a>(profile: &Profile, strict: &'a [ModeResult]) -> Option<&'a ModeResult> {
    let text = || strict.iter().filter(|m| m.mode != "native");
    if profile.primary != "native"
        && let Some(m) = text().find(|m| m.mode == profile.primary && live(m).next().is_some())
    {
        return Some(m);
    }
    text()
        .find(|m| m.label == Label::Pass && live(m).next().is_some())
        .or_else(|| text().find(|m| live(m).next().is_some()))
}

/// Whether a tool takes no parameters: no schema, or an object schema
/// that declares no property and requires none.
fn takes_no_parameters(tool: Option<&ToolDef>) -> bool {
    let Some(tool) = tool else { return false };
    match &tool.parameters {
        None => true,
        Some(Value::Object(s)) => {
            let no_props = s
                .get("properties")
                .is_none_or(|p| p.as_object().is_some_and(|p| p.is_empty()));
            let no_required = s
                .get("required")
                .is_none_or(|r| r.as_array().is_some_and(|r| r.is_empty()));
            no_props && no_required
        }
        Some(_) => false,
    }
}

/// The native candidates (indices into the native mode's candidates) whose
/// `arguments` is empty although their tool takes no parameters and the
/// model's raw call to it is complete, with the finding.
pub fn empty_native_arguments(
    t: &Transcript,
    profile: &Profile,
    strict: &[ModeResult],
) -> Option<(Vec<usize>, Finding)> {
    if !has_raw_text(t) {
        return None;
    }
    let native = strict.iter().find(|m| m.mode == "native")?;
    let model = model_mode(profile, strict)?;
    let mut fixed = Vec::new();
    let mut names = Vec::new();
    for (i, c) in native.candidates.iter().enumerate() {
        let empty = c.raw.trim().is_empty()
            && c.failure()
                .is_some_and(|f| f.kind == toolgate_core::FailureKind::Truncated);
        let Some(name) = c.name.as_deref().filter(|_| empty) else {
            continue;
        };
        let complete_raw = live(model).any(|m| m.call().is_some_and(|call| call.name == name));
        if complete_raw && takes_no_parameters(t.tool(name)) {
            fixed.push(i);
            names.push(name.to_string());
        }
    }
    if fixed.is_empty() {
        return None;
    }
    let detail = format!(
        "native `arguments` is empty for `{}`, a tool without parameters whose raw call in mode `{}` is complete: the server dropped the `{{}}`, read as `{{}}`",
        names.join("`, `"),
        model.mode
    );
    Some((fixed, Finding::new(FindingKind::EmptyArguments, detail)))
}

/// `tools_unknown`: the transcript has no tool list (SPEC §4).
pub fn tools_unknown(t: &Transcript) -> Option<Finding> {
    t.tools_unknown().then(tools_unknown_finding)
}

/// The `tools_unknown` finding, whatever has no tool list (a transcript, a
/// `parse` without `--tools`).
pub fn tools_unknown_finding() -> Finding {
    Finding::new(
        FindingKind::ToolsUnknown,
        "the transcript has no `tools` (the request's tool list was not captured): \
         labels were decided without the tool definitions (wrong_tool only from `expect`, \
         schema labels only from its argument schemas) and nothing is allowlisted, so \
         every call is rejected at `allowlist`"
            .to_string(),
    )
}

/// `failed_generation`: the importer noted that the capture is a server
/// error carrying the model's text (typed note `failed_generation`); the
/// detail is the note's.
pub fn failed_generation(t: &Transcript) -> Option<Finding> {
    let detail = t
        .origin
        .as_ref()?
        .note(toolgate_core::import::NoteKind::FailedGeneration)?;
    let detail = if detail.is_empty() {
        "the server answered with an error carrying the model's text (`failed_generation`)"
            .to_string()
    } else {
        detail.to_string()
    };
    Some(Finding::new(
        FindingKind::FailedGeneration,
        format!(
            "{detail} (the native mode's `no_call` is the server's failure to parse, not the model's answer; the text modes judge what the model wrote)"
        ),
    ))
}

/// The findings that describe the capture ([`FindingKind::describes_capture`]):
/// one rule for the full replay and the batch fast path.
pub fn capture_findings(t: &Transcript) -> impl Iterator<Item = Finding> {
    tools_unknown(t).into_iter().chain(failed_generation(t))
}

/// `stream_divergence`: the transcript's `chunks` replayed through the
/// streaming pipeline ([`crate::stream::replay_chunks_as`], judged by the
/// judging profile; `None`: no chunks were recorded) disagree with the
/// batch run on its recorded `output`; the detail names the byte where the
/// texts part.
pub fn stream_divergence(chunks: Option<ChunkReplay>) -> Option<Finding> {
    let detail = chunks?.divergence?;
    Some(Finding::new(FindingKind::StreamDivergence, detail))
}

/// Every finding for one transcript, from its strict mode results (after
/// the empty-arguments reading) and the judging profile.
pub fn findings(t: &Transcript, profile: &Profile, strict: &[ModeResult]) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some(native) = strict.iter().find(|m| m.mode == "native") else {
        return out;
    };
    let native_live: Vec<&Candidate> = live(native).collect();
    let native_n = native_live.len();
    let origin = t.origin.as_ref();

    if has_raw_text(t) {
        let model = model_mode(profile, strict);
        if let Some(m) = model {
            let raw: Vec<&Candidate> = live(m).collect();
            let in_content = raw.iter().filter(|c| c.source == Source::Output).count();
            if native_n > 0 && in_content > 0 {
                out.push(Finding::new(
                    FindingKind::MarkupResidue,
                    format!(
                        "the server returned {native_n} native call(s) and the content still holds {in_content} call(s) in mode `{}`",
                        m.mode
                    ),
                ));
            }
            if native_n == 0 && m.label == Label::Pass {
                out.push(Finding::new(
                    FindingKind::ServerDropped,
                    format!(
                        "the raw text holds {} call(s) that pass in mode `{}`; the server returned no native call",
                        raw.len(),
                        m.mode
                    ),
                ));
            }
            if native.label == Label::Pass
                && native_n > 0
                && let Some(f) = raw.iter().find_map(|c| c.failure())
            {
                out.push(Finding::new(
                    FindingKind::ServerRepaired,
                    format!(
                        "native passes; the raw call in mode `{}` is {} ({})",
                        m.mode, f.kind, f.message
                    ),
                ));
            }
            if native_n > 0 && !raw.is_empty() && native_n != raw.len() {
                out.push(Finding::new(
                    FindingKind::CountMismatch,
                    format!(
                        "{native_n} native call(s), {} in the raw text (mode `{}`)",
                        raw.len(),
                        m.mode
                    ),
                ));
            }
        } else if native_n == 0
            && let Some(m) = strict
                .iter()
                .filter(|m| m.mode != "native")
                .find(|m| m.candidates.iter().any(|c| c.source.is_reasoning()))
        {
            out.push(Finding::new(
                FindingKind::CallInReasoning,
                format!(
                    "no native call and no call in the content: the only call sits in reasoning (mode `{}`)",
                    m.mode
                ),
            ));
        }
    }

    if !origin.is_some_and(|o| o.finish_reason_derived)
        && let Some(reason) = t.finish_reason.as_deref()
    {
        let complete = native_n > 0 && native_live.iter().all(|c| c.call().is_some());
        let mismatch = match reason {
            "stop" if complete && !origin.is_some_and(|o| o.forced_tool) => Some(format!(
                "`finish_reason` is `stop` with {native_n} complete native call(s)"
            )),
            "length" if complete => Some(format!(
                "`finish_reason` is `length` with {native_n} complete native call(s)"
            )),
            "tool_calls" if native_n == 0 => {
                Some("`finish_reason` is `tool_calls` with no native call".to_string())
            }
            _ => None,
        };
        if let Some(detail) = mismatch {
            out.push(Finding::new(FindingKind::FinishReasonMismatch, detail));
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::engine::Engine;
    use std::path::Path;

    const TOOLS: &str = r#"[{"type": "function", "function": {"name": "f",
        "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}]"#;

    fn kinds(extra: &str) -> Vec<FindingKind> {
        let text = format!(r#"{{"tools": {TOOLS}, {extra}}}"#);
        let t =
            toolgate_core::load::parse_transcript(&text, Path::new("t.json"), None, "t").unwrap();
        Engine::new(Profile::default())
            .replay(&t)
            .findings
            .into_iter()
            .map(|f| f.kind)
            .collect()
    }

    const NATIVE: &str = r#""tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]"#;

    #[test]
    fn finish_reason_stop_is_fine_when_the_request_forced_the_tool() {
        let base = format!(r#""output": "", {NATIVE}, "finish_reason": "stop""#);
        assert_eq!(kinds(&base), [FindingKind::FinishReasonMismatch]);
        let forced = format!(r#"{base}, "import": {{"forced_tool": true}}"#);
        assert_eq!(kinds(&forced), []);
        let derived = format!(r#"{base}, "import": {{"finish_reason_derived": true}}"#);
        assert_eq!(kinds(&derived), []);
    }

    #[test]
    fn finish_reason_tool_calls_without_a_call() {
        assert_eq!(
            kinds(r#""output": "Hello", "tool_calls": [], "finish_reason": "tool_calls""#),
            [FindingKind::FinishReasonMismatch]
        );
        // A truncated native call is not a complete one: `length` is honest.
        assert_eq!(
            kinds(
                r#""output": "", "tool_calls": [{"function": {"name": "f", "arguments": "{\"a\": "}}], "finish_reason": "length""#
            ),
            []
        );
    }

    #[test]
    fn no_native_key_no_findings() {
        let hermes = r#""output": "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>", "finish_reason": "stop""#;
        assert_eq!(kinds(hermes), []);
    }

    #[test]
    fn post_parse_imports_have_no_raw_text_findings() {
        // Raw-looking text in a Responses `output_text` is the provider's
        // message text, not the model's raw output.
        let text = r#""output": "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>", "tool_calls": [], "import": {"raw_text": false}"#;
        assert_eq!(kinds(text), []);
    }

    #[test]
    fn empty_arguments_need_a_parameterless_tool() {
        // `f` requires `a`: an empty native `arguments` stays the model's truncation.
        let text = r#""output": "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>", "tool_calls": [{"function": {"name": "f", "arguments": ""}}]"#;
        assert_eq!(kinds(text), [FindingKind::MarkupResidue]);
    }
}
