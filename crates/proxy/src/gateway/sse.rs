//! A small server-sent-events reader: bytes in, events and comments out.
//!
//! Lines end with `\n`, `\r\n` or `\r`; `data:` lines accumulate (joined by
//! `\n`) until a blank line dispatches them; lines starting with `:` are
//! comments, kept so the proxy can pass them through; `event:`, `id:` and
//! `retry:` are ignored (chat completions do not use them). A line longer
//! than [`MAX_LINE`] or an event larger than [`MAX_EVENT`] is an error: the
//! upstream is untrusted.

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

/// Incremental reader.
#[derive(Default, Debug)]
pub struct Reader {
    line: Vec<u8>,
    data: Option<String>,
    /// The previous byte was `\r` (a following `\n` belongs to it).
    after_cr: bool,
}

impl Reader {
    /// Feeds bytes; returns the items completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Item>, SseError> {
        let mut out = Vec::new();
        for &b in bytes {
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
                    self.line_done(&line, &mut out)?;
                }
                _ => {
                    if self.line.len() >= MAX_LINE {
                        return Err(SseError("an SSE line is too long".into()));
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(out)
    }

    /// Ends the stream: a pending event without its blank line is dispatched.
    pub fn finish(&mut self) -> Result<Vec<Item>, SseError> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, &mut out)?;
        }
        if let Some(d) = self.data.take() {
            out.push(Item::Data(d));
        }
        Ok(out)
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<Item>) -> Result<(), SseError> {
        // Not UTF-8: the upstream's text cannot be checked (a lossy
        // replacement would hand the client something the model never said).
        let Ok(line) = std::str::from_utf8(line) else {
            return Err(SseError("an SSE line is not valid UTF-8".into()));
        };
        if line.is_empty() {
            if let Some(d) = self.data.take() {
                out.push(Item::Data(d));
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
    fn an_unterminated_event_is_dispatched_at_the_end() {
        let mut r = Reader::default();
        assert!(r.push(b"data: x").unwrap().is_empty());
        assert_eq!(r.finish().unwrap(), [Item::Data("x".into())]);
    }
}
