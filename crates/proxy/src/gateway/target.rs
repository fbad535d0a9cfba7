//! Which request targets are passed through, and which are refused before
//! the upstream is contacted.
//!
//! Only `POST /v1/chat/completions`, spelled exactly so, is judged; every
//! other path goes to the upstream as it is. Servers do not all read a path
//! as its bytes: reqwest's URL parser removes dot-segments
//! (`/v1/./chat/completions`), Starlette-based servers (vLLM, SGLang)
//! percent-decode the path (`/v1/chat/%63ompletions`, `chat%2Fcompletions`),
//! some merge repeated slashes or ignore a trailing one, some ignore case.
//! A passed-through spelling of the judged route would reach the upstream's
//! chat endpoint unjudged and unrecorded, so, fail-closed:
//!
//! - a path with a dot-segment (`.` or `..`) or a percent-encoded
//!   unreserved character (`%41`, `%2e`, `%7E`: RFC 3986 §2.3 says they
//!   mean the character itself) is refused outright: no client needs them;
//! - a path that, read the way servers read it ([`normalized`]), is a
//!   judged route (the proxy's `/v1/chat/completions`, or the upstream's
//!   own chat path under its base URL) is refused;
//! - a path that, read so, is another chat route of the upstream — any
//!   path ending in `/chat/completions` (the origin's `/chat/completions`
//!   that llama.cpp serves, `/v1/v1/chat/completions` through a base URL
//!   without `/v1`, an Azure deployment's) or Ollama's and llama.cpp's
//!   `/api/chat` — is refused in every mode: it would be a chat exchange
//!   neither judged nor recorded;
//! - in `enforce`, a request that could return a model's tool calls on
//!   another route (the Responses API, legacy and llama.cpp completions,
//!   Anthropic messages, Ollama's and TGI's generate, …) is refused: only
//!   `GET`/`HEAD` (outside `responses`, `threads`, `batches` and
//!   `files/{id}/content`, whose stored objects
//!   hold calls) and the routes in [`SAFE_POSTS`] are passed through. A
//!   list of what is safe rather than of what is not, so that a route a
//!   server adds is refused until it is known;
//! - a target that is not a path (`OPTIONS *`, `CONNECT host:443`) is
//!   refused: the proxy is not a forward proxy.
//!
//! Each is a 4xx with a message naming the canonical path; nothing is sent.

use axum::http::{Method, StatusCode, Uri};

/// The path clients send chat completions to, the one judged.
pub(crate) const CHAT: &str = "/v1/chat/completions";

/// Why a passed-through request is refused: its status and message.
pub(crate) type Refusal = (StatusCode, String);

/// The last segments of the routes `enforce` passes through for methods
/// other than `GET`/`HEAD`: their answers are vectors, token ids, scores or
/// metadata, never a model's tool calls (OpenAI's, vLLM's, SGLang's,
/// llama.cpp's and Ollama's).
pub(crate) const SAFE_POSTS: &[&str] = &[
    "embeddings",
    "embedding",
    "embed",
    "reranking",
    "count_tokens",
    "tokenize",
    "detokenize",
    "moderations",
    "rerank",
    "score",
    "classify",
    "pooling",
    "show",
];

/// The path (and query) of a request to pass through, or why it is refused.
/// `upstream_path` maps a client path to the path the upstream gets;
/// `upstream_chat` is the upstream's chat completions path; `enforce`:
/// the proxy enforces (only routes that cannot carry tool calls pass).
pub(crate) fn check<'a>(
    method: &Method,
    uri: &'a Uri,
    upstream_path: impl Fn(&str) -> String,
    upstream_chat: &str,
    enforce: bool,
) -> Result<&'a str, Refusal> {
    if method == Method::CONNECT {
        return Err((
            StatusCode::METHOD_NOT_ALLOWED,
            "toolgate: CONNECT is not supported: the proxy forwards API requests, it is not a forward proxy"
                .into(),
        ));
    }
    let path = uri.path();
    if !path.starts_with('/') {
        return Err((
            StatusCode::BAD_REQUEST,
            "toolgate: only a path is passed through (origin-form, such as /v1/models), not `*` or an authority"
                .into(),
        ));
    }
    if let Some(why) = refused_outright(path) {
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "toolgate: this path is not passed through: it contains {why}; chat completions are judged at {CHAT} only"
            ),
        ));
    }
    let seen = normalized(path);
    let upstream = normalized(&upstream_path(path));
    if seen == normalized(CHAT) || upstream == normalized(upstream_chat) {
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "toolgate: this path is another spelling of the judged chat completions route: send it to {CHAT} exactly"
            ),
        ));
    }
    let segments: Vec<&[u8]> = upstream
        .split(|&b| b == b'/')
        .filter(|s| !s.is_empty())
        .collect();
    if [&seen, &upstream]
        .iter()
        .any(|p| p.ends_with(b"/chat/completions") || p.ends_with(b"/api/chat"))
    {
        return Err((
            StatusCode::BAD_REQUEST,
            format!(
                "toolgate: this path is another chat route of the upstream, which would be neither judged nor recorded: send chat completions to {CHAT}"
            ),
        ));
    }
    if enforce && !passes_in_enforce(method, &segments) {
        return Err((
            StatusCode::FORBIDDEN,
            format!(
                "toolgate: in enforce mode only routes that cannot return a model's tool calls are passed through (GET requests, and {} requests); this one's answer would reach the client unjudged. Chat completions are judged at {CHAT}",
                SAFE_POSTS.join("/")
            ),
        ));
    }
    Ok(uri.path_and_query().map_or(path, |pq| pq.as_str()))
}

