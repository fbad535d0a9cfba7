//! `toolgate proxy`: an OpenAI-compatible gateway in front of any
//! OpenAI-compatible server that records raw transcripts and, in `enforce`,
//! turns raw tool syntax into `tool_calls` through the fail-closed pipeline.
//!
//! # Routes
//!
//! - `POST /v1/chat/completions`: judged (see below), streaming or not.
//! - `GET /healthz`: `ok`. `GET /metrics`: Prometheus text ([`metrics`]).
//! - anything else is passed through: `/v1/REST` goes to `UPSTREAM/REST`
//!   (`--upstream` is the base URL as OpenAI clients take it,
//!   `http://host:8000/v1`), any other path to the upstream's origin
//!   (`/tokenize` → `http://host:8000/tokenize`).
//!
//! Request headers are forwarded (`Authorization` included) except
//! hop-by-hop ones and those a `Connection` field names, `Expect` (the proxy
//! has read the body), `Accept-Encoding` (the proxy reads the answer) and
//! `x-toolgate-*` (`x-toolgate-task` is the task name recorded with the
//! exchange); answers' headers the same way, without `Content-Encoding`. A
//! chat completion with a `Content-Encoding` other than `identity` is
//! refused (415); other paths forward it. Headers are never recorded or
//! logged, nor the text of the client's credential headers when the
//! upstream echoes it ([`Ctx::secrets`], scrubbed by the runner's
//! scrubber, `crate::secrets`).
//!
//! # Modes
//!
//! - `observe`: the response is forwarded unchanged (streams byte for byte,
//!   but for upstream comments that read as the proxy's own decision or
//!   usage line, dropped in every mode: [`sse::own_comment`]); the exchange
//!   is recorded with the decision the pipeline would take.
//! - `shadow`: the same, plus `x-toolgate-decision` / `x-toolgate-label`
//!   (and `-gate`, `-reason`, `-native`, `-profile`, `-attempts`) headers on
//!   non-streamed answers, and a last SSE comment
//!   `: toolgate decision=… label=…` on streams (headers of a stream leave
//!   before its end).
//! - `enforce`: the profile's pipeline runs on each choice's raw `content`
//!   with the request's `tools` as the allowlist ([`judge`]); `execute` turns
//!   the calls into `tool_calls`, anything else leaves the text without tool
//!   calls; native `tool_calls` and a legacy `function_call` are judged with
//!   the text's calls as one set, and one failing call rejects them all.
//!   Every answer is checked first ([`check`]); what cannot be checked, and
//!   a stream that does not end properly, reach the client as an error,
//!   never as calls. Before the first byte is sent, a sampling artifact is re-rolled up
//!   to `--retries` times and several fallback candidates get the re-emit
//!   request once. JSON is edited in place: every field the proxy does not
//!   own is kept, and an answer with nothing to change is sent byte for byte.

mod check;
mod checked;
use check::{ChoiceRead, Read};
mod h1;
mod judge;
mod members;
mod metrics;
pub(crate) mod record;
mod request;
mod scan;
pub use check::DEFAULT_MAX_RESPONSE_NODES;
pub use request::DEFAULT_MAX_REQUEST_NODES;
mod splice;
mod sse;
mod streaming;
mod target;
mod upstream;
mod verbatim;

pub use record::{
    Attempt, Exchange, Judgment, NativeJudgment, PipelineJudgment, REDACTED, Verdict,
};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use judge::{Judged, Retry};
use metrics::Metrics;
use record::{Client, Entry, Recorder};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use toolgate_core::ToolDef;
use toolgate_formats::Extractor;
use toolgate_validator::{Engine, Profile};

/// The largest request body accepted.
pub const MAX_REQUEST: usize = 64 * 1024 * 1024;
/// The largest upstream response (or streamed output) read.
pub const MAX_RESPONSE: usize = 64 * 1024 * 1024;

/// What the proxy does with answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Forward unchanged, record.
    Observe,
    /// Forward unchanged, add decision headers, record.
    Shadow,
    /// Run the pipeline and serve its decision.
    Enforce,
}

impl Mode {
    /// `observe`, `shadow` or `enforce`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Observe => "observe",
            Mode::Shadow => "shadow",
            Mode::Enforce => "enforce",
        }
    }
}

type Resolve = Box<dyn Fn(Option<&str>) -> (Profile, String) + Send + Sync>;
type MakeExtractors = Box<dyn Fn() -> Vec<Box<dyn Extractor>> + Send + Sync>;

/// Which engine (profile) judges a request.
pub enum Engines {
    /// One profile for every model.
    Fixed(Arc<Engine>),
    /// A profile per model (`--profile auto`, a `[models]` map): `resolve`
    /// maps the request's model to a profile and why it was chosen (`auto`'s
    /// source: `configured (glob)`, `by name (fragment)`, `default`),
    /// `extractors` builds the modes (built-ins and custom patterns) for
    /// each engine.
    PerModel {
        /// Model → profile and its source.
        resolve: Resolve,
        /// The modes every engine gets.
        extractors: MakeExtractors,
        /// Engines built so far, by profile name.
        cache: Mutex<HashMap<String, Arc<Engine>>>,
    },
}

impl Engines {
    /// One engine for every request.
    pub fn fixed(engine: Engine) -> Engines {
        Engines::Fixed(Arc::new(engine))
    }

