//! Loading transcripts from files and directories (SPEC §2).
//!
//! Bad input is data: every file that cannot be read, is not UTF-8, is not
//! JSON or misses `output` yields a [`LoadError`] naming the path (and line)
//! and the reason; the rest of the batch is loaded regardless.

pub use crate::file::{
    DEFAULT_MAX_FILE_SIZE, LoadError, LoadOptions, SNIFF_BYTES, compressed_name,
    is_transcript_file, not_text, open_transcript_file, read_transcript_file, read_transcript_text,
};
use crate::file::{compressed_reason, over_limit, utf8_text};
use crate::import;
use crate::jsontext;
use crate::strict;
use crate::transcript::{Expectation, ExpectedCall, ProxyInfo, StoredLabels, ToolDef, Transcript};
use serde_json::{Map, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// One loaded transcript, or why it could not be loaded.
pub type Loaded = Result<Transcript, LoadError>;

/// Every transcript file under `paths`: files as given (whatever their
/// extension), directories walked recursively for `.json`/`.jsonl`, sorted
/// within each directory. Unreadable directories and missing paths are
/// reported as errors in the second vector.
pub fn collect_files(paths: &[PathBuf]) -> (Vec<PathBuf>, Vec<LoadError>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for path in paths {
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk(path, &mut files, &mut errors),
            Ok(_) => files.push(path.clone()),
            Err(e) => errors.push(LoadError {
                path: path.clone(),
                line: None,
                reason: if path.as_os_str() == "-" {
                    // Not a file of that name: the usual spelling of stdin.
                    "no such file; transcripts are not read from stdin (`-`): save them to a \
                     .jsonl file and name it"
                        .to_string()
                } else {
                    e.to_string()
                },
            }),
        }
    }
    (files, errors)
}

/// The path a file or directory is the same as another by: its canonical
/// path (every symlink resolved), or the path itself when that cannot be
/// resolved. A walk visits each real directory once, and a batch or the
/// inspector lists each real file once, at the first path it was found by
/// (overlapping paths, a symlinked folder, a link to a file).
pub fn real_path(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>, errors: &mut Vec<LoadError>) {
    // An explicit stack instead of recursion: directory depth is untrusted.
    // Symlinked directories are followed; each real directory is visited
    // once, so a link loop (or two links to one folder) cannot trap us.
    let mut visited = std::collections::HashSet::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        if !visited.insert(real_path(&dir)) {
            continue;
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(entries) => entries,
            Err(e) => {
                errors.push(LoadError {
                    path: dir.clone(),
                    line: None,
                    reason: e.to_string(),
                });
                continue;
            }
        };
        let mut here: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        here.sort();
        let mut subdirs = Vec::new();
        for path in here {
            // Follows symlinks; a dangling link is not a directory.
            let is_dir = std::fs::metadata(&path).is_ok_and(|m| m.is_dir());
            if is_dir {
                subdirs.push(path);
            } else if is_transcript_file(&path) {
                files.push(path);
            } else if let Some(e) = named_unread(&path) {
                errors.push(e);
            }
        }
        // Push in reverse so that directories are visited in sorted order.
        stack.extend(subdirs.into_iter().rev());
    }
}

/// The error of a file a directory walk finds but does not read, though
/// it holds transcripts: a compressed transcript file (`x.jsonl.gz`). Named,
/// not passed over: its transcripts would be missing without a word. The
/// walk ([`collect_files`]) and the inspector's watcher (a file created
/// after its walk) both ask this.
pub fn named_unread(path: &Path) -> Option<LoadError> {
    compressed_name(path).map(|compression| LoadError {
        path: path.to_path_buf(),
        line: None,
        reason: compressed_reason(compression),
    })
}

/// Loads every transcript under `paths` (see [`collect_files`]), in a stable order.
pub fn load_paths(paths: &[PathBuf]) -> Vec<Loaded> {
    let (files, errors) = collect_files(paths);
    let mut out: Vec<Loaded> = errors.into_iter().map(Err).collect();
    for file in files {
        out.extend(load_file(&file));
    }
    out
}

/// A line's text: `Ok(None)` when it is blank, `Err` (the reason a line is
/// not read) when it is not UTF-8. The check is SIMD
/// (`simdutf8`); a failure is measured again by `std` for the offset.
pub fn line_text(bytes: &[u8]) -> Result<Option<&str>, String> {
    match simdutf8::basic::from_utf8(bytes) {
        Ok(text) if text.trim().is_empty() => Ok(None),
        Ok(text) => Ok(Some(text)),
        Err(_) => {
            let valid_up_to = std::str::from_utf8(bytes)
                .err()
                .map_or(bytes.len(), |e| e.valid_up_to());
            Err(format!(
                "not valid UTF-8 (first bad byte at offset {valid_up_to})"
            ))
        }
    }
}

/// Lines of a [`LineBlock`], about (a file of short lines still gives its
/// workers bounded units of work).
pub const BLOCK_MAX_LINES: usize = 256;

/// Bytes a [`LineBlock`] is read up to before it is handed out (a longer
/// line makes its block longer).
pub const BLOCK_BYTES: usize = 128 * 1024;

/// A run of whole lines of a JSONL file in one buffer, read from the file
/// straight into it: its lines are ranges of [`LineBlock::bytes`], so a
/// batch hands them to its workers without copying each line out of a
/// reader's buffer.
#[derive(Debug, Default)]
pub struct LineBlock {
    /// The bytes the lines are ranges of.
    pub bytes: Vec<u8>,
    /// The lines, in file order.
    pub lines: Vec<BlockLine>,
}

/// One line of a [`LineBlock`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlockLine {
    /// A line not yet checked to be UTF-8 or non-blank ([`line_text`]): its
    /// 1-based number and its range in the block's bytes, the line ending
    /// (`\n`, `\r\n`) and a first line's BOM left out.
    Line(usize, std::ops::Range<usize>),
    /// A line that is not read (over the size limit): its number and why.
    Bad(usize, String),
}

impl LineBlock {
    /// The text of the line at `range` by [`line_text`]'s rules: `Ok(None)`
    /// when blank, `Err` when not UTF-8.
    pub fn text(&self, range: &std::ops::Range<usize>) -> Result<Option<&str>, String> {
        line_text(self.bytes.get(range.clone()).unwrap_or_default())
    }
}

/// The lines of a JSONL file read as a stream of [`LineBlock`]s, each line
/// at most `limit` bytes (longer lines are reported and skipped without
/// being held), with the file's [`Fingerprint`] computed as it goes. A BOM
/// at the start belongs to the file, not to line 1; a line's `\r\n` ending
/// is left out; a last line cut inside a record ([`torn`]) is reported.
/// The UTF-8 and blank checks are left to whoever reads the lines
/// ([`LineBlock::text`]), so a batch makes them on its workers. The file is
/// read into each block's own buffer (only the line cut by a block's end is
/// copied, into the next block): memory is a block, not the file.
pub struct JsonlBlocks<R> {
    reader: R,
    limit: u64,
    number: usize,
    fingerprint: Option<crate::write::FingerprintWriter>,
    /// Bytes read after the last block's last line (the start of a line),
    /// from `carry[carry_from..]`: a block cut at its line cap
    /// ([`BLOCK_MAX_LINES`]) copies out whichever side of the cut is
    /// smaller, its lines or the rest of the buffer, so that a file of
    /// short lines is neither held 128 KiB per block nor copied again for
    /// every block.
    carry: Vec<u8>,
    carry_from: usize,
    /// Bytes of an over-limit line dropped so far (they are not kept).
    skipping: Option<u64>,
    /// [`BLOCK_BYTES`] and [`BLOCK_MAX_LINES`] (smaller in tests).
    block_bytes: usize,
    max_lines: usize,
    done: bool,
    /// Whether the file's first bytes were looked at ([`not_text`]).
    sniffed: bool,
    /// A read error ends the stream; it is kept here.
    pub error: Option<String>,
}

impl<R: std::io::Read> JsonlBlocks<R> {
    /// Blocks of `reader`'s lines, each line at most `limit` bytes.
    pub fn new(reader: R, limit: u64) -> JsonlBlocks<R> {
        JsonlBlocks {
            reader,
            limit,
            number: 0,
            fingerprint: Some(Default::default()),
            carry: Vec::new(),
            carry_from: 0,
            skipping: None,
            block_bytes: BLOCK_BYTES,
            max_lines: BLOCK_MAX_LINES,
            done: false,
            sniffed: false,
            error: None,
        }
    }

    /// Reads without fingerprinting ([`JsonlBlocks::fingerprint`] is then `None`).
    pub fn without_fingerprint(mut self) -> JsonlBlocks<R> {
        self.fingerprint = None;
        self
    }

    /// Blocks of about `bytes` bytes and at most `lines` lines (a read of
    /// a few bytes at a time shows every way a line can be cut).
    pub fn with_block_size(mut self, bytes: usize, lines: usize) -> JsonlBlocks<R> {
        self.block_bytes = bytes.max(1);
        self.max_lines = lines.max(1);
        self
    }

    /// The fingerprint of everything read so far (the whole file once the
    /// blocks are exhausted without an error); `None` when not computed.
    pub fn fingerprint(&self) -> Option<Fingerprint> {
        self.fingerprint.as_ref().map(|f| f.finish())
    }

    /// How many lines have been read so far.
    pub fn lines_read(&self) -> usize {
        self.number
    }

    /// Appends up to `want` bytes of the input to `buf` (read into its
    /// spare room, no zeroing); at the end of the input or on an error
    /// (kept in `error`) the stream is done.
    fn fill(&mut self, buf: &mut Vec<u8>, want: usize) {
        use std::io::Read;
        let before = buf.len();
        // Room for the whole read at once: `read_to_end` grows a full
        // buffer by doubling it, and each doubling copied the block read
        // so far (7% of `label`'s instructions went to those copies).
        buf.reserve_exact(want);
        let got = loop {
            match (&mut self.reader).take(want as u64).read_to_end(buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.error = Some(e.to_string());
                    self.done = true;
                    return;
                }
            }
        };
        if let Some(f) = self.fingerprint.as_mut() {
            f.add(&buf[before..]);
        }
        if got < want {
            // `take(want)` stops early only at the end of the input.
            self.done = true;
        }
    }

    /// The line of `buf[begin..end]` (`end`: before its `\n`, or the end of
    /// the input), numbered; over the limit it is only counted. `last`: the
    /// input ended with no `\n` after it (it may be [`torn`]).
    fn line(&mut self, buf: &[u8], begin: usize, end: usize, last: bool) -> BlockLine {
        self.number += 1;
        let len = (end - begin) as u64 + self.skipping.take().unwrap_or(0);
        if len > self.limit {
            return BlockLine::Bad(self.number, over_limit(len, self.limit));
        }
        let mut begin = begin;
        let mut end = end;
        if end > begin && buf[end - 1] == b'\r' {
            end -= 1;
        }
        if self.number == 1 && buf[begin..end].starts_with("\u{feff}".as_bytes()) {
            begin += 3;
        }
        if last && torn(&buf[begin..end]) {
            return BlockLine::Bad(self.number, TORN.into());
        }
        BlockLine::Line(self.number, begin..end)
    }
}

impl<R: std::io::Read> Iterator for JsonlBlocks<R> {
    type Item = LineBlock;

