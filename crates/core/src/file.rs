//! Reading one transcript file within limits, and the error a file that
//! cannot be loaded gives: what the loader ([`crate::load`]) and the
//! importers' companion files ([`crate::import`]) both read through.

use std::fmt;
use std::hash::Hasher;
use std::path::{Path, PathBuf};

/// A file (or JSONL line) that could not be loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    /// The file.
    pub path: PathBuf,
    /// 1-based line for `.jsonl` files.
    pub line: Option<usize>,
    /// Why.
    pub reason: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.path.display(), line, self.reason),
            None => write!(f, "{}: {}", self.path.display(), self.reason),
        }
    }
}

impl std::error::Error for LoadError {}

/// Whether `path` names a transcript file (`.json`, `.jsonl`, or `.sse`
/// for a captured stream).
pub fn is_transcript_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("json") | Some("jsonl") | Some("sse")
    )
}

/// The compression a file name ends with when what it compresses is a
/// transcript file (`x.jsonl.gz`, `x.json.zst`, `x.sse.xz`): such a file is
/// not read, and a directory walk names it instead of passing it over in
/// silence ([`crate::load::collect_files`]). Its name and a command that
/// undoes it.
pub fn compressed_name(path: &Path) -> Option<(&'static str, &'static str)> {
    let compression = compression_of_extension(path.extension()?.to_str()?)?;
    is_transcript_file(Path::new(path.file_stem()?)).then_some(compression)
}

/// A compression by its usual file extension: its name and a command that
/// undoes it.
fn compression_of_extension(ext: &str) -> Option<(&'static str, &'static str)> {
    Some(match ext {
        "gz" => ("gzip", "gunzip -k"),
        "zst" => ("zstd", "zstd -d"),
        "bz2" => ("bzip2", "bunzip2 -k"),
        "xz" => ("xz", "unxz -k"),
        _ => return None,
    })
}

/// Why a compressed file is not read.
pub(crate) fn compressed_reason((name, undo): (&str, &str)) -> String {
    format!("{name}-compressed: not read (decompress it first, e.g. `{undo}`)")
}

/// Bytes [`not_text`] looks at.
pub const SNIFF_BYTES: usize = 6;

/// Why a file whose first bytes are `head` is not read, when they show it
/// is no UTF-8 text at all: UTF-16 or UTF-32 (after its byte-order mark,
/// or without one: JSON starts with an ASCII character, so a NUL beside it
/// is another encoding's; PowerShell's `>` writes UTF-16) or compressed
/// (gzip, zstd, bzip2, xz, zip). Read as UTF-8 such a file gave an error
/// on every line that did not say what it was, or none (a JSONL line of
/// UTF-16 is valid UTF-8 with NULs). `None` for anything else (UTF-8 with
/// or without its own BOM). Looks at the first [`SNIFF_BYTES`] at most.
pub fn not_text(head: &[u8]) -> Option<String> {
    let encoding = |name: &str, how: &str| {
        Some(format!(
            "{name} text ({how}), not UTF-8: not read (toolgate reads UTF-8; convert it \
             first, e.g. `iconv -f {name} -t UTF-8`; PowerShell's `>` writes UTF-16)"
        ))
    };
    let compressed = |ext: &str| compression_of_extension(ext).map(compressed_reason);
    match head {
        [0xff, 0xfe, 0, 0, ..] => encoding("UTF-32LE", "byte-order mark FF FE 00 00"),
        [0, 0, 0xfe, 0xff, ..] => encoding("UTF-32BE", "byte-order mark 00 00 FE FF"),
        [0xff, 0xfe, ..] => encoding("UTF-16LE", "byte-order mark FF FE"),
        [0xfe, 0xff, ..] => encoding("UTF-16BE", "byte-order mark FE FF"),
        [a, 0, 0, 0, ..] if *a != 0 && a.is_ascii() => encoding("UTF-32LE", "no byte-order mark"),
        [0, 0, 0, a, ..] if *a != 0 && a.is_ascii() => encoding("UTF-32BE", "no byte-order mark"),
        [a, 0, ..] if *a != 0 && a.is_ascii() => encoding("UTF-16LE", "no byte-order mark"),
        [0, a, ..] if *a != 0 && a.is_ascii() => encoding("UTF-16BE", "no byte-order mark"),
        [0x1f, 0x8b, ..] => compressed("gz"),
        [0x28, 0xb5, 0x2f, 0xfd, ..] => compressed("zst"),
        [b'B', b'Z', b'h', b'1'..=b'9', ..] => compressed("bz2"),
        [0xfd, b'7', b'z', b'X', b'Z', 0, ..] => compressed("xz"),
        [b'P', b'K', 3, 4, ..] => Some(
            "a zip archive: not read (extract the transcripts from it first, e.g. `unzip`)"
                .to_string(),
        ),
        _ => None,
    }
}

