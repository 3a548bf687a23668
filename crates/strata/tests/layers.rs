//! The crates are layers and dependencies point only down (DESIGN.md): this test reads
//! `cargo metadata` and fails on any edge between Strata crates that is not allowed, e.g. the
//! SQL layer reaching the storage engine around the transaction client, and on anything a
//! crate reaches through its dependencies' dependencies that it must not link: the SQL node's
//! crates never link RocksDB, Raft or the placement driver's server, and the tools that speak
//! only the MySQL protocol link no Strata crate at all.

use std::collections::{BTreeMap, BTreeSet};
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
    // What the other roles link of the placement driver: its client and the oracles.
    (
        "strata-pd-client",
        &["strata-types", "strata-proto", "strata-fiber"],
    ),
    // The placement drivers replicate their state with the regions' Raft peer.
    (
        "strata-pd",
        &[
            "strata-types",
            "strata-proto",
            "strata-pd-client",
            "strata-raftstore",
        ],
    ),
    // Raft under the engine: it applies committed write batches to the engine.
    ("strata-raftstore", &["strata-engine"]),
    (
        "strata-txn",
        &[
            "strata-types",
            "strata-kvapi",
            "strata-pd-client",
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
            "strata-pd-client",
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
            "strata-pd-client",
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

/// Storage and consensus: what a SQL node must not link (it reaches data only through the
/// transaction client and the KV API).
const STORAGE: &[&str] = &[
    "strata-engine",
    "strata-kv",
    "strata-raftstore",
    "strata-node",
    "strata-pd",
    "rocksdb",
    "librocksdb-sys",
    "raft",
    "raft-engine",
];

/// Every Strata crate but the shared vocabulary: what a tool that speaks only the MySQL
/// protocol must not link.
const INTERNALS: &[&str] = &[
    "strata-types",
    "strata-codec",
    "strata-engine",
    "strata-kv",
    "strata-kvapi",
    "strata-txn",
    "strata-pd",
    "strata-pd-client",
    "strata-proto",
    "strata-node",
    "strata-raftstore",
    "strata-sql",
    "strata-mysql",
    "strata-fiber",
];

/// For each crate, packages it must not reach through any chain of normal dependencies.
const UNREACHABLE: &[(&str, &[&str])] = &[
    ("strata-sql", STORAGE),
    ("strata-mysql", STORAGE),
    ("strata-txn", STORAGE),
    ("strata-pd-client", STORAGE),
    ("strata-bench", INTERNALS),
    ("strata-difftest", INTERNALS),
];

/// `cargo metadata` of the workspace alone (`no_deps`), or with the dependency graph resolved
/// for this machine's platform (what a build here links; other platforms' dependencies are
/// not even downloaded).
fn metadata(no_deps: bool) -> serde_json::Value {
    let mut args = vec![
        "metadata".to_string(),
        "--format-version".into(),
        "1".into(),
        "--offline".into(),
    ];
    if no_deps {
        args.push("--no-deps".into());
    } else {
        args.push("--filter-platform".into());
        args.push(host_triple());
    }
    let out = Command::new(env!("CARGO"))
        .args(&args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The platform rustc builds for by default here.
fn host_triple() -> String {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .expect("rustc -vV");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|line| line.strip_prefix("host: "))
        .expect("rustc names its host")
        .to_string()
}

#[test]
fn dependencies_point_only_down() {
    let metadata = metadata(true);
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

/// Package names by id, and each package's normal dependencies (by name), from the resolved
/// graph of `cargo metadata`.
fn normal_graph(metadata: &serde_json::Value) -> BTreeMap<String, BTreeSet<String>> {
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for node in metadata["resolve"]["nodes"].as_array().unwrap() {
        let name = names[node["id"].as_str().unwrap()].to_string();
        let deps = graph.entry(name).or_default();
        for dep in node["deps"].as_array().unwrap() {
            let normal = dep["dep_kinds"]
                .as_array()
                .unwrap()
                .iter()
                .any(|k| k["kind"].is_null());
            if normal {
                deps.insert(names[dep["pkg"].as_str().unwrap()].to_string());
            }
        }
    }
    graph
}

/// Each forbidden package `from` reaches, with the chain of dependencies that reaches it.
fn forbidden_reach(
    graph: &BTreeMap<String, BTreeSet<String>>,
    from: &str,
    forbidden: &[&str],
) -> Vec<String> {
    let mut paths: BTreeMap<String, Vec<String>> = BTreeMap::new();
    paths.insert(from.to_string(), vec![from.to_string()]);
    let mut queue = std::collections::VecDeque::from([from.to_string()]);
    while let Some(name) = queue.pop_front() {
        for dep in graph.get(&name).into_iter().flatten() {
            if !paths.contains_key(dep) {
                let mut path = paths[&name].clone();
                path.push(dep.clone());
                paths.insert(dep.clone(), path);
                queue.push_back(dep.clone());
            }
        }
    }
    forbidden
        .iter()
        .filter_map(|f| paths.get(*f).map(|path| path.join(" -> ")))
        .collect()
}

#[test]
fn layers_reach_only_what_they_may() {
    let graph = normal_graph(&metadata(false));
    for (from, forbidden) in UNREACHABLE {
        assert!(graph.contains_key(*from), "{from} is in the workspace");
        let reached = forbidden_reach(&graph, from, forbidden);
        assert!(
            reached.is_empty(),
            "{from} reaches what it must not: {reached:?}"
        );
    }
    // The check sees through chains: the SQL layer does reach the transaction client's
    // transport, so a forbidden package there would be found.
    assert!(!forbidden_reach(&graph, "strata-sql", &["tonic"]).is_empty());
}

#[test]
fn a_chain_to_rocksdb_is_caught() {
    // The shape the SQL layer had when the transaction client depended on the placement
    // driver's crate, which holds the server and its Raft group.
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("strata-sql", &["strata-txn"][..]),
        ("strata-txn", &["strata-pd"]),
        ("strata-pd", &["strata-raftstore"]),
        ("strata-raftstore", &["strata-engine"]),
        ("strata-engine", &["rocksdb"]),
        ("rocksdb", &["librocksdb-sys"]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.iter().map(|s| s.to_string()).collect()))
    .collect();
    let reached = forbidden_reach(&graph, "strata-sql", STORAGE);
    assert!(reached.contains(
        &"strata-sql -> strata-txn -> strata-pd -> strata-raftstore -> strata-engine -> rocksdb"
            .to_string()
    ));
    assert_eq!(reached.len(), 5, "{reached:?}");
}
