//! Replays the saved inputs of the `prompt_render` fuzz target
//! (`fuzz/regressions/prompt_render/`) through the same contract checks, as a plain test.

use rea::fuzzing::prompts::contract as prompt_contract;

use std::fs;

#[test]
fn saved_prompt_render_inputs_meet_the_contract() {
    let dir = crate::root().join("fuzz/regressions/prompt_render");
    let mut replayed = 0;
    for entry in fs::read_dir(&dir).expect("regression folder exists") {
        let path = entry.expect("readable folder").path();
        let data = fs::read(&path).expect("readable input");
        println!("replaying {}", path.display());
        prompt_contract::check_fuzz_input(&data);
        replayed += 1;
    }
    assert!(replayed > 0, "no regression inputs in {}", dir.display());
}
