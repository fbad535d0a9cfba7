//! `toolgate parse`: the profile pipeline on one raw output.
//!
//! Prints, as pretty JSON:
//!
//! ```json
//! {"decision": "reject", "gate": "allowlist",
//!  "reason": "tool `rm_rf` is not allowlisted", "reemit": null,
//!  "calls": [], "label": "wrong_tool",
//!  "telemetry": {"parse_mode": "tag", "fallback_used": false, …}}
//! ```
//!
//! The decision is data: the exit code is 0 whatever it is, and 2 only when
//! the input or the tools file cannot be read.

use crate::{EXIT_OK, EngineArgs, jsonout};
use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};
use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use toolgate_core::{Transcript, load, utf8_prefix};
use toolgate_validator::auto::Source;
use toolgate_validator::stream::StreamParser;
use toolgate_validator::{Engine, report};

/// `toolgate parse [--profile P] [--tools FILE] [FILE|-]`.
#[derive(Args, Debug)]
pub struct ParseArgs {
    /// The raw model output; `-` or nothing reads stdin.
    #[arg(value_name = "FILE|-")]
    input: Option<PathBuf>,
    /// Tool definitions: a JSON array of tools (OpenAI style or bare), or a
    /// transcript object whose `tools` are used. Without it the tool list
    /// is unknown, as for a transcript without `tools`: every call is
    /// rejected at `allowlist`, the label is decided without tool
    /// definitions, and the report carries the finding `tools_unknown`.
    #[arg(long, value_name = "FILE")]
    tools: Option<PathBuf>,
    /// Read the input as it arrives and print JSON lines: `text` events
    /// (text safe to forward), `open` when a call opener is seen, `call`
    /// for each candidate once the output is complete, and a last `end`
    /// holding exactly what `parse` prints for the whole text.
    #[arg(long)]
    stream: bool,
    #[command(flatten)]
    engine: EngineArgs,
    /// The model that wrote the output: its profile is chosen as `auto`
    /// chooses it (the `[models]` table of toolgate.toml, else the built-in
    /// family table, else `default`; one output is too little to detect).
    /// Without it and without --profile: the default profile. Not with a
    /// --profile other than `auto`.
    #[arg(long, value_name = "NAME")]
    model: Option<String>,
    /// Largest input (and tools file) read, in bytes (suffixes K, M, G:
    /// powers of 1024), as `label`'s; a larger one is refused (exit 2)
    /// after reading at most one byte more. With --stream the text
    /// forwarded before the limit was reached has been printed, and no
    /// `end` event follows.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = crate::parse_size)]
    max_file_size: u64,
}

/// Why an input over the limit is not parsed.
fn too_large(shown: &str, limit: u64) -> anyhow::Error {
    anyhow::anyhow!("{shown}: larger than --max-file-size ({limit} bytes): not parsed")
}

/// At most `limit` bytes of `reader`; more is an error (one byte past the
/// limit is read to know, never more).
fn read_bounded(reader: impl Read, limit: u64, shown: &str) -> Result<Vec<u8>> {
    // Room for the whole limit at once (address space only: pages are
    // touched as bytes arrive), so the buffer is never grown by doubling,
    // which held the old and the new buffer at once (3× the limit at peak).
    let mut bytes = Vec::new();
    let room = usize::try_from(limit.saturating_add(1).min(RESERVE_MAX)).unwrap_or(0);
    // Without the room, reading grows the buffer as before.
    let _ = bytes.try_reserve_exact(room);
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {shown}"))?;
    if bytes.len() as u64 > limit {
        return Err(too_large(shown, limit));
    }
    Ok(bytes)
}

/// `path` opened for reading; a regular file longer than `limit` is
/// refused before anything is read.
fn open_bounded(path: &Path, limit: u64) -> Result<(std::fs::File, u64)> {
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let meta = file
        .metadata()
        .with_context(|| format!("cannot read {}", path.display()))?;
    if meta.is_file() && meta.len() > limit {
        return Err(too_large(&path.display().to_string(), limit));
    }
    Ok((file, if meta.is_file() { meta.len() } else { 0 }))
}

