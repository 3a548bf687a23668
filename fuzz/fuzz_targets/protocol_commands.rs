//! Command-phase packets of any shape (COM_QUERY, COM_STMT_PREPARE / EXECUTE / SEND_LONG_DATA /
//! RESET / CLOSE, COM_FIELD_LIST, …) through one connection: a reply or an error, no panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = strata_mysql::fuzzing::commands(data);
});
