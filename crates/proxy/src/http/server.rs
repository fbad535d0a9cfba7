//! Running a router: on the current thread until a signal (the commands), or
//! on a background thread with its own runtime (tests, benchmarks).

use axum::Router;
use axum::response::Response;
use hyper::body::Incoming;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

/// A response on its way.
pub type Responding = Pin<Box<dyn Future<Output = Response> + Send>>;

/// A route served before the router (the proxy's chat completions: one
/// method and path compared instead of the router's lookup, extractors and
/// boxed services).
#[derive(Clone)]
pub struct Hot {
    /// Whether the route takes a request, by its method and path.
    pub takes: fn(&axum::http::Method, &str) -> bool,
    /// Serves a request it takes.
    pub serve: Arc<dyn Fn(hyper::Request<Incoming>) -> Responding + Send + Sync>,
}

/// What a server serves: a router, and a [`Hot`] route tried first.
pub struct App {
    /// Every request the hot route does not take.
    pub router: Router,
    /// Tried first.
    pub hot: Option<Hot>,
}

impl From<Router> for App {
    fn from(router: Router) -> App {
        App { router, hot: None }
    }
}

/// One connection's service: the hot route, then the router.
#[derive(Clone)]
struct Service {
    router: hyper_util::service::TowerToHyperService<Router>,
    hot: Option<Hot>,
}

impl hyper::service::Service<hyper::Request<Incoming>> for Service {
    type Response = Response;
    type Error = Infallible;
    /// The hot route's future, or the router's as it was (no box added).
    type Future = futures_util::future::Either<
        futures_util::future::Map<Responding, fn(Response) -> Result<Response, Infallible>>,
        <hyper_util::service::TowerToHyperService<Router> as hyper::service::Service<
            hyper::Request<Incoming>,
        >>::Future,
    >;

    fn call(&self, req: hyper::Request<Incoming>) -> Self::Future {
        use futures_util::FutureExt;
        let ok: fn(Response) -> Result<Response, Infallible> = Ok;
        if let Some(refused) = unknown_transfer_coding(req.headers()) {
            let ready: Responding = Box::pin(std::future::ready(refused));
            return futures_util::future::Either::Left(ready.map(ok));
        }
        if let Some(hot) = &self.hot
            && (hot.takes)(req.method(), req.uri().path())
        {
            return futures_util::future::Either::Left((hot.serve)(req).map(ok));
        }
        futures_util::future::Either::Right(self.router.call(req))
    }
}

/// A 501 for a request with a transfer coding other than `chunked` (RFC
/// 9112 §6.1: a server that does not understand a coding responds 501).
/// hyper decodes `chunked` and refuses a request whose last coding is not
/// `chunked`; what it lets through, such as `gzip, chunked`, would be read
/// as if the `gzip` were not there.
fn unknown_transfer_coding(headers: &axum::http::HeaderMap) -> Option<Response> {
    use axum::response::IntoResponse;
    let unknown = super::tokens(headers, axum::http::header::TRANSFER_ENCODING)
        .any(|t| !t.eq_ignore_ascii_case(b"chunked"));
    unknown.then(|| {
        (
            axum::http::StatusCode::NOT_IMPLEMENTED,
            [(axum::http::header::CONTENT_TYPE, "application/json")],
            r#"{"error":{"message":"no transfer coding other than chunked is supported","type":"invalid_request_error","code":null}}"#,
        )
            .into_response()
    })
}