    fn next(&mut self) -> Option<LineBlock> {
        let mut buf = std::mem::take(&mut self.carry);
        if !self.sniffed {
            self.sniffed = true;
            // A file of UTF-16 or a compressed one is refused whole, in one
            // line's error, not read line by line as UTF-8.
            self.fill(&mut buf, crate::file::SNIFF_BYTES);
            if let Some(why) = not_text(&buf) {
                self.done = true;
                self.number = 1;
                return Some(LineBlock {
                    bytes: Vec::new(),
                    lines: vec![BlockLine::Bad(1, why)],
                });
            }
        }
        // The block's bytes are `buf[start..]`: before it lie the lines of
        // blocks already handed out (copied out of this buffer).
        let mut start = std::mem::take(&mut self.carry_from);
        let mut lines = Vec::new();
        // Where the line being read begins, and where its `\n` is looked for.
        let mut begin = start;
        let mut scan = start;
        // The block stopped at its line cap: the rest is carried over.
        let mut cut = false;
        loop {
            loop {
                if lines.len() >= self.max_lines {
                    cut = true;
                    break;
                }
                let Some(i) = memchr::memchr(b'\n', &buf[scan..]) else {
                    break;
                };
                let line = self.line(&buf, begin, scan + i, false);
                lines.push(line);
                begin = scan + i + 1;
                scan = begin;
            }
            if cut {
                break;
            }
            scan = buf.len();
            // A line already over the limit: its bytes are counted, not kept.
            let open = (buf.len() - begin) as u64;
            if self.skipping.is_some() || open > self.limit {
                self.skipping = Some(self.skipping.unwrap_or(0) + open);
                buf.truncate(begin);
                scan = begin;
            }
            if self.done || (buf.len() >= self.block_bytes && !lines.is_empty()) {
                break;
            }
            if lines.is_empty() && begin > 0 {
                // Only the start of a line is left: it is what is kept.
                buf.drain(..begin);
                scan -= begin;
                begin = 0;
                start = 0;
            }
            // Up to the block's size; a line longer than that doubles it.
            let want = self
                .block_bytes
                .saturating_sub(buf.len())
                .max(buf.len().min(1 << 30))
                .max(1);
            self.fill(&mut buf, want);
        }
        if !cut && self.done {
            // The last line, without a `\n` (not after a read error: the
            // line may be cut short).
            if self.error.is_none() && (begin < buf.len() || self.skipping.is_some()) {
                let end = buf.len();
                let line = self.line(&buf, begin, end, true);
                lines.push(line);
            }
            begin = buf.len();
        } else if cut && begin - start <= buf.len() - begin {
            // The lines are the smaller side: they are copied out (their
            // ranges moved with them) and the buffer is kept for the rest,
            // read from `begin` on by the next block.
            let bytes = buf[start..begin].to_vec();
            for line in &mut lines {
                if let BlockLine::Line(_, range) = line {
                    *range = range.start - start..range.end - start;
                }
            }
            self.carry = buf;
            self.carry_from = begin;
            return Some(LineBlock { bytes, lines });
        } else {
            self.carry = buf[begin..].to_vec();
        }
        buf.truncate(begin);
        (!lines.is_empty()).then_some(LineBlock { bytes: buf, lines })
    }
}

impl<R> JsonlBlocks<R> {
    /// The error of a stream a read error ended (`None` when none did),
    /// naming the last line read; taken once.
    pub fn read_failure(&mut self, path: &Path) -> Option<LoadError> {
        self.error.take().map(|e| LoadError {
            path: path.to_path_buf(),
            line: None,
            reason: format!("read failed after line {}: {e}", self.number),
        })
    }
}

/// Lines read before a JSONL file's kind is decided ([`import::detect`]
/// looks at the first four).
pub const DETECT_LINES: usize = 4;

/// A `.jsonl` file opened as `label` and the inspector read one: what its
/// first lines say it holds ([`open_jsonl`]).
pub enum JsonlFile {
    /// Toolgate transcripts, one per line: the blocks read to decide (their
    /// blank lines dropped), then the rest of the stream. Each line is
    /// read by [`jsonl_line`].
    Transcripts {
        /// The first blocks, read to detect the file's kind.
        first: Vec<LineBlock>,
        /// The blocks after them.
        rest: JsonlBlocks<std::fs::File>,
    },
    /// Another tool's capture: read whole, by its importer.
    Other,
    /// Why the file is not read at all (it cannot be opened, or is
    /// pretty-printed JSON).
    Unreadable(String),
}

/// Opens the `.jsonl` file at `path` as a stream of lines, each at most
/// `opts.max_file_size` bytes (the file itself has no size limit), and
/// tells from its first [`DETECT_LINES`] readable lines what it holds.
/// The one way `label` (the batch) and the inspector ([`load_file_with`])
/// open a JSONL file: a line that is not UTF-8, over the limit or torn is
/// that line's error ([`jsonl_line`]), never the whole file's.
pub fn open_jsonl(path: &Path, opts: &LoadOptions) -> JsonlFile {
    let file = match open_transcript_file(path) {
        Ok((file, _)) => file,
        Err(reason) => return JsonlFile::Unreadable(reason),
    };
    let mut blocks = JsonlBlocks::new(file, opts.max_file_size);
    if !opts.fingerprint {
        blocks = blocks.without_fingerprint();
    }
    let (first, head) = jsonl_head(&mut blocks);
    if let Some(why) = head.first().and_then(|l| pretty_printed(l)) {
        return JsonlFile::Unreadable(why);
    }
    if !matches!(
        import::detect(path, &head.join("\n")),
        None | Some(import::Kind::Toolgate)
    ) {
        return JsonlFile::Other;
    }
    JsonlFile::Transcripts {
        first,
        rest: blocks,
    }
}

/// The first blocks of a JSONL file, read until its first [`DETECT_LINES`]
/// non-blank lines (which tell what the file is) are in, and those lines.
/// The blocks are held until the file's kind is decided, so their blank
/// lines (which load nothing) are dropped here: a file of a few lines
/// among millions of blank ones is not held whole, nor 32 bytes of line
/// for each blank byte.
pub fn jsonl_head<R: std::io::Read>(blocks: &mut JsonlBlocks<R>) -> (Vec<LineBlock>, Vec<String>) {
    let mut first: Vec<LineBlock> = Vec::new();
    let mut head: Vec<String> = Vec::new();
    while head.len() < DETECT_LINES {
        let Some(mut block) = blocks.next() else {
            break;
        };
        let bytes = &block.bytes;
        block.lines.retain(|line| {
            let BlockLine::Line(_, range) = line else {
                return true;
            };
            match line_text(bytes.get(range.clone()).unwrap_or_default()) {
                Ok(None) => false,
                Ok(Some(text)) => {
                    if head.len() < DETECT_LINES {
                        head.push(text.to_string());
                    }
                    true
                }
                Err(_) => true,
            }
        });
        if block.lines.is_empty() {
            continue;
        }
        block.lines.shrink_to_fit();
        first.push(block);
    }
    (first, head)
}

/// What one line of a JSONL file of toolgate transcripts loads: nothing
/// when it is blank; its error, with its number, when it is not read (not
/// UTF-8, over the line-size limit, a torn last line, a file refused on
/// its line 1); else the transcript `parse` reads from it, or why it is
/// none (not JSON, not a transcript). The one rule of a JSONL line, for
/// `label` (the batch's workers) and the inspector ([`load_file_with`]).
pub fn jsonl_line(
    block: &LineBlock,
    line: &BlockLine,
    path: &Path,
    stem: &str,
    parse: fn(&str, &Path, Option<usize>, &str) -> Loaded,
) -> Option<Loaded> {
    let bad = |n: usize, reason: String| {
        Err(LoadError {
            path: path.to_path_buf(),
            line: Some(n),
            reason,
        })
    };
    match line {
        BlockLine::Line(n, range) => match block.text(range) {
            Ok(text) => text.map(|t| parse(t, path, Some(*n), stem)),
            Err(reason) => Some(bad(*n, reason)),
        },
        BlockLine::Bad(n, reason) => Some(bad(*n, reason.clone())),
    }
}

/// The transcripts of the `.jsonl` file at `path` read line by line
/// ([`open_jsonl`], [`jsonl_line`]) as `label` reads them, with the
/// fingerprint of the whole file when it was read to its end; `None` when
/// the file is another tool's capture (read whole instead).
fn load_jsonl(path: &Path, opts: &LoadOptions) -> Option<(Vec<Loaded>, Option<Fingerprint>)> {
    let (first, mut rest) = match open_jsonl(path, opts) {
        JsonlFile::Transcripts { first, rest } => (first, rest),
        JsonlFile::Other => return None,
        JsonlFile::Unreadable(reason) => {
            let e = LoadError {
                path: path.to_path_buf(),
                line: None,
                reason,
            };
            return Some((vec![Err(e)], None));
        }
    };
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut loaded = Vec::new();
    for block in first.into_iter().chain(rest.by_ref()) {
        loaded.extend(
            block
                .lines
                .iter()
                .filter_map(|line| jsonl_line(&block, line, path, &stem, parse_transcript)),
        );
    }
    if let Some(e) = rest.read_failure(path) {
        loaded.push(Err(e));
        return Some((loaded, None));
    }
    Some((loaded, rest.fingerprint()))
}

/// Loads one file: one transcript for `.json`, one per non-blank line for `.jsonl`.
pub fn load_file(path: &Path) -> Vec<Loaded> {
    load_file_with(path, &LoadOptions::default()).0
}

/// [`load_file`] with options; also returns the [`Fingerprint`] of the text
/// that was read (for [`write_labels_checked`]), `None` when it was not read.
pub fn load_file_with(path: &Path, opts: &LoadOptions) -> (Vec<Loaded>, Option<Fingerprint>) {
    let err = |line: Option<usize>, reason: String| {
        let e = LoadError {
            path: path.to_path_buf(),
            line,
            reason,
        };
        (vec![Err(e)], None)
    };
    // A JSONL file of transcripts is read line by line, as `label` reads
    // it: a line that is not UTF-8 (or over the line-size limit) is that
    // line's error and the other lines are read. The inspector, which
    // loads through here, refused the whole file for one such line.
    let jsonl = path.extension().and_then(|e| e.to_str()) == Some("jsonl");
    if jsonl && let Some(loaded) = load_jsonl(path, opts) {
        return loaded;
    }
    let bytes = match read_transcript_file(path, opts) {
        Ok(bytes) => bytes,
        Err(reason) => return err(None, reason),
    };
    // A file [`not_text`] refuses is refused whole; a JSONL file on its
    // line 1, as its line reader ([`JsonlBlocks`]) refuses it.
    if let Some(why) = not_text(&bytes[..bytes.len().min(SNIFF_BYTES)]) {
        return err(jsonl.then_some(1), why);
    }
    match utf8_text(bytes) {
        Ok((text, fingerprint)) => (load_file_text(path, &text), Some(fingerprint)),
        Err(reason) => err(None, reason),
    }
}

/// Loads the text of the file at `path`: its format is detected
/// ([`import::detect`]) and the companion files it needs (Batch inputs,
/// BFCL questions) are read beside it.
pub fn load_file_text(path: &Path, text: &str) -> Vec<Loaded> {
    let kind = import::detect(path, text);
    let mut companions = kind
        .map(|k| import::Companions::beside(path, k))
        .unwrap_or_default();
    let unread = std::mem::take(&mut companions.unread);
    let mut loaded = load_kind(path, text, kind, &companions);
    loaded.extend(unread.into_iter().map(Err));
    loaded
}

/// Loads transcripts from `text` as if read from `path`: its format is
/// detected ([`import::detect`]); toolgate's own format is JSON or JSONL by
/// extension. Companion files (Batch inputs, BFCL questions) are not looked
/// for: [`load_file`] does that.
pub fn load_str(path: &Path, text: &str) -> Vec<Loaded> {
    load_kind(
        path,
        text,
        import::detect(path, text),
        &import::Companions::default(),
    )
}

/// Loads transcripts from `text` read as `kind` (`None`: toolgate's own
/// format), joining `companions`.
pub fn load_kind(
    path: &Path,
    text: &str,
    kind: Option<import::Kind>,
    companions: &import::Companions,
) -> Vec<Loaded> {
    match kind {
        None | Some(import::Kind::Toolgate) => load_toolgate(path, text),
        Some(kind) => import::convert(path, text, kind, companions)
            .into_iter()
            .map(|r| {
                let rec = r?;
                let mut t =
                    from_object(rec.object, path, rec.line, rec.id.clone()).map_err(|reason| {
                        LoadError {
                            path: path.to_path_buf(),
                            line: rec.line,
                            reason,
                        }
                    })?;
                t.converted = true;
                Ok(t)
            })
            .collect(),
    }
}

/// [`load_kind`] for rewriting transcripts (`toolgate import`): each
/// transcript's `raw` is its whole object as read, the top-level `tools`
/// member included in its place, so writing `raw` out keeps every member.
/// ([`load_kind`] keeps `tools` out of `raw`: a batch shares equal tool
/// lists instead of holding a copy per transcript.)
pub fn load_kind_whole(
    path: &Path,
    text: &str,
    kind: Option<import::Kind>,
    companions: &import::Companions,
) -> Vec<Loaded> {
    match kind {
        None | Some(import::Kind::Toolgate) => load_toolgate_with(path, text, parse_whole),
        Some(_) => load_kind(path, text, kind, companions),
    }
}

