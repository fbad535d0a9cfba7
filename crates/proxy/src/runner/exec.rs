//! Running a suite: the plan, the HTTP calls with retries, the transcripts.

use super::store::{sample_path, slug, write_new};
use super::suite::{Suite, Task};
use crate::gateway::record::REQUEST_SCHEMAS;
use crate::secrets::{replace_secrets, scrub};
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use toolgate_core::answer::check_completion;
use toolgate_core::import::{choice_error, content_text, legacy_function_call};
use toolgate_core::nodes::{Nodes, too_many_nodes};
use toolgate_core::sanitize::{redact_credentials, redact_member};

/// The file (in the output directory) where run errors are appended, one
/// JSON object per line. Its extension is not `.json`/`.jsonl`, so no reader
/// of transcripts ever takes a run error for a model's answer.
pub const ERRORS_FILE: &str = "run-errors.log";
/// The file (in the output directory) a run holds an exclusive advisory
/// lock on while it runs, so that two runs never write into one directory
/// at once. A hidden name, not `.json`: no reader takes it for a transcript.
const LOCK_FILE: &str = ".toolgate-run.lock";
/// The largest response body read; a bigger one is a run error.
pub const MAX_RESPONSE_BYTES: usize = 32 << 20;
/// The most JSON values an answer may hold (the proxy's
/// `--max-response-nodes` default, counted by the same `core::nodes`
/// before anything is built); more is a run error. The byte bound alone
/// let 32 MB of `[0,0,…]` cost some 2.5 GB as a `Value`, and its sample
/// (the answer, a copy of its calls, the task) held more values than the
/// loader reads in one document (`core::nodes::MAX_DOCUMENT_VALUES`), so
/// `label` refused it and a rerun never asked again. Twice this bound stays
/// under that limit.
pub const MAX_RESPONSE_VALUES: usize = crate::gateway::DEFAULT_MAX_RESPONSE_NODES;
/// The longest wait between two attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What `toolgate run` was asked to do.
#[derive(Clone, Debug)]
pub struct RunConfig {
    /// The endpoint's base URL as OpenAI clients take it (`http://host:8000/v1`);
    /// requests go to `BASE/chat/completions`.
    pub base_url: String,
    /// The models to run, each against every task.
    pub models: Vec<String>,
    /// Samples per (model, task).
    pub k: u32,
    /// The output directory.
    pub out: PathBuf,
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Per request (connect to last byte).
    pub timeout: Duration,
    /// Attempts after the first one, on network errors and retryable statuses.
    pub retries: u32,
    /// The first backoff; it doubles with every attempt (with jitter).
    pub retry_delay: Duration,
    /// `temperature`, when given (overrides a task's `request`).
    pub temperature: Option<f64>,
    /// `seed`: sample `s` is sent `seed + s - 1`, so that the k samples differ
    /// and a rerun sends each sample the same seed.
    pub seed: Option<i64>,
    /// `max_tokens`, when given (overrides a task's `request`).
    pub max_tokens: Option<u64>,
    /// Sent as `Authorization: Bearer …`; never written anywhere.
    pub api_key: Option<String>,
    /// Draw a progress bar on stderr (only when it is a terminal).
    pub progress: bool,
    /// Called with every answered sample (traces).
    pub on_sample: Option<crate::hook::SampleHook>,
}

/// One sample that could not be run (after every retry).
#[derive(Clone, Debug, PartialEq)]
pub struct SampleError {
    /// The model.
    pub model: String,
    /// The task.
    pub task: String,
    /// The sample (1-based).
    pub sample: u32,
    /// Attempts made.
    pub attempts: u32,
    /// The last error.
    pub error: String,
}

/// What a run did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunSummary {
    /// Samples in the plan (models × tasks × k).
    pub planned: usize,
    /// Already written by an earlier run: skipped.
    pub skipped: usize,
    /// Written by this run.
    pub written: usize,
    /// Samples that failed with a run error (no transcript written; a rerun
    /// tries them again).
    pub errors: Vec<SampleError>,
}

/// A run that could not start or could not write.
#[derive(Debug)]
pub enum RunError {
    /// Bad configuration.
    Config(String),
    /// The output directory could not be written.
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Config(m) => f.write_str(m),
            RunError::Io(p, e) => write!(f, "cannot write {}: {e}", p.display()),
        }
    }
}

impl std::error::Error for RunError {}

/// One (model, task, sample) to run.
#[derive(Clone, Debug)]
struct Job {
    model: String,
    task: usize,
    sample: u32,
    path: PathBuf,
}

/// The request body for one sample: `model`, `messages`, `tools` (left out
/// when the task has none: some servers refuse an empty list), `tool_choice`,
/// the task's extra `request` fields, then the command line's
/// `temperature`, `seed` and `max_tokens`, and `stream: false`.
pub fn request_body(task: &Task, model: &str, sample: u32, cfg: &RunConfig) -> Value {
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(task.messages.clone()));
    if !task.tools.is_empty() {
        body.insert("tools".into(), Value::Array(task.tools.clone()));
    }
    if let Some(choice) = &task.tool_choice {
        body.insert("tool_choice".into(), choice.clone());
    }
    for (k, v) in &task.request {
        body.insert(k.clone(), v.clone());
    }
    if let Some(t) = cfg.temperature {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(seed) = cfg.seed {
        // `run` refuses a seed any sample's value would overflow
        // ([`sample_seed`]) before a request is built; saturating keeps a
        // direct caller's overflow (only ever upwards: `sample - 1` is not
        // negative) at the largest seed, never a wrapped, negative one.
        let s = sample_seed(seed, sample).unwrap_or(i64::MAX);
        body.insert("seed".into(), json!(s));
    }
    if let Some(m) = cfg.max_tokens {
        body.insert("max_tokens".into(), json!(m));
    }
    body.insert("stream".into(), json!(false));
    Value::Object(body)
}

/// The seed sample `sample` (1-based) is sent: `seed + sample - 1`, or
/// `None` when that is past the largest `i64` (a wrapped seed would be
/// negative: another seed than asked for, and one some servers refuse).
fn sample_seed(seed: i64, sample: u32) -> Option<i64> {
    seed.checked_add(i64::from(sample) - 1)
}

/// The base URL without user name, password, query or fragment: what is
/// recorded in transcripts.
fn redacted_url(base: &str) -> String {
    match reqwest::Url::parse(base) {
        Ok(mut u) => {
            let _ = u.set_username("");
            let _ = u.set_password(None);
            u.set_query(None);
            u.set_fragment(None);
            u.to_string()
        }
        Err(_) => String::from("(unparseable)"),
    }
}

/// The choice a sample is read from, or why the answer is not one.
///
/// Through `toolgate proxy --mode enforce` (asked with `x-toolgate-raw`),
/// a choice carries the upstream's own answer: the sample is the model's
/// output, not the proxy's edit of it, so a run scores the same through the
/// proxy. The answer is then checked with the rules every other reader of
/// answers uses, so that nothing a run stores is read otherwise elsewhere:
/// its shape as the proxy checks it ([`check_completion`]: `tool_calls` that
/// are not an array of calls, a call-bearing field nobody reads), content
/// parts as the importer reads them, and the importer's provider-error rule
/// ([`choice_error`]: `finish_reason` `error` or `abort`, an `error` on the
/// choice). An answer refused here is a run error, never a sample: what it
/// holds is not the model's answer (README: endpoint failures are not model
/// failures).
fn answer_choice(response: &Value) -> Result<Value, String> {
    let mut answer = response.clone();
    if let Some(Value::Array(choices)) = answer.get_mut("choices") {
        for choice in choices.iter_mut() {
            let Value::Object(c) = choice else { continue };
            if c.get("toolgate_upstream").is_some_and(Value::is_object)
                && let Some(Value::Object(upstream)) = c.remove("toolgate_upstream")
            {
                c.extend(upstream);
            }
            // Content parts: their text, in order, as the importer reads
            // them (the proxy's shape check takes only text).
            if let Some(Value::Object(m)) = c.get_mut("message")
                && let Some(content) = m.get_mut("content")
                && content.is_array()
            {
                *content = Value::String(content_text(Some(content))?);
            }
        }
    }
    check_completion(&answer).map_err(|e| format!("the answer cannot be read: {e}"))?;
    let pos = first_choice(&answer)?;
    let choice = answer
        .get_mut("choices")
        .and_then(|c| c.get_mut(pos))
        .map(Value::take)
        .ok_or("the answer has no `choices`")?;
    if let Some(why) = choice_error(&choice) {
        return Err(format!("`choices[{pos}]` {why}"));
    }
    Ok(choice)
}

