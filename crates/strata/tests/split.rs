//! Regions split while rows pour in, and the data stays readable through every split: a
//! 3-KV cluster with a small region size limit takes inserts through one SQL node while the
//! other keeps counting the table; afterwards the placement driver knows many regions, every
//! acknowledged row is there, and the regions' leaders are spread over the three nodes. A
//! node killed with `kill -9` while regions split catches up on the splits after its restart.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{acked, sql_at};

/// A region holding more keys than this splits (the default is 960,000).
const SPLIT_KEYS: &str = "400";
/// How long the inserts run.
const LOAD: Duration = Duration::from_secs(15);
/// How long the placement driver may take to balance the leaders after the load, which
/// leaves most of some 50 to 80 regions led by one store. It orders moves as the leaders'
/// heartbeats come (each region once a second); the bound is generous because CI runs this
/// file's tests side by side on a busy machine.
const BALANCE_TIMEOUT: Duration = Duration::from_secs(90);

fn count(port: u16) -> u64 {
    let out = sql_at(port, Some("crash"), "SELECT COUNT(*) FROM acked");
    out.lines()
        .nth(1)
        .and_then(|l| l.parse().ok())
        .unwrap_or_else(|| panic!("a count, not {out:?}"))
}

/// Leaders per store, over the regions with a known leader.
fn leaders_per_store(cluster: &Cluster) -> BTreeMap<u64, usize> {
    let mut counts = BTreeMap::new();
    for (_, store) in cluster.regions() {
        if store != 0 {
            *counts.entry(store).or_default() += 1;
        }
    }
    counts
}

