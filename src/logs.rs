//! The JSON log lines on stderr (the servers' exchange lines, every
//! pipeline run's telemetry event), written in batches.
//!
//! Written straight to stderr, each event was one `write(2)` under std's
//! stderr lock: at the proxy's request rates the two workers queued on that
//! lock and the kernel, and logging cost `toolgate proxy` a quarter of its
//! throughput (BENCHMARKS.md, "The proxy's log lines"). Here an event is
//! appended to a shared buffer (a copy under a short lock), and a flusher
//! thread writes the buffer out every [`EVERY`]; a buffer past [`CAP`] is
//! written by the thread that filled it, so memory stays bounded and a slow
//! reader of stderr slows the writers down instead of losing lines.
//!
//! Nothing is lost and nothing reordered: each event is one append, lines
//! reach stderr in the order they were appended, and [`Logs`] writes what is
//! left when dropped (`main` drops it when the command returns, before it
//! prints an error). A process killed outright loses at most the last
//! [`EVERY`] of lines.
//!
//! [`JsonLines`] formats toolgate's own events (outside any span) itself,
//! byte for byte as `tracing_subscriber`'s JSON format does, without its
//! per-piece UTF-8 checks, map serializer and per-event timestamp string:
//! that formatter spent ~4 µs of CPU per line, two lines per proxied
//! exchange. Every other event (a span's, a dependency's, a `log` record)
//! goes to that formatter itself.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use toolgate_core::jsonstr;

/// How long an event waits at most before it is written.
pub const EVERY: Duration = Duration::from_millis(50);

/// A buffer this large is written at once by the thread that filled it.
pub const CAP: usize = 256 * 1024;

/// Where the lines go (stderr; a test's buffer).
type Sink = Box<dyn Write + Send>;

struct Shared {
    /// Appended events not yet written.
    pending: Mutex<Vec<u8>>,
    /// The sink and a spare buffer; taken (before `pending`) by whoever
    /// writes, so that batches reach the sink in the order they filled.
    out: Mutex<(Sink, Vec<u8>)>,
    stop: AtomicBool,
}

/// A poisoned lock only means a thread panicked while holding it; the
/// bytes under it are still whole events (each is appended with one
/// `extend`), so they are used as they are.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    fn new(sink: Sink) -> Shared {
        Shared {
            pending: Mutex::new(Vec::new()),
            out: Mutex::new((sink, Vec::new())),
            stop: AtomicBool::new(false),
        }
    }

    /// Writes out everything appended so far.
    fn flush(&self) {
        let mut out = lock(&self.out);
        let (sink, spare) = &mut *out;
        std::mem::swap(&mut *lock(&self.pending), spare);
        if !spare.is_empty() {
            // stderr closed or full: nothing better to do with a log line.
            let _ = sink.write_all(spare).and_then(|()| sink.flush());
            spare.clear();
        }
        if spare.capacity() > CAP * 2 {
            spare.shrink_to(CAP);
        }
    }

    fn append(&self, bytes: &[u8]) {
        let mut pending = lock(&self.pending);
        pending.extend_from_slice(bytes);
        if pending.len() >= CAP {
            drop(pending);
            self.flush();
        }
    }
}

/// The batched writer: hand [`Logs::writer`] to the tracing subscriber,
/// keep the `Logs` until the command is done.
pub struct Logs {
    shared: Arc<Shared>,
    flusher: Option<std::thread::JoinHandle<()>>,
}

impl Logs {
    /// Batches lines for stderr.
    pub fn stderr() -> Logs {
        Logs::to(Box::new(std::io::stderr()), EVERY)
    }

    /// Batches lines for `sink`, written at least every `every`.
    pub fn to(sink: Sink, every: Duration) -> Logs {
        let shared = Arc::new(Shared::new(sink));
        let for_thread = Arc::clone(&shared);
        let flusher = std::thread::Builder::new()
            .name("toolgate-logs".into())
            .spawn(move || {
                while !for_thread.stop.load(Ordering::Acquire) {
                    std::thread::park_timeout(every);
                    for_thread.flush();
                }
            })
            // No thread (resource limits): every append past CAP is still
            // written, and the rest when `Logs` is dropped.
            .ok();
        Logs { shared, flusher }
    }

    /// A `MakeWriter` for `tracing_subscriber::fmt().with_writer(…)`.
    pub fn writer(&self) -> Writer {
        Writer(Arc::clone(&self.shared))
    }
}

