//! ALTER TABLE on a table that is being written: a column is added, another dropped, a third
//! widened, and an index made over the new column and the widened one, while clients keep
//! incrementing, setting the new column and inserting. Afterwards no write is lost: every row's counter equals the
//! increments acknowledged for it, the new column holds the last value acknowledged (or its
//! default), every acknowledged insert is there, and the new index agrees with the table.
//!
//! On a cluster the incrementers and the inserter use one SQL node while the ALTERs and the
//! setter use the other. The incrementers' node may still plan with the older schema while the
//! setter's node writes the new column: had the column been public at once, their rewrites of
//! a row would drop the value the setter wrote. And while the index is made, the setter's node
//! writes its entries before the incrementers' node knows of it: had the index gone straight
//! to being written, an increment planned without it would leave the setter's entry behind.

mod common;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::cluster::Cluster;
use common::{bounded, connect, sql_at, ClientError, Playground};
use mysql_async::prelude::Queryable;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const INCREMENTERS: u64 = 3;
/// The default of the added column, which rows never set read.
const ADDED_DEFAULT: i64 = 5;
/// The statements run, in order, while the clients write.
const ALTERS: &[&str] = &[
    "ALTER TABLE t ADD COLUMN e INT NOT NULL DEFAULT 5 AFTER k",
    "ALTER TABLE t DROP COLUMN c",
    "ALTER TABLE t MODIFY k BIGINT NOT NULL",
    "ALTER TABLE t ADD INDEX ke (k, e)",
];

#[test]
fn alter_table_while_writes_continue() {
    let p = Playground::start();
    altered_while_writes_continue(p.port, p.port, 4_000);
}

#[test]
fn alter_table_on_one_sql_node_while_another_writes() {
    let cluster = Cluster::start(1, 2);
    altered_while_writes_continue(cluster.sql[1].port, cluster.sql[0].port, 1_000);
}

fn url(port: u16) -> String {
    format!("mysql://root@127.0.0.1:{port}/a")
}

/// Errors a write may meet under contention; the write did not happen.
fn contended(e: &ClientError) -> bool {
    matches!(e.server_code(), Some(1205) | Some(1213) | Some(9007))
}

