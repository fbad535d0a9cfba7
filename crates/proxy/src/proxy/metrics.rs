//! `GET /metrics`: Prometheus text format (prometheus-client).
//!
//! Every series is labeled by `model` (the request's, `unknown` when absent).
//! Model names come from untrusted requests, so at most [`MAX_MODELS`]
//! distinct ones get their own series; later ones are counted as `other`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::collections::HashSet;
use std::sync::Mutex;

/// How many distinct model names get series of their own.
pub const MAX_MODELS: usize = 64;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    model: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    model: String,
    stream: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ValueLabels {
    model: String,
    value: String,
}

fn latency_histogram() -> Histogram {
    // 1 ms … ~33 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 16))
}

/// The proxy's counters and histograms.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    decisions: Family<ValueLabels, Counter>,
    labels: Family<ValueLabels, Counter>,
    gates: Family<ValueLabels, Counter>,
    retries: Family<ValueLabels, Counter>,
    native_removed: Family<ModelLabels, Counter>,
    upstream_errors: Family<ModelLabels, Counter>,
    upstream_latency: Family<ModelLabels, Histogram>,
    models: Mutex<HashSet<String>>,
}

impl Default for Metrics {
    fn default() -> Metrics {
        Metrics::new()
    }
}

impl Metrics {
    /// A registry with every series registered.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("toolgate");
        let requests = Family::<RequestLabels, Counter>::default();
        let decisions = Family::<ValueLabels, Counter>::default();
        let labels = Family::<ValueLabels, Counter>::default();
        let gates = Family::<ValueLabels, Counter>::default();
        let retries = Family::<ValueLabels, Counter>::default();
        let native_removed = Family::<ModelLabels, Counter>::default();
        let upstream_errors = Family::<ModelLabels, Counter>::default();
        let upstream_latency = Family::<ModelLabels, Histogram>::new_with_constructor(
            latency_histogram as fn() -> Histogram,
        );
        registry.register(
            "requests",
            "Chat completion requests, by model, streaming and the status returned",
            requests.clone(),
        );
        registry.register(
            "decisions",
            "Pipeline decisions served, by model and decision",
            decisions.clone(),
        );
        registry.register(
            "labels",
            "Labels of the served outputs, by model and label",
            labels.clone(),
        );
        registry.register(
            "gates",
            "Rejections, by model and the first failing gate",
            gates.clone(),
        );
        registry.register(
            "retries",
            "Upstream re-requests, by model and kind (reroll, reemit)",
            retries.clone(),
        );
        registry.register(
            "native_calls_removed",
            "Native tool_calls removed for failing the allowlist or schema",
            native_removed.clone(),
        );
        registry.register(
            "upstream_errors",
            "Upstream requests that failed (connection, timeout, non-2xx)",
            upstream_errors.clone(),
        );
        registry.register(
            "upstream_latency_seconds",
            "Upstream response time (to the end of the body), by model",
            upstream_latency.clone(),
        );
        Metrics {
            registry,
            requests,
            decisions,
            labels,
            gates,
            retries,
            native_removed,
            upstream_errors,
            upstream_latency,
            models: Mutex::new(HashSet::new()),
        }
    }

    /// The series name for `model`, bounded in number.
    fn model(&self, model: Option<&str>) -> String {
        let Some(model) = model else {
            return "unknown".into();
        };
        // A poisoned lock only means a panic elsewhere; the set is still valid.
        let mut seen = self.models.lock().unwrap_or_else(|p| p.into_inner());
        if seen.contains(model) {
            return model.to_string();
        }
        if seen.len() < MAX_MODELS {
            seen.insert(model.to_string());
            return model.to_string();
        }
        "other".into()
    }

    /// One chat completion request answered with `status`.
    pub fn request(&self, model: Option<&str>, stream: bool, status: u16) {
        self.requests
            .get_or_create(&RequestLabels {
                model: self.model(model),
                stream: stream.to_string(),
                status: status.to_string(),
            })
            .inc();
    }

    /// The decision, label and failing gate of one served output.
    pub fn decision(&self, model: Option<&str>, decision: &str, label: &str, gate: Option<&str>) {
        let model = self.model(model);
        let v = |value: &str| ValueLabels {
            model: model.clone(),
            value: value.to_string(),
        };
        self.decisions.get_or_create(&v(decision)).inc();
        self.labels.get_or_create(&v(label)).inc();
        if let Some(g) = gate {
            self.gates.get_or_create(&v(g)).inc();
        }
    }

    /// One upstream re-request (`reroll` or `reemit`).
    pub fn retry(&self, model: Option<&str>, kind: &str) {
        self.retries
            .get_or_create(&ValueLabels {
                model: self.model(model),
                value: kind.to_string(),
            })
            .inc();
    }

    /// Native calls removed from a response.
    pub fn native_removed(&self, model: Option<&str>, n: usize) {
        self.native_removed
            .get_or_create(&ModelLabels {
                model: self.model(model),
            })
            .inc_by(n as u64);
    }

    /// An upstream failure.
    pub fn upstream_error(&self, model: Option<&str>) {
        self.upstream_errors
            .get_or_create(&ModelLabels {
                model: self.model(model),
            })
            .inc();
    }

    /// One upstream response time.
    pub fn upstream_latency(&self, model: Option<&str>, seconds: f64) {
        self.upstream_latency
            .get_or_create(&ModelLabels {
                model: self.model(model),
            })
            .observe(seconds);
    }

    /// The Prometheus text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_are_named_and_model_names_are_bounded() {
        let m = Metrics::new();
        m.request(Some("m1"), true, 200);
        m.decision(Some("m1"), "reject", "malformed_json", Some("parse"));
        m.retry(Some("m1"), "reroll");
        m.upstream_latency(Some("m1"), 0.01);
        for i in 0..(MAX_MODELS + 5) {
            m.request(Some(&format!("x{i}")), false, 200);
        }
        let text = m.encode();
        assert!(
            text.contains(r#"toolgate_requests_total{model="m1",stream="true",status="200"} 1"#),
            "{text}"
        );
        assert!(text.contains(r#"toolgate_gates_total{model="m1",value="parse"} 1"#));
        assert!(text.contains(r#"toolgate_retries_total{model="m1",value="reroll"} 1"#));
        assert!(text.contains("toolgate_upstream_latency_seconds_count{model=\"m1\"} 1"));
        assert!(
            text.contains(
                r#"toolgate_requests_total{model="other",stream="false",status="200"} 6"#
            ),
            "{text}"
        );
    }
}
