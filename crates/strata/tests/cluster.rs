//! A cluster of real processes on loopback: `strata pd`, `strata kv` and two `strata server`
//! SQL nodes talking gRPC. The SQL nodes share data and schema; the real sysbench runs on both
//! at once; a KV node killed with `kill -9` and restarted keeps every acknowledged commit; a
//! restarted placement driver keeps timestamps increasing.

mod common;

use std::process::Command;
use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{
    acked, assert_sbtest_rows, mariadb_at, spawn_sysbench, sql_at, sysbench_output, wait_for,
};
use mysql_async::prelude::Queryable;

#[test]
fn two_sql_nodes_share_data_and_schema() {
    let cluster = Cluster::start(1, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    sql_at(
        a,
        None,
        "CREATE DATABASE app; USE app; \
         CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20), KEY kv (v)); \
         INSERT INTO t VALUES (1, 'one'), (2, 'two'), (3, 'three')",
    );
    // The other node learns the new database and table by itself.
    wait_for(b, "SELECT COUNT(*) FROM app.t", "COUNT(*)\n3\n");
    sql_at(b, Some("app"), "INSERT INTO t VALUES (4, 'four')");
    sql_at(a, Some("app"), "UPDATE t SET v = 'FOUR' WHERE id = 4");
    assert_eq!(
        sql_at(b, Some("app"), "SELECT id, v FROM t WHERE v = 'FOUR'"),
        "id\tv\n4\tFOUR\n"
    );
    let duplicate = mariadb_at(b, Some("app"), "INSERT INTO t VALUES (1, 'again')");
    assert!(!duplicate.status.success());
    assert!(
        String::from_utf8_lossy(&duplicate.stderr).contains("1062"),
        "{}",
        String::from_utf8_lossy(&duplicate.stderr)
    );

    // Statistics gathered on one node are in force on the other when ANALYZE returns.
    sql_at(a, Some("app"), "ANALYZE TABLE t");
    assert_eq!(
        sql_at(
            b,
            None,
            "SELECT TABLE_ROWS FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = 'app' AND TABLE_NAME = 't'"
        ),
        "TABLE_ROWS\n4\n"
    );

    // Auto-increment ids allocated by both nodes never collide.
    sql_at(
        a,
        Some("app"),
        "CREATE TABLE seq (id BIGINT AUTO_INCREMENT PRIMARY KEY, node CHAR(1))",
    );
    wait_for(b, "SELECT COUNT(*) FROM app.seq", "COUNT(*)\n0\n");
    for _ in 0..5 {
        sql_at(a, Some("app"), "INSERT INTO seq (node) VALUES ('a')");
        sql_at(b, Some("app"), "INSERT INTO seq (node) VALUES ('b')");
    }
    assert_eq!(
        sql_at(
            a,
            Some("app"),
            "SELECT COUNT(DISTINCT id), COUNT(*) FROM seq"
        ),
        "COUNT(DISTINCT id)\tCOUNT(*)\n10\t10\n"
    );

    // A dropped table disappears from the other node too.
    sql_at(b, Some("app"), "DROP TABLE seq");
    wait_for(
        a,
        "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'app'",
        "COUNT(*)\n1\n",
    );
}

/// How long a DDL statement may take when no SQL node that reports lags: well under the
/// 10 s lease after which a silent node is no longer waited for.
const DDL_WITHOUT_WAITING: Duration = Duration::from_secs(5);

#[test]
fn ddl_waits_for_sql_nodes_that_report_and_not_for_one_that_stopped() {
    let mut cluster = Cluster::start(1, 3);
    let (a, b, c) = (
        cluster.sql[0].port,
        cluster.sql[1].port,
        cluster.sql[2].port,
    );
    // Used on another node the moment it returns, with no wait in between.
    sql_at(a, None, "CREATE DATABASE d");
    sql_at(b, None, "CREATE TABLE d.t (id INT PRIMARY KEY)");
    sql_at(c, None, "INSERT INTO d.t VALUES (1)");

    // A node stopped with SIGTERM withdraws its report: DDL does not wait out its lease.
    cluster.sql[2].stop();
    let started = Instant::now();
    sql_at(a, None, "CREATE TABLE d.u (id INT PRIMARY KEY)");
    let took = started.elapsed();
    assert!(
        took < DDL_WITHOUT_WAITING,
        "CREATE TABLE took {took:?} after a SQL node stopped:\n{}",
        cluster.logs()
    );
    sql_at(b, None, "INSERT INTO d.u VALUES (1)");

    // A node killed outright stops reporting; DDL goes on once its lease has run out.
    cluster.sql[1].kill9();
    sql_at(a, None, "CREATE TABLE d.v (id INT PRIMARY KEY)");
    sql_at(a, None, "INSERT INTO d.v VALUES (1)");
    assert_eq!(
        sql_at(a, Some("d"), "SELECT (SELECT COUNT(*) FROM t) + (SELECT COUNT(*) FROM u) + (SELECT COUNT(*) FROM v) AS n"),
        "n\n3\n"
    );
}

#[test]
fn concurrent_point_reads_each_get_their_own_row() {
    // Point reads travel many to a message on one stream per KV node, answered by number:
    // each of many concurrent readers must get exactly the row it asked for.
    let cluster = Cluster::start(1, 1);
    let port = cluster.sql[0].port;
    let values: Vec<String> = (1..=300).map(|i| format!("({i}, {})", i * 7)).collect();
    sql_at(
        port,
        None,
        &format!(
            "CREATE DATABASE r; CREATE TABLE r.t (id INT PRIMARY KEY, v INT); \
             INSERT INTO r.t VALUES {}",
            values.join(", ")
        ),
    );
    let runtime = common::runtime(2);
    let url = format!("mysql://root@127.0.0.1:{port}/r");
    let readers: Vec<_> = (0..8u64)
        .map(|reader| {
            let url = url.clone();
            runtime.spawn(async move {
                let mut conn = common::connect(&url).await.expect("connect");
                let statement = conn.prep("SELECT v FROM t WHERE id = ?").await.unwrap();
                for i in 0..400u64 {
                    let id = (reader * 131 + i * 17) % 300 + 1;
                    let v: Option<u64> = conn.exec_first(&statement, (id,)).await.unwrap();
                    assert_eq!(v, Some(id * 7), "reader {reader} asked for row {id}");
                }
            })
        })
        .collect();
    for reader in readers {
        runtime.block_on(reader).unwrap();
    }
}

/// Reads from `stream` until the peer closes it; panics if it has not within the test's bound.
fn assert_closed_by_peer(stream: &mut std::net::TcpStream, what: &str) {
    use std::io::Read;
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return,
            Err(e) => panic!("{what}: the KV node did not close the connection: {e}"),
        }
    }
}

