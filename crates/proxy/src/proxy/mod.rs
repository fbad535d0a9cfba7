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
//! hop-by-hop ones, `Accept-Encoding` (the proxy reads the body) and
//! `x-toolgate-task` (the task name recorded with the exchange). Headers are
//! never recorded or logged.
//!
//! # Modes
//!
//! - `observe`: the response is forwarded unchanged (streams byte for byte);
//!   the exchange is recorded with the decision the pipeline would take.
//! - `shadow`: the same, plus `x-toolgate-decision` / `x-toolgate-label`
//!   (and `-gate`, `-reason`, `-native`, `-profile`, `-attempts`) headers on
//!   non-streamed answers, and a last SSE comment
//!   `: toolgate decision=… label=…` on streams (headers of a stream leave
//!   before its end).
//! - `enforce`: the profile's pipeline runs on each choice's raw `content`
//!   with the request's `tools` as the allowlist ([`judge`]); `execute` turns
//!   the calls into `tool_calls`, anything else leaves the text without tool
//!   calls; native `tool_calls` are judged one by one and removed when they
//!   fail. Before the first byte is sent, a sampling artifact is re-rolled up
//!   to `--retries` times and several fallback candidates get the re-emit
//!   request once. JSON is edited in place: every field the proxy does not
//!   own is kept, and an answer with nothing to change is sent byte for byte.

pub mod judge;
pub mod metrics;
pub mod record;
pub mod sse;
mod streaming;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use judge::{Judged, Retry, judge};
use metrics::Metrics;
use record::{Attempt, Exchange, Recorder};
use serde_json::{Map, Value, json};
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

type Resolve = Box<dyn Fn(Option<&str>) -> Profile + Send + Sync>;
type MakeExtractors = Box<dyn Fn() -> Vec<Box<dyn Extractor>> + Send + Sync>;

/// Which engine (profile) judges a request.
pub enum Engines {
    /// One profile for every model.
    Fixed(Arc<Engine>),
    /// A profile per model (`--profile auto`, a `[models]` map): `resolve`
    /// maps the request's model to a profile, `extractors` builds the modes
    /// (built-ins and custom patterns) for each engine.
    PerModel {
        /// Model → profile.
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
        resolve: impl Fn(Option<&str>) -> Profile + Send + Sync + 'static,
        extractors: impl Fn() -> Vec<Box<dyn Extractor>> + Send + Sync + 'static,
    ) -> Engines {
        Engines::PerModel {
            resolve: Box::new(resolve),
            extractors: Box::new(extractors),
            cache: Mutex::new(HashMap::new()),
        }
    }

