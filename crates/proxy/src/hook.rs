//! Observers of finished work: the proxy calls an [`ExchangeHook`] with every
//! exchange it has finished, the runner a [`SampleHook`] with every sample it
//! has answered. Traces (`toolgate-otel`) are built on these; this crate
//! knows nothing of what a hook does with what it is given.
//!
//! A hook must return quickly: hand the work to a bounded queue, never wait
//! on the network. The proxy calls it from its record thread once the
//! exchange is decided (the handler does not wait for it), the runner from
//! the sample's task just before the transcript is written.

use crate::gateway::record::Exchange;
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Called with every finished proxy exchange.
#[derive(Clone)]
pub struct ExchangeHook(Arc<dyn Fn(&Exchange) + Send + Sync>);

impl ExchangeHook {
    /// A hook that calls `f`.
    pub fn new(f: impl Fn(&Exchange) + Send + Sync + 'static) -> ExchangeHook {
        ExchangeHook(Arc::new(f))
    }

    /// Calls the hook.
    pub fn call(&self, exchange: &Exchange) {
        (self.0)(exchange)
    }
}

impl fmt::Debug for ExchangeHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ExchangeHook")
    }
}

/// One answered runner sample.
#[derive(Clone, Copy, Debug)]
pub struct Sample<'a> {
    /// The transcript that is written for it (SPEC §2, with `request`,
    /// `response` and `run`).
    pub transcript: &'a Value,
    /// When its first request was sent.
    pub started: SystemTime,
    /// From the first request to the answer, retries included.
    pub elapsed: Duration,
}

/// Called with every answered runner sample.
#[derive(Clone)]
pub struct SampleHook(Arc<dyn Fn(&Sample<'_>) + Send + Sync>);

impl SampleHook {
    /// A hook that calls `f`.
    pub fn new(f: impl Fn(&Sample<'_>) + Send + Sync + 'static) -> SampleHook {
        SampleHook(Arc::new(f))
    }

    /// Calls the hook.
    pub fn call(&self, sample: &Sample<'_>) {
        (self.0)(sample)
    }
}

impl fmt::Debug for SampleHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SampleHook")
    }
}
