//! Storing labels in transcript files (`label --write`, the inspector's accept).
//!
//! Only the `labels` member changes, byte for byte everywhere else, and the
//! file is replaced atomically. The rules, each pinned by a test below:
//!
//! - A symlink is written through: the link stays, its target gets the labels.
//! - A file with another hard link is refused: the rename would give only
//!   this name the labels, and the other would silently keep the old file.
//! - A JSONL file is streamed, never held: each line is copied through
//!   [`WRITE_BUFFER`]-byte buffers as it is read (an unreadable line byte
//!   for byte), only a line whose labels change is held whole, and the
//!   temporary file is made at the first such line (none when nothing
//!   changes). What was read is kept as a fingerprint and a hash per 64 KiB
//!   for the checks below. A `.json` file (one transcript, read whole by
//!   the loader) is edited in memory.
//! - A read-only file is refused with a message (it is never made writable);
//!   the replacement keeps the original's mode, and its owner and group, or
//!   the write is refused.
//! - The temporary file is created exclusively (`O_EXCL`: a planted symlink
//!   at its name is never followed) under a random name in the target's
//!   directory, with the original's permissions from the start. Its name is
//!   `.NAME.toolgate-PID.RANDOM.tmp`, so that [`clean_stale_temps`] can remove
//!   what a killed run left behind without touching a live run's file.
//! - With a [`Fingerprint`] of the text that was replayed, a file that changed
//!   since is not written (its labels would land on the wrong transcripts).
//! - Nothing another process wrote to the file while it was labelled is lost:
//!   immediately before the rename, holding an exclusive [`lock_exclusive`]
//!   on the file, the writer checks that the path still names the file it
//!   read and that the file holds exactly the bytes read (by length, then
//!   by the hash of each 64 KiB block read again; a tail appended
//!   meanwhile, by a plain appender or the proxy's recorder, fails this), and
//!   otherwise leaves the file alone with an error saying so. The proxy's
//!   recorder appends to a segment under the same lock, after checking that
//!   its open file is still the one at the path, so between the check and
//!   the rename it cannot append (to the file about to be replaced). A
//!   program that appends without the lock can still lose a line in that
//!   window: a `stat`, a re-read compare and a `rename`, nothing else.
//! - The file's line endings (CRLF) and a leading BOM are kept; duplicate
//!   `labels` members collapse into the one a JSON reader keeps.

use crate::jsontext;
use std::io::{Error, ErrorKind, Read, Seek, Write};
use std::path::{Path, PathBuf};

pub use crate::relabel::LabelMap;

pub use crate::file::{Fingerprint, FingerprintWriter};

/// What a write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOutcome {
    /// The file was replaced.
    Written,
    /// The stored labels were already these: the file was not touched.
    Unchanged,
}

/// The files other processes hold open for writing, by (device, inode),
/// each with one such process: a file is replaced by a rename, and a
/// program appending through a handle it keeps open (a logger, `tee -a`)
/// would go on writing to the replaced copy, losing every later line, so
/// such a file is not replaced.
///
/// Read from `/proc/*/fd` and `/proc/*/fdinfo` on Linux, once per command
/// ([`OpenWriters::scan`]); elsewhere nothing is known and nothing is
/// refused. A process whose entries cannot be read (another user's, without
/// privileges) is skipped, and so is a writer that opens the file after
/// the scan.
#[derive(Clone, Debug, Default)]
pub struct OpenWriters {
    files: std::collections::HashMap<(u64, u64), Writer>,
}

/// A process holding a file open for writing.
#[derive(Clone, Debug)]
struct Writer {
    pid: u32,
    /// Its `/proc/PID/comm`, terminal-safe.
    name: String,
}

impl OpenWriters {
    /// The regular files other processes than this one hold open for
    /// writing now.
    pub fn scan() -> OpenWriters {
        let mut writers = OpenWriters::default();
        #[cfg(target_os = "linux")]
        writers.scan_proc(Path::new("/proc"));
        writers
    }

    /// Reads `proc`: every process's open descriptors whose access mode
    /// (`flags` in `fdinfo`, octal, `& 3`) is write-only or read-write.
    #[cfg(target_os = "linux")]
    fn scan_proc(&mut self, proc: &Path) {
        let Ok(entries) = std::fs::read_dir(proc) else {
            return;
        };
        let me = std::process::id();
        for entry in entries.flatten() {
            let Some(pid) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u32>().ok())
            else {
                continue;
            };
            if pid == me {
                continue;
            }
            let dir = entry.path();
            for key in writing_files(&dir) {
                self.files.entry(key).or_insert_with(|| {
                    let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
                    let name = crate::sanitize::one_line(name.trim_end()).into_owned();
                    Writer { pid, name }
                });
            }
        }
    }

    /// Why the file `meta` describes must not be replaced, if another
    /// process holds it open for writing.
    fn refusal(&self, meta: &std::fs::Metadata) -> Option<Error> {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let key = (meta.dev(), meta.ino());
            let w = self.files.get(&key)?;
            // The scan is made once for a batch: a writer it saw may have
            // closed the file since (another `label --write` staging its
            // replacement, which then became this file), and a refusal
            // naming it would be false.
            #[cfg(target_os = "linux")]
            if !writing_files(&Path::new("/proc").join(w.pid.to_string())).contains(&key) {
                return None;
            }
            Some(Error::new(
                ErrorKind::ResourceBusy,
                format!(
                    "the file is open for writing by process {} ({}): not replaced, since \
                     what it writes afterwards would go to the replaced copy and be lost; \
                     stop the writer, or label a copy",
                    w.pid, w.name
                ),
            ))
        }
        #[cfg(not(unix))]
        {
            let _ = meta;
            None
        }
    }
}

/// The regular files (device, inode) the process whose `/proc` entry is
/// `dir` holds open for writing: its descriptors whose access mode (`flags`
/// in `fdinfo`, octal, `& 3`) is write-only or read-write.
#[cfg(target_os = "linux")]
fn writing_files(dir: &Path) -> std::collections::HashSet<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let mut out = std::collections::HashSet::new();
    let Ok(fds) = std::fs::read_dir(dir.join("fd")) else {
        return out;
    };
    for fd in fds.flatten() {
        // The link's target, followed: a deleted file still answers.
        let Ok(meta) = std::fs::metadata(fd.path()) else {
            continue;
        };
        let key = (meta.dev(), meta.ino());
        if !meta.is_file() || out.contains(&key) {
            continue;
        }
        let info = std::fs::read_to_string(dir.join("fdinfo").join(fd.file_name()));
        let writing = info.ok().is_some_and(|info| {
            info.lines()
                .find_map(|l| l.strip_prefix("flags:"))
                .and_then(|f| u32::from_str_radix(f.trim(), 8).ok())
                .is_some_and(|flags| flags & 3 != 0)
        });
        if writing {
            out.insert(key);
        }
    }
    out
}