/// The default of [`LoadOptions::max_file_size`]: 256 MiB.
pub const DEFAULT_MAX_FILE_SIZE: u64 = 256 << 20;

/// How transcript files are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LoadOptions {
    /// Files larger than this many bytes are reported, not read.
    pub max_file_size: u64,
    /// Whether streamed JSONL files are fingerprinted as they are read
    /// ([`crate::load::JsonlBlocks::fingerprint`]); only writing labels back needs it.
    pub fingerprint: bool,
}

impl Default for LoadOptions {
    fn default() -> LoadOptions {
        LoadOptions {
            max_file_size: DEFAULT_MAX_FILE_SIZE,
            fingerprint: true,
        }
    }
}

/// What a path is when it is not a regular file.
pub(crate) fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
    }
    "not a regular file"
}

/// Opens `path` for reading without waiting on what it names: with
/// `O_NONBLOCK`, opening a FIFO put at the path after it was checked
/// returns at once instead of waiting for a writer (for good, if none
/// comes), and with `O_NOCTTY` a terminal never becomes the controlling
/// one. The caller then checks the handle's own type ([`File::metadata`] is
/// an `fstat`) and reads only a regular file, on which `O_NONBLOCK` has no
/// effect, so it is left set.
///
/// [`File::metadata`]: std::fs::File::metadata
pub(crate) fn open_no_wait(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    }
    options.open(path)
}

/// Opens a transcript file for reading: regular files only (a FIFO would
/// block, a device may never end), checked before and after opening. The
/// error says why the file is not read.
pub fn open_transcript_file(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), String> {
    // Follows symlinks: a link to a regular file is read, a link to
    // /dev/zero is not. Checked before opening: a device is not opened.
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!("{}: only regular files are read", kind_of(&meta)));
    }
    // The path may have been swapped between the two looks.
    open_regular(path)
}

/// Opens `path` with [`open_no_wait`] and keeps it only if the handle is a
/// regular file: what the path names when it is opened decides, whatever a
/// check before found there (a FIFO swapped in meanwhile is refused at
/// once). The error says why the file is not read.
pub(crate) fn open_regular(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), String> {
    let file = open_no_wait(path).map_err(|e| e.to_string())?;
    let meta = file.metadata().map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err(format!("{}: only regular files are read", kind_of(&meta)));
    }
    Ok((file, meta))
}

/// Why a file (or JSONL line) of `size` bytes over `limit` is not read.
pub(crate) fn over_limit(size: impl fmt::Display, limit: u64) -> String {
    format!("{size} bytes, over the {limit}-byte limit (--max-file-size): not read")
}

/// Reads a transcript file: regular files only (a FIFO would block, a
/// device may never end), at most `opts.max_file_size` bytes. The error says
/// why the file was not read.
pub fn read_transcript_file(path: &Path, opts: &LoadOptions) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let limit = opts.max_file_size;
    let too_big = |size: &str| over_limit(size, limit);
    let (file, meta) = open_transcript_file(path)?;
    if meta.len() > limit {
        return Err(too_big(&meta.len().to_string()));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    if bytes.len() as u64 > limit {
        return Err(too_big("more than"));
    }
    Ok(bytes)
}

/// [`read_transcript_file`] as UTF-8 text, with the [`Fingerprint`] of what
/// was read. The error says why the file was not read.
pub fn read_transcript_text(
    path: &Path,
    opts: &LoadOptions,
) -> Result<(String, Fingerprint), String> {
    let bytes = read_transcript_file(path, opts)?;
    if let Some(why) = not_text(&bytes[..bytes.len().min(SNIFF_BYTES)]) {
        return Err(why);
    }
    utf8_text(bytes)
}