    /// The engine for `model`. A profile naming a mode no extractor
    /// provides falls back to the default profile (and says so in the log).
    pub fn engine_for(&self, model: Option<&str>) -> Arc<Engine> {
        match self {
            Engines::Fixed(e) => Arc::clone(e),
            Engines::PerModel {
                resolve,
                extractors,
                cache,
            } => {
                let profile = resolve(model);
                // A poisoned lock only means a panic elsewhere; the map is valid.
                let mut cache = cache.lock().unwrap_or_else(|p| p.into_inner());
                if let Some(e) = cache.get(&profile.name)
                    && e.profile == profile
                {
                    return Arc::clone(e);
                }
                let name = profile.name.clone();
                let engine = Engine::with_extractors(extractors(), profile).unwrap_or_else(|e| {
                    tracing::warn!(profile = %name, error = %e, "profile unusable; using default");
                    Engine::with_extractors(extractors(), Profile::default())
                        .unwrap_or_else(|_| Engine::new(Profile::default()))
                });
                let engine = Arc::new(engine);
                cache.insert(name, Arc::clone(&engine));
                engine
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
    metrics: Metrics,
    recorder: Option<Recorder>,
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
        let client = reqwest::Client::builder()
            .connect_timeout(cfg.connect_timeout)
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|e| ConfigError(format!("cannot build the HTTP client: {e}")))?;
        let recorder = match &cfg.record {
            Some(dir) => Some(Recorder::new(dir, cfg.redact.clone()).map_err(|e| {
                ConfigError(format!(
                    "cannot create the record directory {}: {e}",
                    dir.display()
                ))
            })?),
            None => None,
        };
        Ok(Proxy {
            cfg,
            base,
            origin,
            client,
            metrics: Metrics::new(),
            recorder,
        })
    }

    /// The HTTP routes.
    pub fn router(self: Arc<Self>) -> Router {
        Router::new()
            .route("/healthz", get(|| async { "ok\n" }))
            .route("/metrics", get(metrics_text))
            .route("/v1/chat/completions", post(chat))
            .fallback(passthrough)
            .layer(DefaultBodyLimit::max(MAX_REQUEST))
            .with_state(self)
    }

    /// The upstream URL for a proxy path (and query).
    fn upstream_url(&self, path_and_query: &str) -> String {
        match path_and_query.strip_prefix("/v1") {
            Some(rest) if rest.is_empty() || rest.starts_with('/') || rest.starts_with('?') => {
                format!("{}{rest}", self.base)
            }
            _ => format!("{}{path_and_query}", self.origin),
        }
    }

    /// The metrics.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// Writes the exchange off the request path (a blocking task: the
    /// atomic write syncs the file).
    fn record(self: &Arc<Self>, ex: Exchange) {
        if self.recorder.is_none() && self.cfg.on_exchange.is_none() {
            return;
        }
        let me = Arc::clone(self);
        tokio::task::spawn_blocking(move || {
            if let Some(hook) = &me.cfg.on_exchange {
                hook.call(&ex);
            }
            if let Some(r) = &me.recorder {
                match r.write(&ex) {
                    Ok(path) => tracing::debug!(path = %path.display(), "exchange recorded"),
                    Err(e) => tracing::error!(error = %e, "cannot record the exchange"),
                }
            }
        });
    }
}

/// Serves the proxy on `listen` until Ctrl-C or SIGTERM, then drains.
pub fn run_blocking(
    cfg: ProxyConfig,
    listen: SocketAddr,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let proxy = Arc::new(Proxy::new(cfg)?);
    crate::server::run_blocking(listen, move || proxy.router(), on_ready)?;
    Ok(())
}

/// Starts the proxy on `127.0.0.1:0` in a background thread (tests, benches).
pub fn spawn(
    cfg: ProxyConfig,
) -> Result<crate::server::Background, Box<dyn std::error::Error + Send + Sync>> {
    let proxy = Arc::new(Proxy::new(cfg)?);
    Ok(crate::server::spawn(move || proxy.router())?)
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

/// Headers not forwarded in either direction.
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
            | "content-encoding"
    ) || name.as_str().starts_with("x-toolgate-")
}

/// The request headers forwarded upstream.
fn forward_headers(headers: &HeaderMap) -> HeaderMap {
    let mut out = HeaderMap::new();
    for (k, v) in headers {
        if !hop_by_hop(k) {
            out.append(k.clone(), v.clone());
        }
    }
    out
}

