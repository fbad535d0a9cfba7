//! The `toolgate` command line (SPEC §7).
//!
//! Every subcommand is one module; they share the engine setup ([`setup`]),
//! the parallel batch replay ([`toolgate_batch`]), terminal-safe JSON ([`jsonout`]) and
//! plain/markdown tables ([`table`]). Data goes to stdout, diagnostics to
//! stderr. Exit codes: 0 success, 1 findings asked for by a flag, 2 bad usage
//! or unreadable input (a batch still processes every readable file first).

/// `eprintln!` that drops a line stderr cannot take (its reader closed the
/// pipe) instead of panicking; see [`toolgate_core::stdio`]. Defined before
/// the modules, so that it shadows the standard one in all of them.
macro_rules! eprintln {
    ($($arg:tt)*) => {
        ::toolgate_core::stdio::eprint(format_args!("{}\n", format_args!($($arg)*)))
    };
}

mod catalog;
mod detect;
mod import;
mod inspect;
use toolgate_core::jsonout;
mod label;
mod logs;
mod matrix;
mod parse;
mod proxy_cmd;
mod run_cmd;
mod setup;
use toolgate_tui::table;
mod traces;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// mimalloc instead of the system allocator: replay allocates many small,
/// short-lived values on two worker threads, and glibc's malloc spent about
/// half of `label`'s time there (BENCHMARKS.md, "Replay at scale").
/// `toolgate_alloc` asks it with plain calls where those are aligned
/// enough (DECISIONS.md, "The allocator asked the plain way").
#[global_allocator]
static GLOBAL: toolgate_alloc::Mimalloc = toolgate_alloc::Mimalloc;

/// `0.1.0 (abc123def456)`: the package version and the git commit it was
/// built from (`unknown commit` outside a git checkout; see `build.rs`).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("TOOLGATE_GIT_COMMIT"),
    ")"
);

/// Exit code: success.
pub const EXIT_OK: u8 = 0;
/// Exit code: findings asked for by a flag (`label --check`).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code: bad usage or unreadable input.
pub const EXIT_BAD: u8 = 2;

/// Fail-closed LLM tool-call parsing and a transcript inspector.
///
/// Without a subcommand, `toolgate [PATH…]` opens the inspector.
#[derive(Parser, Debug)]
#[command(name = "toolgate", version = VERSION, args_conflicts_with_subcommands = true)]
#[command(after_help = "Exit codes: 0 success, 1 findings asked for by a flag \
(label --check), 2 bad usage or unreadable input.")]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    inspect: InspectArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Open the transcript inspector (TUI) on files and directories.
    Inspect(InspectArgs),
    /// Replay transcripts through every parse mode and print their labels.
    Label(label::LabelArgs),
    /// Run the profile pipeline on one raw output; print decision and telemetry as JSON.
    Parse(parse::ParseArgs),
    /// Conformance matrix: pass rate per cell with a 95% Wilson interval.
    Matrix(matrix::MatrixArgs),
    /// Which wire format does each model emit? Recommends a profile for each.
    Detect(detect::DetectArgs),
    /// List every parse mode with its description and an example.
    Formats(catalog::FormatsArgs),
    /// List the profiles: the built-in ones, then every mode as a one-mode profile.
    Profiles(catalog::ProfilesArgs),
    /// An OpenAI-compatible gateway that records and enforces tool calls.
    Proxy(proxy_cmd::ProxyArgs),
    /// An OpenAI-compatible server answering with the outputs of transcripts.
    MockUpstream(proxy_cmd::MockArgs),
    /// Run a task suite against an OpenAI-compatible endpoint, k samples per cell, resumable.
    Run(run_cmd::RunArgs),
    /// Convert captures (OpenAI chat/Batch/Responses, Anthropic, OTel GenAI, BFCL) into transcripts.
    Import(import::ImportArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(CompletionsArgs),
}

/// `toolgate completions SHELL`.
#[derive(Args, Debug)]
#[command(
    after_help = "Example: toolgate completions bash > ~/.local/share/bash-completion/completions/toolgate"
)]
struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