/// Stores `labels` in the transcripts of `path` (keyed by JSONL line, `None`
/// for a `.json` file), changing only their `labels` member, and replaces the
/// file atomically. See [`write_labels_checked`].
pub fn write_labels(path: &Path, updates: &[(Option<usize>, LabelMap)]) -> std::io::Result<()> {
    write_labels_checked(path, updates, None).map(|_| ())
}

/// [`write_labels`], refusing (with an error saying why) when the file's
/// content no longer matches `expected` — the text whose transcripts were
/// replayed — or the file is read-only, or it changed while the labels were
/// being written (it is then left as it is).
///
/// A file another process holds open for writing is refused
/// ([`OpenWriters`], scanned on each call: for one file at a time, like the
/// inspector's accept; a batch scans once, [`write_labels_guarded`]).
pub fn write_labels_checked(
    path: &Path,
    updates: &[(Option<usize>, LabelMap)],
    expected: Option<Fingerprint>,
) -> std::io::Result<WriteOutcome> {
    write_labels_staged(path, updates, expected, &mut |_| {})
}

/// [`write_labels_checked`] with the open writers scanned once for a
/// whole batch. The labels may be shared (`Arc<LabelMap>`): a batch holds
/// one map per distinct set of labels, not one per transcript.
pub fn write_labels_guarded<L: std::borrow::Borrow<LabelMap>>(
    path: &Path,
    updates: &[(Option<usize>, L)],
    expected: Option<Fingerprint>,
    writers: &OpenWriters,
) -> std::io::Result<WriteOutcome> {
    write_labels_inner(path, updates, expected, writers, &mut |_| {})
}

/// Where [`write_labels_staged`] calls its hook.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The new text is in the synced temporary file; the lock is not taken
    /// yet (what another process writes now is caught by the final check).
    Staged,
    /// The lock is held and the file checked: the rename comes next.
    Checked,
}

/// [`write_labels_checked`] calling `hook` at each [`Stage`]: how tests put
/// another writer between the read and the rename.
#[doc(hidden)]
pub fn write_labels_staged(
    path: &Path,
    updates: &[(Option<usize>, LabelMap)],
    expected: Option<Fingerprint>,
    hook: &mut dyn FnMut(Stage),
) -> std::io::Result<WriteOutcome> {
    write_labels_inner(path, updates, expected, &OpenWriters::scan(), hook)
}

/// [`write_labels_staged`] against `writers`.
fn write_labels_inner<L: std::borrow::Borrow<LabelMap>>(
    path: &Path,
    updates: &[(Option<usize>, L)],
    expected: Option<Fingerprint>,
    writers: &OpenWriters,
    hook: &mut dyn FnMut(Stage),
) -> std::io::Result<WriteOutcome> {
    write_labels_buffered(path, updates, expected, writers, hook, WRITE_BUFFER)
}

/// The read and write buffers of `--write` on a JSONL file: with the line
/// being edited, all it holds of the file at once (the file is streamed
/// through them, whatever its size).
pub const WRITE_BUFFER: usize = 64 * 1024;

/// [`write_labels_inner`] with buffers of `buffer` bytes.
fn write_labels_buffered<L: std::borrow::Borrow<LabelMap>>(
    path: &Path,
    updates: &[(Option<usize>, L)],
    expected: Option<Fingerprint>,
    writers: &OpenWriters,
    hook: &mut dyn FnMut(Stage),
    buffer: usize,
) -> std::io::Result<WriteOutcome> {
    // Write through a symlink to its target.
    let target = std::fs::canonicalize(path)?;
    let meta = std::fs::metadata(&target)?;
    if !meta.is_file() {
        return Err(Error::new(
            ErrorKind::InvalidInput,
            format!(
                "{}: only regular files are labelled",
                crate::file::kind_of(&meta)
            ),
        ));
    }
    if meta.permissions().readonly() {
        return Err(Error::new(
            ErrorKind::PermissionDenied,
            "the file is read-only: labels not written (make it writable to store labels)",
        ));
    }
    // Read through the handle that is locked and checked before the rename;
    // opened without waiting, and checked itself, since a FIFO put at the
    // path after the check above would block the open.
    let (file, opened) = crate::file::open_regular(&target)
        .map_err(|why| Error::new(ErrorKind::InvalidInput, why))?;
    if let Some(refused) = hard_links(&opened) {
        return Err(refused);
    }
    if let Some(refused) = writers.refusal(&opened) {
        return Err(refused);
    }
    let (tmp, digest) = if is_jsonl(path) {
        match stream_jsonl(&target, &file, updates, expected, buffer)? {
            Some(staged) => staged,
            None => return Ok(WriteOutcome::Unchanged),
        }
    } else {
        // One transcript, which the loader read whole (within
        // `--max-file-size`): edited in memory.
        let mut digest = Digest::default();
        let mut bytes = Vec::new();
        (&file).read_to_end(&mut bytes)?;
        digest.add(&bytes);
        if expected.is_some_and(|want| want != digest.whole.finish()) {
            return Err(Error::other(CHANGED_SINCE_READ));
        }
        let text = String::from_utf8(bytes)
            .map_err(|_| Error::new(ErrorKind::InvalidData, "not valid UTF-8"))?;
        let new_text = edit(&text, updates)?;
        if new_text == text {
            return Ok(WriteOutcome::Unchanged);
        }
        let mut tmp = temp_beside(&target)?;
        tmp.write_all(new_text.as_bytes())?;
        (tmp, digest)
    };
    tmp.as_file().sync_all()?;
    hook(Stage::Staged);
    // Held from the check through the rename (the proxy's recorder appends
    // under the same lock) and released when `file` closes; `false` (no
    // such lock on this platform) leaves the check to catch what came first.
    let _locked = lock_exclusive(&file).map_err(|e| {
        Error::new(
            e.kind(),
            format!("cannot lock the file: {e}: labels not written"),
        )
    })?;
    unchanged_since_read(&file, &target, &digest, buffer)?;
    hook(Stage::Checked);
    // On error the temporary file is removed when `tmp` drops.
    tmp.persist(&target).map_err(|e| e.error)?;
    drop(file);
    Ok(WriteOutcome::Written)
}

