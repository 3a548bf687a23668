//! The crates are layers and dependencies point only down (DESIGN.md): this test reads
//! `cargo metadata` and fails on any edge between Strata crates that is not allowed, e.g. the
//! SQL layer reaching the storage engine around the transaction client.

use std::collections::BTreeMap;
use std::process::Command;

/// For each crate, the Strata crates it may depend on (normal dependencies).
const ALLOWED: &[(&str, &[&str])] = &[
    ("strata-types", &[]),
    // Fibers: blocking code on an async runtime's thread, under every layer that waits.
    ("strata-fiber", &[]),
    ("strata-codec", &["strata-types"]),
    ("strata-engine", &["strata-types"]),
    ("strata-kvapi", &["strata-types"]),
    (
        "strata-kv",
        &[
            "strata-types",
            "strata-codec",
            "strata-engine",
            "strata-kvapi",
        ],
    ),
    ("strata-proto", &["strata-types", "strata-kvapi"]),
    // The placement drivers replicate their state with the regions' Raft peer.
    (
        "strata-pd",
        &[
            "strata-types",
            "strata-proto",
            "strata-raftstore",
            "strata-fiber",
        ],
    ),
    // Raft under the engine: it applies committed write batches to the engine.
    ("strata-raftstore", &["strata-engine"]),
    (
        "strata-txn",
        &[
            "strata-types",
            "strata-kvapi",
            "strata-pd",
            "strata-proto",
            "strata-fiber",
        ],
    ),
    // The KV node process: storage behind the gRPC service, registered with the PD.
    (
        "strata-node",
        &[
            "strata-types",
            "strata-engine",
            "strata-kv",
            "strata-kvapi",
            "strata-pd",
            "strata-proto",
            "strata-raftstore",
        ],
    ),
    (
        "strata-sql",
        &["strata-types", "strata-codec", "strata-txn", "strata-fiber"],
    ),
    ("strata-mysql", &["strata-sql", "strata-fiber"]),
    // Benchmark drivers speak only the MySQL protocol, so they measure any server alike.
    ("strata-bench", &[]),
    // The differential tester too: it compares Strata with MariaDB over the wire.
    ("strata-difftest", &[]),
    (
        "strata",
        &[
            "strata-types",
            "strata-codec",
            "strata-engine",
            "strata-kv",
            "strata-pd",
            "strata-txn",
            "strata-sql",
            "strata-mysql",
            "strata-bench",
            "strata-difftest",
            "strata-node",
            "strata-proto",
            "strata-fiber",
        ],
    ),
];

#[test]
fn dependencies_point_only_down() {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let allowed: BTreeMap<&str, &[&str]> = ALLOWED.iter().copied().collect();
    let mut seen = 0;
    for package in metadata["packages"].as_array().unwrap() {
        let name = package["name"].as_str().unwrap();
        let Some(permitted) = allowed.get(name) else {
            panic!("crate {name} is not placed in a layer: add it to ALLOWED in tests/layers.rs");
        };
        seen += 1;
        for dep in package["dependencies"].as_array().unwrap() {
            let dep_name = dep["name"].as_str().unwrap();
            let normal = dep["kind"].is_null();
            if dep_name.starts_with("strata") && normal {
                assert!(
                    permitted.contains(&dep_name),
                    "forbidden layer edge: {name} -> {dep_name}"
                );
            }
        }
    }
    assert_eq!(seen, ALLOWED.len(), "every layer crate is in the workspace");
}
