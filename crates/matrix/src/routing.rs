//! Routing metadata: per model and task tag, what a gateway needs to route
//! on (seed 002: "a conformance matrix is routing metadata") — the pass
//! rate with its 95% Wilson interval, the dominant failure label and the
//! retry advice that follows from it (SPEC §5). The tag `*` is every task
//! of the model.

use crate::cells::{Judged, Key, round4};
use crate::stats::{self, wilson};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use toolgate_batch::Entry;
use toolgate_core::Label;

/// The `routing` list of the JSON matrix, sorted by model then tag.
pub fn table(entries: &[Entry<Judged>]) -> Value {
    let mut groups: BTreeMap<(String, String), BTreeMap<Label, usize>> = BTreeMap::new();
    for entry in entries {
        let Entry::Done {
            transcript: t,
            value: judged,
        } = entry
        else {
            continue;
        };
        let model = Key::Model.value(t, "");
        let mut tags = Key::Tag.values(t, "");
        tags.push("*".into());
        for tag in tags {
            *groups
                .entry((model.clone(), tag))
                .or_default()
                .entry(judged.label())
                .or_insert(0) += 1;
        }
    }
    let rows: Vec<Value> = groups
        .into_iter()
        .map(|((model, tag), labels)| {
            let n: usize = labels.values().sum();
            let passes = labels.get(&Label::Pass).copied().unwrap_or(0);
            let (low, high) = wilson(passes, n);
            let dominant = stats::dominant_failure(&labels);
            json!({
                "model": model,
                "tag": tag,
                "n": n,
                "passes": passes,
                "rate": round4(passes as f64 / n.max(1) as f64),
                "ci_low": round4(low),
                "ci_high": round4(high),
                "dominant_failure": dominant.map(Label::as_str),
                "retry_advice": dominant.map(|l| l.retry_advice()),
            })
        })
        .collect();
    Value::Array(rows)
}
