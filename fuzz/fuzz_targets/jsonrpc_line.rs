//! Arbitrary bytes through the line classifier and the whole stdio loop: no panic, every
//! output line a JSON-RPC message, the server still serving, each request answered once.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    for line in bytes.split(|&b| b == b'\n') {
        rea::fuzzing::mcp::check_classification(line);
    }
    rea::fuzzing::mcp::check_server(bytes);
});
