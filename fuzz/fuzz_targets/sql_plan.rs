//! SQL text of any shape through the parser and the planner: an error or a plan, no panic, no
//! stack overflow.
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use strata_sql::catalog::Schema;

static SCHEMA: LazyLock<Schema> = LazyLock::new(strata_sql::fuzzing::schema);

fuzz_target!(|data: &[u8]| {
    let sql = String::from_utf8_lossy(data);
    strata_sql::fuzzing::parse_and_plan(&sql, &SCHEMA);
});