thread_local! {
    /// Which [`Workers`] thread this is (0 on any other thread).
    static WORKER: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Which worker thread the caller runs on: 0 outside the workers. Per-thread
/// state (the upstream's idle connections) is kept by it.
pub(crate) fn worker() -> usize {
    WORKER.get()
}

/// The threads that serve connections: one single-threaded runtime each
/// (none: the accept loop's runtime serves them).
///
/// A connection is handed to one of them in turn and stays there, with the
/// tasks it spawns and the upstream connections it opens (their sockets
/// register with that thread's reactor). Compared with tokio's
/// work-stealing pool, no thread wakes another to steal a task that was
/// just woken, and no socket's readiness is delivered on one thread to a
/// task that runs on another: nginx's worker processes, as threads.
struct Workers {
    handles: Vec<tokio::runtime::Handle>,
    /// Each thread's stop signal and the thread.
    threads: Vec<(
        tokio::sync::oneshot::Sender<()>,
        std::thread::JoinHandle<()>,
    )>,
}

impl Workers {
    /// `n` worker threads (0: one per core).
    fn start(n: usize) -> std::io::Result<Workers> {
        let n = if n == 0 {
            std::thread::available_parallelism().map_or(1, |n| n.get())
        } else {
            n
        };
        let mut workers = Workers {
            handles: Vec::with_capacity(n),
            threads: Vec::with_capacity(n),
        };
        for i in 0..n {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            workers.handles.push(runtime.handle().clone());
            let thread = std::thread::Builder::new()
                .name(format!("toolgate-worker-{i}"))
                .spawn(move || {
                    WORKER.set(i);
                    runtime.spawn(keep_near());
                    let _ = runtime.block_on(stopped);
                    // Connections still open past the grace (slow clients,
                    // stalled upstreams) are dropped, as a runtime drops its
                    // tasks; their exchanges are recorded as they drop.
                    runtime.shutdown_timeout(Duration::from_millis(500));
                });
            match thread {
                Ok(t) => workers.threads.push((stop, t)),
                Err(e) => {
                    workers.stop();
                    return Err(e);
                }
            }
        }
        Ok(workers)
    }

    /// Stops every thread and waits for it (blocking: outside any runtime).
    fn stop(self) {
        // All are told first, so that they wind down together.
        let threads: Vec<_> = self
            .threads
            .into_iter()
            .map(|(stop, thread)| {
                // Unsent only when the thread is gone already.
                let _ = stop.send(());
                thread
            })
            .collect();
        for thread in threads {
            let _ = thread.join();
        }
    }
}

/// How far ahead a worker's timers always reach (see [`keep_near`]).
const NEAR: Duration = Duration::from_secs(1);

/// Keeps a timer at most [`NEAR`] ahead on a worker's runtime, for good.
///
/// tokio wakes its reactor (an `eventfd` write, then an `epoll_wait` that
/// returns at once) whenever a timer is registered with a deadline earlier
/// than the one the reactor last parked until, also on a current-thread
/// runtime whose thread is running, not parked (tokio-rs/tokio#5207, open
/// at tokio 1.54). Each request registers such timers: hyper's header-read
/// timeout for the connection's next request, and the upstream timeout. A
/// worker that parked while its only other timer was minutes away made one
/// wasted system call and one wasted reactor turn per request. With a timer
/// never more than [`NEAR`] ahead, every park's deadline is at most that
/// far, the requests' timeouts (seconds to minutes) fall after it, and no
/// wake is made. The cost: an idle worker wakes once a [`NEAR`].
async fn keep_near() {
    loop {
        tokio::time::sleep(NEAR).await;
    }
}

/// The runtime a server's accept loop runs on, and its [`Workers`] (see
/// [`ServeOptions::workers`]). With workers, the accept loop needs one
/// thread; without (no worker threads), the runtime is tokio's
/// work-stealing pool (`threads` workers, else one per core) and serves the
/// connections too.
fn runtimes(
    workers: Option<usize>,
    threads: Option<usize>,
) -> std::io::Result<(tokio::runtime::Runtime, Workers)> {
    let Some(n) = workers else {
        let mut pool = tokio::runtime::Builder::new_multi_thread();
        if let Some(t) = threads {
            pool.worker_threads(t);
        }
        let none = Workers {
            handles: Vec::new(),
            threads: Vec::new(),
        };
        return Ok((pool.enable_all().build()?, none));
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    Ok((runtime, Workers::start(n)?))
}

/// Failed accepts (EMFILE, ENFILE), logged at most once a second with how
/// many there were: the loop retries every 50 ms, and a line per retry would
/// flood the log.
#[derive(Default)]
struct AcceptErrors {
    /// Failures not yet logged.
    count: u64,
    last_logged: Option<std::time::Instant>,
}

impl AcceptErrors {
    /// Counts `e`; the log line, when a second has passed since the last.
    fn note(&mut self, e: &std::io::Error, now: std::time::Instant) -> Option<String> {
        self.count += 1;
        if self
            .last_logged
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            return None;
        }
        let line = format!(
            "cannot accept connections: {e} ({} time{} since the last report)",
            self.count,
            if self.count == 1 { "" } else { "s" }
        );
        tracing::error!("{line}");
        self.count = 0;
        self.last_logged = Some(now);
        Some(line)
    }
}

/// Serves `router` over HTTP/1.1: at most `opts.max_connections`
/// connections at once (the next is accepted when one closes), each given
/// `opts.header_timeout` to send a request's headers, each served on one of
/// the `workers` runtimes in turn (on the caller's runtime when there are
/// none). When `shutdown` completes, the listener closes and every
/// connection finishes its request in flight; this returns when they all
/// have.
async fn serve_with(
    listener: tokio::net::TcpListener,
    app: App,
    opts: ServeOptions,
    workers: &[tokio::runtime::Handle],
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let permits = Arc::new(Semaphore::new(opts.max_connections.max(1)));
    let (close_tx, close_rx) = tokio::sync::watch::channel(());
    let mut conns = tokio::task::JoinSet::new();
    let mut turn = 0usize;
    let mut accept_errors = AcceptErrors::default();
    tokio::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            p = Arc::clone(&permits).acquire_owned() => p,
            _ = &mut shutdown => break,
        };
        // The semaphore is never closed.
        let Ok(permit) = permit else { break };
        let io = tokio::select! {
            r = listener.accept() => match r {
                Ok((io, _)) => io,
                // Out of file descriptors and the like: wait a little.
                Err(e) => {
                    accept_errors.note(&e, std::time::Instant::now());
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = io.set_nodelay(true);
        let service = Service {
            router: hyper_util::service::TowerToHyperService::new(app.router.clone()),
            hot: app.hot.clone(),
        };
        let mut close = close_rx.clone();
        let header_timeout = opts.header_timeout;
        let write_timeout = opts.write_timeout;
        let serve = move |io: tokio::net::TcpStream| async move {
            let _permit = permit;
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(header_timeout);
            let io = WriteProgress::new(io, write_timeout);
            let conn = http.serve_connection(hyper_util::rt::TokioIo::new(io), service);
            tokio::pin!(conn);
            tokio::select! {
                _ = conn.as_mut() => {}
                _ = close.changed() => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.as_mut().await;
                }
            }
        };
        if workers.is_empty() {
            conns.spawn(serve(io));
        } else {
            // Registered again with the reactor of the worker that serves it.
            let Ok(io) = io.into_std() else { continue };
            turn = turn.wrapping_add(1);
            conns.spawn_on(
                async move {
                    if let Ok(io) = tokio::net::TcpStream::from_std(io) {
                        serve(io).await;
                    }
                },
                &workers[turn % workers.len()],
            );
        }
        // Reap the connections that ended.
        while conns.try_join_next().is_some() {}
    }
    drop(listener);
    let _ = close_tx.send(());
    while conns.join_next().await.is_some() {}
    Ok(())
}

/// A connection whose writes fail once one has waited longer than its
/// timeout for the peer to make room (a client that stopped reading, with
/// both socket buffers full).
///
/// Only a write that stays pending is timed: one that completes (even
/// partly) disarms the timer, so a slow reader that keeps reading, or a
/// stream whose frames are far apart, is never cut; every write of a
/// stream counts as progress. Without it a client that never reads held
/// its connection, and one of `--max-connections`, for good: hyper's
/// header timeout only covers reading. The timer is made only when a
/// write waits.
pub(crate) struct WriteProgress<T> {
    io: T,
    timeout: Duration,
    /// Armed while a write waits.
    waiting: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> WriteProgress<T> {
    pub(crate) fn new(io: T, timeout: Duration) -> WriteProgress<T> {
        WriteProgress {
            io,
            timeout,
            waiting: None,
        }
    }

    /// What a write's poll says, with the timer: ready disarms it, pending
    /// arms it (once) and fails the write when it has run out.
    fn timed<R>(
        &mut self,
        cx: &mut std::task::Context<'_>,
        polled: std::task::Poll<std::io::Result<R>>,
    ) -> std::task::Poll<std::io::Result<R>> {
        use std::task::Poll;
        match polled {
            Poll::Ready(r) => {
                self.waiting = None;
                Poll::Ready(r)
            }
            Poll::Pending => {
                let timeout = self.timeout;
                let waiting = self
                    .waiting
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
                match waiting.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::TimedOut,
                        "the client read nothing within the write timeout",
                    ))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<T: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WriteProgress<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl<T: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for WriteProgress<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        this.timed(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.timed(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_flush(cx);
        this.timed(cx, polled)
    }

    fn poll_shutdown(
        self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_shutdown(cx);
        this.timed(cx, polled)
    }
}

/// How a command's server runs.
#[derive(Clone, Copy, Debug)]
pub struct ServeOptions {
    /// Client connections open at once; the next is accepted when one
    /// closes (the kernel's backlog holds the rest).
    pub max_connections: usize,
    /// After the first SIGTERM or Ctrl-C, how long in-flight requests get
    /// to finish; a second signal, or the end of the grace, exits.
    pub grace: Duration,
    /// How long a client may take to send a request's headers.
    pub header_timeout: Duration,
    /// How long a write to a client may wait for the client to read
    /// ([`WriteProgress`]): past it the connection is closed, so that a
    /// client that never reads cannot hold a connection for good.
    pub write_timeout: Duration,
    /// Threads serving connections, each with its own single-threaded
    /// runtime, a connection staying on one (`Some(0)`: one per core, the
    /// default). `None`: tokio's work-stealing pool, as the mock upstream
    /// is served (the upstream every proxy benchmark has measured against).
    pub workers: Option<usize>,
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            max_connections: 1024,
            grace: Duration::from_secs(10),
            header_timeout: Duration::from_secs(30),
            write_timeout: Duration::from_secs(30),
            workers: Some(0),
        }
    }
}

/// Serves the router `make` builds (inside the runtime) on `listen` until
/// Ctrl-C or SIGTERM; `on_ready` gets the bound address (port 0 picks one).
/// In-flight requests then get `opts.grace` to finish; a second signal or
/// the end of the grace stops the server at once.
pub fn run_blocking<A: Into<App>>(
    listen: SocketAddr,
    make: impl FnOnce() -> A,
    opts: ServeOptions,
    on_ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    run_blocking_until_idle(listen, make, opts, on_ready, || true)
}

/// [`run_blocking`], and after the server stops, waits (within what is left
/// of the grace) until `idle` says the work the requests left behind (the
/// proxy's recordings) is done.
pub fn run_blocking_until_idle<A: Into<App>>(
    listen: SocketAddr,
    make: impl FnOnce() -> A,
    opts: ServeOptions,
    on_ready: impl FnOnce(SocketAddr),
    idle: impl Fn() -> bool,
) -> std::io::Result<()> {
    crate::http::fdlimit::prepare(opts.max_connections);
    let (runtime, workers) = runtimes(opts.workers, None)?;
    let handles = &workers.handles;
    let result = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        on_ready(listener.local_addr()?);
        let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
        let server = serve_with(listener, make().into(), opts, handles, async move {
            crate::shutdown::signal().await;
            let _ = first_tx.send(());
        });
        tokio::pin!(server);
        tokio::select! {
            r = &mut server => return r,
            _ = first_rx => {}
        }
        tracing::info!(grace_s = opts.grace.as_secs_f64(), "shutting down");
        let deadline = tokio::time::Instant::now() + opts.grace;
        let second = crate::shutdown::signal();
        tokio::pin!(second);
        let r = tokio::select! {
            r = &mut server => r,
            _ = tokio::time::sleep_until(deadline) => {
                tracing::warn!("grace period over: stopping with exchanges in flight");
                Ok(())
            }
            _ = &mut second => {
                tracing::warn!("second signal: stopping with exchanges in flight");
                return Ok(());
            }
        };
        while !idle() && tokio::time::Instant::now() < deadline {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_millis(20)) => {}
                _ = &mut second => return Ok(()),
            }
        }
        r
    });
    // In-flight tasks (slow clients, stalled upstreams) are not waited for;
    // what they leave behind is written on the spot (see [`stopping`]).
    STOPPING.store(true, std::sync::atomic::Ordering::Release);
    workers.stop();
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}