/// Where in `choices` the sample's choice stands: the one whose `index` is
/// 0, wherever it is listed (a choice without an `index` has its position,
/// as `toolgate import` reads choices), so a server that lists index 1
/// first is not scored on its second choice. No choice of index 0, or two,
/// is not one answer.
fn first_choice(answer: &Value) -> Result<usize, String> {
    let choices = answer
        .get("choices")
        .and_then(Value::as_array)
        .ok_or("the answer has no `choices`")?;
    let mut zero = choices.iter().enumerate().filter(|(pos, c)| {
        c.get("index")
            .map_or(Some(*pos as u64), Value::as_u64)
            .is_some_and(|i| i == 0)
    });
    match (zero.next(), zero.next()) {
        (Some((pos, _)), None) => Ok(pos),
        (Some((a, _)), Some((b, _))) => Err(format!(
            "the answer has two choices of index 0 (`choices[{a}]`, `choices[{b}]`)"
        )),
        (None, _) => Err("the answer has no choice of index 0".into()),
    }
}

/// The transcript of one answered sample (SPEC §2, flat form, with the
/// request and response kept); `choice` is what [`answer_choice`] read from
/// `response`.
pub fn transcript(
    task: &Task,
    model: &str,
    sample: u32,
    request: &Value,
    response: &Value,
    choice: &Value,
    run: Value,
) -> Value {
    let message = choice.get("message");
    let output = message
        .and_then(|m| m.get("content"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut t = Map::new();
    t.insert(
        "id".into(),
        json!(format!("{model}/{}/{sample}", task.task)),
    );
    t.insert("model".into(), json!(model));
    t.insert("task".into(), json!(task.task));
    t.insert("sample".into(), json!(sample));
    if !task.tags.is_empty() {
        t.insert("tags".into(), json!(task.tags));
    }
    t.insert("tools".into(), Value::Array(task.tools.clone()));
    if let Some(choice) = &task.tool_choice {
        t.insert("tool_choice".into(), choice.clone());
    }
    t.insert("expect".into(), task.expect.clone());
    t.insert("output".into(), json!(output));
    if let Some(r) = message.and_then(|m| {
        ["reasoning_content", "reasoning"]
            .iter()
            .find_map(|k| m.get(*k).and_then(Value::as_str))
    }) {
        t.insert("reasoning".into(), json!(r));
    }
    let mut calls = match message.and_then(|m| m.get("tool_calls")) {
        Some(Value::Array(calls)) => Some(calls.clone()),
        Some(Value::Null) => Some(Vec::new()),
        // Absent, or refused by `answer_choice`.
        _ => None,
    };
    // The legacy `function_call` after the native calls, whatever
    // `tool_calls` holds (one set), as the importer reads it.
    if let Some(Value::Array(legacy)) = message.and_then(legacy_function_call) {
        calls.get_or_insert_with(Vec::new).extend(legacy);
    }
    if let Some(calls) = calls {
        t.insert("tool_calls".into(), Value::Array(calls));
    }
    if let Some(fr) = choice.get("finish_reason").and_then(Value::as_str) {
        t.insert("finish_reason".into(), json!(fr));
    }
    t.insert("request".into(), request.clone());
    t.insert("response".into(), response.clone());
    t.insert("run".into(), run);
    Value::Object(t)
}

/// Makes a sample's transcript `t` hold no credential, before it is
/// written or handed to a hook, and lists in `run.redacted_members` the
/// path of every value changed (as `import.redacted_members` does):
///
/// - the stored `request` and `response` get the project's one rule
///   (`core::sanitize::redact_member`, as the importer's carried members
///   and the proxy's recorded request): every credential-named member at
///   any depth is `[redacted]` — a server that echoes the request headers
///   (`debug.headers.authorization`) no longer puts the key on disk. The
///   request's schemas (`tools`, `response_format`, …) are left, as the
///   recorder leaves them: their `password` properties are parameters;
///   so are the members read from the choice (`output`, `reasoning`,
///   `tool_calls`), the model's answer, which a member name cannot make a
///   secret of ours;
/// - every string (and member name) anywhere in `t` has each occurrence of
///   `secrets` ([`stored_secrets`]: the key itself) replaced by
///   `[redacted]`: a server may echo the key under any name
///   (`"echo": "Bearer sk-…"`), even in the model's output. An answer that
///   holds our key is not the model's to be scored on, so changing it is
///   the lesser harm, and the listed path says where it was changed.
fn redact_sample(t: &mut Value, secrets: &[String]) {
    let mut found = Vec::new();
    if let Some(Value::Object(request)) = t.get_mut("request") {
        for (k, v) in request.iter_mut() {
            if !REQUEST_SCHEMAS.contains(&k.as_str()) {
                redact_member(k, v, &format!("request.{k}"), &mut found, 0);
            }
        }
    }
    if let Some(response) = t.get_mut("response") {
        redact_credentials(response, "response", &mut found, 0);
    }
    if !secrets.is_empty() {
        replace_secrets(t, "", secrets, &mut found);
    }
    if !found.is_empty()
        && let Some(Value::Object(run)) = t.get_mut("run")
    {
        run.insert("redacted_members".into(), Value::Array(found));
    }
}

/// What no stored sample may hold, as text: the API key, the base URL's
/// password (as written and decoded) and the `Basic` credential its user
/// information is sent as ([`basic_credential`]), and the values of its
/// query members named as credentials
/// (`core::sanitize::is_credential_param`: a credential's name, Google's
/// `key`, a signature's `sig`; the rule the proxy and the importer apply
/// to URLs). Unlike the
/// error messages' [`secrets`], not every query value: `api-version`'s
/// `2024-06-01` is no secret, and would be cut out of answers. Values
/// shorter than [`crate::secrets::MIN_SCRUBBED`] bytes are left (the shared rule of
/// `crate::secrets`: a placeholder key such as `EMPTY` is a word a model
/// writes too). The rule holds for the base64 form as for any text: 16
/// characters of it encode 10 bytes or more of `user:password`, no word a
/// model writes, and a shorter one encodes a placeholder.
fn stored_secrets(cfg: &RunConfig) -> Vec<String> {
    let mut out: Vec<String> = cfg.api_key.iter().cloned().collect();
    if let Ok(url) = reqwest::Url::parse(&cfg.base_url) {
        out.extend(url.password().map(str::to_string));
        out.extend(decoded(url.password()));
        out.extend(basic_credential(&url));
        out.extend(
            url.query_pairs()
                .filter(|(k, _)| toolgate_core::sanitize::is_credential_param(k))
                .map(|(_, v)| v.into_owned()),
        );
    }
    crate::secrets::stored(out)
}

/// Why one attempt failed.
enum AttemptError {
    /// Worth another attempt (network, timeout, 408/409/425/429/5xx, a body
    /// that is not a chat completion or not an answer: [`answer_choice`]);
    /// with the server's `Retry-After`.
    Retry(String, Option<Duration>),
    /// Not worth another attempt (another 4xx: the request itself is wrong).
    Fatal(String),
}

/// A small xorshift generator for backoff jitter (no cryptographic use).
struct Jitter(u64);

impl Jitter {
    fn new() -> Jitter {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0x9e37_79b9);
        Jitter(nanos | 1)
    }
    /// A factor in [0.5, 1.0).
    fn factor(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        0.5 + (self.0 >> 11) as f64 / (1u64 << 53) as f64 / 2.0
    }
}

/// The wait before attempt `attempt + 1`: `delay · 2^attempt` with jitter,
/// at most 30 s, and at least the server's `Retry-After` (at most 60 s).
fn backoff(
    delay: Duration,
    attempt: u32,
    retry_after: Option<Duration>,
    j: &mut Jitter,
) -> Duration {
    let exp = delay
        .saturating_mul(1u32 << attempt.min(16))
        .min(MAX_BACKOFF);
    let wait = exp.mul_f64(j.factor());
    match retry_after {
        Some(ra) => wait.max(ra.min(MAX_RETRY_AFTER)),
        None => wait,
    }
}

/// The URL requests go to: `/chat/completions` appended to the base URL's
/// path, its query (Azure's `?api-version=`) kept after it, its fragment
/// (never sent) dropped.
fn chat_url(base: &reqwest::Url) -> reqwest::Url {
    let mut url = base.clone();
    let path = format!("{}/chat/completions", url.path().trim_end_matches('/'));
    url.set_path(&path);
    url.set_fragment(None);
    url
}

/// What no message may show: the API key, the base URL's user name,
/// password and query values (where some endpoints take their key), raw and
/// decoded, and the `Basic` credential the user and password are sent as
/// ([`basic_credential`]: an error page that echoes the request's headers
/// shows it). Values shorter than 4 bytes are left: replacing them would
/// mangle the message, not hide a secret.
fn secrets(cfg: &RunConfig) -> Vec<String> {
    let mut out: Vec<String> = cfg.api_key.iter().cloned().collect();
    if let Ok(url) = reqwest::Url::parse(&cfg.base_url) {
        out.push(url.username().to_string());
        out.extend(decoded(Some(url.username())));
        out.extend(url.password().map(str::to_string));
        out.extend(decoded(url.password()));
        out.extend(basic_credential(&url));
        if let Some(q) = url.query() {
            out.extend(
                q.split('&')
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(_, v)| v.to_string()),
            );
        }
        out.extend(url.query_pairs().map(|(_, v)| v.into_owned()));
    }
    crate::secrets::listed(out, 4)
}

