//! The upstream client for non-streamed chat completions over plain HTTP:
//! HTTP/1.1 written and read here ([`super::h1`]), connections pooled here.
//!
//! reqwest (which the proxy keeps for everything else: `https://`
//! upstreams, streams, other paths, an upstream URL with credentials, a
//! proxy set in the environment) goes through hyper-util's pooled client,
//! which spawns a task per request to put the connection back in its pool,
//! and hands every request and answer through channels to the task that
//! drives the connection. Here the handler's own task writes the request
//! (head and body in one vectored write), reads the answer to its end
//! (bounded by the caller's limit) and puts the connection back itself:
//! no task, channel or header map is made for the request.
//!
//! While the request is written the answer is read too, so that an
//! upstream that answers early (a 413 for a body it will not read) is
//! heard instead of waited on. A connection whose answer was not read to
//! its end (an error, a limit, the client gone), or that cannot carry
//! another request (`h1::Answer::reusable`), is dropped, never reused. An
//! idle connection is checked before it is taken again: one the upstream
//! closed (or that has stray bytes) is dropped. As with hyper, whose
//! client this replaces, a request is never sent twice once a byte of it
//! is written; a pooled connection that fails before that is replaced
//! once by a new one (the upstream cannot have seen the request).
//! At most [`IDLE_MAX`] idle connections are kept per worker thread (the
//! server's: see `server::Workers`), each for at most [`IDLE_FOR`];
//! sockets have Nagle off.

use super::h1;
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// The most idle upstream connections kept per list ([`POOLS`]).
pub(crate) const IDLE_MAX: usize = 1024;
/// How long an idle upstream connection is kept (reqwest's pool: 90 s).
pub(crate) const IDLE_FOR: Duration = Duration::from_secs(90);

/// What one non-streamed upstream attempt returned.
pub(crate) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub bytes: Bytes,
}

/// A plain-HTTP upstream and its idle connections.
pub(crate) struct Upstream {
    /// Host to connect to (an IPv6 literal without its brackets).
    host: String,
    port: u16,
    /// The request line and `Host` field every request starts with.
    head: Vec<u8>,
    /// Where the request line's path ends in `head` (a query goes there).
    path_end: usize,
    connect_timeout: Duration,
    /// Idle connections, one list per worker thread ([`POOLS`]): a
    /// connection is taken again on the thread whose reactor its socket is
    /// registered with.
    idle: [Mutex<Vec<(Conn, Instant)>>; POOLS],
}

/// Lists of idle connections; worker threads past this many share them.
const POOLS: usize = 16;

/// One upstream connection, and the buffer its answers are read into
/// (kept between answers).
pub(crate) struct Conn {
    io: TcpStream,
    buf: Vec<u8>,
}

impl Conn {
    /// Whether the upstream closed this idle connection, reset it, or sent
    /// bytes no request asked for. Asked of the socket itself (a peek):
    /// tokio's readiness is only as fresh as its reactor's last turn, and a
    /// busy worker takes a connection again before its reactor has heard the
    /// upstream's FIN, which made the next request a 502.
    fn closed(&self) -> bool {
        let mut byte = [std::mem::MaybeUninit::<u8>::uninit()];
        !matches!(
            socket2::SockRef::from(&self.io).peek(&mut byte),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock
        )
    }
}

