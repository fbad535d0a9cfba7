//! # toolgate-tui: the transcript inspector
#![deny(missing_docs)]
