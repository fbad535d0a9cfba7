//! `toolgate import FILE… --out DIR [--from KIND]`: captures in other
//! stacks' formats → toolgate transcripts, one JSONL file per input file.
//!
//! The conversion is the library's ([`toolgate_core::import`]); the loader
//! reads the same formats directly, so `import` is for keeping a corpus in
//! one format, relabeling it, and sharing it. Companion files (Batch input,
//! BFCL questions and possible answers, a stream's `STEM.request.json`) are
//! joined to the files that need them, whether given on the command line or
//! found beside them. Every unreadable file or line is reported with path,
//! line and reason, and every output file that cannot be written with its
//! input and name; the batch goes on, and the exit code is 2.

use crate::{EXIT_BAD, EXIT_OK};
use anyhow::{Context, Result, bail};
use clap::Args;
use std::collections::HashSet;
use std::path::PathBuf;
use toolgate_core::convert;
use toolgate_core::import::{self, Companions, Kind};
use toolgate_core::load::{self, LoadError};
use toolgate_core::sanitize;

/// `toolgate import`.
#[derive(Args, Debug)]
#[command(
    after_help = "Formats (--from): toolgate, openai-chat (request/response pairs, \
bare responses, SSE streams), openai-batch (input + output JSONL, joined on custom_id), \
openai-responses (responses and their streams), anthropic (messages and streams), otel (OTLP JSON GenAI spans), bfcl \
(result and score files, with question and possible-answer files). Without --from each \
file's format is detected. Only regular files are read (a FIFO or a device is refused), \
one at a time, each within --max-file-size.\n\nExit codes: 0 ok; 2 when a file or line could \
not be read or an output file could not be written (every other one is still written)."
)]
pub struct ImportArgs {
    /// Capture files (or directories, walked for .json/.jsonl/.sse).
    #[arg(value_name = "FILE", required = true)]
    files: Vec<PathBuf>,
    /// The directory to write one `.jsonl` transcript file per input file into.
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
    /// The format of every file (default: detected per file).
    #[arg(long, value_name = "KIND")]
    from: Option<String>,
    /// Largest file read, in bytes (suffixes K, M, G: powers of 1024); a
    /// larger file is reported, not read.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = crate::parse_size)]
    max_file_size: u64,
    /// Replace files an earlier import wrote into --out (without it, an
    /// existing file is left as it is and reported: exit 2).
    #[arg(long)]
    force: bool,
}

/// One input file, classified. Its text is not kept: files are read again
/// one at a time when converted, so memory holds one input at once.
struct Input {
    path: PathBuf,
    kind: Option<Kind>,
}

/// One input and its text, while it is converted.
struct Read {
    path: PathBuf,
    text: String,
}

/// Reads one input as the loader does: regular files only (a FIFO, a
/// device or a directory is refused before it is opened for reading),
/// within the size limit, UTF-8.
fn read_input(path: &std::path::Path, opts: &load::LoadOptions) -> Result<String, LoadError> {
    load::read_transcript_text(path, opts)
        .map(|(text, _)| text)
        .map_err(|reason| LoadError {
            path: path.to_path_buf(),
            line: None,
            reason,
        })
}

fn shown(path: &std::path::Path) -> String {
    sanitize::one_line(&path.display().to_string()).into_owned()
}

fn report(e: &LoadError) {
    eprintln!("toolgate: {}", sanitize::one_line(&e.to_string()));
}

