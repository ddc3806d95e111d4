//! One HTTP request built from the input (method, headers, body) sent to the `/mcp` router,
//! then one that must succeed: each gets exactly one well-formed answer and the endpoint keeps
//! serving.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|bytes: &[u8]| {
    rea::fuzzing::http::check_request(bytes);
});
