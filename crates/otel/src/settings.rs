//! The standard OpenTelemetry environment variables that switch traces on.
//!
//! | variable | effect |
//! |---|---|
//! | `OTEL_SDK_DISABLED` | `true`: no traces, whatever else is set |
//! | `OTEL_TRACES_EXPORTER` | unset or `otlp`: export; `none`: no traces; anything else is an error |
//! | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` | the full URL spans are posted to, used as is |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | the base URL: spans go to `BASE/v1/traces` |
//! | `OTEL_EXPORTER_OTLP_TRACES_PROTOCOL`, `OTEL_EXPORTER_OTLP_PROTOCOL` | unset or `http/protobuf`; `grpc` and `http/json` are refused (not built in) |
//! | `OTEL_SERVICE_NAME` | the `service.name` resource attribute (default: the command's) |
//! | `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT` | `true`: spans carry the output messages and tool definitions |
//!
//! Unlike the OTLP default (`http://localhost:4318`), no endpoint means no
//! traces: a proxy started without any of these variables sends nothing
//! anywhere. `OTEL_EXPORTER_OTLP_HEADERS` / `_TIMEOUT` are read by the
//! exporter itself, but the headers are checked here first: the exporter
//! drops an entry it cannot read without a word, so spans would go out
//! without the collector's key. A malformed entry is an error naming its
//! position, never its text (it is likely a credential).
//!
//! No message here shows an endpoint's user, password or query: a URL goes
//! through [`url_shown`], and a text without a scheme is not echoed at all.

use toolgate_core::sanitize::url_shown;

use crate::Error;

/// Where and how spans are exported.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// The URL spans are posted to (`…/v1/traces`).
    pub endpoint: String,
    /// `service.name`.
    pub service_name: String,
    /// Output messages, tool definitions and call arguments go into spans.
    pub capture_content: bool,
}

