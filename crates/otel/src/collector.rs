//! A minimal OTLP/HTTP traces receiver on a loopback port, for tests and
//! local checks: `POST /v1/traces` with a protobuf `ExportTraceServiceRequest`
//! body, kept in memory and available as decoded spans or as OTLP JSON (the
//! protobuf → JSON mapping of the OTLP specification: camelCase field names,
//! hex trace and span ids, enums as numbers), which is what `toolgate
//! import` reads. Not a trace store: use a real viewer (README, "Traces")
//! for anything else.

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::AnyValue;
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::Span;
use prost::Message as _;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toolgate_proxy::Background;

/// The largest export request accepted.
pub const MAX_EXPORT: usize = 16 * 1024 * 1024;
/// Export requests kept at most (later ones are answered and dropped).
pub const MAX_KEPT: usize = 10_000;

type Got = Arc<Mutex<Vec<ExportTraceServiceRequest>>>;

/// A receiver running on its own thread; stopped when dropped.
pub struct Collector {
    server: Background,
    got: Got,
}

/// One received span, attributes as plain JSON values.
#[derive(Clone, Debug, PartialEq)]
pub struct Received {
    /// The span name.
    pub name: String,
    /// The trace id, hex.
    pub trace_id: String,
    /// The span id, hex.
    pub span_id: String,
    /// The parent's span id, hex (empty for a root span).
    pub parent_span_id: String,
    /// `SpanKind` as its number (3: client).
    pub kind: i32,
    /// The status code (2: error).
    pub status: i32,
    /// Start and end, ns since the Unix epoch.
    pub start_unix_nano: u64,
    /// End.
    pub end_unix_nano: u64,
    /// Attributes: string, bool, int, double, arrays of these.
    pub attributes: Map<String, Value>,
    /// The resource's `service.name`.
    pub service_name: Option<String>,
}

async fn receive(State((got, status)): State<(Got, u16)>, body: Bytes) -> impl IntoResponse {
    let Ok(req) = ExportTraceServiceRequest::decode(body) else {
        return (StatusCode::BAD_REQUEST, "not an ExportTraceServiceRequest").into_response();
    };
    if status != 200 {
        let code = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        return (code, "refused").into_response();
    }
    if let Ok(mut g) = got.lock()
        && g.len() < MAX_KEPT
    {
        g.push(req);
    }
    (
        [(header::CONTENT_TYPE, "application/x-protobuf")],
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
        .into_response()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn plain(v: Option<&AnyValue>) -> Value {
    match v.and_then(|v| v.value.as_ref()) {
        Some(Any::StringValue(s)) => json!(s),
        Some(Any::BoolValue(b)) => json!(b),
        Some(Any::IntValue(i)) => json!(i),
        Some(Any::DoubleValue(d)) => json!(d),
        Some(Any::ArrayValue(a)) => Value::Array(a.values.iter().map(|x| plain(Some(x))).collect()),
        _ => Value::Null,
    }
}

fn received(span: &Span, service: Option<&str>) -> Received {
    Received {
        name: span.name.clone(),
        trace_id: hex(&span.trace_id),
        span_id: hex(&span.span_id),
        parent_span_id: hex(&span.parent_span_id),
        kind: span.kind,
        status: span.status.as_ref().map_or(0, |s| s.code),
        start_unix_nano: span.start_time_unix_nano,
        end_unix_nano: span.end_time_unix_nano,
        attributes: span
            .attributes
            .iter()
            .map(|kv| (kv.key.clone(), plain(kv.value.as_ref())))
            .collect(),
        service_name: service.map(str::to_string),
    }
}

impl Collector {
    /// Starts a receiver on `127.0.0.1:0` that accepts every export.
    pub fn start() -> std::io::Result<Collector> {
        Collector::answering(200)
    }

    /// Starts a receiver that answers every export with `status` (200:
    /// accepts; anything else: refuses and keeps nothing).
    pub fn answering(status: u16) -> std::io::Result<Collector> {
        let got: Got = Arc::default();
        let state = (Arc::clone(&got), status);
        let server = toolgate_proxy::spawn_router(move || {
            Router::new()
                .route("/v1/traces", post(receive))
                .layer(DefaultBodyLimit::max(MAX_EXPORT))
                .with_state(state)
        })?;
        Ok(Collector { server, got })
    }

    /// The base URL, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.server.addr())
    }

    /// The traces URL, for `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("{}/v1/traces", self.base_url())
    }

    /// The export requests received so far.
    pub fn requests(&self) -> Vec<ExportTraceServiceRequest> {
        self.got.lock().map(|g| g.clone()).unwrap_or_default()
    }

    /// Every span received so far.
    pub fn spans(&self) -> Vec<Received> {
        let mut out = Vec::new();
        for req in self.requests() {
            for rs in &req.resource_spans {
                let service = rs.resource.as_ref().and_then(|r| {
                    r.attributes
                        .iter()
                        .find(|kv| kv.key == "service.name")
                        .and_then(|kv| plain(kv.value.as_ref()).as_str().map(str::to_string))
                });
                for ss in &rs.scope_spans {
                    out.extend(ss.spans.iter().map(|s| received(s, service.as_deref())));
                }
            }
        }
        out
    }

    /// Waits (at most `timeout`) until `n` spans have arrived; returns them.
    pub fn wait_for(&self, n: usize, timeout: Duration) -> Vec<Received> {
        let deadline = Instant::now() + timeout;
        loop {
            let spans = self.spans();
            if spans.len() >= n || Instant::now() >= deadline {
                return spans;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Everything received, as OTLP JSON: one export request per line (the
    /// shape of the OpenTelemetry Collector's file exporter).
    pub fn otlp_json(&self) -> String {
        self.requests()
            .iter()
            .filter_map(|r| serde_json::to_string(r).ok())
            .map(|line| line + "\n")
            .collect()
    }
}