fn read_input(input: Option<&Path>, limit: u64) -> Result<(String, PathBuf)> {
    let (bytes, path) = match input {
        Some(p) if p.as_os_str() != "-" => (
            read_bounded(open_bounded(p, limit)?.0, limit, &p.display().to_string())?,
            p.to_path_buf(),
        ),
        _ => (
            read_bounded(std::io::stdin().lock(), limit, "<stdin>")?,
            PathBuf::from("<stdin>"),
        ),
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        // A raw output may hold anything, so only one that is not UTF-8
        // is told apart (UTF-16 with its mark, compressed).
        let bytes = e.as_bytes();
        match load::not_text(&bytes[..bytes.len().min(load::SNIFF_BYTES)]) {
            Some(why) => anyhow::anyhow!("{}: {why}", path.display()),
            None => anyhow::anyhow!(
                "{}: not valid UTF-8 (first bad byte at offset {})",
                path.display(),
                e.utf8_error().valid_up_to()
            ),
        }
    })?;
    // A BOM belongs to the file (an editor's, PowerShell's), not to the
    // output, as in a transcript file: kept, it made the first line
    // another line than the model's (`need_tool: yes` unseen).
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) => rest.to_string(),
        None => text,
    };
    Ok((text, path))
}

/// The `tools` value of a tools file (at most `limit` bytes).
fn read_tools(path: &Path, limit: u64) -> Result<Value> {
    let shown = format!("tools file {}", path.display());
    let bytes = read_bounded(
        open_bounded(path, limit)
            .with_context(|| format!("cannot read tools file {}", path.display()))?
            .0,
        limit,
        &shown,
    )?;
    if let Some(why) = load::not_text(&bytes[..bytes.len().min(load::SNIFF_BYTES)]) {
        anyhow::bail!("{shown}: {why}");
    }
    let text = String::from_utf8(bytes).with_context(|| format!("{shown} is not UTF-8"))?;
    // A BOM belongs to the file, as in a transcript file.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let value: Value = toolgate_core::strict::from_str(text).map_err(|e| {
        anyhow::anyhow!(
            "tools file {} is not read: {}",
            path.display(),
            toolgate_core::strict::reason(&e)
        )
    })?;
    load::tools_member(value).map_err(|why| anyhow::anyhow!("tools file {}: {why}", path.display()))
}

/// Runs `toolgate parse`.
pub fn run(args: ParseArgs) -> Result<u8> {
    if let (Some(profile), Some(_)) = (args.engine.given_profile(), &args.model) {
        anyhow::bail!(
            "--model chooses the profile as `auto` does; it cannot be used with --profile {}",
            toolgate_core::sanitize::one_line(profile)
        );
    }
    let mut engine = crate::setup::engine(&args.engine)?;
    let source = match &args.model {
        Some(model) => {
            let auto = crate::setup::auto(&args.engine, &engine)?;
            let chosen = auto.choose(Some(model), None);
            engine.profile = chosen.profile;
            Some(chosen.source)
        }
        None => None,
    };
    // `None`: the tool list is unknown (SPEC §4), not empty.
    let tools = match &args.tools {
        Some(path) => Some(read_tools(path, args.max_file_size)?),
        None => None,
    };
    if args.stream {
        return run_stream(
            &engine,
            source.as_ref(),
            tools,
            args.input.as_deref(),
            args.max_file_size,
        );
    }
    let (output, path) = read_input(args.input.as_deref(), args.max_file_size)?;
    let unknown = tools.is_none();
    let (bare, transcript) = match tools {
        Some(tools) => (None, Some(with_tools(output, tools, &path)?)),
        None => (Some(output), None),
    };
    // A panic would be a bug in an extractor; report it as an error (exit 2)
    // instead of aborting with a backtrace and exit 101.
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        match (&transcript, &bare) {
            (Some(t), _) => engine.parse_output(&t.output, &t.tools, None),
            (None, output) => engine.judge_output_unknown(
                &engine.profile,
                output.as_deref().unwrap_or_default(),
                None,
                false,
                true,
            ),
        }
    }))
    .map_err(|_| anyhow::anyhow!("internal error: the pipeline failed on this input"))?;
    let mut report = report::parse_report(&result, &engine.profile.name, source.as_ref());
    if unknown {
        report = report::with_tools_unknown(report);
    }
    let mut out = toolgate_core::stdio::QuietStdout::lock();
    writeln!(out, "{}", jsonout::pretty(&report))?;
    out.flush()?;
    Ok(EXIT_OK)
}

