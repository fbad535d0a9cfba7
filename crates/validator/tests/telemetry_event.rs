//! `pipeline::run` emits the telemetry record as a `tracing` event with
//! target `toolgate::telemetry`.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

type Captured = Arc<Mutex<Vec<(String, BTreeMap<String, String>)>>>;

/// Records every event's target and fields.
struct Capture(Captured);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0
            .insert(field.name().to_string(), format!("{value:?}"));
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_string(), value.to_string());
    }
}

impl Subscriber for Capture {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1)
    }
    fn record(&self, _: &Id, _: &Record<'_>) {}
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        self.0
            .lock()
            .unwrap()
            .push((event.metadata().target().to_string(), fields));
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}

#[test]
fn run_emits_one_event_with_the_telemetry_fields() {
    let captured: Captured = Arc::default();
    let tools = [toolgate_core::ToolDef {
        name: "get_weather".into(),
        description: None,
        parameters: Some(serde_json::json!({
            "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]
        })),
    }];
    let engine = toolgate_validator::Engine::new(toolgate_validator::Profile::default());
    tracing::subscriber::with_default(Capture(captured.clone()), || {
        engine.parse_output(
            "<tool name=\"get_weather\">{\"city\": 7}</tool>",
            &tools,
            None,
        );
    });
    let events = captured.lock().unwrap();
    let ours: Vec<_> = events
        .iter()
        .filter(|(target, _)| target == "toolgate::telemetry")
        .collect();
    assert_eq!(ours.len(), 1);
    let f = &ours[0].1;
    assert_eq!(f["parse_mode"], "primary");
    assert_eq!(f["fallback_used"], "false");
    assert_eq!(f["candidate_count"], "1");
    assert_eq!(f["schema_validation"], "fail");
    assert!(
        f["schema_reason"].contains("/city"),
        "{}",
        f["schema_reason"]
    );
    assert_eq!(f["gate"], "schema");
    assert_eq!(f["decision"], "reject");
    assert_eq!(f["repairs"], "");
    assert_eq!(f["label"], "type_coercion");
}

/// Issue 9 item 14: a model-chosen key carrying C1 and bidi controls reached
/// stderr raw through the telemetry event's `schema_reason`.
#[test]
fn telemetry_text_fields_carry_no_raw_control_or_bidi_characters() {
    let captured: Captured = Arc::default();
    let tools = [toolgate_core::ToolDef {
        name: "get_weather".into(),
        description: None,
        parameters: Some(serde_json::json!({
            "type": "object", "properties": {"city": {"type": "string"}}
        })),
    }];
    let engine = toolgate_validator::Engine::new(toolgate_validator::Profile::default());
    let output = "<tool name=\"get_weather\">{\"city\": \"A\", \"x\\u009b31m\\u202eevil\\u001b[2J\": 1}</tool>";
    tracing::subscriber::with_default(Capture(captured.clone()), || {
        engine.parse_output(output, &tools, None);
    });
    let events = captured.lock().unwrap();
    let f = &events
        .iter()
        .find(|(target, _)| target == "toolgate::telemetry")
        .unwrap()
        .1;
    assert_eq!(f["label"], "hallucinated_param");
    let reason = &f["schema_reason"];
    assert!(reason.contains("\\x9b31m\\u{202e}evil\\x1b[2J"), "{reason}");
    for (name, value) in f.iter() {
        assert!(
            !value.chars().any(toolgate_core::sanitize::is_unsafe),
            "{name}: {value:?}"
        );
    }
}
