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
        for _ in 0..UPDATES {
            writer.query_drop("UPDATE t SET v = v + 1").await.unwrap();
        }
        writer
            .query_drop(format!("DELETE FROM t WHERE id > {}", ROWS - DELETED))
            .await
            .unwrap();
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