    /// A profile per model.
    pub fn per_model(
        resolve: impl Fn(Option<&str>) -> (Profile, String) + Send + Sync + 'static,
        extractors: impl Fn() -> Vec<Box<dyn Extractor>> + Send + Sync + 'static,
    ) -> Engines {
        Engines::PerModel {
            resolve: Box::new(resolve),
            extractors: Box::new(extractors),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The engine for `model` and why its profile was chosen (`--profile`
    /// for a fixed one). A profile naming a mode no extractor provides falls
    /// back to the default profile (and says so in the log).
    pub fn engine_for(&self, model: Option<&str>) -> (Arc<Engine>, String) {
        match self {
            Engines::Fixed(e) => (Arc::clone(e), "--profile".into()),
            Engines::PerModel {
                resolve,
                extractors,
                cache,
            } => {
                let (profile, source) = resolve(model);
                // A poisoned lock only means a panic elsewhere; the map is valid.
                let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(e) = cache.get(&profile.name)
                    && e.profile == profile
                {
                    return (Arc::clone(e), source);
                }
                let name = profile.name.clone();
                let engine = Engine::with_extractors(extractors(), profile).unwrap_or_else(|e| {
                    tracing::warn!(profile = %name, error = %e, "profile unusable; using default");
                    Engine::with_extractors(extractors(), Profile::default())
                        .unwrap_or_else(|_| Engine::new(Profile::default()))
                });
                let engine = Arc::new(engine);
                // Profiles are few (one per model family); the bound only
                // guards against a resolver that invents names.
                if cache.len() >= 256 {
                    cache.clear();
                }
                cache.insert(name, Arc::clone(&engine));
                (engine, source)
            }
        }
    }
}

/// The proxy's settings.
pub struct ProxyConfig {
    /// The upstream base URL, e.g. `http://127.0.0.1:8000/v1`.
    pub upstream: String,
    /// What to do with answers.
    pub mode: Mode,
    /// Which profile judges which model.
    pub engines: Engines,
    /// Where exchanges are recorded.
    pub record: Option<PathBuf>,
    /// JSON pointers of request fields replaced by `"[redacted]"` in records.
    pub redact: Vec<String>,
    /// Re-rolls of sampling artifacts before the first byte (`enforce`).
    pub retries: u32,
    /// Upstream timeout: the whole answer when not streamed, the pause
    /// between two reads when streamed.
    pub timeout: Duration,
    /// Upstream connect timeout.
    pub connect_timeout: Duration,
    /// Called with every finished exchange (traces), off the request path.
    pub on_exchange: Option<crate::hook::ExchangeHook>,
    /// The largest request body accepted.
    pub max_request: usize,
    /// The most JSON values (objects, arrays, keys, strings, numbers,
    /// booleans, nulls) a chat request body may hold: what bounds the
    /// memory its reading costs (see [`DEFAULT_MAX_REQUEST_NODES`]).
    pub max_request_nodes: usize,
    /// The largest upstream answer (or streamed output) read.
    pub max_response: usize,
    /// The most JSON values an upstream answer, or one event of a stream,
    /// may hold: what bounds the memory its reading costs (see
    /// [`DEFAULT_MAX_RESPONSE_NODES`]); more is unchecked.
    pub max_response_nodes: usize,
    /// Chat completions served at once; more get a 503 at once.
    pub max_exchanges: usize,
    /// Streamed chat completions served at once (each holds its output);
    /// more get a 503 at once.
    pub max_streams: usize,
    /// How long a client may take to send its request body.
    pub client_timeout: Duration,
}

impl ProxyConfig {
    /// `observe` in front of `upstream` with the default profile, no
    /// recording, no retries, 300 s timeouts.
    pub fn new(upstream: impl Into<String>) -> ProxyConfig {
        ProxyConfig {
            upstream: upstream.into(),
            mode: Mode::Observe,
            engines: Engines::fixed(Engine::new(Profile::default())),
            record: None,
            redact: Vec::new(),
            retries: 0,
            timeout: Duration::from_secs(300),
            connect_timeout: Duration::from_secs(10),
            on_exchange: None,
            max_request: MAX_REQUEST,
            max_request_nodes: DEFAULT_MAX_REQUEST_NODES,
            max_response: MAX_RESPONSE,
            max_response_nodes: DEFAULT_MAX_RESPONSE_NODES,
            max_exchanges: 512,
            max_streams: 64,
            client_timeout: Duration::from_secs(30),
        }
    }
}

/// A configuration error.
#[derive(Debug)]
pub struct ConfigError(pub String);

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

/// The running proxy's state.
pub struct Proxy {
    cfg: ProxyConfig,
    base: String,
    origin: String,
    client: reqwest::Client,
    metrics: Arc<Metrics>,
    exchanges: Arc<tokio::sync::Semaphore>,
    streams: Arc<tokio::sync::Semaphore>,
    /// What the record thread shares with the handlers.
    recording: Arc<Recording>,
    /// The record thread (`None` with neither `--record` nor a hook).
    sink: Option<Sink>,
    /// Allowlists read before, by the bytes of the request's tools.
    tool_cache: request::ToolCache,
    /// hyper's client for non-streamed chat completions over plain HTTP
    /// (`None`: reqwest's, see [`upstream`]).
    upstream: Option<upstream::Upstream>,
}

/// The most finished exchanges written as one group (one write, one sync).
const GROUP_MAX: usize = 256;

/// Under load, groups are written at most this often: an exchange that
/// finishes within this time of the last write waits for the next group
/// (one sync then covers everything that finished meanwhile). An exchange
/// that finishes after a quiet spell is written at once.
const GROUP_EVERY: Duration = Duration::from_millis(10);

/// Finished exchanges' way out: the hook (traces), then the recorder.
struct Recording {
    recorder: Option<Recorder>,
    hook: Option<crate::hook::ExchangeHook>,
    metrics: Arc<Metrics>,
    /// The last recording failed (cleared by the next success).
    failing: std::sync::atomic::AtomicBool,
    /// Exchanges handed over and not yet written.
    in_flight: Arc<std::sync::atomic::AtomicUsize>,
}

impl Recording {
    /// Hands a group of exchanges to the hook and appends them to the
    /// record with one write and one sync. A failure is counted in
    /// `/metrics` and turns `/healthz` into a 503 until a write succeeds
    /// again.
    fn write_group(&self, group: Vec<Finished>) {
        /// Counts the group done however the write ends (a hook that
        /// panics included).
        struct Done<'a>(&'a std::sync::atomic::AtomicUsize, usize);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0
                    .fetch_sub(self.1, std::sync::atomic::Ordering::AcqRel);
            }
        }
        let _done = Done(&self.in_flight, group.len());
        // The request's tools are copied into the exchange only for a hook;
        // the recorder reads them from the request.
        let copy = self.hook.is_some();
        let mut group: Vec<Ready> = group
            .into_iter()
            .map(|f| match f {
                Finished::Whole(mut ex, deferred) => {
                    let client = deferred.and_then(|d| d.fill(&mut ex, copy));
                    Ready::Whole(ex, client)
                }
                Finished::Rendered(lines) => Ready::Rendered(lines),
            })
            .collect();
        if let Some(hook) = &self.hook {
            for ex in group.iter_mut().filter_map(|r| match r {
                Ready::Whole(ex, _) => Some(ex),
                Ready::Rendered(_) => None,
            }) {
                // The hook reads the judgment and the answer as JSON.
                for a in &mut ex.attempts {
                    if a.judged.is_none()
                        && let Some(j) = &a.judgment
                    {
                        a.judged = serde_json::to_value(j).ok();
                    }
                    if a.response.is_none()
                        && let Some(body) = &a.response_body
                    {
                        a.response = serde_json::from_slice(body).ok();
                    }
                }
                hook.call(ex);
            }
        }
        let Some(r) = &self.recorder else {
            return;
        };
        let entries: Vec<Entry<'_>> = group
            .iter()
            .map(|ready| match ready {
                Ready::Whole(ex, client) => {
                    Entry::Exchange(ex, client.as_ref().map(ClientRequest::client))
                }
                Ready::Rendered(lines) => Entry::Rendered(lines),
            })
            .collect();
        let ok = match r.append_entries(&entries) {
            Ok(path) => {
                tracing::debug!(path = %path.display(), exchanges = group.len(), "exchanges recorded");
                true
            }
            Err(e) => {
                tracing::error!(error = %e, exchanges = group.len(), "cannot record the exchanges");
                false
            }
        };
        self.failing
            .store(!ok, std::sync::atomic::Ordering::Relaxed);
        self.metrics.recorded(ok, group.len());
    }
}

/// A finished exchange on its way to the record thread.
enum Finished {
    /// The exchange itself, for a hook (which reads it whole): the record
    /// thread fills it in ([`Deferred`]) and writes it.
    Whole(Box<Exchange>, Option<Deferred>),
    /// Its lines, rendered on the worker that served it
    /// ([`Recorder::render`]): the record thread only appends bytes. The
    /// exchange's values are freed where they were allocated, and one
    /// buffer crosses threads instead of every string of the exchange.
    Rendered(Vec<u8>),
}

/// A [`Finished`] exchange as the record thread writes it.
enum Ready {
    Whole(Box<Exchange>, Option<ClientRequest>),
    Rendered(Vec<u8>),
}

/// The record thread: takes finished exchanges in groups (whatever queued
/// while the last group was written, and under load for the rest of
/// [`GROUP_EVERY`] after it), so that under load one sync covers many
/// exchanges and when idle each is written at once. Dropping it
/// writes what is queued, then ends the thread.
struct Sink {
    tx: Option<std::sync::mpsc::Sender<Finished>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Sink {
    fn start(recording: Arc<Recording>) -> std::io::Result<Sink> {
        let (tx, rx) = std::sync::mpsc::channel::<Finished>();
        let thread = std::thread::Builder::new()
            .name("toolgate-record".into())
            .spawn(move || {
                // When the last group was written and whether it was full.
                let mut last: Option<(Instant, bool)> = None;
                while let Ok(first) = rx.recv() {
                    // A sync costs the kernel more than writing an exchange:
                    // right after one (and with no backlog), let the group
                    // fill for the rest of GROUP_EVERY.
                    if let Some((at, false)) = last {
                        let since = at.elapsed();
                        if since < GROUP_EVERY {
                            std::thread::sleep(GROUP_EVERY - since);
                        }
                    }
                    let mut group = vec![first];
                    while group.len() < GROUP_MAX {
                        match rx.try_recv() {
                            Ok(ex) => group.push(ex),
                            Err(_) => break,
                        }
                    }
                    // A hook that panics loses its group, not the thread.
                    let full = group.len() >= GROUP_MAX;
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        recording.write_group(group)
                    }));
                    last = Some((Instant::now(), full));
                }
            })?;
        Ok(Sink {
            tx: Some(tx),
            thread: Some(thread),
        })
    }
}

