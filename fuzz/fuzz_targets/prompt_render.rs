//! Fuzzes prompt rendering against its contract (docs/CONTRACT.md section 7): arbitrary bytes
//! become a built-in prompt, a tool availability and arguments (see `check_fuzz_input` for the
//! layout). A rejected request must be rejected with exactly the error the contract requires; an
//! accepted one must keep its data block a single fenced line of sorted-key JSON that parses
//! back to the arguments, and its text outside that line must not change when the values do.
//! Regression inputs go in `fuzz/regressions/prompt_render/`; `tests/it/fuzz_replay/prompt.rs`
//! replays them.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| rea::fuzzing::prompts::contract::check_fuzz_input(data));
