//! The wire formats of model families (SPEC §3 second table, and those the
//! peer corpus shows real models emit): one module each, in two groups so
//! that each group keeps its own registry.

pub(crate) mod configured;
pub mod jsonlike;
pub mod tagged;
