//! The HTTP layer the gateway and the mock upstream share: the accept loop
//! (connection cap, header and body timeouts, `TCP_NODELAY`), background
//! servers for tests and embedding, and the shutdown signal.

pub mod fdlimit;
pub mod server;
pub mod shutdown;

/// The items of a comma-separated header field (RFC 9110 §5.6.1) over
/// all of its lines, each trimmed of spaces and tabs, empty items
/// included: one reading for every list field the proxy acts on
/// (`Connection`, `Content-Encoding`, `Transfer-Encoding`).
pub(crate) fn tokens(
    headers: &axum::http::HeaderMap,
    name: axum::http::HeaderName,
) -> impl Iterator<Item = &[u8]> {
    headers
        .get_all(name)
        .into_iter()
        .flat_map(|v| v.as_bytes().split(|&b| b == b','))
        .map(<[u8]>::trim_ascii)
}
