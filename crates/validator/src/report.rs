//! The JSON records of `toolgate parse` and `parse --stream`, built from a
//! pipeline result. The binary prints them and the Python package returns
//! them; both call these functions, so the two cannot drift apart.

use serde_json::{Value, json};
use toolgate_core::Decision;
use toolgate_core::jsonout::versioned;
use toolgate_formats::{START_SEGMENT, openers, start_rule};

use crate::auto::Source;
use crate::engine::Engine;
use crate::pipeline::PipelineResult;

/// What `toolgate parse` prints for a pipeline result: with a model's
/// `source`, the profile (`profile`, by name) and why it was chosen;
/// `schema_version` last.
pub fn parse_report(result: &PipelineResult, profile: &str, source: Option<&Source>) -> Value {
    let (reason, reemit) = match &result.decision {
        Decision::Reject { reason, reemit, .. } => (Some(reason.clone()), reemit.clone()),
        _ => (None, None),
    };
    let calls: Vec<Value> = result
        .decision
        .calls()
        .iter()
        .map(|c| c.to_json())
        .collect();
    // Telemetry is plain data (strings, numbers, lists of names): it
    // always serializes.
    let telemetry = serde_json::to_value(&result.telemetry).unwrap_or(Value::Null);
    let mut report = json!({
        "decision": result.decision.kind(),
        "gate": result.decision.gate().map(|g| g.as_str()),
        "reason": reason,
        "reemit": reemit,
        "calls": calls,
        "label": result.label.as_str(),
        "telemetry": telemetry,
    });
    if let (Some(source), Some(obj)) = (source, report.as_object_mut()) {
        obj.insert(
            "profile".into(),
            json!({"name": profile, "source": source.kind(),
                   "source_detail": source.to_string()}),
        );
    }
    versioned(report)
}

/// A [`parse_report`] of an output judged with its tool list unknown
/// ([`crate::Engine::judge_output_unknown`]): with the `findings` a `label`
/// record carries for a transcript without `tools`.
pub fn with_tools_unknown(report: Value) -> Value {
    match report {
        Value::Object(mut map) => {
            let f = crate::findings::tools_unknown_finding();
            map.insert(
                "findings".into(),
                json!([{"kind": f.kind.as_str(), "detail": f.detail}]),
            );
            versioned(Value::Object(map))
        }
        other => other,
    }
}

/// The `open` event of `parse --stream`: where the first opener token is,
/// and the profile's modes it can begin a call of (for functionary's v3.2
/// first segment, the pseudo-token `NAME\n{` at offset 0). The name is not
/// known yet: it is judged only once the call is closed.
pub fn open_event(engine: &Engine, offset: usize, token: &str) -> Value {
    let modes: Vec<&str> = engine
        .profile
        .modes()
        .filter(|m| {
            // The mode's extractor's openers (a declared format's own),
            // else the built-in row's.
            let of_mode = match engine.extractors.iter().find(|e| e.name() == *m) {
                Some(e) => e.openers(),
                None => openers(m),
            };
            of_mode.is_some_and(|t| t.contains(&token))
                || (token == START_SEGMENT && start_rule(m).is_some())
        })
        .collect();
    json!({"event": "open", "offset": offset, "token": token, "modes": modes})
}

/// The `call` events of `parse --stream`, one per selected candidate.
pub fn call_events(result: &PipelineResult) -> Vec<Value> {
    result
        .candidates
        .iter()
        .map(|c| {
            json!({
                "event": "call",
                "mode": c.mode,
                "name": c.name,
                "source": c.source,
                "span": [c.span.start, c.span.end],
            })
        })
        .collect()
}