impl Drop for Sink {
    fn drop(&mut self) {
        drop(self.tx.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Proxy {
    /// Checks the configuration and builds the HTTP client and recorder.
    pub fn new(cfg: ProxyConfig) -> Result<Proxy, ConfigError> {
        let base = cfg.upstream.trim_end_matches('/').to_string();
        let Some(scheme_end) = base.find("://") else {
            return Err(ConfigError(format!(
                "--upstream must be an http(s) URL such as http://127.0.0.1:8000/v1, not `{base}`"
            )));
        };
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(ConfigError(
                "--upstream must start with http:// or https://".into(),
            ));
        }
        let after = scheme_end + 3;
        let origin = match base[after..].find('/') {
            Some(i) => base[..after + i].to_string(),
            None => base.clone(),
        };
        if base[after..].contains(['?', '#']) {
            return Err(ConfigError(
                "--upstream is a base URL such as http://127.0.0.1:8000/v1: no query or fragment"
                    .into(),
            ));
        }
        let client = reqwest::Client::builder()
            .connect_timeout(cfg.connect_timeout)
            // A redirect would send the client's credentials elsewhere and
            // turn one answer into another's: relayed as the upstream's.
            .redirect(reqwest::redirect::Policy::none())
            .pool_idle_timeout(Duration::from_secs(90))
            // Small SSE frames go out as they come (reqwest's default too).
            .tcp_nodelay(true)
            .build()
            .map_err(|e| ConfigError(format!("cannot build the HTTP client: {e}")))?;
        let recorder = match &cfg.record {
            // A regular file or a dangling symlink there made
            // `create_dir_all` answer "File exists", which names no cause.
            Some(dir) if dir.symlink_metadata().is_ok() && !dir.is_dir() => {
                return Err(ConfigError(format!(
                    "--record {} is not a directory",
                    dir.display()
                )));
            }
            Some(dir) => Some(Recorder::new(dir, cfg.redact.clone()).map_err(|e| {
                ConfigError(format!(
                    "cannot create the record directory {}: {e}",
                    dir.display()
                ))
            })?),
            None => None,
        };
        let metrics = Arc::new(Metrics::new());
        let wanted = recorder.is_some() || cfg.on_exchange.is_some();
        let recording = Arc::new(Recording {
            recorder,
            hook: cfg.on_exchange.clone(),
            metrics: Arc::clone(&metrics),
            failing: std::sync::atomic::AtomicBool::new(false),
            in_flight: Arc::new(std::sync::atomic::AtomicUsize::new(0)),
        });
        let sink = if wanted {
            Some(
                Sink::start(Arc::clone(&recording))
                    .map_err(|e| ConfigError(format!("cannot start the record thread: {e}")))?,
            )
        } else {
            None
        };
        Ok(Proxy {
            exchanges: Arc::new(tokio::sync::Semaphore::new(cfg.max_exchanges.max(1))),
            streams: Arc::new(tokio::sync::Semaphore::new(cfg.max_streams.max(1))),
            upstream: upstream::Upstream::for_base(&base, cfg.connect_timeout),
            cfg,
            base,
            origin,
            client,
            metrics,
            recording,
            sink,
            tool_cache: request::ToolCache::default(),
        })
    }

    /// The HTTP routes.
    pub fn router(self: Arc<Self>) -> Router {
        Router::new()
            .route("/healthz", get(healthz))
            .route("/metrics", get(metrics_text))
            .route(
                "/v1/chat/completions",
                post(chat).fallback(chat_method_not_allowed),
            )
            .fallback(passthrough)
            .layer(DefaultBodyLimit::max(self.cfg.max_request))
            .with_state(self)
    }

    /// The routes as the server runs them: chat completions taken before
    /// the router (one comparison of method and path instead of the
    /// router's lookup, extractors and boxed services, on the route every
    /// model call takes), everything else through [`Proxy::router`].
    fn app(self: Arc<Self>) -> crate::server::App {
        let proxy = Arc::clone(&self);
        let hot = crate::server::Hot {
            takes: |method, path| method == Method::POST && path == "/v1/chat/completions",
            serve: Arc::new(move |req: Request<hyper::body::Incoming>| {
                Box::pin(chat(State(Arc::clone(&proxy)), req.map(Body::new)))
            }),
        };
        crate::server::App {
            router: self.router(),
            hot: Some(hot),
        }
    }

    /// The upstream URL for a proxy path (and query).
    fn upstream_url(&self, path_and_query: &str) -> String {
        format!("{}{}", self.origin, self.upstream_path(path_and_query))
    }

    /// The upstream's chat completions URL, with the client's query
    /// (`?api-version=…`: Azure OpenAI needs it).
    fn chat_url(&self, query: Option<&str>) -> String {
        self.upstream_url(&chat_target(query))
    }

    /// The upstream's path (and query) for a proxy path (and query):
    /// `/v1/REST` under the base URL's path, any other at the origin.
    fn upstream_path(&self, path_and_query: &str) -> String {
        let base_path = &self.base[self.origin.len()..];
        match path_and_query.strip_prefix("/v1") {
            Some(rest) if rest.is_empty() || rest.starts_with('/') || rest.starts_with('?') => {
                format!("{base_path}{rest}")
            }
            _ => path_and_query.to_string(),
        }
    }

    /// The upstream URL for a proxy path (and query), parsed, when what
    /// reqwest sends is the path and query checked: the URL parser removes
    /// dot-segments, reads `\` as `/` and encodes what a path may not hold,
    /// and a request so rewritten is not sent ([`target`]).
    fn url_as_checked(&self, path_and_query: &str) -> Option<reqwest::Url> {
        let url = reqwest::Url::parse(&self.upstream_url(path_and_query)).ok()?;
        let wanted = self.upstream_path(path_and_query);
        let (path, query) = match wanted.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (wanted.as_str(), None),
        };
        let same_path = url.path() == path || (path.is_empty() && url.path() == "/");
        (same_path && url.query() == query).then_some(url)
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Hands the finished exchange to the record thread (the hook, then
    /// the recorder), off the request path.
    fn record(self: &Arc<Self>, mut ex: Exchange, mut deferred: Option<Deferred>) {
        let Some(tx) = self.sink.as_ref().and_then(|s| s.tx.as_ref()) else {
            return;
        };
        // The client's credentials, echoed by the upstream anywhere, are
        // out of the exchange before the hook or the recorder reads it.
        if let Some(d) = deferred.as_mut()
            && !d.secrets.is_empty()
        {
            d.scrub();
            ex.scrub(&d.secrets);
        }
        // Without a hook the exchange is rendered here: the serialization
        // is the worker's, and so are the frees of everything it held.
        let finished = match (&self.recording.hook, &self.recording.recorder) {
            (None, Some(r)) => {
                let client = deferred.and_then(|d| d.fill(&mut ex, false));
                Finished::Rendered(r.render(&ex, client.as_ref().map(ClientRequest::client)))
            }
            _ => Finished::Whole(Box::new(ex), deferred),
        };
        self.recording
            .in_flight
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        if let Err(std::sync::mpsc::SendError(finished)) = tx.send(finished) {
            // The thread is gone (it never is: panics are caught there).
            self.recording.write_group(vec![finished]);
        }
    }

    /// Waits (at most `limit`) until every exchange handed over is written.
    pub fn flush(&self, limit: Duration) -> bool {
        let deadline = Instant::now() + limit;
        loop {
            if self
                .recording
                .in_flight
                .load(std::sync::atomic::Ordering::Acquire)
                == 0
            {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// Serves the proxy on `listen` until Ctrl-C or SIGTERM, then drains.
pub fn run_blocking(
    cfg: ProxyConfig,
    listen: SocketAddr,
    serve: crate::server::ServeOptions,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let proxy = Arc::new(Proxy::new(cfg)?);
    let pending = Arc::clone(&proxy.recording.in_flight);
    let kept = Arc::clone(&proxy);
    crate::server::run_blocking_until_idle(
        listen,
        move || proxy.app(),
        serve,
        on_ready,
        // Exchanges that finished are written before the process ends.
        move || pending.load(std::sync::atomic::Ordering::Acquire) == 0,
    )?;
    // Exchanges cut by the end of the grace were handed over as the
    // runtime stopped: written before the process ends.
    if !kept.flush(Duration::from_secs(5)) {
        tracing::warn!("recordings still queued at exit");
    }
    Ok(())
}

/// Starts the proxy on `127.0.0.1:0` in a background thread (tests, benches).
pub fn spawn(
    cfg: ProxyConfig,
) -> Result<crate::server::Background, Box<dyn std::error::Error + Send + Sync>> {
    spawn_with(cfg, crate::server::ServeOptions::default())
}

/// [`spawn`] with these server options (connection cap, header timeout).
pub fn spawn_with(
    cfg: ProxyConfig,
    opts: crate::server::ServeOptions,
) -> Result<crate::server::Background, Box<dyn std::error::Error + Send + Sync>> {
    let proxy = Arc::new(Proxy::new(cfg)?);
    Ok(crate::server::spawn_with(opts, move || proxy.app())?)
}

async fn healthz(State(p): State<Arc<Proxy>>) -> Response {
    if p.recording
        .failing
        .load(std::sync::atomic::Ordering::Relaxed)
    {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "recording failing: the last exchange could not be written\n",
        )
            .into_response();
    }
    "ok\n".into_response()
}

async fn metrics_text(State(p): State<Arc<Proxy>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        p.metrics.encode(),
    )
        .into_response()
}

/// Headers not forwarded in either direction (RFC 9110 §7.6.1's
/// connection fields, `accept-encoding`: the proxy reads the bodies, and
/// toolgate's own `x-toolgate-*`), besides those a `Connection` field names
/// ([`connection_named`]).
fn hop_by_hop(name: &HeaderName) -> bool {
    matches!(
        name.as_str(),
        "host"
            | "content-length"
            | "connection"
            | "keep-alive"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "proxy-connection"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "accept-encoding"
    ) || name.as_str().starts_with("x-toolgate-")
}

/// Which side a header map is forwarded to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Toward {
    /// A request, to the upstream: `Expect` is not forwarded (the proxy has
    /// read the body already); `Content-Encoding` is, since it describes
    /// the body sent.
    Upstream,
    /// An answer, to the client: `Content-Encoding` is dropped, as it
    /// always was (an answer reqwest decoded must not say it is encoded).
    Client,
}

/// Whether `name` is not forwarded toward `to`.
fn not_forwarded(name: &HeaderName, to: Toward) -> bool {
    hop_by_hop(name)
        || match to {
            Toward::Upstream => name == header::EXPECT,
            // An answer's `Content-Encoding` stays: the proxy relays coded
            // bytes as they came (no decompression) and refuses to judge
            // them ([`read_answer`]), so the header must go with them.
            Toward::Client => false,
        }
}

/// The fields a `Connection` header names (RFC 9110 §7.6.1: they are for
/// this connection only, removed by whoever forwards the message), as
/// lowercase names; empty (and free) without a `Connection` header.
fn connection_named(headers: &HeaderMap) -> Vec<String> {
    crate::http::tokens(headers, header::CONNECTION)
        .filter(|t| !t.is_empty())
        .filter_map(|t| std::str::from_utf8(t).ok())
        .map(str::to_ascii_lowercase)
        .collect()
}

/// The request headers forwarded upstream.
fn forward_headers(headers: &HeaderMap) -> HeaderMap {
    forwarded(headers, 0, Toward::Upstream, |_| true)
}

/// The request headers forwarded upstream with a chat completion: not the
/// client's `Content-Type` nor its `Content-Encoding` (only `identity` gets
/// this far), since the proxy sends JSON it has read and says so with its
/// own (`application/json`). Forwarding both sent the upstream two
/// `Content-Type` headers.
fn chat_headers(headers: &HeaderMap) -> HeaderMap {
    forwarded(headers, 0, Toward::Upstream, |k| {
        k != header::CONTENT_TYPE && k != header::CONTENT_ENCODING
    })
}

/// The upstream's response headers as sent to the client, with room for
/// toolgate's own `x-toolgate-*` headers (at most nine), so that adding
/// them does not grow and rehash the map.
fn response_headers(headers: &HeaderMap) -> HeaderMap {
    forwarded(headers, 9, Toward::Client, |_| true)
}

/// `headers` without those not forwarded toward `to`, those a `Connection`
/// field names and those `keep` refuses, with room for `more`.
fn forwarded(
    headers: &HeaderMap,
    more: usize,
    to: Toward,
    keep: impl Fn(&HeaderName) -> bool,
) -> HeaderMap {
    let named = connection_named(headers);
    let mut out = HeaderMap::with_capacity(headers.len() + more);
    for (k, v) in headers {
        if !not_forwarded(k, to) && keep(k) && !named.iter().any(|n| n == k.as_str()) {
            out.append(k.clone(), v.clone());
        }
    }
    out
}

/// A non-streamed answer read for judging ([`check::read_completion`]),
/// unless its body is content-coded: the proxy does not decompress, so
/// coded bytes cannot be checked (and an edit would serve plain JSON under
/// the upstream's `Content-Encoding`).
fn read_answer<'a>(
    answer: &'a Answer,
    parsed: &'a mut Option<Value>,
    keep: bool,
    max_nodes: usize,
) -> Result<check::Read<'a>, String> {
    if content_coded(&answer.headers) {
        return Err(coded_why(&answer.headers));
    }
    let content_type = answer
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    check::read_completion(content_type, &answer.bytes, parsed, keep, max_nodes)
}

/// Why a content-coded answer is not judged.
pub(crate) fn coded_why(headers: &HeaderMap) -> String {
    let coding = headers
        .get(header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("?");
    format!(
        "the answer is content-coded (`{}`): the proxy does not decompress, so it cannot be checked",
        check::clip(coding, 40)
    )
}

/// Whether a request body is content-coded (a `Content-Encoding` other
/// than `identity`): the chat route reads the body as JSON, so it refuses
/// such a body (415) rather than read or forward it as plain JSON.
pub(crate) fn content_coded(headers: &HeaderMap) -> bool {
    crate::http::tokens(headers, header::CONTENT_ENCODING)
        .any(|t| !t.is_empty() && !t.eq_ignore_ascii_case(b"identity"))
}

/// Another method on the chat route: a 405 with `Allow: POST` and an
/// OpenAI error object, as clients read every other refusal (it was an
/// empty body).
async fn chat_method_not_allowed(method: Method) -> Response {
    let mut r = error_response(
        StatusCode::METHOD_NOT_ALLOWED,
        &format!(
            "toolgate: {} takes POST, not {}",
            target::CHAT,
            check::clip(method.as_str(), 20)
        ),
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    r
}

fn error_response(status: StatusCode, message: &str) -> Response {
    (
        status,
        axum::Json(
            json!({"error": {"message": message, "type": "toolgate_proxy_error", "code": null}}),
        ),
    )
        .into_response()
}

fn now_unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn ms(since: Instant) -> f64 {
    since.elapsed().as_secs_f64() * 1000.0
}

/// Any other path: forwarded as is, the answer streamed back; a target
/// that is not a plain path, or that a server may read as the judged chat
/// route, is refused before anything is sent ([`target`]).
async fn passthrough(State(p): State<Arc<Proxy>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let upstream_chat = p.upstream_path(target::CHAT);
    let path = match target::check(
        &parts.method,
        &parts.uri,
        |path| p.upstream_path(path),
        &upstream_chat,
        p.cfg.mode == Mode::Enforce,
    ) {
        Ok(path) => path,
        Err((status, why)) => {
            p.metrics.refused("target");
            return error_response(status, &why);
        }
    };
    let body = match read_body(&p, &parts.headers, body).await {
        Ok(b) => b,
        Err(resp) => return resp,
    };
    forward_raw(&p, parts.method, path, &parts.headers, body).await
}

async fn forward_raw(
    p: &Proxy,
    method: Method,
    path: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let Some(url) = p.url_as_checked(path) else {
        return error_response(
            StatusCode::BAD_REQUEST,
            "toolgate: this path would not reach the upstream as it was sent (its URL would be rewritten); it is not passed through",
        );
    };
    let sent = p
        .client
        .request(method, url)
        .headers(forward_headers(headers))
        .body(body)
        .timeout(p.cfg.timeout)
        .send()
        .await;
    match sent {
        Ok(resp) => {
            let status = resp.status();
            let headers = response_headers(resp.headers());
            let mut out = Response::new(Body::from_stream(resp.bytes_stream()));
            *out.status_mut() = status;
            *out.headers_mut() = headers;
            out
        }
        Err(e) => {
            tracing::warn!(error = %upstream_error(&e), "upstream unreachable");
            error_response(
                StatusCode::BAD_GATEWAY,
                &format!("upstream: {}", upstream_error(&e)),
            )
        }
    }
}

/// An upstream error without its URL's credentials: reqwest errors name the
/// URL, which holds no secret here (the key is a header), but keep it short.
fn upstream_error(e: &reqwest::Error) -> String {
    let kind = if e.is_timeout() {
        "timeout"
    } else if e.is_connect() {
        "connection failed"
    } else if e.is_body() || e.is_decode() {
        "bad body"
    } else {
        "request failed"
    };
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "upstream");
    }
    let mut source = std::error::Error::source(e);
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    format!("{kind}: {text}")
}

/// The text of the credentials among `headers` (each field whose name
/// reads as a credential's, `toolgate_core::sanitize::is_credential_key`:
/// `Authorization`, `x-api-key`, `api-key`, `Cookie`, …): its value, and
/// the token after a scheme (`Bearer sk-…`'s `sk-…`), as
/// `crate::secrets::stored` keeps them (16 bytes or longer). An upstream
/// that echoes one (in its answer, an error event, a content type) must not
/// put it in a record or a log line; the client, which sent it, gets the
/// answer as it came. The values of the query's credential parameters
/// (`?key=AIza…`, `api_key=`, `sig=`: `sanitize::is_credential_param`)
/// are credentials the client sent too, as written (percent-encoded) and
/// decoded.
fn credential_texts(headers: &HeaderMap, query: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for pair in query.unwrap_or("").split('&') {
        let Some((name, value)) = pair.split_once('=') else {
            continue;
        };
        if toolgate_core::sanitize::is_credential_param(name) && !value.is_empty() {
            if let Some(decoded) = toolgate_core::sanitize::percent_decoded(value)
                && decoded != value
            {
                out.push(decoded);
            }
            out.push(value.to_string());
        }
    }
    for (name, value) in headers {
        // Every credential name holds one of these; most fields none, so
        // the word-by-word reading is skipped for them.
        let n = name.as_str();
        let maybe = [
            "auth",
            "key",
            "token",
            "secret",
            "pass",
            "cookie",
            "bearer",
            "credential",
        ]
        .iter()
        .any(|w| n.contains(w));
        if !maybe || !toolgate_core::sanitize::is_credential_key(n) {
            continue;
        }
        let text = String::from_utf8_lossy(value.as_bytes());
        let text = text.trim();
        if let Some((scheme, token)) = text.split_once(' ')
            && !scheme.is_empty()
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            out.push(token.trim().to_string());
        }
        out.push(text.to_string());
    }
    crate::secrets::stored(out)
}

/// One chat completion request, read.
pub(crate) struct Ctx {
    /// The request as a `Value`, read when needed (a re-emit; the record
    /// thread parses its own, see [`Deferred`]): see [`Ctx::request`].
    request: std::sync::OnceLock<Arc<Value>>,
    /// The request body as received: what is sent upstream, never copied.
    pub body: Bytes,
    pub headers: HeaderMap,
    /// The client's query string, forwarded with the request.
    pub query: Option<String>,
    /// The request's model, clipped to [`MAX_LABEL`] characters (it names
    /// metric series and log fields).
    pub model: Option<String>,
    pub task: Option<String>,
    pub tools: Arc<Vec<ToolDef>>,
    /// The request has a key that may ask for a JSON answer
    /// ([`request::Fields::json_keys`]).
    json_keys: bool,
    pub engine: Arc<Engine>,
    /// Why the engine's profile was chosen.
    pub profile_source: String,
    /// The client asked (`x-toolgate-raw: 1`) for the upstream's own
    /// message beside an edited one (`toolgate run` does, to score the model).
    pub raw: bool,
    pub started: Instant,
    /// The finished exchange goes somewhere (`--record`, the hook): only
    /// then are the request's tools copied into it.
    pub keep: bool,
    /// Stands for the client's request in the attempts that sent it while
    /// the request is not parsed yet; the record thread parses the body
    /// and puts the request in its place ([`Deferred`]).
    placeholder: Arc<Value>,
    /// The text of the client's credentials, read when needed: see
    /// [`Ctx::secrets`].
    secrets: std::sync::OnceLock<Vec<String>>,
}

/// What the record thread fills in from the client's request before the
/// hook and the recorder see the exchange: the request of every attempt
/// that sent it and, for a hook, the request's `tools`, `tool_choice` and
/// `functions` (the recorder reads those from the request itself).
/// Parsing and copying the request there keeps them off the request path
/// (the body is shared, not copied).
pub(crate) struct Deferred {
    body: Bytes,
    /// The attempts holding this (by address) sent the client's request.
    placeholder: Arc<Value>,
    /// The request, when the handler parsed it anyway (a re-emit).
    parsed: Option<Arc<Value>>,
    /// The text of the client's credentials ([`Ctx::secrets`]): scrubbed
    /// from the exchange before anyone reads it ([`Proxy::record`]).
    secrets: Vec<String>,
}

/// The client's request as the record thread hands it to the recorder
/// ([`Client`]).
enum ClientRequest {
    Parsed(Arc<Value>),
    Body {
        body: Bytes,
        placeholder: Arc<Value>,
    },
}

impl ClientRequest {
    fn client(&self) -> Client<'_> {
        match self {
            ClientRequest::Parsed(r) => Client::Parsed(r),
            ClientRequest::Body { body, placeholder } => Client::Body { body, placeholder },
        }
    }
}