/// Environment variables that make reqwest send plain HTTP through a proxy.
const PROXY_VARS: &[&str] = &["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

impl Upstream {
    /// The client for `base` (`http://host:port/v1`), or `None` when
    /// reqwest must do it (`https`, credentials in the URL, a proxy in the
    /// environment, a URL it cannot read).
    pub fn for_base(base: &str, connect_timeout: Duration) -> Option<Upstream> {
        if PROXY_VARS
            .iter()
            .any(|v| std::env::var_os(v).is_some_and(|v| !v.is_empty()))
        {
            return None;
        }
        let uri: Uri = base.parse().ok()?;
        if uri.scheme_str() != Some("http") {
            return None;
        }
        let authority = uri.authority()?;
        if authority.as_str().contains('@') {
            return None;
        }
        let host = authority
            .host()
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let port = authority.port_u16().unwrap_or(80);
        let path = uri.path().trim_end_matches('/');
        if uri.query().is_some() {
            return None;
        }
        let chat: Uri = format!("{path}/chat/completions").parse().ok()?;
        let authority = HeaderValue::from_str(authority.as_str()).ok()?;
        let mut head = Vec::with_capacity(64);
        head.extend_from_slice(b"POST ");
        head.extend_from_slice(chat.path().as_bytes());
        let path_end = head.len();
        head.extend_from_slice(b" HTTP/1.1\r\nhost: ");
        head.extend_from_slice(authority.as_bytes());
        head.extend_from_slice(b"\r\n");
        Some(Upstream {
            host,
            port,
            head,
            path_end,
            connect_timeout,
            idle: Default::default(),
        })
    }

    /// A connection ready for a request: an idle one (`true`), else a new
    /// one.
    async fn connection(&self) -> Result<(Conn, bool), String> {
        loop {
            let next = self.idle().pop();
            let Some((conn, since)) = next else {
                break;
            };
            if since.elapsed() <= IDLE_FOR && !conn.closed() {
                return Ok((conn, true));
            }
        }
        Ok((self.connect().await?, false))
    }

    /// A new connection.
    async fn connect(&self) -> Result<Conn, String> {
        let connect = async {
            let io = TcpStream::connect((self.host.as_str(), self.port))
                .await
                .map_err(|e| format!("connection failed: {e}"))?;
            let _ = io.set_nodelay(true);
            Ok::<_, String>(Conn {
                io,
                buf: Vec::new(),
            })
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(r) => r,
            Err(_) => Err("connection failed: connect timeout".into()),
        }
    }

    /// This worker thread's idle connections.
    fn idle(&self) -> std::sync::MutexGuard<'_, Vec<(Conn, Instant)>> {
        // A poisoned lock only means a panic elsewhere; the list is valid.
        self.idle[crate::server::worker() % POOLS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    fn put_back(&self, conn: Conn) {
        let mut idle = self.idle();
        if idle.len() < IDLE_MAX {
            idle.push((conn, Instant::now()));
        }
    }

    /// POSTs `body` to `/chat/completions` (with the client's `query`)
    /// with `headers` (already without hop-by-hop ones) and reads the
    /// answer, at most `max` bytes.
    pub async fn post_json(
        &self,
        headers: &HeaderMap,
        query: Option<&str>,
        body: Bytes,
        max: usize,
    ) -> Result<Answer, String> {
        let query_len = query.map_or(0, |q| q.len() + 1);
        let mut head = Vec::with_capacity(self.head.len() + query_len + 128 + 64 * headers.len());
        match query {
            // The query as the client's request line had it: checked by
            // `http` (no space, CR, LF or other control).
            Some(q) => {
                head.extend_from_slice(&self.head[..self.path_end]);
                head.push(b'?');
                head.extend_from_slice(q.as_bytes());
                head.extend_from_slice(&self.head[self.path_end..]);
            }
            None => head.extend_from_slice(&self.head),
        }
        for (k, v) in headers {
            // Names and values are checked by `http`: no CR, LF or NUL.
            head.extend_from_slice(k.as_str().as_bytes());
            head.extend_from_slice(b": ");
            head.extend_from_slice(v.as_bytes());
            head.extend_from_slice(b"\r\n");
        }
        // As reqwest sends it: the content type appended, `Accept` when the
        // client sent none.
        head.extend_from_slice(b"content-type: application/json\r\n");
        if !headers.contains_key(header::ACCEPT) {
            head.extend_from_slice(b"accept: */*\r\n");
        }
        head.extend_from_slice(b"content-length: ");
        head.extend_from_slice(body.len().to_string().as_bytes());
        head.extend_from_slice(b"\r\n\r\n");

        let (conn, reused) = self.connection().await?;
        self.send(conn, reused, &head, &body, max).await
    }

    /// Sends the request `head`, `body` on `conn` (`reused`: taken from the
    /// idle list) and reads its answer; puts the connection back when it
    /// can carry another request.
    async fn send(
        &self,
        mut conn: Conn,
        mut reused: bool,
        head: &[u8],
        body: &[u8],
        max: usize,
    ) -> Result<Answer, String> {
        let answer = loop {
            let (answer, sent) = exchange(&mut conn, head, body, max).await;
            let answer = match answer {
                Ok(_) if !sent => {
                    Err("request failed: the upstream answered before the request was sent".into())
                }
                a => a,
            };
            match answer {
                // Not a byte of the request reached the pooled connection
                // (it failed, or was found closed, before any was written):
                // the upstream cannot have seen it, so it goes once more, on
                // a new connection. Once any byte is written the request is
                // never sent again: a chat completion is not idempotent (it
                // costs tokens), and an upstream that closes the connection
                // after reading it may have run it (DECISIONS.md).
                Err(e) if reused && !sent => {
                    tracing::debug!(error = %e, "a pooled upstream connection failed before the request was written: sent on a new one");
                    conn = self.connect().await?;
                    reused = false;
                }
                a => break a?,
            }
        };
        if answer.reusable {
            self.put_back(conn);
        }
        Ok(Answer {
            status: answer.status,
            headers: answer.headers,
            bytes: answer.body,
        })
    }
}

/// Writes one request (`head`, `body`) on `conn` and reads its answer,
/// at most `max` bytes: the answer, and whether any byte of the request
/// went out (when none did, the upstream cannot have seen the request).
async fn exchange(
    conn: &mut Conn,
    head: &[u8],
    body: &[u8],
    max: usize,
) -> (Result<h1::Answer, String>, bool) {
    let mut sent = 0;
    let answer = {
        let (mut rd, mut wr) = conn.io.split();
        let reading = h1::read_answer(&mut rd, &mut conn.buf, max);
        tokio::pin!(reading);
        let writing = write_all(&mut wr, head, body, &mut sent);
        tokio::pin!(writing);
        let mut written = false;
        loop {
            tokio::select! {
                biased;
                a = &mut reading => break a.map(|mut a| {
                    // Answered before the whole request was sent: the
                    // connection is somewhere inside the request.
                    a.reusable &= written;
                    a
                }).map_err(|e| match e {
                    h1::Error::Closed => {
                        "request failed: the connection closed before an answer".to_string()
                    }
                    h1::Error::Head(why) => format!("request failed: {why}"),
                    h1::Error::Body(why) => format!("bad body: {why}"),
                    h1::Error::TooLarge => "the upstream answer is too large".to_string(),
                }),
                w = &mut writing, if !written => {
                    if let Err(e) = w {
                        break Err(format!("request failed: {e}"));
                    }
                    written = true;
                }
            }
        }
    };
    (answer, sent > 0)
}

/// Writes `head` then `body`, in as few writes as the socket takes,
/// counting in `sent` the bytes written.
async fn write_all(
    io: &mut tokio::net::tcp::WriteHalf<'_>,
    mut head: &[u8],
    mut body: &[u8],
    sent: &mut usize,
) -> std::io::Result<()> {
    while !head.is_empty() || !body.is_empty() {
        let n = io
            .write_vectored(&[std::io::IoSlice::new(head), std::io::IoSlice::new(body)])
            .await?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        *sent += n;
        let from_head = n.min(head.len());
        head = &head[from_head..];
        body = &body[n - from_head..];
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A server answering every request on a connection with `answer`,
    /// closing the connection after each when `close`; counts connections.
    async fn server(answer: &'static str, close: bool) -> (u16, Arc<AtomicUsize>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        tokio::spawn(async move {
            loop {
                let (mut io, _) = listener.accept().await.unwrap();
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    loop {
                        let Ok(n) = io.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        // One whole request: headers and a 2-byte body.
                        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
                            continue;
                        };
                        if buf.len() < end + 4 + 2 {
                            continue;
                        }
                        buf.drain(..end + 6);
                        let resp = format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{answer}",
                            answer.len()
                        );
                        io.write_all(resp.as_bytes()).await.unwrap();
                        if close {
                            return;
                        }
                    }
                });
            }
        });
        (port, accepted)
    }

    /// A server that takes one connection, reads once, writes `answer`,
    /// keeps the connection for `hold` and closes it; its port.
    async fn answering_once(answer: &'static [u8], hold: Duration) -> u16 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut io, _) = listener.accept().await.unwrap();
            let mut chunk = [0u8; 4096];
            let _ = io.read(&mut chunk).await;
            io.write_all(answer).await.unwrap();
            tokio::time::sleep(hold).await;
        });
        port
    }

    /// The client for a test server on `port`.
    fn local(port: u16) -> Upstream {
        Upstream::for_base(
            &format!("http://127.0.0.1:{port}/v1"),
            Duration::from_secs(5),
        )
        .unwrap()
    }

    /// Why `up` fails to fetch an answer of at most `max` bytes.
    async fn refused(up: &Upstream, max: usize) -> String {
        up.post_json(&HeaderMap::new(), None, Bytes::from_static(b"{}"), max)
            .await
            .err()
            .unwrap()
    }

    #[tokio::test]
    async fn connections_are_reused_and_closed_ones_replaced() {
        let (port, accepted) = server(r#"{"ok":1}"#, false).await;
        let up = local(port);
        for _ in 0..5 {
            let a = up
                .post_json(&HeaderMap::new(), None, Bytes::from_static(b"{}"), 1024)
                .await
                .unwrap();
            assert_eq!(a.status, StatusCode::OK);
            assert_eq!(&a.bytes[..], br#"{"ok":1}"#);
        }
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "one connection, reused");

        let (port, accepted) = server(r#"{"ok":2}"#, true).await;
        let up = local(port);
        for _ in 0..5 {
            let a = up
                .post_json(&HeaderMap::new(), None, Bytes::from_static(b"{}"), 1024)
                .await
                .unwrap();
            assert_eq!(&a.bytes[..], br#"{"ok":2}"#);
        }
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            5,
            "a closed connection is not reused"
        );
        let e = refused(&up, 4).await;
        assert!(e.contains("too large"), "{e}");
    }

    /// The connection ends while its answer is read (the upstream closes
    /// after half the promised bytes): an error, never a short answer.
    #[tokio::test]
    async fn an_answer_cut_short_by_the_connection_is_an_error() {
        // The connection closes 26 bytes short.
        let port = answering_once(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n{\"choices\": []",
            Duration::ZERO,
        )
        .await;
        let up = local(port);
        let e = refused(&up, 1024).await;
        assert!(e.starts_with("bad body"), "{e}");
        assert!(
            up.idle.iter().all(|i| i.lock().unwrap().is_empty()),
            "a cut connection is not pooled"
        );
    }

    /// An upstream that answers before it has read the request (a 413 for
    /// a body it will not take) is heard at once, not waited on until the
    /// body is written, and its connection is not kept.
    #[tokio::test]
    async fn an_answer_before_the_whole_request_is_relayed() {
        // Holds the connection open without reading the rest.
        let port = answering_once(
            b"HTTP/1.1 413 Payload Too Large\r\ncontent-length: 4\r\n\r\nbig!",
            Duration::from_secs(10),
        )
        .await;
        let up = local(port);
        let body = Bytes::from(vec![b' '; 64 * 1024 * 1024]);
        let a = tokio::time::timeout(
            Duration::from_secs(5),
            up.post_json(&HeaderMap::new(), None, body, 1024),
        )
        .await
        .expect("answered before the body was written")
        .unwrap();
        assert_eq!((a.status.as_u16(), &a.bytes[..]), (413, &b"big!"[..]));
        assert!(
            up.idle.iter().all(|i| i.lock().unwrap().is_empty()),
            "a connection inside a request is not pooled"
        );
    }

    /// The request as the upstream receives it: the request line, `Host`,
    /// the client's fields, the content type, `Accept` and the length.
    #[tokio::test]
    async fn the_request_is_written_as_http_1_1() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let got = tokio::spawn(async move {
            let (mut io, _) = listener.accept().await.unwrap();
            let mut buf = Vec::new();
            let mut chunk = [0u8; 4096];
            while !buf.ends_with(b"{\"a\":1}") {
                let n = io.read(&mut chunk).await.unwrap();
                assert!(n > 0);
                buf.extend_from_slice(&chunk[..n]);
            }
            io.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}")
                .await
                .unwrap();
            String::from_utf8(buf).unwrap()
        });
        let up = local(port);
        let mut headers = HeaderMap::new();
        headers.insert("authorization", HeaderValue::from_static("Bearer k"));
        let a = up
            .post_json(&headers, None, Bytes::from_static(b"{\"a\":1}"), 1024)
            .await
            .unwrap();
        assert_eq!(&a.bytes[..], b"{}");
        assert_eq!(
            got.await.unwrap(),
            format!(
                "POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\
                 authorization: Bearer k\r\ncontent-type: application/json\r\n\
                 accept: */*\r\ncontent-length: 7\r\n\r\n{{\"a\":1}}"
            )
        );
    }

    /// What a scripted upstream does with one connection it accepted.
    type Script = Box<dyn FnOnce(std::net::TcpStream, &AtomicUsize) + Send>;

    /// An upstream on its own thread (its writes and closes happen while
    /// the test's runtime is busy, as another host's would), running
    /// `scripts[i]` on the i-th connection; the count of connections
    /// accepted and of requests read.
    fn scripted(scripts: Vec<Script>) -> (u16, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let accepted = Arc::new(AtomicUsize::new(0));
        let requests = Arc::new(AtomicUsize::new(0));
        let (a, r) = (Arc::clone(&accepted), Arc::clone(&requests));
        std::thread::spawn(move || {
            for script in scripts {
                let (io, _) = listener.accept().unwrap();
                a.fetch_add(1, Ordering::SeqCst);
                let r = Arc::clone(&r);
                std::thread::spawn(move || script(io, &r));
            }
        });
        (port, accepted, requests)
    }

    /// Reads one request with a 2-byte body (the tests' `{}`) and counts
    /// it; `false` when the connection ended first.
    fn read_request(io: &mut std::net::TcpStream, requests: &AtomicUsize) -> bool {
        use std::io::Read;
        let mut buf = Vec::new();
        let mut byte = [0u8; 1];
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n")
                && buf.len() == end + 6
            {
                requests.fetch_add(1, Ordering::SeqCst);
                return true;
            }
            match io.read(&mut byte) {
                Ok(1) => buf.push(byte[0]),
                _ => return false,
            }
        }
    }

    /// Writes `bytes` (the client may have gone: ignored).
    fn send(io: &mut std::net::TcpStream, bytes: &[u8]) {
        use std::io::Write;
        let _ = io.write_all(bytes);
    }

    /// A kept-alive `200` with `body`.
    fn ok(body: &str) -> Vec<u8> {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\n\r\n{body}",
            body.len()
        )
        .into_bytes()
    }

    /// Answers one request with `body`, then each next with `body` too.
    fn answers(body: &'static str) -> Script {
        Box::new(move |mut io, n| {
            while read_request(&mut io, n) {
                send(&mut io, &ok(body));
            }
        })
    }

    async fn post(up: &Upstream) -> Result<Answer, String> {
        up.post_json(&HeaderMap::new(), None, Bytes::from_static(b"{}"), 1024)
            .await
    }

    /// The upstream closes an idle kept-alive connection (its keep-alive
    /// timeout) and the proxy's worker, busy, has not turned its reactor
    /// since: the connection is still found closed before it is reused,
    /// and the next request goes on a new one (it was a 502, "the
    /// connection closed before an answer").
    #[tokio::test]
    async fn a_pooled_connection_the_upstream_closed_is_not_reused() {
        let (port, accepted, requests) = scripted(vec![
            Box::new(|mut io, n| {
                read_request(&mut io, n);
                send(&mut io, &ok(r#"{"n":1}"#));
                std::thread::sleep(Duration::from_millis(20));
            }),
            answers(r#"{"n":2}"#),
        ]);
        let up = local(port);
        assert_eq!(&post(&up).await.unwrap().bytes[..], br#"{"n":1}"#);
        // Busy: this thread's reactor does not run while the upstream closes.
        std::thread::sleep(Duration::from_millis(300));
        let a = post(&up).await.unwrap();
        assert_eq!((a.status.as_u16(), &a.bytes[..]), (200, &br#"{"n":2}"#[..]));
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
        assert_eq!(requests.load(Ordering::SeqCst), 2, "each request sent once");
    }

    /// Bytes an upstream sends after an answer (past its length, here a
    /// whole forged answer) are never read as the answer to the next
    /// request on that connection: it is dropped, the request goes on a
    /// new one.
    #[tokio::test]
    async fn bytes_after_an_answer_are_never_read_as_the_next_one() {
        let (port, accepted, _) = scripted(vec![
            Box::new(|mut io, n| {
                read_request(&mut io, n);
                send(&mut io, &ok(r#"{"n":1}"#));
                std::thread::sleep(Duration::from_millis(20));
                send(&mut io, &ok(r#"{"n":9}"#));
                std::thread::sleep(Duration::from_secs(2));
            }),
            answers(r#"{"n":2}"#),
        ]);
        let up = local(port);
        assert_eq!(&post(&up).await.unwrap().bytes[..], br#"{"n":1}"#);
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(&post(&up).await.unwrap().bytes[..], br#"{"n":2}"#);
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    /// A pooled connection that fails before a byte of the request is
    /// written (found closed by the answer's read) is replaced once by a
    /// new one: the upstream cannot have seen the request. A new
    /// connection that fails so is not tried again.
    #[tokio::test]
    async fn a_pooled_connection_that_fails_before_writing_is_replaced_once() {
        let (port, accepted, requests) = scripted(vec![
            Box::new(|_, _| {}),
            answers(r#"{"n":2}"#),
            Box::new(|_, _| {}),
            answers(r#"{"n":4}"#),
        ]);
        let up = local(port);
        let conn = up.connect().await.unwrap();
        // The close is heard by this thread's reactor: the answer's read
        // sees the end before the request's write starts.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let req: &[u8] = b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 2\r\n\r\n";
        let a = up.send(conn, true, req, b"{}", 1024).await.unwrap();
        assert_eq!((a.status.as_u16(), &a.bytes[..]), (200, &br#"{"n":2}"#[..]));
        assert_eq!(accepted.load(Ordering::SeqCst), 2, "replaced once");

        let conn = up.connect().await.unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let e = up.send(conn, false, req, b"{}", 1024).await.err().unwrap();
        assert_eq!(e, "request failed: the connection closed before an answer");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            3,
            "a new connection is not replaced"
        );
        assert_eq!(requests.load(Ordering::SeqCst), 1);
    }

    /// An answer already waiting on a pooled connection before a byte of
    /// the request is written is no answer to it: never returned, the
    /// request goes on a new connection.
    #[tokio::test]
    async fn an_answer_before_the_request_is_not_taken_for_its_answer() {
        let (port, accepted, _) = scripted(vec![
            Box::new(|mut io, _| {
                send(&mut io, &ok(r#"{"n":9}"#));
                std::thread::sleep(Duration::from_secs(2));
            }),
            answers(r#"{"n":2}"#),
        ]);
        let up = local(port);
        let conn = up.connect().await.unwrap();
        // The bytes are heard by this thread's reactor before the request.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let req: &[u8] = b"POST /v1/chat/completions HTTP/1.1\r\ncontent-length: 2\r\n\r\n";
        let a = up.send(conn, true, req, b"{}", 1024).await.unwrap();
        assert_eq!(&a.bytes[..], br#"{"n":2}"#);
        assert_eq!(accepted.load(Ordering::SeqCst), 2);
    }

    /// The upstream reads a request on a kept-alive connection and closes
    /// it without an answer (it may have run the request: a model spends
    /// tokens on it). The request is not sent again: a 502 in the proxy,
    /// the upstream saw it once.
    #[tokio::test]
    async fn a_request_the_upstream_read_and_dropped_is_not_sent_again() {
        let (port, accepted, requests) = scripted(vec![
            Box::new(|mut io, n| {
                read_request(&mut io, n);
                send(&mut io, &ok(r#"{"n":1}"#));
                read_request(&mut io, n);
            }),
            answers(r#"{"n":2}"#),
        ]);
        let up = local(port);
        assert_eq!(&post(&up).await.unwrap().bytes[..], br#"{"n":1}"#);
        let e = post(&up).await.err().unwrap();
        assert_eq!(e, "request failed: the connection closed before an answer");
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert_eq!(
            requests.load(Ordering::SeqCst),
            2,
            "the second request was read once"
        );
        assert_eq!(accepted.load(Ordering::SeqCst), 1, "no second connection");
    }

    /// A hostile or faulty upstream on loopback: each answer is read as
    /// it is framed or refused with why, and the next request on the
    /// client always gets the next answer, never what was left of this one.
    #[tokio::test]
    async fn no_faulty_answer_is_framed_onto_the_next_request() {
        let big_head = format!("HTTP/1.1 200 OK\r\nx: {}\r\n\r\n", "a".repeat(70_000));
        // What, the answer, whether the upstream closes after it, and the
        // body read or the error.
        type Case = (
            &'static str,
            Vec<u8>,
            bool,
            Result<&'static str, &'static str>,
        );
        let cases: Vec<Case> = vec![
            (
                "interim answers",
                b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nlink: </s>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok".to_vec(),
                false,
                Ok("ok"),
            ),
            (
                "a length and chunked",
                b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n".to_vec(),
                false,
                Ok("ok"),
            ),
            (
                "two lengths",
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 40\r\n\r\nok".to_vec(),
                false,
                Err("request failed: content-length values that differ"),
            ),
            (
                "extensions and trailers",
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1;a=\"b\"\r\no\r\n1 ; c\r\nk\r\n0\r\nx-t: 1\r\n\r\n".to_vec(),
                false,
                Ok("ok"),
            ),
            (
                "an overflowing chunk size",
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nffffffffffffffffff\r\nok\r\n0\r\n\r\n".to_vec(),
                false,
                Err("bad body: an invalid chunk size"),
            ),
            (
                "more than the length",
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nokHTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nno".to_vec(),
                false,
                Ok("ok"),
            ),
            (
                "HTTP/1.0 to the end",
                b"HTTP/1.0 200 OK\r\n\r\nok".to_vec(),
                true,
                Ok("ok"),
            ),
            (
                "HTTP/1.0 chunked",
                b"HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ntransfer-encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n".to_vec(),
                false,
                Err("request failed: an HTTP/1.0 answer with a transfer coding"),
            ),
            (
                "a head over the limit",
                big_head.into_bytes(),
                false,
                Err("request failed: the answer's head is too large"),
            ),
            (
                "a garbage status line",
                b"HTTP/1.1 2OO OK\r\ncontent-length: 2\r\n\r\nok".to_vec(),
                false,
                Err("request failed: an invalid answer head (invalid response status)"),
            ),
            (
                "a body after 204",
                b"HTTP/1.1 204 No Content\r\ncontent-length: 2\r\n\r\nno".to_vec(),
                false,
                Ok(""),
            ),
        ];
        for (what, answer, close, expected) in cases {
            let (port, _, _) = scripted(vec![
                Box::new(move |mut io, n| {
                    read_request(&mut io, n);
                    send(&mut io, &answer);
                    if close {
                        return;
                    }
                    while read_request(&mut io, n) {
                        send(&mut io, &ok("next"));
                    }
                }),
                answers("next"),
            ]);
            let up = local(port);
            let got = post(&up).await;
            match expected {
                Ok(body) => assert_eq!(&got.unwrap().bytes[..], body.as_bytes(), "{what}"),
                Err(e) => assert_eq!(got.err().unwrap(), e, "{what}"),
            }
            for _ in 0..2 {
                assert_eq!(&post(&up).await.unwrap().bytes[..], b"next", "{what}");
            }
        }
    }

    #[test]
    fn only_plain_http_without_credentials_is_served_here() {
        let t = Duration::from_secs(1);
        let up = Upstream::for_base("http://[::1]:8000/v1", t).unwrap();
        assert_eq!((up.host.as_str(), up.port), ("::1", 8000));
        assert_eq!(
            String::from_utf8_lossy(&up.head),
            "POST /v1/chat/completions HTTP/1.1\r\nhost: [::1]:8000\r\n"
        );
        assert!(
            Upstream::for_base("http://h", t)
                .unwrap()
                .head
                .starts_with(b"POST /chat/completions HTTP/1.1\r\n")
        );
        assert_eq!(Upstream::for_base("http://h", t).unwrap().port, 80);
        assert!(Upstream::for_base("https://h/v1", t).is_none());
        assert!(Upstream::for_base("http://u:p@h/v1", t).is_none());
        assert!(Upstream::for_base("http://h/v1?x=1", t).is_none());
    }
}
