//! The records of `toolgate label --format json|jsonl`, built from the
//! library's results (`toolgate parse`'s report and the events of `parse
//! --stream` come from `toolgate_validator::report`, shared with the binary). Keys are in the binary's order and
//! every record ends with `schema_version`; the Python tests compare these
//! with the binary's output on every bundled transcript.

use serde_json::{Map, Value, json};
use toolgate_core::Transcript;
use toolgate_core::jsonout::{SCHEMA_VERSION, versioned};
use toolgate_validator::{Chosen, Outcome};

/// The stored `labels` member of a transcript, when it is an object (as
/// the binary reads it), in file order.
fn stored(t: &Transcript) -> Option<Map<String, Value>> {
    let stored = t.stored_labels.as_ref()?;
    Some(
        stored
            .in_file_order()
            .map(|(m, l)| (m.clone(), Value::from(l.as_str())))
            .collect(),
    )
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
        "stored": stored(t).map(Value::Object).unwrap_or(Value::Null),
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