impl Deferred {
    /// The client's request without the text of its credentials
    /// ([`Deferred::secrets`]): parsed and scrubbed when it may hold one
    /// (its bytes are written as they came otherwise).
    fn scrub(&mut self) {
        if !crate::secrets::json_may_hold(&self.body, &self.secrets) {
            return;
        }
        let mut v = match &self.parsed {
            Some(r) => Value::clone(r),
            None => request::read_value(&self.body).unwrap_or(Value::Null),
        };
        if crate::secrets::scrub_value(&mut v, &self.secrets) {
            self.parsed = Some(Arc::new(v));
        }
    }

    /// Fills `ex` in (see [`Deferred`]); with `copy` false, the request's
    /// `tools`, `tool_choice` and `functions` are not copied into it but
    /// left where they are: the request is returned, for the recorder to
    /// read them there ([`Recorder::append_from`]), as it came when the
    /// handler did not parse it (the recorder writes the body as it came
    /// when it can, and parses it otherwise).
    fn fill(self, ex: &mut Exchange, copy: bool) -> Option<ClientRequest> {
        if !copy && self.parsed.is_none() {
            return Some(ClientRequest::Body {
                body: self.body,
                placeholder: self.placeholder,
            });
        }
        let request = self
            .parsed
            .unwrap_or_else(|| Arc::new(request::read_value(&self.body).unwrap_or(Value::Null)));
        for a in &mut ex.attempts {
            if Arc::ptr_eq(&a.request, &self.placeholder) {
                a.request = Arc::clone(&request);
            }
        }
        if copy {
            ex.tools = request.get("tools").cloned();
            ex.tool_choice = request.get("tool_choice").cloned();
            ex.functions = request.get("functions").cloned();
            None
        } else {
            Some(ClientRequest::Parsed(request))
        }
    }
}

