//! The matrix's cells and routing metadata from a collected batch, without
//! the binary.
#![allow(clippy::unwrap_used)]

use serde_json::json;
use toolgate_batch::BatchOptions;
use toolgate_core::load::LoadOptions;
use toolgate_matrix::{Key, aggregate, inconclusive, routing_table, summarize, wilson};
use toolgate_validator::{Auto, Engine, Profile};

#[test]
fn cells_count_passes_per_model_and_task_and_routing_names_the_failure() {
    let dir = tempfile::tempdir().unwrap();
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let call = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\"}}</tool_call>";
    let broken = "<tool_call>{\"name\": \"get_weather\", \"arguments\": {\"city\": </tool_call>";
    let mut text = String::new();
    for (i, (model, output)) in [
        ("m1", call),
        ("m1", call),
        ("m1", call),
        ("m1", broken),
        ("m2", broken),
    ]
    .into_iter()
    .enumerate()
    {
        let line = json!({"id": format!("t{i}"), "model": model, "task": "weather",
                          "tools": tools, "output": output});
        text.push_str(&format!("{line}\n"));
    }
    let path = dir.path().join("m.jsonl");
    std::fs::write(&path, text).unwrap();
    let engine = Engine::new(Profile::reading("hermes"));
    let auto = Auto::given(Profile::reading("hermes"));
    let opts = BatchOptions {
        load: LoadOptions::default(),
        workers: 2,
    };
    let entries = toolgate_batch::collect(
        &engine,
        &auto,
        std::slice::from_ref(&path),
        &opts,
        |_, outcome, chosen| summarize(outcome, chosen, false),
    );
    let by = [Key::Model, Key::Task];
    let cells = aggregate(&by, &entries);
    let m1 = &cells[&vec!["m1".to_string(), "weather".to_string()]];
    assert_eq!((m1.passes(), m1.n()), (3, 4));
    assert_eq!(m1.profile().0, "hermes");
    let (low, high) = wilson(m1.passes(), m1.n());
    assert!(inconclusive(low, high), "3/4 spans fine and broken");
    let m2 = &cells[&vec!["m2".to_string(), "weather".to_string()]];
    assert_eq!((m2.passes(), m2.n()), (0, 1));
    let failure = *m2.labels.keys().next().unwrap();
    assert_ne!(failure, toolgate_core::Label::Pass);
    let routing = routing_table(&entries);
    let m2_all = routing
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["model"] == "m2" && r["tag"] == "*")
        .unwrap();
    assert_eq!(m2_all["dominant_failure"], failure.as_str());
}