/// Whether `enforce` passes a request to the upstream path made of
/// `segments` (normalized): a `GET`/`HEAD` of nothing that stores a
/// model's answers, or a route whose last segment is in [`SAFE_POSTS`].
fn passes_in_enforce(method: &Method, segments: &[&[u8]]) -> bool {
    if method == Method::GET || method == Method::HEAD {
        // Stored objects that hold a model's calls: Responses, Assistants
        // threads, stored chat completions (`/chat/completions/{id}`),
        // conversations (OpenAI's and Mistral's items and history), evals'
        // sampled outputs, batches (OpenAI's, Anthropic's
        // `/messages/batches/{id}/results`), the files batches write their
        // outputs to (`/files/{id}/content`; not a vector store's or a
        // container's, which hold the user's documents) and Gemini's
        // `/download/…` of them.
        let stored = segments
            .windows(2)
            .any(|w| w[0] == b"chat" && w[1] == b"completions");
        let documents = segments
            .iter()
            .any(|s| *s == b"vector_stores" || *s == b"containers");
        let file_content = segments.contains(&&b"files"[..])
            && segments.last() == Some(&&b"content"[..])
            && !documents;
        const STORED: [&[u8]; 7] = [
            b"responses",
            b"threads",
            b"batches",
            b"conversations",
            b"evals",
            b"download",
            b"output_items",
        ];
        return !stored && !file_content && !segments.iter().any(|s| STORED.contains(s));
    }
    segments
        .last()
        .is_some_and(|last| SAFE_POSTS.iter().any(|safe| safe.as_bytes() == *last))
}

/// What makes a path refused whatever it names: a dot-segment, or a
/// percent-encoded unreserved character.
fn refused_outright(path: &str) -> Option<&'static str> {
    if path.split('/').any(|s| s == "." || s == "..") {
        return Some("a dot-segment (`.` or `..`)");
    }
    let b = path.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && let Some(c) = hex_pair(b, i + 1)
        {
            if c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_' | b'~') {
                return Some("a percent-encoded unreserved character (such as %63 for `c`)");
            }
            i += 3;
        } else {
            i += 1;
        }
    }
    None
}

/// The byte `%XX` at `b[i..i + 2]` stands for (hex in either case).
fn hex_pair(b: &[u8], i: usize) -> Option<u8> {
    let hi = (*b.get(i)? as char).to_digit(16)?;
    let lo = (*b.get(i + 1)? as char).to_digit(16)?;
    // Two hex digits make at most 255.
    u8::try_from(hi * 16 + lo).ok()
}