/// The longest model name or task kept in metrics, logs and headers.
pub const MAX_LABEL: usize = 200;

impl Ctx {
    /// The request as a `Value` (parsed once, on first use; re-rolls share
    /// it). The body was read before (every byte checked as a `Value`
    /// would check it), so it parses; `Null` if it ever did not.
    pub fn request(&self) -> &Arc<Value> {
        self.request
            .get_or_init(|| Arc::new(request::read_value(&self.body).unwrap_or(Value::Null)))
    }

    /// The text of the credentials the client sent upstream
    /// ([`credential_texts`]), which no record and no log line may hold
    /// when the upstream echoes them (read once, when first needed).
    pub fn secrets(&self) -> &[String] {
        self.secrets
            .get_or_init(|| credential_texts(&self.headers, self.query.as_deref()))
    }

    /// Whether the answer's text is judged for calls: not when the request
    /// declares no tools and asks for a JSON answer ([`Ctx::asks_json`]).
    /// Such an answer is the JSON document asked for: `{"name": "Alice",
    /// "age": 3}` read as a call was labelled `malformed_json` and counted
    /// a rejection of the model. Native calls are judged all the same.
    pub fn text_may_call(&self) -> bool {
        !self.tools.is_empty() || !self.asks_json()
    }

    /// Whether the request asks for a JSON answer, in any server's words:
    /// `response_format` of type `json_object`, `json_schema` or `json`
    /// (TGI), vLLM's `guided_json` or `structured_outputs.json`,
    /// llama.cpp's top-level `json_schema`, Ollama's `format` (`"json"` or
    /// a schema). The request is read for them only when the request
    /// reader met one of these keys, as JSON decodes it
    /// ([`request::Fields::json_keys`]): a search of the body's bytes
    /// missed `"response\u005fformat"`, and re-rolled the JSON answer.
    pub fn asks_json(&self) -> bool {
        if !self.json_keys {
            return false;
        }
        let r = self.request();
        let some = |v: Option<&Value>| v.is_some_and(|v| !v.is_null());
        matches!(
            r.pointer("/response_format/type").and_then(Value::as_str),
            Some("json_object" | "json_schema" | "json")
        ) || some(r.get("guided_json"))
            || some(r.pointer("/structured_outputs/json"))
            || some(r.get("json_schema"))
            || matches!(r.get("format"), Some(Value::String(f)) if f == "json")
            || r.get("format").is_some_and(Value::is_object)
    }

    /// Whether the request asked for one call at most
    /// (`parallel_tool_calls: false`), by the rule the importers and replay
    /// read it with ([`toolgate_core::choice::one_call_at_most`]; the full
    /// read refused a value that is not a boolean or null before).
    pub fn one_call_only(&self) -> bool {
        toolgate_core::choice::one_call_at_most(self.request().get("parallel_tool_calls"))
            == Ok(true)
    }

    /// Whether a rejected answer may be asked again (`--retries`, the
    /// re-emit): only when the request declares tools and asks for no JSON
    /// answer ([`Ctx::asks_json`]). A request without tools (or asking for
    /// JSON) wants text or JSON, not a call: an answer such as
    /// `{"name": "John Smith", "age": 30}` reads as a malformed call, and
    /// asking again for it tripled the cost and the wait for nothing.
    pub fn may_ask_again(&self) -> bool {
        !self.tools.is_empty() && !self.asks_json()
    }

    /// The exchange as it begins; the request's `tools`, `tool_choice` and
    /// `functions` are filled in by the record thread ([`Ctx::deferred`]).
    fn exchange(&self, mode: Mode, stream: bool) -> Exchange {
        Exchange {
            model: self.model.clone(),
            task: self.task.clone(),
            profile: Some(self.engine.profile.name.clone()),
            profile_source: Some(self.profile_source.clone()),
            mode: mode.as_str(),
            stream,
            ..Exchange::default()
        }
    }

    /// What the record thread fills in from the client's request (`None`
    /// when the exchange goes nowhere).
    fn deferred(&self) -> Option<Deferred> {
        self.keep.then(|| Deferred {
            body: self.body.clone(),
            placeholder: Arc::clone(&self.placeholder),
            parsed: self.request.get().cloned(),
            secrets: self.secrets().to_vec(),
        })
    }

    /// Sets the attempt's judgment: its verdict (the log line's) always,
    /// the judgment as recorded only when the exchange is kept (the record
    /// and the hook read it). `j` is the judgment that speaks for the
    /// whole answer ([`judge::speaks_for`]), the one its headers carry: with
    /// `n > 1`, choice 0's here said `execute` to the log, the metrics and
    /// the record while the client got `reject` (probe 44).
    fn set_judged(&self, attempt: &mut Attempt, j: Option<&Judged>) {
        attempt.verdict = j.map(Judged::verdict);
        attempt.judgment = j.filter(|_| self.keep).map(Judged::judgment);
    }

    /// The upstream's answer for the record, when the exchange is kept
    /// ([`Attempt::response_body`]: the bytes, shared, not parsed again
    /// on the request path).
    fn answer_kept(&self, bytes: &Bytes) -> Option<Bytes> {
        self.keep.then(|| bytes.clone())
    }

    /// A new attempt sending `sent` (`None`: the client's request). The
    /// request is kept only when the exchange goes somewhere.
    fn attempt(&self, sent: Option<&Arc<Value>>) -> Attempt {
        Attempt {
            request: match sent {
                _ if !self.keep => Arc::default(),
                Some(sent) => Arc::clone(sent),
                // The client's request: parsed by the record thread unless
                // the handler has it already.
                None => Arc::clone(self.request.get().unwrap_or(&self.placeholder)),
            },
            started_unix_ms: now_unix_ms(),
            ..Attempt::default()
        }
    }
}

