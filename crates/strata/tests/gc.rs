//! Garbage collection on the playground: a snapshot held open keeps reading its versions while
//! compactions drop the garbage around it, and the garbage goes soon after the snapshot ends.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::Playground;

/// Rows of the table, and full-table updates of it: together a burst of writes (at least
/// 100,000 versions) after which the playground compacts.
const ROWS: i64 = 2000;
const UPDATES: i64 = 55;
/// Rows deleted by the burst.
const DELETED: i64 = 200;
/// How long after the snapshot ends its garbage may stay.
const COLLECTED_WITHIN: Duration = Duration::from_secs(60);

#[test]
fn a_held_snapshot_reads_its_versions_across_compactions_and_its_garbage_goes_after_it() {
    use mysql_async::prelude::Queryable;

    let mut p = Playground::start();
    let rows: Vec<String> = (1..=ROWS).map(|i| format!("({i}, 0)")).collect();
    p.sql(
        None,
        &format!(
            "CREATE DATABASE g; CREATE TABLE g.t (id INT PRIMARY KEY, v INT NOT NULL); \
             INSERT INTO g.t VALUES {}",
            rows.join(", ")
        ),
    );
    let url = p.url("g");
    let log = p.data_dir.join("kv/LOG");
    let runtime = common::runtime(2);
    runtime.block_on(async {
        let mut reader = common::connect(&url).await.unwrap();
        let mut writer = common::connect(&url).await.unwrap();
        const READ: &str = "SELECT SUM(v), COUNT(*) FROM t";
        reader
            .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            .await
            .unwrap();
        let before: Option<(i64, i64)> = reader.query_first(READ).await.unwrap();
        assert_eq!(before, Some((0, ROWS)));

        let compactions = manual_compactions(&log);
        burst(&mut writer).await;
        wait_for_compaction(&log, compactions, Duration::from_secs(30));

        let after: Option<(i64, i64)> = reader.query_first(READ).await.unwrap();
        assert_eq!(
            after, before,
            "the snapshot reads what it read before the compaction"
        );
        reader.query_drop("COMMIT").await.unwrap();
        let now: Option<(i64, i64)> = writer.query_first(READ).await.unwrap();
        assert_eq!(now, Some((UPDATES * (ROWS - DELETED), ROWS - DELETED)));
    });

    // Once the snapshot is gone the safe point passes the burst, and a compaction drops it.
    let ended = Instant::now();
    let compactions = manual_compactions(&log);
    wait_for_compaction(&log, compactions, COLLECTED_WITHIN);
    let took = ended.elapsed();
    p.kill9();
    let entries = write_cf_entries(&p.data_dir.join("kv"));
    assert!(
        entries < 2 * ROWS as usize,
        "{entries} versions are left {took:?} after the snapshot ended, of {} written",
        ROWS * (UPDATES + 1)
    );
}

/// Entries a region's log may hold in the cluster test before it is compacted past the node
/// that is down, which then needs a snapshot (the least a KV node takes).
const CLUSTER_RAFT_LOG_MAX_ENTRIES: &str = "1024";
/// Single-row updates in the cluster test, each an entry of the region's log: with the
/// burst's, enough for the log to pass [`CLUSTER_RAFT_LOG_MAX_ENTRIES`].
const CLUSTER_ROW_UPDATES: usize = 1500;

