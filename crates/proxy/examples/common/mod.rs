//! What the proxy's load examples (`load`, `passthrough`) share: the mock
//! upstream's transcripts, the request they send, the proxy's configuration
//! and the environment knobs.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Duration;
use toolgate_core::load::from_object;
use toolgate_proxy::Background;
use toolgate_proxy::gateway::{Engines, Mode, ProxyConfig};
use toolgate_proxy::mock::{self, Mock, MockOptions};
use toolgate_validator::{Engine, Profile};

/// A hermes tool call of `get_weather`, the mock's answer to the task `call`.
const CALL: &str =
    r#"<tool_call>{"name": "get_weather", "arguments": {"city": "Antwerp"}}</tool_call>"#;

/// The number in the environment variable `key`, else `default`.
pub fn env_usize(key: &str, default: usize) -> usize {
    std::env::var(key)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The mock upstream's answers: the task `call` a tool call, `prose` prose.
pub fn transcripts() -> Vec<toolgate_core::Transcript> {
    let prose = "The weather in Antwerp is mild today, around twelve degrees, with a light breeze from the west. ".repeat(5);
    [("call", CALL.to_string()), ("prose", prose)]
        .into_iter()
        .map(|(task, out)| {
            let obj = json!({"model": "m", "task": task, "output": out, "finish_reason": "stop"});
            let Value::Object(obj) = obj else {
                unreachable!()
            };
            from_object(obj, std::path::Path::new(task), None, task.into()).unwrap()
        })
        .collect()
}

/// The chat-completions request body for `task`, offering `get_weather`.
pub fn request_body(task: &str, stream: bool) -> Value {
    json!({"model": "m", "stream": stream, "messages": [{"role": "user", "content": task}],
           "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {
               "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]})
}

/// The proxy in `mode` (profile `hermes`) in front of `upstream`, recording
/// into `record` when given.
pub fn proxy_cfg(upstream: String, mode: Mode, record: Option<PathBuf>) -> ProxyConfig {
    let mut cfg = ProxyConfig::new(upstream);
    cfg.mode = mode;
    cfg.engines = Engines::fixed(Engine::new(Profile::builtin("hermes").unwrap()));
    cfg.record = record;
    cfg.timeout = Duration::from_secs(30);
    cfg
}

/// The mock upstream answering with [`transcripts`], streaming
/// `delta_chars` characters per delta every `delta_delay`.
pub fn paced_mock(delta_chars: usize, delta_delay: Duration) -> Background {
    mock::spawn(Mock::from_transcripts(
        &transcripts(),
        MockOptions {
            delta_chars,
            delta_delay,
            ..MockOptions::default()
        },
    ))
    .unwrap()
}