/// A URL's user name or password as the server gets it: percent-decoded,
/// when that is UTF-8.
fn decoded(part: Option<&str>) -> Option<String> {
    part.and_then(toolgate_core::sanitize::percent_decoded)
}

/// The credential reqwest sends for a URL's user information: the header
/// value `Basic base64(user:password)` (standard alphabet, padded; user and
/// password percent-decoded, as reqwest's `extract_authority` takes them),
/// and the base64 token alone. Empty when the URL has no user information.
/// A server that echoes the request's headers echoes this, not the
/// password: the raw password alone is no protection.
fn basic_credential(url: &reqwest::Url) -> Vec<String> {
    use base64::prelude::{BASE64_STANDARD, Engine};
    let Some(user) = toolgate_core::sanitize::percent_decoded(url.username()) else {
        return Vec::new();
    };
    let password = url
        .password()
        .and_then(toolgate_core::sanitize::percent_decoded);
    if user.is_empty() && password.is_none() {
        return Vec::new();
    }
    let token = BASE64_STANDARD.encode(format!("{user}:{}", password.unwrap_or_default()));
    vec![format!("Basic {token}"), token]
}

fn snippet(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut s: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        s.push('…');
    }
    s
}

/// A task name as a header value: printable ASCII kept, anything else
/// percent-encoded (task names are free text).
fn task_header(task: &str) -> reqwest::header::HeaderValue {
    let mut out = String::new();
    for b in task.bytes().take(200) {
        if (b' '..=b'~').contains(&b) && b != b'%' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    reqwest::header::HeaderValue::from_str(&out)
        .unwrap_or_else(|_| reqwest::header::HeaderValue::from_static("-"))
}

async fn attempt(
    client: &reqwest::Client,
    url: &str,
    key: Option<&str>,
    task: &str,
    body: &Value,
) -> Result<(Value, Value), AttemptError> {
    let mut req = client
        .post(url)
        .json(body)
        // A proxy in front records the task with the exchange, and keeps the
        // upstream's raw answer beside its edit; other servers ignore both.
        .header("x-toolgate-task", task_header(task))
        .header("x-toolgate-raw", "1");
    if let Some(k) = key {
        req = req.bearer_auth(k);
    }
    let mut resp = req
        .send()
        .await
        .map_err(|e| AttemptError::Retry(request_failed(e), None))?;
    let status = resp.status();
    let retry_after = resp
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(Duration::from_secs);
    if status.is_redirection() {
        // Where it points, as transcripts record a URL (no user, password
        // or query); a relative `Location` against the URL asked.
        let to = resp
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| resp.url().join(v).ok())
            .map_or_else(
                || "nowhere readable".to_string(),
                |u| redacted_url(u.as_str()),
            );
        return Err(AttemptError::Fatal(format!(
            "the endpoint redirected (HTTP {status}) to {to}: not followed (give the URL it points to as --base-url)"
        )));
    }
    let mut bytes = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                    return Err(AttemptError::Retry(
                        format!("response body larger than {MAX_RESPONSE_BYTES} bytes"),
                        None,
                    ));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => {
                return Err(AttemptError::Retry(
                    format!(
                        "reading the response failed: {}",
                        error_chain(&e.without_url())
                    ),
                    None,
                ));
            }
        }
    }
    if !status.is_success() {
        let msg = format!("HTTP {status}: {}", snippet(&bytes));
        let code = status.as_u16();
        return Err(
            if matches!(code, 408 | 409 | 425 | 429) || status.is_server_error() {
                AttemptError::Retry(msg, retry_after)
            } else {
                AttemptError::Fatal(msg)
            },
        );
    }
    // Fewer bytes than two a value cannot hold more values than the bound
    // (`0,` is the smallest value with its separator): not counted.
    if bytes.len() >= 2 * MAX_RESPONSE_VALUES
        && too_many_nodes(&bytes, &Nodes::new(MAX_RESPONSE_VALUES))
    {
        return Err(AttemptError::Retry(
            format!("the answer holds more than {MAX_RESPONSE_VALUES} JSON values: not read"),
            None,
        ));
    }
    let value: Value = serde_json::from_slice(&bytes).map_err(|e| {
        AttemptError::Retry(
            format!("response is not JSON ({e}): {}", snippet(&bytes)),
            None,
        )
    })?;
    if let Some(err) = value.get("error").filter(|e| !e.is_null()) {
        return Err(AttemptError::Retry(
            format!(
                "the server answered with an error: {}",
                snippet(err.to_string().as_bytes())
            ),
            None,
        ));
    }
    let pos = first_choice(&value).map_err(|e| AttemptError::Retry(e, None))?;
    let has_message = value
        .get("choices")
        .and_then(|c| c.get(pos))
        .and_then(|c| c.get("message"))
        .is_some_and(Value::is_object);
    if !has_message {
        return Err(AttemptError::Retry(
            format!(
                "response has no `choices[{pos}].message`: {}",
                snippet(&bytes)
            ),
            None,
        ));
    }
    let choice = answer_choice(&value).map_err(|e| AttemptError::Retry(e, None))?;
    Ok((value, choice))
}

/// A request that got no answer, with the URL as transcripts record it
/// ([`redacted_url`]): reqwest's own message names the URL whole, query and
/// all.
fn request_failed(e: reqwest::Error) -> String {
    let url = e.url().map(|u| redacted_url(u.as_str()));
    let chain = error_chain(&e.without_url());
    match url {
        Some(url) => format!("request to {url} failed: {chain}"),
        None => format!("request failed: {chain}"),
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        s.push_str(": ");
        s.push_str(&cause.to_string());
        source = cause.source();
    }
    s
}

/// Asks the endpoint until it answers, a fatal error, or the retries are
/// spent. Returns the response and the number of attempts.
async fn call_with_retries(
    client: &reqwest::Client,
    url: &str,
    cfg: &RunConfig,
    task: &str,
    body: &Value,
) -> Result<((Value, Value), u32), (String, u32)> {
    let mut jitter = Jitter::new();
    let key = cfg.api_key.as_deref();
    let secrets = secrets(cfg);
    let mut n = 0;
    loop {
        n += 1;
        match attempt(client, url, key, task, body).await {
            Ok(v) => return Ok((v, n)),
            Err(AttemptError::Fatal(m)) => return Err((scrub(m, &secrets), n)),
            Err(AttemptError::Retry(m, retry_after)) => {
                if n > cfg.retries {
                    return Err((scrub(m, &secrets), n));
                }
                tokio::time::sleep(backoff(cfg.retry_delay, n - 1, retry_after, &mut jitter)).await;
            }
        }
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

enum Outcome {
    Written,
    AlreadyThere,
    Failed(SampleError),
    WriteFailed(PathBuf, std::io::Error),
}

/// Refuses two different `names` (of `kind`: models, tasks) whose
/// [`slug`]s agree. A cut or changed name carries only 32 bits of its hash,
/// so two names can share a file (`"a"×80 + "557538"` and `+ "696006"` do):
/// their samples would land on one path, the second answer dropped as
/// "already there" and the first task's file scored as the second's. The
/// check, not the hash, is what keeps every name's samples its own; it runs
/// before any request.
fn shared_slug<'a>(
    kind: &str,
    what: &str,
    names: impl Iterator<Item = &'a str>,
) -> Result<(), RunError> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for name in names {
        let s = slug(name);
        match seen.get(&s) {
            Some(&other) if other != name => {
                return Err(RunError::Config(format!(
                    "{kind} `{other}` and `{name}` would share the {what} `{s}`: rename one"
                )));
            }
            _ => {
                seen.insert(s, name);
            }
        }
    }
    Ok(())
}

/// Refuses an API key no request can carry: a control character (a
/// newline, from a file read with its line end) makes no header value, and
/// would fail every attempt as a retried client error. The key is not shown.
pub fn check_api_key(key: &str) -> Result<(), RunError> {
    if key.chars().any(|c| c != '\t' && c.is_ascii_control()) {
        return Err(RunError::Config(
            "the API key contains a control character (a newline?): it cannot be sent as a header"
                .into(),
        ));
    }
    Ok(())
}

