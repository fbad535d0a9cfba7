//! # toolgate-otel: OpenTelemetry GenAI traces of the capture side
//!
//! One `chat {model}` span per proxy exchange and per runner sample,
//! exported over OTLP/HTTP (protobuf) with the `opentelemetry` crates, so a
//! tracing backend shows what toolgate decided next to the rest of a
//! request's trace.
//!
//! ## Place in the dependency order
//!
//! core → formats → validator → proxy → **otel** → the `toolgate` binary.
//! The proxy and the runner know nothing of OpenTelemetry: they call the
//! hooks of `toolgate-proxy` (`on_exchange`, `on_sample`) and this crate
//! supplies them. The opentelemetry crates live only here.
//!
//! ## Main types
//!
//! - [`Settings`]: the standard `OTEL_*` variables; no endpoint, no traces.
//! - [`Traces`]: the exporter and a bounded queue in front of it, with
//!   [`Traces::exchange_hook`] (a proxy exchange, described by an
//!   [`ExchangeContext`] and its [`ProfileSource`]) and
//!   [`Traces::sample_hook`] (a runner sample, judged by a [`Judge`]).
//! - [`Finished`], [`Verdict`], [`ToolCall`]: one finished exchange as the
//!   span is built from it (the attributes are the GenAI semantic
//!   conventions, current and older names).
//! - [`Collector`], [`Received`]: a minimal in-process OTLP/HTTP receiver
//!   (tests, local checks) that hands back what it got as OTLP JSON.
//!
//! ## Invariants
//!
//! - **Nothing on the request path waits.** A hook only moves finished
//!   work into a bounded queue ([`QUEUE`] items, [`QUEUE_BYTES`]); a worker
//!   thread builds the spans and the SDK's batch processor exports them. A
//!   full queue drops the work and counts it ([`Traces::dropped`]).
//! - **Bounded memory.** Every queue has a bound, content larger than a
//!   fixed bound is left out of a span whole (never cut), the collector keeps at most [`MAX_KEPT`] spans and
//!   reads at most [`MAX_EXPORT`] bytes per export.
//! - **No content unless asked, no credential ever.** Output text,
//!   tool-call arguments and tool definitions go into spans only when
//!   `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`; request
//!   headers and the request's messages never do, and the server address
//!   is written without the credentials of its URL.
//! - **Same verdict as the proxy.** A span's decision and label are the
//!   exchange's own; a runner sample is judged under `auto`'s choice
//!   for its model.
//!
//! ```
//! // Without OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT), traces are off.
//! let settings = toolgate_otel::Settings::from_vars("toolgate-proxy", |_| None).unwrap();
//! assert!(settings.is_none());
//! ```
#![deny(missing_docs)]

mod collector;
mod proxy;
mod runner;
mod settings;
mod span;

pub use collector::{Collector, MAX_EXPORT, MAX_KEPT, Received};
pub use proxy::{Context as ExchangeContext, ProfileSource};
pub use runner::Judge;
pub use settings::Settings;
pub use span::{Finished, ToolCall, Verdict};

use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::{OTelSdkError, OTelSdkResult};
use opentelemetry_sdk::trace::{
    BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider, SpanData, SpanExporter,
};
use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toolgate_core::sanitize::url_shown;

/// Finished work waiting for the worker, at most.
pub const QUEUE: usize = 1024;
/// The (estimated) bytes of finished work waiting for the worker, at most.
pub const QUEUE_BYTES: usize = 64 << 20;
/// Ended spans waiting for export, at most (the SDK's batch queue).
pub const SPAN_QUEUE: usize = 512;
/// How long one export may take.
pub const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);
/// How often the batch processor exports.
pub const EXPORT_DELAY: Duration = Duration::from_millis(1000);

/// A traces setup that cannot start.
#[derive(Debug)]
pub struct Error {
    message: String,
}

