//! toolgate in front of a model: compile the tools once, then decide every
//! model output. Run with `cargo run --example gateway`.
//!
//! Only `Decision::Execute` carries calls, and only calls that the profile's
//! format produced, that parsed without repairs, that name an allowlisted
//! tool and that pass its schema strictly. Everything else is a `no_call` or
//! a `reject` with the failing gate and, for several fallback candidates, a
//! message to send back asking the model to re-emit in the primary format.

use serde_json::json;
use toolgate_core::{Decision, ToolDef};
use toolgate_formats::{Input, ParamTypes, builtin};
use toolgate_validator::{Profile, Toolset, pipeline};

fn main() {
    let tools = vec![ToolDef {
        name: "get_weather".into(),
        description: Some("Weather forecast for a city".into()),
        parameters: Some(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
            "additionalProperties": false
        })),
    }];
    // Once per tool list: compiled schemas and parameter types.
    let toolset = Toolset::new(&tools);
    let types = ParamTypes::from_tools(&tools);
    // Once per process: the extractors and the profile.
    let extractors = builtin();
    let profile = Profile::builtin("hermes").unwrap_or_default();

    let outputs = [
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\", \"days\": 2}}\n</tool_call>",
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Antwerp\", \"days\": \"2\"}}\n</tool_call>",
        "<think>I could call <tool_call>{\"name\": \"get_weather\"}</tool_call></think>It is sunny.",
        "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Ant",
    ];
    for output in outputs {
        let mut input = Input::new(output);
        input.param_types = Some(&types);
        let result = pipeline::run(&profile, &extractors, &input, &toolset, None);
        match &result.decision {
            Decision::Execute { calls } => {
                for call in calls {
                    println!("execute {}", call.to_json());
                }
            }
            Decision::NoCall => println!("no call: answer the user with the text"),
            Decision::Reject { gate, reason, .. } => {
                println!("reject at {gate} ({}): {reason}", result.label)
            }
        }
        // One telemetry record per output; fill tool_result_status after running the tool.
        println!("  telemetry {}", result.telemetry.to_json_line());
    }
}
