//! HTTP/1.1 as the proxy's upstream client speaks it (RFC 9112): one
//! request written, one answer read to its end.
//!
//! The answer's head is read with `httparse` (hyper's parser), at most
//! [`MAX_HEAD`] bytes and [`MAX_HEADERS`] fields; informational (1xx)
//! answers are skipped, a protocol switch is refused. The body is framed
//! as RFC 9112 §6.3 says: none for 204 and 304, chunked when chunked is
//! the last transfer coding, read to the connection's end for any other
//! transfer coding or when there is no length, else `Content-Length`
//! (every value the same number, or the answer is refused); an HTTP/1.0
//! answer with a transfer coding is refused (§6.1). A body is never
//! longer than the caller's limit, whatever the framing claims. Whether the
//! connection can carry another request is decided here too: not after a
//! body read to the connection's end, not after `Connection: close` (or an
//! HTTP/1.0 answer without keep-alive), not when bytes follow the answer,
//! not when both a length and a transfer coding were sent.

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use tokio::io::{AsyncRead, AsyncReadExt};

/// The most bytes an answer's head may take.
pub(crate) const MAX_HEAD: usize = 64 * 1024;
/// The most header fields an answer may have (hyper's default).
pub(crate) const MAX_HEADERS: usize = 100;
/// The longest chunk-size line (with its extensions) or trailer field.
const MAX_LINE: usize = 4 * 1024;
/// The most bytes of trailer fields after the last chunk.
const MAX_TRAILERS: usize = 16 * 1024;
/// The most informational answers skipped before the answer.
const MAX_INFORMATIONAL: usize = 16;
/// How much the read buffer grows by when it needs room.
const READ_CHUNK: usize = 16 * 1024;
/// The most memory a promised length (or chunk size) reserves before its
/// bytes come.
const PROMISED_ROOM: usize = 1 << 20;
/// The largest read buffer a connection keeps between answers.
const KEPT_BUFFER: usize = 64 * 1024;

/// An answer read to its end.
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// Whether the connection can carry another request.
    pub reusable: bool,
}

/// Why an answer could not be read.
#[derive(Debug, PartialEq)]
pub(crate) enum Error {
    /// The connection ended before any byte of an answer.
    Closed,
    /// The head is not an HTTP/1.x answer the proxy reads.
    Head(String),
    /// The body ended early or is not framed as its head says.
    Body(String),
    /// The body is longer than the caller's limit.
    TooLarge,
}

/// How the body of an answer is delimited.
#[derive(Debug, PartialEq)]
enum Framing {
    Empty,
    Length(u64),
    Chunked,
    /// Read to the connection's end.
    Close,
}

/// A parsed head: the answer's status and fields, how its body is framed,
/// whether the connection may be kept, and the head's length in bytes.
struct Head {
    status: StatusCode,
    headers: HeaderMap,
    framing: Framing,
    keep: bool,
    len: usize,
}

