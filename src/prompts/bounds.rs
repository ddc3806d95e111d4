//! The bound on prompt argument values, shared by rendering and its errors.

/// Longest prompt argument value `prompts/get` accepts, in Unicode scalar values. (Completion
/// values have the smaller bound [`MAX_VALUE_CHARS`](crate::core::MAX_VALUE_CHARS).)
pub const MAX_PROMPT_VALUE_CHARS: usize = 65_536;
