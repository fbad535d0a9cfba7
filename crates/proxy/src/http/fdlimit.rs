//! The open-file limit against `--max-connections`.
//!
//! Each connection holds two descriptors (the client's and the upstream's),
//! plus the segment file, the listener and the runtime's own. The common
//! soft limit (1024) is the default connection cap, so without this the
//! accept loop takes the descriptors the upstream connections then cannot
//! get: 502s and lost records, with nothing logged.

/// Descriptors beside the connections': the listener, the runtimes, the
/// record segment and directory, the OTLP exporter, logs.
const MARGIN: u64 = 64;

/// Raises the soft `RLIMIT_NOFILE` to the hard one, then warns once when it
/// is still below what `max_connections` needs.
pub fn prepare(max_connections: usize) {
    if let Some(warning) = raise().and_then(|limit| low_limit_warning(limit, max_connections)) {
        tracing::warn!("{warning}");
    }
}

/// The soft limit after raising it to the hard one; `None` when it cannot
/// be read (or is unlimited).
#[cfg(unix)]
fn raise() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        let raised = rustix::process::Rlimit {
            current: limit.maximum,
            maximum: limit.maximum,
        };
        // Refused where the hard limit is above what the kernel allows
        // (macOS's unlimited): the soft limit is then kept and checked.
        let _ = setrlimit(Resource::Nofile, raised);
    }
    getrlimit(Resource::Nofile).current
}

#[cfg(not(unix))]
fn raise() -> Option<u64> {
    None
}

/// The warning for a soft limit of `limit` descriptors with
/// `max_connections` connections allowed, `None` when it is enough.
pub fn low_limit_warning(limit: u64, max_connections: usize) -> Option<String> {
    let needed = (max_connections as u64)
        .saturating_mul(2)
        .saturating_add(MARGIN);
    (limit < needed).then(|| {
        format!(
            "the open-file limit is {limit}, below the {needed} that \
             --max-connections {max_connections} needs (2 per connection plus \
             {MARGIN}): connections past it fail upstream with 502 and lose their \
             records; raise the hard limit (ulimit -Hn, LimitNOFILE=) or lower \
             --max-connections"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    // probe44b: a soft limit of 64 against the default cap of 1024 gave
    // 502s and lost records with no word.
    #[test]
    fn a_limit_below_two_per_connection_plus_the_margin_is_warned_about() {
        assert_eq!(
            low_limit_warning(64, 1024).as_deref(),
            Some(
                "the open-file limit is 64, below the 2112 that --max-connections 1024 \
                 needs (2 per connection plus 64): connections past it fail upstream \
                 with 502 and lose their records; raise the hard limit (ulimit -Hn, \
                 LimitNOFILE=) or lower --max-connections"
            )
        );
        assert_eq!(low_limit_warning(2112, 1024), None);
        assert!(low_limit_warning(2111, 1024).is_some());
    }
}