/// Reads one answer from `io`, its body at most `max` bytes, through
/// `buf` (the connection's read buffer, kept between answers; emptied
/// first).
pub(crate) async fn read_answer<R: AsyncRead + Unpin>(
    io: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> Result<Answer, Error> {
    buf.clear();
    if buf.capacity() > KEPT_BUFFER {
        *buf = Vec::new();
    }
    let mut informational = 0;
    // How far `buf` is known to hold no end of a head: a head that arrives a
    // byte at a time is searched once, not parsed again at every byte.
    let mut searched = 0usize;
    let head = loop {
        let ended = memchr::memmem::find(&buf[searched.saturating_sub(1)..], b"\n\n").is_some()
            || memchr::memmem::find(&buf[searched.saturating_sub(2)..], b"\n\r\n").is_some();
        let parsed = if ended { parse_head(buf)? } else { None };
        searched = buf.len();
        match parsed {
            Some(h) if h.status.is_informational() => {
                if h.status == StatusCode::SWITCHING_PROTOCOLS {
                    return Err(Error::Head("the upstream switched protocols".into()));
                }
                informational += 1;
                if informational > MAX_INFORMATIONAL {
                    return Err(Error::Head("too many informational answers".into()));
                }
                buf.drain(..h.len);
                searched = 0;
            }
            Some(h) => break h,
            None => {
                if buf.len() >= MAX_HEAD {
                    return Err(Error::Head("the answer's head is too large".into()));
                }
                if read_more(io, buf)
                    .await
                    .map_err(|e| Error::Head(e.to_string()))?
                    == 0
                {
                    return Err(if buf.is_empty() {
                        Error::Closed
                    } else {
                        Error::Head("the connection closed inside the answer's head".into())
                    });
                }
            }
        }
    };
    let Head {
        status,
        headers,
        framing,
        mut keep,
        len,
    } = head;
    let body = match framing {
        Framing::Empty => {
            keep &= buf.len() == len;
            Bytes::new()
        }
        Framing::Length(n) => {
            let n = usize::try_from(n)
                .ok()
                .filter(|n| *n <= max)
                .ok_or(Error::TooLarge)?;
            let end = len + n;
            if buf.len() < end {
                // Room for what is promised, up to PROMISED_ROOM: a length
                // alone does not make memory be taken; the rest grows as it
                // comes.
                buf.reserve((end - buf.len()).min(PROMISED_ROOM));
            }
            while buf.len() < end {
                if read_more(io, buf).await.map_err(body_error)? == 0 {
                    return Err(Error::Body(
                        "the connection closed before the answer's end".into(),
                    ));
                }
            }
            keep &= buf.len() == end;
            body_of(buf, len, end)
        }
        Framing::Close => {
            keep = false;
            loop {
                if buf.len() - len > max {
                    return Err(Error::TooLarge);
                }
                if read_more(io, buf).await.map_err(body_error)? == 0 {
                    break;
                }
            }
            let end = buf.len();
            body_of(buf, len, end)
        }
        Framing::Chunked => {
            let (body, rest) = read_chunked(io, buf, len, max).await?;
            keep &= rest == 0;
            Bytes::from(body)
        }
    };
    Ok(Answer {
        status,
        headers,
        body,
        reusable: keep,
    })
}

/// `buf[start..end]` as the answer's body: a small one (under 8 KiB)
/// copied out, the buffer staying with the connection for its next answer
/// (so that what the proxy holds on to, and frees on another thread when it
/// records the exchange, is the body's size); a larger one takes the
/// buffer, no copy.
fn body_of(buf: &mut Vec<u8>, start: usize, end: usize) -> Bytes {
    if end - start < READ_CHUNK / 2 {
        Bytes::copy_from_slice(&buf[start..end])
    } else {
        Bytes::from(std::mem::take(buf)).slice(start..end)
    }
}

fn body_error(e: std::io::Error) -> Error {
    Error::Body(e.to_string())
}

/// Reads what `io` has into the spare room of `buf` (made when there is
/// none); the count read, 0 at the connection's end. Reading into more room
/// than arrives tells tokio the socket is drained, so that an idle
/// connection is not taken for a readable one.
async fn read_more<R: AsyncRead + Unpin>(io: &mut R, buf: &mut Vec<u8>) -> std::io::Result<usize> {
    if buf.capacity() - buf.len() < READ_CHUNK / 4 {
        buf.reserve(READ_CHUNK);
    }
    io.read_buf(buf).await
}

/// The head at the start of `buf`, or `None` when it is not all there.
fn parse_head(buf: &[u8]) -> Result<Option<Head>, Error> {
    #[cfg(test)]
    tests::PARSES.with(|n| n.set(n.get() + 1));
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut r = httparse::Response::new(&mut fields);
    let len = match r.parse(buf) {
        Ok(httparse::Status::Complete(len)) if len > MAX_HEAD => {
            return Err(Error::Head("the answer's head is too large".into()));
        }
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(Error::Head(format!("an invalid answer head ({e})"))),
    };
    let status = r
        .code
        .and_then(|c| StatusCode::from_u16(c).ok())
        .ok_or_else(|| Error::Head("an invalid status code".into()))?;
    let mut headers = HeaderMap::with_capacity(r.headers.len());
    for f in r.headers.iter() {
        let name = HeaderName::from_bytes(f.name.as_bytes())
            .map_err(|_| Error::Head("an invalid header name".into()))?;
        let value = HeaderValue::from_bytes(f.value)
            .map_err(|_| Error::Head(format!("an invalid value of {name}")))?;
        headers.append(name, value);
    }
    let mut keep = if r.version == Some(1) {
        !has_token(&headers, header::CONNECTION, "close")
    } else {
        has_token(&headers, header::CONNECTION, "keep-alive")
    };
    let framing = if status == StatusCode::NO_CONTENT
        || status == StatusCode::NOT_MODIFIED
        || status.is_informational()
    {
        Framing::Empty
    } else if headers.contains_key(header::TRANSFER_ENCODING) {
        // RFC 9112 §6.1: an HTTP/1.0 message with a transfer coding is
        // framed faultily (refused, as hyper does).
        if r.version != Some(1) {
            return Err(Error::Head(
                "an HTTP/1.0 answer with a transfer coding".into(),
            ));
        }
        // A length beside a transfer coding is ignored, and the connection
        // not kept (RFC 9112 §6.3: it may be a smuggling attempt).
        keep &= !headers.contains_key(header::CONTENT_LENGTH);
        let last = headers
            .get_all(header::TRANSFER_ENCODING)
            .iter()
            .flat_map(|v| v.as_bytes().split(|b| *b == b','))
            .map(<[u8]>::trim_ascii)
            .rfind(|t| !t.is_empty());
        match last {
            Some(t) if t.eq_ignore_ascii_case(b"chunked") => Framing::Chunked,
            _ => Framing::Close,
        }
    } else if headers.contains_key(header::CONTENT_LENGTH) {
        Framing::Length(content_length(&headers)?)
    } else {
        Framing::Close
    };
    if framing == Framing::Close {
        keep = false;
    }
    Ok(Some(Head {
        status,
        headers,
        framing,
        keep,
        len,
    }))
}

/// Whether a comma-separated field holds `token` (case-insensitively).
fn has_token(headers: &HeaderMap, name: HeaderName, token: &str) -> bool {
    crate::http::tokens(headers, name).any(|t| t.eq_ignore_ascii_case(token.as_bytes()))
}

/// The one number every `Content-Length` value (and list item) gives.
fn content_length(headers: &HeaderMap) -> Result<u64, Error> {
    let mut found: Option<u64> = None;
    for v in headers.get_all(header::CONTENT_LENGTH) {
        for item in v.as_bytes().split(|b| *b == b',') {
            let item = item.trim_ascii();
            let n = (!item.is_empty() && item.len() <= 19 && item.iter().all(u8::is_ascii_digit))
                .then(|| std::str::from_utf8(item).ok()?.parse::<u64>().ok())
                .flatten()
                .ok_or_else(|| Error::Head("an invalid content-length".into()))?;
            if found.is_some_and(|f| f != n) {
                return Err(Error::Head("content-length values that differ".into()));
            }
            found = Some(n);
        }
    }
    found.ok_or_else(|| Error::Head("an invalid content-length".into()))
}

/// Decodes a chunked body that starts at `buf[start..]`, reading more from
/// `io` as needed: the body, and how many bytes followed its end.
async fn read_chunked<R: AsyncRead + Unpin>(
    io: &mut R,
    buf: &mut Vec<u8>,
    start: usize,
    max: usize,
) -> Result<(Vec<u8>, usize), Error> {
    let mut out = Vec::new();
    let mut at = start;
    loop {
        let size_line = line(io, buf, &mut at, MAX_LINE).await?;
        let size = chunk_size(&buf[size_line])?;
        if size == 0 {
            break;
        }
        if out.len().saturating_add(size) > max {
            return Err(Error::TooLarge);
        }
        // As for a length: a size alone does not make memory be taken.
        out.reserve(size.min(PROMISED_ROOM));
        let mut left = size;
        while left > 0 {
            if at == buf.len() {
                buf.clear();
                at = 0;
                if read_more(io, buf).await.map_err(body_error)? == 0 {
                    return Err(cut());
                }
            }
            let take = left.min(buf.len() - at);
            out.extend_from_slice(&buf[at..at + take]);
            at += take;
            left -= take;
        }
        chunk_end(io, buf, &mut at).await?;
    }
    // Trailer fields, up to the empty line; read and dropped.
    let mut trailers = 0;
    loop {
        let field = line(io, buf, &mut at, MAX_LINE).await?;
        if field.is_empty() {
            break;
        }
        trailers += field.len();
        if trailers > MAX_TRAILERS {
            return Err(Error::Body("the trailer fields are too large".into()));
        }
    }
    Ok((out, buf.len() - at))
}

/// The CRLF that ends a chunk's data at `buf[*at..]`, reading more as
/// needed; `*at` moves past it. Anything else there is more data than the
/// chunk's size said.
async fn chunk_end<R: AsyncRead + Unpin>(
    io: &mut R,
    buf: &mut Vec<u8>,
    at: &mut usize,
) -> Result<(), Error> {
    while buf.len() - *at < 2 {
        buf.drain(..*at);
        *at = 0;
        if read_more(io, buf).await.map_err(body_error)? == 0 {
            return Err(cut());
        }
    }
    if &buf[*at..*at + 2] != b"\r\n" {
        return Err(Error::Body("a chunk longer than its size".into()));
    }
    *at += 2;
    Ok(())
}

fn cut() -> Error {
    Error::Body("the connection closed inside a chunked answer".into())
}

/// The next CRLF-ended line at `buf[*at..]` (without its CRLF), at most
/// `max` bytes, reading more as needed: where it is in `buf` (until `buf`
/// is read into again); `*at` moves past it.
async fn line<R: AsyncRead + Unpin>(
    io: &mut R,
    buf: &mut Vec<u8>,
    at: &mut usize,
    max: usize,
) -> Result<std::ops::Range<usize>, Error> {
    // Bytes after `*at` known to hold no LF: a line that arrives a byte at
    // a time is searched once.
    let mut searched = 0;
    loop {
        if let Some(i) = memchr::memchr(b'\n', &buf[*at + searched..]).map(|i| i + searched) {
            if i > max + 1 {
                return Err(Error::Body("a chunk line is too long".into()));
            }
            if i == 0 || buf[*at + i - 1] != b'\r' {
                return Err(Error::Body("a chunk line without its CR".into()));
            }
            let l = *at..*at + i - 1;
            *at += i + 1;
            return Ok(l);
        }
        searched = buf.len() - *at;
        if searched > max + 1 {
            return Err(Error::Body("a chunk line is too long".into()));
        }
        // What was consumed is dropped before reading more.
        buf.drain(..*at);
        *at = 0;
        if read_more(io, buf).await.map_err(body_error)? == 0 {
            return Err(cut());
        }
    }
}

/// A chunk-size line's size: hex digits, then nothing or extensions.
fn chunk_size(line: &[u8]) -> Result<usize, Error> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    let rest = line[digits..].trim_ascii_start();
    if digits == 0 || digits > 16 || !(rest.is_empty() || rest[0] == b';') {
        return Err(Error::Body("an invalid chunk size".into()));
    }
    let size = std::str::from_utf8(&line[..digits])
        .ok()
        .and_then(|d| u64::from_str_radix(d, 16).ok())
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| Error::Body("an invalid chunk size".into()))?;
    Ok(size)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Reads `text` as an answer, delivered `step` bytes per read.
    fn read(text: &[u8], step: usize, max: usize) -> Result<Answer, Error> {
        let mut b = tokio_test_reader(text, step);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(read_answer(&mut b, &mut Vec::new(), max))
    }

    /// A reader that hands out `text` `step` bytes at a time.
    fn tokio_test_reader(text: &[u8], step: usize) -> impl AsyncRead + Unpin {
        let parts: Vec<Vec<u8>> = text.chunks(step.max(1)).map(<[u8]>::to_vec).collect();
        Pieces(parts.into_iter().collect())
    }

    struct Pieces(std::collections::VecDeque<Vec<u8>>);

    impl AsyncRead for Pieces {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            out: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            if let Some(mut p) = self.0.pop_front() {
                let n = p.len().min(out.remaining());
                out.put_slice(&p[..n]);
                if n < p.len() {
                    self.0.push_front(p.split_off(n));
                }
            }
            std::task::Poll::Ready(Ok(()))
        }
    }

    const OK: &str = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n";

    thread_local! {
        /// Heads parsed on this thread.
        pub(super) static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// A head that arrives a byte at a time is parsed once it has ended,
    /// not at every byte (linear in the head, whatever the upstream's pace).
    #[test]
    fn a_head_is_parsed_once_it_has_ended() {
        let fields: String = (0..50)
            .map(|i| format!("x-field-{i}: {}\r\n", "v".repeat(100)))
            .collect();
        let t = format!("{OK}{fields}content-length: 2\r\n\r\nok");
        PARSES.with(|n| n.set(0));
        let a = read(t.as_bytes(), 1, 10).unwrap();
        assert_eq!(&a.body[..], b"ok");
        assert_eq!(PARSES.with(std::cell::Cell::get), 1);
    }

    #[test]
    fn lengths_chunks_and_the_connections_end_frame_a_body() {
        for step in [1, 3, 7, 4096] {
            let a = read(
                format!("{OK}content-length: 5\r\n\r\nhello").as_bytes(),
                step,
                100,
            )
            .unwrap();
            assert_eq!((&a.body[..], a.reusable), (&b"hello"[..], true));
            assert_eq!(a.headers["content-type"], "application/json");
            let chunked = format!(
                "{OK}transfer-encoding: gzip, chunked\r\n\r\n5;ext=1\r\nhello\r\n1A\r\n{}\r\n0\r\nx-t: 1\r\n\r\n",
                "z".repeat(26)
            );
            let a = read(chunked.as_bytes(), step, 100).unwrap();
            assert_eq!(a.body, format!("hello{}", "z".repeat(26)).as_bytes());
            assert!(a.reusable);
            let a = read(format!("{OK}\r\nto the end").as_bytes(), step, 100).unwrap();
            assert_eq!((&a.body[..], a.reusable), (&b"to the end"[..], false));
            let a = read(
                b"HTTP/1.1 103 Early Hints\r\nlink: </a>; rel=preload\r\n\r\nHTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
                step,
                100,
            )
            .unwrap();
            assert_eq!(
                (a.status.as_u16(), a.body.len(), a.reusable),
                (204, 0, true)
            );
        }
    }

    /// A connection's buffer serves its next answer: a small body is
    /// copied out of it (and stays what it was), a large one takes it.
    #[test]
    fn the_buffer_is_kept_for_the_next_answer() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut buf = Vec::new();
        let one = |t: String, buf: &mut Vec<u8>| {
            let mut r = tokio_test_reader(t.as_bytes(), 4096);
            rt.block_on(read_answer(&mut r, buf, 1 << 20)).unwrap().body
        };
        let first = one(format!("{OK}content-length: 5\r\n\r\nfirst"), &mut buf);
        let kept = buf.capacity();
        let second = one(format!("{OK}content-length: 6\r\n\r\nsecond"), &mut buf);
        assert_eq!((&first[..], &second[..]), (&b"first"[..], &b"second"[..]));
        assert!(kept > 0 && buf.capacity() == kept, "the same buffer");
        let big = "b".repeat(100_000);
        let third = one(format!("{OK}content-length: 100000\r\n\r\n{big}"), &mut buf);
        assert_eq!(third, big.as_bytes());
        assert_eq!(buf.capacity(), 0, "a large body took the buffer");
        let fourth = one(format!("{OK}content-length: 2\r\n\r\nok"), &mut buf);
        assert_eq!((&first[..], &fourth[..]), (&b"first"[..], &b"ok"[..]));
    }

    #[test]
    fn what_may_not_carry_another_request_is_not_kept() {
        let kept = |t: String| read(t.as_bytes(), 4096, 100).unwrap().reusable;
        assert!(!kept(format!(
            "{OK}connection: close\r\ncontent-length: 0\r\n\r\n"
        )));
        assert!(!kept("HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n".into()));
        assert!(kept(
            "HTTP/1.0 200 OK\r\nconnection: Keep-Alive\r\ncontent-length: 0\r\n\r\n".into()
        ));
        assert!(!kept(format!("{OK}content-length: 1\r\n\r\nab")));
        assert!(!kept(format!(
            "{OK}content-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n"
        )));
        assert!(!kept(format!("{OK}transfer-encoding: gzip\r\n\r\nabc")));
        assert!(kept(format!("{OK}content-length: 2, 2\r\n\r\nab")));
    }

    /// RFC 9112 §6.1: an HTTP/1.0 answer with a transfer coding is framed
    /// faultily; it was read as chunked and its connection kept when it
    /// said `keep-alive`. Refused, as hyper refuses it.
    #[test]
    fn an_http_1_0_answer_with_a_transfer_coding_is_refused() {
        for te in ["chunked", "gzip"] {
            let t = format!(
                "HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ntransfer-encoding: {te}\r\n\r\n0\r\n\r\n"
            );
            assert_eq!(
                read(t.as_bytes(), 4096, 100).unwrap_err(),
                Error::Head("an HTTP/1.0 answer with a transfer coding".into()),
                "{te}"
            );
        }
    }

    #[test]
    fn broken_answers_are_refused_with_why() {
        let err = |t: &[u8], max| read(t, 5, max).unwrap_err();
        assert_eq!(err(b"", 10), Error::Closed);
        assert!(matches!(
            err(b"HTTP/1.1 200 OK\r\ncontent-", 10),
            Error::Head(_)
        ));
        assert!(matches!(
            err(b"HTTQ/1.1 200 OK\r\n\r\n", 10),
            Error::Head(_)
        ));
        assert!(matches!(
            err(b"HTTP/1.1 101 Switching\r\n\r\n", 10),
            Error::Head(_)
        ));
        for cl in ["-1", "1 1", "0x5", "", "1,2", "99999999999999999999"] {
            let t = format!("{OK}content-length: {cl}\r\n\r\n");
            assert!(matches!(err(t.as_bytes(), 10), Error::Head(_)), "{cl}");
        }
        let t = format!("{OK}content-length: 5\r\ncontent-length: 6\r\n\r\nhello");
        assert!(matches!(err(t.as_bytes(), 10), Error::Head(_)));
        assert!(matches!(
            err(format!("{OK}content-length: 9\r\n\r\nhello").as_bytes(), 10),
            Error::Body(_)
        ));
        assert_eq!(
            err(format!("{OK}content-length: 11\r\n\r\n").as_bytes(), 10),
            Error::TooLarge
        );
        assert_eq!(
            err(format!("{OK}\r\n{}", "x".repeat(11)).as_bytes(), 10),
            Error::TooLarge
        );
        for chunks in [
            "5\r\nhello\r\n",
            "5\r\nhelloX\r\n0\r\n\r\n",
            "g\r\n",
            "\r\n",
            "5\nhello\r\n0\r\n\r\n",
            "11111111111111111\r\n",
            "ffffffffffffffffff;x=1\r\n",
            "0\r\n",
        ] {
            let t = format!("{OK}transfer-encoding: chunked\r\n\r\n{chunks}");
            assert!(
                matches!(err(t.as_bytes(), 10), Error::Body(_)),
                "{chunks:?}"
            );
        }
        // The log says what was wrong: more data than the size said (it
        // said "a chunk line is too long").
        for step in [1, 5, 4096] {
            let t = format!("{OK}transfer-encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n");
            assert_eq!(
                read(t.as_bytes(), step, 10).unwrap_err(),
                Error::Body("a chunk longer than its size".into()),
                "{step}"
            );
        }
        let t = format!(
            "{OK}transfer-encoding: chunked\r\n\r\n6\r\nhello!\r\n6\r\nhello!\r\n0\r\n\r\n"
        );
        assert_eq!(err(t.as_bytes(), 10), Error::TooLarge);
        // The largest size 16 digits write is over any limit, not wrapped.
        let t = format!("{OK}transfer-encoding: chunked\r\n\r\nffffffffffffffff\r\nab");
        assert_eq!(err(t.as_bytes(), 10), Error::TooLarge);
        let t = format!(
            "{OK}transfer-encoding: chunked\r\n\r\n1;{}\r\n",
            "e".repeat(MAX_LINE + 10)
        );
        assert!(matches!(err(t.as_bytes(), 10), Error::Body(_)));
        let huge = format!("HTTP/1.1 200 OK\r\nx: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert!(matches!(err(huge.as_bytes(), 10), Error::Head(_)));
        // A head past the limit is refused however it arrives, not only
        // when the limit is reached before its end: 62,000 bytes leave the
        // buffer short of room, and the next read brings the head's end
        // past the limit.
        let t = format!(
            "HTTP/1.1 200 OK\r\nx: {}\r\n\r\n",
            "a".repeat(MAX_HEAD - 10)
        );
        for step in [62_000, 1000] {
            assert_eq!(
                read(t.as_bytes(), step, 10).unwrap_err(),
                Error::Head("the answer's head is too large".into()),
                "{step}"
            );
        }
        let many: String = (0..=MAX_HEADERS).map(|i| format!("x{i}: 1\r\n")).collect();
        let t = format!("HTTP/1.1 200 OK\r\n{many}\r\n");
        assert!(matches!(err(t.as_bytes(), 10), Error::Head(_)));
    }
}
