//! `toolgate [inspect] [PATH…]`: hands over to the inspector crate.

use crate::{EXIT_OK, InspectArgs};
use anyhow::Result;
use std::path::PathBuf;
use std::sync::Arc;

/// The paths to inspect: as given, else `transcripts/` when it exists, else
/// the current directory.
fn default_paths(paths: Vec<PathBuf>) -> Vec<PathBuf> {
    if !paths.is_empty() {
        return paths;
    }
    let transcripts = PathBuf::from("transcripts");
    if transcripts.is_dir() {
        vec![transcripts]
    } else {
        vec![PathBuf::from(".")]
    }
}

/// Runs the inspector.
pub fn run(args: InspectArgs) -> Result<u8> {
    let engine = Arc::new(crate::setup::engine(&args.engine)?);
    let options = toolgate_tui::InspectOptions {
        paths: default_paths(args.paths),
        engine,
        mouse: args.mouse,
    };
    match toolgate_tui::run(options) {
        Ok(()) => Ok(EXIT_OK),
        Err(e) => Err(anyhow::Error::new(e).context("inspector")),
    }
}