/// Why a file with other hard links is not replaced: the replacement is a
/// rename, which gives only this name the new file, and every other name
/// would keep the old labels without a word (DECISIONS.md).
fn hard_links(meta: &std::fs::Metadata) -> Option<Error> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let links = meta.nlink();
        (links > 1).then(|| {
            Error::new(
                ErrorKind::InvalidInput,
                format!(
                    "the file has {links} hard links: not replaced, since its other name(s) \
                     would keep the old labels; label a copy, or remove the other link(s)"
                ),
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        None
    }
}

/// Bytes per hash of [`Digest`]: what the final check re-reads to compare
/// one hash, and the granularity of the offset it names.
const CHECK_BLOCK: usize = 64 * 1024;

/// What was read of the file being labelled, without holding it: its
/// [`Fingerprint`] (to compare with the batch's read) and a hash of each
/// [`CHECK_BLOCK`] bytes, for the check before the rename that the file
/// still holds exactly what was read (8 bytes per 64 KiB of file).
#[derive(Default)]
struct Digest {
    whole: crate::file::FingerprintWriter,
    blocks: Vec<u64>,
    block: std::collections::hash_map::DefaultHasher,
    in_block: usize,
}

impl Digest {
    fn add(&mut self, mut bytes: &[u8]) {
        use std::hash::Hasher;
        self.whole.add(bytes);
        while !bytes.is_empty() {
            let n = (CHECK_BLOCK - self.in_block).min(bytes.len());
            // SipHash is a byte stream: pieces hash as their concatenation.
            self.block.write(&bytes[..n]);
            self.in_block += n;
            bytes = &bytes[n..];
            if self.in_block == CHECK_BLOCK {
                self.blocks.push(self.block.finish());
                self.block = Default::default();
                self.in_block = 0;
            }
        }
    }

    /// The hashes of every block, the last partial one included.
    fn hashes(&self) -> Vec<u64> {
        use std::hash::Hasher;
        let mut all = self.blocks.clone();
        if self.in_block > 0 {
            all.push(self.block.finish());
        }
        all
    }

    fn len(&self) -> u64 {
        self.blocks.len() as u64 * CHECK_BLOCK as u64 + self.in_block as u64
    }
}

/// Streams the JSONL file `file` (at `target`) into a temporary file beside
/// it with `updates` applied, holding only its buffers and the line being
/// edited: a line without an update (an unreadable one too) is copied
/// byte for byte as it passes, never held whole. The temporary file is
/// made at the first line that changes (the bytes before it copied then,
/// and checked to be those read); `None` when no line changes.
fn stream_jsonl<L: std::borrow::Borrow<LabelMap>>(
    target: &Path,
    file: &std::fs::File,
    updates: &[(Option<usize>, L)],
    expected: Option<Fingerprint>,
    buffer: usize,
) -> std::io::Result<Option<(tempfile::NamedTempFile, Digest)>> {
    use std::io::BufRead;
    // Index the updates by line once: a JSONL file may hold many thousands.
    let by_line: std::collections::HashMap<usize, &LabelMap> = updates
        .iter()
        .filter_map(|(line, labels)| line.map(|n| (n, labels.borrow())))
        .collect();
    let mut reader = std::io::BufReader::with_capacity(buffer, file);
    let mut digest = Digest::default();
    let mut out: Option<std::io::BufWriter<tempfile::NamedTempFile>> = None;
    // The first line whose labels cannot be stored: said once the whole
    // file is read (a file changed since the batch read it says that first).
    let mut failed: Option<Error> = None;
    let mut line = Vec::new();
    let mut number = 0usize;
    while !fill(&mut reader)?.is_empty() {
        number += 1;
        let Some(labels) = by_line.get(&number) else {
            // Copied through up to its `\n`, a buffer at a time.
            loop {
                let buf = fill(&mut reader)?;
                if buf.is_empty() {
                    break;
                }
                let (take, ends) = match memchr::memchr(b'\n', buf) {
                    Some(i) => (i + 1, true),
                    None => (buf.len(), false),
                };
                digest.add(&buf[..take]);
                if let Some(out) = out.as_mut() {
                    out.write_all(&buf[..take])?;
                }
                reader.consume(take);
                if ends {
                    break;
                }
            }
            continue;
        };
        let start = digest.len();
        // What was read before this line, while nothing is written yet.
        let before = out.is_none().then(|| digest.whole.finish());
        line.clear();
        reader.read_until(b'\n', &mut line)?;
        digest.add(&line);
        let edited = match edit_line(&line, labels) {
            Ok(edited) => edited,
            Err(e) => {
                failed.get_or_insert_with(|| Error::new(e.kind(), format!("line {number}: {e}")));
                line.clone()
            }
        };
        if let Some(before) = before.filter(|_| edited != line) {
            out = Some(std::io::BufWriter::with_capacity(
                buffer,
                temp_with_prefix(target, start, &before, buffer)?,
            ));
        }
        if let Some(out) = out.as_mut() {
            out.write_all(&edited)?;
        }
        // A long line's buffer is not kept for the short ones after it.
        if line.capacity() > 4 * buffer {
            line = Vec::new();
        }
    }
    if expected.is_some_and(|want| want != digest.whole.finish()) {
        return Err(Error::other(CHANGED_SINCE_READ));
    }
    if let Some(e) = failed {
        return Err(e);
    }
    let Some(out) = out else {
        return Ok(None);
    };
    let tmp = out.into_inner().map_err(|e| e.into_error())?;
    Ok(Some((tmp, digest)))
}

/// `reader`'s buffer, filled if it is empty (a read interrupted by a
/// signal is retried); empty at the end of the file.
fn fill<R: std::io::BufRead>(reader: &mut R) -> std::io::Result<&[u8]> {
    loop {
        match reader.fill_buf() {
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            // Reborrowed: the retry loop above cannot hold the borrow.
            Ok(_) => return reader.fill_buf(),
            Err(e) => return Err(e),
        }
    }
}

/// The temporary file beside `target`, holding the first `len` bytes of
/// the file at `target`, which must fingerprint as `read` (what the
/// stream read of them): read again through another handle, since the
/// stream's own has gone past them.
fn temp_with_prefix(
    target: &Path,
    len: u64,
    read: &Fingerprint,
    buffer: usize,
) -> std::io::Result<tempfile::NamedTempFile> {
    let mut tmp = temp_beside(target)?;
    if len == 0 {
        return Ok(tmp);
    }
    let (again, _) = crate::file::open_regular(target)
        .map_err(|why| Error::new(ErrorKind::InvalidInput, why))?;
    let mut copied = crate::file::FingerprintWriter::default();
    let mut reader = std::io::BufReader::with_capacity(buffer, again.take(len));
    {
        let mut out = std::io::BufWriter::with_capacity(buffer, &mut tmp);
        loop {
            let buf = fill(&mut reader)?;
            if buf.is_empty() {
                break;
            }
            copied.add(buf);
            out.write_all(buf)?;
            let n = buf.len();
            std::io::BufRead::consume(&mut reader, n);
        }
        out.flush()?;
    }
    if copied.finish() != *read {
        return Err(Error::other(changed_while_labelled(
            "its first bytes changed while they were read",
        )));
    }
    Ok(tmp)
}

/// Takes `flock(LOCK_EX)` on `file`, waiting for its holder: the advisory
/// lock under which `label --write` checks and replaces a transcript file
/// and the proxy's recorder appends to a segment. `Ok(false)` where the
/// platform has no such lock. Released by [`std::fs::File::unlock`] or by
/// closing the file.
pub fn lock_exclusive(file: &std::fs::File) -> std::io::Result<bool> {
    loop {
        match file.lock() {
            Ok(()) => return Ok(true),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::Unsupported => return Ok(false),
            Err(e) => return Err(e),
        }
    }
}

/// [`lock_exclusive`], waiting at most `wait` for another holder: an
/// error saying so past it (a process that holds the lock for good must
/// not stall the proxy's recorder, whose queue would grow meanwhile).
pub fn lock_exclusive_within(
    file: &std::fs::File,
    wait: std::time::Duration,
) -> std::io::Result<bool> {
    let started = std::time::Instant::now();
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(true),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < wait => {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::other(format!(
                    "another process has held the lock for more than {} ms",
                    wait.as_millis()
                )));
            }
            Err(std::fs::TryLockError::Error(e)) if e.kind() == ErrorKind::Interrupted => {}
            Err(std::fs::TryLockError::Error(e)) if e.kind() == ErrorKind::Unsupported => {
                return Ok(false);
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(e),
        }
    }
}