fn altered_while_writes_continue(ddl_port: u16, writer_port: u16, rows: u64) {
    sql_at(ddl_port, None, "CREATE DATABASE a");
    sql_at(
        ddl_port,
        Some("a"),
        "CREATE TABLE t (id INT PRIMARY KEY, k INT NOT NULL, c VARCHAR(20) NOT NULL)",
    );
    common::insert_rows(writer_port, "a", "t", rows, |i| format!("{i}, 0, 'r{i}'"));
    let seed = common::test_seed("online_alter");
    let runtime = common::runtime(2);
    runtime.block_on(async move {
        let stop = Arc::new(AtomicBool::new(false));
        let increments: Arc<Vec<AtomicU64>> =
            Arc::new((0..=rows).map(|_| AtomicU64::new(0)).collect());
        let set: Arc<Mutex<HashMap<u64, i64>>> = Arc::default();
        let inserted: Arc<Mutex<Vec<u64>>> = Arc::default();
        let mut tasks = Vec::new();
        for w in 0..INCREMENTERS {
            let (stop, increments) = (stop.clone(), increments.clone());
            tasks.push(tokio::spawn(async move {
                let mut rng = StdRng::seed_from_u64(seed.wrapping_add(w));
                let mut conn = connect(&url(writer_port)).await.expect("connect");
                while !stop.load(Ordering::SeqCst) {
                    let id = rng.gen_range(1..=rows);
                    match bounded(conn.exec_drop("UPDATE t SET k = k + 1 WHERE id = ?", (id,)))
                        .await
                    {
                        Ok(()) => {
                            increments[id as usize].fetch_add(1, Ordering::SeqCst);
                        }
                        Err(e) if contended(&e) => {}
                        Err(e) => panic!("incrementer {w}: {e}"),
                    }
                }
            }));
        }
        {
            // Sets the new column once it exists.
            let (stop, set) = (stop.clone(), set.clone());
            tasks.push(tokio::spawn(async move {
                let mut rng = StdRng::seed_from_u64(seed.wrapping_add(100));
                let mut conn = connect(&url(ddl_port)).await.expect("connect");
                let mut value = 1000;
                while !stop.load(Ordering::SeqCst) {
                    let id = rng.gen_range(1..=rows);
                    value += 1;
                    match bounded(conn.exec_drop("UPDATE t SET e = ? WHERE id = ?", (value, id)))
                        .await
                    {
                        Ok(()) => {
                            set.lock().unwrap().insert(id, value);
                        }
                        Err(e) if e.server_code() == Some(1054) => {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                        Err(e) if contended(&e) => {}
                        Err(e) => panic!("setter: {e}"),
                    }
                }
            }));
        }
        {
            // Inserts rows naming the column to be dropped for as long as it exists.
            let (stop, inserted) = (stop.clone(), inserted.clone());
            tasks.push(tokio::spawn(async move {
                let mut conn = connect(&url(writer_port)).await.expect("connect");
                let mut id = rows;
                let mut names_c = true;
                while !stop.load(Ordering::SeqCst) {
                    id += 1;
                    let result = if names_c {
                        // The load named its columns too: the dropped one has no default.
                        bounded(
                            conn.exec_drop("INSERT INTO t (id, k, c) VALUES (?, 0, 'n')", (id,)),
                        )
                        .await
                    } else {
                        bounded(conn.exec_drop("INSERT INTO t (id, k) VALUES (?, 0)", (id,))).await
                    };
                    match result {
                        Ok(()) => inserted.lock().unwrap().push(id),
                        Err(e) if names_c && e.server_code() == Some(1054) => names_c = false,
                        Err(e) if contended(&e) => {}
                        Err(e) => panic!("inserter: {e}"),
                    }
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                assert!(!names_c, "the inserter saw the column dropped");
            }));
        }
        let mut ddl = connect(&url(ddl_port)).await.expect("connect");
        for alter in ALTERS {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let before: u64 = increments.iter().map(|n| n.load(Ordering::SeqCst)).sum();
            tokio::time::timeout(Duration::from_secs(120), ddl.query_drop(*alter))
                .await
                .unwrap_or_else(|_| panic!("{alter} finishes"))
                .unwrap_or_else(|e| panic!("{alter}: {e}"));
            let after: u64 = increments.iter().map(|n| n.load(Ordering::SeqCst)).sum();
            println!("{alter}: {} increments while it ran", after - before);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        stop.store(true, Ordering::SeqCst);
        for t in tasks {
            t.await.unwrap();
        }

        let stored: Vec<(u64, i64, i64)> = ddl
            .query("SELECT id, k, e FROM t ORDER BY id")
            .await
            .unwrap();
        let set = set.lock().unwrap().clone();
        let inserted = inserted.lock().unwrap().clone();
        assert!(!set.is_empty(), "the setter wrote the new column");
        assert!(!inserted.is_empty(), "the inserter wrote rows");
        assert_eq!(
            stored.len() as u64,
            rows + inserted.len() as u64,
            "every row is there"
        );
        for (id, k, e) in &stored {
            let expected_k = increments
                .get(*id as usize)
                .map_or(0, |n| n.load(Ordering::SeqCst));
            assert_eq!(*k as u64, expected_k, "row {id}: every increment kept");
            let expected_e = set.get(id).copied().unwrap_or(ADDED_DEFAULT);
            assert_eq!(*e, expected_e, "row {id}: the last value set is kept");
        }
        for id in inserted.iter() {
            assert!(
                stored.iter().any(|(s, _, _)| s == id),
                "inserted row {id} is there"
            );
        }
        println!(
            "{} increments, {} rows set, {} rows inserted",
            stored.iter().map(|(_, k, _)| *k).sum::<i64>(),
            set.len(),
            inserted.len()
        );

        let query = "SELECT id, k, e FROM t WHERE k BETWEEN 0 AND 1000000000";
        let explain: Vec<(String, String, String, String, String)> =
            ddl.query(format!("EXPLAIN {query}")).await.unwrap();
        assert!(
            explain
                .iter()
                .any(|(_, _, _, access, _)| access.contains("ke")),
            "{explain:?}"
        );
        let mut by_index: Vec<(u64, i64, i64)> = ddl.query(query).await.unwrap();
        by_index.sort();
        assert_eq!(by_index, stored, "the new index agrees with the table");
        let create: Vec<(String, String)> = ddl.query("SHOW CREATE TABLE t").await.unwrap();
        assert!(!create[0].1.contains("`c`"), "{}", create[0].1);
        assert!(
            create[0].1.contains("`k` bigint NOT NULL"),
            "{}",
            create[0].1
        );
    });
}
