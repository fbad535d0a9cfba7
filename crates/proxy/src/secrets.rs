//! The one scrubber of credential text, shared by the runner (a stored
//! sample, an error message) and the gateway (a record, a log line): every
//! occurrence of a secret's text is replaced by `[redacted]`, wherever an
//! upstream may have echoed it — under any name, in the model's output, in
//! an error message or a header it sent back. Credential-named members
//! are the other rule (`toolgate_core::sanitize::redact_member`); this one
//! catches what a name cannot tell.

use serde_json::{Value, json};

/// The shortest secret scrubbed from what is stored or logged. Values
/// shorter than this are left: local servers take any key, and the
/// placeholders people give them (`EMPTY`, `dummy`, `ollama`, `none`) are
/// words a model writes too; scrubbed from its output or its arguments,
/// they would change what is scored or recorded. A real provider's key is
/// far longer (32 to 200 bytes), and a header or member that names a
/// credential is redacted whatever its value.
pub(crate) const MIN_SCRUBBED: usize = 16;

/// `found`, as a list to scrub: values shorter than [`MIN_SCRUBBED`]
/// dropped, the longest first (a secret that contains another is replaced
/// whole), each once.
pub(crate) fn stored(found: impl IntoIterator<Item = String>) -> Vec<String> {
    listed(found, MIN_SCRUBBED)
}

/// `found` without values shorter than `min` bytes, the longest first,
/// each once.
pub(crate) fn listed(found: impl IntoIterator<Item = String>, min: usize) -> Vec<String> {
    let mut out: Vec<String> = found.into_iter().filter(|s| s.len() >= min).collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out.dedup();
    out
}

/// Whether `text` holds one of `secrets`.
pub(crate) fn holds(text: &str, secrets: &[String]) -> bool {
    secrets.iter().any(|x| text.contains(x.as_str()))
}

/// Replaces every occurrence of `secrets` (longest first) in `text`.
pub(crate) fn scrub(mut text: String, secrets: &[String]) -> String {
    for s in secrets {
        if text.contains(s.as_str()) {
            text = text.replace(s.as_str(), "[redacted]");
        }
    }
    text
}

/// [`scrub`] in place, saying whether anything was replaced.
pub(crate) fn scrub_in(text: &mut String, secrets: &[String]) -> bool {
    if !holds(text, secrets) {
        return false;
    }
    *text = scrub(std::mem::take(text), secrets);
    true
}

/// Replaces every occurrence of `secrets` in the strings and member names
/// of `v` (at `path`) by `[redacted]`, pushing each changed path.
pub(crate) fn replace_secrets(
    v: &mut Value,
    path: &str,
    secrets: &[String],
    found: &mut Vec<Value>,
) {
    walk(v, Some(path), secrets, &mut |p| found.push(json!(p)));
}

/// [`replace_secrets`] without the paths (none is built): whether `v`
/// changed.
pub(crate) fn scrub_value(v: &mut Value, secrets: &[String]) -> bool {
    let mut changed = false;
    walk(v, None, secrets, &mut |_| changed = true);
    changed
}

/// Whether a string or member name of `v` holds one of `secrets` (nothing
/// allocated: a clean value costs a read).
pub(crate) fn value_holds(v: &Value, secrets: &[String]) -> bool {
    match v {
        Value::String(s) => holds(s, secrets),
        Value::Array(items) => items.iter().any(|i| value_holds(i, secrets)),
        Value::Object(m) => m
            .iter()
            .any(|(k, v)| holds(k, secrets) || value_holds(v, secrets)),
        _ => false,
    }
}

/// The walk of [`replace_secrets`] and [`scrub_value`]: `changed` gets the
/// path of each string or member name replaced (`None` when no path is
/// kept). The recursion is bounded: every `Value` here was parsed by
/// serde_json, which refuses nesting deeper than 128, or built from such
/// values a level or two down.
fn walk(
    v: &mut Value,
    path: Option<&str>,
    secrets: &[String],
    changed: &mut dyn FnMut(Option<String>),
) {
    let join = |k: &str| {
        path.map(|p| {
            if p.is_empty() {
                k.to_string()
            } else {
                format!("{p}.{k}")
            }
        })
    };
    match v {
        Value::String(s) if holds(s, secrets) => {
            *s = scrub(std::mem::take(s), secrets);
            changed(path.map(str::to_string));
        }
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                let at = path.map(|p| format!("{p}[{i}]"));
                walk(item, at.as_deref(), secrets, changed);
            }
        }
        Value::Object(m) => {
            if m.keys().any(|k| holds(k, secrets)) {
                let old = std::mem::take(m);
                for (k, mut inner) in old {
                    let key = if holds(&k, secrets) {
                        let key = scrub(k, secrets);
                        changed(join(&key));
                        key
                    } else {
                        k
                    };
                    walk(&mut inner, join(&key).as_deref(), secrets, changed);
                    m.insert(key, inner);
                }
            } else {
                for (k, inner) in m.iter_mut() {
                    walk(inner, join(k).as_deref(), secrets, changed);
                }
            }
        }
        _ => {}
    }
}

/// Whether a JSON document's bytes may hold one of `secrets` in a string
/// or a member name: its text is there as it is, or the document has an
/// escape that could spell one of its characters (`\uXXXX`, `\/`), or a
/// secret has a character that JSON must escape. `false` is certain: the
/// document needs no parse to be known clean.
pub(crate) fn json_may_hold(doc: &[u8], secrets: &[String]) -> bool {
    secrets.iter().any(|s| {
        s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20)
            || memchr::memmem::find(doc, s.as_bytes()).is_some()
    }) || memchr::memmem::find(doc, b"\\u").is_some()
        || memchr::memmem::find(doc, b"\\/").is_some()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_document_is_parsed_only_when_it_may_hold_a_secret() {
        let key = vec!["sk-proj-0123456789abcdef".to_string()];
        assert!(!json_may_hold(br#"{"a":"b \"c\""}"#, &key));
        assert!(json_may_hold(br#"{"a":"sk-proj-0123456789abcdef"}"#, &key));
        // `\u0073` is `s`: the text is there, spelt otherwise.
        assert!(json_may_hold(
            br#"{"a":"\u0073k-proj-0123456789abcdef"}"#,
            &key
        ));
        let mut v: Value =
            serde_json::from_slice(br#"{"a":"\u0073k-proj-0123456789abcdef!"}"#).unwrap();
        assert!(scrub_value(&mut v, &key));
        assert_eq!(v["a"], "[redacted]!");
    }
}
