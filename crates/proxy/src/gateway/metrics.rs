//! `GET /metrics`: Prometheus text format (prometheus-client).
//!
//! Every series is labeled by `model` (the request's, `unknown` when absent).
//! Model names come from untrusted requests, so at most [`MAX_MODELS`]
//! distinct ones get their own series; later ones are counted as `other`.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::{Family, MetricConstructor};
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

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
    models: Mutex<HashMap<Arc<str>, Arc<Series>>>,
    /// The series of a request without a model, and of models past
    /// [`MAX_MODELS`].
    unknown: Arc<Series>,
    other: Arc<Series>,
}

/// The families labeled by a model and a value, as [`Series::values`]
/// tells them apart.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Valued {
    Decisions,
    Labels,
    Gates,
    Retries,
}

/// One model's series, found by its name once per call: handles to the
/// counters a request increments (a handle shares its count with the
/// family's series), so that they are not each looked up by their labels
/// (a lock and a SipHash of the model's name per series) on every request.
/// Each is made on first use, as `get_or_create` makes it: a series that
/// never counted is not exposed.
struct Series {
    name: Arc<str>,
    native_rejected: OnceLock<Counter>,
    upstream_errors: OnceLock<Counter>,
    unchecked: OnceLock<Counter>,
    upstream_latency: OnceLock<Histogram>,
    /// The value-labeled series met so far: toolgate's own names, so a
    /// few dozen at most.
    values: Handles<(Valued, &'static str)>,
    /// `(stream, status)`: at most two per HTTP status.
    requests: Handles<(bool, u16)>,
}

/// A model's counters met so far, by the labels that tell them apart
/// within its series (few: a list searched in turn).
type Handles<K> = Mutex<Vec<(K, Counter)>>;

/// Adds one to the counter of `key` in `handles`, made by `make` (the
/// family's `get_or_create`) the first time.
fn inc<K: PartialEq>(handles: &Handles<K>, key: K, make: impl FnOnce() -> Counter) {
    let mut list = lock(handles);
    if let Some((_, c)) = list.iter().find(|(k, _)| *k == key) {
        c.inc();
        return;
    }
    let c = make();
    c.inc();
    list.push((key, c));
}

impl Series {
    fn new(name: Arc<str>) -> Arc<Series> {
        Arc::new(Series {
            name,
            native_rejected: OnceLock::new(),
            upstream_errors: OnceLock::new(),
            unchecked: OnceLock::new(),
            upstream_latency: OnceLock::new(),
            values: Mutex::new(Vec::new()),
            requests: Mutex::new(Vec::new()),
        })
    }

    /// The model's series of `family`, made on first use.
    fn of<'a, M: Clone>(
        &self,
        handle: &'a OnceLock<M>,
        family: &Family<ModelLabels, M, impl MetricConstructor<M>>,
    ) -> &'a M {
        handle.get_or_init(|| {
            family
                .get_or_create(&ModelLabels {
                    model: Arc::clone(&self.name),
                })
                .clone()
        })
    }
}

