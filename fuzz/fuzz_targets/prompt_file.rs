//! Arbitrary bytes as a prompt file: never panics; an accepted file yields valid definitions
//! with unique names that a registry accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    rea::fuzzing::prompts::check_prompt_file(bytes);
});
