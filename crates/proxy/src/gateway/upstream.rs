//! The upstream client for non-streamed chat completions over plain HTTP:
//! hyper's own HTTP/1.1 connections, pooled here.
//!
//! reqwest (which the proxy keeps for everything else: `https://`
//! upstreams, streams, other paths, an upstream URL with credentials, a
//! proxy set in the environment) goes through hyper-util's pooled client,
//! which spawns a task per request to put the connection back in its pool
//! and parses the URL on every request. Here the handler's own task sends
//! the request, reads the answer to its end (bounded by the caller's
//! limit) and puts the connection back itself. No task drives a
//! connection: the handler that holds it polls hyper's connection future
//! together with its own work ([`drive`]), so the socket's readiness wakes
//! the handler directly instead of a connection task that then wakes the
//! handler through hyper's channels (one wake-up, often one thread switch,
//! less per read and write). An idle connection is not polled at all; the
//! next handler to take it finds out whether the upstream closed it. A
//! connection whose answer was not read to its end (an error, a limit, the
//! client gone) is dropped, never reused.
//!
//! A pooled connection the upstream closed while idle fails before the
//! request is written: the request is then sent once on a new connection
//! (as hyper-util's client does). At most [`IDLE_MAX`] idle connections
//! are kept per worker thread (the server's: see `server::Workers`), each
//! for at most [`IDLE_FOR`]; sockets have Nagle off.

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::{Connection, SendRequest};
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::Poll;
use std::time::{Duration, Instant};

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
    /// The `Host` header.
    authority: HeaderValue,
    /// `/v1/chat/completions` under the base URL's path.
    chat: Uri,
    connect_timeout: Duration,
    /// Idle connections, one list per worker thread ([`POOLS`]): a
    /// connection is taken again on the thread whose reactor its socket is
    /// registered with.
    idle: [Mutex<Vec<(Conn, Instant)>>; POOLS],
}

/// Lists of idle connections; worker threads past this many share them.
const POOLS: usize = 16;

/// hyper's connection future for one upstream connection.
type Driver = Pin<Box<Connection<TokioIo<tokio::net::TcpStream>, Full<Bytes>>>>;

/// One upstream connection: the handle requests are sent through and the
/// connection future that does the reading and writing, polled by whoever
/// holds the pair ([`drive`]).
pub(crate) struct Conn {
    send: SendRequest<Full<Bytes>>,
    /// `None` once the connection future ended (the upstream closed the
    /// connection, or it failed): it is dropped then, as a task driving it
    /// would drop it, which settles whatever still waits on it; the
    /// connection is never pooled again.
    io: Option<Driver>,
}

