//! A proxy exchange as a chat span: the answer the client got (the served
//! attempt), the proxy's verdict on it, and how the exchange went.
//!
//! Beyond [`crate::span`]'s attributes: `toolgate.mode`, `toolgate.stream`,
//! `toolgate.attempts`, `toolgate.task` (the `x-toolgate-task` header),
//! `toolgate.client_disconnected` and `http.response.status_code` (the
//! upstream's). The tool definitions come from the request as the recorder
//! writes it: `api_key` dropped and every `--redact` pointer applied.

use crate::span::{Finished, Verdict};
use crate::{Job, Traces};
use opentelemetry::KeyValue;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use toolgate_proxy::ExchangeHook;
use toolgate_proxy::gateway::{Attempt, Exchange, REDACTED};

/// Model → why its profile was chosen (`given`, `configured`, `by name`,
/// `default`).
pub type ProfileSource = Arc<dyn Fn(Option<&str>) -> String + Send + Sync>;

/// What the proxy's command knows that an exchange does not.
#[derive(Clone, Default)]
pub struct Context {
    /// Why each model's profile was chosen.
    pub profile_source: Option<ProfileSource>,
    /// The `--redact` JSON pointers.
    pub redact: Vec<String>,
    /// The upstream's base URL (`server.address`, `server.port`).
    pub upstream: Option<String>,
}

impl Traces {
    /// The proxy's hook: each finished exchange becomes a chat span.
    ///
    /// The hook reduces the exchange to its span's data right away (content
    /// only with capture on) and queues that, never the whole exchange.
    pub fn exchange_hook(&self, cx: Context) -> ExchangeHook {
        let me = self.clone();
        ExchangeHook::new(move |ex: &Exchange| {
            let f = finished(ex, &cx, me.capture());
            let bytes = f.approx_size();
            me.submit(Job::Finished(Box::new(f)), bytes);
        })
    }
}

fn served(ex: &Exchange) -> Option<&Attempt> {
    ex.attempts
        .iter()
        .find(|a| a.served)
        .or_else(|| ex.attempts.last())
}

fn request_tools(a: &Attempt, redact: &[String]) -> Option<Value> {
    let mut r = Value::clone(&a.request);
    if let Value::Object(m) = &mut r {
        m.remove("api_key");
    }
    for pointer in redact {
        if let Some(v) = r.pointer_mut(pointer) {
            *v = Value::String(REDACTED.into());
        }
    }
    r.get("tools").filter(|t| t.is_array()).cloned()
}

fn failure(ex: &Exchange, a: Option<&Attempt>) -> Option<String> {
    if let Some(a) = a
        && let Some(e) = &a.error
    {
        return Some(if a.status >= 400 {
            a.status.to_string()
        } else if e.starts_with("timeout") {
            "timeout".into()
        } else {
            "upstream_error".into()
        });
    }
    ex.client_disconnected
        .then(|| "client_disconnected".to_string())
}

fn verdict(judged: &Value, model: Option<&str>, cx: &Context) -> Verdict {
    let s = |k: &str| judged.get(k).and_then(Value::as_str).map(str::to_string);
    Verdict {
        decision: s("decision").unwrap_or_default(),
        label: s("label").unwrap_or_default(),
        gate: s("gate"),
        profile: s("profile").unwrap_or_default(),
        profile_source: cx.profile_source.as_ref().map(|f| f(model)),
        parse_mode: judged
            .pointer("/pipeline/parse_mode")
            .and_then(Value::as_str)
            .map(str::to_string),
    }
}

