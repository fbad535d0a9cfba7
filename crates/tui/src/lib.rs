//! # toolgate-tui: the transcript inspector
//!
//! Work in progress: [`run`] is the entry point the `toolgate` binary calls.
#![deny(missing_docs)]

use std::path::PathBuf;
use std::sync::Arc;

/// What the binary passes to [`run`].
pub struct InspectOptions {
    /// Files and directories to load and watch (recursively).
    pub paths: Vec<PathBuf>,
    /// The replay engine (built-in modes, custom patterns, the profile).
    pub engine: Arc<toolgate_validator::Engine>,
    /// Whether to capture the mouse (`--mouse`).
    pub mouse: bool,
}

/// Runs the inspector until the user quits.
pub fn run(options: InspectOptions) -> std::io::Result<()> {
    let _ = options;
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "the inspector is not built yet",
    ))
}