impl Drop for Logs {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(t) = self.flusher.take() {
            t.thread().unpark();
            let _ = t.join();
        }
        self.shared.flush();
    }
}

/// What the subscriber writes one event through (the fmt layer writes an
/// event's whole line with one `write_all`, which is one append here).
#[derive(Clone)]
pub struct Writer(Arc<Shared>);

impl Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.append(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Writer {
    type Writer = Writer;

    fn make_writer(&'a self) -> Writer {
        self.clone()
    }
}

/// The JSON line format of `tracing_subscriber::fmt().json()`, written
/// directly for toolgate's own events outside spans.
pub struct JsonLines {
    fallback: tracing_subscriber::fmt::format::Format<tracing_subscriber::fmt::format::Json>,
}

impl Default for JsonLines {
    fn default() -> JsonLines {
        JsonLines {
            fallback: tracing_subscriber::fmt::format().json(),
        }
    }
}

/// What a thread keeps from one line to the next.
struct Scratch {
    /// The line being built.
    line: Vec<u8>,
    /// The second [`Scratch::prefix`] is of.
    second: u64,
    /// That second's `YYYY-MM-DDTHH:MM:SS`.
    prefix: String,
    /// Callsites met (their metadata's address) and whether every field
    /// name they have is written as it is (nothing JSON escapes): a
    /// callsite's names are static, so they are checked once, not on every
    /// line. At most [`CALLSITES`] (then it starts over).
    plain: Vec<(usize, bool)>,
}

/// The most callsites [`Scratch::plain`] remembers.
const CALLSITES: usize = 64;

thread_local! {
    static LINE: std::cell::RefCell<Scratch> = const {
        std::cell::RefCell::new(Scratch {
            line: Vec::new(),
            second: u64::MAX,
            prefix: String::new(),
            plain: Vec::new(),
        })
    };
}

/// Whether every field name of the callsite whose metadata is at `site`
/// is written as it is: remembered in `callsites` (at most [`CALLSITES`]),
/// found from `names` the first time.
fn plain_callsite<I: Iterator<Item = &'static str>>(
    callsites: &mut Vec<(usize, bool)>,
    site: usize,
    names: impl FnOnce() -> I,
) -> bool {
    if let Some(&(_, p)) = callsites.iter().find(|(s, _)| *s == site) {
        return p;
    }
    let p = names().all(jsonstr::plain);
    if callsites.len() >= CALLSITES {
        callsites.clear();
    }
    callsites.push((site, p));
    p
}

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for JsonLines
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        let meta = event.metadata();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .ok()
            .filter(|d| d.as_secs() < MAX_SECS);
        // What the fallback writes that this does not: spans (the current
        // one and the list), `log` records (their target is `log` here,
        // normalized there), times outside years 1970–9999.
        let plain = meta.target().starts_with("toolgate")
            && event.parent().is_none()
            && ctx.lookup_current().is_none();
        let (true, Some(now)) = (plain, now) else {
            return self.fallback.format_event(ctx, writer, event);
        };
        LINE.with(|cell| {
            let Ok(mut guard) = cell.try_borrow_mut() else {
                // An event formatted while one is (a field's `Debug` logs).
                return self.fallback.format_event(ctx, writer.by_ref(), event);
            };
            let Scratch {
                line,
                second,
                prefix,
                plain: callsites,
            } = &mut *guard;
            let plain_names = plain_callsite(callsites, std::ptr::from_ref(meta) as usize, || {
                meta.fields().iter().map(|f| f.name())
            });
            #[cfg(test)]
            format_tests::FAST.with(|n| n.set(n.get() + 1));
            line.clear();
            if *second != now.as_secs() {
                *second = now.as_secs();
                *prefix = civil(now.as_secs());
            }
            line.extend_from_slice(b"{\"timestamp\":\"");
            line.extend_from_slice(prefix.as_bytes());
            // The microseconds as six digits (no formatter machinery).
            let mut micros = now.subsec_micros();
            let mut digits = [b'0'; 6];
            for d in digits.iter_mut().rev() {
                *d = b'0' + (micros % 10) as u8;
                micros /= 10;
            }
            line.push(b'.');
            line.extend_from_slice(&digits);
            line.extend_from_slice(b"Z\",\"level\":\"");
            line.extend_from_slice(meta.level().as_str().as_bytes());
            line.extend_from_slice(b"\",\"fields\":{");
            let mut fields = Fields {
                line,
                first: true,
                plain_names,
            };
            event.record(&mut fields);
            let line = fields.line;
            line.extend_from_slice(b"},\"target\":");
            jsonstr::write(line, meta.target());
            line.extend_from_slice(b"}\n");
            // Everything written is serde_json's output or ASCII.
            let text = std::str::from_utf8(line).map_err(|_| std::fmt::Error)?;
            writer.write_str(text)
        })
    }
}

