use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// Exactly one label per (transcript, mode): `pass` or one of the eleven
/// failures of the taxonomy. The variant order is the precedence of SPEC §5
/// (the first matching rule wins; `spurious_call` appears twice there).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Label {
    /// A call was expected and the mode found no candidate.
    NoCall,
    /// No call was expected and the mode found one, or more candidates than expected calls.
    SpuriousCall,
    /// N ≥ 2 calls expected, 1 ≤ candidates < N.
    ParallelCollapse,
    /// The output ends inside a candidate.
    Truncation,
    /// Quoting or escaping mangled the payload.
    EscapingError,
    /// Any other parse failure.
    MalformedJson,
    /// A call names a tool that is not allowlisted or not the expected one.
    WrongTool,
    /// A required argument is absent.
    MissingRequired,
    /// An argument the schema does not declare.
    HallucinatedParam,
    /// Right field, wrong JSON type.
    TypeCoercion,
    /// Any other schema or expectation failure.
    SchemaViolation,
    /// None of the above.
    Pass,
}

/// What to do after a failure (SPEC §5, "Retry advice").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RetryAdvice {
    /// Nothing to retry.
    None,
    /// A sampling artifact: re-roll the same model.
    Reroll,
    /// A capability gap: fall back to another model.
    Fallback,
    /// A schema failure: re-roll once, then fall back.
    RerollOnceThenFallback,
}

impl Label {
    /// Every label, in precedence order.
    pub const ALL: [Label; 12] = [
        Label::NoCall,
        Label::SpuriousCall,
        Label::ParallelCollapse,
        Label::Truncation,
        Label::EscapingError,
        Label::MalformedJson,
        Label::WrongTool,
        Label::MissingRequired,
        Label::HallucinatedParam,
        Label::TypeCoercion,
        Label::SchemaViolation,
        Label::Pass,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Label::NoCall => "no_call",
            Label::SpuriousCall => "spurious_call",
            Label::ParallelCollapse => "parallel_collapse",
            Label::Truncation => "truncation",
            Label::EscapingError => "escaping_error",
            Label::MalformedJson => "malformed_json",
            Label::WrongTool => "wrong_tool",
            Label::MissingRequired => "missing_required",
            Label::HallucinatedParam => "hallucinated_param",
            Label::TypeCoercion => "type_coercion",
            Label::SchemaViolation => "schema_violation",
            Label::Pass => "pass",
        }
    }

    /// Whether this is `pass`.
    pub fn is_pass(self) -> bool {
        self == Label::Pass
    }

    /// The retry advice that follows from the label.
    pub fn retry_advice(self) -> RetryAdvice {
        match self {
            Label::Pass => RetryAdvice::None,
            Label::MalformedJson | Label::Truncation | Label::EscapingError => RetryAdvice::Reroll,
            Label::WrongTool | Label::ParallelCollapse | Label::NoCall | Label::SpuriousCall => {
                RetryAdvice::Fallback
            }
            Label::MissingRequired
            | Label::HallucinatedParam
            | Label::TypeCoercion
            | Label::SchemaViolation => RetryAdvice::RerollOnceThenFallback,
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text was not one of the label names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownLabel(pub String);

impl fmt::Display for UnknownLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "unknown label `{}`", self.0)
    }
}

impl std::error::Error for UnknownLabel {}

impl FromStr for Label {
    type Err = UnknownLabel;
    fn from_str(s: &str) -> Result<Label, UnknownLabel> {
        Label::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| UnknownLabel(s.to_string()))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_serde_and_from_str() {
        for label in Label::ALL {
            let json = serde_json::to_string(&label).unwrap();
            assert_eq!(json, format!("\"{}\"", label.as_str()));
            assert_eq!(label.as_str().parse::<Label>().unwrap(), label);
        }
        assert_eq!("nope".parse::<Label>(), Err(UnknownLabel("nope".into())));
    }

    #[test]
    fn retry_advice_follows_spec_section_5() {
        assert_eq!(Label::Truncation.retry_advice(), RetryAdvice::Reroll);
        assert_eq!(
            Label::ParallelCollapse.retry_advice(),
            RetryAdvice::Fallback
        );
        assert_eq!(
            Label::TypeCoercion.retry_advice(),
            RetryAdvice::RerollOnceThenFallback
        );
    }
}
