//! OpenTelemetry GenAI traces of toolgate's network side: one `chat {model}`
//! span per proxy exchange and per runner sample, exported over OTLP/HTTP
//! (protobuf) with the `opentelemetry` crates.
//!
//! - [`Settings`]: the standard `OTEL_*` variables; no endpoint, no traces.
//! - [`Traces`]: the exporter and a bounded queue in front of it. The proxy
//!   and the runner hand it finished work through the hooks of
//!   `toolgate-proxy` ([`Traces::exchange_hook`], [`Traces::sample_hook`]);
//!   a hook only moves the work into the queue (dropped and counted when the
//!   queue is full) and a worker thread builds the spans, which the SDK's
//!   batch processor exports. Nothing on the request path waits on the
//!   network or on span building.
//! - [`span`]: the span and its attributes (the wire format).
//! - [`proxy`], [`runner`]: a proxy exchange and a runner sample as a
//!   [`span::Finished`] exchange.
//!
//! ```
//! // Without OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT), traces are off.
//! let settings = toolgate_otel::Settings::from_vars("toolgate-proxy", |_| None).unwrap();
//! assert!(settings.is_none());
//! ```
//!
//! Content (output text, tool-call arguments, tool definitions) goes into
//! spans only when `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`;
//! request headers and the request's messages never do.

#![deny(missing_docs)]

pub mod proxy;
pub mod runner;
mod settings;
pub mod span;

pub use settings::Settings;
pub use span::{Finished, ToolCall, Verdict};

use opentelemetry_otlp::{Protocol, WithExportConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::{BatchConfigBuilder, BatchSpanProcessor, SdkTracerProvider};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Finished work waiting for the worker, at most.
pub const QUEUE: usize = 1024;
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

/// One piece of finished work for the worker.
pub(crate) enum Job {
    Exchange(Box<toolgate_proxy::proxy::record::Exchange>, proxy::Context),
    Sample(Box<runner::SampleJob>),
}

struct Shared {
    dropped: AtomicU64,
    emitted: AtomicU64,
}

/// The exporter, its queue and its worker. Cloning shares them.
#[derive(Clone)]
pub struct Traces {
    settings: Settings,
    provider: SdkTracerProvider,
    queue: Arc<Mutex<Option<SyncSender<Job>>>>,
    worker: Arc<Mutex<Option<std::thread::JoinHandle<()>>>>,
    /// The receiver while no worker reads it (tests of the queue alone).
    parked: Arc<Mutex<Option<Receiver<Job>>>>,
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
        Traces::start_with(settings, QUEUE, true)
    }

    fn start_with(settings: Settings, queue: usize, run_worker: bool) -> Result<Traces, Error> {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_http()
            .with_protocol(Protocol::HttpBinary)
            .with_endpoint(settings.endpoint.clone())
            .with_timeout(EXPORT_TIMEOUT)
            .build()
            .map_err(|e| Error::config(format!("cannot build the OTLP exporter: {e}")))?;
        let processor = BatchSpanProcessor::builder(exporter)
            .with_batch_config(
                BatchConfigBuilder::default()
                    .with_max_queue_size(2048)
                    .with_max_export_batch_size(512)
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
        let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(queue);
        let shared = Arc::new(Shared {
            dropped: AtomicU64::new(0),
            emitted: AtomicU64::new(0),
        });
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

    /// Queues `job`, never waiting: a full queue drops it (counted).
    pub(crate) fn submit(&self, job: Job) {
        let sent = match self.queue.lock() {
            Ok(q) => match q.as_ref() {
                Some(tx) => match tx.try_send(job) {
                    Ok(()) => true,
                    Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => false,
                },
                None => false,
            },
            Err(_) => false,
        };
        if !sent && self.shared.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
            tracing::warn!(
                target: "toolgate::otel",
                "trace queue full: dropping spans (counted; no further warning)"
            );
        }
    }

    /// Drains the queue, exports what is left and stops, waiting at most
    /// `timeout` (an unreachable collector cannot hold the process). Later
    /// work is dropped.
    pub fn shutdown(&self, timeout: Duration) {
        let deadline = std::time::Instant::now() + timeout;
        if let Ok(mut q) = self.queue.lock() {
            q.take();
        }
        if let Ok(mut p) = self.parked.lock() {
            p.take();
        }
        let worker = self.worker.lock().ok().and_then(|mut w| w.take());
        if let Some(worker) = worker {
            while !worker.is_finished() && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
        }
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        if let Err(e) = self
            .provider
            .shutdown_with_timeout(left.max(Duration::from_millis(100)))
        {
            tracing::warn!(target: "toolgate::otel", error = %e, "traces not all exported");
        }
    }
}

fn work(
    rx: Receiver<Job>,
    tracer: opentelemetry_sdk::trace::SdkTracer,
    capture: bool,
    shared: Arc<Shared>,
) {
    while let Ok(job) = rx.recv() {
        let finished = match job {
            Job::Exchange(ex, cx) => proxy::finished(&ex, &cx),
            Job::Sample(s) => runner::finished(&s),
        };
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
        Job::Exchange(Box::default(), proxy::Context::default())
    }

    #[test]
    fn a_full_queue_drops_and_counts_without_waiting() {
        let t = Traces::start_with(settings(), 2, false).unwrap();
        let started = std::time::Instant::now();
        for _ in 0..5 {
            t.submit(job());
        }
        assert_eq!(t.dropped(), 3);
        assert!(started.elapsed() < Duration::from_secs(1));
        t.shutdown(Duration::from_millis(200));
    }

    #[test]
    fn work_after_shutdown_is_dropped_and_shutdown_is_bounded_by_its_timeout() {
        let t = Traces::start(settings()).unwrap();
        t.submit(job());
        let started = std::time::Instant::now();
        t.shutdown(Duration::from_millis(500));
        assert!(started.elapsed() < Duration::from_secs(3));
        assert_eq!(t.emitted(), 1);
        t.submit(job());
        assert_eq!(t.dropped(), 1);
    }
}