#[test]
fn the_point_read_connection_answers_its_frames_and_closes_on_bad_ones() {
    // Point reads reach a KV node on connections of their own to its gRPC port, told apart by
    // their first bytes (`strata_proto::frame`). A good batch gets its answer; a bad frame
    // or bytes that are neither kind close the connection, and the node keeps serving both.
    use std::io::Write;
    use strata_proto::frame::{decode_frame, encode_frame, READ_STREAM_PREFACE};
    use strata_proto::kv as pb;

    let cluster = Cluster::start(1, 1);
    let port = cluster.sql[0].port;
    sql_at(
        port,
        None,
        "CREATE DATABASE f; CREATE TABLE f.t (id INT PRIMARY KEY, v INT); \
         INSERT INTO f.t VALUES (1, 10)",
    );
    let kv = std::net::SocketAddr::from(([127, 0, 0, 1], cluster.kv[0].port));

    // A batch for a region the node does not hold: the answer comes back, tagged, with a
    // region error.
    let mut stream = std::net::TcpStream::connect(kv).unwrap();
    let mut bytes = READ_STREAM_PREFACE.to_vec();
    let batch = pb::GetBatch {
        gets: vec![pb::TaggedGet {
            id: 41,
            request: Some(pb::GetRequest {
                context: Some(pb::Context {
                    region_id: 999_999,
                    ..Default::default()
                }),
                key: b"k".to_vec(),
                ts: 1,
            }),
        }],
    };
    encode_frame(&batch, &mut bytes);
    stream.write_all(&bytes).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut received = Vec::new();
    let answers = loop {
        if let Some((answers, _)) = decode_frame::<pb::GetAnswers>(&received).unwrap() {
            break answers;
        }
        let mut chunk = [0u8; 4096];
        let n = std::io::Read::read(&mut stream, &mut chunk).expect("an answer in time");
        assert!(n > 0, "the KV node closed the connection without answering");
        received.extend_from_slice(&chunk[..n]);
    };
    assert_eq!(answers.answers.len(), 1, "{answers:?}");
    assert_eq!(answers.answers[0].id, 41);
    let error = answers.answers[0]
        .response
        .as_ref()
        .and_then(|r| r.error.as_ref());
    assert!(
        matches!(
            error.and_then(|e| e.kind.as_ref()),
            Some(pb::error::Kind::Region(_))
        ),
        "{answers:?}"
    );

    // A frame longer than any message, a frame that is not a batch, and bytes that are
    // neither a point-read connection nor HTTP/2.
    let too_long = [&READ_STREAM_PREFACE[..], &u32::MAX.to_le_bytes()].concat();
    let malformed = [&READ_STREAM_PREFACE[..], &[3, 0, 0, 0, 0xff, 0xff, 0xff]].concat();
    let neither = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec();
    for (what, bytes) in [
        ("too long", too_long),
        ("malformed", malformed),
        ("neither", neither),
    ] {
        let mut stream = std::net::TcpStream::connect(kv).unwrap();
        stream.write_all(&bytes).unwrap();
        assert_closed_by_peer(&mut stream, what);
    }

    // The SQL node's own point reads, and its gRPC writes, still go through.
    sql_at(port, Some("f"), "UPDATE t SET v = 11 WHERE id = 1");
    assert_eq!(
        sql_at(port, Some("f"), "SELECT v FROM t WHERE id = 1"),
        "v\n11\n"
    );
}