/// One transcript object read whole into `raw` (see [`load_kind_whole`]).
fn parse_whole(text: &str, path: &Path, line: Option<usize>, stem: &str) -> Loaded {
    let err = |reason: String| LoadError {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let raw = match strict::from_str(text) {
        Ok(Value::Object(raw)) => raw,
        Ok(other) => return Err(err(import::not_an_object(&other))),
        Err(_) if text.trim().is_empty() => return Err(err(EMPTY.to_string())),
        Err(e) => return Err(err(strict::reason(&e))),
    };
    let default_id = match line {
        Some(n) => format!("{stem}:{n}"),
        None => stem.to_string(),
    };
    let mut transcript = from_object(raw, path, line, default_id).map_err(err)?;
    keep_argument_text(&mut transcript, text);
    Ok(transcript)
}

fn load_toolgate(path: &Path, text: &str) -> Vec<Loaded> {
    load_toolgate_with(path, text, parse_transcript)
}

/// The transcripts of a toolgate-format file, each document read by `parse`.
fn load_toolgate_with(
    path: &Path,
    text: &str,
    parse: fn(&str, &Path, Option<usize>, &str) -> Loaded,
) -> Vec<Loaded> {
    let jsonl = path.extension().and_then(|e| e.to_str()) == Some("jsonl");
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !jsonl {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        return vec![parse(text, path, None, &stem)];
    }
    // A BOM belongs to the file, not to line 1.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some(why) = text
        .lines()
        .find(|l| !l.trim().is_empty())
        .and_then(pretty_printed)
    {
        return vec![Err(LoadError {
            path: path.to_path_buf(),
            line: None,
            reason: why,
        })];
    }
    let unterminated = !text.ends_with('\n');
    let last = text.lines().count();
    text.lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(i, line)| {
            if unterminated && i + 1 == last && torn(line.as_bytes()) {
                return Err(LoadError {
                    path: path.to_path_buf(),
                    line: Some(i + 1),
                    reason: TORN.into(),
                });
            }
            parse(line, path, Some(i + 1), &stem)
        })
        .collect()
}

/// Why a JSONL file whose first non-blank line is `first` is not read,
/// when that line shows it is pretty-printed JSON (a `{` or `[` alone,
/// which no JSON line is): read line by line it gave an error for every
/// line, none of which said what the file was. `None` otherwise.
pub fn pretty_printed(first: &str) -> Option<String> {
    matches!(first.trim(), "{" | "[").then(|| {
        "pretty-printed JSON, not JSON lines (its first line is only `{` or `[`): not read; a \
         `.jsonl` file holds one transcript per line (e.g. `jq -c . FILE`), a `.json` file one \
         transcript"
            .to_string()
    })
}

/// Why a transcript file that is empty or only whitespace is not read
/// (it was `EOF while parsing a value at line 1 column 0`).
pub const EMPTY: &str = "empty (no JSON in it): no transcript";

/// Why the last line of a JSONL file is not read when it stops inside a
/// JSON value with no newline after it.
pub const TORN: &str = "torn last line: the file ends inside a record (a write cut short by a crash or a full disk, or still in progress); skipped";

/// Whether `line` (a JSONL file's last line, with no newline after it) is
/// a record cut short: JSON that ends before its value does. A whole record
/// without a final newline is not torn.
pub fn torn(line: &[u8]) -> bool {
    !line.iter().all(u8::is_ascii_whitespace)
        && serde_json::from_slice::<serde::de::IgnoredAny>(line).is_err_and(|e| e.is_eof())
}

/// Parses one transcript object.
///
/// The top-level `tools` member is not parsed into the raw tree: its bytes
/// are compared with the previous tool list this thread read, and an equal
/// list is shared ([`Transcript::tools`] is an `Arc`) instead of being read,
/// cloned and compiled again — transcripts of a batch mostly carry one tool
/// list, and reading it was most of the cost of loading.
pub fn parse_transcript(text: &str, path: &Path, line: Option<usize>, stem: &str) -> Loaded {
    parse_transcript_with(text, path, line, stem, false)
}

/// [`parse_transcript`] for a reader of the typed fields only (the batch:
/// replay, then the label record): the flat form's `output` text is moved
/// into [`Transcript::output`] instead of being copied, so `raw` has no
/// `output` member. Every other field is [`parse_transcript`]'s.
pub fn parse_transcript_for_replay(
    text: &str,
    path: &Path,
    line: Option<usize>,
    stem: &str,
) -> Loaded {
    parse_transcript_with(text, path, line, stem, true)
}

fn parse_transcript_with(
    text: &str,
    path: &Path,
    line: Option<usize>,
    stem: &str,
    take_output: bool,
) -> Loaded {
    let err = |reason: String| LoadError {
        path: path.to_path_buf(),
        line,
        reason,
    };
    let read = |text: &str| -> Result<(Map<String, Value>, Option<SharedTools>), LoadError> {
        strict::refuse_too_many(text).map_err(|e| err(e.to_string()))?;
        let Members { raw, tools } = serde_json::from_str(text).map_err(|e| {
            err(if strict::is_duplicate(&e) {
                e.to_string()
            } else if e.is_data() {
                // Parsed again only to say what it is (counted above).
                serde_json::from_str::<Value>(text)
                    .map(|v| import::not_an_object(&v))
                    .unwrap_or_else(|_| "not a JSON object".into())
            } else if text.trim().is_empty() {
                EMPTY.to_string()
            } else if text.starts_with('\u{feff}') {
                // Only a file's first line may start with a BOM (it is the
                // file's): on another, files were joined (`cat a b`).
                "not valid JSON: the line starts with a byte-order mark (U+FEFF), \
                 which only a file's first line may have (files joined together?)"
                    .to_string()
            } else {
                format!("not valid JSON: {e}")
            })
        })?;
        Ok((raw, tools.map(shared_tools).transpose().map_err(err)?))
    };
    // The cut document is written into this thread's buffer, reused from
    // line to line (no allocation per line).
    let mut cut = CUT.with(|c| std::mem::take(&mut *c.borrow_mut()));
    let parsed = match without_last_tools(text, &mut cut) {
        // The previous tool list's bytes, cut out: kept only when what was
        // cut is exactly the top-level `tools` value ([`without_last_tools`]).
        Some((at, shared)) => match serde_json::from_str::<Members<'_>>(&cut) {
            Ok(Members {
                raw,
                tools: Some(t),
            }) if t.as_ptr() as usize == cut.as_ptr() as usize + at
                && t.len() == TOOLS_PLACEHOLDER.len() =>
            {
                shared.map_err(err).map(|shared| (raw, Some(shared)))
            }
            _ => read(text),
        },
        None => read(text),
    };
    if cut.capacity() <= CUT_KEPT {
        cut.clear();
        CUT.with(|c| *c.borrow_mut() = cut);
    }
    let (raw, tools) = parsed?;
    // Only made when the transcript has no `id` of its own.
    let default_id = || match line {
        Some(n) => format!("{stem}:{n}"),
        None => stem.to_string(),
    };
    let mut transcript =
        from_object_with(raw, tools, path, line, default_id, take_output).map_err(err)?;
    keep_argument_text(&mut transcript, text);
    if take_output {
        // Emptied by `from_object_with`, which moved its text out.
        transcript.raw.shift_remove("output");
    }
    Ok(transcript)
}

/// A JSON object's members in order, read in one pass; the `tools` member
/// is kept as its raw text. A key named twice, here or in any member's
/// value (outside calls' arguments), is an error ([`strict`]).
struct Members<'a> {
    raw: Map<String, Value>,
    tools: Option<&'a str>,
}

impl<'de> serde::Deserialize<'de> for Members<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Members<'de>, A::Error> {
                // Room for a transcript's usual members at once.
                let mut raw = Map::with_capacity(8);
                let mut tools = None;
                while let Some(key) = map.next_key::<String>()? {
                    // `tools` is never put in `raw`: nothing to take out of it.
                    if key == "tools" {
                        let value = map.next_value::<&'de serde_json::value::RawValue>()?;
                        if tools.replace(value.get()).is_some() {
                            return Err(strict::duplicate(&key));
                        }
                    } else {
                        let value = strict::Seed::default().member(&mut map, &key)?;
                        strict::insert_once(&mut raw, key, value)?;
                    }
                }
                Ok(Members { raw, tools })
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A tool list read from its JSON text, with its problems.
type SharedTools = (std::sync::Arc<Vec<ToolDef>>, Vec<String>);

/// A tool list this thread read: its bytes, and what reading them gave.
struct LastTools {
    bytes: String,
    read: Result<SharedTools, String>,
}

/// Tool lists each thread remembers (most recently used first): a corpus
/// whose transcripts alternate between a few lists reads each list once.
const TOOL_LISTS_KEPT: usize = 8;

std::thread_local! {
    static LAST_TOOLS: std::cell::RefCell<Vec<LastTools>> = const { std::cell::RefCell::new(Vec::new()) };
}

std::thread_local! {
    /// The buffer [`without_last_tools`] writes the cut document into,
    /// kept between lines while it is at most [`CUT_KEPT`] bytes.
    static CUT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// The largest cut buffer a thread keeps for its next line.
const CUT_KEPT: usize = 1 << 20;

/// What stands in for a cut-out tool list: a JSON value of its own, so the
/// document stays JSON wherever the cut was.
const TOOLS_PLACEHOLDER: &str = "0";

/// Tool lists shorter than this are not looked for in the line (short
/// texts like `[]` turn up anywhere; reading them costs little).
const MIN_CUT: usize = 64;

/// `text` with the bytes of a tool list read before ([`TOOL_LISTS_KEPT`]
/// are remembered), where they are the value of a `"tools"` key, replaced
/// by [`TOOLS_PLACEHOLDER`], the offset of the placeholder, and what
/// reading that list gave; `None` when there is no such value.
///
/// Transcripts of a batch mostly carry one tool list, and checking its JSON
/// again was most of the cost of loading a line. The caller keeps the cut
/// only when the parsed document's top-level `tools` value (a repeated
/// one is refused) is the placeholder itself, at that offset and of that
/// length: then the line is the cut document with one value put back whose
/// bytes are a JSON value read before — valid JSON with the same members.
/// Anywhere else (inside another member, across a string's end, glued to a
/// number) the parse fails or finds `tools` elsewhere, and the caller reads
/// the line whole.
fn without_last_tools(
    text: &str,
    cut: &mut String,
) -> Option<(usize, Result<SharedTools, String>)> {
    LAST_TOOLS.with(|kept| {
        let kept = kept.borrow();
        if kept.iter().all(|k| k.bytes.len() < MIN_CUT) {
            return None;
        }
        // Where a `"tools":` key's value starts with a remembered list's
        // bytes (at most a few keys looked at: the top-level one is usually
        // the only one).
        let bytes = text.as_bytes();
        // The searcher is built once: building it costs more than a search.
        static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
            std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"tools\""));
        let (at, last) = KEY.find_iter(bytes).take(4).find_map(|key| {
            let mut i = key + b"\"tools\"".len();
            let skip = |i: &mut usize| {
                while bytes.get(*i).is_some_and(|b| b.is_ascii_whitespace()) {
                    *i += 1;
                }
            };
            skip(&mut i);
            if bytes.get(i) != Some(&b':') {
                return None;
            }
            i += 1;
            skip(&mut i);
            let value = bytes.get(i..)?;
            kept.iter()
                .find(|k| k.bytes.len() >= MIN_CUT && value.starts_with(k.bytes.as_bytes()))
                .map(|k| (i, k))
        })?;
        let end = at + last.bytes.len();
        cut.clear();
        cut.reserve(text.len() - last.bytes.len() + 1);
        cut.push_str(text.get(..at)?);
        cut.push_str(TOOLS_PLACEHOLDER);
        cut.push_str(text.get(end..)?);
        Some((at, last.read.clone()))
    })
}

/// The tool list of `text` (a `tools` member's JSON), shared with the
/// transcripts this thread read before when the bytes are the same as one
/// of the [`TOOL_LISTS_KEPT`] lists it remembers.
fn shared_tools(text: &str) -> Result<SharedTools, String> {
    LAST_TOOLS.with(|kept| {
        let mut kept = kept.borrow_mut();
        if let Some(i) = kept.iter().position(|k| k.bytes == text) {
            // Most recently used first: the usual list is found at once.
            if i > 0 {
                let k = kept.remove(i);
                kept.insert(0, k);
            }
            return kept[0].read.clone();
        }
        let read = strict::from_str(text)
            .map_err(|e| strict::reason(&e))
            .and_then(|value| read_tools(Some(&value)))
            .map(|(tools, problems)| (std::sync::Arc::new(tools), problems));
        kept.truncate(TOOL_LISTS_KEPT - 1);
        kept.insert(
            0,
            LastTools {
                bytes: text.to_string(),
                read: read.clone(),
            },
        );
        read
    })
}

