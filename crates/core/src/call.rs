use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The normalized call every format turns into (SPEC §1).
///
/// `arguments` is always an object. Nothing is ever added to it that the model
/// did not emit: no default filling, no coercion.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Call {
    /// The tool name exactly as the model wrote it.
    pub name: String,
    /// The arguments object exactly as the model wrote it. Shared (`Arc`)
    /// with the candidate it came from: an executed call is the candidate's
    /// own arguments, not a copy of them (serialized as the plain object).
    pub arguments: Arc<Map<String, Value>>,
}

impl Call {
    /// Builds a call; a non-object `arguments` value becomes `{}`.
    pub fn new(name: impl Into<String>, arguments: Value) -> Call {
        let arguments = match arguments {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        Call {
            name: name.into(),
            arguments: Arc::new(arguments),
        }
    }

    /// The call as a JSON value in the normalized shape.
    pub fn to_json(&self) -> Value {
        let mut obj = Map::new();
        obj.insert("name".into(), Value::String(self.name.clone()));
        obj.insert(
            "arguments".into(),
            Value::Object(Map::clone(&self.arguments)),
        );
        Value::Object(obj)
    }
}
