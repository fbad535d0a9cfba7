//! A small server-sent-events reader: bytes in, events and comments out.
//!
//! Lines end with `\n`, `\r\n` or `\r`; `data:` lines accumulate (joined by
//! `\n`) until a blank line dispatches them; lines starting with `:` are
//! comments, kept so the proxy can pass them through; `id:` and `retry:`
//! are ignored; a byte order mark opening the stream is skipped (as the
//! SSE standard says, and as clients do). A chat completion's events have
//! no type: an event typed `error` (the upstream's failure, which an SSE
//! client may hand to another listener than the chunks') or typed anything
//! but `message` is an error, so that no one reads it as a chunk. A line
//! longer than [`MAX_LINE`] or an event larger than [`MAX_EVENT`] is an
//! error: the upstream is untrusted.

/// The longest line accepted.
pub const MAX_LINE: usize = 16 * 1024 * 1024;
/// The largest event accepted.
pub const MAX_EVENT: usize = 16 * 1024 * 1024;

/// One thing read from the stream.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Item {
    /// A comment line, without its leading `:`.
    Comment(String),
    /// An event's data.
    Data(String),
}

/// The stream was not acceptable SSE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseError(pub String);

/// What [`Reader::push_ends`] read: each item with the offset where it
/// ended, and an error with the offset where it was found.
pub type Ends = (Vec<(Item, usize)>, Option<(SseError, usize)>);

/// Incremental reader.
#[derive(Default, Debug)]
pub struct Reader {
    line: Vec<u8>,
    data: Option<String>,
    /// The `event:` type of the event being read.
    event: Option<String>,
    /// A line has been read (a byte order mark opens only the first).
    lines: bool,
    /// The previous byte was `\r` (a following `\n` belongs to it).
    after_cr: bool,
}