fn truthy(v: Option<String>) -> bool {
    v.is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

fn set(v: Option<String>) -> Option<String> {
    v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
}

impl Settings {
    /// The settings from the process environment; `Ok(None)` when traces are
    /// off. `service` is the `service.name` unless `OTEL_SERVICE_NAME` says
    /// otherwise.
    pub fn from_env(service: &str) -> Result<Option<Settings>, Error> {
        Settings::from_vars(service, |k| std::env::var(k).ok())
    }

    /// The settings from `var` (a variable's value by name).
    pub fn from_vars(
        service: &str,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Settings>, Error> {
        if truthy(var("OTEL_SDK_DISABLED")) {
            return Ok(None);
        }
        match set(var("OTEL_TRACES_EXPORTER")).as_deref() {
            None | Some("otlp") => {}
            Some("none") => return Ok(None),
            Some(other) => {
                return Err(Error::config(format!(
                    "OTEL_TRACES_EXPORTER={other}: only `otlp` (or `none`) is supported"
                )));
            }
        }
        let endpoint = match set(var("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) {
            Some(e) => e,
            None => match set(var("OTEL_EXPORTER_OTLP_ENDPOINT")) {
                Some(base) => format!("{}/v1/traces", base.trim_end_matches('/')),
                None => return Ok(None),
            },
        };
        if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
            // `url_shown` masks only what follows a `://`: a text without a
            // scheme (`host:4318?api_key=…`, the common mistake) is not shown.
            return Err(Error::config(if endpoint.contains("://") {
                format!(
                    "the OTLP traces endpoint must be an http(s) URL, not `{}`",
                    url_shown(&endpoint)
                )
            } else {
                "the OTLP traces endpoint must be an http(s) URL (`http://HOST:PORT`); \
                 the one given has no scheme"
                    .to_string()
            }));
        }
        // The exporter prefers the signal's variable, set even if empty.
        for name in [
            "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
            "OTEL_EXPORTER_OTLP_HEADERS",
        ] {
            if let Some(headers) = var(name) {
                check_headers(name, &headers)?;
                break;
            }
        }
        for name in [
            "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
            "OTEL_EXPORTER_OTLP_PROTOCOL",
        ] {
            if let Some(p) = set(var(name)) {
                if p != "http/protobuf" {
                    return Err(Error::config(format!(
                        "{name}={p}: only http/protobuf is supported"
                    )));
                }
                break;
            }
        }
        Ok(Some(Settings {
            endpoint,
            service_name: set(var("OTEL_SERVICE_NAME")).unwrap_or_else(|| service.to_string()),
            capture_content: truthy(var("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT")),
        }))
    }
}

/// Refuses a header list the exporter would read only in part: each
/// `,`-separated entry (empty ones aside) must be `name=value` with a valid
/// header name and, once `%`-decoded as the exporter does, a value without
/// control characters. The message gives the entry's position only.
fn check_headers(name: &str, headers: &str) -> Result<(), Error> {
    for (i, entry) in headers.split(',').map(str::trim).enumerate() {
        if entry.is_empty() {
            continue;
        }
        let bad = |why: &str| {
            Error::config(format!(
                "{name}: entry {} {why} (entries are `name=value`, separated by `,`)",
                i + 1
            ))
        };
        let Some((key, value)) = entry.split_once('=') else {
            return Err(bad("has no `=`"));
        };
        let (key, value) = (key.trim(), value.trim());
        if key.is_empty() || value.is_empty() {
            return Err(bad("has an empty name or value"));
        }
        if axum::http::HeaderName::from_bytes(key.as_bytes()).is_err() {
            return Err(bad("has a name that is not a valid header name"));
        }
        let value =
            toolgate_core::sanitize::percent_decoded(value).unwrap_or_else(|| value.to_string());
        if axum::http::HeaderValue::from_str(&value).is_err() {
            return Err(bad("has a value with a control character"));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn with(vars: &[(&str, &str)]) -> Result<Option<Settings>, Error> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Settings::from_vars("toolgate-proxy", move |k| {
            vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn no_endpoint_means_no_traces() {
        assert_eq!(with(&[]).unwrap(), None);
        assert_eq!(with(&[("OTEL_SERVICE_NAME", "x")]).unwrap(), None);
    }

    #[test]
    fn the_base_endpoint_gets_the_traces_path_and_the_signal_one_is_used_as_is() {
        let s = with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:6006/")])
            .unwrap()
            .unwrap();
        assert_eq!(s.endpoint, "http://127.0.0.1:6006/v1/traces");
        assert_eq!(s.service_name, "toolgate-proxy");
        assert!(!s.capture_content);
        let s = with(&[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://b:2/custom"),
            ("OTEL_SERVICE_NAME", "gw"),
            ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "TRUE"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.endpoint, "http://b:2/custom");
        assert_eq!(s.service_name, "gw");
        assert!(s.capture_content);
    }

    #[test]
    fn disabled_and_none_switch_traces_off() {
        let ep = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1");
        assert_eq!(with(&[ep, ("OTEL_SDK_DISABLED", "true")]).unwrap(), None);
        assert_eq!(with(&[ep, ("OTEL_TRACES_EXPORTER", "none")]).unwrap(), None);
        assert!(
            with(&[ep, ("OTEL_SDK_DISABLED", "false")])
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn unsupported_protocols_exporters_and_endpoints_are_errors() {
        let ep = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1");
        let e = with(&[ep, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")]).unwrap_err();
        assert!(e.to_string().contains("only http/protobuf"), "{e}");
        // The signal-specific protocol wins over the general one.
        assert!(
            with(&[
                ep,
                ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ])
            .unwrap()
            .is_some()
        );
        assert!(with(&[ep, ("OTEL_TRACES_EXPORTER", "zipkin")]).is_err());
        assert!(with(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:4318")]).is_err());
    }

    // probe44b: a refused endpoint was echoed raw, credentials and all.
    #[test]
    fn a_refused_endpoint_is_shown_without_its_credentials() {
        let e = with(&[(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "collector.example:4318?api_key=SECRETQUERY123456",
        )])
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the OTLP traces endpoint must be an http(s) URL (`http://HOST:PORT`); \
             the one given has no scheme"
        );
        let e = with(&[(
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            "grpc://user:SECRETPASS123456@127.0.0.1:4317/x?k=SECRETQ",
        )])
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the OTLP traces endpoint must be an http(s) URL, not `grpc://***@127.0.0.1:4317/x?***`"
        );
    }

    // probe44b: an entry the exporter cannot read was dropped silently, so
    // spans went out without the collector's key.
    #[test]
    fn a_malformed_headers_entry_is_an_error_naming_its_position_only() {
        let ep = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:1");
        let h = "OTEL_EXPORTER_OTLP_HEADERS";
        let e = with(&[ep, (h, "x-a=1, authorization Bearer SECRET123")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "OTEL_EXPORTER_OTLP_HEADERS: entry 2 has no `=` \
             (entries are `name=value`, separated by `,`)"
        );
        let e = with(&[ep, (h, "authorization=Bearer SECRET%0A123")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "OTEL_EXPORTER_OTLP_HEADERS: entry 1 has a value with a control character \
             (entries are `name=value`, separated by `,`)"
        );
        let e = with(&[ep, (h, "api key=SECRET123")]).unwrap_err();
        assert!(e.to_string().contains("entry 1 has a name"), "{e}");
        assert!(!e.to_string().contains("SECRET"), "{e}");
        // The signal's variable is the one the exporter reads.
        let e = with(&[
            ep,
            (h, "a=1"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "a=1,,b="),
        ])
        .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("OTEL_EXPORTER_OTLP_TRACES_HEADERS: entry 3 has an empty"),
            "{e}"
        );
        assert!(
            with(&[ep, (h, "authorization=Bearer%20abc, x-b = 2 ,")])
                .unwrap()
                .is_some()
        );
    }
}