/// The exchange as a finished chat; its content (output, reasoning, calls,
/// tool definitions) only with `content`.
pub fn finished(ex: &Exchange, cx: &Context, content: bool) -> Finished {
    let total = Duration::from_secs_f64((ex.total_ms.max(0.0) / 1000.0).min(1e9));
    let start = match ex.attempts.first() {
        Some(a) if a.started_unix_ms > 0 => UNIX_EPOCH + Duration::from_millis(a.started_unix_ms),
        _ => SystemTime::now()
            .checked_sub(total)
            .unwrap_or_else(SystemTime::now),
    };
    let mut f = Finished::new(start, start + total);
    let a = served(ex);
    f.request_model = ex.model.clone();
    if let Some(a) = a {
        f.response = a.response.as_ref().map(crate::span::slim_response);
        f.finish_reason = a.finish_reason.clone();
        if content {
            f.output = a.output.clone();
            f.reasoning = a.reasoning.clone();
            f.tool_calls = a.tool_calls.clone().unwrap_or_default();
            f.tools = request_tools(a, &cx.redact);
        }
        f.extra.extend(crate::span::request_attributes(&a.request));
        f.verdict = a
            .judged
            .as_ref()
            .map(|j| verdict(j, ex.model.as_deref(), cx));
        if a.status > 0 {
            f.extra.push(KeyValue::new(
                "http.response.status_code",
                i64::from(a.status),
            ));
        }
    }
    if content && f.tools.is_none() {
        f.tools = ex
            .tools
            .clone()
            .filter(|t| t.is_array() && cx.redact.is_empty());
    }
    if ex.stream {
        f.time_to_first_chunk = ex.first_byte_ms.map(|ms| ms / 1000.0);
    }
    f.failure = failure(ex, a);
    if let Some(u) = &cx.upstream {
        f.extra.extend(crate::span::server_attributes(u));
    }
    f.extra.push(KeyValue::new("toolgate.mode", ex.mode));
    f.extra.push(KeyValue::new("toolgate.stream", ex.stream));
    f.extra
        .push(KeyValue::new("toolgate.attempts", ex.attempts.len() as i64));
    if let Some(t) = &ex.task {
        f.extra
            .push(KeyValue::new("toolgate.task", crate::span::clip(t)));
    }
    if ex.client_disconnected {
        f.extra
            .push(KeyValue::new("toolgate.client_disconnected", true));
    }
    f
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::span::{attributes, error_type};
    use serde_json::json;

    fn attempt() -> Attempt {
        Attempt {
            request: std::sync::Arc::new(
                json!({"model": "m", "api_key": "sk-secret", "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]}),
            ),
            response: Some(
                json!({"id": "r1", "model": "m-2025", "usage": {"prompt_tokens": 7, "completion_tokens": 3}}),
            ),
            status: 200,
            output: "<tool_call>{\"name\": \"wipe_disk\", \"arguments\": {}}</tool_call>".into(),
            finish_reason: Some("stop".into()),
            judged: Some(
                json!({"profile": "hermes", "decision": "reject", "label": "hallucinated_tool", "gate": "allowlist", "pipeline": {"parse_mode": "hermes"}}),
            ),
            started_unix_ms: 1_700_000_000_000,
            served: true,
            ..Attempt::default()
        }
    }

    fn get<'a>(a: &'a [KeyValue], k: &str) -> Option<&'a opentelemetry::Value> {
        a.iter().find(|kv| kv.key.as_str() == k).map(|kv| &kv.value)
    }

    #[test]
    fn a_reject_carries_the_verdict_and_error_type_and_no_content_by_default() {
        let ex = Exchange {
            model: Some("m".into()),
            mode: "enforce",
            attempts: vec![attempt()],
            total_ms: 1500.0,
            ..Exchange::default()
        };
        let cx = Context {
            profile_source: Some(Arc::new(|m| format!("by name ({})", m.unwrap_or("")))),
            redact: Vec::new(),
            upstream: None,
        };
        let f = finished(&ex, &cx, false);
        assert_eq!(
            f.end.duration_since(f.start).unwrap(),
            Duration::from_millis(1500)
        );
        let a = attributes(&f, false);
        let text = |k| get(&a, k).map(|v| v.as_str().into_owned());
        assert_eq!(text("gen_ai.response.model").as_deref(), Some("m-2025"));
        assert_eq!(text("toolgate.gate").as_deref(), Some("allowlist"));
        assert_eq!(
            text("toolgate.profile.source").as_deref(),
            Some("by name (m)")
        );
        assert_eq!(
            text("error.type").as_deref(),
            Some("toolgate.reject.allowlist")
        );
        assert_eq!(
            get(&a, "gen_ai.usage.input_tokens"),
            Some(&opentelemetry::Value::I64(7))
        );
        assert!(get(&a, "gen_ai.output.messages").is_none());
        assert!(get(&a, "gen_ai.tool.definitions").is_none());
        assert!(
            !format!("{a:?}").contains("wipe_disk"),
            "no content without capture"
        );
        assert!(f.output.is_empty() && f.tools.is_none(), "nor in the queue");
    }

    #[test]
    fn redacted_tools_stay_redacted_and_the_api_key_never_appears() {
        let ex = Exchange {
            model: Some("m".into()),
            attempts: vec![attempt()],
            ..Exchange::default()
        };
        let cx = Context {
            profile_source: None,
            redact: vec!["/tools/0/function/parameters".into()],
            upstream: None,
        };
        let a = attributes(&finished(&ex, &cx, true), true);
        let defs = get(&a, "gen_ai.tool.definitions").unwrap().as_str();
        assert!(defs.contains(REDACTED), "{defs}");
        assert!(!format!("{a:?}").contains("sk-secret"));
    }

    #[test]
    fn upstream_failures_and_disconnects_have_an_error_type() {
        let mut a = attempt();
        a.judged = None;
        a.error = Some("timeout: the upstream did not answer in time".into());
        a.status = 0;
        let mut ex = Exchange {
            attempts: vec![a],
            ..Exchange::default()
        };
        let cx = Context::default();
        assert_eq!(
            error_type(&finished(&ex, &cx, false)).as_deref(),
            Some("timeout")
        );
        ex.attempts[0].status = 503;
        assert_eq!(
            error_type(&finished(&ex, &cx, false)).as_deref(),
            Some("503")
        );
        ex.attempts[0].error = None;
        ex.client_disconnected = true;
        assert_eq!(
            error_type(&finished(&ex, &cx, false)).as_deref(),
            Some("client_disconnected")
        );
        // An exchange with no attempt at all still makes a span.
        let empty = finished(&Exchange::default(), &cx, false);
        assert!(empty.verdict.is_none());
    }
}