#[test]
fn statements_that_hold_a_lock_across_a_wait_do_not_stall_the_sql_node() {
    // The SQL node runs its connections as fibers on one thread. An auto-increment batch is
    // reserved (a transaction) with the table's allocator locked, and a DDL statement holds
    // the node's DDL lock while it waits for the cluster. Many connections of a node that
    // has reserved nothing yet insert at the same moment, and two create tables at once,
    // while another reads: if a lock held across a wait blocked the thread, all would stall.
    let cluster = Cluster::start(1, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    sql_at(
        a,
        None,
        "CREATE DATABASE f; CREATE TABLE f.t (id BIGINT AUTO_INCREMENT PRIMARY KEY, w INT); \
         CREATE TABLE f.r (id INT PRIMARY KEY, v INT); INSERT INTO f.r VALUES (1, 10)",
    );
    wait_for(b, "SELECT v FROM f.r WHERE id = 1", "v\n10\n");
    let runtime = common::runtime(2);
    let url = format!("mysql://root@127.0.0.1:{b}/f");
    let writers = 8u64;
    let start = std::sync::Arc::new(tokio::sync::Barrier::new(writers as usize + 3));
    let mut tasks = Vec::new();
    for writer in 0..writers {
        let (url, start) = (url.clone(), start.clone());
        tasks.push(runtime.spawn(async move {
            let mut conn = common::connect(&url).await.expect("connect");
            start.wait().await;
            for i in 0..20u64 {
                // Odd writers name their ids (which rebases the allocator), even ones not.
                // Named ids descend, a thousand apart per writer, so that the generated ones
                // (above the highest named so far) never meet a later named one.
                let sql = if writer % 2 == 1 {
                    let id = 1_000_000_000 - writer * 1_000 - i;
                    format!("INSERT INTO t VALUES ({id}, {writer})")
                } else {
                    format!("INSERT INTO t (w) VALUES ({writer})")
                };
                conn.query_drop(sql).await.expect("insert");
            }
        }));
    }
    for table in ["d1", "d2"] {
        let (url, start) = (url.clone(), start.clone());
        tasks.push(runtime.spawn(async move {
            let mut conn = common::connect(&url).await.expect("connect");
            start.wait().await;
            conn.query_drop(format!("CREATE TABLE {table} (id INT PRIMARY KEY)"))
                .await
                .expect("create table");
        }));
    }
    let (url_r, start_r) = (url.clone(), start.clone());
    tasks.push(runtime.spawn(async move {
        let mut conn = common::connect(&url_r).await.expect("connect");
        start_r.wait().await;
        for _ in 0..200 {
            let v: Option<u64> = conn
                .query_first("SELECT v FROM r WHERE id = 1")
                .await
                .unwrap();
            assert_eq!(v, Some(10));
        }
    }));
    let deadline = Duration::from_secs(60);
    for task in tasks {
        runtime
            .block_on(async { tokio::time::timeout(deadline, task).await })
            .expect("a connection of the SQL node stalled")
            .unwrap();
    }
    assert_eq!(
        sql_at(a, Some("f"), "SELECT COUNT(*), COUNT(DISTINCT id) FROM t"),
        "COUNT(*)\tCOUNT(DISTINCT id)\n160\t160\n"
    );
    assert_eq!(
        sql_at(b, Some("f"), "SHOW TABLES LIKE 'd%'"),
        "Tables_in_f (d%)\nd1\nd2\n"
    );
}

#[test]
fn sysbench_runs_on_both_sql_nodes_at_once() {
    let cluster = Cluster::start(1, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    sql_at(a, None, "CREATE DATABASE sbtest");
    wait_for(
        b,
        "SHOW DATABASES LIKE 'sbtest'",
        "Database (sbtest)\nsbtest\n",
    );
    sysbench_output(spawn_sysbench(a, &["oltp_common", "prepare"]), "prepare");
    wait_for(b, "SELECT COUNT(*) FROM sbtest.sbtest2", "COUNT(*)\n2000\n");
    let common = ["--threads=8", "--time=5"];
    let read_write = spawn_sysbench(a, &[&common[..], &["oltp_read_write", "run"]].concat());
    let update_index = spawn_sysbench(b, &[&common[..], &["oltp_update_index", "run"]].concat());
    let out_a = sysbench_output(read_write, "oltp_read_write on node 1");
    let out_b = sysbench_output(update_index, "oltp_update_index on node 2");
    for out in [&out_a, &out_b] {
        let transactions: u64 = out
            .lines()
            .find(|l| l.trim_start().starts_with("transactions:"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no summary:\n{out}"));
        assert!(transactions > 0, "{out}");
    }
    // read_write deletes and re-inserts the same id in one transaction: counts stay.
    assert_sbtest_rows(&[a, b], 2000);
}

#[test]
fn a_kv_node_killed_and_restarted_keeps_every_acknowledged_commit() {
    let mut cluster = Cluster::start(1, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    acked::create_table(a, b);
    let inserters = acked::Inserters::start(a, 4, Instant::now());
    std::thread::sleep(Duration::from_millis(1500));
    cluster.kv[0].kill9();
    std::thread::sleep(Duration::from_millis(500));
    cluster.kv[0].start();
    std::thread::sleep(Duration::from_millis(1500));
    let outcome = inserters.stop();
    let acknowledged = outcome.ids();
    assert!(!acknowledged.is_empty(), "{}", cluster.logs());
    // Every acknowledged row is there, and no refused one, read through the other SQL node.
    acked::assert_present(b, &outcome);
    println!(
        "{} inserts acknowledged across the kill; all present",
        acknowledged.len()
    );
}

#[test]
fn a_restarted_placement_driver_keeps_timestamps_increasing() {
    let mut cluster = Cluster::start(1, 1);
    let port = cluster.sql[0].port;
    sql_at(
        port,
        None,
        "CREATE DATABASE p; CREATE TABLE p.t (id INT PRIMARY KEY, v INT); \
         INSERT INTO p.t VALUES (1, 1)",
    );
    cluster.pd[0].kill9();
    cluster.pd[0].start();
    // Writes after the restart get later timestamps, so they are seen and nothing conflicts.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let out = mariadb_at(port, Some("p"), "UPDATE t SET v = 2 WHERE id = 1");
        if out.status.success() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no write after the PD restart: {}\n{}",
            String::from_utf8_lossy(&out.stderr),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    sql_at(port, Some("p"), "INSERT INTO t VALUES (2, 2)");
    assert_eq!(
        sql_at(port, Some("p"), "SELECT id, v FROM t ORDER BY id"),
        "id\tv\n1\t2\n2\t2\n"
    );
}

/// A free port whose successor is free too (a local cluster's SQL nodes take consecutive ports).
/// The first of `n` consecutive free ports.
fn free_ports(n: u16) -> u16 {
    for _ in 0..100 {
        let port = common::free_port();
        let rest_free = (1..n).all(|i| {
            port.checked_add(i)
                .is_some_and(|p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok())
        });
        if rest_free {
            return port;
        }
    }
    panic!("no {n} consecutive free ports");
}

#[test]
fn playground_starts_a_local_cluster_and_stops_it_on_sigterm() {
    let temp = tempfile::tempdir().unwrap();
    let _logs = common::LogsOnPanic(temp.path().to_path_buf());
    let port = free_ports(2);
    let mut playground = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args([
            "playground",
            "--kv",
            "3",
            "--sql",
            "2",
            "--block-cache-mib",
            "64",
        ])
        .args(["--port", &port.to_string()])
        .args(["--pd-port", &common::free_port().to_string()])
        .args(["--kv-port", &free_ports(3).to_string()])
        .arg("--data-dir")
        .arg(temp.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(temp.path().join("playground.err")).unwrap())
        .spawn()
        .unwrap();
    // The banner lists every role once they all listen.
    let lines = common::playground_banner(playground.stdout.take().unwrap());
    for role in ["pd", "kv1", "kv2", "kv3", "sql1", "sql2"] {
        assert!(
            lines.iter().any(|l| l.trim_start().starts_with(role)),
            "{role} missing from {lines:?}"
        );
    }
    sql_at(
        port,
        None,
        "CREATE DATABASE pg; CREATE TABLE pg.t (id INT PRIMARY KEY)",
    );
    wait_for(port + 1, "SELECT COUNT(*) FROM pg.t", "COUNT(*)\n0\n");
    // Both SQL nodes encrypt caching_sha2_password logins for the one key pair of the data
    // folder.
    let public_key = std::fs::read_to_string(temp.path().join("cluster/public_key.pem")).unwrap();
    for p in [port, port + 1] {
        assert_eq!(
            sql_at(
                p,
                None,
                "SHOW STATUS LIKE 'Caching_sha2_password_rsa_public_key'"
            ),
            format!(
                "Variable_name\tValue\nCaching_sha2_password_rsa_public_key\t{}\n",
                public_key.replace('\n', "\\n")
            )
        );
    }

    Command::new("kill")
        .args(["-TERM", &playground.id().to_string()])
        .status()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = playground.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the playground did not stop");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "{status}");
    // Every role stopped by itself: none had to be killed. (Long-lived streams between the
    // KV nodes once kept their servers waiting for each other.)
    let errors = std::fs::read_to_string(temp.path().join("playground.err")).unwrap();
    assert!(!errors.contains("did not stop"), "{errors}");
    // And cleanly: no role panicked on the way out. (A KV node once dropped its RPC runtime
    // from a task of that runtime.)
    for role in ["pd", "kv1", "kv2", "kv3", "sql1", "sql2"] {
        let log = temp.path().join(format!("cluster/logs/{role}.log"));
        let log = std::fs::read_to_string(&log).unwrap_or_else(|e| panic!("{log:?}: {e}"));
        assert!(!log.contains("panicked"), "{role} panicked:\n{log}");
    }
    // Its children are gone too: nothing listens on the SQL ports any more.
    for p in [port, port + 1] {
        assert!(
            std::net::TcpStream::connect(("127.0.0.1", p)).is_err(),
            "port {p} still answers"
        );
    }
}

/// The processes whose command line mentions `needle`, as (pid, command line).
fn processes_mentioning(needle: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) {
            found.push((pid, cmdline));
        }
    }
    found
}

/// `strata playground --kv 3` on the given ports with its data in `data`.
fn local_cluster(data: &str, port: u16, pd_port: u16, kv_port: u16) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_strata"));
    command
        .args([
            "playground",
            "--kv",
            "3",
            "--sql",
            "1",
            "--block-cache-mib",
            "64",
        ])
        .args(["--port", &port.to_string()])
        .args(["--pd-port", &pd_port.to_string()])
        .args(["--kv-port", &kv_port.to_string()])
        .args(["--data-dir", data]);
    command
}

#[test]
fn a_killed_playground_leaves_no_process_of_its_cluster() {
    let temp = tempfile::tempdir().unwrap();
    let data = temp.path().display().to_string();
    let (port, pd_port, kv_port) = (free_ports(1), common::free_port(), free_ports(3));
    let mut playground = local_cluster(&data, port, pd_port, kv_port)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !mariadb_at(port, None, "SELECT 1").status.success() {
        assert!(Instant::now() < deadline, "the cluster did not answer");
        assert!(
            playground.try_wait().unwrap().is_none(),
            "the playground exited"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The playground and its five roles.
    assert_eq!(
        processes_mentioning(&data).len(),
        6,
        "{:?}",
        processes_mentioning(&data)
    );

    // A second local cluster on the same ports fails at once, naming the first port it finds
    // taken and who holds it, and starts nothing.
    let other = tempfile::tempdir().unwrap();
    let other_data = other.path().display().to_string();
    let started = Instant::now();
    let second = local_cluster(&other_data, port, pd_port, kv_port)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&second.stderr);
    assert!(!second.status.success(), "{stderr}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(
        stderr.contains(&format!(
            "port {pd_port} (127.0.0.1:{pd_port}) is taken by process"
        )) && stderr.contains("strata pd")
            && stderr.contains("--port-offset"),
        "{stderr}"
    );
    assert!(processes_mentioning(&other_data).is_empty());

    playground.kill().unwrap();
    playground.wait().unwrap();
    let killed = Instant::now();
    while !processes_mentioning(&data).is_empty() {
        assert!(
            killed.elapsed() < Duration::from_secs(2),
            "left behind: {:?}",
            processes_mentioning(&data)
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    // (Their ports went with them; the tests running alongside may take those ports next, so
    // connecting to them says nothing.)
    eprintln!(
        "the cluster's processes were gone {:?} after the kill",
        killed.elapsed()
    );
}

/// Updates of the row that the garbage collector test makes.
const GC_UPDATES: usize = 100;
/// Rows of the garbage collector test's table, enough for a few regions of
/// [`GC_SPLIT_KEYS`] keys.
const GC_ROWS: usize = 300;
const GC_SPLIT_KEYS: &str = "100";

#[test]
fn old_versions_are_collected_on_every_replica() {
    let mut cluster = Cluster::start_with(
        3,
        1,
        &[
            "--gc-life-time-secs",
            "1",
            "--gc-interval-secs",
            "1",
            "--region-split-keys",
            GC_SPLIT_KEYS,
        ],
    );
    let port = cluster.sql[0].port;
    let rows: Vec<String> = (1..=GC_ROWS).map(|i| format!("({i}, 0)")).collect();
    sql_at(
        port,
        None,
        &format!(
            "CREATE DATABASE gc; USE gc; CREATE TABLE t (id INT PRIMARY KEY, v INT); \
             INSERT INTO t VALUES {}",
            rows.join(", ")
        ),
    );
    // A pass collects several regions, each through its own leader.
    let deadline = Instant::now() + Duration::from_secs(60);
    while cluster.regions().len() < 3 {
        assert!(Instant::now() < deadline, "the table did not split");
        std::thread::sleep(Duration::from_millis(200));
    }
    let updates: String = (1..=GC_UPDATES)
        .map(|i| {
            format!("UPDATE t SET v = {i} WHERE id = 1; UPDATE t SET v = {i} WHERE id = {GC_ROWS};")
        })
        .collect();
    sql_at(port, Some("gc"), &updates);
    sql_at(port, Some("gc"), "DELETE FROM t WHERE id = 2");
    // The versions fall behind the safe point after a second; passes run every second.
    std::thread::sleep(Duration::from_secs(8));
    assert_eq!(
        sql_at(
            port,
            Some("gc"),
            &format!(
                "SELECT COUNT(*), SUM(v) FROM t; SELECT v FROM t WHERE id IN (1, 2, {GC_ROWS})"
            )
        ),
        format!(
            "COUNT(*)\tSUM(v)\n{}\t{}\nv\n{GC_UPDATES}\n{GC_UPDATES}\n",
            GC_ROWS - 1,
            2 * GC_UPDATES
        ),
        "the newest versions survive collection"
    );
    for kv in &mut cluster.kv {
        kv.stop();
    }
    for i in 1..=cluster.kv.len() {
        let most = most_versions_of_a_key(&cluster.data_dir().join(format!("kv{i}/kv")));
        assert!(
            most < 10,
            "KV node {i} still holds {most} versions of one key after {GC_UPDATES} updates of it"
        );
    }
}

/// The SQL statements of a transaction that outlives the GC life time of
/// [`long_transaction_under_gc`], with its answers.
const LONG_TRANSACTION: &str =
    "BEGIN; SELECT v FROM t WHERE id = 1; SELECT SLEEP(6); SELECT v FROM t WHERE id = 1; COMMIT";

/// Runs [`LONG_TRANSACTION`] on a 1-KV cluster whose GC life time is 2 s, while another
/// session makes the version it reads old: passes every second would collect that version
/// 2 s after the update, mid-transaction. Returns the transaction's output and errors.
fn long_transaction_under_gc(kv_args: &[&str]) -> (String, String) {
    let mut args = vec!["--gc-life-time-secs", "2", "--gc-interval-secs", "1"];
    args.extend_from_slice(kv_args);
    let cluster = Cluster::start_with(1, 1, &args);
    let port = cluster.sql[0].port;
    sql_at(
        port,
        None,
        "CREATE DATABASE old; USE old; CREATE TABLE t (id INT PRIMARY KEY, v INT); \
         INSERT INTO t VALUES (1, 0); UPDATE t SET v = 1",
    );
    let long = std::thread::spawn(move || mariadb_at(port, Some("old"), LONG_TRANSACTION));
    std::thread::sleep(Duration::from_millis(1500));
    sql_at(port, Some("old"), "UPDATE t SET v = 2");
    let out = long.join().unwrap();
    assert_eq!(sql_at(port, Some("old"), "SELECT v FROM t"), "v\n2\n");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_long_transaction_holds_garbage_collection_back() {
    // The SQL node reports the transaction's snapshot; the safe point waits for it.
    let (stdout, stderr) = long_transaction_under_gc(&[]);
    assert_eq!(stdout, "v\n1\nSLEEP(6)\n0\nv\n1\n", "{stderr}");
}

#[test]
fn a_transaction_that_outlives_the_longest_gc_wait_fails() {
    // The safe point waits 2 s at most: it passes the update while the transaction sleeps,
    // and the pass collects the version the transaction would read. Without the refusal its
    // next read finds no version of the row and returns nothing.
    let (stdout, stderr) = long_transaction_under_gc(&["--gc-max-wait-secs", "2"]);
    assert_eq!(stdout, "v\n1\nSLEEP(6)\n0\n", "{stderr}");
    assert!(
        stderr.contains("ERROR 9006 (HY000)")
            && stderr.contains("GC life time is shorter than transaction duration"),
        "{stderr}"
    );
}

/// The most versions any one key has in the write column family of the store in `dir`.
fn most_versions_of_a_key(dir: &std::path::Path) -> usize {
    use strata_engine::{Cf, Engine, RocksEngine, RocksOptions};
    let engine = RocksEngine::open(dir, &RocksOptions::default()).expect("open a stopped store");
    let mut it = engine.iterator(Cf::Write, b"", None);
    it.seek(b"");
    let (mut most, mut run, mut current) = (0, 0, Vec::new());
    while it.valid().expect("read the write column family") {
        let (user, _) = strata_kv::mvcc::split_versioned_key(it.key()).expect("a versioned key");
        if user != current.as_slice() {
            current = user.to_vec();
            run = 0;
        }
        run += 1;
        most = most.max(run);
        it.next();
    }
    most
}

/// Rows in each table of the fairness test: its join evaluates this many squared pairs.
const FAIR_ROWS: usize = 4000;

#[test]
fn a_long_statement_does_not_hold_up_the_other_connections_of_its_thread() {
    let cluster = Cluster::start(1, 1);
    // SQL node 1 runs every connection on one fiber thread.
    let port = cluster.sql[0].port;
    let values = |column_offset: usize| -> String {
        (1..=FAIR_ROWS)
            .map(|i| format!("({i}, {})", i + column_offset))
            .collect::<Vec<_>>()
            .join(", ")
    };
    sql_at(
        port,
        None,
        &format!(
            "CREATE DATABASE fair; USE fair; \
             CREATE TABLE a (id INT PRIMARY KEY, x INT); CREATE TABLE b (id INT PRIMARY KEY, y INT); \
             INSERT INTO a VALUES {}; INSERT INTO b VALUES {}",
            values(0),
            values(7)
        ),
    );
    // Both sides are read once into memory, and no pair matches: the join compares every
    // pair without a request to the KV node.
    let long = std::thread::spawn(move || {
        let started = Instant::now();
        let out = sql_at(
            port,
            Some("fair"),
            "SELECT COUNT(*) FROM (SELECT x FROM a) p JOIN (SELECT y FROM b) q ON p.x + q.y = -1",
        );
        (out, started.elapsed())
    });
    let mut slowest = Duration::ZERO;
    while !long.is_finished() {
        let started = Instant::now();
        assert_eq!(sql_at(port, None, "SELECT 1"), "1\n1\n");
        slowest = slowest.max(started.elapsed());
    }
    let (out, took) = long.join().unwrap();
    eprintln!("the join took {took:?}; the slowest SELECT 1 beside it {slowest:?}");
    assert_eq!(out, "COUNT(*)\n0\n");
    assert!(
        took > Duration::from_secs(1),
        "the long statement took only {took:?}: too short to show anything"
    );
    assert!(
        slowest < Duration::from_millis(500) && slowest < took / 2,
        "a SELECT 1 beside a {took:?} join took {slowest:?}"
    );
}

#[test]
fn a_kv_node_refuses_the_placement_drivers_of_another_cluster() {
    let mut mine = Cluster::start(1, 0);
    let other = Cluster::start(1, 0);
    mine.kv[0].stop();
    let data = mine.dir.join("kv1");
    let cluster_id = std::fs::read_to_string(data.join("cluster-id")).unwrap();
    assert!(
        cluster_id.trim().parse::<u64>().unwrap() > 0,
        "{cluster_id}"
    );

    let port = common::free_port();
    let mut wrong = Command::new(env!("CARGO_BIN_EXE_strata"))
        .args(["kv", "--pd", &other.pd_address])
        .args(["--listen", &format!("127.0.0.1:{port}")])
        .arg("--data-dir")
        .arg(&data)
        .args(["--block-cache-mib", "64"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = wrong.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(20) {
            wrong.kill().unwrap();
            wrong.wait().unwrap();
            panic!("a KV node joined another cluster's placement drivers");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut wrong.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.success());
    assert!(
        stderr.contains(&format!("holds data of cluster {}", cluster_id.trim()))
            && stderr.contains("a store joins only its own cluster"),
        "{stderr}"
    );
    eprintln!("refused in {:?}: {}", started.elapsed(), stderr.trim());
    // Its own cluster still takes it.
    mine.kv[0].start();
}
