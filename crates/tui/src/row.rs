//! One row of the transcript list, which the views take to draw the
//! selected transcript.

use crate::event::Entry;
use std::sync::Arc;
use toolgate_core::Label;

/// One list row: a transcript with its derived columns.
#[derive(Clone, Debug)]
pub struct Row {
    /// The transcript and its replay.
    pub entry: Arc<Entry>,
    /// Its file, as the user would write the path (shared by the file's rows).
    pub path: Arc<str>,
    /// The label shown (profile's, or the filter mode's).
    pub label: Option<Label>,
    /// The decision shown.
    pub decision: &'static str,
    /// Stored labels exist and differ from the current strict ones.
    pub changed: bool,
    /// No labels stored yet.
    pub unlabeled: bool,
}
