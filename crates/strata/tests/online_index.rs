//! CREATE INDEX on a loaded table while writers keep updating, inserting and deleting rows:
//! afterwards the index holds exactly one entry per row, with the row's current value. On the
//! playground, and on a cluster where the writers use one SQL node and the index is created
//! through the other.

mod common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::cluster::Cluster;
use common::{bounded, connect, sql_at, Playground};
use mysql_async::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const ROWS: u64 = 20_000;
const WRITERS: u64 = 4;

#[test]
fn create_index_while_writes_continue() {
    let p = Playground::start();
    index_built_while_writes_continue(p.port, p.port, ROWS);
}

#[test]
fn create_index_on_one_sql_node_while_another_writes() {
    let cluster = Cluster::start(1, 2);
    // The writers' node plans with the schema it has loaded: the index creation must wait
    // until that node maintains the new index before it backfills.
    index_built_while_writes_continue(cluster.sql[0].port, cluster.sql[1].port, ROWS / 4);
}

fn url(port: u16) -> String {
    format!("mysql://root@127.0.0.1:{port}/o")
}

/// Creates the table through `ddl_port` and loads `rows` rows through `writer_port`, then
/// creates the index through `ddl_port` while writers change rows through `writer_port`, and
/// checks the index against the table.
fn index_built_while_writes_continue(ddl_port: u16, writer_port: u16, rows: u64) {
    // No wait between the nodes: a DDL statement returns once every SQL node has loaded it.
    sql_at(ddl_port, None, "CREATE DATABASE o");
    sql_at(
        ddl_port,
        Some("o"),
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20))",
    );
    common::insert_rows(writer_port, "o", "t", rows, |i| {
        format!("{i}, {}, 'r{i}'", i % 97)
    });
    let seed = common::test_seed("online_index");
    let (url, ddl_url) = (url(writer_port), url(ddl_port));
    let runtime = common::runtime(2);
    runtime.block_on(async move {
        let stop = Arc::new(AtomicBool::new(false));
        let writes = Arc::new(AtomicU64::new(0));
        let mut tasks = Vec::new();
        for w in 0..WRITERS {
            let (stop, writes, url) = (stop.clone(), writes.clone(), url.clone());
            tasks.push(tokio::spawn(async move {
                let mut rng = StdRng::seed_from_u64(seed.wrapping_add(w));
                let mut conn = connect(&url).await.expect("connect");
                let mut next_id = rows + 1 + w * 1_000_000;
                while !stop.load(Ordering::SeqCst) {
                    let id = rng.gen_range(1..=rows);
                    let result = match rng.gen_range(0..4) {
                        0 | 1 => {
                            bounded(conn.exec_drop(
                                "UPDATE t SET k = k + ? WHERE id = ?",
                                (rng.gen_range(1..5), id),
                            ))
                            .await
                        }
                        2 => {
                            next_id += 1;
                            bounded(conn.exec_drop(
                                "INSERT INTO t VALUES (?, ?, 'new')",
                                (next_id, rng.gen_range(0..97)),
                            ))
                            .await
                        }
                        _ => bounded(conn.exec_drop("DELETE FROM t WHERE id = ?", (id,))).await,
                    };
                    match result {
                        Ok(()) => {
                            writes.fetch_add(1, Ordering::Relaxed);
                        }
                        // Lock waits against the backfill may time out or deadlock; that is allowed.
                        Err(e) if matches!(e.server_code(), Some(1205) | Some(1213)) => {}
                        Err(e) => panic!("writer {w}: {e}"),
                    }
                }
            }));
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let before = writes.load(Ordering::SeqCst);
        let mut ddl = connect(&ddl_url).await.expect("connect");
        tokio::time::timeout(
            Duration::from_secs(120),
            ddl.query_drop("CREATE INDEX k_idx ON t (k)"),
        )
        .await
        .expect("CREATE INDEX finishes")
        .expect("CREATE INDEX succeeds");
        let during = writes.load(Ordering::SeqCst) - before;
        tokio::time::sleep(Duration::from_millis(300)).await;
        stop.store(true, Ordering::SeqCst);
        for t in tasks {
            t.await.unwrap();
        }
        println!("writes while the index was built: {during}");
        assert!(
            during > 0,
            "writers made progress while the index was built"
        );

        let explain: Vec<(String, String, String, String, String)> = ddl
            .query("EXPLAIN SELECT id, k FROM t WHERE k BETWEEN -1 AND 1000000000")
            .await
            .unwrap();
        assert!(
            explain
                .iter()
                .any(|(_, _, _, access, _)| access.contains("k_idx")),
            "{explain:?}"
        );
        let mut by_index: Vec<(i64, i64)> = ddl
            .query("SELECT id, k FROM t WHERE k BETWEEN -1 AND 1000000000")
            .await
            .unwrap();
        let by_table: Vec<(i64, i64)> = ddl.query("SELECT id, k FROM t ORDER BY id").await.unwrap();
        by_index.sort();
        assert_eq!(by_index.len(), by_table.len(), "one index entry per row");
        assert_eq!(
            by_index, by_table,
            "every entry carries its row's current value"
        );
    });
}