/// The input files once each, and none under `out`: a file given twice
/// (any spelling, a symlink: the same canonical path) is imported once, and
/// what an earlier import wrote into `out` is not read back as input (a
/// second run would import its own output as `STEM-2.jsonl`). Both are
/// said on stderr. A file under `out` that a directory walk found is
/// passed over (nothing is lost: it is an import's output); one the user
/// `named` is an input that cannot be imported, reported as such and
/// counted in the second value (exit 2), not skipped with an exit 0 that
/// says it was.
fn distinct_inputs(
    files: Vec<PathBuf>,
    named: &[PathBuf],
    out_arg: &std::path::Path,
) -> (Vec<PathBuf>, usize) {
    let out = std::fs::canonicalize(out_arg).ok();
    let mut seen = HashSet::new();
    let mut kept = Vec::with_capacity(files.len());
    let mut under_out = 0usize;
    let mut refused = 0usize;
    for path in files {
        // A path that cannot be canonicalized is kept: reading it reports why.
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if out.as_deref().is_some_and(|out| real.starts_with(out)) {
            if named.contains(&path) {
                refused += 1;
                eprintln!(
                    "toolgate: {}: not imported: it is under --out {} (the output directory is never an input: move the file or choose another --out)",
                    shown(&path),
                    shown(out_arg)
                );
            } else {
                under_out += 1;
            }
            continue;
        }
        if !seen.insert(real) {
            eprintln!(
                "toolgate: {}: given more than once: imported once",
                shown(&path)
            );
            continue;
        }
        kept.push(path);
    }
    if under_out > 0 {
        eprintln!(
            "toolgate: {under_out} file(s) under --out {} not read (the output directory is never an input)",
            shown(out_arg)
        );
    }
    (kept, refused)
}

/// The names in `out` of numbered outputs (`STEM-N.jsonl`, N ≥ 2) this
/// run did not write beside a `STEM.jsonl` it did: what an earlier run
/// wrote for a second input of that stem. `--force` replaces only what
/// this run writes and never deletes, so such a file is only named.
fn stale_numbered(out: &std::path::Path, written: &HashSet<String>) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(out) else {
        return Vec::new();
    };
    let mut stale: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| {
            !written.contains(name)
                && name
                    .strip_suffix(".jsonl")
                    .and_then(|s| s.rsplit_once('-'))
                    .is_some_and(|(stem, n)| {
                        n.bytes().all(|b| b.is_ascii_digit())
                            && !n.starts_with('0')
                            && n.parse::<u64>().is_ok_and(|n| n >= 2)
                            && written.contains(&format!("{stem}.jsonl"))
                    })
        })
        .collect();
    stale.sort();
    stale
}