impl Reader {
    /// Feeds bytes; returns the items completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Item>, SseError> {
        let (items, error) = self.push_ends(bytes);
        match error {
            Some((e, _)) => Err(e),
            None => Ok(items.into_iter().map(|(item, _)| item).collect()),
        }
    }

    /// [`Reader::push`] that also says where in `bytes` each item ended
    /// (the offset just past the byte that completed it) and where an
    /// error was found: the items before an error, then the error. A relay
    /// that breaks the stream at an item sends the bytes up to there only.
    pub fn push_ends(&mut self, bytes: &[u8]) -> Ends {
        let mut out = Vec::new();
        let mut items = Vec::new();
        for (i, &b) in bytes.iter().enumerate() {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    let line = std::mem::take(&mut self.line);
                    if let Err(e) = self.line_done(&line, &mut out) {
                        return (items, Some((e, i + 1)));
                    }
                    for item in out.drain(..) {
                        items.push((item, i + 1));
                    }
                }
                _ => {
                    if self.line.len() >= MAX_LINE {
                        return (items, Some((SseError("an SSE line is too long".into()), i)));
                    }
                    self.line.push(b);
                }
            }
        }
        (items, None)
    }

    /// Ends the stream: a pending event without its blank line is dispatched.
    pub fn finish(&mut self) -> Result<Vec<Item>, SseError> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, &mut out)?;
        }
        // A pending event is dispatched as a blank line would.
        self.line_done(b"", &mut out)?;
        Ok(out)
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<Item>) -> Result<(), SseError> {
        // Not UTF-8: the upstream's text cannot be checked (a lossy
        // replacement would hand the client something the model never said).
        let Ok(line) = std::str::from_utf8(line) else {
            return Err(SseError("an SSE line is not valid UTF-8".into()));
        };
        let line = match line.strip_prefix('\u{feff}') {
            Some(rest) if !self.lines => rest,
            _ => line,
        };
        self.lines = true;
        if line.is_empty() {
            let event = self.event.take();
            if let Some(d) = self.data.take() {
                match event.as_deref() {
                    None | Some("message") => out.push(Item::Data(d)),
                    Some("error") => {
                        return Err(SseError(format!(
                            "the upstream sent an `error` event: {}",
                            super::check::clip(&d, 300)
                        )));
                    }
                    Some(other) => {
                        return Err(SseError(format!(
                            "an event of type `{}` (a chat completion's events have none)",
                            super::check::clip(other, 40)
                        )));
                    }
                }
            }
            return Ok(());
        }
        if let Some(c) = line.strip_prefix(':') {
            out.push(Item::Comment(c.to_string()));
            return Ok(());
        }
        let (field, value) = match line.find(':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(' ').unwrap_or(v))
            }
            None => (line, ""),
        };
        if field == "event" {
            self.event = Some(value.to_string());
        }
        if field == "data" {
            let len = self.data.as_ref().map_or(0, String::len);
            if len + value.len() + 1 > MAX_EVENT {
                return Err(SseError("an SSE event is too large".into()));
            }
            match &mut self.data {
                // A second data line joins the first with a newline.
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn events_comments_and_line_endings() {
        let mut r = Reader::default();
        let mut items = r
            .push(b": hello\n\ndata: {\"a\":1}\r\n\r\ndata: [DO")
            .unwrap();
        items.extend(r.push(b"NE]\r\r").unwrap());
        assert_eq!(
            items,
            [
                Item::Comment(" hello".into()),
                Item::Data("{\"a\":1}".into()),
                Item::Data("[DONE]".into())
            ]
        );
    }

    #[test]
    fn data_lines_join_with_newlines() {
        let mut r = Reader::default();
        assert_eq!(
            r.push(b"data: a\ndata:b\nid: 3\n\n").unwrap(),
            [Item::Data("a\nb".into())]
        );
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error() {
        let mut r = Reader::default();
        let err = r.push(b"data: {\"a\": \"\xff\"}\n\n").unwrap_err();
        assert!(err.0.contains("UTF-8"), "{err:?}");
    }

    #[test]
    fn a_byte_order_mark_opening_the_stream_is_skipped() {
        let mut r = Reader::default();
        // Split inside the mark: skipped once the first line is whole.
        let mut items = r.push(b"\xef\xbb").unwrap();
        items.extend(r.push(b"\xbfdata: a\n\n\xef\xbb\xbfdata: b\n\n").unwrap());
        // Only the stream's first line loses it: the second line's mark
        // makes a field named `\u{feff}data`, ignored.
        assert_eq!(items, [Item::Data("a".into())]);
    }

    #[test]
    fn typed_events_are_errors_not_chunks() {
        let mut r = Reader::default();
        let err = r
            .push(b"data: {\"a\":1}\n\nevent: error\ndata: {\"message\":\"overloaded\"}\n\ndata: [DONE]\n\n")
            .unwrap_err();
        assert_eq!(
            err.0,
            r#"the upstream sent an `error` event: {"message":"overloaded"}"#
        );
        let mut r = Reader::default();
        let err = r.push(b"event: delta\ndata: {}\n\n").unwrap_err();
        assert_eq!(
            err.0,
            "an event of type `delta` (a chat completion's events have none)"
        );
        // `message` is the default type; a type without data dispatches
        // nothing, and the type does not outlive its event.
        let mut r = Reader::default();
        assert_eq!(
            r.push(b"event: message\ndata: a\n\nevent: error\n\ndata: b\n\n")
                .unwrap(),
            [Item::Data("a".into()), Item::Data("b".into())]
        );
        // An unterminated typed event at the end is judged the same.
        let mut r = Reader::default();
        assert!(r.push(b"event: error\ndata: x").unwrap().is_empty());
        assert!(r.finish().is_err());
    }

    #[test]
    fn an_unterminated_event_is_dispatched_at_the_end() {
        let mut r = Reader::default();
        assert!(r.push(b"data: x").unwrap().is_empty());
        assert_eq!(r.finish().unwrap(), [Item::Data("x".into())]);
    }
}