/// Replaces every native call's `arguments` given as a JSON object by its
/// exact text from the file, as a string: `serde_json` has already kept the
/// last of duplicate keys, rounded floats and turned 30-digit integers into
/// floats, and the `native` mode must read the arguments with the same
/// reader, and the same rules, as arguments given as a string.
fn keep_argument_text(t: &mut Transcript, text: &str) {
    use jsontext::Step;
    let Some(calls) = t.tool_calls.as_mut() else {
        return;
    };
    let mut base = Vec::new();
    if !t.raw.contains_key("output") {
        base.extend([
            Step::Key("response"),
            Step::Key("choices"),
            Step::Index(0),
            Step::Key("message"),
        ]);
    }
    base.push(Step::Key("tool_calls"));
    for (i, call) in calls.iter_mut().enumerate() {
        let nested = call.get("function").is_some_and(Value::is_object);
        let func = if nested {
            call.get_mut("function")
        } else {
            Some(&mut *call)
        };
        let Some(args) = func.and_then(|f| f.get_mut("arguments")) else {
            continue;
        };
        if !args.is_object() {
            continue;
        }
        let mut path = base.clone();
        path.push(Step::Index(i));
        if nested {
            path.push(Step::Key("function"));
        }
        path.push(Step::Key("arguments"));
        if let Some(range) = jsontext::value_at(text, &path) {
            *args = Value::String(text[range].to_string());
        }
    }
}

fn opt_str(value: Option<&Value>, key: &str) -> Result<Option<String>, String> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("`{key}` must be a string")),
    }
}

/// The members of a transcript object that [`from_object_with`] reads,
/// found in one pass over the object rather than by a hashed lookup each
/// (its keys are unique: a member found is the one `get` would find).
#[derive(Default)]
struct Fields<'a> {
    id: Option<&'a Value>,
    model: Option<&'a Value>,
    task: Option<&'a Value>,
    sample: Option<&'a Value>,
    output: Option<&'a Value>,
    tool_calls: Option<&'a Value>,
    tools: Option<&'a Value>,
    reasoning: Option<&'a Value>,
    finish_reason: Option<&'a Value>,
    request: Option<&'a Value>,
    response: Option<&'a Value>,
    chunks: Option<&'a Value>,
    expect: Option<&'a Value>,
    labels: Option<&'a Value>,
    import: Option<&'a Value>,
    proxy: Option<&'a Value>,
    parallel_tool_calls: Option<&'a Value>,
}

impl<'a> Fields<'a> {
    fn of(raw: &'a Map<String, Value>) -> Fields<'a> {
        let mut f = Fields::default();
        for (key, value) in raw {
            let slot = match key.as_str() {
                "id" => &mut f.id,
                "model" => &mut f.model,
                "task" => &mut f.task,
                "sample" => &mut f.sample,
                "output" => &mut f.output,
                "tool_calls" => &mut f.tool_calls,
                "tools" => &mut f.tools,
                "reasoning" => &mut f.reasoning,
                "finish_reason" => &mut f.finish_reason,
                "request" => &mut f.request,
                "response" => &mut f.response,
                "chunks" => &mut f.chunks,
                "expect" => &mut f.expect,
                "labels" => &mut f.labels,
                import::IMPORT_MEMBER => &mut f.import,
                "proxy" => &mut f.proxy,
                "parallel_tool_calls" => &mut f.parallel_tool_calls,
                _ => continue,
            };
            *slot = Some(value);
        }
        f
    }
}

/// The tool definitions of a tools file or argument (`toolgate parse
/// --tools`, the Python package's `tools`): a JSON array of tool
/// definitions as it is, or a transcript object's `tools` array; otherwise
/// why not (the callers put what the tools were before it).
pub fn tools_member(value: Value) -> Result<Value, &'static str> {
    match value {
        Value::Array(_) => Ok(value),
        Value::Object(mut obj) => match obj.remove("tools") {
            Some(tools @ Value::Array(_)) => Ok(tools),
            _ => Err("an object must be a transcript with a `tools` array"),
        },
        _ => Err("expected an array of tool definitions or a transcript object"),
    }
}

/// A transcript of `output` and the tool definitions `tools`, read the way
/// transcripts read them (OpenAI or bare style; what is wrong with a tool
/// is in `tool_problems`), its id `input`.
pub fn with_tools(output: String, tools: Value, path: &Path) -> Result<Transcript, String> {
    let mut raw = Map::new();
    raw.insert("output".into(), Value::String(output));
    raw.insert("tools".into(), tools);
    from_object(raw, path, None, "input".into())
}

/// Builds a transcript from a JSON object (flat or `request`/`response` form).
pub fn from_object(
    raw: Map<String, Value>,
    path: &Path,
    line: Option<usize>,
    default_id: String,
) -> Result<Transcript, String> {
    from_object_with(raw, None, path, line, || default_id, false)
}

/// [`from_object`] with the top-level tool list already read (`None`: read
/// it from `raw`, where an import puts it).
///
/// `take_output`: a string `output` is moved out of `raw` (an empty string
/// is left in its place) rather than copied.
fn from_object_with(
    mut raw: Map<String, Value>,
    read: Option<SharedTools>,
    path: &Path,
    line: Option<usize>,
    default_id: impl FnOnce() -> String,
    take_output: bool,
) -> Result<Transcript, String> {
    let mut warnings = Vec::new();
    let mut taken = None;
    if take_output && let Some(Value::String(s)) = raw.get_mut("output") {
        taken = Some(std::mem::take(s));
    }
    let f = Fields::of(&raw);
    // Another stack's capture that no importer reads (detected as none):
    // said so, rather than what toolgate's own format lacks.
    if !f.output.is_some_and(Value::is_string)
        && f.response.is_none()
        && let Some(what) = import::foreign_format(&Value::Object(raw.clone()))
    {
        return Err(import::foreign_error(what));
    }
    // The top-level tool list counts only in the `output` form (the
    // request/response form names its tools in the request).
    let read = read.filter(|_| f.output.is_some());
    let id = match opt_str(f.id, "id")? {
        Some(id) => id,
        None => default_id(),
    };
    let model = opt_str(f.model, "model")?;
    let task = opt_str(f.task, "task")?;
    let sample = match f.sample {
        None | Some(Value::Null) => None,
        Some(v) => Some(v.as_i64().ok_or("`sample` must be an integer")?),
    };

    // Tools are known when the capture holds the tool list: a top-level
    // `tools` member (flat form; `null` and `[]` declare none), or the
    // request itself (`request`/`response` form: a request without `tools`
    // declared none). Otherwise they are unknown (SPEC §4).
    let tools_known = if f.output.is_some() {
        read.is_some() || f.tools.is_some()
    } else {
        f.request.is_some_and(|r| !r.is_null())
    };
    let (tools_value, output, reasoning, tool_calls, finish_reason, model) = if f.output.is_some() {
        let output = match f.output {
            Some(Value::String(s)) => taken.take().unwrap_or_else(|| s.clone()),
            _ => return Err("`output` must be a string".into()),
        };
        let tool_calls = match f.tool_calls {
            None => None,
            Some(Value::Null) => Some(Vec::new()),
            Some(Value::Array(a)) => Some(a.clone()),
            Some(_) => return Err("`tool_calls` must be an array".into()),
        };
        (
            f.tools.map(std::borrow::Cow::Borrowed),
            output,
            opt_str(f.reasoning, "reasoning")?,
            tool_calls,
            opt_str(f.finish_reason, "finish_reason")?,
            model,
        )
    } else if let Some(response) = f.response {
        if let Some(why) = import::pair_form_refusal(&raw) {
            return Err(why);
        }
        from_response(f.request, response, model)?
    } else {
        return Err("missing `output` (and no `response`)".into());
    };

    let (tools, tool_problems) = match read {
        Some(shared) => shared,
        _ => {
            let (tools, problems) = read_tools(tools_value.as_deref())?;
            (std::sync::Arc::new(tools), problems)
        }
    };

    let chunks = match f.chunks {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => {
            let chunks: Option<Vec<String>> =
                a.iter().map(|c| c.as_str().map(str::to_string)).collect();
            let chunks = chunks.ok_or("`chunks` must be an array of strings")?;
            if chunks.concat() != output {
                warnings.push("the concatenated `chunks` differ from `output`".to_string());
            }
            Some(chunks)
        }
        Some(_) => return Err("`chunks` must be an array of strings".into()),
    };

    let expect = match f.expect {
        None | Some(Value::Null) => None,
        Some(v) => Some(read_expect(v)?),
    };

    let stored_labels = match f.labels {
        None | Some(Value::Null) => None,
        Some(Value::Object(m)) => Some(StoredLabels::from_map(m)?),
        Some(_) => return Err("`labels` must be an object".into()),
    };
    let labels_member = f.labels.is_some();
    // The request's `parallel_tool_calls`: the transcript's own member
    // (what `toolgate import` writes), else the request's (the
    // `request`/`response` form, a proxy recording's `request`).
    let one_call = crate::choice::one_call_at_most(
        f.parallel_tool_calls
            .or_else(|| f.request.and_then(|r| r.get("parallel_tool_calls"))),
    )?;
    let origin = f.import.and_then(import::ImportInfo::read);
    let proxy = f.proxy.and_then(ProxyInfo::read);

    Ok(Transcript {
        path: path.to_path_buf(),
        line,
        id,
        model,
        task,
        sample,
        tools,
        tools_known,
        tool_problems,
        one_call,
        output,
        reasoning,
        tool_calls,
        finish_reason,
        chunks,
        expect,
        stored_labels,
        labels_member,
        origin,
        converted: false,
        proxy,
        warnings,
        raw,
    })
}

type ResponseParts<'a> = (
    Option<std::borrow::Cow<'a, Value>>,
    String,
    Option<String>,
    Option<Vec<Value>>,
    Option<String>,
    Option<String>,
);

fn from_response<'a>(
    request: Option<&'a Value>,
    response: &Value,
    model: Option<String>,
) -> Result<ResponseParts<'a>, String> {
    let mut tools = request
        .and_then(|r| r.get("tools"))
        .map(std::borrow::Cow::Borrowed);
    // A `tool_choice` that names a tool or lists `allowed_tools` narrows
    // the allowlist, as the importers and the proxy read it
    // (`choice::narrowing`); one that cannot be read is an error.
    if let Some(Value::Array(list)) = tools.as_deref()
        && let Some(allowed) = crate::choice::narrowing(request.and_then(|r| r.get("tool_choice")))?
    {
        let mut list = list.clone();
        import::keep_allowed_tools(&mut list, &allowed);
        tools = Some(std::borrow::Cow::Owned(Value::Array(list)));
    }
    let choice = response
        .get("choices")
        .and_then(|c| c.get(0))
        .ok_or("`response` has no `choices[0]`")?;
    let message = choice
        .get("message")
        .ok_or("`response.choices[0]` has no `message`")?;
    let output = match message.get("content") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(_) => return Err("`message.content` must be a string or null".into()),
    };
    let reasoning = ["reasoning_content", "reasoning"]
        .iter()
        .find_map(|k| message.get(*k).and_then(Value::as_str))
        .map(str::to_string);
    let tool_calls = match message.get("tool_calls") {
        None => None,
        Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(a)) => Some(a.clone()),
        Some(_) => return Err("`message.tool_calls` must be an array".into()),
    };
    let finish_reason = choice
        .get("finish_reason")
        .and_then(Value::as_str)
        .map(str::to_string);
    let model = model.or_else(|| {
        response
            .get("model")
            .or_else(|| request.and_then(|r| r.get("model")))
            .and_then(Value::as_str)
            .map(str::to_string)
    });
    Ok((tools, output, reasoning, tool_calls, finish_reason, model))
}