/// Runs `toolgate import`.
pub fn run(args: ImportArgs) -> Result<u8> {
    let allowed = match &args.from {
        None => None,
        Some(name) => match import::from_name(name) {
            Some(kinds) => Some(kinds),
            None => {
                let names: Vec<&str> = import::FROM_NAMES.iter().map(|(n, _)| *n).collect();
                bail!(
                    "unknown --from `{}` (one of: {})",
                    sanitize::one_line(name),
                    names.join(", ")
                );
            }
        },
    };
    let (files, errors) = load::collect_files(&args.files);
    let mut bad = errors.len();
    for e in &errors {
        report(e);
    }
    let (files, under_out) = distinct_inputs(files, &args.files, &args.out);
    bad += under_out;
    let mut written: HashSet<String> = HashSet::new();

    let opts = load::LoadOptions {
        max_file_size: args.max_file_size,
        fingerprint: false,
    };
    // Companions given on the command line are joined from this first pass;
    // every other file's text is dropped until its turn below.
    let mut companions = Companions::default();
    let mut inputs = Vec::new();
    // A request file among the inputs is reported as an input, if at all.
    let named: HashSet<std::path::PathBuf> = files.iter().map(|p| load::real_path(p)).collect();
    for path in files {
        let text = match read_input(&path, &opts) {
            Ok(text) => text,
            Err(e) => {
                bad += 1;
                report(&e);
                continue;
            }
        };
        let (kind, overridden) = convert::read_as(import::detect(&path, &text), allowed);
        if let (Some(k), Some(read_as)) = (overridden, kind) {
            eprintln!(
                "toolgate: {}: looks like {}, read as {} (--from)",
                shown(&path),
                k.name(),
                read_as.name()
            );
        }
        if let Some(k) = kind.filter(|k| k.companion()) {
            companions.add(&path, &text, k);
        }
        inputs.push(Input { path, kind });
    }

    // Then the companions beside each file. Batch inputs and BFCL data are
    // read once per folder: a folder of N outputs does not read its
    // siblings N times (a stream's request is looked up by its own stem).
    convert::gather_beside(
        &mut companions,
        inputs
            .iter()
            .filter_map(|i| Some((i.path.as_path(), i.kind?))),
    );
    for e in std::mem::take(&mut companions.unread) {
        if !named.contains(&load::real_path(&e.path)) {
            bad += 1;
            report(&e);
        }
    }

    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create {}", shown(&args.out)))?;
    let mut used_names: HashSet<String> = HashSet::new();
    let mut total = 0usize;
    // Inputs whose output could not be made or written.
    let mut not_written = 0usize;
    let mut only_companions = true;
    for input in &inputs {
        let detected = input.kind;
        let kind = detected.unwrap_or(Kind::Toolgate);
        if kind.companion() {
            eprintln!(
                "toolgate: {}: {} (joined into the files that need it)",
                shown(&input.path),
                kind.name()
            );
            continue;
        }
        only_companions = false;
        // The input with its text, read again now that its turn has come.
        let input = Read {
            path: input.path.clone(),
            text: match read_input(&input.path, &opts) {
                Ok(text) => text,
                Err(e) => {
                    bad += 1;
                    report(&e);
                    continue;
                }
            },
        };
        let convert::Lines {
            lines,
            native_only,
            errors,
            repeated_ids,
        } = match convert::transcript_lines(&input.path, &input.text, kind, &companions) {
            Ok(lines) => lines,
            Err(e) => {
                not_written += 1;
                eprintln!(
                    "toolgate: {}: not imported: {}",
                    shown(&input.path),
                    sanitize::one_line(&e.to_string())
                );
                continue;
            }
        };
        for e in &errors {
            bad += 1;
            report(e);
        }
        for (id, n) in &repeated_ids {
            eprintln!(
                "toolgate: {}: warning: {n} transcripts have the id `{}` (the capture repeats a custom_id, choice index or span id): all are written, but the id no longer tells them apart",
                shown(&input.path),
                sanitize::one_line(id)
            );
        }
        if lines.is_empty() {
            // An input of no detected format is read as toolgate's own, and
            // the loader's errors above say why it gave nothing (a document
            // of too many values was not even built to detect it): naming
            // toolgate here would claim a format nobody recognized.
            let format = if detected.is_some() {
                kind.name()
            } else {
                "no format detected"
            };
            eprintln!("toolgate: {}: no transcript ({format})", shown(&input.path),);
            continue;
        }
        let name = convert::output_name(&input.path, &mut used_names);
        let target = args.out.join(&name);
        if !args.force && std::fs::symlink_metadata(&target).is_ok() {
            bad += 1;
            eprintln!(
                "toolgate: {}: not imported: {} exists (an earlier import? --force replaces it)",
                shown(&input.path),
                shown(&target)
            );
            continue;
        }
        let mut body = lines.join("\n");
        body.push('\n');
        // One output that cannot be written (a full disk, a directory in
        // its place) loses only itself: the rest are still written.
        if let Err(e) = load::atomic_write(&target, body.as_bytes()) {
            not_written += 1;
            eprintln!(
                "toolgate: {}: not imported: cannot write {}: {}",
                shown(&input.path),
                shown(&target),
                sanitize::one_line(&e.to_string())
            );
            continue;
        }
        written.insert(name);
        total += lines.len();
        eprintln!(
            "toolgate: {}: {} transcript(s) ({}) → {}",
            shown(&input.path),
            lines.len(),
            kind.name(),
            shown(&target)
        );
        if native_only > 0 {
            eprintln!(
                "toolgate:   {native_only} of them post-parse: the provider parsed the raw text away, so only the native mode judges them"
            );
        }
    }
    for stale in stale_numbered(&args.out, &written) {
        eprintln!(
            "toolgate: {}: not written by this import, left as it is (a numbered output of an earlier run? remove it if it is stale: it would be read as more transcripts)",
            shown(&args.out.join(stale))
        );
    }
    if only_companions && !inputs.is_empty() {
        eprintln!(
            "toolgate: only companion files given (requests, questions, answers): pass the files with the responses too"
        );
    }
    eprintln!(
        "toolgate: {total} transcript(s) written to {}",
        shown(&args.out)
    );
    if not_written > 0 {
        eprintln!(
            "toolgate: error: {not_written} output file(s) could not be written (each named above)"
        );
    }
    Ok(if bad + not_written > 0 {
        EXIT_BAD
    } else {
        EXIT_OK
    })
}