/// Reads a request body within `--client-timeout` and the size limit: a
/// declared `Content-Length` over the limit is refused (413) before a byte
/// is read (so no `100 Continue` goes out), a body that grows past it is
/// refused (413) as it does, a body whose framing is broken (a bad chunk
/// size, a chunk longer than it said, a connection closed mid-body) gets a
/// 400, a body that does not arrive in time a 408.
async fn read_body(p: &Proxy, headers: &HeaderMap, body: Body) -> Result<Bytes, Response> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > p.cfg.max_request as u64) {
        return Err(too_large(p));
    }
    match tokio::time::timeout(
        p.cfg.client_timeout,
        axum::body::to_bytes(body, p.cfg.max_request),
    )
    .await
    {
        Ok(Ok(b)) => Ok(b),
        Ok(Err(e)) => Err(body_error(p, &e)),
        Err(_) => Err(error_response(
            StatusCode::REQUEST_TIMEOUT,
            "the request body did not arrive in time",
        )),
    }
}

fn too_large(p: &Proxy) -> Response {
    error_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        &format!(
            "the request body is larger than the limit ({} bytes)",
            p.cfg.max_request
        ),
    )
}

/// A body that could not be read: over the limit (413), else broken (400).
fn body_error(p: &Proxy, e: &axum::Error) -> Response {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    let mut ended_early = false;
    while let Some(cause) = source {
        if cause.is::<http_body_util::LengthLimitError>() {
            return too_large(p);
        }
        if let Some(h) = cause.downcast_ref::<hyper::Error>() {
            ended_early |= h.is_incomplete_message();
        }
        source = cause.source();
    }
    let why = if ended_early {
        "the request body is broken: the connection ended before the body did"
    } else {
        "the request body is broken: its framing is invalid (a bad chunk size or line, a chunk longer than it said)"
    };
    error_response(StatusCode::BAD_REQUEST, why)
}

async fn chat(State(p): State<Arc<Proxy>>, req: Request) -> Response {
    let started = Instant::now();
    let Ok(_exchange) = Arc::clone(&p.exchanges).try_acquire_owned() else {
        p.metrics.refused("busy");
        return busy("too many chat completions in flight");
    };
    let (parts, body) = req.into_parts();
    let headers = parts.headers;
    if content_coded(&headers) {
        p.metrics.refused("body");
        return error_response(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "toolgate: a chat completion's body must be plain JSON: no Content-Encoding other than identity",
        );
    }
    let body = match read_body(&p, &headers, body).await {
        Ok(b) => b,
        Err(resp) => {
            p.metrics.refused("body");
            return resp;
        }
    };
    // A header value may hold UTF-8 (a task named `été`): read as UTF-8,
    // a byte that is not read as U+FFFD, never dropped silently.
    let task = headers
        .get("x-toolgate-task")
        .map(|v| check::clip(&String::from_utf8_lossy(v.as_bytes()), MAX_LABEL));
    let read = if body.len() <= READ_INLINE {
        request::read(&p.tool_cache, &body, p.cfg.max_request_nodes)
    } else {
        read_large(&p, &body).await
    };
    let (fields, value) = match read {
        Ok(read) => read,
        Err(why) => {
            let query = parts.uri.query();
            return unreadable_request(&p, &headers, query, body, task, why, started).await;
        }
    };
    let model = fields.model.as_deref().map(|m| check::clip(m, MAX_LABEL));
    let stream = fields.stream;
    let (engine, profile_source) = p.engines().engine_for(model.as_deref());
    let raw = headers
        .get("x-toolgate-raw")
        .is_some_and(|v| v.as_bytes() == b"1");
    let request = std::sync::OnceLock::new();
    if let Some(v) = value {
        let _ = request.set(Arc::new(v));
    }
    let ctx = Ctx {
        tools: fields.tools,
        json_keys: fields.json_keys,
        engine,
        profile_source,
        raw,
        keep: p.sink.is_some(),
        placeholder: Arc::new(Value::Null),
        secrets: std::sync::OnceLock::new(),
        request,
        body,
        headers: chat_headers(&headers),
        query: parts.uri.query().map(str::to_string),
        model,
        task,
        started,
    };
    if stream {
        let Ok(permit) = Arc::clone(&p.streams).try_acquire_owned() else {
            p.metrics.refused("streams");
            return busy("too many streams in flight");
        };
        streaming::handle(p, ctx, permit).await
    } else {
        batch(p, ctx).await
    }
}

/// The largest request body read on the connection's worker. Reading a
/// body costs time in its size (a 56 MiB one, seconds), and a worker
/// serves its connections one poll at a time: a larger body is read on a
/// blocking thread, so that the other connections of its worker are
/// served meanwhile. A chat request is mostly far smaller, and read where
/// it is (no hand-off).
const READ_INLINE: usize = 1024 * 1024;

/// [`request::read`] on a blocking thread (see [`READ_INLINE`]).
async fn read_large(
    p: &Arc<Proxy>,
    body: &Bytes,
) -> Result<(request::Fields, Option<Value>), request::Unreadable> {
    let (proxy, bytes) = (Arc::clone(p), body.clone());
    let reading = tokio::task::spawn_blocking(move || {
        request::read(&proxy.tool_cache, &bytes, proxy.cfg.max_request_nodes)
    });
    match reading.await {
        Ok(read) => read,
        // The reader panicked (or the runtime is going down): not judged.
        Err(e) => Err(request::Unreadable::Invalid(format!(
            "the request body could not be read: {e}"
        ))),
    }
}