/// The same on a cluster of three KV nodes: while a snapshot is held, one node is down through
/// the burst (its log compacted past it), the two others compact the burst away, the node
/// comes back from a snapshot of the region and then leads every region: the held snapshot
/// still reads what it read at first, each time. Afterwards the nodes that compacted drop the
/// garbage.
#[test]
fn on_a_cluster_a_held_snapshot_survives_compactions_new_replicas_and_leader_moves() {
    use mysql_async::prelude::Queryable;

    let mut cluster = common::cluster::Cluster::start_configured(
        3,
        1,
        &[],
        &["--raft-log-max-entries", CLUSTER_RAFT_LOG_MAX_ENTRIES],
    );
    let port = cluster.sql[0].port;
    common::wait_for(port, "SELECT 1", "1\n1\n");
    // Row 0 takes the single-row updates.
    let rows: Vec<String> = (0..=ROWS).map(|i| format!("({i}, 0)")).collect();
    common::sql_at(
        port,
        None,
        &format!(
            "CREATE DATABASE g; CREATE TABLE g.t (id INT PRIMARY KEY, v INT NOT NULL); \
             INSERT INTO g.t VALUES {}",
            rows.join(", ")
        ),
    );
    let logs: Vec<_> = (1..=3)
        .map(|i| cluster.data_dir().join(format!("kv{i}/kv/LOG")))
        .collect();
    let behind = (cluster.leader_of(b"") + 1) % 3;
    let up: Vec<usize> = (0..3).filter(|&i| i != behind).collect();
    let url = format!("mysql://root@127.0.0.1:{port}/g");
    let runtime = common::runtime(2);
    let mut reader = runtime.block_on(common::connect(&url)).unwrap();
    const READ: &str = "SELECT SUM(v), COUNT(*), BIT_XOR(v * 7919 + id) FROM t";
    let before: Option<(i64, i64, i64)> = runtime.block_on(async {
        reader
            .query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            .await
            .unwrap();
        reader.query_first(READ).await.unwrap()
    });
    let read_again = |reader: &mut mysql_async::Conn, when: &str| {
        let now: Option<(i64, i64, i64)> = runtime.block_on(reader.query_first(READ)).unwrap();
        assert_eq!(
            now, before,
            "the held snapshot reads what it read at first, {when}"
        );
    };

    // The burst, with one node down: the others compact it while the snapshot holds it.
    cluster.kv[behind].kill9();
    let compactions: Vec<usize> = logs.iter().map(|l| manual_compactions(l)).collect();
    runtime.block_on(async {
        let mut writer = common::connect(&url).await.unwrap();
        burst(&mut writer).await;
        for _ in 0..CLUSTER_ROW_UPDATES {
            writer
                .query_drop("UPDATE t SET v = v + 1 WHERE id = 0")
                .await
                .unwrap();
        }
    });
    for &i in &up {
        wait_for_compaction(&logs[i], compactions[i], Duration::from_secs(60));
    }
    read_again(&mut reader, "after the compactions");

    // The node that was down catches up from a snapshot, then leads every region.
    let restored = |cluster: &common::cluster::Cluster| {
        cluster.kv[behind]
            .log()
            .matches("restored from a snapshot")
            .count()
    };
    let restored_before = restored(&cluster);
    cluster.kv[behind].start();
    let deadline = Instant::now() + Duration::from_secs(60);
    while restored(&cluster) == restored_before {
        assert!(
            Instant::now() < deadline,
            "the node that was down took no snapshot\n{}",
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let store = cluster.store_ids()[behind];
    let pd = strata_pd_client::PdClient::connect(&cluster.pd_address).expect("pd client");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let led_elsewhere: Vec<u64> = cluster
            .regions()
            .into_iter()
            .filter(|&(_, leader)| leader != store)
            .map(|(region, _)| region)
            .collect();
        if led_elsewhere.is_empty() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "regions {led_elsewhere:?} still led elsewhere\n{}",
            cluster.logs()
        );
        for region in led_elsewhere {
            let _ = pd.transfer_leader(region, store);
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    read_again(
        &mut reader,
        "through the node that came back from a snapshot",
    );

    let compactions: Vec<usize> = logs.iter().map(|l| manual_compactions(l)).collect();
    runtime.block_on(async {
        reader.query_drop("COMMIT").await.unwrap();
        let now: Option<(i64, i64)> = reader
            .query_first("SELECT SUM(v), COUNT(*) FROM t WHERE id > 0")
            .await
            .unwrap();
        assert_eq!(now, Some((UPDATES * (ROWS - DELETED), ROWS - DELETED)));
        reader.disconnect().await.unwrap();
    });
    // Once the snapshot is gone, the nodes that saw the burst compact its garbage away.
    let ended = Instant::now();
    for &i in &up {
        wait_for_compaction(&logs[i], compactions[i], COLLECTED_WITHIN);
    }
    let took = ended.elapsed();
    for kv in &mut cluster.kv {
        kv.stop();
    }
    for &i in &up {
        let entries = write_cf_entries(&cluster.data_dir().join(format!("kv{}/kv", i + 1)));
        assert!(
            entries < 2 * ROWS as usize,
            "KV node {} holds {entries} versions {took:?} after the snapshot ended, of {} \
             written",
            i + 1,
            ROWS * (UPDATES + 1)
        );
    }
}

/// The burst of writes: every row updated [`UPDATES`] times, then [`DELETED`] rows deleted.
async fn burst(writer: &mut mysql_async::Conn) {
    use mysql_async::prelude::Queryable;
    for _ in 0..UPDATES {
        writer.query_drop("UPDATE t SET v = v + 1").await.unwrap();
    }
    writer
        .query_drop(format!("DELETE FROM t WHERE id > {}", ROWS - DELETED))
        .await
        .unwrap();
}

/// Manual compactions the store's RocksDB log reports so far.
fn manual_compactions(log: &Path) -> usize {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .matches("Manual compaction from")
        .count()
}

fn wait_for_compaction(log: &Path, seen: usize, within: Duration) {
    let deadline = Instant::now() + within;
    while manual_compactions(log) <= seen {
        assert!(
            Instant::now() < deadline,
            "no compaction of the write CF within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Let the compaction that started finish.
    std::thread::sleep(Duration::from_secs(2));
}

/// Entries in the write column family of the stopped store in `dir`.
fn write_cf_entries(dir: &Path) -> usize {
    use strata_engine::{Cf, Engine, RocksEngine, RocksOptions};
    let engine = RocksEngine::open(dir, &RocksOptions::default()).expect("open a stopped store");
    let mut it = engine.iterator(Cf::Write, b"", None);
    it.seek(b"");
    let mut entries = 0;
    while it.valid().expect("read the write column family") {
        entries += 1;
        it.next();
    }
    entries
}

/// A transaction whose SQL node died between prewrite and commit leaves a lock that nobody
/// reads; the pass that runs before garbage collection resolves it once the safe point passes
/// the transaction, so the collector is not kept from the key.
#[test]
fn a_transaction_abandoned_after_prewrite_is_rolled_back_below_the_safe_point() {
    use strata_kvapi::{KvApi, Mutation, PrewriteRequest};
    use strata_txn::RemoteKv;
    use strata_types::Timestamp;

    let cluster = common::cluster::Cluster::start(1, 1);
    common::wait_for(cluster.sql[0].port, "SELECT 1", "1\n1\n");
    let pd = strata_pd_client::PdClient::connect(&cluster.pd_address).expect("pd client");
    let kv = RemoteKv::new(pd.clone());
    // A transaction prewrites a key no one reads, and its client goes away.
    let key = b"zz-abandoned".to_vec();
    let start_ts = strata_pd_client::TimestampOracle::get_ts(&pd).expect("a timestamp");
    kv.prewrite(&PrewriteRequest {
        mutations: vec![Mutation::Put(key.clone(), b"never committed".to_vec())],
        primary: key.clone(),
        start_ts,
        for_update_ts: Timestamp::ZERO,
        locked_at: Vec::new(),
        lock_ttl_ms: 1_000,
        try_one_pc: false,
        async_commit: false,
        secondaries: Vec::new(),
        max_commit_ts: Timestamp::ZERO,
    })
    .expect("prewrite");
    assert_eq!(
        kv.scan_lock(b"", b"", Timestamp::MAX, 10)
            .expect("scan locks")
            .len(),
        1,
        "the prewrite left its lock"
    );

    // The safe point passes the transaction after the GC life time, and a pass of the SQL
    // node's resolver follows within its interval.
    let within = strata_kv::gc::GC_LIFE_TIME + strata_txn::RESOLVE_INTERVAL * 3;
    let started = Instant::now();
    while !kv
        .scan_lock(b"", b"", Timestamp::MAX, 10)
        .expect("scan locks")
        .is_empty()
    {
        assert!(
            started.elapsed() < within,
            "the abandoned lock is still there after {within:?} (safe point {:?}, start_ts \
             {start_ts})\n{}",
            pd.gc_safe_point(),
            cluster.logs()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
    eprintln!("the abandoned lock went after {:?}", started.elapsed());
    assert!(pd.gc_safe_point().expect("safe point") > start_ts);
    let now = strata_pd_client::TimestampOracle::get_ts(&pd).expect("a timestamp");
    assert_eq!(kv.get(&key, now).expect("read"), None, "rolled back");
}