/// The bytes of a transcript file as UTF-8 text, with the [`Fingerprint`]
/// of what was read.
pub(crate) fn utf8_text(bytes: Vec<u8>) -> Result<(String, Fingerprint), String> {
    let fingerprint = Fingerprint::of(&bytes);
    let text = String::from_utf8(bytes).map_err(|e| {
        format!(
            "not valid UTF-8 (first bad byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })?;
    Ok((text, fingerprint))
}

/// Text arriving in pieces (`toolgate parse --stream`'s reads): the
/// longest prefix of `bytes` that is valid UTF-8, read once, and how many
/// bytes after it are an incomplete sequence still waiting for its last
/// bytes; `Err(offset)` of the first byte that cannot be UTF-8 whatever
/// follows.
pub fn utf8_prefix(bytes: &[u8]) -> Result<(&str, usize), usize> {
    // Nearly always all of it is valid: the SIMD check says so at once.
    if let Ok(text) = simdutf8::basic::from_utf8(bytes) {
        return Ok((text, 0));
    }
    let Some(chunk) = bytes.utf8_chunks().next() else {
        return Ok(("", 0));
    };
    let (valid, invalid) = (chunk.valid(), chunk.invalid());
    if invalid.is_empty() {
        // No invalid bytes: the first chunk is the whole input.
        return Ok((valid, 0));
    }
    let at_end = valid.len() + invalid.len() == bytes.len();
    // At most 3 bytes: is it the start of a sequence, or broken already?
    let incomplete = std::str::from_utf8(invalid).is_err_and(|e| e.error_len().is_none());
    if at_end && incomplete {
        Ok((valid, invalid.len()))
    } else {
        Err(valid.len())
    }
}

/// The identity of a file's content as it was read: its length and a hash of
/// its bytes (stable within one process).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fingerprint {
    len: u64,
    hash: u64,
}

impl Fingerprint {
    /// The fingerprint of `bytes`.
    pub fn of(bytes: &[u8]) -> Fingerprint {
        let mut f = FingerprintWriter::default();
        f.add(bytes);
        f.finish()
    }
}

/// A [`Fingerprint`] computed over a file read in pieces: the same value as
/// [`Fingerprint::of`] of the pieces joined.
#[derive(Clone, Debug, Default)]
pub struct FingerprintWriter {
    len: u64,
    hash: std::collections::hash_map::DefaultHasher,
}

impl FingerprintWriter {
    /// Adds the next piece.
    pub fn add(&mut self, bytes: &[u8]) {
        self.len += bytes.len() as u64;
        // SipHash is a byte stream: pieces hash as their concatenation.
        self.hash.write(bytes);
    }

    /// The fingerprint of everything added.
    pub fn finish(&self) -> Fingerprint {
        Fingerprint {
            len: self.len,
            hash: self.hash.finish(),
        }
    }
}

#[cfg(test)]
mod fingerprint_tests {
    use super::{Fingerprint, FingerprintWriter};

    #[test]
    fn pieces_fingerprint_as_their_concatenation() {
        let text = b"line one\nline two\n{\"x\": 1}\n";
        for cut in 0..text.len() {
            let mut w = FingerprintWriter::default();
            w.add(&text[..cut]);
            w.add(&text[cut..]);
            assert_eq!(w.finish(), Fingerprint::of(text));
        }
        assert_ne!(Fingerprint::of(b"ab"), Fingerprint::of(b"ba"));
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// Regression (probe44b, item 4): a FIFO swapped in after the type
    /// check blocked the open until a writer came, hanging the inspector's
    /// loaders for good. The open itself must return at once and refuse it
    /// (`open_regular` is the open after the check, for reads and `--write`).
    #[cfg(unix)]
    #[test]
    fn a_fifo_at_the_path_when_it_is_opened_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("x.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (tx, rx) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || tx.send(open_regular(&path).map(|_| ())));
        let got = rx
            .recv_timeout(std::time::Duration::from_secs(5))
            .expect("opening a FIFO waited for a writer");
        assert_eq!(got, Err("a FIFO: only regular files are read".to_string()));
        // And through the write path, which names the error's cause too.
        let err = crate::write::write_labels(&fifo, &[]).unwrap_err();
        assert!(err.to_string().contains("FIFO"), "{err}");
    }

    #[test]
    fn utf8_prefix_waits_for_a_split_sequence_and_names_a_bad_byte() {
        assert_eq!(utf8_prefix(b""), Ok(("", 0)));
        assert_eq!(utf8_prefix("ab é".as_bytes()), Ok(("ab é", 0)));
        let euro = "€".as_bytes();
        assert_eq!(utf8_prefix(&[b'a', euro[0], euro[1]]), Ok(("a", 2)));
        assert_eq!(utf8_prefix(&[b'a', euro[0]]), Ok(("a", 1)));
        assert_eq!(utf8_prefix(b"caf\xe9 x"), Err(3));
        assert_eq!(utf8_prefix(b"ab\xff"), Err(2));
        assert_eq!(utf8_prefix(b"ab\xf0\x80"), Err(2));
    }
}
