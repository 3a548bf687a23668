//! The client's side of the connection phase, of any shape: a login, an error or a closed
//! connection, no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = strata_mysql::fuzzing::handshake(data);
});