/// What `label --write` says of a file whose bytes are not those the batch
/// read (another program wrote to it in between); README.md quotes it.
pub const CHANGED_SINCE_READ: &str =
    "the file changed since it was read: labels not written (run again)";

/// What `label --write` says of a file that changed between its read for
/// the write and the rename (`why`: what changed); README.md quotes it.
pub fn changed_while_labelled(why: &str) -> String {
    format!(
        "the file changed while it was being labelled ({why}): labels not written, \
         the file is left as it is (run again)"
    )
}

/// Checks that `path` still names `file` and that `file` holds exactly
/// what `read` digested (an error saying what changed otherwise): the
/// length first (an appended tail fails without reading anything), then
/// the hash of each block, up to the first that differs.
fn unchanged_since_read(
    file: &std::fs::File,
    path: &Path,
    read: &Digest,
    buffer: usize,
) -> std::io::Result<()> {
    let changed = |why: String| Error::other(changed_while_labelled(&why));
    let now = file.metadata()?;
    if !same_file(&now, &std::fs::metadata(path)?) {
        return Err(changed("another file was put in its place".into()));
    }
    let len = read.len();
    if now.len() != len {
        return Err(changed(format!(
            "{} bytes now, {} read: another process {} it",
            now.len(),
            len,
            if now.len() > len {
                "appended to"
            } else {
                "cut"
            }
        )));
    }
    let mut reader = file;
    reader.rewind()?;
    let mut again = Digest::default();
    let mut buf = vec![0u8; buffer.clamp(1, CHECK_BLOCK)];
    let hashes = read.hashes();
    let mut checked = 0;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        again.add(&buf[..n]);
        if again.len() > len {
            break;
        }
        // Each block compared as soon as it is whole: the first that
        // differs is named without reading the rest.
        while checked < again.blocks.len() {
            if hashes.get(checked) != Some(&again.blocks[checked]) {
                return Err(changed(format!(
                    "its bytes from offset {} differ from what was read",
                    checked * CHECK_BLOCK
                )));
            }
            checked += 1;
        }
    }
    if again.len() != len {
        return Err(changed(format!("{} bytes now, {len} read", again.len())));
    }
    if again.hashes() != hashes {
        let at = again.blocks.len() * CHECK_BLOCK;
        return Err(changed(format!(
            "its bytes from offset {at} differ from what was read"
        )));
    }
    Ok(())
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

#[cfg(not(unix))]
fn same_file(_a: &std::fs::Metadata, _b: &std::fs::Metadata) -> bool {
    true
}

fn is_jsonl(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()) == Some("jsonl")
}

/// One JSONL line (with its line ending) with `labels` stored in it.
fn edit_line(line: &[u8], labels: &LabelMap) -> std::io::Result<Vec<u8>> {
    let line = std::str::from_utf8(line)
        .map_err(|_| Error::new(ErrorKind::InvalidData, "not valid UTF-8"))?;
    let (body, nl) = split_newline(line);
    let (bom, body) = split_bom(body);
    let edited = jsontext::set_member(body, "labels", &labels_json(labels, None))
        .map_err(|e| Error::new(ErrorKind::InvalidData, e))?;
    let mut out = Vec::with_capacity(bom.len() + edited.len() + nl.len());
    out.extend_from_slice(bom.as_bytes());
    out.extend_from_slice(edited.as_bytes());
    out.extend_from_slice(nl.as_bytes());
    Ok(out)
}

/// The text of a `.json` file (one transcript) with the update applied.
fn edit<L: std::borrow::Borrow<LabelMap>>(
    text: &str,
    updates: &[(Option<usize>, L)],
) -> std::io::Result<String> {
    let invalid = |e: jsontext::EditError| Error::new(ErrorKind::InvalidData, e);
    let Some(labels) = updates
        .iter()
        .find(|(l, _)| l.is_none())
        .map(|(_, labels)| labels.borrow())
    else {
        return Ok(text.to_string());
    };
    let (bom, body) = split_bom(text);
    let nl = if body.contains("\r\n") { "\r\n" } else { "\n" };
    let indent = jsontext::members(body)
        .ok()
        .and_then(|(m, _)| {
            m.first()
                .map(|m| jsontext::indentation_before(body, m.key_start).to_string())
        })
        .filter(|_| body.trim_start().starts_with('{') && body.contains('\n'));
    let json = labels_json_nl(labels, indent.as_deref(), nl);
    Ok(format!(
        "{bom}{}",
        jsontext::set_member_nl(body, "labels", &json, nl).map_err(invalid)?
    ))
}