fn busy(why: &str) -> Response {
    let mut r = error_response(StatusCode::SERVICE_UNAVAILABLE, why);
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// A body the proxy cannot judge: refused with a 400 in `enforce`, passed
/// to the upstream in the other modes; recorded either way (with its
/// length and the reason, not its bytes: `--redact` cannot apply to text
/// that does not parse). A body of more JSON values than
/// `--max-request-nodes` is refused (413) in every mode, as a body over
/// `--max-request-mib` is: the limit bounds what the proxy builds.
async fn unreadable_request(
    p: &Arc<Proxy>,
    headers: &HeaderMap,
    query: Option<&str>,
    body: Bytes,
    task: Option<String>,
    why: request::Unreadable,
    started: Instant,
) -> Response {
    let too_many = matches!(why, request::Unreadable::TooManyNodes(_));
    let why = why.to_string();
    let mode = p.cfg.mode;
    let mut ex = Exchange {
        task,
        mode: mode.as_str(),
        request_error: Some(why.clone()),
        request_bytes: body.len(),
        ..Exchange::default()
    };
    let mut attempt = Attempt {
        started_unix_ms: now_unix_ms(),
        served: true,
        ..Attempt::default()
    };
    let resp = if too_many {
        attempt.error = Some(format!("refused: {why}"));
        attempt.status = StatusCode::PAYLOAD_TOO_LARGE.as_u16();
        error_response(StatusCode::PAYLOAD_TOO_LARGE, &format!("toolgate: {why}"))
    } else if mode == Mode::Enforce {
        attempt.error = Some(format!("refused: {why}"));
        // What the client got: no upstream answered, the proxy did.
        attempt.status = StatusCode::BAD_REQUEST.as_u16();
        error_response(StatusCode::BAD_REQUEST, &format!("toolgate: {why}"))
    } else {
        let t0 = Instant::now();
        let resp = forward_raw(p, Method::POST, &chat_target(query), headers, body).await;
        attempt.upstream_ms = ms(t0);
        attempt.status = resp.status().as_u16();
        attempt.error = Some(format!("not judged: {why}"));
        resp
    };
    ex.attempts.push(attempt);
    ex.total_ms = ms(started);
    let status = resp.status().as_u16();
    p.metrics.request(None, false, status);
    p.metrics.refused(if too_many { "body" } else { "request" });
    log_exchange(&ex, status);
    p.record(ex, None);
    resp
}

impl Proxy {
    fn engines(&self) -> &Engines {
        &self.cfg.engines
    }
}

use upstream::Answer;

async fn send_json(p: &Proxy, ctx: &Ctx, body: Bytes) -> Result<Answer, String> {
    if let Some(up) = &p.upstream {
        let fut = up.post_json(&ctx.headers, ctx.query.as_deref(), body, p.cfg.max_response);
        return match tokio::time::timeout(p.cfg.timeout, fut).await {
            Ok(r) => r,
            Err(_) => Err("timeout: the upstream did not answer in time".into()),
        };
    }
    let url = p.chat_url(ctx.query.as_deref());
    let fut = async {
        let mut resp = p
            .client
            .post(&url)
            .headers(ctx.headers.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| upstream_error(&e))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| upstream_error(&e))? {
            if bytes.len() + chunk.len() > p.cfg.max_response {
                return Err("the upstream answer is too large".to_string());
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(Answer {
            status,
            headers,
            bytes: Bytes::from(bytes),
        })
    };
    match tokio::time::timeout(p.cfg.timeout, fut).await {
        Ok(r) => r,
        Err(_) => Err("timeout: the upstream did not answer in time".into()),
    }
}

/// The native calls of a message as a transcript keeps them: `tool_calls`,
/// then a legacy `function_call` in the same shape.
fn native_of(choice: &ChoiceRead) -> Option<Vec<Value>> {
    let calls = match choice.tool_calls.as_deref() {
        Some(Value::Array(a)) => Some(a.clone()),
        Some(Value::Null) => Some(Vec::new()),
        _ => None,
    };
    match choice.function_call.as_deref().filter(|f| !f.is_null()) {
        Some(f) => {
            let mut calls = calls.unwrap_or_default();
            calls.push(judge::legacy_as_call(f));
            Some(calls)
        }
        None => calls,
    }
}

/// The fields of `choices[0]` a transcript keeps.
fn choice_fields(read: &Read) -> (String, Option<String>, Option<Vec<Value>>, Option<String>) {
    let Some(choice) = read.choices.first() else {
        return Default::default();
    };
    (
        choice.content.to_string(),
        choice.reasoning.as_deref().map(str::to_string),
        native_of(choice),
        choice.finish_reason.as_deref().map(str::to_string),
    )
}

/// With several choices, each one's decision in the record
/// ([`record::Judgment::choices`]; the transcript's fields are
/// `choices[0]`'s, and the answer itself is recorded whole).
fn set_choices(attempt: &mut Attempt, judged: &[Judged]) {
    if judged.len() > 1
        && let Some(j) = attempt.judgment.as_mut()
    {
        let entries = judged.iter().enumerate();
        j.choices = Some(Value::Array(
            entries
                .map(|(i, c)| Value::Object(judge::choice_entry(i as u64, c)))
                .collect(),
        ));
    }
}

/// Judges every choice of a (checked) response.
fn judge_response(ctx: &Ctx, read: &Read) -> Vec<Judged> {
    let text_calls = ctx.text_may_call();
    read.choices
        .iter()
        .map(|c| {
            judge::judge_choice(&ctx.engine, &ctx.tools, c, text_calls)
                .under_terms_of(|| ctx.one_call_only())
        })
        .collect()
}

/// Whether a re-emit can be asked: the request has a `messages` list to
/// append the exchange to. Without one (a list-less body passed on as it
/// came), the re-emit request would be the same request again, so the
/// rejection is served instead (second hostile-client probe).
fn can_reemit(request: &Value) -> bool {
    matches!(request.get("messages"), Some(Value::Array(_)))
}

/// The request with the re-emit exchange appended: the model's answer, then
/// the message asking for exactly one call in the primary format.
fn reemit_request(request: &Value, answer: &str, message: &str) -> Value {
    let mut r = request.clone();
    if let Some(Value::Array(messages)) = r.get_mut("messages") {
        messages.push(json!({"role": "assistant", "content": answer}));
        messages.push(json!({"role": "user", "content": message}));
    }
    r
}

/// An exchange in progress: recorded when dropped unfinished (the client
/// went away and axum dropped the handler), so that no exchange goes
/// unrecorded.
struct Pending {
    p: Arc<Proxy>,
    ex: Option<Exchange>,
    in_flight: Option<Attempt>,
    started: Instant,
    /// What the record thread fills in if the exchange ends here.
    deferred: Option<Deferred>,
}

impl Pending {
    fn ex(&mut self) -> &mut Exchange {
        // Taken only by `finish` and `drop`, which end its use.
        self.ex.get_or_insert_with(Exchange::default)
    }

    fn finish(mut self) -> Exchange {
        self.ex.take().unwrap_or_default()
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if let Some(mut ex) = self.ex.take() {
            if let Some(mut a) = self.in_flight.take() {
                a.error = Some("the client went away before the answer".into());
                ex.attempts.push(a);
            }
            ex.client_disconnected = true;
            ex.total_ms = ms(self.started);
            log_exchange(&ex, 499);
            self.p.metrics.request(ex.model.as_deref(), false, 499);
            self.p.record(ex, self.deferred.take());
        }
    }
}

/// The non-streamed exchange: ask, check, judge, maybe ask again, serve,
/// record.
async fn batch(p: Arc<Proxy>, ctx: Ctx) -> Response {
    let mode = p.cfg.mode;
    let mut pending = Pending {
        p: Arc::clone(&p),
        ex: Some(ctx.exchange(mode, false)),
        deferred: ctx.deferred(),
        in_flight: None,
        started: ctx.started,
    };
    // `None`: the client's request; a re-emit sends another.
    let mut request: Option<Arc<Value>> = None;
    let mut body = ctx.body.clone();
    let mut rerolls = 0;
    let mut reemitted = false;
    let mut usages: Vec<check::Counts> = Vec::new();
    let model = ctx.model.as_deref();
    let served: Response = loop {
        let t0 = Instant::now();
        pending.in_flight = Some(ctx.attempt(request.as_ref()));
        let answer = send_json(&p, &ctx, body.clone()).await;
        let mut attempt = pending.in_flight.take().unwrap_or_default();
        attempt.upstream_ms = ms(t0);
        p.metrics
            .upstream_latency(model, t0.elapsed().as_secs_f64());
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                p.metrics.upstream_error(model);
                tracing::warn!(
                    model = model.unwrap_or(""),
                    error = %crate::secrets::scrub(e.clone(), ctx.secrets()),
                    "upstream failed"
                );
                attempt.error = Some(e.clone());
                attempt.served = true;
                pending.ex().attempts.push(attempt);
                break error_response(StatusCode::BAD_GATEWAY, &format!("upstream: {e}"));
            }
        };
        attempt.status = answer.status.as_u16();
        if mode == Mode::Enforce
            && let Some(why) = not_relayed(answer.status)
        {
            p.metrics.upstream_error(model);
            attempt.error = Some(why.clone());
            pending.ex().attempts.push(attempt);
            break error_response(StatusCode::BAD_GATEWAY, &format!("upstream: {why}"));
        }
        if !answer.status.is_success() {
            // An error answer carries no call a client acts on: relayed.
            p.metrics.upstream_error(model);
            attempt.error = Some(format!("upstream status {}", answer.status));
            attempt.served = true;
            pending.ex().attempts.push(attempt);
            break raw_answer(answer.status, &answer.headers, answer.bytes);
        }
        if mode == Mode::Observe {
            // Forwarded as it came (status, headers, bytes); a copy is
            // checked and judged after, off the response path.
            let served = raw_answer(answer.status, &answer.headers, answer.bytes.clone());
            let ex = pending.finish();
            let served_ms = ms(ctx.started);
            let p = Arc::clone(&p);
            let after = move || observe_after(&p, &ctx, ex, attempt, &answer, served_ms);
            match tokio::runtime::Handle::try_current() {
                Ok(h) if !crate::server::stopping() => {
                    h.spawn(async move { after() });
                }
                _ => after(),
            }
            return served;
        }
        // Read in the borrowed pass when it can be (no `Value`); parsed
        // into `parsed` when it cannot. A `Value` to edit is made below
        // only when `enforce` changes the answer.
        let mut parsed: Option<Value> = None;
        let mut read = match read_answer(&answer, &mut parsed, ctx.keep, p.cfg.max_response_nodes) {
            Ok(read) => read,
            Err(why) => {
                p.metrics.unchecked(model);
                tracing::warn!(
                    model = model.unwrap_or(""),
                    error = %crate::secrets::scrub(why.clone(), ctx.secrets()),
                    "upstream answer refused"
                );
                attempt.error = Some(format!("unchecked: {why}"));
                attempt.served = true;
                pending.ex().attempts.push(attempt);
                if mode == Mode::Enforce {
                    break error_response(
                        StatusCode::BAD_GATEWAY,
                        &format!("toolgate: the upstream answer could not be checked: {why}"),
                    );
                }
                let mut out = raw_answer(answer.status, &answer.headers, answer.bytes);
                if mode == Mode::Shadow {
                    // What enforce would have done: refuse it.
                    let h = out.headers_mut();
                    h.insert(judge::names::DECISION, HeaderValue::from_static("reject"));
                    h.insert(judge::names::GATE, HeaderValue::from_static("unchecked"));
                    judge::insert_safe(h, judge::names::REASON, &why);
                }
                break out;
            }
        };
        if let Some(u) = read.usage.take() {
            // The object is read only when the exchange goes somewhere.
            attempt.usage = u.value.map(std::borrow::Cow::into_owned);
            usages.push(u.counts);
        }
        let judged = judge_response(&ctx, &read);
        // What the transcript keeps of the answer, when it goes somewhere.
        let (output, reasoning, tool_calls, finish) = if ctx.keep {
            choice_fields(&read)
        } else {
            Default::default()
        };
        attempt.reasoning = reasoning;
        attempt.tool_calls = tool_calls;
        attempt.finish_reason = finish;
        // The answer's verdict, one for the headers, the log line, the
        // metrics and the record.
        let speaks = judge::speaks_for(&judged);
        ctx.set_judged(&mut attempt, speaks);
        set_choices(&mut attempt, &judged);

        if mode == Mode::Enforce && judged.len() == 1 {
            // `may_ask_again` reads the request: only asked when a retry is.
            match judged[0].retry() {
                Retry::Reroll if rerolls < p.cfg.retries && ctx.may_ask_again() => {
                    rerolls += 1;
                    attempt.retry = Some("reroll");
                    attempt.output = output;
                    attempt.response_body = ctx.answer_kept(&answer.bytes);
                    p.metrics.retry(model, "reroll");
                    pending.ex().attempts.push(attempt);
                    continue;
                }
                Retry::Reemit(msg)
                    if !reemitted && can_reemit(ctx.request()) && ctx.may_ask_again() =>
                {
                    reemitted = true;
                    attempt.retry = Some("reemit");
                    p.metrics.retry(model, "reemit");
                    let output = if ctx.keep {
                        output
                    } else {
                        choice_fields(&read).0
                    };
                    let sent =
                        reemit_request(request.as_ref().unwrap_or(ctx.request()), &output, &msg);
                    body = Bytes::from(serde_json::to_vec(&sent).unwrap_or_default());
                    request = Some(Arc::new(sent));
                    attempt.output = output;
                    attempt.response_body = ctx.answer_kept(&answer.bytes);
                    pending.ex().attempts.push(attempt);
                    continue;
                }
                _ => {}
            }
        }
        attempt.served = true;
        let attempts = pending.ex().attempts.len() + 1;
        if let Some(j) = speaks {
            if j.native.as_ref().is_some_and(|n| !n.passes()) {
                p.metrics.native_rejected(model);
            }
            p.metrics
                .decision(model, j.decision(), j.label().as_str(), j.gate());
        }
        let mut headers = response_headers(&answer.headers);
        if mode != Mode::Observe
            && let Some(j) = speaks
        {
            j.insert_headers(&mut headers, attempts);
            insert_profile_headers(&mut headers, &ctx);
            if let Some(total) = check::usage_total(usages.iter().copied())
                && let Ok(v) = HeaderValue::from_str(&total)
            {
                headers.insert(judge::names::USAGE_TOTAL, v);
            }
        }
        // The record keeps the upstream's answer as it came; the client
        // gets the edit.
        attempt.response_body = ctx.answer_kept(&answer.bytes);
        // What enforce changes in each choice: when nothing, the answer is
        // served as its bytes; an answer the borrowed pass read is edited
        // over its bytes (`splice`), any other in a `Value`.
        let plan = if mode == Mode::Enforce {
            splice::plan(&judged, &read)
        } else {
            Vec::new()
        };
        drop(read);
        let edits = plan.iter().any(Option::is_some);
        let spliced = (edits && parsed.is_none() && !ctx.raw)
            .then(|| splice::edited(&answer.bytes, &plan))
            .flatten();
        drop(plan);
        let body = if let Some(spliced) = spliced {
            Bytes::from(spliced)
        } else if edits {
            // The borrowed pass read every byte as a `Value` parse reads
            // it, so this parse succeeds; were it ever to fail, the answer
            // is refused, never served unedited.
            let Some(mut served) = parsed
                .take()
                .or_else(|| serde_json::from_slice::<Value>(&answer.bytes).ok())
            else {
                attempt.output = output;
                attempt.error =
                    Some("unchecked: the answer could not be read again to edit".into());
                pending.ex().attempts.push(attempt);
                break error_response(
                    StatusCode::BAD_GATEWAY,
                    "toolgate: the upstream answer could not be edited",
                );
            };
            let mut changed = false;
            if let Some(Value::Array(choices)) = served.get_mut("choices") {
                for (choice, j) in choices.iter_mut().zip(&judged) {
                    if let Value::Object(c) = choice {
                        let before = ctx.raw.then(|| {
                            json!({"message": c.get("message"), "finish_reason": c.get("finish_reason")})
                        });
                        let edited = j.enforce_choice(c);
                        changed |= edited;
                        if let Some(before) = before
                            && edited
                        {
                            c.insert("toolgate_upstream".into(), before);
                        }
                    }
                }
            }
            if changed {
                Bytes::from(serde_json::to_vec(&served).unwrap_or_default())
            } else {
                answer.bytes
            }
        } else {
            answer.bytes
        };
        attempt.output = output;
        pending.ex().attempts.push(attempt);
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let mut out = Response::new(Body::from(body));
        *out.status_mut() = answer.status;
        *out.headers_mut() = headers;
        break out;
    };
    let mut ex = pending.finish();
    ex.total_ms = ms(ctx.started);
    ex.first_byte_ms = Some(ex.total_ms);
    let status = served.status().as_u16();
    p.metrics.request(model, false, status);
    log_exchange(&ex, status);
    p.record(ex, ctx.deferred());
    served
}