/// Runs every sample of `suite` that `cfg.out` does not hold yet (each
/// model once, however often it is named). Blocks; builds its own runtime.
/// `OUT/run-errors.log` is removed first: it holds this run's errors only.
pub fn run(suite: &Suite, cfg: &RunConfig) -> Result<RunSummary, RunError> {
    if cfg.models.is_empty() {
        return Err(RunError::Config("no --model given".into()));
    }
    if cfg.k == 0 {
        return Err(RunError::Config("-k must be at least 1".into()));
    }
    // Not echoed: it may hold a password or a key.
    let parsed = reqwest::Url::parse(&cfg.base_url)
        .map_err(|e| RunError::Config(format!("--base-url is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(RunError::Config(format!(
            "--base-url must be http:// or https://, not `{}`",
            parsed.scheme()
        )));
    }
    if let Some(key) = &cfg.api_key {
        check_api_key(key)?;
        // reqwest sends the URL's user information as `Basic` auth and the
        // key as a second `Authorization` header: which one a server reads
        // is its guess, and the credential it ignores goes out anyway.
        // Neither is named.
        if !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(RunError::Config(
                "--base-url carries a user and password and an API key is set: give one".into(),
            ));
        }
    }
    // The last sample's seed is the largest: when it fits, every one does.
    if let Some(seed) = cfg.seed
        && sample_seed(seed, cfg.k).is_none()
    {
        return Err(RunError::Config(format!(
            "--seed {seed} with -k {k}: sample {k} would be sent {seed} + {}, past the largest seed; give at most {}",
            cfg.k - 1,
            i64::MAX - (i64::from(cfg.k) - 1),
            k = cfg.k,
        )));
    }
    // A model named twice would be asked every sample twice (and billed),
    // its second answers dropped as already there.
    let mut models: Vec<String> = Vec::with_capacity(cfg.models.len());
    for m in &cfg.models {
        if !models.contains(m) {
            models.push(m.clone());
        }
    }
    shared_slug(
        "models",
        "directory name",
        models.iter().map(String::as_str),
    )?;
    shared_slug(
        "tasks",
        "file name",
        suite.tasks.iter().map(|t| t.task.as_str()),
    )?;
    std::fs::create_dir_all(&cfg.out).map_err(|e| RunError::Io(cfg.out.clone(), e))?;
    // Every model's directory before any request: one that cannot be made
    // would fail the run after its answers were paid for.
    for m in &models {
        let dir = cfg.out.join(slug(m));
        if dir.exists() && !dir.is_dir() {
            return Err(RunError::Config(format!(
                "{} is not a directory: the samples of model `{m}` go there",
                dir.display()
            )));
        }
        std::fs::create_dir_all(&dir).map_err(|e| RunError::Io(dir.clone(), e))?;
    }
    // One run at a time into a directory: a second one would ask (and pay
    // for) every sample the first is asking, and remove the first's error
    // log. Held until `run` returns; the file stays (removing it would race
    // a run taking it).
    let lock_path = cfg.out.join(LOCK_FILE);
    let lock = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&lock_path)
        // A directory this user cannot write: the lock of a run that could.
        .or_else(|_| std::fs::File::open(&lock_path));
    match lock.as_ref().map(std::fs::File::try_lock) {
        Ok(Ok(())) => {}
        Ok(Err(std::fs::TryLockError::WouldBlock)) => {
            return Err(RunError::Config(format!(
                "another `toolgate run` is writing into {}: wait for it to end, or give another --out",
                cfg.out.display()
            )));
        }
        // No advisory lock on this file system: runs are not kept apart.
        Ok(Err(std::fs::TryLockError::Error(e))) if e.kind() == std::io::ErrorKind::Unsupported => {
        }
        Ok(Err(std::fs::TryLockError::Error(e))) => return Err(RunError::Io(lock_path, e)),
        // No lock file and none can be made here (a read-only directory):
        // this run can write no sample either, and a complete run reads
        // as it did.
        Err(_) => {}
    }
    // The log holds the run errors of the last run: each run sends again
    // every sample an earlier one failed, so an older line is either
    // answered now or logged again.
    let errors_path = cfg.out.join(ERRORS_FILE);
    match std::fs::remove_file(&errors_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(RunError::Io(errors_path, e));
        }
        _ => {}
    }

    // Sample-major order: an interrupted run leaves every cell with about the
    // same number of samples rather than half the matrix at k and half at 0.
    let mut summary = RunSummary::default();
    let mut jobs = VecDeque::new();
    for sample in 1..=cfg.k {
        for (ti, task) in suite.tasks.iter().enumerate() {
            for model in &models {
                summary.planned += 1;
                let path = sample_path(&cfg.out, model, &task.task, sample);
                if path.exists() {
                    summary.skipped += 1;
                } else {
                    jobs.push_back(Job {
                        model: model.clone(),
                        task: ti,
                        sample,
                        path,
                    });
                }
            }
        }
    }
    if jobs.is_empty() {
        return Ok(summary);
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| RunError::Config(format!("cannot start the async runtime: {e}")))?;
    // No redirect is followed (`attempt` makes one a run error): reqwest
    // would post the task again where it points, another host included,
    // with a `Referer` carrying the base URL's query (an `api-key=`).
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        .timeout(cfg.timeout)
        .connect_timeout(cfg.timeout.min(Duration::from_secs(30)))
        .build()
        .map_err(|e| RunError::Config(format!("cannot build the HTTP client: {e}")))?;
    let url = chat_url(&parsed).to_string();
    let recorded_url = redacted_url(&cfg.base_url);

    let bar = if cfg.progress {
        indicatif::ProgressBar::with_draw_target(
            Some(jobs.len() as u64),
            indicatif::ProgressDrawTarget::stderr(),
        )
    } else {
        indicatif::ProgressBar::hidden()
    };
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:30}] {pos}/{len} samples {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }

    let n_jobs = jobs.len();
    let queue = Arc::new(Mutex::new(jobs));
    let suite = Arc::new(suite.clone());
    let cfg = Arc::new(cfg.clone());
    let result = runtime.block_on(async {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for _ in 0..cfg.concurrency.clamp(1, 256).min(n_jobs) {
            let (queue, suite, cfg, client, url, tx) = (
                queue.clone(),
                suite.clone(),
                cfg.clone(),
                client.clone(),
                url.clone(),
                tx.clone(),
            );
            let recorded_url = recorded_url.clone();
            tokio::spawn(async move {
                loop {
                    let job = match queue.lock() {
                        Ok(mut q) => q.pop_front(),
                        Err(_) => None,
                    };
                    let Some(job) = job else { break };
                    let outcome = one(&client, &url, &recorded_url, &suite, &cfg, job).await;
                    if tx.send(outcome).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        while let Some(outcome) = rx.recv().await {
            bar.inc(1);
            match outcome {
                Outcome::Written => summary.written += 1,
                Outcome::AlreadyThere => summary.skipped += 1,
                Outcome::Failed(e) => {
                    let line = json!({
                        "time": now_secs(),
                        "model": e.model,
                        "task": e.task,
                        "sample": e.sample,
                        "attempts": e.attempts,
                        "error": e.error,
                    });
                    append_line(&errors_path, &line.to_string())
                        .map_err(|err| RunError::Io(errors_path.clone(), err))?;
                    summary.errors.push(e);
                    bar.set_message(format!("· {} run errors", summary.errors.len()));
                }
                Outcome::WriteFailed(path, e) => return Err(RunError::Io(path, e)),
            }
        }
        Ok(())
    });
    bar.finish_and_clear();
    result.map(|()| summary)
}

async fn one(
    client: &reqwest::Client,
    url: &str,
    recorded_url: &str,
    suite: &Suite,
    cfg: &RunConfig,
    job: Job,
) -> Outcome {
    let Some(task) = suite.tasks.get(job.task) else {
        return Outcome::AlreadyThere;
    };
    let body = request_body(task, &job.model, job.sample, cfg);
    let started = Instant::now();
    let started_at = SystemTime::now();
    match call_with_retries(client, url, cfg, &task.task, &body).await {
        Err((error, attempts)) => Outcome::Failed(SampleError {
            model: job.model,
            task: task.task.clone(),
            sample: job.sample,
            attempts,
            error,
        }),
        Ok(((response, choice), attempts)) => {
            let run = json!({
                "suite": suite.path.display().to_string(),
                "base_url": recorded_url,
                "attempts": attempts,
                "latency_ms": started.elapsed().as_millis() as u64,
                "time": now_secs(),
            });
            let mut t = transcript(task, &job.model, job.sample, &body, &response, &choice, run);
            redact_sample(&mut t, &stored_secrets(cfg));
            if let Some(hook) = &cfg.on_sample {
                hook.call(&crate::hook::Sample {
                    transcript: &t,
                    started: started_at,
                    elapsed: started.elapsed(),
                });
            }
            let mut bytes = match serde_json::to_vec_pretty(&t) {
                Ok(b) => b,
                Err(e) => return Outcome::WriteFailed(job.path, std::io::Error::other(e)),
            };
            bytes.push(b'\n');
            let path = job.path.clone();
            match tokio::task::spawn_blocking(move || write_new(&path, &bytes)).await {
                Ok(Ok(true)) => Outcome::Written,
                Ok(Ok(false)) => Outcome::AlreadyThere,
                Ok(Err(e)) => Outcome::WriteFailed(job.path, e),
                Err(e) => Outcome::WriteFailed(job.path, std::io::Error::other(e)),
            }
        }
    }
}

fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    writeln!(f, "{line}")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn cfg() -> RunConfig {
        RunConfig {
            base_url: "http://127.0.0.1:1/v1".into(),
            models: vec!["m".into()],
            k: 3,
            out: PathBuf::from("/nonexistent"),
            concurrency: 1,
            timeout: Duration::from_secs(1),
            retries: 0,
            retry_delay: Duration::from_millis(1),
            temperature: None,
            seed: None,
            max_tokens: None,
            api_key: None,
            progress: false,
            on_sample: None,
        }
    }

    fn task() -> Task {
        let line = r#"{"task":"t","messages":[{"role":"user","content":"x"}],"tools":[],"expect":{"calls":[]},"request":{"temperature":0.2,"max_tokens":5}}"#;
        Suite::parse(Path::new("s"), line).unwrap().tasks.remove(0)
    }

    #[test]
    fn the_command_line_overrides_the_task_and_seeds_differ_per_sample() {
        let mut c = cfg();
        c.temperature = Some(0.7);
        c.seed = Some(10);
        let body = request_body(&task(), "m", 3, &c);
        assert_eq!(body["temperature"], json!(0.7));
        assert_eq!(body["max_tokens"], json!(5));
        assert_eq!(body["seed"], json!(12));
        assert_eq!(body["stream"], json!(false));
        // No tools: the key is left out, not sent empty.
        assert!(body.get("tools").is_none());
    }

    #[test]
    fn credentials_in_the_base_url_are_not_recorded() {
        assert_eq!(
            redacted_url("http://user:secret@host:8000/v1?api_key=k#x"),
            "http://host:8000/v1"
        );
    }

    #[test]
    fn the_api_key_is_scrubbed_from_error_messages() {
        assert_eq!(
            scrub("HTTP 401: bad key sk-abcdef".into(), &["sk-abcdef".into()]),
            "HTTP 401: bad key [redacted]"
        );
    }

    #[test]
    fn backoff_doubles_is_capped_and_honours_retry_after() {
        let mut j = Jitter::new();
        let d = Duration::from_millis(100);
        for _ in 0..100 {
            let b0 = backoff(d, 0, None, &mut j);
            assert!(b0 >= Duration::from_millis(50) && b0 < Duration::from_millis(100));
            let b3 = backoff(d, 3, None, &mut j);
            assert!(b3 >= Duration::from_millis(400) && b3 < Duration::from_millis(800));
            assert!(backoff(d, 40, None, &mut j) <= MAX_BACKOFF);
            assert_eq!(
                backoff(d, 0, Some(Duration::from_secs(600)), &mut j),
                MAX_RETRY_AFTER
            );
        }
    }

    #[test]
    fn the_transcript_keeps_output_reasoning_native_calls_and_the_exchange() {
        let t = task();
        let response = json!({"choices": [{"finish_reason": "tool_calls", "message": {
            "role": "assistant", "content": null, "reasoning_content": "hmm",
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]});
        let req = request_body(&t, "m", 1, &cfg());
        let choice = answer_choice(&response).unwrap();
        let v = transcript(&t, "m", 1, &req, &response, &choice, json!({}));
        assert_eq!(v["output"], json!(""));
        assert_eq!(v["reasoning"], json!("hmm"));
        assert_eq!(v["finish_reason"], json!("tool_calls"));
        assert_eq!(v["tool_calls"][0]["id"], json!("c1"));
        assert_eq!(v["request"], req);
        assert_eq!(v["id"], json!("m/t/1"));
        // It loads as a transcript.
        let obj = v.as_object().unwrap().clone();
        let loaded =
            toolgate_core::load::from_object(obj, Path::new("x.json"), None, "x".into()).unwrap();
        assert_eq!(loaded.task.as_deref(), Some("t"));
        assert_eq!(loaded.sample, Some(1));
        assert_eq!(loaded.tool_calls.map(|c| c.len()), Some(1));
    }

    #[test]
    fn a_bad_base_url_is_refused_before_anything_runs() {
        let suite = Suite {
            path: PathBuf::from("s"),
            tasks: vec![task()],
        };
        let mut c = cfg();
        c.base_url = "ftp://x".into();
        let err = run(&suite, &c).unwrap_err().to_string();
        assert_eq!(err, "--base-url must be http:// or https://, not `ftp`");
    }

    /// A loopback endpoint answering every request with `answer(n)` (`n`:
    /// the request's number, from 0): status and body. Returns the base URL
    /// and every request's head (request line and headers), as received.
    fn serve(
        answer: impl Fn(usize) -> (u16, String) + Send + 'static,
    ) -> (String, Arc<Mutex<Vec<String>>>) {
        serve_raw(move |n| {
            let (status, body) = answer(n);
            format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )
        })
    }

    /// [`serve`], answering each request with the whole text `answer(n)`
    /// (status line, head and body).
    fn serve_raw(
        answer: impl Fn(usize) -> String + Send + 'static,
    ) -> (String, Arc<Mutex<Vec<String>>>) {
        use std::io::{BufRead, BufReader, Read};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let seen = heads.clone();
        std::thread::spawn(move || {
            for (n, stream) in listener.incoming().enumerate() {
                let Ok(mut stream) = stream else { return };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut head = String::new();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                        break;
                    }
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    head.push_str(&line);
                }
                let mut body = vec![0; length];
                let _ = reader.read_exact(&mut body);
                seen.lock().unwrap().push(head);
                let _ = stream.write_all(answer(n).as_bytes());
            }
        });
        (format!("http://127.0.0.1:{port}/v1"), heads)
    }

    fn one_task_suite() -> Suite {
        Suite {
            path: PathBuf::from("s"),
            tasks: vec![task()],
        }
    }

    /// One task, one sample, against a server that answers `body` to every
    /// request, with `with` adjusting the config: the summary, the sample
    /// when one was written, and the output directory.
    fn one_sample(
        body: String,
        with: impl FnOnce(&mut RunConfig),
    ) -> (RunSummary, Option<Value>, tempfile::TempDir) {
        let (url, _) = serve(move |_| (200, body.clone()));
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.k = 1;
        c.out = out.path().to_path_buf();
        with(&mut c);
        let summary = run(&one_task_suite(), &c).unwrap();
        let sample = std::fs::read(sample_path(out.path(), "m", "t", 1))
            .ok()
            .map(|b| serde_json::from_slice(&b).unwrap());
        (summary, sample, out)
    }

    /// A chat completion whose only choice is `choice`.
    fn answer_with(choice: Value) -> String {
        json!({"id": "x", "object": "chat.completion", "choices": [choice]}).to_string()
    }

    /// Probe 42, bug 1: provider errors and answers of a shape no other
    /// reader takes were stored as the model's samples (`no_call`,
    /// `truncation` when labelled). Each is a run error, retried, and
    /// never a transcript.
    #[test]
    fn provider_errors_and_unreadable_answers_are_run_errors_not_samples() {
        let msg = |extra: Value| {
            let mut m = json!({"role": "assistant", "content": ""});
            m.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            m
        };
        let cases = [
            (
                json!({"index": 0, "message": msg(json!({})), "finish_reason": "error"}),
                r#"`choices[0]` ended in a provider error, not an answer: `finish_reason` "error""#,
            ),
            (
                json!({"index": 0, "message": msg(json!({"content": "partial <tool_call>{\"name\""})),
                       "finish_reason": "abort"}),
                r#"`choices[0]` ended in a provider error, not an answer: `finish_reason` "abort""#,
            ),
            (
                json!({"index": 0, "message": msg(json!({})), "finish_reason": "stop",
                       "error": {"message": "upstream overloaded"}}),
                "`choices[0]` ended in a provider error, not an answer: `error`: upstream overloaded",
            ),
            (
                json!({"index": 0, "finish_reason": "tool_calls", "message": msg(json!({"tool_calls":
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}}))}),
                "the answer cannot be read: `tool_calls` is not an array",
            ),
            (
                json!({"index": 0, "finish_reason": "tool_calls",
                       "message": msg(json!({"tool_calls": "[{\"id\":\"c1\"}]"}))}),
                "the answer cannot be read: `tool_calls` is not an array",
            ),
        ];
        for (choice, why) in cases {
            let body = answer_with(choice.clone());
            let (url, heads) = serve(move |_| (200, body.clone()));
            let out = tempfile::tempdir().unwrap();
            let mut c = cfg();
            c.base_url = url;
            c.k = 1;
            c.retries = 1;
            c.out = out.path().to_path_buf();
            let summary = run(&one_task_suite(), &c).unwrap();
            assert_eq!(summary.written, 0, "{choice}");
            assert_eq!(summary.errors.len(), 1, "{choice}");
            let e = &summary.errors[0];
            assert!(e.error.starts_with(why), "{choice}: {}", e.error);
            // Retried as any answer that is not one.
            assert_eq!(e.attempts, 2, "{choice}");
            assert_eq!(heads.lock().unwrap().len(), 2);
            assert!(!sample_path(out.path(), "m", "t", 1).exists());
            let log = std::fs::read_to_string(out.path().join(ERRORS_FILE)).unwrap();
            assert_eq!(log.lines().count(), 1);
        }
    }

    /// Probe 42, bug 1: a legacy `function_call` was dropped (the sample a
    /// `no_call`); it is the call, as `toolgate import` reads it.
    #[test]
    fn a_legacy_function_call_is_kept_as_the_importer_keeps_it() {
        let body = answer_with(json!({"index": 0, "finish_reason": "function_call",
            "message": {"role": "assistant", "content": null,
                        "function_call": {"name": "get_weather", "arguments": "{\"city\":\"Antwerp\"}"}}}));
        let (summary, sample, _out) = one_sample(body, |_| {});
        assert_eq!((summary.written, summary.errors.len()), (1, 0));
        let t = sample.unwrap();
        assert_eq!(
            t["tool_calls"],
            json!([{"type": "function",
                    "function": {"name": "get_weather", "arguments": "{\"city\":\"Antwerp\"}"}}])
        );
        assert_eq!(t["finish_reason"], json!("function_call"));
    }

    /// Probe 44: the legacy call beside `tool_calls` (null, as the OpenAI
    /// SDK's `model_dump()` writes it, or a list) was dropped, as the
    /// importer dropped it; it follows the native calls, as there.
    #[test]
    fn a_legacy_function_call_beside_tool_calls_is_kept_after_them() {
        let legacy = json!({"name": "delete_all", "arguments": "{}"});
        let native = json!([{"id": "c", "type": "function",
                             "function": {"name": "get_weather", "arguments": "{\"city\":\"A\"}"}}]);
        for (tool_calls, names) in [
            (Value::Null, vec!["delete_all"]),
            (native, vec!["get_weather", "delete_all"]),
        ] {
            let body = answer_with(json!({"index": 0, "finish_reason": "function_call",
                "message": {"role": "assistant", "content": null,
                            "function_call": legacy, "tool_calls": tool_calls}}));
            let (summary, sample, _out) = one_sample(body, |_| {});
            assert_eq!((summary.written, summary.errors.len()), (1, 0));
            let t = sample.unwrap();
            let got: Vec<&str> = t["tool_calls"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["function"]["name"].as_str().unwrap())
                .collect();
            assert_eq!(got, names);
        }
    }

    /// Content parts are read as the importer reads them: their text, in
    /// order; a part that is not text is an answer that cannot be read.
    #[test]
    fn content_parts_are_read_as_the_importer_reads_them() {
        let parts = |p: Value| {
            json!({"choices": [{"index": 0, "finish_reason": "stop",
                   "message": {"role": "assistant", "content": p}}]})
        };
        let ok = answer_choice(&parts(json!([{"type": "text", "text": "a"},
                                             {"type": "text", "text": "b"}])))
        .unwrap();
        assert_eq!(ok["message"]["content"], json!("ab"));
        assert_eq!(
            answer_choice(&parts(json!([{"type": "image_url", "image_url": {}}]))).unwrap_err(),
            "`content[0]` is not a text part (type image_url)"
        );
    }

    /// Probe 42, bug 2: `/chat/completions` was glued onto the end of the
    /// base URL, query included (`/v1?api-key=K/chat/completions`), and
    /// error messages showed the query. The path gets it and the query
    /// follows; no message or log line shows the query or the userinfo.
    #[test]
    fn the_base_urls_query_follows_the_path_and_is_never_shown() {
        let (url, heads) = serve(|_| {
            (
                404,
                "Cannot POST /v1/chat/completions?api-version=2024-06-01&api-key=qs-secret".into(),
            )
        });
        let base = url.replace("http://", "http://user:pw-secret@")
            + "/?api-version=2024-06-01&api-key=qs-secret";
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = base.clone();
        c.k = 1;
        c.out = out.path().to_path_buf();
        let summary = run(&one_task_suite(), &c).unwrap();
        let head = heads.lock().unwrap()[0].clone();
        assert!(
            head.starts_with(
                "POST /v1/chat/completions?api-version=2024-06-01&api-key=qs-secret HTTP/1.1\r\n"
            ),
            "{head}"
        );
        assert_eq!(
            summary.errors[0].error,
            "HTTP 404 Not Found: Cannot POST /v1/chat/completions?api-version=[redacted]&api-key=[redacted]"
        );

        // No answer at all: reqwest's message names the URL, shown redacted.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        c.base_url = format!("http://user:pw-secret@127.0.0.1:{port}/v1?api-key=qs-secret");
        let summary = run(&one_task_suite(), &c).unwrap();
        let error = &summary.errors[0].error;
        assert!(
            error.starts_with(&format!(
                "request to http://127.0.0.1:{port}/v1/chat/completions failed: "
            )),
            "{error}"
        );
        let log = std::fs::read_to_string(out.path().join(ERRORS_FILE)).unwrap();
        assert_eq!(log.lines().count(), 1);
        for text in [error.as_str(), log.as_str()] {
            assert!(
                !text.contains("qs-secret") && !text.contains("pw-secret"),
                "{text}"
            );
            assert!(!text.contains("user"), "{text}");
        }
        // A base URL that does not parse is not echoed.
        c.base_url = "http://pw-secret@[::1".into();
        let err = run(&one_task_suite(), &c).unwrap_err().to_string();
        assert!(!err.contains("pw-secret"), "{err}");
    }

    /// s50 audit: a 307 from the endpoint was followed to wherever it
    /// pointed (another host and port here) with the task's body, and
    /// reqwest's `Referer` carried the base URL's query there, its
    /// `api-key` included; the answer of that other server was then stored
    /// as the endpoint's sample. A redirect is a run error, not followed
    /// (as the proxy never follows one), not retried.
    #[test]
    fn a_redirect_is_not_followed_and_nothing_reaches_where_it_points() {
        let (elsewhere, seen) = serve(|_| (200, ok_answer()));
        let location = format!("{elsewhere}/chat/completions?token=theirs");
        let (redirecting, _) = serve_raw(move |_| {
            format!(
                "HTTP/1.1 307 Temporary Redirect\r\nlocation: {location}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
            )
        });
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = format!("{redirecting}?api-key=qs-secret-0123456789");
        c.k = 1;
        c.retries = 2;
        c.out = out.path().to_path_buf();
        let summary = run(&one_task_suite(), &c).unwrap();
        for head in seen.lock().unwrap().iter() {
            assert!(!head.contains("qs-secret"), "the key followed: {head}");
        }
        assert_eq!(seen.lock().unwrap().len(), 0);
        assert_eq!(summary.written, 0);
        assert_eq!(summary.errors.len(), 1);
        assert_eq!(summary.errors[0].attempts, 1);
        assert_eq!(
            summary.errors[0].error,
            format!(
                "the endpoint redirected (HTTP 307 Temporary Redirect) to {elsewhere}/chat/completions: not followed (give the URL it points to as --base-url)"
            )
        );
    }

    /// A task line whose one tool's `parameters` nests `levels` deep in
    /// all (the line's own object is the first level).
    fn task_nested(levels: usize) -> String {
        // line(1) tools(2) [0](3) function(4), then the schema: `{}` is
        // one level, `{"enum":[1]}` two, and each `properties.x` two more.
        let schema_levels = levels - 4;
        let mut schema = match schema_levels % 2 {
            1 => String::from("{}"),
            _ => String::from(r#"{"enum":[1]}"#),
        };
        for _ in 0..(schema_levels - 1) / 2 {
            schema = format!(r#"{{"type":"object","properties":{{"x":{schema}}}}}"#);
        }
        format!(
            r#"{{"task":"t","messages":[{{"role":"user","content":"x"}}],"tools":[{{"type":"function","function":{{"name":"f","parameters":{schema}}}}}],"expect":{{"calls":[]}}}}"#
        )
    }

    /// s50 audit: a task line as deep as serde_json reads was run, and
    /// each sample, which holds the task's `tools` one level deeper (its
    /// `request`), was a file the loader refuses (`recursion limit
    /// exceeded`): `label` lost every sample and a rerun, finding the
    /// files, never asked again. Such a line is refused when the suite is
    /// read; one level less runs and its sample loads.
    #[test]
    fn a_task_nested_deeper_than_a_sample_can_hold_is_refused_up_front() {
        use toolgate_core::nodes::{MAX_READ_DEPTH, nesting};
        let line = task_nested(MAX_READ_DEPTH);
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(nesting(&v), MAX_READ_DEPTH);
        let err = Suite::parse(Path::new("s.jsonl"), &line).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "s.jsonl:1: task `t`: the task nests {MAX_READ_DEPTH} levels deep: a sample holds its `messages` and `tools` one level deeper, past the {MAX_READ_DEPTH} levels a transcript is read with"
            )
        );
        let suite = Suite::parse(Path::new("s.jsonl"), &task_nested(MAX_READ_DEPTH - 1)).unwrap();
        let (url, _) = serve(|_| (200, ok_answer()));
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.k = 1;
        c.out = out.path().to_path_buf();
        assert_eq!(run(&suite, &c).unwrap().written, 1);
        let loaded = toolgate_core::load::load_file(&sample_path(out.path(), "m", "t", 1));
        assert_eq!(loaded[0].as_ref().map(|t| t.output.as_str()), Ok("hi"));
    }

    /// s50 audit: a second `toolgate run` into the directory a first one
    /// was writing asked (and paid for) every sample the first was asking,
    /// and removed the first's `run-errors.log`. It is refused before any
    /// request, the log left alone.
    #[test]
    fn a_second_run_into_the_same_directory_is_refused_while_the_first_runs() {
        let (url, heads) = serve(|_| (200, ok_answer()));
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join(ERRORS_FILE), "{}\n").unwrap();
        let held = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(out.path().join(LOCK_FILE))
            .unwrap();
        held.lock().unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.k = 1;
        c.out = out.path().to_path_buf();
        let err = run(&one_task_suite(), &c).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "another `toolgate run` is writing into {}: wait for it to end, or give another --out",
                out.path().display()
            )
        );
        assert_eq!(heads.lock().unwrap().len(), 0);
        assert!(out.path().join(ERRORS_FILE).exists());
        // The first run ended: the next one runs.
        drop(held);
        assert_eq!(run(&one_task_suite(), &c).unwrap().written, 1);
    }

    fn ok_answer() -> String {
        answer_with(json!({"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "hi"}}))
    }

    /// Probe 42, bug 4: `--model a --model a` sent every request twice.
    #[test]
    fn a_model_named_twice_is_asked_once() {
        let (url, heads) = serve(|_| (200, ok_answer()));
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.models = vec!["m".into(), "m".into()];
        c.k = 2;
        c.out = out.path().to_path_buf();
        let summary = run(&one_task_suite(), &c).unwrap();
        assert_eq!((summary.planned, summary.written), (2, 2));
        assert_eq!(heads.lock().unwrap().len(), 2);
    }

    /// Probe 42, bug 4: with `OUT/<model>` a regular file, every request
    /// was sent (and paid for), then the run failed with `File exists`.
    #[test]
    fn a_model_directory_that_is_a_file_stops_the_run_before_any_request() {
        let (url, heads) = serve(|_| (200, ok_answer()));
        let out = tempfile::tempdir().unwrap();
        std::fs::write(out.path().join("m"), "").unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.out = out.path().to_path_buf();
        let err = run(&one_task_suite(), &c).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "{} is not a directory: the samples of model `m` go there",
                out.path().join("m").display()
            )
        );
        assert_eq!(heads.lock().unwrap().len(), 0);
    }

    /// Probe 42, bug 4: `run-errors.log` kept the lines of earlier runs
    /// after a rerun that answered every sample; it holds the last run's.
    #[test]
    fn the_error_log_holds_the_last_runs_errors_only() {
        let (url, _) = serve(|n| {
            if n == 0 {
                (500, "{}".into())
            } else {
                (200, ok_answer())
            }
        });
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.k = 1;
        c.out = out.path().to_path_buf();
        let log = out.path().join(ERRORS_FILE);
        assert_eq!(run(&one_task_suite(), &c).unwrap().errors.len(), 1);
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 1);
        let summary = run(&one_task_suite(), &c).unwrap();
        assert_eq!((summary.written, summary.errors.len()), (1, 0));
        assert!(!log.exists());
    }

    /// Probe 42, bug 4: a key with a newline failed every attempt as a
    /// retried client error; it is refused before anything is sent, and
    /// the message does not show it.
    #[test]
    fn an_api_key_that_cannot_be_a_header_is_refused_up_front() {
        let (url, heads) = serve(|_| (200, ok_answer()));
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.out = out.path().join("o");
        c.api_key = Some("sk-secret-key\n".into());
        let err = run(&one_task_suite(), &c).unwrap_err().to_string();
        assert_eq!(
            err,
            "the API key contains a control character (a newline?): it cannot be sent as a header"
        );
        assert_eq!(heads.lock().unwrap().len(), 0);
        assert!(!c.out.exists());
    }

    /// Probe 43, bug 5: `--seed 9223372036854775807 -k 2` sent sample 2 a
    /// wrapped, negative seed. A seed some sample's value would overflow is
    /// refused before any request.
    #[test]
    fn a_seed_that_would_overflow_for_a_later_sample_is_refused_up_front() {
        let (url, heads) = serve(|_| (200, ok_answer()));
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.k = 2;
        c.seed = Some(i64::MAX);
        c.out = out.path().join("o");
        let err = run(&one_task_suite(), &c).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "--seed {} with -k 2: sample 2 would be sent {} + 1, past the largest seed; give at most {}",
                i64::MAX,
                i64::MAX,
                i64::MAX - 1
            )
        );
        assert_eq!(heads.lock().unwrap().len(), 0);
        assert!(!c.out.exists());
        // The largest seed the last sample can have is taken.
        c.seed = Some(i64::MAX - 1);
        let summary = run(&one_task_suite(), &c).unwrap();
        assert_eq!((summary.written, summary.errors.len()), (2, 0));
        assert_eq!(request_body(&task(), "m", 2, &c)["seed"], json!(i64::MAX));
    }

    /// Probe 43, bug 4: the sample was `choices[0]` by position; a server
    /// listing index 1 first had its second choice stored. The sample is
    /// the choice whose `index` is 0 (a missing index is the position), as
    /// `toolgate import` reads choices.
    #[test]
    fn the_sample_is_the_choice_of_index_0_wherever_it_stands() {
        let choice = |i: u64, text: &str| {
            json!({"index": i, "finish_reason": "stop",
                   "message": {"role": "assistant", "content": text}})
        };
        let body = json!({"id": "x", "object": "chat.completion",
                          "choices": [choice(1, "SECOND"), choice(0, "FIRST")]})
        .to_string();
        let (summary, sample, _out) = one_sample(body, |_| {});
        assert_eq!((summary.written, summary.errors.len()), (1, 0));
        let t = sample.unwrap();
        assert_eq!(t["output"], json!("FIRST"));
        // Without indexes, the position; two choices of index 0 are no
        // one answer.
        let no_index = json!({"choices": [
            {"finish_reason": "stop", "message": {"role": "assistant", "content": "A"}},
            {"finish_reason": "stop", "message": {"role": "assistant", "content": "B"}}]});
        assert_eq!(
            answer_choice(&no_index).unwrap()["message"]["content"],
            json!("A")
        );
        let twice = json!({"choices": [choice(0, "A"), choice(0, "B")]});
        assert_eq!(
            answer_choice(&twice).unwrap_err(),
            "the answer has two choices of index 0 (`choices[0]`, `choices[1]`)"
        );
        let none = json!({"choices": [choice(1, "A")]});
        assert_eq!(
            answer_choice(&none).unwrap_err(),
            "the answer has no choice of index 0"
        );
    }

    /// Probe 43, bug 3: two task names cut to the same 80 bytes whose
    /// 32-bit hashes agree shared a file: "2 written, 2 already there",
    /// exit 0, every file the second task's. A shared file name among the
    /// suite's tasks, or among the models, is refused before any request.
    #[test]
    fn two_names_that_share_a_file_name_are_refused_before_any_request() {
        let a = format!("{}557538", "a".repeat(80));
        let b = format!("{}696006", "a".repeat(80));
        assert_eq!(slug(&a), slug(&b), "the probe's collision");
        let line = |name: &str| {
            json!({"task": name, "messages": [{"role": "user", "content": "x"}],
                   "tools": [], "expect": {"calls": []}})
            .to_string()
        };
        let suite = Suite::parse(Path::new("s"), &format!("{}\n{}\n", line(&a), line(&b))).unwrap();
        let (url, heads) = serve(|_| (200, ok_answer()));
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.k = 2;
        c.out = out.path().join("o");
        let err = run(&suite, &c).unwrap_err().to_string();
        assert_eq!(
            err,
            format!(
                "tasks `{a}` and `{b}` would share the file name `{}`: rename one",
                slug(&a)
            )
        );
        let err = run(
            &one_task_suite(),
            &RunConfig {
                models: vec![a.clone(), b.clone()],
                ..c.clone()
            },
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            format!(
                "models `{a}` and `{b}` would share the directory name `{}`: rename one",
                slug(&a)
            )
        );
        assert_eq!(heads.lock().unwrap().len(), 0);
        assert!(!c.out.exists());
    }

    /// What a stored sample may not hold: the key, the URL's password and
    /// its credential-named query values, not every query value (an
    /// `api-version` date would be cut out of answers).
    #[test]
    fn stored_secrets_are_the_key_the_password_and_credential_query_values() {
        let mut c = cfg();
        c.api_key = Some("sk-key-1-0123456789".into());
        c.base_url =
            "http://user:pw-secret-0123456789@h/v1?api-version=2024-06-01&api-key=qs-secret-0123456789&key=g-secret-0123456789&token=short"
                .into();
        let mut got = stored_secrets(&c);
        got.sort();
        // `short` is under MIN_SCRUBBED: a word a model may write.
        assert_eq!(
            got,
            [
                // `Basic ` + base64 of `user:pw-secret-0123456789`, as sent.
                "Basic dXNlcjpwdy1zZWNyZXQtMDEyMzQ1Njc4OQ==",
                "dXNlcjpwdy1zZWNyZXQtMDEyMzQ1Njc4OQ==",
                "g-secret-0123456789",
                "pw-secret-0123456789",
                "qs-secret-0123456789",
                "sk-key-1-0123456789"
            ]
        );
    }

    /// Probe 43, bug 2: a 32 MB answer of `[0,0,…]` cost the run some
    /// 2.5 GB a task and was written as a sample `label` refuses (and a
    /// rerun never asks again). More JSON values than the proxy's
    /// `--max-response-nodes` default is a run error, counted before
    /// anything is built.
    #[test]
    fn an_answer_of_too_many_json_values_is_a_run_error_not_a_sample() {
        let zeros = vec!["0"; MAX_RESPONSE_VALUES + 1].join(",");
        let body = format!(
            r#"{{"id":"x","choices":[{{"index":0,"finish_reason":"stop","message":{{"role":"assistant","content":"hi"}}}}],"pad":[{zeros}]}}"#
        );
        assert!(body.len() < MAX_RESPONSE_BYTES);
        let (summary, sample, out) = one_sample(body, |_| {});
        assert_eq!(summary.written, 0);
        assert_eq!(summary.errors.len(), 1);
        assert_eq!(
            summary.errors[0].error,
            format!("the answer holds more than {MAX_RESPONSE_VALUES} JSON values: not read")
        );
        assert!(sample.is_none());
        let log = std::fs::read_to_string(out.path().join(ERRORS_FILE)).unwrap();
        assert!(log.contains("JSON values"), "{log}");
    }

    /// Probe 43, bug 1: a server that echoed the request headers had the
    /// API key stored in the sample (`response.debug.headers.authorization`),
    /// though the key is never written to disk. Credential-named members of
    /// what is stored are `[redacted]` (the importer's and the recorder's
    /// rule), the key itself is replaced wherever a string holds it, and the
    /// sample says where.
    #[test]
    fn an_answer_that_echoes_the_api_key_never_puts_it_on_disk() {
        const KEY: &str = "sk-SECRET123-0123456789abcdef";
        let body = json!({"id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "hi"}}],
            "debug": {"headers": {"authorization": format!("Bearer {KEY}")}},
            "echo": format!("Bearer {KEY}")})
        .to_string();
        let (url, heads) = serve(move |_| (200, body.clone()));
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = url;
        c.k = 1;
        c.api_key = Some(KEY.into());
        c.out = out.path().to_path_buf();
        let summary = run(&one_task_suite(), &c).unwrap();
        assert_eq!((summary.written, summary.errors.len()), (1, 0));
        // It was sent.
        assert!(heads.lock().unwrap()[0].contains(&format!("Bearer {KEY}")));
        let bytes = std::fs::read(sample_path(out.path(), "m", "t", 1)).unwrap();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(KEY),
            "{}",
            String::from_utf8_lossy(&bytes)
        );
        let t: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            t["response"]["debug"]["headers"]["authorization"],
            json!("[redacted]")
        );
        // A whole `Bearer` token is a credential by its shape (probe 44):
        // the shared rule replaces it before the key's text is scrubbed.
        assert_eq!(t["response"]["echo"], json!("[redacted]"));
        assert_eq!(
            t["run"]["redacted_members"],
            json!(["response.debug.headers.authorization", "response.echo"])
        );
        assert_eq!(t["output"], json!("hi"));
    }

    /// Probe 44b, item 2: reqwest sends the base URL's user and password as
    /// `Authorization: Basic base64(user:password)`, and a server that
    /// echoed that header had it stored in the sample and shown in run
    /// errors and `run-errors.log`: only the raw password was scrubbed,
    /// which the echo does not hold. The `Basic` value and its base64 token
    /// are scrubbed as the key is.
    #[test]
    fn an_answer_that_echoes_the_urls_basic_credential_never_puts_it_on_disk() {
        // base64 of `alice:PASSWORDxyz12345678`.
        const TOKEN: &str = "YWxpY2U6UEFTU1dPUkR4eXoxMjM0NTY3OA==";
        let echo = format!("auth=Basic {TOKEN} | token {TOKEN}");
        let body = answer_with(json!({"index": 0, "finish_reason": "stop",
            "message": {"role": "assistant", "content": echo}}));
        let (url, heads) = serve(move |_| (200, body.clone()));
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.base_url = url.replace("http://", "http://alice:PASSWORDxyz12345678@");
        c.k = 1;
        c.out = out.path().to_path_buf();
        let summary = run(&one_task_suite(), &c).unwrap();
        assert_eq!((summary.written, summary.errors.len()), (1, 0));
        // What the server got, and echoed: one `Authorization`, the Basic one.
        let head = heads.lock().unwrap()[0].clone();
        let auth: Vec<&str> = head
            .lines()
            .filter(|l| l.to_ascii_lowercase().starts_with("authorization:"))
            .collect();
        assert_eq!(auth.len(), 1, "{head}");
        assert!(auth[0].ends_with(&format!(": Basic {TOKEN}")), "{head}");
        let bytes = std::fs::read(sample_path(out.path(), "m", "t", 1)).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        // Not even unpadded.
        assert!(
            !text.contains(TOKEN.trim_end_matches('=')) && !text.contains("PASSWORDxyz"),
            "{text}"
        );
        let t: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(t["output"], json!("auth=[redacted] | token [redacted]"));

        // The same echo on an error page: not in the message, not in the log.
        let (url, _) = serve(move |_| (400, format!("bad request; authorization: Basic {TOKEN}")));
        c.base_url = url.replace("http://", "http://alice:PASSWORDxyz12345678@");
        let out = tempfile::tempdir().unwrap();
        c.out = out.path().to_path_buf();
        let summary = run(&one_task_suite(), &c).unwrap();
        assert_eq!(
            summary.errors[0].error,
            "HTTP 400 Bad Request: bad request; authorization: [redacted]"
        );
        let log = std::fs::read_to_string(out.path().join(ERRORS_FILE)).unwrap();
        assert_eq!(log.lines().count(), 1);
        assert!(!log.contains(TOKEN.trim_end_matches('=')), "{log}");
    }

    /// Probe 44b, item 2: a base URL with user information and an API key
    /// sent two `Authorization` headers, `Basic` and `Bearer`, the server
    /// left to pick one and handed the other. Both given is refused before
    /// any request (the message names neither); the URL's credential alone
    /// is still sent as `Basic` auth.
    #[test]
    fn a_url_credential_beside_an_api_key_is_refused_before_any_request() {
        let (url, heads) = serve(|_| (200, ok_answer()));
        let out = tempfile::tempdir().unwrap();
        let mut c = cfg();
        c.k = 1;
        c.out = out.path().join("o");
        c.api_key = Some("sk-proj-SECRETKEY0123456789abcdef".into());
        // A user alone is sent as `Basic user:` by reqwest: refused as well.
        for userinfo in [
            "alice:PASSWORDxyz12345678@",
            "alice@",
            ":PASSWORDxyz12345678@",
        ] {
            c.base_url = url.replace("http://", &format!("http://{userinfo}"));
            let err = run(&one_task_suite(), &c).unwrap_err().to_string();
            assert_eq!(
                err,
                "--base-url carries a user and password and an API key is set: give one"
            );
        }
        assert_eq!(heads.lock().unwrap().len(), 0);
        assert!(!c.out.exists());

        c.api_key = None;
        c.base_url = url.replace("http://", "http://alice:PASSWORDxyz12345678@");
        let summary = run(&one_task_suite(), &c).unwrap();
        assert_eq!((summary.written, summary.errors.len()), (1, 0));
        let head = heads.lock().unwrap()[0].to_ascii_lowercase();
        assert_eq!(head.matches("authorization:").count(), 1, "{head}");
        assert!(head.contains("authorization: basic "), "{head}");
    }

    /// A placeholder key (`EMPTY`, as local servers are given) is not
    /// scrubbed from the model's text: the model writes such words too, and
    /// changing its output or arguments would change what is scored. A
    /// member named as a credential is still redacted.
    #[test]
    fn a_placeholder_key_leaves_the_models_words_alone() {
        let body = json!({"id": "x", "object": "chat.completion",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "The list is EMPTY."}}],
            "debug": {"headers": {"authorization": "Bearer EMPTY"}}})
        .to_string();
        let (summary, sample, _out) = one_sample(body, |c| {
            c.api_key = Some("EMPTY".into());
        });
        assert_eq!((summary.written, summary.errors.len()), (1, 0));
        let t = sample.unwrap();
        assert_eq!(t["output"], json!("The list is EMPTY."));
        assert_eq!(
            t["response"]["debug"]["headers"]["authorization"],
            json!("[redacted]")
        );
    }
}
