//! Lock lifetimes in a cluster of real processes: a transaction's locks live while its SQL
//! node sends heartbeats, and are cleared by the others once that node is killed with
//! `kill -9` and their time to live has passed; a lock lost with a killed KV leader never lets
//! another transaction's update be lost.

mod common;

use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{sql_at, wait_for};
use mysql_async::prelude::Queryable;
use strata_txn::MANAGED_LOCK_TTL_MS;

/// Runs `sql` on `conn`, answering within `limit` (longer than the harness's usual bound:
/// these statements wait for locks on purpose).
async fn run_within(
    conn: &mut mysql_async::Conn,
    sql: &str,
    limit: Duration,
) -> Result<(), String> {
    match tokio::time::timeout(limit, conn.query_drop(sql)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err(format!("{sql}: no answer within {limit:?}")),
    }
}

/// Connects to `url` and locks rows 1 and 2 of `t` in a transaction (row 1's lock is its
/// primary).
async fn lock_both_rows(url: &str) -> mysql_async::Conn {
    let step = Duration::from_secs(60);
    let mut holder = common::connect(url).await.unwrap();
    run_within(&mut holder, "BEGIN", step).await.unwrap();
    run_within(
        &mut holder,
        "SELECT v FROM t WHERE id IN (1, 2) FOR UPDATE",
        step,
    )
    .await
    .unwrap();
    holder
}