fn read_tools(value: Option<&Value>) -> Result<(Vec<ToolDef>, Vec<String>), String> {
    let mut tools = Vec::new();
    let mut problems = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let items = match value {
        None | Some(Value::Null) => return Ok((tools, problems)),
        Some(Value::Array(items)) => items,
        Some(_) => return Err("`tools` must be an array".into()),
    };
    for (i, item) in items.iter().enumerate() {
        // A tool of another type (OpenAI's `custom` tool, whose input is
        // free text checked by a grammar; a provider's built-in tool) is
        // not a function with a JSON Schema: allowlisting it by name would
        // execute a call to it with `{}` and its grammar never checked.
        if let Some(kind) = item.get("type").and_then(Value::as_str)
            && kind != "function"
        {
            problems.push(format!(
                "tools[{i}] is a `{}` tool, not a function: not allowlisted (its calls are refused)",
                crate::sanitize::cell(kind, 40)
            ));
            continue;
        }
        let def = item
            .get("function")
            .filter(|f| f.is_object())
            .unwrap_or(item);
        match def.get("name").and_then(Value::as_str) {
            Some(name) if !name.is_empty() => {
                if !seen.insert(name) {
                    // Both definitions are kept; the validator makes the
                    // tool unusable: which one applies would be a guess.
                    problems.push(format!(
                        "tools[{i}] repeats the name `{name}`: the tool is unusable"
                    ));
                }
                tools.push(ToolDef {
                    name: name.to_string(),
                    description: def
                        .get("description")
                        .and_then(Value::as_str)
                        .map(str::to_string),
                    parameters: def.get("parameters").filter(|p| !p.is_null()).cloned(),
                });
            }
            _ => problems.push(format!("tools[{i}] has no `name`: ignored")),
        }
    }
    Ok((tools, problems))
}

fn read_expect(v: &Value) -> Result<Expectation, String> {
    let calls = v
        .get("calls")
        .and_then(Value::as_array)
        .ok_or("`expect` must be an object with a `calls` array")?;
    let mut out = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        let name = c
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("`expect.calls[{i}]` has no `name`"))?;
        let arguments = c.get("arguments").filter(|a| !a.is_null()).cloned();
        if let Some(a) = &arguments
            && !(a.is_object() || a.is_boolean())
        {
            return Err(format!(
                "`expect.calls[{i}].arguments` must be a JSON Schema"
            ));
        }
        out.push(ExpectedCall {
            name: name.to_string(),
            arguments,
        });
    }
    Ok(Expectation { calls: out })
}

