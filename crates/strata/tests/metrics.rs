//! The status port of every role: after a short sysbench run, `/metrics` parses as the
//! Prometheus text format and its statement, commit, KV, Raft and RocksDB counters moved by
//! what the run did; `/status` names the role; SHOW GLOBAL STATUS agrees with `/metrics`.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, sql_at, sysbench_command, sysbench_output, Playground};

/// One sample: metric name, labels, value.
#[derive(Debug)]
struct Sample {
    name: String,
    labels: BTreeMap<String, String>,
    value: f64,
}

/// Parses the Prometheus text format strictly: every sample belongs to a family with a TYPE
/// line before it, names and labels are well formed, values are numbers.
fn parse_metrics(text: &str) -> Vec<Sample> {
    let mut types: BTreeMap<String, String> = BTreeMap::new();
    let mut samples = Vec::new();
    let valid_name = |n: &str| {
        !n.is_empty()
            && n.chars().enumerate().all(|(i, c)| {
                c.is_ascii_alphabetic() || c == '_' || c == ':' || (i > 0 && c.is_ascii_digit())
            })
    };
    for line in text.lines().filter(|l| !l.is_empty()) {
        if let Some(rest) = line.strip_prefix("# ") {
            let mut words = rest.splitn(3, ' ');
            let (kind, name) = (words.next().unwrap(), words.next().unwrap_or(""));
            assert!(valid_name(name), "bad name in {line:?}");
            if kind == "TYPE" {
                let ty = words.next().unwrap_or("");
                assert!(
                    ["counter", "gauge", "histogram", "summary", "untyped"].contains(&ty),
                    "bad type in {line:?}"
                );
                types.insert(name.to_string(), ty.to_string());
            } else {
                assert_eq!(kind, "HELP", "bad comment {line:?}");
            }
            continue;
        }
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line:?}"));
        let value: f64 = match value {
            "+Inf" => f64::INFINITY,
            "-Inf" => f64::NEG_INFINITY,
            v => v
                .parse()
                .unwrap_or_else(|_| panic!("bad value in {line:?}")),
        };
        let (name, labels) = match series.split_once('{') {
            None => (series, BTreeMap::new()),
            Some((name, rest)) => {
                let body = rest.strip_suffix('}').unwrap_or_else(|| panic!("{line:?}"));
                let mut labels = BTreeMap::new();
                for pair in body.split("\",").filter(|p| !p.is_empty()) {
                    let (key, value) = pair.split_once("=\"").unwrap_or_else(|| panic!("{line:?}"));
                    assert!(valid_name(key), "bad label in {line:?}");
                    labels.insert(key.to_string(), value.trim_end_matches('"').to_string());
                }
                (name, labels)
            }
        };
        assert!(valid_name(name), "bad name in {line:?}");
        let family = ["_bucket", "_sum", "_count"]
            .iter()
            .find_map(|suffix| {
                name.strip_suffix(suffix)
                    .filter(|f| types.get(*f).is_some_and(|t| t == "histogram"))
            })
            .unwrap_or(name);
        assert!(types.contains_key(family), "{name} has no TYPE line");
        samples.push(Sample {
            name: name.to_string(),
            labels,
            value,
        });
    }
    samples
}

/// The sum of the samples named `name` whose labels include `labels`.
fn total(samples: &[Sample], name: &str, labels: &[(&str, &str)]) -> f64 {
    samples
        .iter()
        .filter(|s| s.name == name)
        .filter(|s| {
            labels
                .iter()
                .all(|(k, v)| s.labels.get(*k).map(String::as_str) == Some(*v))
        })
        .map(|s| s.value)
        .sum()
}

fn has(samples: &[Sample], name: &str) -> bool {
    samples.iter().any(|s| s.name == name)
}

/// GETs `path` from a status server; returns the body of a 200 answer.
fn http_get(address: SocketAddr, path: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\n\r\n").unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{path}: {head}");
    body.to_string()
}

fn scrape(address: SocketAddr) -> Vec<Sample> {
    parse_metrics(&http_get(address, "/metrics"))
}