/// 253402300800: 10000-01-01T00:00:00Z, past which the fallback writes the
/// year with a sign.
const MAX_SECS: u64 = 253_402_300_800;

/// `YYYY-MM-DDTHH:MM:SS` of a second since the Unix epoch (UTC, proleptic
/// Gregorian calendar: Howard Hinnant's `civil_from_days`).
fn civil(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// A `Debug` text written into a JSON string as it is formatted.
struct Escaping<'a>(&'a mut Vec<u8>);

impl std::fmt::Write for Escaping<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        jsonstr::write_contents_shown(self.0, s);
        Ok(())
    }
}

/// `value` as serde_json writes it.
fn json<T: serde::Serialize + ?Sized>(line: &mut Vec<u8>, value: &T) {
    // Writing into a Vec cannot fail; a value that cannot serialize
    // (none of the kinds recorded here) would leave `null`.
    if serde_json::to_writer(&mut *line, value).is_err() {
        line.extend_from_slice(b"null");
    }
}

/// The event's fields as `tracing_serde`'s map visitor writes them: numbers
/// and booleans as JSON values, strings as strings, everything else (the
/// message included) as its `Debug` text.
struct Fields<'a> {
    line: &'a mut Vec<u8>,
    first: bool,
    /// Every field name of the event's callsite is written as it is.
    plain_names: bool,
}

impl Fields<'_> {
    /// Writes `"name":`, a comma before all but the first field.
    fn name(&mut self, field: &tracing::field::Field) {
        if !std::mem::take(&mut self.first) {
            self.line.push(b',');
        }
        jsonstr::write_key(self.line, field.name(), self.plain_names);
    }

    /// Writes `"name":value`.
    fn put<T: serde::Serialize + ?Sized>(&mut self, field: &tracing::field::Field, value: &T) {
        self.name(field);
        json(self.line, value);
    }
}

