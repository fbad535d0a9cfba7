//! toolgate's network side, the only crate that links tokio, axum and
//! reqwest: the recording OpenAI-compatible proxy (`toolgate proxy`), the mock
//! upstream that answers with bundled transcripts (`toolgate mock-upstream`)
//! and the k-sample runner (`toolgate run`).

pub mod hook;
pub mod mock;
pub mod proxy;
pub mod run;
pub mod server;
pub mod shutdown;