/// `output` with the tools of a tools file, read the way transcripts are
/// read (OpenAI or bare style); tool problems go to stderr.
fn with_tools(output: String, tools: Value, path: &Path) -> Result<Transcript> {
    let transcript =
        load::with_tools(output, tools, path).map_err(|reason| anyhow::anyhow!("{reason}"))?;
    for problem in &transcript.tool_problems {
        eprintln!(
            "toolgate: tools: {}",
            toolgate_core::sanitize::one_line(problem)
        );
    }
    Ok(transcript)
}

/// One JSON line of `parse --stream`, flushed at once.
/// Like every JSON record toolgate prints, each event ends with
/// `schema_version`.
fn event(out: &mut impl Write, value: &Value) -> Result<()> {
    writeln!(out, "{}", jsonout::line(&jsonout::versioned(value.clone())))?;
    out.flush()?;
    Ok(())
}

/// The most text reserved ahead from a file's size (a larger file's text
/// grows as it is read).
const RESERVE_MAX: u64 = 1 << 30;

/// Prints the text forwarded since `printed` (if any) as one `text` event,
/// flushed.
fn print_text(
    out: &mut impl Write,
    buf: &mut Vec<u8>,
    parser: &StreamParser,
    printed: &mut usize,
) -> Result<()> {
    let hold = parser.holdback();
    if hold.forwarded() > *printed {
        jsonout::text_event(out, buf, &hold.text()[*printed..hold.forwarded()])?;
        out.flush()?;
        *printed = hold.forwarded();
    }
    Ok(())
}

/// Bytes one read of the input asks for (a pipe gives what it holds, at
/// most its buffer: the size only spares a file's reads and hand-overs).
const READ_SIZE: usize = 256 * 1024;
/// Reads waiting between the reader thread and the parser (memory bound:
/// this many times [`READ_SIZE`]).
const READS_IN_FLIGHT: usize = 16;

