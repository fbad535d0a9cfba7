//! # toolgate-testkit: what the tests and benchmarks share
//!
//! One copy of the support code toolgate's tests and benchmarks need, so
//! that no test file carries its own:
//!
//! - [`generate`]: a deterministic generator (xorshift64, fixed seeds, no `rand`)
//!   of realistic model outputs, and the [`generate::Rng`] behind it that tests
//!   use for random delta sizes.
//! - `inspector` (feature `inspector`): the inspector's test harness — a
//!   deterministic fake engine, an app over a temp dir, key presses and
//!   rendering into a `TestBackend`.
//! - [`record`]: the whole lines of the proxy's record segments, and how
//!   many exchanges they hold.
//!
//! ## Place in the dependency order
//!
//! Beside the others, never under them: a dev-dependency only (`publish =
//! false`); no library or binary of the workspace depends on it. The
//! generator and the record reader need only `serde_json`; the
//! `inspector` feature pulls in core, formats, validator and tui.
//!
//! ## Invariants
//!
//! - **Deterministic.** Every generator is seeded (xorshift64, no `rand`,
//!   no clock): a failing test fails the same way on every machine, and a
//!   benchmark measures the same outputs every run.
//! - **No hard-coded answers.** The generator makes inputs, never the
//!   labels or decisions a test expects: those come from the code under
//!   test and are asserted by the test itself.
//! - **Test support may panic.** A broken fixture is a failed test, so
//!   `unwrap` is allowed here and nowhere in production code.
//!
//! ## The public surface
//!
//! The modules are the surface (`generate`, `record`, `inspector`): the
//! tests of every crate, other owners' included, name them by path.
//!
//! ```
//! let mut rng = toolgate_testkit::generate::Rng::new(7);
//! assert!(rng.below(10) < 10);
//! ```
#![allow(clippy::unwrap_used)] // test support: a failure is a failed test

pub mod generate;
#[cfg(feature = "inspector")]
pub mod inspector;
pub mod record;