fn completions(args: CompletionsArgs) -> anyhow::Result<u8> {
    use clap::CommandFactory;
    let mut out = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "toolgate", &mut out);
    use std::io::Write;
    toolgate_core::stdio::QuietStdout::lock().write_all(&out)?;
    Ok(EXIT_OK)
}

/// The options every replaying command shares.
#[derive(Args, Debug, Clone, Default)]
pub struct EngineArgs {
    /// Profile: a built-in name or a mode name (see `toolgate profiles`) or a
    /// TOML file. Without it, `auto`: each model by its own profile.
    #[arg(long, value_name = "P")]
    pub profile: Option<String>,
    /// Custom patterns file (TOML). `toolgate.toml` in the working directory
    /// is read too when present.
    #[arg(long, value_name = "FILE")]
    pub patterns: Option<PathBuf>,
    /// Declared formats file (TOML, `[[format]]` tables): new wire formats
    /// read by the built-in engines. `toolgate.toml` is read too when present.
    #[arg(long, value_name = "FILE")]
    pub formats: Option<PathBuf>,
}

impl EngineArgs {
    /// The profile `--profile` names; `auto` (what its absence means, and
    /// what the proxy and the Python package accept by name) names none.
    pub fn given_profile(&self) -> Option<&str> {
        self.profile.as_deref().filter(|p| *p != "auto")
    }
}

/// How the batch commands read transcript files.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Largest transcript file read, in bytes (suffixes K, M, G: powers of
    /// 1024); a larger file is reported, not read. A JSONL file of
    /// transcripts is read as a stream: the limit applies to each line.
    #[arg(long, value_name = "SIZE", default_value = "256M", value_parser = parse_size)]
    pub max_file_size: u64,
    /// Threads replaying transcripts, the main one (which also reads and
    /// writes) included, 1 to 256 (default: one per CPU, at least 2, at
    /// most 16).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,
}

impl InputArgs {
    /// How a batch command reads its files (`--max-file-size`) and how many
    /// workers replay them (`--jobs`).
    pub fn batch_options(&self) -> toolgate_batch::BatchOptions {
        toolgate_batch::BatchOptions {
            load: toolgate_core::load::LoadOptions {
                max_file_size: self.max_file_size,
                ..Default::default()
            },
            workers: self
                .jobs
                .map_or_else(toolgate_batch::default_workers, usize::from),
        }
    }
}

/// What the batch commands (`label`, `matrix`, `detect`) read: the paths,
/// the engine and how the files are read.
#[derive(Args, Debug, Clone)]
pub struct BatchArgs {
    /// Files and directories (walked recursively for .json/.jsonl).
    #[arg(value_name = "PATH", default_value = "transcripts")]
    pub paths: Vec<PathBuf>,
    /// `--profile`, `--patterns` and `--formats`.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// `--max-file-size` and `--jobs`.
    #[command(flatten)]
    pub input: InputArgs,
}

/// Prints `list` the way toolgate prints a JSON list: pretty, versioned.
pub fn print_json_list(
    out: &mut impl std::io::Write,
    list: Vec<serde_json::Value>,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{}",
        jsonout::pretty(&jsonout::versioned(serde_json::Value::Array(list)))
    )
}

/// `1024`, `64K`, `256M`, `1G` (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let (digits, shift) = match text.char_indices().last() {
        Some((i, 'k' | 'K')) => (&text[..i], 10),
        Some((i, 'm' | 'M')) => (&text[..i], 20),
        Some((i, 'g' | 'G')) => (&text[..i], 30),
        _ => (text, 0),
    };
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("`{text}` is not a size (bytes, or a number with K, M or G)"))?;
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

/// `toolgate [inspect] [PATH…]`.
#[derive(Args, Debug, Clone, Default)]
pub struct InspectArgs {
    /// Files and directories to watch (default: `transcripts/` if it exists,
    /// else the current directory).
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// `--profile`, `--patterns` and `--formats`.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Capture the mouse (scroll and click in the inspector).
    #[arg(long)]
    pub mouse: bool,
}

