//! The protocol fuzz targets' checked-in inputs, replayed as ordinary tests: the seeds of
//! `fuzz/corpus/protocol_*` and every input that once crashed a target, kept under
//! `fuzz/regressions/protocol_*`. Each must be answered without a panic, and the seeds must
//! reach what they were written for (a login, every command they carry), or the fuzzer would
//! start from nothing.

use std::collections::BTreeMap;
use std::path::Path;

use strata_mysql::fuzzing;

/// The files of `fuzz/FOLDER` by name; none when the folder does not exist.
fn inputs(folder: &str) -> BTreeMap<String, Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(folder);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return BTreeMap::new();
    };
    entries
        .map(|entry| {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&path).unwrap())
        })
        .collect()
}

#[test]
fn handshake_seeds_log_in_or_are_refused_without_a_panic() {
    let seeds = inputs("corpus/protocol_handshake");
    let logged_in = |name: &str| fuzzing::handshake(&seeds[name]);
    assert!(logged_in("root_native"));
    assert!(logged_in("root_with_db_attrs"));
    assert!(logged_in("switch_plugin"), "the authentication switch");
    assert!(!logged_in("wrong_password"));
    assert!(!logged_in("old_protocol"));
    for (name, input) in seeds
        .iter()
        .chain(&inputs("regressions/protocol_handshake"))
    {
        let result = std::panic::catch_unwind(|| fuzzing::handshake(input));
        assert!(result.is_ok(), "{name} panicked");
    }
}

#[test]
fn command_seeds_run_every_command_without_a_panic() {
    let seeds = inputs("corpus/protocol_commands");
    let expected = [
        ("query", 4),
        ("classic_query", 4),
        ("prepare_execute", 5),
        ("execute_three", 3),
        ("long_data", 5),
        ("execute_cursor_flags", 3),
        ("set_option_kill", 4),
    ];
    for (name, commands) in expected {
        assert_eq!(fuzzing::commands(&seeds[name]), commands, "{name}");
    }
    assert_eq!(seeds.len(), expected.len(), "every seed is checked");
    for (name, input) in inputs("regressions/protocol_commands") {
        let result = std::panic::catch_unwind(|| fuzzing::commands(&input));
        assert!(result.is_ok(), "{name} panicked");
    }
}
