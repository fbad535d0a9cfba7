//! `toolgate run`: a task suite against any OpenAI-compatible endpoint, k
//! samples per (model, task), one transcript per sample.
//!
//! - [`suite`]: the JSONL task format and its checks.
//! - [`store`]: where a sample's transcript lives (a function of model, task
//!   and sample) and writing it exactly once, atomically — the whole of the
//!   resume logic: a rerun skips every sample whose file exists.
//! - [`exec`]: the plan, the HTTP calls (concurrency limit, timeouts,
//!   retries with backoff) and the transcripts. A sample whose request fails
//!   after every retry is a *run error*: appended to
//!   [`exec::ERRORS_FILE`] in the output directory and counted in the
//!   summary, never written as a transcript, so it can never be labeled as
//!   the model's answer; the next run tries it again (and starts the file
//!   afresh: it holds the last run's errors only).

mod exec;
mod store;
mod suite;

pub use exec::{ERRORS_FILE, RunConfig, RunError, RunSummary, SampleError, check_api_key, run};
pub use store::sample_path;
pub use suite::{Suite, SuiteError, SuiteErrors, Task};
