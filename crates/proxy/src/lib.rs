//! toolgate's capture side, the only crate that links tokio, axum and
//! reqwest. Three programs over one HTTP layer, each a module named for what
//! it is:
//!
//! - [`gateway`]: the recording OpenAI-compatible proxy (`toolgate proxy`),
//!   which judges every answer of a real model server and, in enforce mode,
//!   lets a tool call through only when the whole output passes every gate;
//! - [`runner`]: the k-sample runner (`toolgate run`), which sends a suite's
//!   tasks k times and stores what came back as transcripts;
//! - [`mock`]: the mock upstream (`toolgate mock-upstream`), which answers
//!   with bundled transcripts and injects faults on request, so the other
//!   two are tested against a faulty server without a GPU;
//! - [`http`]: what they share — the accept loop with its limits and the
//!   shutdown signal; [`hook`]: the per-exchange and per-sample callbacks
//!   the Python package and the traces attach.
//!
//! Invariants: the gateway fails closed (an answer it cannot check is a 502,
//! a stream that did not end releases no call), every limit is bounded and
//! configurable, and no credential is written or printed.

pub mod gateway;
pub mod hook;
pub mod http;
pub mod mock;
pub mod runner;

pub use http::{server, shutdown};
