//! A `jsonschema` error to a label, from the error's *kind* and instance
//! path, never its message text: `Required` → `missing_required`;
//! `AdditionalProperties`/`UnevaluatedProperties` → `hallucinated_param`;
//! `Type` → `type_coercion`; anything else → `schema_violation`.

use super::refs::escape_pointer;
use super::walk::hallucinated;
use super::{Violation, clip};
use jsonschema::error::ValidationErrorKind;
use toolgate_core::Label;

pub(super) fn map_error(e: &jsonschema::ValidationError<'_>) -> Violation {
    let path = e.instance_path().as_str().to_string();
    let at = if path.is_empty() {
        "/".to_string()
    } else {
        path.clone()
    };
    match e.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_string);
            let full = format!("{path}/{}", escape_pointer(&name));
            Violation::new(
                Label::MissingRequired,
                full,
                format!(
                    "required argument `{}` is missing at `{at}`",
                    clip(&name, 80)
                ),
            )
        }
        ValidationErrorKind::AdditionalProperties { unexpected }
        | ValidationErrorKind::UnevaluatedProperties { unexpected } => {
            let first = unexpected.first().cloned().unwrap_or_default();
            hallucinated(&format!("{path}/{}", escape_pointer(&first)))
        }
        ValidationErrorKind::Type { .. } => Violation::new(
            Label::TypeCoercion,
            path,
            format!("wrong type at `{at}`: {}", clip(&e.to_string(), 160)),
        ),
        ValidationErrorKind::AnyOf { .. }
        | ValidationErrorKind::OneOfNotValid { .. }
        | ValidationErrorKind::OneOfMultipleValid { .. } => Violation::new(
            Label::SchemaViolation,
            path,
            format!(
                "`{at}` matches no allowed alternative (anyOf/oneOf): {}",
                clip(&e.to_string(), 120)
            ),
        ),
        _ => Violation::new(
            Label::SchemaViolation,
            path,
            format!(
                "`{at}` violates `{}`: {}",
                e.kind().keyword(),
                clip(&e.to_string(), 160)
            ),
        ),
    }
}
