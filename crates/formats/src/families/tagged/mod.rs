//! Families whose calls are markup with key/value parameters or special
//! tokens around JSON: `qwen_xml`, `glm`, `kimi`, `deepseek`, `harmony`, …

use crate::Extractor;

/// This group's modes, in replay order.
pub fn all() -> Vec<Box<dyn Extractor>> {
    Vec::new()
}