/// A cluster of `kv_nodes` KV nodes and two SQL nodes with table `f.t` holding rows 1 and 2
/// (`v` 0), and the URLs of database `f` on each SQL node.
fn two_sql_nodes_with_rows(kv_nodes: usize) -> (Cluster, String, String) {
    let cluster = Cluster::start(kv_nodes, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    sql_at(
        a,
        None,
        "CREATE DATABASE f; CREATE TABLE f.t (id INT PRIMARY KEY, v INT); \
         INSERT INTO f.t VALUES (1, 0), (2, 0)",
    );
    wait_for(b, "SELECT COUNT(*) FROM f.t", "COUNT(*)\n2\n");
    let urls = (
        format!("mysql://root@127.0.0.1:{a}/f"),
        format!("mysql://root@127.0.0.1:{b}/f"),
    );
    (cluster, urls.0, urls.1)
}

#[test]
fn locks_live_with_their_sql_node_and_are_cleared_after_it_is_killed() {
    let ttl = Duration::from_millis(MANAGED_LOCK_TTL_MS);
    let (mut cluster, url_a, url_b) = two_sql_nodes_with_rows(1);
    let (b, runtime) = (cluster.sql[1].port, common::runtime(2));
    let step = Duration::from_secs(60);

    // A transaction on node A that holds its locks longer than their time to live: its
    // heartbeats keep them, and a waiter on node B (for the secondary key, whose own lock is
    // never renewed) waits until the holder commits.
    runtime.block_on(async {
        let mut holder = lock_both_rows(&url_a).await;
        let mut waiter = common::connect(&url_b).await.unwrap();
        run_within(&mut waiter, "SET innodb_lock_wait_timeout = 50", step)
            .await
            .unwrap();
        let waiting = tokio::spawn(async move {
            let result = run_within(&mut waiter, "UPDATE t SET v = v + 1 WHERE id = 2", step).await;
            (result, Instant::now())
        });
        tokio::time::sleep(ttl + Duration::from_secs(3)).await;
        assert!(
            !waiting.is_finished(),
            "the waiter took a lock whose holder is alive: {:?}",
            waiting.await
        );
        run_within(&mut holder, "UPDATE t SET v = 10 WHERE id = 2", step)
            .await
            .unwrap();
        let committed = Instant::now();
        run_within(&mut holder, "COMMIT", step).await.unwrap();
        let (result, ended) = waiting.await.unwrap();
        result.expect("the waiter's update");
        assert!(ended >= committed, "the waiter went on before the commit");
    });
    assert_eq!(
        sql_at(b, Some("f"), "SELECT id, v FROM t ORDER BY id"),
        "id\tv\n1\t0\n2\t11\n"
    );

    // The same transaction, and node A killed while it holds its locks: node B updates both
    // rows (the primary and the secondary) once their time to live has passed.
    runtime.block_on(async {
        let _holder = lock_both_rows(&url_a).await; // open until its node is killed
        let mut other = common::connect(&url_b).await.unwrap();
        run_within(&mut other, "SET innodb_lock_wait_timeout = 1", step)
            .await
            .unwrap();
        let refused = run_within(&mut other, "UPDATE t SET v = v + 1 WHERE id = 1", step).await;
        assert!(
            refused.as_ref().is_err_and(|e| e.contains("1205")),
            "the rows are locked: {refused:?}"
        );
        cluster.sql[0].kill9();
        let killed = Instant::now();
        run_within(&mut other, "SET innodb_lock_wait_timeout = 50", step)
            .await
            .unwrap();
        for id in [2, 1] {
            run_within(
                &mut other,
                &format!("UPDATE t SET v = v + 100 WHERE id = {id}"),
                step,
            )
            .await
            .unwrap();
        }
        let waited = killed.elapsed();
        assert!(
            waited < ttl + Duration::from_secs(5),
            "the locks of the killed node were cleared after {waited:?}"
        );
        eprintln!("locks of the killed SQL node cleared after {waited:?}");
    });
    assert_eq!(
        sql_at(b, Some("f"), "SELECT id, v FROM t ORDER BY id"),
        "id\tv\n1\t100\n2\t111\n"
    );
}

/// A KV node that leads the region and dies takes the pessimistic locks in its memory with it
/// (as TiKV's in-memory pessimistic locks do), so another transaction may write a row the
/// first one locked and read. The owner's commit of a write to that row then fails with a
/// write conflict a client retries (9007), never as a lost update; a row nobody wrote in
/// between commits as if its lock had stayed.
#[test]
fn a_lock_lost_with_a_killed_leader_never_lets_an_update_be_lost() {
    let (mut cluster, url_a, url_b) = two_sql_nodes_with_rows(3);
    let (b, runtime) = (cluster.sql[1].port, common::runtime(2));
    let step = Duration::from_secs(60);

    // Both rows locked and read as 0; the leader killed; the other node increments row 1.
    let mut holder = runtime.block_on(lock_both_rows(&url_a));
    let leader = cluster.leader_of(b"");
    cluster.kv[leader].kill9();
    runtime.block_on(async {
        let mut other = common::connect(&url_b).await.unwrap();
        run_within(&mut other, "UPDATE t SET v = v + 1 WHERE id = 1", step)
            .await
            .expect("the lock went with the leader");
        // The holder writes what it read plus one: committed, it would lose that increment.
        run_within(&mut holder, "UPDATE t SET v = 1 WHERE id IN (1, 2)", step)
            .await
            .unwrap();
        let commit = run_within(&mut holder, "COMMIT", step).await;
        assert!(
            commit.as_ref().is_err_and(|e| e.contains("9007")),
            "the holder's commit over a row written since it locked it: {commit:?}"
        );
    });
    assert_eq!(
        sql_at(b, Some("f"), "SELECT id, v FROM t ORDER BY id"),
        "id\tv\n1\t1\n2\t0\n"
    );

    // The killed node back, the new leader killed while row 2 is locked; nobody writes it.
    cluster.kv[leader].start();
    runtime.block_on(async {
        for sql in ["BEGIN", "SELECT v FROM t WHERE id = 2 FOR UPDATE"] {
            run_within(&mut holder, sql, step).await.unwrap();
        }
    });
    std::thread::sleep(Duration::from_secs(2));
    let leader = cluster.leader_of(b"");
    cluster.kv[leader].kill9();
    runtime.block_on(async {
        for sql in ["UPDATE t SET v = 1 WHERE id = 2", "COMMIT"] {
            run_within(&mut holder, sql, step).await.unwrap();
        }
    });
    assert_eq!(
        sql_at(b, Some("f"), "SELECT id, v FROM t ORDER BY id"),
        "id\tv\n1\t1\n2\t1\n"
    );
}
