//! The gates of SPEC §4, one unit each, in the order of SPEC §9, and the
//! decision they lead to. [`gate`] is the driver: it runs every gate (each
//! is shown, even after the first failure) and [`decide`] turns the first
//! failure, or none, into the [`Decision`] and the telemetry record.
//!
//! | gate | unit | applies to | fails when |
//! |------|------|------------|------------|
//! | `intent` | [`intent`] | fallbacks | no line of the output or reasoning is exactly an intent token |
//! | `single` | [`single`] | fallbacks; both under `parallel_tool_calls: false` | more than one candidate (the reason carries a re-emit message); more than one call to execute when the request asked for one at most ([`single::at_most_one_call`]) |
//! | `size` | [`size`] | both, by role | a payload is over the role's limit |
//! | `parse` | [`parse`] | both | a candidate failed to parse, has no name, or was repaired (unless allowed) |
//! | `allowlist` | [`allowlist`] | both | a tool is not allowlisted, or the tools are unknown |
//! | `schema` | [`schema`] | both | an allowlisted call fails its tool's schema |
//!
//! Gates judge; they never label (SPEC §5): the label of the same
//! candidates comes from [`crate::label`], and the two share only the
//! prepared calls and their schema checks (`labeler::Prepared`).

mod allowlist;
mod decide;
mod intent;
mod parse;
mod schema;
mod single;
mod size;
mod verdict;

use crate::labeler::Prepared;
use crate::profile::Profile;
use crate::toolset::Toolset;
use toolgate_core::Candidate;
use toolgate_formats::{Extractor, Input};

pub(crate) use single::at_most_one_call;
pub use single::{one_call_refusal, reemit_example, reemit_message};
pub use verdict::{GateCheck, Gated, Role};

/// The gates, decision and telemetry for `candidates` (every candidate of
/// `mode`, reasoning ones included: only live ones are gated) met in `role`.
/// `primary_example` is shown in the re-emit message of the `single` gate.
pub fn gate(
    profile: &Profile,
    role: Role,
    mode: &str,
    candidates: &[Candidate],
    input: &Input<'_>,
    toolset: &Toolset,
    primary: Option<&dyn Extractor>,
) -> Gated {
    let prepared = Prepared::new(candidates);
    gate_prepared(profile, role, mode, prepared, input, toolset, primary)
}

/// [`gate`] of prepared candidates: every gate in order, then the decision.
pub(crate) fn gate_prepared(
    profile: &Profile,
    role: Role,
    mode: &str,
    prepared: Prepared<'_>,
    input: &Input<'_>,
    toolset: &Toolset,
    primary: Option<&dyn Extractor>,
) -> Gated {
    let live = &prepared.live;
    let repairs = decide::repairs(live);
    if live.is_empty() {
        return decide::no_candidates(repairs);
    }
    let intent = intent::check(profile, role, mode, input);
    let (single, reemit) = single::check(profile, role, mode, live, toolset, primary);
    let size = size::check(profile, role, live);
    let parse = parse::check(profile, live);
    let allowlist = allowlist::check(toolset, live);
    let (schema, schema_problem) = schema::check(toolset, &prepared);
    let gates = vec![intent, single, size, parse, allowlist, schema];
    decide::decide(gates, role, mode, prepared, reemit, schema_problem, repairs)
}
