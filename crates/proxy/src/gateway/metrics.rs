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
use std::sync::{Arc, Mutex};

/// How many distinct model names get series of their own.
pub const MAX_MODELS: usize = 64;

// Label values are shared or static (a series is found without a string
// made per request): the model name is one `Arc<str>` per model.

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ModelLabels {
    model: Arc<str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    model: Arc<str>,
    stream: bool,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ValueLabels {
    model: Arc<str>,
    value: &'static str,
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
    native_rejected: Family<ModelLabels, Counter>,
    upstream_errors: Family<ModelLabels, Counter>,
    unchecked: Family<ModelLabels, Counter>,
    refused: Family<KindLabels, Counter>,
    recordings: Family<KindLabels, Counter>,
    upstream_latency: Family<ModelLabels, Histogram>,
    models: Mutex<HashSet<Arc<str>>>,
    /// The series of a request without a model, and of models past
    /// [`MAX_MODELS`].
    unknown: Arc<str>,
    other: Arc<str>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KindLabels {
    kind: &'static str,
}

/// The longest label value (model names come from requests).
pub const MAX_LABEL_VALUE: usize = 128;

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
        let native_rejected = Family::<ModelLabels, Counter>::default();
        let upstream_errors = Family::<ModelLabels, Counter>::default();
        let unchecked = Family::<ModelLabels, Counter>::default();
        let refused = Family::<KindLabels, Counter>::default();
        let recordings = Family::<KindLabels, Counter>::default();
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
            "native_sets_rejected",
            "Answers whose native calls were rejected as a set (one failed a gate)",
            native_rejected.clone(),
        );
        registry.register(
            "upstream_unchecked",
            "2xx upstream answers the proxy could not check (content type, UTF-8, shape, unknown call fields, broken stream)",
            unchecked.clone(),
        );
        registry.register(
            "refused",
            "Requests refused before the upstream: unreadable body (request), body too slow or large (body), too many in flight (busy, streams)",
            refused.clone(),
        );
        registry.register(
            "recordings",
            "Exchanges recorded (kind=ok) or that could not be written (kind=failed)",
            recordings.clone(),
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
            native_rejected,
            upstream_errors,
            unchecked,
            refused,
            recordings,
            upstream_latency,
            models: Mutex::new(HashSet::new()),
            unknown: Arc::from("unknown"),
            other: Arc::from("other"),
        }
    }

    /// The series name for `model`, bounded in number.
    fn model(&self, model: Option<&str>) -> Arc<str> {
        let Some(model) = model else {
            return Arc::clone(&self.unknown);
        };
        // Clipped at a character boundary: a 50 MiB model name must not
        // become a 50 MiB series name.
        let model = match model.char_indices().nth(MAX_LABEL_VALUE) {
            Some((end, _)) => &model[..end],
            None => model,
        };
        // A poisoned lock only means a panic elsewhere; the set is still valid.
        let mut seen = self.models.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(name) = seen.get(model) {
            return Arc::clone(name);
        }
        if seen.len() < MAX_MODELS {
            let name: Arc<str> = Arc::from(model);
            seen.insert(Arc::clone(&name));
            return name;
        }
        Arc::clone(&self.other)
    }

    /// One chat completion request answered with `status`.
    pub fn request(&self, model: Option<&str>, stream: bool, status: u16) {
        self.requests
            .get_or_create(&RequestLabels {
                model: self.model(model),
                stream,
                status,
            })
            .inc();
    }

    /// The decision, label and failing gate of one served output.
    pub fn decision(
        &self,
        model: Option<&str>,
        decision: &'static str,
        label: &'static str,
        gate: Option<&'static str>,
    ) {
        let model = self.model(model);
        let v = |value: &'static str| ValueLabels {
            model: Arc::clone(&model),
            value,
        };
        self.decisions.get_or_create(&v(decision)).inc();
        self.labels.get_or_create(&v(label)).inc();
        if let Some(g) = gate {
            self.gates.get_or_create(&v(g)).inc();
        }
    }

    /// One upstream re-request (`reroll` or `reemit`).
    pub fn retry(&self, model: Option<&str>, kind: &'static str) {
        self.retries
            .get_or_create(&ValueLabels {
                model: self.model(model),
                value: kind,
            })
            .inc();
    }

    /// A response whose native calls were rejected as a set.
    pub fn native_rejected(&self, model: Option<&str>) {
        self.native_rejected
            .get_or_create(&ModelLabels {
                model: self.model(model),
            })
            .inc();
    }

    /// A 2xx upstream answer that could not be checked.
    pub fn unchecked(&self, model: Option<&str>) {
        self.unchecked
            .get_or_create(&ModelLabels {
                model: self.model(model),
            })
            .inc();
    }

    /// A request refused before the upstream (`request`, `body`, `busy`,
    /// `streams`).
    pub fn refused(&self, kind: &'static str) {
        self.refused.get_or_create(&KindLabels { kind }).inc();
    }

    /// `n` exchanges (a group) written (`ok`) or not (`failed`): one
    /// series lookup per group, not per exchange.
    pub fn recorded(&self, ok: bool, n: usize) {
        let kind = if ok { "ok" } else { "failed" };
        self.recordings
            .get_or_create(&KindLabels { kind })
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
        m.request(Some(&"y".repeat(10_000)), false, 200);
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
        assert!(text.len() < 20_000, "a long model name is clipped");
        assert!(text.contains(&format!("model=\"{}\"", "y".repeat(MAX_LABEL_VALUE))));
        assert!(text.contains(r#"toolgate_gates_total{model="m1",value="parse"} 1"#));
        assert!(text.contains(r#"toolgate_retries_total{model="m1",value="reroll"} 1"#));
        assert!(text.contains("toolgate_upstream_latency_seconds_count{model=\"m1\"} 1"));
        assert!(
            text.contains(
                r#"toolgate_requests_total{model="other",stream="false",status="200"} 7"#
            ),
            "{text}"
        );
    }
}
