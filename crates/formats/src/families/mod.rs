//! The wire formats of model families (SPEC §3 second table, and those the
//! peer corpus shows real models emit): one module each, in two groups so
//! that each group keeps its own registry.

use crate::Extractor;

pub(crate) mod configured;
pub mod jsonlike;
pub mod tagged;

/// The model-family modes, in replay order.
pub fn families() -> Vec<Box<dyn Extractor>> {
    let mut all = tagged::all();
    all.extend(jsonlike::all());
    all
}