pub use crate::write::{
    CHANGED_SINCE_READ, Fingerprint, FingerprintWriter, LabelMap, OpenWriters, Stage, WriteOutcome,
    atomic_write, changed_while_labelled, clean_stale_temps, labels_json, lock_exclusive,
    lock_exclusive_within, write_labels, write_labels_checked, write_labels_guarded,
    write_labels_staged,
};

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn tools_are_an_array_or_a_transcripts_tools() {
        let tools = serde_json::json!([{"name": "f"}]);
        assert_eq!(tools_member(tools.clone()), Ok(tools.clone()));
        assert_eq!(
            tools_member(serde_json::json!({"output": "x", "tools": tools})),
            Ok(tools.clone())
        );
        assert_eq!(
            tools_member(serde_json::json!({"tools": {"name": "f"}})),
            Err("an object must be a transcript with a `tools` array")
        );
        assert_eq!(
            tools_member(serde_json::json!("f")),
            Err("expected an array of tool definitions or a transcript object")
        );
        let t = with_tools("hi".into(), tools, Path::new("<tools>")).unwrap();
        assert_eq!((t.id.as_str(), t.output.as_str()), ("input", "hi"));
        assert_eq!(t.tools.len(), 1);
    }
    use std::fs;

    /// Each line parsed after `first` on one thread (the previous tool list
    /// cut out where it can be), and each parsed alone on a fresh thread.
    fn after_and_alone(first: &str, lines: &[&str]) -> Vec<(String, String)> {
        let show = |r: Loaded| match r {
            Ok(t) => format!(
                "{:?} {:?} {:?} {:?}",
                t.raw, t.tools, t.output, t.tool_problems
            ),
            Err(e) => format!("error {}", e.reason),
        };
        let path = Path::new("c.jsonl");
        let first = first.to_string();
        let owned: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        let after = std::thread::spawn(move || {
            parse_transcript(&first, path, Some(1), "c").unwrap();
            owned
                .iter()
                .map(|l| show(parse_transcript(l, path, Some(2), "c")))
                .collect::<Vec<_>>()
        })
        .join()
        .unwrap();
        let alone = lines.iter().map(|l| {
            let l = l.to_string();
            std::thread::spawn(move || show(parse_transcript(&l, path, Some(2), "c")))
                .join()
                .unwrap()
        });
        after.into_iter().zip(alone).collect()
    }

    const TOOLS: &str = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]"#;
    const OTHER: &str = r#"[{"type": "function", "function": {"name": "search_web", "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}]"#;

    #[test]
    fn a_repeated_tool_list_is_cut_out_only_where_it_is_the_top_level_value() {
        let first = format!(r#"{{"output": "a", "tools": {TOOLS}}}"#);
        let lines = [
            // The common case: the same list again, shared.
            format!(r#"{{"output": "b", "tools":{TOOLS} }}"#),
            // The same bytes inside another member first, another list on top.
            format!(r#"{{"meta": {{"tools": {TOOLS}}}, "output": "c", "tools": {OTHER}}}"#),
            // Inside another member only.
            format!(r#"{{"meta": {{"tools": {TOOLS}}}, "output": "d"}}"#),
            // Duplicate keys: refused, whichever was cut.
            format!(r#"{{"output": "e", "tools": {TOOLS}, "tools": {OTHER}}}"#),
            format!(r#"{{"output": "f", "tools": {OTHER}, "tools": {TOOLS}}}"#),
            // Glued to what follows: not JSON, whatever the cut makes of it.
            format!(r#"{{"output": "g", "tools": {TOOLS}5}}"#),
            format!(r#"{{"output": "h", "tools": {TOOLS}.5}}"#),
            format!(r#"{{"output": "i", "tools": {TOOLS}e5}}"#),
            // Inside a string (escaped there, so never these bytes) and a
            // key spelled with an escape.
            format!(
                r#"{{"output": ""tools": {}", "tools": {TOOLS}}}"#,
                TOOLS.replace('"', "\\\"")
            ),
            format!(r#"{{"output": "j", "\u0074ools": {TOOLS}}}"#),
        ];
        let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
        for (i, (after, alone)) in after_and_alone(&first, &lines).iter().enumerate() {
            assert_eq!(after, alone, "line {i}: {}", lines[i]);
        }
        // And the cut is taken where it should be: the list is shared.
        let path = Path::new("c.jsonl");
        let (a, b) = std::thread::spawn(move || {
            let a = parse_transcript(
                &format!(r#"{{"output": "a", "tools": {TOOLS}}}"#),
                path,
                None,
                "c",
            );
            let b = parse_transcript(
                &format!(r#"{{"output": "b", "tools": {TOOLS}}}"#),
                path,
                None,
                "c",
            );
            (a.unwrap(), b.unwrap())
        })
        .join()
        .unwrap();
        assert!(std::sync::Arc::ptr_eq(&a.tools, &b.tools));
        assert_eq!(b.output, "b");
    }

    #[test]
    fn bad_files_are_reported_and_the_batch_goes_on() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(
            dir.path().join("a.json"),
            r#"{"output": "hi", "tools": []}"#,
        )
        .unwrap();
        fs::write(dir.path().join("b.json"), b"\xff\xff").unwrap();
        fs::write(dir.path().join("c.json"), "{not json").unwrap();
        fs::write(dir.path().join("d.json"), r#"{"tools": []}"#).unwrap();
        fs::write(
            dir.path().join("e.jsonl"),
            "{\"output\": \"x\"}\n\n{\"output\": 3}\n",
        )
        .unwrap();
        fs::write(dir.path().join("notes.txt"), "ignored").unwrap();
        let loaded = load_paths(&[dir.path().to_path_buf()]);
        let summary: Vec<String> = loaded
            .iter()
            .map(|l| match l {
                Ok(t) => format!("ok {}", t.id),
                Err(e) => format!(
                    "err {}{} {}",
                    e.path.file_name().unwrap().to_string_lossy(),
                    e.line.map(|l| format!(":{l}")).unwrap_or_default(),
                    e.reason.split(':').next().unwrap()
                ),
            })
            .collect();
        assert_eq!(
            summary,
            vec![
                "ok a",
                "err b.json not valid UTF-8 (first bad byte at offset 0)",
                "err c.json not valid JSON",
                "err d.json missing `output` (and no `response`)",
                "ok e:1",
                "err e.jsonl:3 `output` must be a string",
            ]
        );
    }

    #[test]
    fn the_replay_loader_moves_output_and_is_otherwise_the_loader() {
        let texts = [
            r#"{"id": "a", "output": "hi \"there\" 東京", "tools": [], "x": 1}"#,
            r#"{"output": "", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1.50, "a": 2}}}]}"#,
            r#"{"output": "x", "tool_calls": [{"name": "f", "arguments": {"b": 100000000000000000000000000001}}]}"#,
            r#"{"request": {"tools": []}, "response": {"choices": [{"message": {"content": "c",
                "tool_calls": [{"function": {"name": "g", "arguments": {"k": 1}}}]}}]}}"#,
            r#"{"output": 3}"#,
            r#"{"output": "y", "chunks": ["n"]}"#,
            "[1]",
            "{",
        ];
        for text in texts {
            let path = Path::new("t.jsonl");
            let whole = parse_transcript(text, path, Some(1), "t");
            let replay = parse_transcript_for_replay(text, path, Some(1), "t");
            match (whole, replay) {
                (Ok(mut whole), Ok(replay)) => {
                    assert!(!replay.raw.contains_key("output"), "{text}");
                    whole.raw.shift_remove("output");
                    assert_eq!(whole, replay, "{text}");
                }
                (whole, replay) => assert_eq!(whole.err(), replay.err(), "{text}"),
            }
        }
    }

    #[test]
    fn object_arguments_keep_their_exact_text() {
        let flat = r#"{"output": "", "tool_calls": [
            {"function": {"name": "f", "arguments": {"a": 1, "a": 2}}},
            {"name": "g", "arguments": {"n": 1.9999999999999999}},
            {"function": {"name": "h", "arguments": "{\"s\": 1}"}}]}"#;
        let t = parse_transcript(flat, Path::new("t.json"), None, "t").unwrap();
        let calls = t.tool_calls.unwrap();
        assert_eq!(calls[0]["function"]["arguments"], r#"{"a": 1, "a": 2}"#);
        assert_eq!(calls[1]["arguments"], r#"{"n": 1.9999999999999999}"#);
        assert_eq!(calls[2]["function"]["arguments"], r#"{"s": 1}"#);
        let resp = r#"{"response": {"choices": [{"message": {"tool_calls": [
            {"function": {"name": "f", "arguments": {"id": 123456789012345678901234567890}}}]}}]}}"#;
        let t = parse_transcript(resp, Path::new("r.json"), None, "r").unwrap();
        assert_eq!(
            t.tool_calls.unwrap()[0]["function"]["arguments"],
            r#"{"id": 123456789012345678901234567890}"#
        );
    }

    /// Probe bug A: `serde_json` kept the last of repeated members, so
    /// `{"output": "a", "output": "<tool_call>…"}` was judged on the second
    /// output and `"tools": [], "tools": [{…}]` on the second list, silently.
    #[test]
    fn a_repeated_key_the_loader_reads_as_structure_is_refused_with_file_and_line() {
        let lines = [
            r#"{"model":"m","output":"a","output":"<tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>"}"#,
            r#"{"model":"m","tools":[],"tools":[{"name":"f"}],"output":"x"}"#,
            r#"{"output":"","tool_calls":[{"name":"f","name":"g","arguments":{}}]}"#,
            r#"{"output":"","tools":[{"type":"function","function":{"name":"f","name":"rm"}}]}"#,
            r#"{"request":{"messages":[{"role":"user","content":"a","content":"b"}]},"response":{"choices":[{"message":{"content":"x"}}]}}"#,
            r#"{"output":"","expect":{"calls":[{"name":"f"}],"calls":[]}}"#,
            r#"{"output":"","labels":{"hermes":"pass"},"labels":{"hermes":"no_call"}}"#,
        ];
        let keys = [
            "output", "tools", "name", "name", "content", "calls", "labels",
        ];
        let text = lines.join("\n");
        let path = Path::new("d.jsonl");
        for loader in [load_str, |p: &Path, t: &str| {
            load_kind_whole(p, t, None, &Default::default())
        }] {
            let loaded = loader(path, &text);
            assert_eq!(loaded.len(), lines.len());
            for (i, (r, key)) in loaded.iter().zip(keys).enumerate() {
                let e = r.as_ref().unwrap_err();
                assert_eq!((e.path.as_path(), e.line), (path, Some(i + 1)));
                assert!(
                    e.reason.starts_with(&format!(
                        "ambiguous: duplicate key `{key}` at line 1 column"
                    )),
                    "line {}: {}",
                    i + 1,
                    e.reason
                );
            }
        }
        // The tool list cut out after a first line that had it: refused too.
        let tools = r#"[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]"#;
        let text = format!(
            "{{\"output\":\"a\",\"tools\":{tools}}}\n{{\"output\":\"b\",\"tools\":{tools},\"tools\":[]}}\n"
        );
        let loaded = load_str(path, &text);
        assert!(loaded[0].is_ok());
        assert!(
            loaded[1]
                .as_ref()
                .unwrap_err()
                .reason
                .contains("duplicate key `tools`")
        );
        // A capture (a chat pair) with two `response` members.
        let pair = r#"{"request":{"model":"m","messages":[]},"response":{"choices":[{"index":0,"message":{"role":"assistant","content":"first"}}]},"response":{"choices":[{"index":0,"message":{"role":"assistant","content":"second"}}]}}"#;
        assert_eq!(
            import::detect(Path::new("pair.json"), pair),
            Some(import::Kind::OpenaiChat)
        );
        let loaded = load_str(Path::new("pair.json"), pair);
        let e = loaded[0].as_ref().unwrap_err();
        assert_eq!(e.line, None);
        assert!(
            e.reason.starts_with("ambiguous: duplicate key `response`"),
            "{}",
            e.reason
        );
        // A streamed chunk naming `content` twice, on the line of its event.
        let sse = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"b\",\"content\":\"c\"}}]}\n\ndata: [DONE]\n";
        let loaded = load_str(Path::new("s.sse"), sse);
        let e = loaded
            .iter()
            .find_map(|r| r.as_ref().err())
            .expect("the chunk is refused");
        assert_eq!(e.line, Some(3));
        assert!(
            e.reason.starts_with("ambiguous: duplicate key `content`"),
            "{}",
            e.reason
        );
    }

    #[test]
    fn a_repeated_tool_name_is_a_problem_and_both_definitions_are_kept() {
        let text = r#"{"output": "", "tools": [{"name": "f"}, {"name": "g"},
            {"type": "function", "function": {"name": "f", "parameters": {}}}, {}]}"#;
        let t = parse_transcript(text, Path::new("t.json"), None, "t").unwrap();
        assert_eq!(t.tools.len(), 3);
        assert_eq!(
            t.tool_problems,
            [
                "tools[2] repeats the name `f`: the tool is unusable",
                "tools[3] has no `name`: ignored"
            ]
        );
    }

    #[test]
    fn request_response_form_is_normalized() {
        let text = r#"{"request": {"model": "m", "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]},
            "response": {"choices": [{"finish_reason": "tool_calls", "message": {"content": null, "reasoning_content": "hmm",
            "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": "{}"}}]}}]}}"#;
        let t = parse_transcript(text, Path::new("x/r.json"), None, "r").unwrap();
        assert_eq!(t.id, "r");
        assert_eq!(t.model.as_deref(), Some("m"));
        assert_eq!(t.tools[0].name, "f");
        assert_eq!(t.output, "");
        assert_eq!(t.reasoning.as_deref(), Some("hmm"));
        assert_eq!(t.tool_calls.as_ref().map(Vec::len), Some(1));
        assert_eq!(t.finish_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn a_bom_does_not_make_line_one_of_a_jsonl_file_unreadable() {
        let loaded = load_str(
            Path::new("b.jsonl"),
            "\u{feff}{\"output\": \"a\"}\n{\"output\": \"b\"}\n",
        );
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded[0].as_ref().unwrap().output, "a");
        assert_eq!(loaded[0].as_ref().unwrap().line, Some(1));
    }

    #[cfg(unix)]
    #[test]
    fn special_files_are_reported_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let loaded = load_file(&zero);
        assert_eq!(
            loaded[0].as_ref().unwrap_err().reason,
            "a character device: only regular files are read"
        );
        let big = dir.path().join("big.json");
        fs::write(&big, "{\"output\": \"0123456789\"}").unwrap();
        let (loaded, fp) = load_file_with(
            &big,
            &LoadOptions {
                max_file_size: 8,
                ..LoadOptions::default()
            },
        );
        assert_eq!(
            loaded[0].as_ref().unwrap_err().reason,
            "24 bytes, over the 8-byte limit (--max-file-size): not read"
        );
        assert!(fp.is_none());
        let (loaded, fp) = load_file_with(
            &big,
            &LoadOptions {
                max_file_size: 24,
                ..LoadOptions::default()
            },
        );
        assert!(loaded[0].is_ok() && fp.is_some());
    }

    #[test]
    fn equal_tool_lists_are_read_once_and_shared() {
        let p = Path::new("t.jsonl");
        let tools = r#"[{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]"#;
        let a = parse_transcript(
            &format!(r#"{{"output": "x", "tools": {tools}}}"#),
            p,
            Some(1),
            "t",
        )
        .unwrap();
        let b = parse_transcript(
            &format!(r#"{{"tools": {tools}, "output": "y"}}"#),
            p,
            Some(2),
            "t",
        )
        .unwrap();
        assert!(std::sync::Arc::ptr_eq(&a.tools, &b.tools));
        assert_eq!(a.tools[0].name, "f");
        assert!(!a.raw.contains_key("tools"));
        let c = parse_transcript(
            r#"{"output": "x", "tools": [{"name": "g"}]}"#,
            p,
            Some(3),
            "t",
        )
        .unwrap();
        assert_eq!(c.tools[0].name, "g");
        // Lists that alternate are each read once: `tools` again after `g`.
        let again = parse_transcript(
            &format!(r#"{{"output": "z", "tools": {tools}}}"#),
            p,
            Some(3),
            "t",
        )
        .unwrap();
        assert!(std::sync::Arc::ptr_eq(&a.tools, &again.tools));
        // Duplicate members are ambiguous: refused, the key named.
        let d = parse_transcript(
            r#"{"output": "x", "tools": [{"name": "g"}], "tools": []}"#,
            p,
            Some(4),
            "t",
        )
        .unwrap_err();
        assert!(
            d.reason
                .starts_with("ambiguous: duplicate key `tools` at line 1 column"),
            "{}",
            d.reason
        );
        // A bad tool list is this transcript's error, not a shared one's.
        let e = parse_transcript(r#"{"output": "x", "tools": {}}"#, p, Some(5), "t").unwrap_err();
        assert_eq!(e.reason, "`tools` must be an array");
        let f = parse_transcript(r#"[1, 2]"#, p, Some(6), "t").unwrap_err();
        assert_eq!(f.reason, "not a JSON object");
        let g = parse_transcript(r#"{"output": "#, p, Some(7), "t").unwrap_err();
        assert!(g.reason.starts_with("not valid JSON: EOF"), "{}", g.reason);
    }

    /// A segment cut short by a crash ends inside its last record: that
    /// line is reported as torn and skipped by both readers (whole text and
    /// streamed lines), never read as a record; a whole last record without
    /// a final newline is read.
    /// A line as a batch reads it from a [`LineBlock`]: its text, or why it
    /// is not read.
    #[derive(Debug, PartialEq)]
    enum Read {
        Text(usize, String),
        Bad(usize, String),
    }

    /// Every line of `blocks`, blank lines left out.
    fn read_blocks(blocks: &mut JsonlBlocks<impl std::io::Read>) -> Vec<Read> {
        let mut out = Vec::new();
        for block in blocks.by_ref() {
            for line in &block.lines {
                match line {
                    BlockLine::Line(n, range) => match block.text(range) {
                        Ok(None) => {}
                        Ok(Some(text)) => out.push(Read::Text(*n, text.to_string())),
                        Err(why) => out.push(Read::Bad(*n, why)),
                    },
                    BlockLine::Bad(n, why) => out.push(Read::Bad(*n, why.clone())),
                }
            }
        }
        out
    }

    /// The line rules on the whole text at once: split at `\n`; a line over
    /// `limit` bytes (its `\r` counted) is not read; then its `\r` and line
    /// 1's BOM are left out, and an unterminated last line may be torn.
    fn naive_lines(text: &[u8], limit: u64) -> Vec<(usize, Result<Vec<u8>, String>)> {
        let mut pieces: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
        if pieces.last().is_some_and(|p| p.is_empty()) {
            pieces.pop();
        }
        let count = pieces.len();
        let unterminated = !text.ends_with(b"\n");
        let mut out = Vec::new();
        for (i, piece) in pieces.into_iter().enumerate() {
            let n = i + 1;
            if piece.len() as u64 > limit {
                out.push((n, Err(crate::file::over_limit(piece.len(), limit))));
                continue;
            }
            let mut line = piece.strip_suffix(b"\r").unwrap_or(piece);
            if n == 1 {
                line = line.strip_prefix("\u{feff}".as_bytes()).unwrap_or(line);
            }
            if unterminated && n == count && torn(line) {
                out.push((n, Err(TORN.into())));
                continue;
            }
            out.push((n, Ok(line.to_vec())));
        }
        out
    }

    #[test]
    fn a_torn_last_line_is_reported_and_skipped_never_read_as_a_record() {
        let whole = r#"{"id": "a", "output": "one"}"#;
        let cut = r#"{"id": "b", "output": "tw"#;
        let p = Path::new("segment.jsonl");
        let text = format!("{whole}\n{cut}");
        let loaded = load_file_text(p, &text);
        assert_eq!(loaded.len(), 2);
        assert_eq!(loaded[0].as_ref().unwrap().id, "a");
        let e = loaded[1].as_ref().unwrap_err();
        assert_eq!((e.line, e.reason.as_str()), (Some(2), TORN));
        assert!(e.to_string().starts_with("segment.jsonl:2: torn last line"));

        let streamed = read_blocks(&mut JsonlBlocks::new(text.as_bytes(), 1 << 20));
        assert_eq!(
            streamed,
            [Read::Text(1, whole.into()), Read::Bad(2, TORN.into())]
        );

        // Without the final newline, a whole record is still a record; the
        // same cut text in the middle of a file is plain bad JSON.
        let loaded = load_file_text(p, &format!("{whole}\n{whole}"));
        assert!(loaded.iter().all(Result::is_ok));
        let streamed = read_blocks(&mut JsonlBlocks::new(
            format!("{whole}\n{whole}").as_bytes(),
            1 << 20,
        ));
        assert_eq!(streamed[1], Read::Text(2, whole.into()));
        let loaded = load_file_text(p, &format!("{cut}\n{whole}\n"));
        let e = loaded[0].as_ref().unwrap_err();
        assert!(e.reason.starts_with("not valid JSON"), "{e}");
        // A blank unterminated end is nothing.
        assert_eq!(load_file_text(p, &format!("{whole}\n  ")).len(), 1);
    }

    /// Regression: the inspector (which loads through [`load_file_with`])
    /// refused a whole `.jsonl` file for one line that was not UTF-8
    /// (`x.jsonl: not valid UTF-8 (first bad byte at offset 45)`), and a
    /// file over the size limit whole, where `label` reports only that
    /// line, with its number, and reads the others. Each bad line is now
    /// its own error, by the one line rule ([`jsonl_line`]) `label` reads
    /// with, and the fingerprint is the whole file's.
    #[test]
    fn each_bad_line_of_a_jsonl_file_is_its_own_error_and_the_rest_load() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.jsonl");
        let mut bytes = Vec::new();
        bytes.extend_from_slice(b"{\"id\": \"a\", \"output\": \"hi\"}\n");
        bytes.extend_from_slice(b"{\"id\": \"b\", \"output\": \"caf\xe9\"}\n");
        bytes.extend_from_slice(b"not json\n");
        bytes.extend_from_slice(b"[1, 2]\n");
        bytes.extend_from_slice(b"{\"id\": \"e\"}\n");
        bytes.extend_from_slice(format!("{{\"output\": \"{}\"}}\n", "x".repeat(100)).as_bytes());
        bytes.extend_from_slice(b"\n{\"id\": \"g\", \"output\": \"hi\"}\n");
        bytes.extend_from_slice(b"{\"id\": \"h\", \"out");
        std::fs::write(&path, &bytes).unwrap();
        let opts = LoadOptions {
            max_file_size: 64,
            fingerprint: true,
        };
        let (loaded, fingerprint) = load_file_with(&path, &opts);
        let got: Vec<(Option<usize>, String)> = loaded
            .iter()
            .map(|l| match l {
                Ok(t) => (t.line, format!("id {}", t.id)),
                Err(e) => (e.line, e.reason.clone()),
            })
            .collect();
        assert_eq!(
            got,
            [
                (Some(1), "id a".to_string()),
                (
                    Some(2),
                    "not valid UTF-8 (first bad byte at offset 26)".to_string()
                ),
                (
                    Some(3),
                    "not valid JSON: expected ident at line 1 column 2".to_string()
                ),
                (Some(4), "not a JSON object".to_string()),
                (Some(5), "missing `output` (and no `response`)".to_string()),
                (Some(6), over_limit(114, 64)),
                (Some(8), "id g".to_string()),
                (Some(9), TORN.to_string()),
            ]
        );
        assert!(
            loaded
                .iter()
                .all(|l| l.as_ref().is_err_and(|e| e.path == path)
                    || l.as_ref().is_ok_and(|t| t.path == path))
        );
        assert_eq!(fingerprint, Some(Fingerprint::of(&bytes)));
    }

    #[test]
    fn jsonl_lines_stream_with_a_per_line_limit_and_the_whole_file_fingerprint() {
        let text = "\u{feff}{\"a\": 1}\r\n\n   \n{\"long\": \"0123456789\"}\n{\"b\": 2}";
        // Blocks of 4 bytes and 2 lines: every line is cut by a block's end.
        let mut lines = JsonlBlocks::new(text.as_bytes(), 12).with_block_size(4, 2);
        let got = read_blocks(&mut lines);
        assert_eq!(
            got,
            [
                Read::Text(1, "{\"a\": 1}".into()),
                Read::Bad(
                    4,
                    "22 bytes, over the 12-byte limit (--max-file-size): not read".into()
                ),
                Read::Text(5, "{\"b\": 2}".into()),
            ]
        );
        assert_eq!(lines.fingerprint(), Some(Fingerprint::of(text.as_bytes())));
        assert_eq!(lines.lines_read(), 5);
        assert!(lines.error.is_none());
        let bad = b"{\"a\": \"caf\xe9\"}\n{}\n";
        let got = read_blocks(&mut JsonlBlocks::new(&bad[..], 100));
        assert_eq!(
            got,
            [
                Read::Bad(1, "not valid UTF-8 (first bad byte at offset 10)".into()),
                Read::Text(2, "{}".into()),
            ]
        );
        let unfingerprinted = JsonlBlocks::new(&bad[..], 100).without_fingerprint();
        assert_eq!(unfingerprinted.fingerprint(), None);
    }

    /// The blocks hold the lines of the file split whole at `\n` by the line
    /// rules ([`naive_lines`]) — numbers, bytes, over-limit and torn lines,
    /// and the fingerprint — however the blocks cut the file (a few bytes or
    /// lines each) and whatever the limit.
    #[test]
    fn jsonl_blocks_hold_the_lines_of_jsonl_lines() {
        let pieces: [&[u8]; 10] = [
            b"{\"a\": 1}",
            b"",
            b"  ",
            b"\r",
            b"\xef\xbb\xbf",
            b"caf\xe9",
            b"0123456789abcdef",
            "\u{feff}{}".as_bytes(),
            b"\n",
            b"{\"c\": \"x",
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rng = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..400 {
            let mut text = Vec::new();
            for _ in 0..rng() % 12 {
                text.extend_from_slice(pieces[(rng() % pieces.len() as u64) as usize]);
                if rng() % 3 == 0 {
                    text.push(b'\n');
                }
            }
            let limit = [4, 9, 16, 1000][(rng() % 4) as usize];
            let (bytes, lines) = (1 + (rng() % 40) as usize, 1 + (rng() % 4) as usize);
            let want = naive_lines(&text, limit);
            let mut blocks = JsonlBlocks::new(&text[..], limit).with_block_size(bytes, lines);
            let mut got = Vec::new();
            for block in blocks.by_ref() {
                assert!(!block.lines.is_empty());
                for line in &block.lines {
                    got.push(match line {
                        BlockLine::Line(n, r) => (*n, Ok(block.bytes[r.clone()].to_vec())),
                        BlockLine::Bad(n, reason) => (*n, Err(reason.clone())),
                    });
                }
            }
            assert_eq!(
                got, want,
                "round {round}: {text:?} limit {limit}, blocks {bytes} B / {lines}"
            );
            assert_eq!(blocks.fingerprint(), Some(Fingerprint::of(&text)));
            assert!(blocks.error.is_none());
        }
    }

    /// Regression (s46-files): a BOM at the start of a JSONL line other
    /// than the first (files joined with `cat`) was reported as "expected
    /// value at line 1 column 1", pointing at nothing the reader can see.
    #[test]
    fn a_bom_inside_a_jsonl_file_is_named() {
        let text = "\u{feff}{\"id\": \"a\", \"output\": \"x\"}\n\u{feff}{\"id\": \"b\", \"output\": \"y\"}\n";
        let loaded = load_file_text(Path::new("joined.jsonl"), text);
        assert_eq!(loaded[0].as_ref().unwrap().id, "a");
        let e = loaded[1].as_ref().unwrap_err();
        assert_eq!(e.line, Some(2));
        assert_eq!(
            e.reason,
            "not valid JSON: the line starts with a byte-order mark (U+FEFF), which only a \
             file's first line may have (files joined together?)"
        );
        let streamed = read_blocks(&mut JsonlBlocks::new(text.as_bytes(), 1 << 20));
        let Read::Text(2, line) = &streamed[1] else {
            panic!("{streamed:?}")
        };
        let e = parse_transcript(line, Path::new("joined.jsonl"), Some(2), "joined").unwrap_err();
        assert!(e.reason.contains("byte-order mark"), "{e}");
    }

    /// Regression (s48-files): a file of UTF-16 (PowerShell's `>`), UTF-32
    /// or a compressed one was read as UTF-8: `not valid UTF-8 (first bad
    /// byte at offset 0)` for a `.json`, and for a `.jsonl` one error per
    /// line, most of them `expected value` (a UTF-16 line is valid UTF-8
    /// with NULs, without a BOM every line). The file is refused whole, in
    /// one error naming what it is, by the whole-file read and the JSONL
    /// stream alike.
    #[test]
    fn a_utf16_or_compressed_file_is_refused_whole_naming_what_it_is() {
        let line = r#"{"id": "a", "output": "x"}"#;
        let lines = format!("{line}\r\n{line}\r\n{line}\r\n");
        let utf16 = |be: bool, bom: bool| -> Vec<u8> {
            let mut out = Vec::new();
            for unit in (if bom { "\u{feff}" } else { "" })
                .encode_utf16()
                .chain(lines.encode_utf16())
            {
                out.extend(if be {
                    unit.to_be_bytes()
                } else {
                    unit.to_le_bytes()
                });
            }
            out
        };
        let utf32le: Vec<u8> = "\u{feff}{}"
            .chars()
            .flat_map(|c| (c as u32).to_le_bytes())
            .collect();
        let mut gzip = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3];
        gzip.extend(b"\n\x93\n\n");
        let convert = "not UTF-8: not read (toolgate reads UTF-8; convert it first";
        let cases: Vec<(Vec<u8>, String)> = vec![
            (
                utf16(false, true),
                format!("UTF-16LE text (byte-order mark FF FE), {convert}"),
            ),
            (
                utf16(true, true),
                format!("UTF-16BE text (byte-order mark FE FF), {convert}"),
            ),
            (
                utf16(false, false),
                format!("UTF-16LE text (no byte-order mark), {convert}"),
            ),
            (
                utf16(true, false),
                format!("UTF-16BE text (no byte-order mark), {convert}"),
            ),
            (
                utf32le,
                format!("UTF-32LE text (byte-order mark FF FE 00 00), {convert}"),
            ),
            (
                gzip,
                "gzip-compressed: not read (decompress it first, e.g. `gunzip -k`)".into(),
            ),
            (
                vec![0x28, 0xb5, 0x2f, 0xfd, 0, b'\n', b'x'],
                "zstd-compressed: not read (decompress it first, e.g. `zstd -d`)".into(),
            ),
        ];
        let dir = tempfile::tempdir().unwrap();
        for (i, (bytes, why)) in cases.iter().enumerate() {
            for ext in ["json", "jsonl", "sse"] {
                let path = dir.path().join(format!("{i}.{ext}"));
                std::fs::write(&path, bytes).unwrap();
                let (loaded, _) = load_file_with(&path, &LoadOptions::default());
                assert_eq!(loaded.len(), 1, "{i}.{ext}: {loaded:?}");
                let e = loaded[0].as_ref().unwrap_err();
                assert!(e.reason.starts_with(why.as_str()), "{i}.{ext}: {e}");
                // A JSONL file on its line 1, as its stream below.
                assert_eq!(e.line, (ext == "jsonl").then_some(1), "{i}.{ext}");
            }
            // The JSONL stream: one error, on line 1, and nothing after it.
            let blocks: Vec<LineBlock> = JsonlBlocks::new(&bytes[..], 1 << 20).collect();
            let lines: Vec<&BlockLine> = blocks.iter().flat_map(|b| &b.lines).collect();
            let [BlockLine::Bad(1, reason)] = lines[..] else {
                panic!("{i}: {lines:?}")
            };
            assert!(reason.starts_with(why.as_str()), "{i}: {reason}");
        }
        // UTF-8, with its BOM or without, still reads.
        for text in [lines.clone(), format!("\u{feff}{lines}")] {
            let streamed = read_blocks(&mut JsonlBlocks::new(text.as_bytes(), 1 << 20));
            assert_eq!(streamed.len(), 3, "{streamed:?}");
            assert!(
                load_file_text(Path::new("x.jsonl"), &text)
                    .iter()
                    .all(Result::is_ok)
            );
        }
    }

    /// Regression (s48-files): a directory's `x.jsonl.gz` was passed over
    /// in silence (not a `.json`/`.jsonl` name), its transcripts missing
    /// from the batch without a word (exit 0). It is named, as any file
    /// not read; other compressed files and `.gz` of other things are not
    /// transcript files. And `-` is not a missing file but stdin, which the
    /// batch commands do not read: said so.
    #[test]
    fn a_compressed_transcript_file_in_a_directory_is_named_not_passed_over() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "a.jsonl.gz",
            "b.json.zst",
            "c.sse.xz",
            "d.tar.gz",
            "e.jsonl",
            "f.gz",
        ] {
            std::fs::write(dir.path().join(name), "{\"output\": \"x\"}\n").unwrap();
        }
        let (files, errors) = collect_files(&[dir.path().to_path_buf()]);
        assert_eq!(files, vec![dir.path().join("e.jsonl")]);
        let errors: Vec<(String, String)> = errors
            .iter()
            .map(|e| {
                let name = e.path.file_name().unwrap().to_string_lossy().into_owned();
                (name, e.reason.clone())
            })
            .collect();
        assert_eq!(
            errors,
            vec![
                (
                    "a.jsonl.gz".to_string(),
                    "gzip-compressed: not read (decompress it first, e.g. `gunzip -k`)".to_string()
                ),
                (
                    "b.json.zst".to_string(),
                    "zstd-compressed: not read (decompress it first, e.g. `zstd -d`)".to_string()
                ),
                (
                    "c.sse.xz".to_string(),
                    "xz-compressed: not read (decompress it first, e.g. `unxz -k`)".to_string()
                ),
            ]
        );
        let (files, errors) = collect_files(&[PathBuf::from("-")]);
        assert!(files.is_empty());
        assert_eq!(
            errors[0].reason,
            "no such file; transcripts are not read from stdin (`-`): save them to a .jsonl \
             file and name it"
        );
    }

    /// Regression (s48-files): transcripts gathered into one JSON array
    /// (a pretty-printed export) were refused as `not a JSON object`,
    /// which did not say what to do. The error says what it is and how
    /// to make a `.jsonl` of it; another array is still only not an object.
    #[test]
    fn an_array_of_transcripts_is_refused_saying_how_to_read_it() {
        let array = "[\r\n  {\"id\": \"a\", \"output\": \"x\"},\r\n  {\"output\": \"y\"}\r\n]\r\n";
        let want = "not a JSON object but an array of 2 transcripts: a transcript file holds \
                    one object, a `.jsonl` file one per line (e.g. `jq -c '.[]' FILE > FILE.jsonl`)";
        for loaded in [
            load_file_text(Path::new("all.json"), array),
            load_kind_whole(Path::new("all.json"), array, None, &Default::default()),
        ] {
            let [Err(e)] = &loaded[..] else {
                panic!("{loaded:?}")
            };
            assert_eq!(e.reason, want);
        }
        let loaded = load_file_text(Path::new("all.json"), "[1, 2]");
        assert_eq!(loaded[0].as_ref().unwrap_err().reason, "not a JSON object");
    }

    /// Regression (s48-files): a pretty-printed transcript (or array) in a
    /// `.jsonl` file gave an error for each of its lines (`EOF while
    /// parsing`, `not a JSON object`, ...) that never said what the file
    /// was. It is one error for the file; a JSONL file is read as before.
    #[test]
    fn a_pretty_printed_jsonl_file_is_one_error_naming_it() {
        let want = "pretty-printed JSON, not JSON lines (its first line is only `{` or `[`): not \
                    read; a `.jsonl` file holds one transcript per line (e.g. `jq -c . FILE`), a \
                    `.json` file one transcript";
        for text in [
            "{\n  \"output\": \"x\",\n  \"id\": \"a\"\n}\n",
            "\u{feff}\r\n[\r\n  {\"output\": \"x\"},\r\n  {\"output\": \"y\"}\r\n]\r\n",
        ] {
            let loaded = load_file_text(Path::new("x.jsonl"), text);
            let [Err(e)] = &loaded[..] else {
                panic!("{loaded:?}")
            };
            assert_eq!((e.line, e.reason.as_str()), (None, want));
        }
        let loaded = load_file_text(Path::new("x.jsonl"), "{\"output\": \"x\"}\n{\n");
        assert!(loaded[0].is_ok(), "{loaded:?}");
        assert!(loaded[1].is_err(), "{loaded:?}");
    }

    /// Regression (s48-files): an empty `.json` file (or one of blank
    /// lines) was `not valid JSON: EOF while parsing a value at line 1
    /// column 0`; it says it is empty. An empty `.jsonl` holds no line and
    /// loads nothing, as before.
    #[test]
    fn an_empty_json_file_says_it_is_empty() {
        for text in ["", "\r\n  \n", "\u{feff}"] {
            for loaded in [
                load_file_text(Path::new("e.json"), text),
                load_kind_whole(Path::new("e.json"), text, None, &Default::default()),
            ] {
                let [Err(e)] = &loaded[..] else {
                    panic!("{text:?}: {loaded:?}")
                };
                assert_eq!(e.reason, "empty (no JSON in it): no transcript");
            }
            assert!(load_file_text(Path::new("e.jsonl"), text).is_empty());
        }
    }

    /// Regression (s48-files): a stream's own request file
    /// (`STEM.request.json`) that could not be read (UTF-16, cut short,
    /// not a regular file) was passed over in silence: the stream's
    /// transcripts were judged with the tools unknown (every call refused
    /// at `allowlist`, no schema labels), exit 0, and the finding said the
    /// request was not captured. The request file is named with why, beside
    /// the transcripts; a readable one is joined as before.
    #[test]
    fn a_streams_request_file_that_cannot_be_read_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let stream = include_str!("../../../examples/captures/openai-chat/stream.sse");
        let request = include_str!("../../../examples/captures/openai-chat/stream.request.json");
        let utf16: Vec<u8> = format!("\u{feff}{request}")
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect();
        let cases: Vec<(&str, Vec<u8>, Option<&str>)> = vec![
            ("good", request.as_bytes().to_vec(), None),
            (
                "u16",
                utf16,
                Some("UTF-16LE text (byte-order mark FF FE), not UTF-8"),
            ),
            (
                "cut",
                request.as_bytes()[..20].to_vec(),
                Some("not valid JSON"),
            ),
            (
                "other",
                b"{\"output\": \"x\"}".to_vec(),
                Some("not a chat-completions"),
            ),
        ];
        for (stem, bytes, why) in cases {
            let sse = dir.path().join(format!("{stem}.sse"));
            std::fs::write(&sse, stream).unwrap();
            let req = dir.path().join(format!("{stem}.request.json"));
            std::fs::write(&req, bytes).unwrap();
            let loaded = load_file(&sse);
            let (ok, errors): (Vec<_>, Vec<_>) = loaded.iter().partition(|l| l.is_ok());
            assert_eq!(ok.len(), 1, "{stem}: {loaded:?}");
            let tools_known = ok[0].as_ref().unwrap().tools_known;
            match why {
                None => {
                    assert!(errors.is_empty() && tools_known, "{stem}: {loaded:?}");
                }
                Some(why) => {
                    assert!(!tools_known, "{stem}");
                    let [Err(e)] = &errors[..] else {
                        panic!("{stem}: {loaded:?}")
                    };
                    assert_eq!(e.path, req);
                    let head = format!("the request of {stem}.sse is not read: {why}");
                    assert!(e.reason.starts_with(&head), "{stem}: {e}");
                    assert!(
                        e.reason
                            .ends_with("; its transcripts are judged with the tools unknown"),
                        "{e}"
                    );
                }
            }
        }
    }

    /// Regression (s46-files): a block cut at its line cap kept the whole
    /// read buffer (128 KiB) for its 256 lines, and the rest of the buffer
    /// was copied again for every block: a file of short lines, its blocks
    /// held together (the batch's head, Python's `load_bytes`), took
    /// 300 times its size. The blocks hold about the file's bytes.
    #[test]
    fn blocks_of_short_lines_hold_about_their_bytes() {
        for line in ["", "{}", "{\"a\": \"0123456789abcdef0123456789\"}"] {
            let text = format!("{line}\n").repeat(100_000);
            let blocks: Vec<LineBlock> = JsonlBlocks::new(text.as_bytes(), 1 << 20).collect();
            let held: usize = blocks.iter().map(|b| b.bytes.capacity()).sum();
            assert!(
                held <= 2 * text.len() + 2 * BLOCK_BYTES,
                "lines of {} bytes: {held} bytes held for a file of {}",
                line.len(),
                text.len()
            );
            let lines: usize = blocks.iter().map(|b| b.lines.len()).sum();
            assert_eq!(lines, 100_000);
            let last = blocks.last().and_then(|b| b.lines.last()).cloned();
            let Some(BlockLine::Line(n, range)) = last else {
                panic!("{last:?}")
            };
            assert_eq!(n, 100_000);
            assert_eq!(&blocks[blocks.len() - 1].bytes[range], line.as_bytes());
        }
    }

    /// `line_text` (SIMD) says what std's UTF-8 check says, blanks (Unicode
    /// spaces too) aside, with std's offset for a bad byte at any place; the
    /// batch's lines read through it are those lines.
    #[test]
    fn line_text_is_std_utf8_with_blanks_skipped() {
        let mut lines: Vec<Vec<u8>> = vec![
            b"{\"a\": 1}".to_vec(),
            Vec::new(),
            " \u{2003}\t".into(),
            "{\"é\": \"ü\"}".into(),
            b"{\"cut\": \"\xe2\x9c\"}".to_vec(),
        ];
        for cut in 0..40 {
            let mut line: Vec<u8> = "{\"x\": \"ünïcödé ✓ text past one SIMD block\"}".into();
            line.insert(cut.min(line.len()), 0xe9);
            lines.push(line);
        }
        for bytes in &lines {
            let std = match std::str::from_utf8(bytes) {
                Ok(text) if text.trim().is_empty() => Ok(None),
                Ok(text) => Ok(Some(text)),
                Err(e) => Err(format!(
                    "not valid UTF-8 (first bad byte at offset {})",
                    e.valid_up_to()
                )),
            };
            assert_eq!(line_text(bytes), std, "{bytes:?}");
        }
        let mut text: Vec<u8> = "\u{feff}".into();
        text.extend(lines.join(&b'\n'));
        text.extend(b"\r\n{\"over\": \"0123456789012345678901234567890123456789012345678901234567890123456789\"}\n{}");
        let read = read_blocks(&mut JsonlBlocks::new(&text[..], 64));
        // 2 texts, 2 blanks skipped, 41 not UTF-8, one over the limit, `{}`.
        assert_eq!(read.len(), 45, "{read:?}");
        let texts: Vec<&Read> = read
            .iter()
            .filter(|r| matches!(r, Read::Text(..)))
            .collect();
        assert_eq!(
            texts,
            [
                &Read::Text(1, "{\"a\": 1}".into()),
                &Read::Text(4, "{\"é\": \"ü\"}".into()),
                &Read::Text(47, "{}".into()),
            ]
        );
        let not_utf8 = read
            .iter()
            .filter(|r| matches!(r, Read::Bad(_, why) if why.starts_with("not valid UTF-8")))
            .count();
        assert_eq!(not_utf8, 41);
        assert!(matches!(&read[43], Read::Bad(46, why) if why.contains("over the 64-byte limit")));
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_folders_are_followed_once_and_loops_end() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        fs::create_dir(&real).unwrap();
        fs::write(real.join("a.json"), "{\"output\": \"\"}").unwrap();
        let top = dir.path().join("top");
        fs::create_dir(&top).unwrap();
        std::os::unix::fs::symlink(&real, top.join("linked")).unwrap();
        std::os::unix::fs::symlink(&top, top.join("loop")).unwrap();
        let (files, errors) = collect_files(std::slice::from_ref(&top));
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(files, vec![top.join("linked").join("a.json")]);
    }

    /// Issue 22: `tools` absent is unknown, which is not `tools: []`.
    #[test]
    fn tools_absent_is_unknown_and_tools_empty_is_a_known_empty_list() {
        let p = Path::new("t.jsonl");
        let known = |text: &str| parse_transcript(text, p, Some(1), "t").unwrap().tools_known;
        assert!(!known(r#"{"output": "x"}"#));
        assert!(known(r#"{"output": "x", "tools": []}"#));
        assert!(known(r#"{"output": "x", "tools": null}"#));
        assert!(known(r#"{"output": "x", "tools": [{"name": "f"}]}"#));
        // The request/response form: the request holds the tool list (a
        // captured request without `tools` declared none).
        assert!(!known(
            r#"{"response": {"choices": [{"message": {"content": "x"}}]}}"#
        ));
        assert!(known(
            r#"{"request": {"model": "m"}, "response": {"choices": [{"message": {"content": "x"}}]}}"#
        ));
        let t = parse_transcript(r#"{"output": "x"}"#, p, Some(1), "t").unwrap();
        assert!(t.tools_unknown() && t.tools.is_empty());
    }

    /// Issue 22: `toolgate import` of toolgate files dropped `tools` (the
    /// batch loader keeps them out of `raw`); the whole-object loader keeps
    /// every member, in its place.
    #[test]
    fn the_whole_object_loader_keeps_tools_in_raw_in_place() {
        let p = Path::new("t.jsonl");
        let text = "{\"id\": \"a\", \"tools\": [{\"name\": \"f\", \"strict\": true}], \"output\": \"x\", \"x-extra\": 1}\n{\"output\": \"y\"}\n";
        let loaded = load_kind_whole(p, text, None, &import::Companions::default());
        let a = loaded[0].as_ref().unwrap();
        let keys: Vec<&str> = a.raw.keys().map(String::as_str).collect();
        assert_eq!(keys, ["id", "tools", "output", "x-extra"]);
        assert_eq!(a.raw["tools"][0]["strict"], true);
        assert_eq!(a.tools[0].name, "f");
        assert!(a.tools_known);
        let b = loaded[1].as_ref().unwrap();
        assert!(!b.raw.contains_key("tools") && !b.tools_known);
        // The batch loader reads the same transcripts, minus the raw copy.
        let batch = load_kind(p, text, None, &import::Companions::default());
        assert!(!batch[0].as_ref().unwrap().raw.contains_key("tools"));
        assert_eq!(batch[0].as_ref().unwrap().tools, a.tools);
        let bad = load_kind_whole(p, "[1]\n", None, &import::Companions::default());
        assert_eq!(bad[0].as_ref().unwrap_err().reason, "not a JSON object");
    }
}
