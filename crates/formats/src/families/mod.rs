//! The wire formats of model families (SPEC §3 second table, and those the
//! peer corpus shows real models emit): one module each.

use crate::Extractor;

/// The model-family modes, in replay order.
pub fn families() -> Vec<Box<dyn Extractor>> {
    Vec::new()
}