fn split_bom(text: &str) -> (&str, &str) {
    match text.strip_prefix('\u{feff}') {
        Some(body) => (&text[..text.len() - body.len()], body),
        None => ("", text),
    }
}

fn split_newline(line: &str) -> (&str, &str) {
    let body = line.trim_end_matches(['\n', '\r']);
    (body, &line[body.len()..])
}

/// `{"mode": "label", …}`; one member per line when `indent` is given (the
/// indentation of the enclosing object's members), so that a PR diff shows
/// one changed line per changed label.
pub fn labels_json(labels: &LabelMap, indent: Option<&str>) -> String {
    labels_json_nl(labels, indent, "\n")
}

fn labels_json_nl(labels: &LabelMap, indent: Option<&str>, nl: &str) -> String {
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    if labels.is_empty() {
        return "{}".into();
    }
    match indent {
        None => {
            let parts: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{}: {}", q(k), q(v)))
                .collect();
            format!("{{{}}}", parts.join(", "))
        }
        Some(indent) => {
            let inner = if indent.is_empty() {
                "  ".to_string()
            } else {
                format!("{indent}{indent}")
            };
            let parts: Vec<String> = labels
                .iter()
                .map(|(k, v)| format!("{inner}{}: {}", q(k), q(v)))
                .collect();
            format!("{{{nl}{}{nl}{indent}}}", parts.join(&format!(",{nl}")))
        }
    }
}

/// Writes `bytes` to `path` through a temporary file in the same directory
/// and a rename, so that readers (and the watcher) never see a half-written
/// file. The temporary file is created exclusively under a random name, with
/// `path`'s permissions (and owner and group, or the write is refused).
pub fn atomic_write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut tmp = temp_beside(path)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    // On error the temporary file is removed when it drops.
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The temporary file of [`atomic_write`] and `--write`, empty, beside
/// `path`: created exclusively under a random name, with `path`'s
/// permissions, owner and group (or an error).
fn temp_beside(path: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let original = std::fs::metadata(path).ok();
    let mut builder = tempfile::Builder::new();
    let prefix = format!(".{name}.{TEMP_TAG}{}.", std::process::id());
    builder.prefix(&prefix).suffix(".tmp");
    if let Some(meta) = &original {
        builder.permissions(meta.permissions());
    }
    let tmp = builder.tempfile_in(dir)?;
    if let Some(meta) = &original {
        // The creation mode went through the umask: set it exactly.
        tmp.as_file().set_permissions(meta.permissions())?;
        keep_owner(tmp.as_file(), meta)?;
    }
    Ok(tmp)
}

#[cfg(unix)]
fn keep_owner(file: &std::fs::File, original: &std::fs::Metadata) -> std::io::Result<()> {
    use std::os::unix::fs::MetadataExt;
    let now = file.metadata()?;
    if now.uid() == original.uid() && now.gid() == original.gid() {
        return Ok(());
    }
    std::os::unix::fs::fchown(file, Some(original.uid()), Some(original.gid())).map_err(|_| {
        Error::new(
            ErrorKind::PermissionDenied,
            format!(
                "the file belongs to uid {} gid {}, which this user cannot give a new file: \
                 labels not written",
                original.uid(),
                original.gid()
            ),
        )
    })
}

#[cfg(not(unix))]
fn keep_owner(_file: &std::fs::File, _original: &std::fs::Metadata) -> std::io::Result<()> {
    Ok(())
}

/// The tag in toolgate's temporary file names: `.NAME.toolgate-PID.RANDOM.tmp`
/// (and `.NAME.toolgate-PID.tmp` from earlier versions).
const TEMP_TAG: &str = "toolgate-";