/// With `RUST_LOG` set, tracing events (the telemetry record of every
/// pipeline run) go to stderr as JSON lines. The inspector owns the terminal,
/// so it never gets a stderr subscriber.
///
/// The lines are batched ([`logs`]); the returned [`logs::Logs`] writes what
/// is left when dropped.
fn init_tracing(cli: &Cli) -> Option<logs::Logs> {
    let inspecting = matches!(cli.command, None | Some(Command::Inspect(_)));
    // The servers log one line per exchange by default.
    let serving = matches!(
        cli.command,
        Some(Command::Proxy(_) | Command::MockUpstream(_))
    );
    let filter = match std::env::var_os("RUST_LOG") {
        Some(_) => tracing_subscriber::EnvFilter::from_default_env(),
        None if serving => tracing_subscriber::EnvFilter::new("info"),
        None => return None,
    };
    if inspecting {
        return None;
    }
    let logs = logs::Logs::stderr();
    let _ = tracing_subscriber::fmt()
        .json()
        // JSON lines for machines: never terminal colors (NO_COLOR or not).
        .with_ansi(false)
        .with_env_filter(filter)
        .event_format(logs::JsonLines::default())
        .with_writer(logs.writer())
        .try_init();
    Some(logs)
}

/// The subcommands' names, as a user types them.
fn command_names() -> Vec<String> {
    use clap::CommandFactory;
    Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect()
}

/// Edit distance (insertions, deletions, substitutions) between two short words.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

/// `toolgate lable transcripts/` (a typo) would open the inspector on a
/// path named `lable`: a first path that does not exist and reads like a
/// word (letters, digits, `-`, `_`; no `/` or `.`) is taken for a mistyped
/// command instead, with the closest command suggested. An existing file
/// or directory of that name is still inspected.
fn mistyped_command(paths: &[PathBuf]) -> Option<String> {
    let first = paths.first()?;
    let word = first.to_str()?;
    let wordlike = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !wordlike || std::fs::symlink_metadata(first).is_ok() {
        return None;
    }
    let closest = command_names()
        .into_iter()
        .map(|name| (edit_distance(&word.to_ascii_lowercase(), &name), name))
        .min();
    let hint = match closest {
        Some((d, name)) if d <= 2 || name.starts_with(word) => {
            format!("; did you mean `{name}`?")
        }
        _ => "; `toolgate --help` lists the commands".to_string(),
    };
    Some(format!(
        "`{word}` is not a toolgate command, nor an existing file or directory to inspect{hint}"
    ))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.command.is_none()
        && let Some(message) = mistyped_command(&cli.inspect.paths)
    {
        eprintln!("toolgate: error: {message}");
        return ExitCode::from(EXIT_BAD);
    }
    let logs = init_tracing(&cli);
    let result = match cli.command {
        None => inspect::run(cli.inspect),
        Some(Command::Inspect(args)) => inspect::run(args),
        Some(Command::Label(args)) => label::run(args),
        Some(Command::Parse(args)) => parse::run(args),
        Some(Command::Matrix(args)) => matrix::run(args),
        Some(Command::Detect(args)) => detect::run(args),
        Some(Command::Formats(args)) => catalog::formats(args),
        Some(Command::Profiles(args)) => catalog::profiles(args),
        Some(Command::Proxy(args)) => proxy_cmd::proxy(args),
        Some(Command::MockUpstream(args)) => proxy_cmd::mock_upstream(args),
        Some(Command::Run(args)) => run_cmd::run(args),
        Some(Command::Import(args)) => import::run(args),
        Some(Command::Completions(args)) => completions(args),
    };
    // The last log lines before an error message, not after it.
    drop(logs);
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            // A closed stdout (`toolgate label | head`) never gets here: the
            // commands write their data through `QuietStdout`, which drops
            // it and lets them finish, so the exit code is the findings'.
            eprintln!(
                "toolgate: error: {}",
                toolgate_core::sanitize::visible(&format!("{err:#}"))
            );
            ExitCode::from(EXIT_BAD)
        }
    }
}
