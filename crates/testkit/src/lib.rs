//! What toolgate's tests and benchmarks share, so that no test file carries
//! its own copy:
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
//! A dev-dependency only (`publish = false`): no library or binary of the
//! workspace depends on it.
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
