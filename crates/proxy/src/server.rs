//! Running a router: on the current thread until a signal (the commands), or
//! on a background thread with its own runtime (tests, benchmarks).

use axum::Router;
use std::net::SocketAddr;

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

/// Serves the router `make` builds (inside the runtime) on `listen` until
/// Ctrl-C or SIGTERM; `on_ready` gets the bound address (port 0 picks one).
pub fn run_blocking(
    listen: SocketAddr,
    make: impl FnOnce() -> Router,
    on_ready: impl FnOnce(SocketAddr),
) -> std::io::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(listen).await?;
        on_ready(listener.local_addr()?);
        serve(listener, make(), crate::shutdown::signal()).await
    })
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
