//! Detection driven as a library over a collected batch.
#![allow(clippy::unwrap_used)]

use serde_json::json;
use toolgate_batch::BatchOptions;
use toolgate_core::load::LoadOptions;
use toolgate_matrix::detect::{self, GroupBy};
use toolgate_validator::{Auto, Engine, Profile};

fn hermes(city: &str) -> String {
    format!(
        "<tool_call>{{\"name\": \"get_weather\", \"arguments\": {{\"city\": \"{city}\"}}}}</tool_call>"
    )
}

#[test]
fn groups_name_each_models_best_mode_and_its_leaked_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let tools = json!([{"type": "function", "function": {"name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let mut text = String::new();
    for (id, model, output) in [
        ("a1", Some("acme-1"), hermes("Antwerp")),
        ("a2", Some("acme-1"), hermes("Ghent")),
        // Tool syntax no mode reads: leaked.
        ("a3", Some("acme-1"), "TOOL_CALL: get_weather".to_string()),
        // The same markup inside reasoning is not.
        (
            "a4",
            Some("acme-1"),
            "<think>TOOL_CALL: get_weather</think>ok".to_string(),
        ),
        ("n1", None, "plain prose".to_string()),
    ] {
        let line = json!({"id": id, "model": model, "tools": tools, "output": output});
        text.push_str(&format!("{line}\n"));
    }
    let path = dir.path().join("d.jsonl");
    std::fs::write(&path, text).unwrap();
    let engine = Engine::new(Profile::default());
    let once = Auto::given(engine.profile.clone());
    let opts = BatchOptions {
        load: LoadOptions::default(),
        workers: 2,
    };
    let entries = toolgate_batch::collect(
        &engine,
        &once,
        std::slice::from_ref(&path),
        &opts,
        |t, outcome, _| detect::seen(t, outcome),
    );
    let groups = detect::groups(&entries, GroupBy::Model);
    let keys: Vec<&(bool, String)> = groups.keys().collect();
    assert_eq!(
        keys,
        [
            &(false, "acme-1".to_string()),
            &(true, path.display().to_string())
        ]
    );
    let acme = &groups[&(false, "acme-1".to_string())];
    assert_eq!(acme.n, 4);
    assert_eq!(acme.leaked, 1);
    assert_eq!(acme.best_mode(), Some(("hermes", 2)));
    assert_eq!(acme.stats("hermes").found, 2);
    let record = detect::group_json(false, "acme-1", acme, &Auto::default());
    assert_eq!(record["best_mode"], "hermes");
    assert_eq!(record["n"], 4);
    assert_eq!(record["leaked"], 1);
    assert_eq!(record["modes"]["hermes"]["passes"], 2);
    let by_file = detect::groups(&entries, GroupBy::File);
    assert_eq!(by_file.len(), 1);
    assert_eq!(by_file.values().next().unwrap().n, 5);
}