/// `toolgate parse --stream`: the streaming pipeline
/// ([`toolgate_validator::stream::StreamParser`]) on the input as it
/// arrives. A reader thread hands over whatever each `read` returns at once
/// (a UTF-8 sequence split across reads waits for its last byte); each
/// byte is validated once, when it arrives. Text that is safe to forward
/// is printed as soon as no more input is waiting: when stdout is not a
/// terminal, the text of every read already received is one `text` event
/// (merging never waits for input), on a terminal each read gives its own.
fn run_stream(
    engine: &Engine,
    source: Option<&Source>,
    tools: Option<Value>,
    input: Option<&Path>,
    limit: u64,
) -> Result<u8> {
    // The tools are read through the transcript loader, with an empty output.
    let tools = match tools {
        Some(tools) => Some(
            with_tools(String::new(), tools, Path::new("<tools>"))?
                .tools
                .to_vec(),
        ),
        None => None,
    };
    let unknown = tools.is_none();
    // A file's size says how much text the parser will hold: reserved
    // at once, it is not copied as it grows.
    let mut size = 0;
    let mut reader: Box<dyn Read + Send> = match input {
        Some(p) if p.as_os_str() != "-" => {
            let (file, len) = open_bounded(p, limit)?;
            size = len;
            Box::new(file)
        }
        _ => Box::new(std::io::stdin()),
    };
    let shown = match input {
        Some(p) if p.as_os_str() != "-" => p.display().to_string(),
        _ => "<stdin>".to_string(),
    };
    let merge = !std::io::stdout().is_terminal();
    let (tx, rx) = mpsc::sync_channel::<std::io::Result<Vec<u8>>>(READS_IN_FLIGHT);
    // Ends at the end of the input, on a read error (sent on), or when the
    // parser stops listening (an error of its own).
    std::thread::spawn(move || {
        let mut buf = vec![0u8; READ_SIZE];
        // A BOM at the start belongs to the file, not to the output, as
        // for `parse` of the whole text (whose `end` this stream's is).
        let mut first = true;
        loop {
            let got = match reader.read(&mut buf) {
                Ok(0) => return,
                Ok(n) if std::mem::take(&mut first) => {
                    let read = &buf[..n];
                    Ok(read.strip_prefix(b"\xef\xbb\xbf").unwrap_or(read).to_vec())
                }
                Ok(n) => Ok(buf[..n].to_vec()),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => Err(e),
            };
            let failed = got.is_err();
            if tx.send(got).is_err() || failed {
                return;
            }
        }
    });
    let mut out = toolgate_core::stdio::QuietStdout::lock();
    let mut line: Vec<u8> = Vec::new();
    let mut parser = match tools {
        Some(tools) => StreamParser::new(engine, tools),
        None => StreamParser::with_tools_unknown(engine),
    };
    parser.reserve(usize::try_from(size.min(RESERVE_MAX)).unwrap_or(0));
    // Bytes of an incomplete UTF-8 sequence at the end of the last read.
    let mut carry: Vec<u8> = Vec::new();
    // Bytes pushed, and bytes of the forwardable text already printed.
    let mut total = 0usize;
    let mut printed = 0usize;
    let mut announced = false;
    let mut next = rx.recv().ok();
    while let Some(read) = next {
        let pushed = read
            .with_context(|| format!("cannot read {shown}"))
            .and_then(|mut bytes| {
                if !carry.is_empty() {
                    carry.append(&mut bytes);
                    bytes = std::mem::take(&mut carry);
                }
                // The parser holds the whole text (its calls are read once
                // it is complete): the limit bounds what it holds.
                if (total + bytes.len()) as u64 > limit {
                    return Err(too_large(&shown, limit));
                }
                let (text, incomplete) = utf8_prefix(&bytes).map_err(|at| {
                    anyhow::anyhow!(
                        "{shown}: not valid UTF-8 (first bad byte at offset {})",
                        total + at
                    )
                })?;
                parser.push(text);
                total += text.len();
                carry.extend_from_slice(&bytes[bytes.len() - incomplete..]);
                Ok(())
            });
        if let Err(e) = pushed {
            // What was safe to forward before the bad read is still shown.
            print_text(&mut out, &mut line, &parser, &mut printed)?;
            return Err(e);
        }
        let opened = !announced && parser.holdback().opener().is_some();
        // More input already here: with merging, its text joins this one.
        next = rx.try_recv().ok();
        let waiting = next.is_some();
        if opened || !merge || !waiting {
            print_text(&mut out, &mut line, &parser, &mut printed)?;
        }
        if opened && let Some((offset, token)) = parser.holdback().opener() {
            announced = true;
            event(&mut out, &report::open_event(engine, offset, token))?;
        }
        // Nobody reads the events any more (`| head -1`): the rest of an
        // input that may go on for long is not waited for. Nothing failed
        // so far, which is all the exit code could say.
        if out.closed() {
            return Ok(EXIT_OK);
        }
        if !waiting {
            next = rx.recv().ok();
        }
    }
    print_text(&mut out, &mut line, &parser, &mut printed)?;
    if !carry.is_empty() {
        bail!("{shown}: not valid UTF-8 (first bad byte at offset {total})");
    }
    // The held text still to show is written from the parser's own text,
    // not copied out of it first.
    let end = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        parser.finish_in_place(None, false)
    }))
    .map_err(|_| anyhow::anyhow!("internal error: the pipeline failed on this input"))?;
    let tail = end
        .text
        .get(end.forwarded..end.tail_end)
        .unwrap_or_default();
    // The last events come all at once: written through one buffer and
    // flushed together (each still a whole line), not one write each.
    let mut out = std::io::BufWriter::with_capacity(jsonout::ESCAPE_PIECE, out);
    for call in report::call_events(&end.result) {
        writeln!(out, "{}", jsonout::line(&jsonout::versioned(call)))?;
    }
    if !tail.is_empty() {
        jsonout::text_event(&mut out, &mut line, tail)?;
    }
    let mut report = report::parse_report(&end.result, &engine.profile.name, source);
    if unknown {
        report = report::with_tools_unknown(report);
    }
    if let Some(obj) = report.as_object_mut() {
        obj.insert("event".into(), json!("end"));
    }
    event(&mut out, &report)?;
    Ok(EXIT_OK)
}