impl Error {
    pub(crate) fn config(message: String) -> Error {
        Error { message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// One piece of finished work for the worker, with its estimated size.
pub(crate) enum Job {
    /// A proxy exchange, already reduced to its span's data.
    Finished(Box<Finished>),
    /// A runner sample, judged by the worker.
    Sample(Box<runner::SampleJob>),
}

/// A job and its estimated bytes.
type Queued = (Job, usize);

struct Shared {
    dropped: AtomicU64,
    emitted: AtomicU64,
    /// Chat spans the collector took (an export that succeeded).
    exported: AtomicU64,
    queued_bytes: AtomicUsize,
    /// When `shutdown`'s bound ends: no export starts past it.
    deadline: Mutex<Option<Instant>>,
}

/// The OTLP exporter, counting the chat spans it delivers and starting no
/// export past the shutdown's deadline: the flush has one bound in all, not
/// one per batch (each export may take [`EXPORT_TIMEOUT`]).
#[derive(Debug)]
struct Counted<E> {
    inner: E,
    shared: Arc<Shared>,
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl<E: SpanExporter> SpanExporter for Counted<E> {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        let past = match self.shared.deadline.lock() {
            Ok(d) => d.is_some_and(|d| Instant::now() >= d),
            Err(_) => true,
        };
        if past {
            return Err(OTelSdkError::Timeout(Duration::ZERO));
        }
        let chats = batch.iter().filter(|s| span::is_chat(s)).count() as u64;
        let result = self.inner.export(batch).await;
        if result.is_ok() {
            self.shared.exported.fetch_add(chats, Ordering::Relaxed);
        }
        result
    }

    fn shutdown_with_timeout(&self, timeout: Duration) -> OTelSdkResult {
        self.inner.shutdown_with_timeout(timeout)
    }

    fn force_flush(&self) -> OTelSdkResult {
        self.inner.force_flush()
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.inner.set_resource(resource);
    }
}

/// Roughly the bytes a JSON value holds (strings and one word per node).
pub(crate) fn json_size(v: &serde_json::Value) -> usize {
    use serde_json::Value;
    match v {
        Value::String(s) => s.len() + 24,
        Value::Array(a) => 24 + a.iter().map(json_size).sum::<usize>(),
        Value::Object(m) => {
            24 + m
                .iter()
                .map(|(k, v)| k.len() + 24 + json_size(v))
                .sum::<usize>()
        }
        _ => 16,
    }
}

/// The exporter, its queue and its worker. Cloning shares them.
#[derive(Clone)]
pub struct Traces {
    settings: Settings,
    provider: SdkTracerProvider,
    queue: Arc<Mutex<Option<SyncSender<Queued>>>>,
    queue_bytes: usize,
    worker: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
    /// The receiver while no worker reads it (tests of the queue alone).
    parked: Arc<Mutex<Option<Receiver<Queued>>>>,
    shared: Arc<Shared>,
}

impl fmt::Debug for Traces {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Traces")
            .field("settings", &self.settings)
            .finish_non_exhaustive()
    }
}

impl Traces {
    /// Traces as the environment says (`service` is the default
    /// `service.name`); `Ok(None)` when they are off. Call it outside an
    /// async runtime (the exporter's blocking HTTP client is built here).
    pub fn from_env(service: &str) -> Result<Option<Traces>, Error> {
        match Settings::from_env(service)? {
            Some(s) => Traces::start(s).map(Some),
            None => Ok(None),
        }
    }

    /// Starts the exporter and the worker.
    pub fn start(settings: Settings) -> Result<Traces, Error> {
        Traces::start_with(settings, QUEUE, QUEUE_BYTES, true)
    }

    fn start_with(
        settings: Settings,
        queue: usize,
        queue_bytes: usize,
        run_worker: bool,
    ) -> Result<Traces, Error> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(settings.endpoint.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| {
                // The exporter's message quotes the endpoint as given, user,
                // password and query included.
                let e = e
                    .to_string()
                    .replace(&settings.endpoint, &url_shown(&settings.endpoint));
                Error::config(format!("cannot build the OTLP exporter: {e}"))
            })?;
        let shared = Arc::new(Shared {
            dropped: AtomicU64::new(0),
            emitted: AtomicU64::new(0),
            exported: AtomicU64::new(0),
            queued_bytes: AtomicUsize::new(0),
            deadline: Mutex::new(None),
        });
        let exporter = Counted {
            inner: exporter,
            shared: Arc::clone(&shared),
        };
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(
                // 512 spans of at most `span::MAX_CONTENT` content each:
                // a stuck collector holds at most ~128 MiB here.
                BatchConfigBuilder::default()
                    .with_max_queue_size(SPAN_QUEUE)
                    .with_max_export_batch_size(SPAN_QUEUE / 2)
                    .with_scheduled_delay(EXPORT_DELAY)
                    .build(),
            )
            .build();
        let provider = SdkTracerProvider::builder()
            .with_span_processor(processor)
            .with_resource(
                Resource::builder_empty()
                    .with_service_name(settings.service_name.clone())
                    .build(),
            )
            .build();
        let (tx, rx) = std::sync::mpsc::sync_channel::<Queued>(queue);
        let mut parked = None;
        let worker = if run_worker {
            let tracer = span::tracer(&provider);
            let capture = settings.capture_content;
            let shared = Arc::clone(&shared);
            Some(
                std::thread::Builder::new()
                    .name("toolgate-otel".into())
                    .spawn(move || work(rx, tracer, capture, shared))
                    .map_err(|e| Error::config(format!("cannot start the traces worker: {e}")))?,
            )
        } else {
            parked = Some(rx);
            None
        };
        Ok(Traces {
            settings,
            provider,
            queue: Arc::new(Mutex::new(Some(tx))),
            queue_bytes,
            worker: Arc::new(Mutex::new(worker)),
            parked: Arc::new(Mutex::new(parked)),
            shared,
        })
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Finished work dropped because the queue was full (or traces were
    /// shut down).
    pub fn dropped(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Chat spans handed to the exporter so far.
    pub fn emitted(&self) -> u64 {
        self.shared.emitted.load(Ordering::Relaxed)
    }

    /// Whether content goes into spans.
    pub(crate) fn capture(&self) -> bool {
        self.settings.capture_content
    }

    /// Queues `job` of about `bytes`, never waiting: a full queue (by count
    /// or by bytes) drops it (counted).
    pub(crate) fn submit(&self, job: Job, bytes: usize) {
        let budget = &self.shared.queued_bytes;
        let sent = if budget.fetch_add(bytes, Ordering::AcqRel) + bytes > self.queue_bytes {
            false
        } else {
            match self.queue.lock() {
                Ok(q) => match q.as_ref() {
                    Some(tx) => match tx.try_send((job, bytes)) {
                        Ok(()) => true,
                        Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
                    },
                    None => false,
                },
                Err(_) => false,
            }
        };
        if !sent {
            budget.fetch_sub(bytes, Ordering::AcqRel);
        }
        if !sent && self.shared.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::warn!(
                target: "toolgate::otel",
                "trace queue full: dropping spans (counted; no further warning)"
            );
        }
    }

    /// Drains the queue, exports what is left and stops, waiting at most
    /// `timeout` in all (an unreachable collector cannot hold the process:
    /// no export starts past it, and one in flight is left behind). Later
    /// work is dropped. Returns the chat spans not exported ([`unexported`](Self::unexported)),
    /// also logged when there are any.
    pub fn shutdown(&self, timeout: Duration) -> u64 {
        let deadline = Instant::now() + timeout;
        if let Ok(mut d) = self.shared.deadline.lock() {
            *d = Some(deadline);
        }
        if let Ok(mut q) = self.queue.lock() {
            q.take();
        }
        if let Ok(mut p) = self.parked.lock() {
            p.take();
        }
        let worker = self.worker.lock().ok().and_then(|mut w| w.take());
        if let Some(worker) = worker {
            while !worker.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if let Err(e) = self.provider.shutdown_with_timeout(left) {
            tracing::debug!(target: "toolgate::otel", error = %e, "traces shutdown");
        }
        let lost = self.unexported();
        if lost > 0 {
            tracing::warn!(
                target: "toolgate::otel",
                spans = lost,
                bound_ms = timeout.as_millis() as u64,
                "spans not exported by the end of the flush: dropped"
            );
        }
        lost
    }

    /// Chat spans handed to the exporter and not (yet) taken by the
    /// collector: after [`shutdown`](Self::shutdown), the ones lost.
    pub fn unexported(&self) -> u64 {
        self.emitted()
            .saturating_sub(self.shared.exported.load(Ordering::Relaxed))
    }
}

fn work(
    rx: Receiver<Queued>,
    tracer: opentelemetry_sdk::trace::SdkTracer,
    capture: bool,
    shared: Arc<Shared>,
) {
    while let Ok((job, bytes)) = rx.recv() {
        let finished = match job {
            Job::Finished(f) => *f,
            Job::Sample(s) => runner::finished(&s),
        };
        shared.queued_bytes.fetch_sub(bytes, Ordering::AcqRel);
        span::emit(&tracer, &finished, capture);
        shared.emitted.fetch_add(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn settings() -> Settings {
        Settings {
            // Nothing listens on port 9: nothing is ever exported in these tests.
            endpoint: "http://127.0.0.1:9/v1/traces".into(),
            service_name: "t".into(),
            capture_content: false,
        }
    }

    fn job() -> Job {
        let now = std::time::SystemTime::now();
        Job::Finished(Box::new(Finished::new(now, now)))
    }

    #[test]
    fn a_full_queue_drops_and_counts_without_waiting() {
        let t = Traces::start_with(settings(), 2, QUEUE_BYTES, false).unwrap();
        let started = std::time::Instant::now();
        for _ in 0..5 {
            t.submit(job(), 100);
        }
        assert_eq!(t.dropped(), 3);
        assert!(started.elapsed() < Duration::from_secs(1));
        t.shutdown(Duration::from_millis(200));
    }

    #[test]
    fn queued_bytes_are_bounded_too() {
        let t = Traces::start_with(settings(), 100, 1000, false).unwrap();
        t.submit(job(), 600);
        t.submit(job(), 600);
        assert_eq!(t.dropped(), 1, "the second would pass the byte budget");
        t.submit(job(), 400);
        assert_eq!(t.dropped(), 1, "what fits still goes in");
        t.shutdown(Duration::from_millis(200));
    }

    #[test]
    fn work_after_shutdown_is_dropped_and_shutdown_is_bounded_by_its_timeout() {
        let t = Traces::start(settings()).unwrap();
        t.submit(job(), 100);
        let started = std::time::Instant::now();
        t.shutdown(Duration::from_millis(500));
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(t.emitted(), 1);
        assert_eq!(t.shared.queued_bytes.load(Ordering::Relaxed), 0);
        t.submit(job(), 100);
        assert_eq!(t.dropped(), 1);
    }

    /// The probe's flush at SIGTERM took 6.5 s against the documented 5 s.
    /// Against a collector that accepts and never answers, with an export
    /// in flight and a second batch waiting, `shutdown` ends within its
    /// bound, and says how many spans were not exported.
    #[test]
    fn shutdown_against_a_collector_that_never_answers_keeps_its_bound() {
        let hung = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let s = Settings {
            endpoint: format!("http://{}/v1/traces", hung.local_addr().unwrap()),
            ..settings()
        };
        let t = Traces::start(s).unwrap();
        // Two export batches.
        let n = SPAN_QUEUE as u64;
        for _ in 0..n {
            t.submit(job(), 100);
        }
        let waiting = std::time::Instant::now();
        while t.emitted() < n && waiting.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(t.emitted(), n);
        // The first batch is sent (a full batch leaves at once) and hangs.
        std::thread::sleep(EXPORT_DELAY + Duration::from_millis(200));
        let bound = Duration::from_secs(2);
        let started = std::time::Instant::now();
        let lost = t.shutdown(bound);
        let took = started.elapsed();
        assert!(took < bound + Duration::from_millis(300), "{took:?}");
        assert_eq!(lost, n, "nothing was exported");
        assert_eq!(t.unexported(), n);
        drop(hung);
    }

    // probe44b: the exporter's refusal quoted the endpoint raw.
    #[test]
    fn an_endpoint_the_exporter_refuses_is_shown_without_its_credentials() {
        let s = Settings {
            endpoint: "http://u:SECRETPW12345678@[::1?k=SECRETQ".into(),
            ..settings()
        };
        let Err(e) = Traces::start_with(s, 2, QUEUE_BYTES, false) else {
            panic!("an unclosed IPv6 host is refused");
        };
        assert_eq!(
            e.to_string(),
            "cannot build the OTLP exporter: invalid exporter configuration: endpoint: \
             invalid endpoint 'http://***@[::1?***': invalid authority"
        );
    }
}