/// `observe`'s non-streamed answer after it was served: checked, judged,
/// counted, logged and recorded as `batch` would have.
fn observe_after(
    p: &Arc<Proxy>,
    ctx: &Ctx,
    mut ex: Exchange,
    mut attempt: Attempt,
    answer: &Answer,
    served_ms: f64,
) {
    let model = ctx.model.as_deref();
    let mut parsed = None;
    match read_answer(answer, &mut parsed, ctx.keep, p.cfg.max_response_nodes) {
        Err(why) => {
            p.metrics.unchecked(model);
            tracing::warn!(
                model = model.unwrap_or(""),
                error = %crate::secrets::scrub(why.clone(), ctx.secrets()),
                "upstream answer refused"
            );
            attempt.error = Some(format!("unchecked: {why}"));
        }
        Ok(read) => {
            let judged = judge_response(ctx, &read);
            let (output, reasoning, tool_calls, finish) = if ctx.keep {
                choice_fields(&read)
            } else {
                Default::default()
            };
            attempt.reasoning = reasoning;
            attempt.tool_calls = tool_calls;
            attempt.finish_reason = finish;
            let speaks = judge::speaks_for(&judged);
            ctx.set_judged(&mut attempt, speaks);
            set_choices(&mut attempt, &judged);
            if let Some(j) = speaks {
                if j.native.as_ref().is_some_and(|n| !n.passes()) {
                    p.metrics.native_rejected(model);
                }
                p.metrics
                    .decision(model, j.decision(), j.label().as_str(), j.gate());
            }
            attempt.output = output;
            attempt.response_body = ctx.answer_kept(&answer.bytes);
            attempt.usage = read
                .usage
                .and_then(|u| u.value)
                .map(std::borrow::Cow::into_owned);
        }
    }
    attempt.served = true;
    ex.attempts.push(attempt);
    ex.total_ms = served_ms;
    ex.first_byte_ms = Some(served_ms);
    let status = answer.status.as_u16();
    p.metrics.request(model, false, status);
    log_exchange(&ex, status);
    p.record(ex, ctx.deferred());
}

/// The proxy's chat path with the client's query, if any.
fn chat_target(query: Option<&str>) -> String {
    match query {
        Some(q) => format!("{}?{q}", target::CHAT),
        None => target::CHAT.to_string(),
    }
}

/// Why enforce does not relay an answer that is not a success (judged) nor
/// an error every client refuses (a 4xx or 5xx, relayed as it came), or
/// `None` when it does. A redirect: a client that follows it posts the
/// request again elsewhere, past the judgment (an SDK follows 307 by
/// default). Any other status (600–999, which hyper reads as a status; a
/// 1xx given as the final answer): Python's `requests` calls an answer
/// `ok` below 400 or from 600 on (`raise_for_status` passes it) and
/// `.json()` reads its calls, which enforce never judged.
pub(crate) fn not_relayed(status: StatusCode) -> Option<String> {
    if status.is_success() || status.is_client_error() || status.is_server_error() {
        None
    } else if status.is_redirection() {
        Some(format!(
            "the upstream redirected ({status}): not followed, not relayed"
        ))
    } else {
        Some(format!(
            "the upstream answered with status {}, neither a success nor an error: not relayed",
            status.as_u16()
        ))
    }
}

/// `x-toolgate-profile-source`: why the judging profile was chosen.
fn insert_profile_headers(headers: &mut HeaderMap, ctx: &Ctx) {
    judge::insert_safe(headers, judge::names::PROFILE_SOURCE, &ctx.profile_source);
}

fn raw_answer(status: StatusCode, headers: &HeaderMap, bytes: Bytes) -> Response {
    let mut out = Response::new(Body::from(bytes));
    *out.status_mut() = status;
    *out.headers_mut() = response_headers(headers);
    if let Some(ct) = headers.get(header::CONTENT_TYPE) {
        out.headers_mut().insert(header::CONTENT_TYPE, ct.clone());
    }
    out
}

/// One structured log line per exchange (never headers, never content).
fn log_exchange(ex: &Exchange, status: u16) {
    let (decision, label, gate) = ex
        .attempts
        .iter()
        .find(|a| a.served)
        .and_then(|a| a.verdict)
        .map_or(("", "", ""), |v| {
            (v.decision, v.label, v.gate.unwrap_or(""))
        });
    tracing::info!(
        target: "toolgate::proxy",
        model = ex.model.as_deref().unwrap_or(""),
        mode = ex.mode,
        stream = ex.stream,
        status,
        attempts = ex.attempts.len(),
        decision,
        label,
        gate,
        total_ms = ex.total_ms,
        client_disconnected = ex.client_disconnected,
        "exchange"
    );
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod credential_tests {
    use super::*;

    /// A key the client sent in the query (`?key=AIza…`, Google's way) was
    /// not scrubbed: an upstream that echoed its URL put it in the record.
    /// Its credential parameters count as written and decoded; the others
    /// (and values under the scrubbed minimum) do not.
    #[test]
    fn the_query_s_credential_parameters_are_secrets() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            "Bearer sk-proj-0123456789abcdef".parse().unwrap(),
        );
        let got = credential_texts(
            &headers,
            Some(
                "api-version=2024-06-01T00%3A00&key=AIzaSyA1234567890abcdefgh&sig=abc%2Fdef0123456789xyz&token=short&x",
            ),
        );
        assert_eq!(
            got,
            [
                "Bearer sk-proj-0123456789abcdef",
                "AIzaSyA1234567890abcdefgh",
                "sk-proj-0123456789abcdef",
                "abc%2Fdef0123456789xyz",
                "abc/def0123456789xyz",
            ]
        );
    }
}
