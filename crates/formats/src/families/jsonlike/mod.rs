//! Families whose payloads are JSON call objects or pythonic calls behind a
//! family-specific marker: `mistral`, `llama3`, granite, phi-4 `functools`, …

use crate::Extractor;

/// This group's modes, in replay order.
pub fn all() -> Vec<Box<dyn Extractor>> {
    Vec::new()
}
