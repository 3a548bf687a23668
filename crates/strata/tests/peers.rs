//! What the SQL nodes of a cluster ask of each other, through the KV store: `KILL` of a
//! connection on another node, and every node's sessions and slow statements in
//! information_schema. A cluster of real processes on loopback (`strata pd`, `strata kv` and
//! two `strata server`).

mod common;

use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{sql_at, wait_for};
use mysql_async::prelude::Queryable;

/// `KILL` reaches a connection on another SQL node of the cluster (TiDB's global kill):
/// connection ids are unique across the nodes; `KILL QUERY` run on one node stops a statement
/// waiting for a lock on the other within a second (1317, and its connection goes on); `KILL`
/// of a connection inside a transaction ends it and rolls the transaction back, so its lock is
/// free at once; an id that no node has gets 1094. `information_schema.CLUSTER_PROCESSLIST`
/// lists the sessions of both nodes, and `CLUSTER_SLOW_QUERY` their slow statements (a user
/// without PROCESS sees only its own). Clients: `mysql_async`.
#[test]
fn kill_reaches_a_connection_on_another_sql_node() {
    let cluster = Cluster::start(1, 2);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    sql_at(
        a,
        None,
        "CREATE DATABASE k; CREATE TABLE k.t (id INT PRIMARY KEY, v INT); \
         INSERT INTO k.t VALUES (1, 0)",
    );
    wait_for(b, "SELECT COUNT(*) FROM k.t", "COUNT(*)\n1\n");
    let url = |port: u16| format!("mysql://root@127.0.0.1:{port}/k");
    let runtime = common::runtime(2);
    runtime.block_on(async {
        let mut admin = common::connect(&url(a)).await.unwrap();
        let mut watcher = common::connect(&url(b)).await.unwrap();
        let mut holder = common::connect(&url(b)).await.unwrap();
        let waiter = common::connect(&url(b)).await.unwrap();
        let (holder_id, waiter_id) = (holder.id(), waiter.id());
        assert_ne!(
            admin.id() >> 22,
            waiter_id >> 22,
            "each node numbers its own"
        );
        assert_ne!(holder_id, waiter_id);

        holder.query_drop("BEGIN").await.unwrap();
        holder
            .query_drop("SELECT v FROM t WHERE id = 1 FOR UPDATE")
            .await
            .unwrap();
        let waiting = tokio::spawn(async move {
            let mut waiter = waiter;
            let result =
                common::bounded(waiter.query_drop("UPDATE t SET v = 1 WHERE id = 1")).await;
            (waiter, result, Instant::now())
        });
        let seen = format!(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
             WHERE ID = {waiter_id} AND INFO LIKE 'UPDATE%'"
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        while watcher.query_first::<u64, _>(&seen).await.unwrap() != Some(1) {
            assert!(Instant::now() < deadline, "the UPDATE never ran");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Node A lists the sessions of both nodes, each with its node's address.
        let listed: Vec<(String, u64, Option<String>)> = admin
            .query(
                "SELECT INSTANCE, ID, INFO FROM information_schema.CLUSTER_PROCESSLIST \
                 ORDER BY ID",
            )
            .await
            .unwrap();
        let find = |id: u32| listed.iter().find(|(_, i, _)| *i == u64::from(id));
        let waiting_row = find(waiter_id).expect("node B's waiting session is listed");
        assert_eq!(waiting_row.0, format!("127.0.0.1:{b}"));
        assert!(waiting_row
            .2
            .as_deref()
            .is_some_and(|i| i.starts_with("UPDATE")));
        assert_eq!(
            find(admin.id()).map(|r| r.0.as_str()),
            Some(format!("127.0.0.1:{a}").as_str())
        );
        assert!(find(holder_id).is_some() && listed.len() >= 4, "{listed:?}");

        tokio::time::sleep(Duration::from_millis(300)).await;
        let killed_at = Instant::now();
        admin
            .query_drop(format!("KILL QUERY {waiter_id}"))
            .await
            .unwrap();
        let (mut waiter, result, ended) = waiting.await.unwrap();
        assert!(
            ended - killed_at < Duration::from_secs(1),
            "KILL QUERY from the other node took {:?}",
            ended - killed_at
        );
        assert_eq!(result.unwrap_err().server_code(), Some(1317));
        assert!(common::bounded(waiter.query_drop("SELECT 1")).await.is_ok());

        // The holder's connection ends, and its transaction with it: the row is free at once.
        admin.query_drop(format!("KILL {holder_id}")).await.unwrap();
        let started = Instant::now();
        admin
            .query_drop("UPDATE t SET v = 7 WHERE id = 1")
            .await
            .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "the killed transaction's lock held for {:?}",
            started.elapsed()
        );
        let after = common::bounded(holder.query_drop("SELECT 1")).await;
        assert!(
            matches!(after, Err(common::ClientError::Connection(_))),
            "{after:?}"
        );
        let v: Option<i64> = watcher
            .query_first("SELECT v FROM t WHERE id = 1")
            .await
            .unwrap();
        assert_eq!(v, Some(7));

        // No such connection: on the other node, and on a node that does not exist.
        for id in [(waiter_id & !0x3F_FFFF) | 4_000_000, (1000 << 22) | 5] {
            let error = admin.query_drop(format!("KILL {id}")).await.unwrap_err();
            assert!(error.to_string().contains("1094"), "{error}");
        }

        // Slow statements on each node (past the default 0.3 s), one of them by a user
        // without PROCESS: node A lists both nodes' with their addresses; that user sees
        // only its own.
        for sql in [
            "CREATE USER u IDENTIFIED BY 'pw'",
            "GRANT SELECT ON k.* TO u",
            "SELECT SLEEP(0.4), 'slow-on-a'",
        ] {
            admin.query_drop(sql).await.unwrap();
        }
        watcher
            .query_drop("SELECT SLEEP(0.4), 'slow-on-b'")
            .await
            .unwrap();
        let mut user_on_b = connect_when_known(&format!("mysql://u:pw@127.0.0.1:{b}/k")).await;
        user_on_b
            .query_drop("SELECT SLEEP(0.4), 'slow-by-u'")
            .await
            .unwrap();
        // The pattern is built so that this statement does not match it.
        const SLOW: &str = "SELECT INSTANCE, User, Query FROM \
                            information_schema.CLUSTER_SLOW_QUERY \
                            WHERE Query LIKE CONCAT('%slow', '-%') ORDER BY Query";
        let slow: Vec<(String, String, String)> = admin.query(SLOW).await.unwrap();
        let (at_a, at_b) = (format!("127.0.0.1:{a}"), format!("127.0.0.1:{b}"));
        let found: Vec<(&str, &str, bool)> = slow
            .iter()
            .map(|(i, u, q)| (i.as_str(), u.as_str(), q.contains("SLEEP(0.4)")))
            .collect();
        assert_eq!(
            found,
            [
                (at_b.as_str(), "u", true),
                (at_a.as_str(), "root", true),
                (at_b.as_str(), "root", true)
            ],
            "{slow:?}"
        );
        let own: Vec<(String, String, String)> = connect_when_known(&format!("mysql://u:pw@127.0.0.1:{a}/k"))
            .await
            .query(SLOW)
            .await
            .unwrap();
        assert_eq!(own.len(), 1, "{own:?}");
        assert_eq!((own[0].0.as_str(), own[0].1.as_str()), (at_b.as_str(), "u"));
        let here: Vec<String> = admin
            .query("SELECT Query FROM information_schema.SLOW_QUERY WHERE Query LIKE CONCAT('%slow', '-%')")
            .await
            .unwrap();
        assert_eq!(here.len(), 1, "{here:?}");
        assert!(here[0].contains("slow-on-a"), "{here:?}");
    });
}

/// Connects as an account just created on another node, once this node has loaded it.
async fn connect_when_known(url: &str) -> mysql_async::Conn {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match common::connect(url).await {
            Ok(conn) => return conn,
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(e) => panic!("{url}: {e}"),
        }
    }
}