/// A poisoned lock only means a panic elsewhere; what it guards (a map of
/// handles) is still valid.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
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
            models: Mutex::new(HashMap::new()),
            unknown: Series::new(Arc::from("unknown")),
            other: Series::new(Arc::from("other")),
        }
    }

    /// The series of `model`, bounded in number.
    fn model(&self, model: Option<&str>) -> Arc<Series> {
        let Some(model) = model else {
            return Arc::clone(&self.unknown);
        };
        // Clipped at a character boundary: a 50 MiB model name must not
        // become a 50 MiB series name.
        let model = match model.char_indices().nth(MAX_LABEL_VALUE) {
            Some((end, _)) => &model[..end],
            None => model,
        };
        // Terminal controls (ESC, BEL, CR, C1), bidi controls and invisible
        // characters are written as visible escapes (`\x1b`, `\u{202e}`):
        // the encoder escapes only `"`, `\` and a newline, and `/metrics`
        // is read on terminals. Borrowed (no copy) for an ordinary name.
        let model = toolgate_core::sanitize::one_line(model);
        let model = model.as_ref();
        let mut seen = lock(&self.models);
        if let Some(series) = seen.get(model) {
            return Arc::clone(series);
        }
        if seen.len() < MAX_MODELS {
            let series = Series::new(Arc::from(model));
            seen.insert(Arc::clone(&series.name), Arc::clone(&series));
            return series;
        }
        Arc::clone(&self.other)
    }

    /// Adds one to `model`'s series of value-labeled `family` (`which`)
    /// and `value`.
    fn inc_value(
        series: &Series,
        which: Valued,
        family: &Family<ValueLabels, Counter>,
        value: &'static str,
    ) {
        inc(&series.values, (which, value), || {
            family
                .get_or_create(&ValueLabels {
                    model: Arc::clone(&series.name),
                    value,
                })
                .clone()
        });
    }

    /// One chat completion request answered with `status`.
    pub fn request(&self, model: Option<&str>, stream: bool, status: u16) {
        let series = self.model(model);
        inc(&series.requests, (stream, status), || {
            self.requests
                .get_or_create(&RequestLabels {
                    model: Arc::clone(&series.name),
                    stream,
                    status,
                })
                .clone()
        });
    }

    /// The decision, label and failing gate of one served output.
    pub fn decision(
        &self,
        model: Option<&str>,
        decision: &'static str,
        label: &'static str,
        gate: Option<&'static str>,
    ) {
        let series = self.model(model);
        Metrics::inc_value(&series, Valued::Decisions, &self.decisions, decision);
        Metrics::inc_value(&series, Valued::Labels, &self.labels, label);
        if let Some(g) = gate {
            Metrics::inc_value(&series, Valued::Gates, &self.gates, g);
        }
    }

    /// One upstream re-request (`reroll` or `reemit`).
    pub fn retry(&self, model: Option<&str>, kind: &'static str) {
        let series = self.model(model);
        Metrics::inc_value(&series, Valued::Retries, &self.retries, kind);
    }

    /// A response whose native calls were rejected as a set.
    pub fn native_rejected(&self, model: Option<&str>) {
        let series = self.model(model);
        series
            .of(&series.native_rejected, &self.native_rejected)
            .inc();
    }

    /// A 2xx upstream answer that could not be checked.
    pub fn unchecked(&self, model: Option<&str>) {
        let series = self.model(model);
        series.of(&series.unchecked, &self.unchecked).inc();
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
        let series = self.model(model);
        series
            .of(&series.upstream_errors, &self.upstream_errors)
            .inc();
    }

    /// One upstream response time.
    pub fn upstream_latency(&self, model: Option<&str>, seconds: f64) {
        let series = self.model(model);
        series
            .of(&series.upstream_latency, &self.upstream_latency)
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
    fn terminal_controls_in_model_names_are_escaped() {
        let m = Metrics::new();
        for name in [
            "a\u{1b}[2Jb",
            "bel\u{7}cr\r",
            "c1\u{9b}",
            "bidi\u{202e}\u{2066}",
        ] {
            m.request(Some(name), false, 200);
        }
        let text = m.encode();
        for raw in ['\u{1b}', '\u{7}', '\r', '\u{9b}', '\u{202e}', '\u{2066}'] {
            assert!(!text.contains(raw), "{raw:?} in {text}");
        }
        assert!(text.contains(r#"model="a\\x1b[2Jb""#), "{text}");
        assert!(text.contains(r#"model="bidi\\u{202e}\\u{2066}""#), "{text}");
    }

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

    /// Counts made through a model's handles are the family's: each series
    /// counts every call (first and later ones), apart from every other
    /// model's and value's, and a series never counted is not exposed.
    #[test]
    fn handles_count_into_their_own_series_only() {
        let m = Metrics::new();
        for _ in 0..3 {
            m.request(Some("a"), false, 200);
            m.decision(Some("a"), "execute", "pass", None);
            m.upstream_latency(Some("a"), 0.002);
        }
        m.request(Some("a"), true, 200);
        m.request(Some("a"), false, 502);
        m.request(Some("b"), false, 200);
        m.decision(Some("a"), "reject", "malformed_json", Some("parse"));
        m.decision(None, "reject", "pass", Some("schema"));
        m.retry(Some("a"), "reroll");
        m.retry(Some("a"), "reroll");
        m.retry(Some("a"), "reemit");
        // One value in three families: three series.
        m.decision(Some("c"), "reject", "reject", Some("reject"));
        m.retry(Some("c"), "reject");
        m.native_rejected(Some("b"));
        m.unchecked(Some("a"));
        m.upstream_error(Some("a"));
        m.upstream_error(Some("a"));
        let text = m.encode();
        for line in [
            r#"toolgate_requests_total{model="a",stream="false",status="200"} 3"#,
            r#"toolgate_requests_total{model="a",stream="true",status="200"} 1"#,
            r#"toolgate_requests_total{model="a",stream="false",status="502"} 1"#,
            r#"toolgate_requests_total{model="b",stream="false",status="200"} 1"#,
            r#"toolgate_decisions_total{model="a",value="execute"} 3"#,
            r#"toolgate_decisions_total{model="a",value="reject"} 1"#,
            r#"toolgate_decisions_total{model="unknown",value="reject"} 1"#,
            r#"toolgate_labels_total{model="a",value="pass"} 3"#,
            r#"toolgate_labels_total{model="a",value="malformed_json"} 1"#,
            r#"toolgate_labels_total{model="unknown",value="pass"} 1"#,
            r#"toolgate_gates_total{model="a",value="parse"} 1"#,
            r#"toolgate_gates_total{model="unknown",value="schema"} 1"#,
            r#"toolgate_retries_total{model="a",value="reroll"} 2"#,
            r#"toolgate_retries_total{model="a",value="reemit"} 1"#,
            r#"toolgate_decisions_total{model="c",value="reject"} 1"#,
            r#"toolgate_labels_total{model="c",value="reject"} 1"#,
            r#"toolgate_gates_total{model="c",value="reject"} 1"#,
            r#"toolgate_retries_total{model="c",value="reject"} 1"#,
            r#"toolgate_native_sets_rejected_total{model="b"} 1"#,
            r#"toolgate_upstream_unchecked_total{model="a"} 1"#,
            r#"toolgate_upstream_errors_total{model="a"} 2"#,
            r#"toolgate_upstream_latency_seconds_count{model="a"} 3"#,
        ] {
            assert!(text.contains(line), "{line} in\n{text}");
        }
        for absent in [
            r#"toolgate_native_sets_rejected_total{model="a"}"#,
            r#"toolgate_upstream_errors_total{model="b"}"#,
            r#"toolgate_upstream_latency_seconds_count{model="b"}"#,
            r#"toolgate_gates_total{model="a",value="schema"}"#,
        ] {
            assert!(!text.contains(absent), "{absent} in\n{text}");
        }
    }
}