/// The upstream's response headers as sent to the client.
fn response_headers(headers: &HeaderMap) -> HeaderMap {
    forward_headers(headers)
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

/// Any other path: forwarded as is, the answer streamed back.
async fn passthrough(State(p): State<Arc<Proxy>>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let path = parts
        .uri
        .path_and_query()
        .map(|pq| pq.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let body = match axum::body::to_bytes(body, MAX_REQUEST).await {
        Ok(b) => b,
        Err(_) => return error_response(StatusCode::PAYLOAD_TOO_LARGE, "request body too large"),
    };
    forward_raw(&p, parts.method, &path, &parts.headers, body).await
}

async fn forward_raw(
    p: &Proxy,
    method: Method,
    path: &str,
    headers: &HeaderMap,
    body: Bytes,
) -> Response {
    let url = p.upstream_url(path);
    let sent = p
        .client
        .request(method, &url)
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

/// One chat completion request, read.
pub(crate) struct Ctx {
    pub request: Map<String, Value>,
    pub headers: HeaderMap,
    pub model: Option<String>,
    pub task: Option<String>,
    pub tools: Vec<ToolDef>,
    pub engine: Arc<Engine>,
    pub started: Instant,
}

impl Ctx {
    fn exchange(&self, mode: Mode, stream: bool) -> Exchange {
        Exchange {
            model: self.model.clone(),
            task: self.task.clone(),
            tools: self.request.get("tools").cloned(),
            tool_choice: self.request.get("tool_choice").cloned(),
            mode: mode.as_str(),
            stream,
            ..Exchange::default()
        }
    }
}

/// The request's `tools` read as the loader reads a transcript's (OpenAI or
/// bare definitions). Unreadable tools allowlist nothing: fail closed.
fn request_tools(tools: Option<&Value>) -> Vec<ToolDef> {
    let Some(tools) = tools else {
        return Vec::new();
    };
    let mut obj = Map::new();
    obj.insert("output".into(), json!(""));
    obj.insert("tools".into(), tools.clone());
    toolgate_core::load::from_object(
        obj,
        std::path::Path::new("<request>"),
        None,
        "request".into(),
    )
    .map(|t| t.tools.to_vec())
    .unwrap_or_default()
}

async fn chat(State(p): State<Arc<Proxy>>, headers: HeaderMap, body: Bytes) -> Response {
    let started = Instant::now();
    let request = match serde_json::from_slice::<Value>(&body) {
        Ok(Value::Object(m)) => m,
        // Not ours to judge: the upstream answers it (usually with a 400).
        _ => return forward_raw(&p, Method::POST, "/v1/chat/completions", &headers, body).await,
    };
    let model = request
        .get("model")
        .and_then(Value::as_str)
        .map(str::to_string);
    let task = headers
        .get("x-toolgate-task")
        .and_then(|v| v.to_str().ok())
        .map(|t| t.chars().take(200).collect::<String>());
    let stream = request.get("stream").and_then(Value::as_bool) == Some(true);
    let ctx = Ctx {
        tools: request_tools(request.get("tools")),
        engine: p.engines().engine_for(model.as_deref()),
        request,
        headers: forward_headers(&headers),
        model,
        task,
        started,
    };
    if stream {
        streaming::handle(p, ctx).await
    } else {
        batch(p, ctx).await
    }
}

impl Proxy {
    fn engines(&self) -> &Engines {
        &self.cfg.engines
    }
}

/// What one non-streamed upstream attempt returned.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    bytes: Bytes,
}

async fn send_json(p: &Proxy, ctx: &Ctx, body: &Value) -> Result<Answer, String> {
    let url = p.upstream_url("/v1/chat/completions");
    let fut = async {
        let mut resp = p
            .client
            .post(&url)
            .headers(ctx.headers.clone())
            .header(header::CONTENT_TYPE, "application/json")
            .json(body)
            .send()
            .await
            .map_err(|e| upstream_error(&e))?;
        let status = resp.status();
        let headers = resp.headers().clone();
        let mut bytes = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(|e| upstream_error(&e))? {
            if bytes.len() + chunk.len() > MAX_RESPONSE {
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

/// The fields of `choices[0]` a transcript keeps.
fn choice_fields(resp: &Value) -> (String, Option<String>, Option<Vec<Value>>, Option<String>) {
    let choice = resp.pointer("/choices/0");
    let message = choice.and_then(|c| c.get("message"));
    let content = message
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let reasoning = message
        .and_then(|m| m.get("reasoning_content").or_else(|| m.get("reasoning")))
        .and_then(Value::as_str)
        .map(str::to_string);
    let tool_calls = match message.and_then(|m| m.get("tool_calls")) {
        Some(Value::Array(a)) => Some(a.clone()),
        Some(Value::Null) => Some(Vec::new()),
        _ => None,
    };
    let finish = choice
        .and_then(|c| c.get("finish_reason"))
        .and_then(Value::as_str)
        .map(str::to_string);
    (content, reasoning, tool_calls, finish)
}

/// Judges every choice of a response.
fn judge_response(ctx: &Ctx, resp: &Value) -> Vec<Judged> {
    let Some(choices) = resp.get("choices").and_then(Value::as_array) else {
        return Vec::new();
    };
    choices
        .iter()
        .map(|c| {
            let message = c.get("message");
            let content = message
                .and_then(|m| m.get("content"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let reasoning = message
                .and_then(|m| m.get("reasoning_content").or_else(|| m.get("reasoning")))
                .and_then(Value::as_str);
            let native = message
                .and_then(|m| m.get("tool_calls"))
                .and_then(Value::as_array)
                .map(Vec::as_slice);
            let finish = c.get("finish_reason").and_then(Value::as_str);
            judge(&ctx.engine, &ctx.tools, content, reasoning, native, finish)
        })
        .collect()
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

/// The non-streamed exchange: ask, judge, maybe ask again, serve, record.
async fn batch(p: Arc<Proxy>, ctx: Ctx) -> Response {
    let mode = p.cfg.mode;
    let mut ex = ctx.exchange(mode, false);
    let mut body = Value::Object(ctx.request.clone());
    let mut rerolls = 0;
    let mut reemitted = false;
    let model = ctx.model.as_deref();
    let served: Response = loop {
        let t0 = Instant::now();
        let mut attempt = Attempt {
            request: body.clone(),
            started_unix_ms: now_unix_ms(),
            ..Attempt::default()
        };
        let answer = send_json(&p, &ctx, &body).await;
        attempt.upstream_ms = ms(t0);
        p.metrics
            .upstream_latency(model, t0.elapsed().as_secs_f64());
        let answer = match answer {
            Ok(a) => a,
            Err(e) => {
                p.metrics.upstream_error(model);
                tracing::warn!(model = model.unwrap_or(""), error = %e, "upstream failed");
                attempt.error = Some(e.clone());
                attempt.served = true;
                ex.attempts.push(attempt);
                break error_response(StatusCode::BAD_GATEWAY, &format!("upstream: {e}"));
            }
        };
        attempt.status = answer.status.as_u16();
        let parsed = serde_json::from_slice::<Value>(&answer.bytes)
            .ok()
            .filter(|v| {
                answer.status.is_success() && v.get("choices").is_some_and(Value::is_array)
            });
        let Some(mut resp) = parsed else {
            if !answer.status.is_success() {
                p.metrics.upstream_error(model);
            }
            attempt.error = Some(if answer.status.is_success() {
                "the upstream answer is not a chat completion".into()
            } else {
                format!("upstream status {}", answer.status)
            });
            attempt.served = true;
            ex.attempts.push(attempt);
            break raw_answer(answer.status, &answer.headers, answer.bytes);
        };
        let judged = judge_response(&ctx, &resp);
        let (output, reasoning, tool_calls, finish) = choice_fields(&resp);
        attempt.output = output.clone();
        attempt.reasoning = reasoning;
        attempt.tool_calls = tool_calls;
        attempt.finish_reason = finish;
        attempt.response = Some(resp.clone());
        attempt.judged = judged.first().map(Judged::to_json);

        if mode == Mode::Enforce && judged.len() == 1 {
            match judged[0].retry() {
                Retry::Reroll if rerolls < p.cfg.retries => {
                    rerolls += 1;
                    attempt.retry = Some("reroll");
                    p.metrics.retry(model, "reroll");
                    ex.attempts.push(attempt);
                    continue;
                }
                Retry::Reemit(msg) if !reemitted => {
                    reemitted = true;
                    attempt.retry = Some("reemit");
                    p.metrics.retry(model, "reemit");
                    body = reemit_request(&body, &output, &msg);
                    ex.attempts.push(attempt);
                    continue;
                }
                _ => {}
            }
        }
        attempt.served = true;
        let attempts = ex.attempts.len() + 1;
        ex.attempts.push(attempt);
        if let Some(j) = judged.first() {
            let removed = j.native.as_ref().map_or(0, |n| n.removed.len());
            if removed > 0 {
                p.metrics.native_removed(model, removed);
            }
            p.metrics
                .decision(model, j.decision(), j.label().as_str(), j.gate());
        }
        let mut headers = response_headers(&answer.headers);
        if mode != Mode::Observe
            && let Some(j) = judged.first()
        {
            for (k, v) in j.headers(attempts) {
                if let Ok(v) = HeaderValue::from_str(&v) {
                    headers.insert(k, v);
                }
            }
        }
        let body = if mode == Mode::Enforce && needs_edit(&judged, &resp) {
            if let Some(Value::Array(choices)) = resp.get_mut("choices") {
                for (choice, j) in choices.iter_mut().zip(&judged) {
                    if let Value::Object(c) = choice {
                        j.enforce_choice(c);
                    }
                }
            }
            Bytes::from(serde_json::to_vec(&resp).unwrap_or_default())
        } else {
            answer.bytes
        };
        headers.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
        let mut out = Response::new(Body::from(body));
        *out.status_mut() = answer.status;
        *out.headers_mut() = headers;
        break out;
    };
    ex.total_ms = ms(ctx.started);
    ex.first_byte_ms = Some(ex.total_ms);
    let status = served.status().as_u16();
    p.metrics.request(model, false, status);
    log_exchange(&ex, status);
    p.record(ex);
    served
}

/// Whether `enforce` changes anything in this response: calls to turn into
/// `tool_calls`, native calls to remove, or a `finish_reason` to correct.
fn needs_edit(judged: &[Judged], resp: &Value) -> bool {
    judged.iter().enumerate().any(|(i, j)| {
        let finish = resp
            .pointer(&format!("/choices/{i}/finish_reason"))
            .cloned()
            .unwrap_or(Value::Null);
        j.executes()
            || j.native.as_ref().is_some_and(|n| !n.removed.is_empty())
            || finish != j.enforced_finish_reason()
    })
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
    let served = ex.attempts.iter().find(|a| a.served);
    let field = |k: &str| {
        served
            .and_then(|a| a.judged.as_ref())
            .and_then(|j| j.get(k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    tracing::info!(
        target: "toolgate::proxy",
        model = ex.model.as_deref().unwrap_or(""),
        mode = ex.mode,
        stream = ex.stream,
        status,
        attempts = ex.attempts.len(),
        decision = %field("decision"),
        label = %field("label"),
        gate = %field("gate"),
        total_ms = ex.total_ms,
        client_disconnected = ex.client_disconnected,
        "exchange"
    );
}
