//! The JSON the `toolgate` binary prints, built from the library's results:
//! `toolgate parse` (and the events of `parse --stream`) and the records of
//! `toolgate label --format json|jsonl`. Keys are in the binary's order and
//! every record ends with `schema_version`; the Python tests compare these
//! with the binary's output on every bundled transcript.

use crate::jsontext::SCHEMA_VERSION;
use serde_json::{Map, Value, json};
use toolgate_core::{Decision, Transcript};
use toolgate_formats::openers::{START_SEGMENT, openers, start_rule};
use toolgate_validator::auto::Source;
use toolgate_validator::{Chosen, Engine, Outcome, PipelineResult};

/// `value` with `schema_version` as its last key.
pub(crate) fn versioned(mut value: Value) -> Value {
    if let Some(map) = value.as_object_mut() {
        // Moved to the end when it is already there.
        map.shift_remove("schema_version");
        map.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
    }
    value
}

/// What `toolgate parse` prints for a pipeline result; with a model, the
/// profile chosen for it and why.
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

/// The `open` event of `parse --stream`.
pub fn open_event(engine: &Engine, offset: usize, token: &str) -> Value {
    let modes: Vec<&str> = engine
        .profile
        .modes()
        .filter(|m| {
            openers(m).is_some_and(|t| t.contains(&token))
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

/// The stored `labels` member of a transcript, when it is an object (as
/// the binary reads it).
fn stored(t: &Transcript) -> Option<&Map<String, Value>> {
    t.stored_labels.as_ref()?;
    t.raw.get("labels").and_then(Value::as_object)
}

/// The record of `toolgate label --format jsonl` for one replayed
/// transcript.
pub fn label_record(t: &Transcript, outcome: &Outcome<'_>, chosen: &Chosen) -> Value {
    let p = &outcome.profile;
    let mut labels = Map::with_capacity(outcome.strict.len());
    for m in &outcome.strict {
        labels.insert(m.mode.to_string(), Value::from(m.label.as_str()));
    }
    // The lenient labels under the strict modes' names, in their order.
    let mut lenient = Map::with_capacity(outcome.lenient.len());
    for (m, l) in outcome.strict.iter().zip(&outcome.lenient) {
        lenient.insert(m.mode.to_string(), Value::from(l.label.as_str()));
    }
    let calls: Vec<Value> = p.decision.calls().iter().map(|c| c.to_json()).collect();
    let findings: Vec<Value> = outcome
        .findings
        .iter()
        .map(|f| json!({"kind": f.kind.as_str(), "detail": f.detail}))
        .collect();
    let path = match t.path.to_str() {
        Some(path) => path.to_string(),
        None => t.path.display().to_string(),
    };
    json!({
        "path": path,
        "id": t.id,
        "model": t.model,
        "task": t.task,
        "labels": labels,
        "lenient": lenient,
        "profile": {
            "name": p.profile,
            "parse_mode": p.parse_mode.as_deref().unwrap_or("none"),
            "fallback_used": p.telemetry.fallback_used,
            "candidate_count": p.telemetry.candidate_count,
            "decision": p.decision.kind(),
            "gate": p.decision.gate().map(|g| g.as_str()),
            "label": p.label.as_str(),
            "calls": calls,
            "source": chosen.source.kind(),
            "source_detail": chosen.source.to_string(),
        },
        "stored": stored(t).cloned().map(Value::Object).unwrap_or(Value::Null),
        "findings": findings,
        "schema_version": SCHEMA_VERSION,
    })
}

/// The record of an unreadable file or JSONL line.
pub fn error_record(e: &toolgate_core::LoadError) -> Value {
    let reason = match e.line {
        Some(line) => format!("line {line}: {}", e.reason),
        None => e.reason.clone(),
    };
    versioned(json!({"path": e.path.display().to_string(), "error": reason}))
}