impl tracing::field::Visit for Fields<'_> {
    fn record_bool(&mut self, field: &tracing::field::Field, value: bool) {
        self.put(field, &value);
    }

    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.put(field, &value);
    }

    fn record_i64(&mut self, field: &tracing::field::Field, value: i64) {
        self.put(field, &value);
    }

    fn record_f64(&mut self, field: &tracing::field::Field, value: f64) {
        self.put(field, &value);
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        self.name(field);
        // Shown on a terminal: C1, bidi and invisible characters escaped
        // too (`write_shown`); the same string to a JSON reader.
        jsonstr::write_shown(self.line, value);
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.name(field);
        self.line.push(b'"');
        // A `Debug` that fails leaves what it wrote before it failed, and
        // the string is closed: the line stays JSON.
        let _ = std::fmt::Write::write_fmt(&mut Escaping(self.line), format_args!("{value:?}"));
        self.line.push(b'"');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A sink whose bytes the test reads, counting its writes.
    #[derive(Clone, Default)]
    pub(super) struct Seen(Arc<Mutex<(Vec<u8>, usize)>>);

    impl Write for Seen {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let mut s = lock(&self.0);
            s.0.extend_from_slice(buf);
            s.1 += 1;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Seen {
        pub(super) fn text(&self) -> String {
            String::from_utf8(lock(&self.0).0.clone()).expect("the test writes text")
        }
        fn writes(&self) -> usize {
            lock(&self.0).1
        }
    }

    #[test]
    fn every_line_arrives_whole_and_in_order_within_each_thread() {
        let seen = Seen::default();
        let logs = Logs::to(Box::new(seen.clone()), Duration::from_millis(5));
        std::thread::scope(|s| {
            for t in 0..4 {
                let mut w = logs.writer();
                s.spawn(move || {
                    for i in 0..2000 {
                        w.write_all(format!("{{\"t\":{t},\"i\":{i}}}\n").as_bytes())
                            .expect("appending never fails");
                    }
                });
            }
        });
        drop(logs);
        let text = seen.text();
        let mut next = [0usize; 4];
        for line in text.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a whole line");
            let t = v["t"].as_u64().expect("t") as usize;
            assert_eq!(
                v["i"].as_u64(),
                Some(next[t] as u64),
                "thread {t} out of order"
            );
            next[t] += 1;
        }
        assert_eq!(next, [2000; 4], "every line arrived");
        // 8,000 lines in a few hundred writes, not one write per line.
        assert!(seen.writes() < 1000, "{} writes", seen.writes());
    }

    #[test]
    fn a_line_is_written_within_the_interval_without_more_lines_or_a_drop() {
        let seen = Seen::default();
        let logs = Logs::to(Box::new(seen.clone()), Duration::from_millis(20));
        logs.writer().write_all(b"one\n").expect("append");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while seen.text().is_empty() {
            assert!(std::time::Instant::now() < deadline, "never flushed");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(seen.text(), "one\n");
        drop(logs);
        assert_eq!(seen.text(), "one\n", "nothing written twice");
    }

    #[test]
    fn a_full_buffer_is_written_by_the_thread_that_filled_it() {
        let seen = Seen::default();
        // No flusher thread: only a full buffer is written.
        let shared = Shared::new(Box::new(seen.clone()));
        let line = vec![b'x'; 1023];
        for _ in 0..(CAP / 1024) {
            shared.append(&line);
            assert_eq!(seen.text(), "", "not written before the buffer is full");
            shared.append(b"\n");
        }
        assert_eq!(
            seen.text().len(),
            CAP,
            "written when the buffer reached CAP"
        );
        assert_eq!(seen.writes(), 1);
        assert!(lock(&shared.pending).is_empty());
        shared.append(b"last\n");
        shared.flush();
        assert!(seen.text().ends_with("x\nlast\n"));
    }
}

#[cfg(test)]
mod format_tests {
    use super::tests::Seen;
    use super::*;

    thread_local! {
        /// Lines this thread formatted on the fast path.
        pub(super) static FAST: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    /// The timestamps (which differ between two runs) replaced by their
    /// shape: `D` for a digit.
    fn shape(text: &str) -> String {
        let mut out = String::new();
        for line in text.lines() {
            let (head, rest) = line.split_at("{\"timestamp\":\"".len());
            let (ts, tail) = rest.split_at(rest.find('"').expect("a timestamp"));
            out.push_str(head);
            out.extend(ts.chars().map(|c| if c.is_ascii_digit() { 'D' } else { c }));
            out.push_str(tail);
            out.push('\n');
        }
        out
    }

    #[derive(Debug)]
    #[allow(dead_code)] // read by Debug only
    struct Thing {
        name: &'static str,
        n: i32,
    }

    /// The same events through `tracing_subscriber`'s JSON format and
    /// through [`JsonLines`].
    fn both(events: fn()) -> (String, String) {
        let (theirs, ours) = (Seen::default(), Seen::default());
        let logs = Logs::to(Box::new(theirs.clone()), Duration::from_secs(3600));
        let sub = tracing_subscriber::fmt()
            .json()
            .with_ansi(false)
            .with_max_level(tracing::Level::TRACE)
            .with_writer(logs.writer())
            .finish();
        tracing::subscriber::with_default(sub, events);
        drop(logs);
        let logs = Logs::to(Box::new(ours.clone()), Duration::from_secs(3600));
        let sub = tracing_subscriber::fmt()
            .json()
            .with_ansi(false)
            .with_max_level(tracing::Level::TRACE)
            .event_format(JsonLines::default())
            .with_writer(logs.writer())
            .finish();
        FAST.with(|n| n.set(0));
        tracing::subscriber::with_default(sub, events);
        drop(logs);
        (theirs.text(), ours.text())
    }

    fn events() {
        tracing::info!(
            target: "toolgate::telemetry",
            profile = %"hermes",
            parse_mode = "primary",
            fallback_used = false,
            candidate_count = 3u64,
            negative = -7i64,
            extreme = i64::MIN,
            most = u64::MAX,
            schema_reason = "key `a\"b\\c` \u{1}\u{7f}\n\t\r\u{8}\u{c}\u{1f}\u{0}\u{202e} é 😀",
            decision = %"execute",
            thing = ?Thing { name: "x\"y", n: -1 },
            "odd \"name\" é" = 1u64,
            dotted.name = 2u64,
            "tool call decision {{braces}} \"quoted\""
        );
        for ms in [
            0.576738,
            0.1 + 0.2,
            1e300,
            -0.0,
            5e-324,
            f64::NAN,
            f64::INFINITY,
        ] {
            tracing::warn!(target: "toolgate::proxy", total_ms = ms, stream = true, "exchange");
        }
        tracing::error!(target: "toolgate::proxy", "no fields but the message");
        tracing::debug!(target: "toolgate::proxy", model = "", "empty string");
    }

    /// What tracing_subscriber writes, with the characters a terminal must
    /// not get raw (JSON lets them stand) escaped as `write_shown` does.
    fn shown(text: &str) -> String {
        let mut out = String::new();
        for c in text.chars() {
            if u32::from(c) >= 0x7f && toolgate_core::sanitize::is_unsafe(c) {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            } else {
                out.push(c);
            }
        }
        out
    }

    #[test]
    fn toolgate_events_are_written_byte_for_byte_as_tracing_subscriber_writes_them() {
        let (theirs, ours) = both(events);
        assert_eq!(theirs.lines().count(), 10, "{theirs}");
        assert_eq!(FAST.with(|n| n.get()), 10, "every line took the fast path");
        // Byte for byte, but for DEL, C1, bidi and invisible characters,
        // which a log line on a terminal holds escaped (the same JSON).
        assert!(theirs.contains('\u{202e}') && !ours.contains('\u{202e}'));
        assert_eq!(shape(&ours), shape(&shown(&theirs)));
        for line in ours.lines() {
            let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
            let ts = v["timestamp"].as_str().expect("timestamp");
            assert_eq!(ts.len(), "2026-11-26T06:14:43.433158Z".len(), "{ts}");
        }
    }

    #[test]
    fn spans_and_other_targets_go_through_tracing_subscribers_own_format() {
        fn spanned() {
            let span = tracing::info_span!("request", id = 7, path = "/v1");
            let _in = span.enter();
            tracing::info!(target: "toolgate::proxy", status = 200u64, "inside a span");
            tracing::info!(target: "hyper::proto", bytes = 10u64, "a dependency's event");
        }
        let (theirs, ours) = both(spanned);
        assert!(theirs.contains("\"spans\":["), "{theirs}");
        assert_eq!(shape(&ours), shape(&theirs));
        assert_eq!(FAST.with(|n| n.get()), 0, "no line took the fast path");
        fn other() {
            tracing::info!(target: "hyper::proto", bytes = 10u64, "a dependency's event");
        }
        let (theirs, ours) = both(other);
        assert_eq!(shape(&ours), shape(&theirs));
        assert_eq!(FAST.with(|n| n.get()), 0, "no line took the fast path");
    }

    #[test]
    fn callsites_are_checked_once_and_remembered_within_a_bound() {
        let mut sites = Vec::new();
        let asked = std::cell::Cell::new(0);
        let names = |n: &'static [&'static str]| {
            asked.set(asked.get() + 1);
            n.iter().copied()
        };
        assert!(plain_callsite(&mut sites, 1, || names(&[
            "model",
            "dotted.name"
        ])));
        assert!(!plain_callsite(&mut sites, 2, || names(&[
            "ok",
            "odd \"name\""
        ])));
        assert!(!plain_callsite(&mut sites, 3, || names(&["tab\there"])));
        assert_eq!(asked.get(), 3);
        // Met again: remembered, not checked again.
        assert!(plain_callsite(&mut sites, 1, || names(&["\""])));
        assert!(!plain_callsite(&mut sites, 2, || names(&[])));
        assert_eq!(asked.get(), 3);
        for site in 100..200 {
            plain_callsite(&mut sites, site, || names(&["x"]));
            assert!(sites.len() <= CALLSITES);
        }
        // Forgotten past the bound: checked again.
        assert!(!plain_callsite(&mut sites, 3, || names(&["\u{1}"])));
        assert_eq!(asked.get(), 104);
    }

    #[test]
    fn seconds_become_utc_calendar_times() {
        // Expected values from Python's datetime.fromtimestamp(s, UTC).
        for (secs, want) in [
            (0, "1970-01-01T00:00:00"),
            (86_399, "1970-01-01T23:59:59"),
            (951_782_400, "2000-02-29T00:00:00"),
            (951_868_799, "2000-02-29T23:59:59"),
            (1_709_164_800, "2024-02-29T00:00:00"),
            (1_763_900_000, "2025-11-23T12:13:20"),
            (4_102_444_800, "2100-01-01T00:00:00"),
            (253_402_300_799, "9999-12-31T23:59:59"),
        ] {
            assert_eq!(civil(secs), want, "{secs}");
        }
    }
}
