//! What the peer-shape tables (`newer_peers.rs`, `outside_suites.rs`)
//! share: one transcript judged in one mode, strict and lenient labels and
//! strict calls compared with what the case pins.

use serde_json::{Value, json};
use std::path::Path;
use toolgate_core::Label;
use toolgate_validator::Engine;

/// The strict calls of a mode as `[[name, arguments], …]`.
pub fn calls_of(r: &toolgate_validator::ModeResult) -> Value {
    Value::Array(
        r.calls
            .iter()
            .map(|c| json!([c.name, Value::Object((*c.arguments).clone())]))
            .collect(),
    )
}

/// What one case pins of a mode's judgment.
pub struct Want<'a> {
    pub source: &'a str,
    pub mode: &'a str,
    pub strict: Label,
    pub lenient: Label,
    /// The strict calls, when the case pins them.
    pub calls: Option<&'a Value>,
}

/// Judges the transcript `t` and says how it differs from `want`, if it does.
pub fn mismatch(engine: &Engine, t: &Value, want: &Want) -> Option<String> {
    let t = toolgate_core::load::parse_transcript(&t.to_string(), Path::new("t.json"), None, "t")
        .map_err(|e| {
            format!(
                "{}: the case's transcript does not load: {e:?}",
                want.source
            )
        });
    let t = match t {
        Ok(t) => t,
        Err(e) => return Some(e),
    };
    let replay = engine.replay(&t);
    let (Some(strict), Some(lenient)) = (
        replay.strict_mode(want.mode),
        replay.lenient_mode(want.mode),
    ) else {
        return Some(format!("{}: no mode {}", want.source, want.mode));
    };
    let got = calls_of(strict);
    (strict.label != want.strict
        || lenient.label != want.lenient
        || want.calls.is_some_and(|w| *w != got))
    .then(|| {
        format!(
            "{} ({}): strict {} (want {}), lenient {} (want {}), calls {got} (want {:?}); {}",
            want.source,
            want.mode,
            strict.label,
            want.strict,
            lenient.label,
            want.lenient,
            want.calls,
            strict.why()
        )
    })
}
