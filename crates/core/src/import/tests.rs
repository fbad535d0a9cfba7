//! Tests of the importers: each format's documented shape, read from text.
#![allow(clippy::unwrap_used)]
