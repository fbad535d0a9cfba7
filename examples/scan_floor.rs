//! The floor `toolgate label` is measured against (issue 24): read a JSONL
//! file and parse every line with `serde_json`, nothing else — the least any
//! program that reads the same transcripts must do.
//!
//! ```sh
//! cargo run --release --example scan_floor -- target/scale/c20000.jsonl
//! cargo run --release --example scan_floor -- --validate target/scale/c20000.jsonl
//! ```
//!
//! By default each line becomes a `serde_json::Value` (objects, strings,
//! arrays built, as a reader that then looks at the transcript needs);
//! `--validate` only checks each line (`serde::de::IgnoredAny`: no tree, the
//! stricter floor). One thread, the same allocator as the binary (mimalloc);
//! the file is read whole, then split at newlines. It prints the lines
//! parsed and the objects among them, so the work cannot be optimized away.

use std::io::Read;

#[global_allocator]
static GLOBAL: toolgate_alloc::Mimalloc = toolgate_alloc::Mimalloc;

fn main() -> std::io::Result<()> {
    let mut validate = false;
    let mut path = None;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--validate" => validate = true,
            _ => path = Some(arg),
        }
    }
    let Some(path) = path else {
        eprintln!("usage: scan_floor [--validate] FILE.jsonl");
        std::process::exit(2);
    };
    let mut text = Vec::new();
    std::fs::File::open(&path)?.read_to_end(&mut text)?;
    let (mut lines, mut objects, mut bad) = (0usize, 0usize, 0usize);
    for line in text.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        lines += 1;
        if validate {
            match serde_json::from_slice::<serde::de::IgnoredAny>(line) {
                Ok(_) => objects += 1,
                Err(_) => bad += 1,
            }
        } else {
            match serde_json::from_slice::<serde_json::Value>(line) {
                Ok(v) => objects += usize::from(v.is_object()),
                Err(_) => bad += 1,
            }
        }
    }
    println!("{lines} lines, {objects} objects, {bad} not JSON");
    Ok(())
}
