//! `toolgate [inspect] [PATH…]`: hands over to the inspector crate, with
//! each transcript judged by its model's `auto` profile.

use crate::{EXIT_OK, InspectArgs};
use anyhow::Result;
use std::path::PathBuf;
use std::sync::Arc;
use toolgate_tui::{AutoReplayer, Replayer};

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
    let engine = crate::setup::engine(&args.engine)?;
    let auto = crate::setup::auto(&args.engine, &engine)?;
    let paths = default_paths(args.paths);
    let primary = engine.profile.primary.clone();
    let auto_replayer = Arc::new(AutoReplayer::new(engine, auto));
    let given = auto_replayer.is_given();
    // Detection behind the screen (nothing to detect under --profile). The
    // thread ends with the process if the inspector quits first.
    if !given {
        let detecting = Arc::clone(&auto_replayer);
        let paths = paths.clone();
        let _ = std::thread::Builder::new()
            .name("toolgate-detect".into())
            .spawn(move || detecting.detect(&paths));
    }
    let replayer: Arc<dyn Replayer> = auto_replayer;
    match toolgate_tui::run_with(paths, replayer, &primary, args.mouse) {
        Ok(()) => Ok(EXIT_OK),
        Err(e) => Err(anyhow::Error::new(e).context("inspector")),
    }
}