/// `path` as the most lenient server reads it: every `%XX` decoded (again
/// while any is left: some decode twice), ended at the first `?` or `#`
/// the decoding gave, `\` read as `/`, dot-segments removed (RFC 3986
/// §5.2.4), repeated slashes merged, a trailing slash dropped, ASCII
/// letters lowercased. Only ever compared with a judged route, never sent.
///
/// The end at a decoded `?` or `#`: a catch-all route forwards its decoded
/// path read again as a URL (LiteLLM's `/openai/{endpoint:path}` sends on
/// `httpx.URL(endpoint).path`; hand-written FastAPI proxies format
/// `https://api.openai.com/v1/{endpoint}`), so `/openai/v1/responses%3F/embeddings`
/// reached the Responses API while its last segment read as `embeddings`.
pub(crate) fn normalized(path: &str) -> Vec<u8> {
    let mut bytes = path.as_bytes().to_vec();
    // Each round shortens the path, so this ends; bounded besides.
    for _ in 0..8 {
        let decoded = decode(&bytes);
        if decoded.len() == bytes.len() {
            break;
        }
        bytes = decoded;
    }
    if let Some(end) = bytes.iter().position(|&b| b == b'?' || b == b'#') {
        bytes.truncate(end);
    }
    for b in &mut bytes {
        if *b == b'\\' {
            *b = b'/';
        }
        b.make_ascii_lowercase();
    }
    // Segments, dot-segments resolved, empty ones (repeated and trailing
    // slashes) dropped.
    let mut segments: Vec<&[u8]> = Vec::new();
    for s in bytes.split(|&b| b == b'/') {
        match s {
            b"" | b"." => {}
            b".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    let mut out = Vec::with_capacity(bytes.len() + 1);
    for s in segments {
        out.push(b'/');
        out.extend_from_slice(s);
    }
    if out.is_empty() {
        out.push(b'/');
    }
    out
}

/// Every `%XX` of `b` decoded once.
fn decode(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match (b[i], hex_pair(b, i + 1)) {
            (b'%', Some(c)) => {
                out.push(c);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// [`check`] of `target` with an upstream whose base path is `base`
    /// (`/v1` maps to it, as `Proxy::upstream_path` does), in observe or
    /// (`enforce`) enforce: the path passed on, or the refusal's status.
    fn check_in(method: Method, target: &str, base: &str, enforce: bool) -> Result<String, u16> {
        let uri: Uri = target.parse().unwrap();
        let upstream = |p: &str| match p.strip_prefix("/v1") {
            Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("{base}{rest}"),
            _ => p.to_string(),
        };
        check(
            &method,
            &uri,
            upstream,
            &format!("{base}/chat/completions"),
            enforce,
        )
        .map(str::to_string)
        .map_err(|(s, _)| s.as_u16())
    }

    fn check_path(method: Method, target: &str, base: &str) -> Result<String, u16> {
        check_in(method, target, base, false)
    }

    fn check_enforce(method: Method, target: &str, base: &str) -> Result<String, u16> {
        check_in(method, target, base, true)
    }

    /// The hostile-client probe (stop 41): the upstream's chat route at its
    /// origin (`/chat/completions`, llama.cpp's), `/api/chat`, and
    /// `/v1/v1/chat/completions` through a base URL without `/v1` reached
    /// the upstream's chat endpoint unjudged and unrecorded, in enforce.
    #[test]
    fn other_chat_routes_of_the_upstream_are_refused_in_every_mode() {
        for (target, base) in [
            ("/chat/completions", "/v1"),
            ("/api/chat", "/v1"),
            ("/v1/v1/chat/completions", ""),
            ("/openai/deployments/gpt/chat/completions", "/v1"),
            ("/API/Chat/", "/v1"),
        ] {
            assert_eq!(check_path(Method::POST, target, base), Err(400), "{target}");
            assert_eq!(
                check_enforce(Method::POST, target, base),
                Err(400),
                "{target}"
            );
        }
    }

    /// In enforce, a route that could return tool calls is refused (the
    /// probe's `/v1/responses` relayed an `rm_rf` function call); what
    /// cannot carry them passes. Observe and shadow pass them through.
    #[test]
    fn enforce_passes_only_routes_that_cannot_carry_calls() {
        for (method, target) in [
            (Method::POST, "/v1/responses"),
            (Method::POST, "/v1/completions"),
            (Method::POST, "/v1/messages"),
            (Method::POST, "/api/generate"),
            (Method::POST, "/generate"),
            (Method::POST, "/completion"),
            (Method::POST, "/v1/threads/t/runs"),
            (Method::PUT, "/v1/models"),
            (Method::GET, "/v1/responses/resp_1"),
            (Method::GET, "/v1/threads/t/messages"),
            (Method::GET, "/v1/chat/completions/chatcmpl-1"),
            (Method::GET, "/v1/chat/completions/chatcmpl-1/messages"),
            // Batches and the files holding their outputs (the fifth probe).
            (Method::GET, "/v1/files/file-abc/content"),
            (Method::GET, "/v1/batches/batch_1"),
            (Method::GET, "/v1/messages/batches/msgbatch_1/results"),
            // Conversations, evals' outputs, Gemini's batch download (the
            // sixth probe).
            (Method::GET, "/v1/conversations/conv_1/items"),
            (Method::GET, "/v1/conversations/conv_1/history"),
            (Method::GET, "/v1/evals/e1/runs/r1/output_items"),
            (
                Method::GET,
                "/download/v1beta/files/batch-123:download?alt=media",
            ),
        ] {
            assert_eq!(
                check_enforce(method.clone(), target, "/v1"),
                Err(403),
                "{method} {target}"
            );
            assert!(
                check_path(method.clone(), target, "/v1").is_ok(),
                "{method} {target}"
            );
        }
        for (method, target) in [
            (Method::GET, "/v1/models"),
            (Method::GET, "/v1/files/file-abc"),
            (Method::GET, "/v1/vector_stores/vs_1/files/file-1/content"),
            (Method::GET, "/v1/containers/c1/files/f1/content"),
            (Method::HEAD, "/health"),
            (Method::POST, "/v1/embeddings"),
            (Method::POST, "/tokenize"),
            (Method::POST, "/detokenize"),
            (Method::POST, "/api/embed"),
            (Method::POST, "/v1/moderations?x=1"),
            (Method::POST, "/embedding"),
            (Method::POST, "/v1/reranking"),
            (Method::POST, "/v1/messages/count_tokens"),
        ] {
            assert_eq!(
                check_enforce(method.clone(), target, "/v1"),
                Ok(target.to_string()),
                "{method} {target}"
            );
        }
    }

    /// Every spelling of the chat route a server may read as that route is
    /// refused; so is any dot-segment or encoded unreserved character.
    #[test]
    fn spellings_of_the_chat_route_are_refused() {
        for target in [
            "/v1/./chat/completions",
            "/v1/x/../chat/completions",
            "/v1/chat/./completions",
            "/v1/chat/completions/.",
            "/v1/chat/completions/x/..",
            "/v1/chat/%63ompletions",
            "/v1/chat/%63OMPLETIONS",
            "/v1/%2e/chat/completions",
            "/v1/chat%2Fcompletions",
            "/v1/chat%2fcompletions?x=1",
            "/v1/chat/completions/",
            "//v1/chat/completions",
            "/v1//chat//completions",
            "/V1/Chat/Completions",
            "/v1/x%2F..%2Fchat/completions",
            "/v1/chat/%2563ompletions",
            "/v1/models/../../etc/passwd",
        ] {
            assert_eq!(
                check_path(Method::POST, target, "/v1"),
                Err(400),
                "{target}"
            );
        }
    }

    /// With a base path (`http://host/openai/v1`), the upstream's chat path
    /// reached through the origin is refused as well; with none, so is
    /// `/chat/completions`.
    #[test]
    fn the_upstreams_own_chat_path_is_refused_under_any_base() {
        assert_eq!(
            check_path(Method::POST, "/openai/v1/chat/completions", "/openai/v1"),
            Err(400)
        );
        assert_eq!(check_path(Method::POST, "/chat/completions", ""), Err(400));
        assert_eq!(check_path(Method::POST, "/chat/completions/", ""), Err(400));
    }

    #[test]
    fn other_paths_pass_with_their_query() {
        for (target, base) in [
            ("/v1/models", "/v1"),
            ("/v1/models/org%2Fname", "/v1"),
            ("/v1/completions?x=1", "/v1"),
            ("/tokenize", "/v1"),
            ("/v1/chat/completions/x", "/v1"),
            ("/a%20b", "/v1"),
        ] {
            assert_eq!(
                check_path(Method::GET, target, base),
                Ok(target.to_string())
            );
        }
    }

    /// A decoded `?` or `#` ends the path as a catch-all route that reads
    /// its decoded path again as a URL ends it (LiteLLM's
    /// `/openai/{endpoint:path}`): `/openai/v1/responses%3F/embeddings`
    /// passed enforce as an `embeddings` route and reached the Responses
    /// API; an encoded mark after the chat route hid it in every mode.
    #[test]
    fn a_path_ends_at_an_encoded_query_or_fragment_mark() {
        for target in [
            "/openai/v1/responses%3F/embeddings",
            "/openai/v1/responses%3f/x/embeddings",
            "/openai/v1/responses%23/embeddings",
            "/anthropic/v1/messages%253F/count_tokens",
            "/v1/completions%3F/tokenize",
        ] {
            assert_eq!(
                check_enforce(Method::POST, target, "/v1"),
                Err(403),
                "{target}"
            );
            assert!(check_path(Method::POST, target, "/v1").is_ok(), "{target}");
        }
        for target in [
            "/openai/v1/chat/completions%3F/embeddings",
            "/openai/v1/chat/completions%23",
            "/v1/chat/completions%3F",
            "/api/chat%3Fx=/embed",
        ] {
            assert_eq!(
                check_path(Method::POST, target, "/v1"),
                Err(400),
                "{target}"
            );
        }
        assert_eq!(
            check_enforce(Method::GET, "/openai/v1/responses%3F", "/v1"),
            Err(403)
        );
        // The query is not the path: an encoded mark there changes nothing.
        assert_eq!(
            check_enforce(Method::POST, "/v1/embeddings?x=%3F", "/v1"),
            Ok("/v1/embeddings?x=%3F".to_string())
        );
    }

    #[test]
    fn asterisk_and_authority_forms_are_refused() {
        assert_eq!(check_path(Method::OPTIONS, "*", "/v1"), Err(400));
        assert_eq!(
            check_path(Method::CONNECT, "evil.example:443", "/v1"),
            Err(405)
        );
    }
}
