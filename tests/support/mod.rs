//! What the CLI test files share: running the binary as a user would.
#![allow(dead_code)] // each test file uses a part of it

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `toolgate ARGS` in `dir`, with `stdin` piped in (or none), `COLUMNS`
/// unset so tables have their default width.
pub fn toolgate_stdin(dir: &Path, args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolgate"))
        .args(args)
        .current_dir(dir)
        .env_remove("COLUMNS")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        use std::io::Write;
        // toolgate may exit before reading stdin (a bad tools file): a
        // broken pipe here is fine, the exit status tells.
        let _ = child.stdin.take().unwrap().write_all(text.as_bytes());
    }
    child.wait_with_output().unwrap()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}
