//! The HTTP layer the gateway and the mock upstream share: the accept loop
//! (connection cap, header and body timeouts, `TCP_NODELAY`), background
//! servers for tests and embedding, and the shutdown signal.

pub mod server;
pub mod shutdown;