static STOPPING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether the process's server is stopping: its runtime drops the tasks
/// still running, and a blocking task spawned now would never run.
pub fn stopping() -> bool {
    STOPPING.load(std::sync::atomic::Ordering::Acquire)
}

/// A server running on its own thread and runtime, on a free loopback
/// port; stopped (gracefully) when dropped.
pub struct Background {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<std::io::Result<()>>>,
}

impl Background {
    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The OpenAI base URL (`http://127.0.0.1:PORT/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Stops the server: waits for in-flight requests to finish.
    pub fn stop(mut self) -> std::io::Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> std::io::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        match self.thread.take().map(|t| t.join()) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(std::io::Error::other("the server thread panicked")),
            None => Ok(()),
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Starts the router `make` builds on `127.0.0.1:0` in a background thread,
/// served by the default [`ServeOptions::workers`].
pub fn spawn<A: Into<App>>(
    make: impl FnOnce() -> A + Send + 'static,
) -> std::io::Result<Background> {
    spawn_with(ServeOptions::default(), make)
}

/// [`spawn`] with these options.
pub fn spawn_with<A: Into<App>>(
    opts: ServeOptions,
    make: impl FnOnce() -> A + Send + 'static,
) -> std::io::Result<Background> {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    std_listener.set_nonblocking(true)?;
    let addr = std_listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(format!("toolgate-server-{}", addr.port()))
        .spawn(move || {
            let (runtime, workers) = runtimes(opts.workers, Some(2))?;
            let handles = &workers.handles;
            let result = runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener)?;
                serve_with(listener, make().into(), opts, handles, async move {
                    let _ = stopped.await;
                })
                .await
            });
            workers.stop();
            result
        })?;
    Ok(Background {
        addr,
        stop: Some(stop),
        thread: Some(thread),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    use std::io::{BufRead, BufReader, Read, Write};

    /// The name of the thread that answered, for each of `n` requests on
    /// one keep-alive connection.
    fn threads_of_one_connection(addr: SocketAddr, n: usize) -> Vec<String> {
        let mut io = std::net::TcpStream::connect(addr).unwrap();
        io.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut reader = BufReader::new(io.try_clone().unwrap());
        (0..n)
            .map(|_| {
                io.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        len = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" {
                        break;
                    }
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).unwrap();
                String::from_utf8(body).unwrap()
            })
            .collect()
    }

    /// A server on `workers` answering every request with the name of the
    /// thread that served it and its worker index.
    fn naming_threads(workers: Option<usize>) -> Background {
        let opts = ServeOptions {
            workers,
            ..Default::default()
        };
        spawn_with(opts, || {
            Router::new().route(
                "/",
                axum::routing::get(|| async {
                    let name = std::thread::current().name().unwrap_or("?").to_string();
                    format!("{name}/{}", worker())
                }),
            )
        })
        .unwrap()
    }

    /// Connections are handed to the workers in turn, and every request of
    /// a connection is served on the worker it was handed to.
    #[test]
    fn each_connection_stays_on_the_worker_it_was_handed_to() {
        let server = naming_threads(Some(2));
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..4 {
            let answers = threads_of_one_connection(server.addr(), 3);
            assert!(answers[0].starts_with("toolgate-worker-"), "{answers:?}");
            assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
            seen.insert(answers[0].clone());
        }
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            ["toolgate-worker-0/0", "toolgate-worker-1/1"]
        );
        server.stop().unwrap();
    }

    /// Without workers, the pool serves (the mock upstream's setting).
    #[test]
    fn without_workers_the_pool_serves() {
        let server = naming_threads(None);
        let answers = threads_of_one_connection(server.addr(), 2);
        assert!(
            answers.iter().all(|a| a == "tokio-rt-worker/0"),
            "{answers:?}"
        );
        server.stop().unwrap();
    }

    // probe44b: failed accepts were retried every 50 ms with no word.
    #[test]
    fn accept_errors_are_logged_at_most_once_a_second_with_a_count() {
        let mut errors = AcceptErrors::default();
        let e = std::io::Error::from_raw_os_error(24);
        let t0 = std::time::Instant::now();
        let first = errors.note(&e, t0).unwrap();
        assert!(first.starts_with("cannot accept connections: "), "{first}");
        assert!(first.ends_with("(1 time since the last report)"), "{first}");
        for ms in 1..=19 {
            assert_eq!(errors.note(&e, t0 + Duration::from_millis(ms * 50)), None);
        }
        let next = errors.note(&e, t0 + Duration::from_secs(1)).unwrap();
        assert!(next.ends_with("(20 times since the last report)"), "{next}");
    }
}