/// Runs `work` while polling the connection future `io`, so that the
/// requests and answers `work` waits for move. When the connection future
/// ends it is dropped (hyper then answers or fails every request and body
/// still waiting on it) and `work` alone is polled.
async fn drive<F: Future>(io: &mut Option<Driver>, work: F) -> F::Output {
    let mut work = std::pin::pin!(work);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(out) = work.as_mut().poll(cx) {
            return Poll::Ready(out);
        }
        if let Some(conn) = io.as_mut()
            && conn.as_mut().poll(cx).is_ready()
        {
            *io = None;
            // What the connection's end settled (an answer, an error).
            return work.as_mut().poll(cx);
        }
        Poll::Pending
    })
    .await
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
        Some(Upstream {
            host,
            port,
            authority: HeaderValue::from_str(authority.as_str()).ok()?,
            chat,
            connect_timeout,
            idle: Default::default(),
        })
    }

    /// A connection ready for a request: an idle one, else a new one.
    /// `reused` says which.
    async fn connection(&self) -> Result<(Conn, bool), String> {
        loop {
            let next = self.idle().pop();
            let Some((mut conn, since)) = next else {
                break;
            };
            if since.elapsed() > IDLE_FOR || conn.send.is_closed() || conn.io.is_none() {
                continue;
            }
            let Conn { send, io } = &mut conn;
            if drive(io, send.ready()).await.is_ok() && conn.io.is_some() {
                return Ok((conn, true));
            }
        }
        let connect = async {
            let io = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
                .await
                .map_err(|e| format!("connection failed: {e}"))?;
            let _ = io.set_nodelay(true);
            let (send, io) = hyper::client::conn::http1::handshake(TokioIo::new(io))
                .await
                .map_err(|e| format!("connection failed: {e}"))?;
            Ok::<_, String>(Conn {
                send,
                io: Some(Box::pin(io)),
            })
        };
        match tokio::time::timeout(self.connect_timeout, connect).await {
            Ok(r) => r.map(|c| (c, false)),
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
        if conn.io.is_none() {
            return;
        }
        let mut idle = self.idle();
        if idle.len() < IDLE_MAX {
            idle.push((conn, Instant::now()));
        }
    }

    /// POSTs `body` to `/chat/completions` with `headers` (already without
    /// hop-by-hop ones) and reads the answer, at most `max` bytes.
    pub async fn post_json(
        &self,
        headers: &HeaderMap,
        body: Bytes,
        max: usize,
    ) -> Result<Answer, String> {
        let request = || {
            let mut req = Request::new(Full::new(body.clone()));
            *req.method_mut() = Method::POST;
            *req.uri_mut() = self.chat.clone();
            let h = req.headers_mut();
            h.reserve(headers.len() + 3);
            for (k, v) in headers {
                h.append(k.clone(), v.clone());
            }
            // As reqwest sends it: the content type appended, `Accept`
            // when the client sent none.
            h.append(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            );
            if !h.contains_key(header::ACCEPT) {
                h.insert(header::ACCEPT, HeaderValue::from_static("*/*"));
            }
            h.insert(header::HOST, self.authority.clone());
            req
        };
        let (mut conn, reused) = self.connection().await?;
        let sent = {
            let Conn { send, io } = &mut conn;
            drive(io, send.try_send_request(request())).await
        };
        let resp = match sent {
            Ok(r) => r,
            // An idle connection the upstream closed: the request was not
            // written; once more on a new connection.
            Err(e) if reused && e.message().is_some() => {
                let (mut fresh, _) = self.connection_new().await?;
                let Conn { send, io } = &mut fresh;
                let r = drive(io, send.send_request(request()))
                    .await
                    .map_err(|e| format!("request failed: {e}"))?;
                conn = fresh;
                r
            }
            Err(e) => return Err(format!("request failed: {}", e.into_error())),
        };
        let (parts, mut incoming) = resp.into_parts();
        let read = async {
            let mut first: Option<Bytes> = None;
            let mut more: Vec<u8> = Vec::new();
            let mut len = 0usize;
            while let Some(frame) = incoming.frame().await {
                let frame = frame.map_err(|e| format!("bad body: {e}"))?;
                let Ok(data) = frame.into_data() else {
                    continue;
                };
                if len + data.len() > max {
                    return Err("the upstream answer is too large".to_string());
                }
                len += data.len();
                match &first {
                    None if more.is_empty() => first = Some(data),
                    _ => {
                        if let Some(f) = first.take() {
                            more.reserve(f.len() + data.len());
                            more.extend_from_slice(&f);
                        }
                        more.extend_from_slice(&data);
                    }
                }
            }
            Ok(match first {
                Some(b) => b,
                None => Bytes::from(more),
            })
        };
        let bytes = drive(&mut conn.io, read).await?;
        // The answer was read to its end: the connection can serve another
        // (unless it ended meanwhile: `put_back` drops it then).
        self.put_back(conn);
        Ok(Answer {
            status: parts.status,
            headers: parts.headers,
            bytes,
        })
    }

    /// A new connection, never an idle one.
    async fn connection_new(&self) -> Result<(Conn, bool), String> {
        // Idle ones may all be stale (the upstream restarted): drop them.
        for idle in &self.idle {
            idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
        self.connection().await
    }
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
        up.post_json(&HeaderMap::new(), Bytes::from_static(b"{}"), max)
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
                .post_json(&HeaderMap::new(), Bytes::from_static(b"{}"), 1024)
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
                .post_json(&HeaderMap::new(), Bytes::from_static(b"{}"), 1024)
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
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut io, _) = listener.accept().await.unwrap();
            let mut chunk = [0u8; 4096];
            let _ = io.read(&mut chunk).await;
            io.write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 40\r\n\r\n{\"choices\": []")
                .await
                .unwrap();
            // Dropped: the connection closes 26 bytes short.
        });
        let up = local(port);
        let e = refused(&up, 1024).await;
        assert!(e.starts_with("bad body"), "{e}");
        assert!(
            up.idle.iter().all(|i| i.lock().unwrap().is_empty()),
            "a cut connection is not pooled"
        );
    }

    #[test]
    fn only_plain_http_without_credentials_is_served_here() {
        let t = Duration::from_secs(1);
        let up = Upstream::for_base("http://[::1]:8000/v1", t).unwrap();
        assert_eq!((up.host.as_str(), up.port), ("::1", 8000));
        assert_eq!(up.chat, "/v1/chat/completions");
        assert_eq!(
            Upstream::for_base("http://h", t).unwrap().chat,
            "/chat/completions"
        );
        assert_eq!(Upstream::for_base("http://h", t).unwrap().port, 80);
        assert!(Upstream::for_base("https://h/v1", t).is_none());
        assert!(Upstream::for_base("http://u:p@h/v1", t).is_none());
        assert!(Upstream::for_base("http://h/v1?x=1", t).is_none());
    }
}
