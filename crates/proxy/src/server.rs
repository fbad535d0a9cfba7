//! Running a router: on the current thread until a signal (the commands), or
//! on a background thread with its own runtime (tests, benchmarks).

use axum::Router;
use std::future::IntoFuture;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Serves `router` on `listener` until `shutdown` completes, then drains
/// in-flight requests (graceful shutdown).
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
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
}

impl Default for ServeOptions {
    fn default() -> ServeOptions {
        ServeOptions {
            max_connections: 1024,
            grace: Duration::from_secs(10),
        }
    }
}

/// A listener that holds one permit per open connection.
struct Capped {
    inner: tokio::net::TcpListener,
    permits: Arc<Semaphore>,
}

/// A connection and its permit (released when the connection closes).
struct CappedIo {
    io: tokio::net::TcpStream,
    _permit: OwnedSemaphorePermit,
}

impl axum::serve::Listener for Capped {
    type Io = CappedIo;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (CappedIo, SocketAddr) {
        // The semaphore is never closed, so acquiring cannot fail; if it
        // did, connections would no longer be capped but still served.
        let permit = Arc::clone(&self.permits).acquire_owned().await;
        loop {
            match self.inner.accept().await {
                Ok((io, addr)) => {
                    let _ = io.set_nodelay(true);
                    if let Ok(permit) = permit {
                        return (
                            CappedIo {
                                io,
                                _permit: permit,
                            },
                            addr,
                        );
                    }
                    // Unreachable in practice (see above): wait for a permit.
                    let Ok(p) = Arc::clone(&self.permits).acquire_owned().await else {
                        continue;
                    };
                    return (CappedIo { io, _permit: p }, addr);
                }
                // Out of file descriptors and the like: wait a little, as
                // axum's own listener does.
                Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

impl tokio::io::AsyncRead for CappedIo {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for CappedIo {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }
}

/// Serves the router `make` builds (inside the runtime) on `listen` until
/// Ctrl-C or SIGTERM; `on_ready` gets the bound address (port 0 picks one).
/// In-flight requests then get `opts.grace` to finish; a second signal or
/// the end of the grace stops the server at once.
pub fn run_blocking(
    listen: SocketAddr,
    make: impl FnOnce() -> Router,
    opts: ServeOptions,
    on_ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        on_ready(listener.local_addr()?);
        let capped = Capped {
            inner: listener,
            permits: Arc::new(Semaphore::new(opts.max_connections.max(1))),
        };
        let (first_tx, first_rx) = tokio::sync::oneshot::channel::<()>();
        let server = axum::serve(capped, make()).with_graceful_shutdown(async move {
            crate::shutdown::signal().await;
            let _ = first_tx.send(());
        });
        let server = server.into_future();
        tokio::pin!(server);
        tokio::select! {
            r = &mut server => return r,
            _ = first_rx => {}
        }
        tracing::info!(grace_s = opts.grace.as_secs_f64(), "shutting down");
        tokio::select! {
            r = &mut server => r,
            _ = tokio::time::sleep(opts.grace) => {
                tracing::warn!("grace period over: stopping with exchanges in flight");
                Ok(())
            }
            _ = crate::shutdown::signal() => {
                tracing::warn!("second signal: stopping with exchanges in flight");
                Ok(())
            }
        }
    });
    // In-flight tasks (slow clients, stalled upstreams) are not waited for.
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
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

/// Starts the router `make` builds on `127.0.0.1:0` in a background thread
/// with a two-worker runtime.
pub fn spawn(make: impl FnOnce() -> Router + Send + 'static) -> std::io::Result<Background> {
    let std_listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    std_listener.set_nonblocking(true)?;
    let addr = std_listener.local_addr()?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::Builder::new()
        .name(format!("toolgate-server-{}", addr.port()))
        .spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()?;
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(std_listener)?;
                serve(listener, make(), async move {
                    let _ = stopped.await;
                })
                .await
            })
        })?;
    Ok(Background {
        addr,
        stop: Some(stop),
        thread: Some(thread),
    })
}