/// sysbench's counts of a run: (reads, writes, transactions).
fn sysbench_counts(output: &str) -> (f64, f64, f64) {
    let figure = |label: &str| -> f64 {
        let line = output
            .lines()
            .find(|l| l.trim_start().starts_with(label))
            .unwrap_or_else(|| panic!("no {label} in {output}"));
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    (figure("read:"), figure("write:"), figure("transactions:"))
}

/// Prepares 2 small sysbench tables on `port` and runs oltp_read_write for 3 s.
fn sysbench_round(port: u16) -> (f64, f64, f64) {
    sql_at(port, None, "CREATE DATABASE sbtest");
    let prepare = sysbench_command(port, 2, 500)
        .args(["oltp_read_write", "prepare"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    sysbench_output(prepare, "prepare");
    let run = sysbench_command(port, 2, 500)
        .args(["oltp_read_write", "--threads=2", "--time=3", "run"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    sysbench_counts(&sysbench_output(run, "run"))
}

/// A playground with a status port of its own, and that port's address.
fn playground_with_status_port() -> (Playground, SocketAddr) {
    let status_port = free_port();
    let playground = Playground::start_with(&["--status-port", &status_port.to_string()]);
    let status = format!("127.0.0.1:{status_port}").parse().unwrap();
    (playground, status)
}

#[test]
fn the_playground_counts_what_sysbench_did() {
    let (playground, status) = playground_with_status_port();
    let before = scrape(status);
    assert!(has(&before, "strata_sql_statement_duration_seconds_bucket"));

    let (reads, writes, transactions) = sysbench_round(playground.port);
    assert!(reads > 0.0 && writes > 0.0, "sysbench did nothing");
    let after = scrape(status);
    let statements = |kind: &str| {
        total(
            &after,
            "strata_sql_statement_duration_seconds_count",
            &[("type", kind)],
        ) - total(
            &before,
            "strata_sql_statement_duration_seconds_count",
            &[("type", kind)],
        )
    };
    // sysbench's reads are SELECTs; its prepare sends none, and only one SELECT the client
    // may send at connect is not its.
    let selects = statements("select");
    assert!(
        selects >= reads && selects <= reads + 10.0,
        "{selects} SELECTs counted for sysbench's {reads} reads"
    );
    let (updates, deletes, inserts) = (
        statements("update"),
        statements("delete"),
        statements("insert"),
    );
    // The prepare inserts rows too (a few multi-row INSERTs).
    assert!(
        updates + deletes + inserts >= writes,
        "{updates} + {deletes} + {inserts} writes counted for sysbench's {writes}"
    );
    assert!(statements("commit") >= transactions);
    let commits = total(&after, "strata_txn_commit_duration_seconds_count", &[])
        - total(&before, "strata_txn_commit_duration_seconds_count", &[]);
    assert!(
        commits >= transactions,
        "{commits} commits for sysbench's {transactions} transactions"
    );
    let written = total(
        &after,
        "strata_rocksdb_events_total",
        &[("counter", "bytes_written")],
    );
    assert!(written > 100_000.0, "RocksDB wrote {written} bytes");
    assert!(total(&after, "process_resident_memory_bytes", &[]) > 10e6);
    assert!(total(&after, "process_cpu_seconds_total", &[]) > 0.0);

    // SHOW GLOBAL STATUS reads the same counters.
    let show = sql_at(
        playground.port,
        None,
        "SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_commit')",
    );
    let now = scrape(status);
    let metric = |kind: &str| {
        total(
            &now,
            "strata_sql_statement_duration_seconds_count",
            &[("type", kind)],
        )
    };
    assert_eq!(
        show,
        format!(
            "Variable_name\tValue\nCom_commit\t{}\nCom_select\t{}\n",
            metric("commit"),
            metric("select")
        )
    );

    // The statement summary counts sysbench's SELECTs exactly, by digest: its point select
    // (prepared, run ten times a transaction) is one group whatever the ids.
    let summary = sql_at(
        playground.port,
        None,
        "SELECT SUM(EXEC_COUNT), SUM(SUM_ERRORS) FROM information_schema.STATEMENTS_SUMMARY \
         WHERE STMT_TYPE = 'Select' AND DIGEST_TEXT LIKE '% from sbtest%'",
    );
    assert_eq!(
        summary,
        format!("SUM(EXEC_COUNT)\tSUM(SUM_ERRORS)\n{reads}\t0\n")
    );
    let point = sql_at(
        playground.port,
        None,
        "SELECT SCHEMA_NAME, EXEC_COUNT >= 10, LENGTH(DIGEST) FROM \
         information_schema.STATEMENTS_SUMMARY WHERE DIGEST_TEXT = \
         'select c from sbtest1 where id = ?'",
    );
    assert_eq!(
        point,
        "SCHEMA_NAME\tEXEC_COUNT >= 10\tLENGTH(DIGEST)\nsbtest\t1\t64\n"
    );

    let json: serde_json::Value = serde_json::from_str(&http_get(status, "/status")).unwrap();
    assert_eq!(json["role"], "playground");
    assert_eq!(json["version"], env!("CARGO_PKG_VERSION"));
    assert!(!json["git_hash"].as_str().unwrap().is_empty());
}

/// The first of `n` consecutive free loopback ports whose ports `offset` above are free too
/// (the default status ports of the roles on them).
fn free_ports_with_status(n: u16, offset: u16) -> u16 {
    let free = |port: u16| TcpListener::bind(("127.0.0.1", port)).is_ok();
    for _ in 0..200 {
        let first = free_port();
        let all = (0..n).all(|i| {
            first.checked_add(offset + i).is_some_and(free)
                && (i == 0 || first.checked_add(i).is_some_and(free))
        });
        if all {
            return first;
        }
    }
    panic!("no {n} free ports with free status ports");
}

#[test]
fn every_role_of_a_cluster_shows_its_metrics() {
    let temp = tempfile::tempdir().unwrap();
    let _logs = common::LogsOnPanic(temp.path().to_path_buf());
    let port = free_port();
    let status_port = free_port();
    let mut playground = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["playground", "--kv", "3", "--sql", "1"])
        .args(["--block-cache-mib", "64"])
        .args(["--port", &port.to_string()])
        .args(["--status-port", &status_port.to_string()])
        .args(["--pd-port", &free_ports_with_status(1, 100).to_string()])
        .args(["--kv-port", &free_ports_with_status(3, 20).to_string()])
        .arg("--data-dir")
        .arg(temp.path())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(temp.path().join("playground.err")).unwrap())
        .spawn()
        .unwrap();
    struct Stop(std::process::Child);
    impl Drop for Stop {
        fn drop(&mut self) {
            let _ = Command::new("kill")
                .args(["-TERM", &self.0.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(30);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.0.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let stdout = playground.stdout.take().unwrap();
    let _stop = Stop(playground);
    // The banner lists each role with its status address once they all listen.
    let lines = common::playground_banner(stdout);
    let status_of = |role: &str| -> SocketAddr {
        let line = lines
            .iter()
            .find(|l| l.trim_start().starts_with(&format!("{role} ")))
            .unwrap_or_else(|| panic!("{role} missing from {lines:?}"));
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("{role} has no status port: {line}"));
        url.trim_start_matches("http://")
            .trim_end_matches("/metrics")
            .parse()
            .unwrap()
    };
    assert_eq!(status_of("sql1").port(), status_port);

    let (reads, writes, _) = sysbench_round(port);
    assert!(reads > 0.0 && writes > 0.0, "sysbench did nothing");

    let sql = scrape(status_of("sql1"));
    let selects = total(
        &sql,
        "strata_sql_statement_duration_seconds_count",
        &[("type", "select")],
    );
    assert!(selects >= reads, "{selects} SELECTs for {reads} reads");
    assert!(total(&sql, "strata_txn_tso_wait_seconds_count", &[]) > 0.0);

    let pd = scrape(status_of("pd"));
    assert_eq!(total(&pd, "strata_pd_leader", &[]), 1.0);
    assert_eq!(total(&pd, "strata_pd_stores", &[("state", "up")]), 3.0);
    assert!(total(&pd, "strata_pd_regions", &[]) >= 1.0);
    assert!(total(&pd, "strata_pd_tso_requests_total", &[]) > 0.0);
    assert!(total(&pd, "strata_pd_region_leaders", &[]) >= 1.0);

    // The SQL node's dashboard shows the placement driver leading, the three stores up with
    // every region and its leader, and itself.
    let data: serde_json::Value =
        serde_json::from_str(&http_get(status_of("sql1"), "/dashboard/data")).unwrap();
    let members = data["members"].as_array().unwrap();
    let count = |role: &str, state: &str| {
        members
            .iter()
            .filter(|m| m["role"] == role && m["state"] == state)
            .count()
    };
    assert_eq!(
        (count("PD", "leader"), count("KV", "up"), count("SQL", "up")),
        (1, 3, 1),
        "{data}"
    );
    let stores = data["stores"].as_array().unwrap();
    assert_eq!(stores.len(), 3, "{data}");
    let regions = data["regions"].as_u64().unwrap();
    assert!(regions >= 1, "{data}");
    let leaders: u64 = stores.iter().map(|s| s["leaders"].as_u64().unwrap()).sum();
    assert_eq!(leaders, regions, "{data}");
    for store in stores {
        assert!(store["regions"].as_u64().unwrap() >= 1, "{data}");
    }

    let (mut prewrites, mut reads_served, mut leaders) = (0.0, 0.0, 0.0);
    let mut proposals_applied = 0.0;
    for kv in ["kv1", "kv2", "kv3"] {
        let samples = scrape(status_of(kv));
        // Every replica logs and applies the writes.
        assert!(total(&samples, "strata_raft_regions", &[]) >= 1.0, "{kv}");
        assert!(
            total(&samples, "raft_engine_write_duration_seconds_count", &[]) > 0.0,
            "{kv} wrote no Raft log"
        );
        assert!(
            total(
                &samples,
                "strata_rocksdb_events_total",
                &[("counter", "bytes_written")]
            ) > 0.0,
            "{kv} applied nothing"
        );
        assert!(
            total(&samples, "strata_raft_messages_sent_total", &[]) > 0.0,
            "{kv}"
        );
        prewrites += total(
            &samples,
            "strata_kv_command_duration_seconds_count",
            &[("command", "prewrite")],
        );
        reads_served += total(
            &samples,
            "strata_kv_command_duration_seconds_count",
            &[("command", "get")],
        ) + total(
            &samples,
            "strata_kv_command_duration_seconds_count",
            &[("command", "batch_get")],
        ) + total(
            &samples,
            "strata_kv_command_duration_seconds_count",
            &[("command", "scan")],
        ) + total(
            &samples,
            "strata_kv_command_duration_seconds_count",
            &[("command", "batch_scan")],
        );
        leaders += total(&samples, "strata_raft_leaders", &[]);
        // Each command a leader applied is timed to commit and from commit to apply (the
        // three are read one after the other while the node goes on: a few apart at most).
        let applied = total(
            &samples,
            "strata_raft_propose_apply_duration_seconds_count",
            &[],
        );
        for part in ["propose_commit", "commit_apply"] {
            let name = format!("strata_raft_{part}_duration_seconds_count");
            let timed = total(&samples, &name, &[]);
            assert!(
                (timed - applied).abs() <= 10.0,
                "{kv}: {timed} {name}, {applied} applied"
            );
        }
        proposals_applied += applied;
    }
    assert!(proposals_applied > 0.0, "no leader applied a command");
    assert!(
        prewrites >= writes / 4.0,
        "{prewrites} prewrites for {writes} writes"
    );
    assert!(reads_served > 0.0);
    assert!(leaders >= 1.0);

    // Every series the checked-in Grafana dashboard queries exists on some role, with the
    // label values its selectors name.
    let mut all = sql;
    all.extend(pd);
    for kv in ["kv1", "kv2", "kv3"] {
        all.extend(scrape(status_of(kv)));
    }
    let dashboard: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../deploy/grafana/strata.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let mut queried = 0;
    for panel in dashboard["panels"].as_array().unwrap() {
        for target in panel["targets"].as_array().into_iter().flatten() {
            let expr = target["expr"].as_str().unwrap();
            for (name, matchers) in selectors(expr) {
                queried += 1;
                assert!(
                    has(&all, &name),
                    "{name} (in {expr}) is on no role's /metrics"
                );
                for (label, values) in matchers {
                    for value in values {
                        assert!(
                            all.iter().any(|s| s.name == name
                                && s.labels.get(&label).map(String::as_str)
                                    == Some(value.as_str())),
                            "no {name}{{{label}=\"{value}\"}} (in {expr})"
                        );
                    }
                }
            }
        }
    }
    assert!(queried >= 40, "only {queried} series queried");
}

/// A selector's label matchers: each label with the values it may take.
type Matchers = Vec<(String, Vec<String>)>;

/// The metric names a PromQL expression selects, each with its label matchers (label and
/// the values an `=` or `=~` alternation names).
fn selectors(expr: &str) -> Vec<(String, Matchers)> {
    let mut found = Vec::new();
    let bytes = expr.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let mut i = 0;
    while i < bytes.len() {
        let starts = ["strata_", "raft_engine_", "process_"]
            .iter()
            .any(|p| expr[i..].starts_with(p))
            && (i == 0 || !word(bytes[i - 1]));
        if !starts {
            i += 1;
            continue;
        }
        let end = (i..bytes.len())
            .find(|&j| !word(bytes[j]))
            .unwrap_or(bytes.len());
        let name = expr[i..end].to_string();
        let mut matchers = Vec::new();
        i = end;
        if bytes.get(i) == Some(&b'{') {
            let close = i + expr[i..].find('}').unwrap();
            for matcher in expr[i + 1..close]
                .split(',')
                .filter(|m| !m.trim().is_empty())
            {
                let (label, value) = matcher.split_once('=').unwrap();
                let value = value.trim_start_matches('~').trim().trim_matches('"');
                matchers.push((
                    label.trim().to_string(),
                    value.split('|').map(str::to_string).collect(),
                ));
            }
            i = close + 1;
        }
        found.push((name, matchers));
    }
    found
}

/// `strata_sql_memory_bytes` shows what the running statements hold, the most one holds, and
/// the pool's limit as `tidb_server_memory_limit` sets it.
#[test]
fn the_memory_gauges_show_what_statements_hold() {
    let (p, status) = playground_with_status_port();
    p.sql(
        None,
        "CREATE DATABASE w; CREATE TABLE w.g (id INT PRIMARY KEY, pad VARCHAR(200))",
    );
    p.sql(
        Some("w"),
        "SET cte_max_recursion_depth = 20000; INSERT INTO g WITH RECURSIVE r(n) AS \
         (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 20000) \
         SELECT n, REPEAT('x', 180) FROM r",
    );
    p.sql(None, "SET GLOBAL tidb_server_memory_limit = 3000000000");
    let memory = |tracker: &str| {
        total(
            &scrape(status),
            "strata_sql_memory_bytes",
            &[("tracker", tracker)],
        )
    };
    assert_eq!(memory("limit"), 3e9);
    std::thread::scope(|scope| {
        // Holds every group, then sleeps on its first row.
        scope.spawn(|| {
            p.mariadb(
                Some("w"),
                "SELECT id, COUNT(*), SLEEP(IF(id = 1, 3, 0)) FROM g \
                 GROUP BY pad, id WITH ROLLUP LIMIT 1",
            )
        });
        let held = p.memory_of_sleeping("SLEEP(IF") as f64;
        assert!(held > 4e6, "it holds {held} bytes");
        let (statements, largest) = (memory("statements"), memory("largest_statement"));
        assert!(
            largest >= held && statements >= largest,
            "{held} held: {statements} reserved, {largest} the most"
        );
    });
    // Once it ended, what it reserved goes back (as its session finishes the statement).
    let deadline = Instant::now() + Duration::from_secs(10);
    while memory("statements") >= 4e6 {
        assert!(
            Instant::now() < deadline,
            "{} still reserved",
            memory("statements")
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn slow_statements_reach_the_slow_log_pt_query_digest_and_slow_query() {
    let playground = Playground::start();
    let log = playground.data_dir.join("slow.log");
    sql_at(
        playground.port,
        None,
        "CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY)",
    );
    // The default threshold is 300 ms: the sleep is logged, the rest is not.
    sql_at(
        playground.port,
        Some("shop"),
        "SELECT SLEEP(0.35) AS slept; SELECT COUNT(*) FROM t; INSERT INTO t VALUES (1)",
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert_eq!(text.matches("# Time: ").count(), 1, "{text}");
    assert!(text.contains("use shop;\n"), "{text}");
    assert!(text.contains("\nSELECT SLEEP(0.35) AS slept;"), "{text}");

    // A session's own threshold; a global switch turns logging off for everyone.
    sql_at(
        playground.port,
        Some("shop"),
        "SET SESSION long_query_time = 0; SELECT id FROM t WHERE id = 1",
    );
    sql_at(
        playground.port,
        None,
        "SET GLOBAL slow_query_log = OFF; SELECT SLEEP(0.35) AS unlogged",
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("\nSELECT id FROM t WHERE id = 1;"), "{text}");
    assert!(!text.contains("unlogged"), "{text}");
    sql_at(playground.port, None, "SET GLOBAL slow_query_log = ON");

    // pt-query-digest reads the file: the sleep with its time and database.
    let digest = Command::new("pt-query-digest")
        .args(["--output", "json", "--no-version-check"])
        .arg(&log)
        .output()
        .expect("pt-query-digest (percona-toolkit, installed by scripts/test.sh)");
    assert!(digest.status.success(), "{digest:?}");
    let report: serde_json::Value = serde_json::from_slice(&digest.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&digest.stdout)));
    let classes = report["classes"].as_array().unwrap();
    let sleep = classes
        .iter()
        .find(|c| {
            c["fingerprint"]
                .as_str()
                .unwrap()
                .starts_with("select sleep(?)")
        })
        .unwrap_or_else(|| panic!("no sleep among {classes:?}"));
    assert_eq!(sleep["query_count"], 1);
    let took: f64 = sleep["metrics"]["Query_time"]["max"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((0.35..2.0).contains(&took), "{took}");
    assert_eq!(sleep["metrics"]["db"]["value"], "shop");

    // And information_schema.SLOW_QUERY over it.
    let rows = sql_at(
        playground.port,
        None,
        "SELECT DB, Succ, Query_time >= 0.35, Query, User, Mem_max > 0 FROM \
         information_schema.SLOW_QUERY WHERE Query LIKE 'SELECT SLEEP%'",
    );
    assert_eq!(
        rows,
        "DB\tSucc\tQuery_time >= 0.35\tQuery\tUser\tMem_max > 0\n\
         shop\t1\t1\tSELECT SLEEP(0.35) AS slept;\troot\t1\n"
    );
    // A query of several statements (one COM_QUERY, as drivers send them): each is timed and
    // logged with its own text.
    {
        use mysql::prelude::Queryable;
        let mut conn =
            mysql::Conn::new(mysql::Opts::from_url(&playground.url("shop")).unwrap()).unwrap();
        conn.query_drop("SELECT 'first'; SELECT SLEEP(0.35) AS second;\n SELECT 'third'")
            .unwrap();
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("\nSELECT SLEEP(0.35) AS second;\n"), "{text}");
    assert!(!text.contains("first") && !text.contains("third"), "{text}");
    // The statement summary keeps the memory too: a sort of every row holds them all.
    sql_at(
        playground.port,
        Some("shop"),
        "INSERT INTO t VALUES (101), (102), (103), (104); SELECT id FROM t ORDER BY id DESC",
    );
    let memory = sql_at(
        playground.port,
        None,
        "SELECT MAX_MEM > 0, AVG_MEM > 0 FROM information_schema.STATEMENTS_SUMMARY \
         WHERE DIGEST_TEXT = 'select id from t order by id desc'",
    );
    assert_eq!(memory, "MAX_MEM > 0\tAVG_MEM > 0\n1\t1\n");

    // TiDB's transaction fields: the start timestamp of the statement's transaction, and the
    // read requests it sent itself (one scan of t's single region each), also inside a
    // transaction that read before it.
    sql_at(
        playground.port,
        Some("shop"),
        "SELECT COUNT(*), SLEEP(0.35) AS alone FROM t; BEGIN; SELECT COUNT(*) FROM t; \
         SELECT COUNT(*) FROM t; SELECT COUNT(*), SLEEP(0.35) AS in_txn FROM t; COMMIT",
    );
    let fields = sql_at(
        playground.port,
        None,
        "SELECT Txn_start_ts > 400000000000000000, Request_count, \
         KV_total > 0 AND KV_total < Query_time FROM \
         information_schema.SLOW_QUERY WHERE Query LIKE '%AS alone%' OR Query LIKE '%AS in_txn%' \
         ORDER BY Time",
    );
    assert_eq!(
        fields,
        "Txn_start_ts > 400000000000000000\tRequest_count\t\
         KV_total > 0 AND KV_total < Query_time\n1\t1\t1\n1\t1\t1\n"
    );
    // TiDB's key counts: the rows a scan returned (Process_keys) and the stored versions it
    // read to find them (Total_keys): row 1 has five versions, of which the scan reads the
    // newest and steps over three before it seeks past the rest; row 2 one; row 3 a deletion
    // over its first version.
    sql_at(
        playground.port,
        Some("shop"),
        "CREATE TABLE v (id INT PRIMARY KEY, n INT); INSERT INTO v VALUES (1, 0), (2, 0), (3, 0); \
         UPDATE v SET n = 1 WHERE id = 1; UPDATE v SET n = 2 WHERE id = 1; \
         UPDATE v SET n = 3 WHERE id = 1; UPDATE v SET n = 4 WHERE id = 1; \
         DELETE FROM v WHERE id = 3; SELECT SUM(n), SLEEP(0.35) AS versions FROM v",
    );
    let keys = sql_at(
        playground.port,
        None,
        "SELECT Process_keys, Total_keys FROM information_schema.SLOW_QUERY \
         WHERE Query LIKE '%AS versions%'",
    );
    assert_eq!(keys, "Process_keys\tTotal_keys\n2\t7\n");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        text.contains("# Request_count: 1  Total_keys: 7  Process_keys: 2  KV_total: "),
        "{text}"
    );
}

/// Runs headless Chromium on `url` with `--dump-dom` (the page's DOM once its scripts ran),
/// in a profile inside `scratch`, killing it after a minute.
fn chromium_dom(url: &str, scratch: &std::path::Path) -> String {
    let out = scratch.join("dom.html");
    let mut child = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--no-first-run",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!(
            "--user-data-dir={}",
            scratch.join("profile").display()
        ))
        .arg(url)
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run chromium ({e}); scripts/test.sh installs it (apt-get install chromium)"
            )
        });
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium failed: {status}");
            break;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium did not finish in a minute");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::fs::read_to_string(out).unwrap()
}

/// The value of attribute `name` of the element with `id` in `dom`.
fn attribute(dom: &str, id: &str, name: &str) -> String {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in {dom}"));
    let tag = &dom[dom[..at].rfind('<').unwrap()..];
    let tag = &tag[..tag.find('>').unwrap()];
    let start = tag
        .find(&format!(" {name}=\""))
        .unwrap_or_else(|| panic!("no {name} in {tag}"))
        + name.len()
        + 3;
    tag[start..start + tag[start..].find('"').unwrap()].to_string()
}

#[test]
fn the_dashboard_loads_in_headless_chromium_with_its_charts_holding_data() {
    let (playground, status) = playground_with_status_port();
    sql_at(
        playground.port,
        None,
        "CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY); \
         INSERT INTO shop.t VALUES (1), (2), (3)",
    );
    // Statements over more than one sampling interval (5 s), one of them slow.
    let started = Instant::now();
    let mut selects = 0;
    while started.elapsed() < Duration::from_secs(7) {
        sql_at(
            playground.port,
            Some("shop"),
            "SELECT COUNT(*) FROM t WHERE id IN (1, 2); SELECT COUNT(*) FROM t WHERE id IN (3)",
        );
        selects += 2;
    }
    sql_at(playground.port, None, "SELECT SLEEP(0.35)");

    let scratch = tempfile::tempdir().unwrap();
    let dom = chromium_dom(&format!("http://{status}/dashboard"), scratch.path());
    assert!(
        dom.contains("data-loaded="),
        "the page never read its data: {dom}"
    );
    // Both charts hold points, and the statements drew a rate above zero.
    for chart in ["qps-chart", "latency-chart"] {
        let points: usize = attribute(&dom, chart, "data-points").parse().unwrap();
        assert!(points >= 2, "{chart} has {points} points");
    }
    let peak: f64 = attribute(&dom, "qps-chart", "data-peak").parse().unwrap();
    assert!(peak > 0.0, "QPS peak {peak}");
    // The top statements name the SELECT of both IN lists as one statement, counted exactly.
    let row = dom
        .split("<tr class=\"row\">")
        .find(|r| r.contains("select count (*) from t where id in (...)"))
        .unwrap_or_else(|| panic!("no top statement row in {dom}"));
    assert!(
        row.contains(&format!("<td class=\"num\">{selects}</td>")),
        "{selects} SELECTs expected in {row}"
    );
    assert!(
        dom.contains("SELECT SLEEP(0.35)"),
        "slow query missing: {dom}"
    );
    assert!(dom.contains("<td class=\"up\">up</td>"), "{dom}");

    // The status port's index names the page.
    let answer = http_get(status, "/");
    assert!(answer.contains("/dashboard"), "{answer}");
}

#[test]
fn deadlocks_and_lock_wait_timeouts_are_counted_by_kind() {
    use mysql::prelude::Queryable;
    let (playground, status) = playground_with_status_port();
    sql_at(
        playground.port,
        None,
        "CREATE DATABASE shop; CREATE TABLE shop.t (id INT PRIMARY KEY, v INT); \
         INSERT INTO shop.t VALUES (1, 0), (2, 0)",
    );
    let conflicts = |kind: &str| {
        total(
            &scrape(status),
            "strata_sql_txn_conflict_errors_total",
            &[("kind", kind)],
        )
    };
    assert_eq!(conflicts("deadlock"), 0.0);
    let connect =
        || mysql::Conn::new(mysql::Opts::from_url(&playground.url("shop")).unwrap()).unwrap();
    let (mut a, mut b) = (connect(), connect());

    // A lock wait that times out.
    a.query_drop("BEGIN").unwrap();
    a.query_drop("UPDATE t SET v = 1 WHERE id = 1").unwrap();
    b.query_drop("SET innodb_lock_wait_timeout = 1").unwrap();
    let timeout = b.query_drop("UPDATE t SET v = 2 WHERE id = 1").unwrap_err();
    assert!(timeout.to_string().contains("1205"), "{timeout}");
    assert_eq!(conflicts("lock_wait_timeout"), 1.0);

    // A deadlock: each holds one row and asks for the other's.
    b.query_drop("SET innodb_lock_wait_timeout = 20").unwrap();
    b.query_drop("BEGIN").unwrap();
    b.query_drop("UPDATE t SET v = 2 WHERE id = 2").unwrap();
    let waiting = std::thread::spawn(move || {
        let result = a.query_drop("UPDATE t SET v = 1 WHERE id = 2");
        (a, result)
    });
    std::thread::sleep(Duration::from_millis(500));
    let second = b.query_drop("UPDATE t SET v = 2 WHERE id = 1");
    let (mut a, first) = waiting.join().unwrap();
    let outcomes = [first.is_err(), second.is_err()];
    assert_eq!(
        outcomes.iter().filter(|failed| **failed).count(),
        1,
        "one side loses: {first:?} {second:?}"
    );
    let lost = first.err().or(second.err()).unwrap();
    assert!(lost.to_string().contains("1213"), "{lost}");
    assert_eq!(conflicts("deadlock"), 1.0);
    let _ = a.query_drop("ROLLBACK");
    let _ = b.query_drop("ROLLBACK");
    assert!(has(&scrape(status), "strata_sql_statement_retries_total"));
}
