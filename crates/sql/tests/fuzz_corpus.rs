//! The fuzz targets' checked-in inputs, replayed as ordinary tests: the seeds of
//! `fuzz/corpus/sql_plan` and every input that once crashed a target, kept under
//! `fuzz/regressions/sql_plan`. Each must be answered without a panic.

use std::path::{Path, PathBuf};

use strata_sql::fuzzing;

fn inputs(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz")
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

#[test]
fn sql_plan_inputs_parse_and_plan_without_a_panic() {
    let schema = fuzzing::schema();
    let mut count = 0;
    for folder in ["corpus/sql_plan", "regressions/sql_plan"] {
        for file in inputs(folder) {
            let bytes = std::fs::read(&file).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            let result = std::panic::catch_unwind(|| fuzzing::parse_and_plan(&text, &schema));
            assert!(result.is_ok(), "{} panicked", file.display());
            count += 1;
        }
    }
    assert!(
        count >= 11,
        "the corpus and regressions were found ({count} files)"
    );
}
