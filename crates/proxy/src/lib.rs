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
//! - what they share, private to the crate: the HTTP layer (the accept loop
//!   with its limits, background servers and the shutdown signal), the
//!   hooks, and the one scrubber of credential text (`secrets`: the
//!   runner's samples, the gateway's records and log lines).
//!
//! # The surface
//!
//! Each program is a public module with a short list of its own: the
//! gateway's [`ProxyConfig`](gateway::ProxyConfig), [`Mode`](gateway::Mode),
//! [`Engines`](gateway::Engines), `run_blocking` and `spawn`, and the
//! recorded [`Exchange`](gateway::Exchange) with its
//! [`Attempt`](gateway::Attempt)s; the runner's [`Suite`](runner::Suite),
//! [`RunConfig`](runner::RunConfig) and [`run`](runner::run); the mock's
//! [`Mock`](mock::Mock), [`MockOptions`](mock::MockOptions) and `spawn`.
//! Their insides (the gateway's answer check, judging, metrics, record
//! writer and SSE reader; the runner's executor, store and suite reader)
//! are private modules. The shared layer is re-exported here by name: a
//! [`Background`] server on a free loopback port ([`spawn_router`] runs any
//! router that way; the programs' `spawn` run theirs), the
//! [`ServeOptions`] limits, and the [`ExchangeHook`] / [`SampleHook`]
//! callbacks (with the [`Sample`] they are handed) that the Python package
//! and the traces attach.
//!
//! Invariants: the gateway fails closed (an answer it cannot check is a 502,
//! a stream that did not end releases no call), every limit is bounded and
//! configurable, and no credential is written or printed.

pub mod gateway;
pub mod mock;
pub mod runner;

mod hook;
mod http;
mod secrets;

// The shared layer, by name: a background server (tests, embedding, the
// trace collector) and the callbacks.
pub use hook::{ExchangeHook, Sample, SampleHook};
pub use http::server::{Background, ServeOptions, spawn as spawn_router};
// The modules' own paths inside the crate (`crate::server::…`).
use http::{server, shutdown};