#[test]
fn regions_split_under_inserts_and_their_leaders_spread_over_the_nodes() {
    let cluster = Cluster::start_with(3, 2, &["--region-split-keys", SPLIT_KEYS]);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    acked::create_table(a, b);
    assert_eq!(cluster.regions().len(), 1, "a new cluster has one region");

    let started = Instant::now();
    let inserters = acked::Inserters::start(a, 4, started);
    // Every read through the other SQL node succeeds (sql_at asserts it), splits or not, and
    // sees no fewer rows than the read before it.
    let (mut last, mut reads) = (0, 0);
    while started.elapsed() < LOAD {
        let now = count(b);
        assert!(now >= last, "the row count went from {last} down to {now}");
        (last, reads) = (now, reads + 1);
        std::thread::sleep(Duration::from_millis(200));
    }
    let outcome = inserters.stop();
    let acknowledged = outcome.ids();
    let regions = cluster.regions();
    println!(
        "{} rows acknowledged, {reads} counts read during the load, {} regions",
        acknowledged.len(),
        regions.len()
    );
    assert!(
        acknowledged.len() > 2000,
        "only {} inserts acknowledged in {LOAD:?}\n{}",
        acknowledged.len(),
        cluster.logs()
    );
    assert!(
        regions.len() >= 4,
        "{} rows in {} regions with a {SPLIT_KEYS}-key limit",
        acknowledged.len(),
        regions.len()
    );
    acked::assert_present(a, &outcome);
    acked::assert_present(b, &outcome);
    assert_eq!(count(b), count(a));

    // SQL shows the table's regions as the placement driver knows them: several, each with
    // its three peers and a leader, named by TiDB's key form.
    let rows = sql_at(b, Some("crash"), "SHOW TABLE acked REGIONS");
    let known: Vec<u64> = cluster.regions().iter().map(|(id, _)| *id).collect();
    let table_regions: Vec<Vec<&str>> = rows
        .lines()
        .skip(1)
        .map(|l| l.split('\t').collect())
        .collect();
    assert!(table_regions.len() >= 2, "{rows}");
    for region in &table_regions {
        let id: u64 = region[0].parse().unwrap();
        assert!(known.contains(&id), "region {id} unknown to PD: {rows}");
        assert!(
            (1..=3).contains(&region[4].parse::<u64>().unwrap()),
            "{rows}"
        );
        assert_eq!(region[5].split(", ").count(), 3, "{rows}");
    }
    assert!(
        table_regions[1..].iter().all(|r| r[1].starts_with("t_")),
        "{rows}"
    );
    let stores = sql_at(
        b,
        None,
        "SELECT COUNT(*), SUM(LEADER_COUNT) >= 4, MIN(STORE_STATE_NAME) FROM \
         information_schema.TIKV_STORE_STATUS",
    );
    assert!(stores.ends_with("\n3\t1\tUp\n"), "{stores}");

    // A join reads the lookups of many rows together, split by region: by primary key, and
    // by ranges of ten ids, some of which run across the end of a region. Both agree with
    // the table's own rows.
    let ids: Vec<u64> = sql_at(b, Some("crash"), "SELECT id FROM acked")
        .lines()
        .skip(1)
        .map(|l| l.parse().expect("an id"))
        .collect();
    let by_key = sql_at(
        b,
        Some("crash"),
        "SELECT COUNT(*), SUM(y.v) FROM acked x JOIN acked y ON y.id = x.id",
    );
    let sum: u64 = ids.iter().sum();
    assert_eq!(
        by_key,
        format!("COUNT(*)\tSUM(y.v)\n{}\t{sum}\n", ids.len())
    );
    let id_set: BTreeSet<u64> = ids.iter().copied().collect();
    let in_ranges: usize = ids.iter().map(|&x| id_set.range(x..=x + 9).count()).sum();
    let by_range = sql_at(
        b,
        Some("crash"),
        "SELECT COUNT(*) FROM acked x JOIN acked y ON y.id BETWEEN x.id AND x.id + 9",
    );
    assert_eq!(by_range, format!("COUNT(*)\n{in_ranges}\n"));
    // Lookups whose rows are large: 150 rows of 61,440 bytes outgrow one answer of a batch
    // scan (4 MiB), which then answers part of the scans and leaves the rest to the client.
    sql_at(
        a,
        Some("crash"),
        "CREATE TABLE wide (id BIGINT PRIMARY KEY, body TEXT); \
         INSERT INTO wide SELECT id, 'abcdefghijklmno' FROM acked WHERE id <= 150",
    );
    for _ in 0..12 {
        sql_at(
            a,
            Some("crash"),
            "UPDATE wide SET body = CONCAT(body, body)",
        );
    }
    let wide = sql_at(
        b,
        Some("crash"),
        "SELECT COUNT(*), COUNT(w.id), SUM(LENGTH(w.body)) FROM acked x \
         LEFT JOIN wide w ON w.id >= x.id AND w.id < x.id + 1 WHERE x.id <= 200",
    );
    let (outer, wide_rows) = (
        ids.iter().filter(|&&id| id <= 200).count(),
        ids.iter().filter(|&&id| id <= 150).count(),
    );
    assert!(wide_rows > 100, "{wide_rows} rows in wide");
    assert_eq!(
        wide,
        format!(
            "COUNT(*)\tCOUNT(w.id)\tSUM(LENGTH(w.body))\n{outer}\t{wide_rows}\t{}\n",
            wide_rows * 61_440
        )
    );

    // Every store leads at least a quarter of the regions (a third each is even).
    let deadline = Instant::now() + BALANCE_TIMEOUT;
    loop {
        let counts = leaders_per_store(&cluster);
        let total: usize = counts.values().sum();
        let min = counts.values().copied().min().unwrap_or(0);
        if counts.len() == 3 && min * 4 >= total {
            println!("leaders per store: {counts:?}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "leaders not spread within {BALANCE_TIMEOUT:?}: {counts:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

#[test]
fn a_node_killed_while_regions_split_catches_up_after_its_restart() {
    let mut cluster = Cluster::start_with(3, 2, &["--region-split-keys", SPLIT_KEYS]);
    let (a, b) = (cluster.sql[0].port, cluster.sql[1].port);
    acked::create_table(a, b);
    let started = Instant::now();
    let inserters = acked::Inserters::start(a, 4, started);
    std::thread::sleep(Duration::from_secs(3));
    let victim = cluster.leader_of(b"");
    cluster.kv[victim].kill9();
    // The regions split on without it.
    std::thread::sleep(Duration::from_secs(6));
    let regions_while_down = cluster.regions().len();
    cluster.kv[victim].start();
    std::thread::sleep(Duration::from_secs(6));
    let outcome = inserters.stop();
    let acknowledged = outcome.ids();
    let regions = cluster.regions().len();
    println!(
        "{} rows acknowledged; {regions_while_down} regions while node {} was down, {regions} \
         after",
        acknowledged.len(),
        victim + 1
    );
    assert!(
        regions_while_down >= 3 && acknowledged.len() > 1000,
        "{} rows, {regions_while_down} regions\n{}",
        acknowledged.len(),
        cluster.logs()
    );
    // Let the restarted node catch up, then take down another: every region now needs the
    // restarted node's replica, which must hold every split and every row.
    std::thread::sleep(Duration::from_secs(3));
    let other = (victim + 1) % 3;
    cluster.kv[other].kill9();
    acked::assert_present(a, &outcome);
    acked::assert_present(b, &outcome);
}

/// The row a transaction holds locked while its region splits.
const LOCKED_ID: u64 = 1_000_000;

#[test]
fn a_row_locked_before_its_region_splits_stays_locked() {
    use mysql_async::prelude::Queryable;
    // One KV node: regions split there, and nothing moves their leaders elsewhere.
    let cluster = Cluster::start_with(1, 1, &["--region-split-keys", SPLIT_KEYS]);
    let port = cluster.sql[0].port;
    sql_at(
        port,
        None,
        &format!(
            "CREATE DATABASE l; CREATE TABLE l.t (id BIGINT PRIMARY KEY, v INT); \
             INSERT INTO l.t VALUES ({LOCKED_ID}, 0)"
        ),
    );
    let regions_before = cluster.regions().len();
    let runtime = common::runtime(2);
    let url = format!("mysql://root@127.0.0.1:{port}/l");
    let (mut holder, mut other) = runtime.block_on(async {
        let mut holder = common::connect(&url).await.expect("connect");
        common::bounded(holder.query_drop("BEGIN")).await.unwrap();
        let locked: Option<i64> = common::bounded(
            holder.query_first(format!("SELECT v FROM t WHERE id = {LOCKED_ID} FOR UPDATE")),
        )
        .await
        .unwrap();
        assert_eq!(locked, Some(0));

        // Rows below the locked one: the regions split, and the locked row, the table's last
        // key, moves into a region split off each time.
        let mut other = common::connect(&url).await.expect("connect");
        for batch in 0..20u64 {
            let rows: Vec<String> = (0..100)
                .map(|i| format!("({}, 1)", batch * 100 + i + 1))
                .collect();
            let insert = format!("INSERT INTO t VALUES {}", rows.join(","));
            common::bounded(other.query_drop(insert)).await.unwrap();
        }
        (holder, other)
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    while cluster.regions().len() < regions_before + 2 {
        assert!(
            Instant::now() < deadline,
            "{} regions after 2,000 inserts with a {SPLIT_KEYS}-key limit (before: {regions_before})",
            cluster.regions().len()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    runtime.block_on(async {
        // The lock is still there: another writer waits for it and times out.
        common::bounded(other.query_drop("SET innodb_lock_wait_timeout = 1"))
            .await
            .unwrap();
        let update = format!("UPDATE t SET v = v + 1 WHERE id = {LOCKED_ID}");
        let blocked = common::bounded(other.query_drop(update)).await;
        assert_eq!(
            blocked.as_ref().err().and_then(|e| e.server_code()),
            Some(1205),
            "a write of the locked row after the splits: {blocked:?}"
        );
        // And the holder's transaction commits its write.
        let update = format!("UPDATE t SET v = 42 WHERE id = {LOCKED_ID}");
        common::bounded(holder.query_drop(update)).await.unwrap();
        common::bounded(holder.query_drop("COMMIT")).await.unwrap();
    });
    let out = sql_at(
        port,
        Some("l"),
        &format!("SELECT v FROM t WHERE id = {LOCKED_ID}"),
    );
    assert_eq!(out.lines().nth(1), Some("42"), "{out}");
}