/// The process id in a name of toolgate's temporary-file naming.
fn temp_owner(name: &str) -> Option<u32> {
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let at = rest.rfind(TEMP_TAG)?;
    let after = &rest[at + TEMP_TAG.len()..];
    let pid = after.split('.').next()?;
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether the process that created a temporary file may still be writing it.
fn may_be_live(pid: u32, path: &Path) -> bool {
    if pid == std::process::id() {
        return true;
    }
    if cfg!(target_os = "linux") {
        return Path::new("/proc").join(pid.to_string()).exists();
    }
    // Elsewhere: a temporary file untouched for ten minutes is stale.
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_none_or(|age| age < std::time::Duration::from_secs(600))
}

/// Removes the temporary files a killed toolgate left in `dir` (regular files
/// of its own naming whose process is gone); returns what was removed.
pub fn clean_stale_temps(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(temp_owner) else {
            continue;
        };
        let path = entry.path();
        let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
        if regular && !may_be_live(pid, &path) && std::fs::remove_file(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::fs;

    /// Regression (s46-files): the open writers are scanned once for a
    /// batch, and a writer seen then was named in a refusal after it had
    /// closed the file: two `label --write` over one folder, one refused
    /// "open for writing by process N (toolgate)" for a file whose
    /// replacement N had only been staging. The writer is looked at again
    /// when it would refuse: one still writing refuses, one gone does not.
    #[cfg(target_os = "linux")]
    #[test]
    fn a_writer_that_closed_the_file_since_the_scan_refuses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.jsonl");
        fs::write(&path, "{\"output\": \"a\"}\n").unwrap();
        let mut holder = std::process::Command::new("sh")
            .args(["-c", "exec 3>>\"$1\"; exec sleep 30", "sh"])
            .arg(&path)
            .spawn()
            .unwrap();
        let fd3 = format!("/proc/{}/fd/3", holder.id());
        let start = std::time::Instant::now();
        while fs::read_link(&fd3).ok().as_deref() != Some(path.as_path()) {
            assert!(start.elapsed().as_secs() < 10, "the holder never opened it");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let writers = OpenWriters::scan();
        let labels = vec![("tag".to_string(), "no_call".to_string())];
        let updates = [(Some(1), labels)];
        let err = write_labels_guarded(&path, &updates, None, &writers).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ResourceBusy);
        assert!(
            err.to_string().starts_with(&format!(
                "the file is open for writing by process {} (sleep)",
                holder.id()
            )),
            "{err}"
        );
        holder.kill().unwrap();
        holder.wait().unwrap();
        let wrote = write_labels_guarded(&path, &updates, None, &writers).unwrap();
        assert_eq!(wrote, WriteOutcome::Written);
        assert_eq!(
            fs::read_to_string(&path).unwrap(),
            "{\"output\": \"a\", \"labels\": {\"tag\": \"no_call\"}}\n"
        );
    }

    /// `write_labels` with buffers of `buffer` bytes.
    fn write_buffered(
        path: &Path,
        updates: &[(Option<usize>, LabelMap)],
        expected: Option<Fingerprint>,
        buffer: usize,
    ) -> std::io::Result<WriteOutcome> {
        write_labels_buffered(
            path,
            updates,
            expected,
            &OpenWriters::default(),
            &mut |_| {},
            buffer,
        )
    }

    /// Regression (s47-files): `--write` read a whole JSONL file into
    /// memory (twice over: the bytes and the new text), so a multi-GB
    /// transcript file needed as much memory again. It is streamed now
    /// through buffers of a few bytes here: lines longer than the buffer,
    /// updated or not, at the start, in the middle and last (without a
    /// `\n`), a BOM, CRLF, and lines that are not JSON or not UTF-8, which
    /// are copied byte for byte (a non-UTF-8 line no longer stops the
    /// labels of the others: the whole file had to be UTF-8 before).
    #[test]
    fn a_jsonl_file_is_streamed_through_small_buffers_byte_for_byte() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("t.jsonl");
        let mut text =
            b"\xef\xbb\xbf{\"output\": \"first line, longer than the buffer\"}\r\n".to_vec();
        text.extend_from_slice(b"not json at all, kept\n");
        text.extend_from_slice(b"{\"output\": \"caf\xe9\"}\n");
        text.extend_from_slice(b"\n");
        text.extend_from_slice(b"{\"output\": \"b\", \"labels\": {\"x\": \"y\"}}\n");
        text.extend_from_slice(b"{\"output\": \"untouched\"}\n");
        text.extend_from_slice(b"{\"output\": \"last, no newline\"}");
        let updates = [(Some(1), one()), (Some(5), one()), (Some(7), one())];
        for buffer in [1, 3, 7, 64, WRITE_BUFFER] {
            fs::write(&jsonl, &text).unwrap();
            let read = Fingerprint::of(&text);
            let wrote = write_buffered(&jsonl, &updates, Some(read), buffer).unwrap();
            assert_eq!(wrote, WriteOutcome::Written, "buffer {buffer}");
            let mut want = b"\xef\xbb\xbf{\"output\": \"first line, longer than the buffer\", \"labels\": {\"tag\": \"pass\"}}\r\n".to_vec();
            want.extend_from_slice(b"not json at all, kept\n");
            want.extend_from_slice(b"{\"output\": \"caf\xe9\"}\n");
            want.extend_from_slice(b"\n");
            want.extend_from_slice(b"{\"output\": \"b\", \"labels\": {\"tag\": \"pass\"}}\n");
            want.extend_from_slice(b"{\"output\": \"untouched\"}\n");
            want.extend_from_slice(
                b"{\"output\": \"last, no newline\", \"labels\": {\"tag\": \"pass\"}}",
            );
            assert_eq!(
                String::from_utf8_lossy(&fs::read(&jsonl).unwrap()),
                String::from_utf8_lossy(&want),
                "buffer {buffer}"
            );
            assert_eq!(fs::read(&jsonl).unwrap(), want, "buffer {buffer}");
            // Again: the labels are there, nothing is written.
            let again = Fingerprint::of(&want);
            let wrote = write_buffered(&jsonl, &updates, Some(again), buffer).unwrap();
            assert_eq!(wrote, WriteOutcome::Unchanged, "buffer {buffer}");
            assert_eq!(temps_left(dir.path()), 0);
        }
    }

    /// The check before the rename compares what was read block by block
    /// (a hash per 64 KiB, nothing held): a byte changed in the second
    /// block is named by that block's offset, and the file is left alone.
    #[test]
    fn a_change_past_the_first_block_is_caught_before_the_rename() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("t.jsonl");
        let filler = format!("{{\"output\": \"{}\"}}\n", "x".repeat(1000));
        let mut text = String::from("{\"output\": \"a\"}\n");
        while text.len() < 3 * CHECK_BLOCK {
            text.push_str(&filler);
        }
        fs::write(&jsonl, &text).unwrap();
        let at = CHECK_BLOCK + 10;
        let err = write_labels_staged(&jsonl, &[(Some(1), one())], None, &mut |stage| {
            if stage == Stage::Staged {
                let mut f = fs::OpenOptions::new().write(true).open(&jsonl).unwrap();
                f.seek(std::io::SeekFrom::Start(at as u64)).unwrap();
                f.write_all(b"y").unwrap();
            }
        })
        .unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "its bytes from offset {CHECK_BLOCK} differ from what was read"
            )),
            "{err}"
        );
        let mut changed = text.into_bytes();
        changed[at] = b'y';
        assert_eq!(fs::read(&jsonl).unwrap(), changed);
        assert_eq!(temps_left(dir.path()), 0);
    }

    /// A file changed after the batch read it says so, not that a line it
    /// would label is no longer JSON.
    #[test]
    fn a_changed_file_is_named_changed_before_a_line_that_cannot_be_labelled() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("t.jsonl");
        let read = Fingerprint::of(b"{\"output\": \"a\"}\n");
        fs::write(&jsonl, "not json any more\n").unwrap();
        let err = write_labels_checked(&jsonl, &[(Some(1), one())], Some(read)).unwrap_err();
        assert_eq!(err.to_string(), CHANGED_SINCE_READ);
        let err = write_labels_checked(&jsonl, &[(Some(1), one())], None).unwrap_err();
        assert!(err.to_string().starts_with("line 1: "), "{err}");
        assert_eq!(fs::read_to_string(&jsonl).unwrap(), "not json any more\n");
        assert_eq!(temps_left(dir.path()), 0);
    }

    /// Regression (s47-files): a file with another hard link was replaced
    /// by a rename, which gave only the name written the new labels: the
    /// other name silently kept the old file. Refused now, naming the
    /// count; both names are left as they were.
    #[cfg(unix)]
    #[test]
    fn a_file_with_another_hard_link_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["t.jsonl", "t.json"] {
            let path = dir.path().join(name);
            let other = dir.path().join(format!("other-{name}"));
            let text = if name.ends_with(".jsonl") {
                "{\"output\": \"a\"}\n"
            } else {
                "{\"output\": \"a\"}"
            };
            fs::write(&path, text).unwrap();
            fs::hard_link(&path, &other).unwrap();
            let line = name.ends_with(".jsonl").then_some(1);
            let err = write_labels(&path, &[(line, one())]).unwrap_err();
            assert_eq!(
                err.to_string(),
                "the file has 2 hard links: not replaced, since its other name(s) would keep \
                 the old labels; label a copy, or remove the other link(s)"
            );
            // Through a symlink too: its target is what counts.
            let link = dir.path().join(format!("link-{name}"));
            std::os::unix::fs::symlink(&path, &link).unwrap();
            let err = write_labels(&link, &[(line, one())]).unwrap_err();
            assert!(err.to_string().contains("2 hard links"), "{err}");
            assert_eq!(fs::read_to_string(&path).unwrap(), text);
            assert_eq!(fs::read_to_string(&other).unwrap(), text);
            fs::remove_file(&other).unwrap();
            write_labels(&link, &[(line, one())]).unwrap();
            assert!(fs::read_to_string(&path).unwrap().contains("labels"));
            assert!(
                fs::symlink_metadata(&link)
                    .unwrap()
                    .file_type()
                    .is_symlink()
            );
        }
        assert_eq!(temps_left(dir.path()), 0);
    }

    #[test]
    fn write_labels_changes_only_the_labels_member() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("t.json");
        fs::write(
            &json,
            "{\n  \"output\": \"hi\",\n  \"big\": 18446744073709551616\n}\n",
        )
        .unwrap();
        let labels = vec![
            ("tag".to_string(), "no_call".to_string()),
            ("json".into(), "pass".into()),
        ];
        write_labels(&json, &[(None, labels.clone())]).unwrap();
        assert_eq!(
            fs::read_to_string(&json).unwrap(),
            "{\n  \"output\": \"hi\",\n  \"big\": 18446744073709551616,\n  \"labels\": {\n    \"tag\": \"no_call\",\n    \"json\": \"pass\"\n  }\n}\n"
        );
        let jsonl = dir.path().join("t.jsonl");
        fs::write(
            &jsonl,
            "{\"output\": \"a\"}\n{\"output\": \"b\", \"labels\": {\"tag\": \"pass\"}}\n",
        )
        .unwrap();
        write_labels(&jsonl, &[(Some(2), labels)]).unwrap();
        assert_eq!(
            fs::read_to_string(&jsonl).unwrap(),
            "{\"output\": \"a\"}\n{\"output\": \"b\", \"labels\": {\"tag\": \"no_call\", \"json\": \"pass\"}}\n"
        );
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
    }

    fn one() -> LabelMap {
        vec![("tag".to_string(), "pass".to_string())]
    }

    #[test]
    fn crlf_files_keep_their_line_endings() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("t.json");
        fs::write(&json, "{\r\n  \"output\": \"hi\"\r\n}\r\n").unwrap();
        write_labels(&json, &[(None, one())]).unwrap();
        assert_eq!(
            fs::read_to_string(&json).unwrap(),
            "{\r\n  \"output\": \"hi\",\r\n  \"labels\": {\r\n    \"tag\": \"pass\"\r\n  }\r\n}\r\n"
        );
    }

    #[test]
    fn a_bom_on_a_jsonl_file_is_kept_and_line_one_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("t.jsonl");
        fs::write(&jsonl, "\u{feff}{\"output\": \"a\"}\n").unwrap();
        write_labels(&jsonl, &[(Some(1), one())]).unwrap();
        assert_eq!(
            fs::read_to_string(&jsonl).unwrap(),
            "\u{feff}{\"output\": \"a\", \"labels\": {\"tag\": \"pass\"}}\n"
        );
    }

    #[test]
    fn a_file_changed_since_it_was_read_is_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("t.jsonl");
        fs::write(&jsonl, "{\"output\": \"a\"}\n").unwrap();
        let read = Fingerprint::of(&fs::read(&jsonl).unwrap());
        fs::write(&jsonl, "{\"output\": \"new\"}\n{\"output\": \"a\"}\n").unwrap();
        let err = write_labels_checked(&jsonl, &[(Some(1), one())], Some(read)).unwrap_err();
        assert!(
            err.to_string().contains("changed since it was read"),
            "{err}"
        );
        assert_eq!(
            fs::read_to_string(&jsonl).unwrap(),
            "{\"output\": \"new\"}\n{\"output\": \"a\"}\n"
        );
        let now = Fingerprint::of(&fs::read(&jsonl).unwrap());
        assert_eq!(
            write_labels_checked(&jsonl, &[(Some(2), one())], Some(now)).unwrap(),
            WriteOutcome::Written
        );
        assert_eq!(
            write_labels_checked(&jsonl, &[(Some(2), one())], None).unwrap(),
            WriteOutcome::Unchanged
        );
    }

    fn temps_left(dir: &Path) -> usize {
        fs::read_dir(dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count()
    }

    /// A line another process appends between the read and the rename (the
    /// temporary file is written then) survives: the file is left as it is,
    /// the error says why, and the next run labels it whole.
    #[test]
    fn a_line_appended_while_labelling_survives() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("t.jsonl");
        let text = "{\"output\": \"a\"}\n{\"output\": \"b\"}\n";
        fs::write(&jsonl, text).unwrap();
        let read = Fingerprint::of(text.as_bytes());
        let late = "{\"output\": \"late\"}\n";
        let mut stages = Vec::new();
        let err = write_labels_staged(&jsonl, &[(Some(1), one())], Some(read), &mut |stage| {
            stages.push(stage);
            if stage == Stage::Staged {
                let mut f = fs::OpenOptions::new().append(true).open(&jsonl).unwrap();
                f.write_all(late.as_bytes()).unwrap();
            }
        })
        .unwrap_err();
        assert_eq!(stages, [Stage::Staged], "never got to the rename");
        let msg = err.to_string();
        assert!(
            msg.contains("changed while it was being labelled")
                && msg.contains("another process appended to it")
                && msg.contains(&format!(
                    "{} bytes now, {} read",
                    text.len() + late.len(),
                    text.len()
                )),
            "{msg}"
        );
        assert_eq!(fs::read_to_string(&jsonl).unwrap(), format!("{text}{late}"));
        assert_eq!(temps_left(dir.path()), 0);
        let now = Fingerprint::of(&fs::read(&jsonl).unwrap());
        assert_eq!(
            write_labels_checked(&jsonl, &[(Some(3), one())], Some(now)).unwrap(),
            WriteOutcome::Written
        );
        assert_eq!(
            fs::read_to_string(&jsonl).unwrap(),
            format!("{text}{{\"output\": \"late\", \"labels\": {{\"tag\": \"pass\"}}}}\n")
        );
    }

    /// The final check reads the bytes when the length is the same (a line
    /// rewritten in place), and notices another file put at the path.
    #[test]
    fn a_file_rewritten_or_replaced_while_labelling_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("t.jsonl");
        let text = "{\"output\": \"a\"}\n";
        fs::write(&jsonl, text).unwrap();
        let err = write_labels_staged(&jsonl, &[(Some(1), one())], None, &mut |stage| {
            if stage == Stage::Staged {
                let mut f = fs::OpenOptions::new().write(true).open(&jsonl).unwrap();
                f.write_all(b"{\"output\": \"z\"}\n").unwrap();
            }
        })
        .unwrap_err();
        assert!(
            err.to_string().contains("bytes from offset 0 differ"),
            "{err}"
        );
        assert_eq!(fs::read_to_string(&jsonl).unwrap(), "{\"output\": \"z\"}\n");
        fs::write(&jsonl, text).unwrap();
        let other = dir.path().join("other.jsonl");
        let err = write_labels_staged(&jsonl, &[(Some(1), one())], None, &mut |stage| {
            if stage == Stage::Staged {
                fs::write(&other, text).unwrap();
                fs::rename(&other, &jsonl).unwrap();
            }
        })
        .unwrap_err();
        assert!(err.to_string().contains("another file was put"), "{err}");
        assert_eq!(fs::read_to_string(&jsonl).unwrap(), text);
        assert_eq!(temps_left(dir.path()), 0);
    }

    /// From the final check through the rename the file is locked: an
    /// appender that takes the lock (the proxy's recorder) waits, and then
    /// finds another file at the path.
    #[test]
    fn the_file_is_locked_from_the_check_through_the_rename() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("t.jsonl");
        fs::write(&jsonl, "{\"output\": \"a\"}\n").unwrap();
        let appender = fs::OpenOptions::new().append(true).open(&jsonl).unwrap();
        let mut checked = false;
        let written = write_labels_staged(&jsonl, &[(Some(1), one())], None, &mut |stage| {
            if stage == Stage::Checked {
                checked = true;
                assert!(matches!(
                    appender.try_lock(),
                    Err(std::fs::TryLockError::WouldBlock)
                ));
            }
        })
        .unwrap();
        assert!(checked);
        assert_eq!(written, WriteOutcome::Written);
        assert!(lock_exclusive(&appender).unwrap());
        assert!(!same_file(
            &appender.metadata().unwrap(),
            &fs::metadata(&jsonl).unwrap()
        ));
    }

    #[cfg(unix)]
    #[test]
    fn symlinks_are_written_through_and_modes_kept() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("real.json");
        fs::write(&target, "{\"output\": \"a\"}").unwrap();
        fs::set_permissions(&target, fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_labels(&link, &[(None, one())]).unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::read_to_string(&target).unwrap(),
            "{\"output\": \"a\", \"labels\": {\"tag\": \"pass\"}}"
        );
        let mode = fs::metadata(&target).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o640);
    }

    #[cfg(unix)]
    #[test]
    fn the_owner_and_group_are_kept() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("t.json");
        fs::write(&json, "{\"output\": \"a\"}").unwrap();
        // Giving a file away needs root; elsewhere the owner is ours anyway.
        if std::os::unix::fs::chown(&json, Some(12345), Some(12346)).is_err() {
            eprintln!("skipped: cannot chown (not root)");
            return;
        }
        write_labels(&json, &[(None, one())]).unwrap();
        let meta = fs::metadata(&json).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (12345, 12346));
        assert!(fs::read_to_string(&json).unwrap().contains("labels"));
    }

    #[cfg(unix)]
    #[test]
    fn read_only_files_are_refused_and_left_alone() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("t.json");
        fs::write(&json, "{\"output\": \"a\"}").unwrap();
        fs::set_permissions(&json, fs::Permissions::from_mode(0o444)).unwrap();
        let err = write_labels(&json, &[(None, one())]).unwrap_err();
        assert!(err.to_string().contains("read-only"), "{err}");
        assert_eq!(fs::read_to_string(&json).unwrap(), "{\"output\": \"a\"}");
        let mode = fs::metadata(&json).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, 0o444);
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_symlink_at_the_old_temp_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let json = dir.path().join("t.json");
        fs::write(&json, "{\"output\": \"a\"}").unwrap();
        let victim = dir.path().join("victim");
        fs::write(&victim, "keep").unwrap();
        // The name earlier versions used, predictable from the pid.
        let planted = dir
            .path()
            .join(format!(".t.json.toolgate-{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        write_labels(&json, &[(None, one())]).unwrap();
        assert_eq!(fs::read_to_string(&victim).unwrap(), "keep");
        assert!(fs::read_to_string(&json).unwrap().contains("labels"));
    }

    #[test]
    fn stale_temp_files_of_dead_runs_are_removed() {
        let dir = tempfile::tempdir().unwrap();
        // Beyond Linux's pid_max (2^22): never a live process.
        let stale = dir.path().join(".t.json.toolgate-999999999.abc123.tmp");
        let old_style = dir.path().join(".t.json.toolgate-999999998.tmp");
        let mine = dir
            .path()
            .join(format!(".t.json.toolgate-{}.x.tmp", std::process::id()));
        let other = dir.path().join(".t.json.somethingelse.tmp");
        for p in [&stale, &old_style, &mine, &other] {
            fs::write(p, "x").unwrap();
        }
        let mut removed = clean_stale_temps(dir.path());
        removed.sort();
        if cfg!(target_os = "linux") {
            assert_eq!(removed, vec![old_style.clone(), stale.clone()]);
        }
        assert!(mine.exists() && other.exists());
        assert_eq!(temp_owner(".a.json.toolgate-12.Xy9.tmp"), Some(12));
        assert_eq!(temp_owner(".a.json.toolgate-.tmp"), None);
        assert_eq!(temp_owner("a.json"), None);
    }
}
