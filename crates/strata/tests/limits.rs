//! What one client may do is bounded by what it asked for and what the server allows, checked
//! with real clients against a real playground.

mod common;

use common::Playground;
use std::time::{Duration, Instant};

/// PyMySQL connects without CLIENT_MULTI_STATEMENTS unless asked: then `INSERT …; DROP TABLE`
/// is a syntax error and neither statement runs (an injected `; DROP …` cannot ride along);
/// with the flag, each statement gets its result.
#[test]
fn several_statements_in_one_query_need_client_multi_statements() {
    let p = Playground::start();
    p.sql(
        None,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY)",
    );
    let script = r#"
import sys
import pymysql
from pymysql.constants import CLIENT

def connect(flags):
    return pymysql.connect(host="127.0.0.1", port=int(sys.argv[1]), user="root", database="d",
                           connect_timeout=10, read_timeout=30, client_flag=flags)

single = connect(0).cursor()
try:
    single.execute("INSERT INTO t VALUES (1); DROP TABLE t")
    print("no error")
except pymysql.MySQLError as e:
    print("error", e.args[0])
single.execute("SELECT COUNT(*) FROM t")
print("rows", single.fetchone()[0])
single.execute("SELECT 1;")
print("one", single.fetchone()[0])

multi = connect(CLIENT.MULTI_STATEMENTS).cursor()
multi.execute("SELECT 1; SELECT 2")
first = multi.fetchone()[0]
multi.nextset()
print("multi", first, multi.fetchone()[0])
"#;
    let out = common::pymysql(p.port, script);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "error 1064\nrows 0\none 1\nmulti 1 2\n"
    );
}

/// `KILL QUERY` stops a running statement within a second (1317) and leaves its connection
/// usable; `KILL` of a connection inside a transaction ends it and frees its row locks at once;
/// `max_execution_time` and the MAX_EXECUTION_TIME hint stop a SELECT with 3024, and a lone
/// `SLEEP` cut short returns 1 as in MySQL. Clients: `mysql_async` over TCP.
#[test]
fn kill_and_max_execution_time_stop_statements() {
    use mysql_async::prelude::Queryable;

    let p = Playground::start();
    let rows: Vec<String> = (1..=1000).map(|i| format!("({i}, 0)")).collect();
    p.sql(
        None,
        &format!(
            "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, k INT NOT NULL); \
             INSERT INTO d.t VALUES {}",
            rows.join(", ")
        ),
    );
    // A statement that runs for ten seconds, a hundredth of a second per row.
    const SLOW: &str = "SELECT SLEEP(0.01) FROM t";
    let url = p.url("d");
    let runtime = common::runtime(2);
    runtime.block_on(async move {
        let mut admin = common::connect(&url).await.unwrap();
        let mut holder = common::connect(&url).await.unwrap();
        let mut slow = common::connect(&url).await.unwrap();
        let id = |conn: &mut mysql_async::Conn| conn.id();
        let (holder_id, slow_id) = (id(&mut holder), id(&mut slow));
        let reported: Option<u32> = holder.query_first("SELECT CONNECTION_ID()").await.unwrap();
        assert_eq!(
            reported,
            Some(holder_id),
            "CONNECTION_ID() is the handshake's id"
        );

        // KILL QUERY from another connection.
        let running = tokio::spawn(async move {
            let result = common::bounded(slow.query_drop(SLOW)).await;
            (slow, result, Instant::now())
        });
        let list = wait_until_running(&mut admin, slow_id, SLOW).await;
        assert!(
            list.iter().any(|(id, _)| *id == holder_id),
            "every session is listed: {list:?}"
        );
        let killed_at = Instant::now();
        admin
            .query_drop(format!("KILL QUERY {slow_id}"))
            .await
            .unwrap();
        let (mut slow, result, ended) = running.await.unwrap();
        assert_eq!(result.unwrap_err().server_code(), Some(1317));
        assert!(
            ended - killed_at < Duration::from_secs(1),
            "{:?}",
            ended - killed_at
        );
        let one: Option<i64> = slow.query_first("SELECT 1").await.unwrap();
        assert_eq!(one, Some(1), "the connection lives on after KILL QUERY");

        // KILL of a connection that holds a row lock in an open transaction.
        holder.query_drop("BEGIN").await.unwrap();
        holder
            .query_drop("SELECT k FROM t WHERE id = 1 FOR UPDATE")
            .await
            .unwrap();
        admin.query_drop(format!("KILL {holder_id}")).await.unwrap();
        let started = Instant::now();
        admin
            .query_drop("UPDATE t SET k = 1 WHERE id = 1")
            .await
            .unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "the lock was freed at once"
        );
        let after = common::bounded(holder.query_drop("SELECT 1")).await;
        assert!(
            matches!(after, Err(common::ClientError::Connection(_))),
            "{after:?}"
        );
        let unknown = common::bounded(admin.query_drop(format!("KILL {holder_id}"))).await;
        assert_eq!(unknown.unwrap_err().server_code(), Some(1094));

        // Time limits: the session variable, the hint, and a lone SLEEP cut short.
        admin
            .query_drop("SET max_execution_time = 300")
            .await
            .unwrap();
        let started = Instant::now();
        let limited = common::bounded(admin.query_drop(SLOW)).await;
        assert_eq!(limited.unwrap_err().server_code(), Some(3024));
        assert!(started.elapsed() < Duration::from_secs(2));
        let slept: Option<i64> = admin.query_first("SELECT SLEEP(5)").await.unwrap();
        assert_eq!(slept, Some(1));
        admin
            .query_drop("UPDATE t SET k = 2 WHERE id = 2")
            .await
            .unwrap();
        admin
            .query_drop("SET max_execution_time = 0")
            .await
            .unwrap();
        let hinted = common::bounded(
            admin.query_drop("SELECT /*+ MAX_EXECUTION_TIME(300) */ SLEEP(0.01) FROM t"),
        )
        .await;
        assert_eq!(hinted.unwrap_err().server_code(), Some(3024));
        let k: Option<i64> = admin.query_first("SELECT SUM(k) FROM t").await.unwrap();
        assert_eq!(k, Some(3));
    });
}

/// A statement waiting for a row lock is stopped by `KILL QUERY` within a second (1317) and
/// its connection goes on; `KILL` of a waiting connection ends it, and the lock holder is not
/// disturbed. Clients: `mysql_async` over TCP.
#[test]
fn kill_stops_a_statement_waiting_for_a_lock() {
    use mysql_async::prelude::Queryable;

    let p = Playground::start();
    p.sql(
        None,
        "CREATE DATABASE d; CREATE TABLE d.t (id INT PRIMARY KEY, k INT NOT NULL); \
         INSERT INTO d.t VALUES (1, 0)",
    );
    let url = p.url("d");
    let runtime = common::runtime(2);
    runtime.block_on(async move {
        let mut admin = common::connect(&url).await.unwrap();
        let mut holder = common::connect(&url).await.unwrap();
        holder.query_drop("BEGIN").await.unwrap();
        holder
            .query_drop("SELECT k FROM t WHERE id = 1 FOR UPDATE")
            .await
            .unwrap();
        for scope in ["QUERY ", ""] {
            let mut waiter = common::connect(&url).await.unwrap();
            let waiter_id = waiter.id();
            let waiting = tokio::spawn(async move {
                let result =
                    common::bounded(waiter.query_drop("UPDATE t SET k = 1 WHERE id = 1")).await;
                (waiter, result, Instant::now())
            });
            // Until the UPDATE is seen running (it waits for the lock from its first moment).
            wait_until_running(&mut admin, waiter_id, "UPDATE").await;
            tokio::time::sleep(Duration::from_millis(300)).await;
            let killed_at = Instant::now();
            admin
                .query_drop(format!("KILL {scope}{waiter_id}"))
                .await
                .unwrap();
            let (mut waiter, result, ended) = waiting.await.unwrap();
            assert!(
                ended - killed_at < Duration::from_secs(1),
                "KILL {scope}took {:?}",
                ended - killed_at
            );
            let after = common::bounded(waiter.query_drop("SELECT 1")).await;
            if scope.is_empty() {
                assert!(
                    matches!(after, Err(common::ClientError::Connection(_))),
                    "{after:?}"
                );
            } else {
                assert_eq!(result.unwrap_err().server_code(), Some(1317));
                assert!(after.is_ok(), "the connection goes on: {after:?}");
            }
        }
        holder
            .query_drop("UPDATE t SET k = 5 WHERE id = 1")
            .await
            .unwrap();
        holder.query_drop("COMMIT").await.unwrap();
        let k: Option<i64> = admin
            .query_first("SELECT k FROM t WHERE id = 1")
            .await
            .unwrap();
        assert_eq!(k, Some(5), "the holder's transaction was not disturbed");
    });
}

/// Clients that open TCP and never log in cannot keep others out (they have a budget of their
/// own, the oldest closed first); `max_connections` counts logged-in clients, is what
/// `@@max_connections` reports, and the one too many gets 1040; `SET GLOBAL` changes it and a
/// session-level SET is 1229. Clients: the `mariadb` CLI and `mysql_async`.
#[test]
fn connection_limits_count_logged_in_clients() {
    use std::net::TcpStream;

    const MAX_CONNECTIONS: usize = 1024;
    let p = Playground::start_with(&["--max-connections", &MAX_CONNECTIONS.to_string()]);
    let idle: Vec<TcpStream> = (0..2000)
        .map(|_| TcpStream::connect(("127.0.0.1", p.port)).unwrap())
        .collect();
    assert_eq!(
        p.sql(None, "SELECT @@max_connections, @@global.max_connections"),
        format!(
            "@@max_connections\t@@global.max_connections\n{MAX_CONNECTIONS}\t{MAX_CONNECTIONS}\n"
        ),
        "the mariadb client logs in past 2,000 idle handshakes"
    );
    drop(idle);

    // Over TCP only: mysql_async otherwise moves each connection to the Unix socket that
    // @@socket names, holding two slots for a moment.
    let url = format!("{}?prefer_socket=false", p.url(""));
    let runtime = common::runtime(2);
    let mut held = runtime.block_on(async {
        let mut held = Vec::new();
        while held.len() < MAX_CONNECTIONS {
            let mut batch = tokio::task::JoinSet::new();
            for _ in 0..(MAX_CONNECTIONS - held.len()).min(64) {
                let url = url.clone();
                batch.spawn(async move { common::connect(&url).await });
            }
            while let Some(conn) = batch.join_next().await {
                held.push(conn.unwrap().expect("a connection within max_connections"));
            }
        }
        held
    });
    let refused = p.mariadb(None, "SELECT 1");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("ERROR 1040") && stderr.contains("Too many connections"),
        "the one too many: {stderr}"
    );

    runtime.block_on(async {
        use mysql_async::prelude::Queryable;
        let conn = &mut held[0];
        let error = common::bounded(conn.query_drop("SET max_connections = 5"))
            .await
            .unwrap_err();
        assert_eq!(error.server_code(), Some(1229), "{error:?}");
        let raised = format!("SET GLOBAL max_connections = {}", MAX_CONNECTIONS + 1);
        common::bounded(conn.query_drop(raised)).await.unwrap();
    });
    assert_eq!(
        p.sql(None, "SELECT @@max_connections"),
        format!("@@max_connections\n{}\n", MAX_CONNECTIONS + 1),
        "one more slot after SET GLOBAL"
    );
    runtime.block_on(async {
        for conn in held {
            let _ = conn.disconnect().await;
        }
    });
}

/// A statement that needs more memory than `tidb_mem_quota_query` gets 8175, one that would
/// take the server's statements past `--memory-limit-mib` gets 8176, and a sysbench
/// point_select run alongside sees no error; the process's RSS stays bounded throughout (the
/// cross join below would hold about 2.5 GiB). Clients: the `mariadb` CLI and sysbench.
#[test]
fn statements_past_their_memory_quota_are_cancelled() {
    const LIMIT_MIB: u64 = 512;
    let p = Playground::start_with(&["--memory-limit-mib", &LIMIT_MIB.to_string()]);
    p.sql(None, "CREATE DATABASE sbtest");
    common::sysbench_output(
        common::spawn_sysbench(p.port, &["oltp_common", "prepare"]),
        "prepare",
    );
    let sampler = RssSampler::start(p.child.id());
    let point_selects = common::spawn_sysbench(
        p.port,
        &["--threads=4", "--time=8", "oltp_point_select", "run"],
    );
    // Every row of one table with every row of the other, each its own group, with rollup
    // totals: held whole (a sort or a plain GROUP BY would spill to disk, a plain result
    // would stream).
    const CROSS_JOIN: &str = "SELECT a.c, b.pad, COUNT(*) FROM sbtest.sbtest1 a, \
                              sbtest.sbtest2 b GROUP BY a.c, b.pad WITH ROLLUP LIMIT 1";
    let quota = p.mariadb(
        None,
        &format!("SET tidb_mem_quota_query = {}; {CROSS_JOIN}", 64 << 20),
    );
    let quota = String::from_utf8_lossy(&quota.stderr).into_owned();
    let server = p.mariadb(None, CROSS_JOIN);
    let server = String::from_utf8_lossy(&server.stderr).into_owned();
    let point_selects = common::sysbench_output(point_selects, "point_select alongside");
    let peak = sampler.stop();
    assert!(
        quota.contains("ERROR 8175") && quota.contains("tidb_mem_quota_query"),
        "{quota}"
    );
    assert!(
        server.contains("ERROR 8176") && server.contains("tidb_server_memory_limit"),
        "{server}"
    );
    assert!(
        point_selects.contains("ignored errors:                      0"),
        "{point_selects}"
    );
    // The limit, the block cache (256 MiB) and what RocksDB and the threads hold besides.
    assert!(peak < LIMIT_MIB + 256 + 512, "peak RSS {peak} MiB");
    assert_eq!(
        p.sql(
            None,
            "SELECT COUNT(*) FROM sbtest.sbtest1 a JOIN sbtest.sbtest2 b ON a.id = b.id"
        ),
        "COUNT(*)\n2000\n"
    );
    eprintln!("peak RSS {peak} MiB");
}

/// While the running statements hold nearly all of the server's memory limit
/// (`tidb_server_memory_limit`, set here just above what one statement holds), a new statement
/// waits to start: it is refused with 1041 when no memory comes back within 5 s, and admitted
/// as soon as the statement holding it ends; SHOW PROCESSLIST and KILL do not wait. Client: the
/// `mariadb` CLI.
#[test]
fn new_statements_wait_while_memory_is_nearly_spent() {
    const MIB: u64 = 1 << 20;
    let p = Playground::start();
    p.sql(
        None,
        "CREATE DATABASE w; CREATE TABLE w.g (id INT PRIMARY KEY, pad VARCHAR(200))",
    );
    p.sql(
        Some("w"),
        "SET cte_max_recursion_depth = 80000; INSERT INTO g WITH RECURSIVE r(n) AS \
         (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 80000) SELECT n, REPEAT('x', 180) FROM r",
    );
    std::thread::scope(|scope| {
        // Holds every group (about 37 MiB), then sleeps 10 s on its first row.
        let holder = scope.spawn(|| {
            p.mariadb(
                Some("w"),
                "SELECT id, COUNT(*), SLEEP(IF(id = 1, 10, 0)) FROM g \
                 GROUP BY pad, id WITH ROLLUP LIMIT 1",
            )
        });
        // What it holds once it sleeps (SLEEP() runs after the groups are all held).
        let held = p.memory_of_sleeping("SLEEP(IF");
        assert!(held > 20 * MIB, "it holds {held} bytes");
        // Its reservation (whole MiB) is more than 90 % of a limit 2 MiB above it (room for
        // the small statements below, 1 MiB each at most).
        let limit = (held.div_ceil(MIB) + 2) * MIB;
        p.sql(
            None,
            &format!("SET GLOBAL tidb_server_memory_limit = {limit}"),
        );

        let started = Instant::now();
        let refused = p.mariadb(None, "SELECT 1");
        let waited = started.elapsed();
        let error = String::from_utf8_lossy(&refused.stderr).into_owned();
        assert!(error.contains("ERROR 1041"), "{error}");
        assert!(
            waited >= Duration::from_millis(4900),
            "refused after {waited:?}"
        );

        // What an operator runs to find and stop the holder starts at once.
        let started = Instant::now();
        let list = p.sql(None, "SHOW PROCESSLIST");
        assert!(list.contains("SLEEP(IF"), "{list}");
        assert!(
            started.elapsed() < Duration::from_secs(3),
            "{:?}",
            started.elapsed()
        );

        let started = Instant::now();
        assert_eq!(p.sql(None, "SELECT 2"), "2\n2\n");
        let waited = started.elapsed();
        let holder = holder.join().unwrap();
        assert!(
            holder.status.success(),
            "{}",
            String::from_utf8_lossy(&holder.stderr)
        );
        assert!(
            waited >= Duration::from_millis(500),
            "admitted after {waited:?}, before the holder ended"
        );
    });
    p.sql(None, "SET GLOBAL tidb_server_memory_limit = 0");
    assert_eq!(
        p.sql(None, "SELECT @@global.tidb_server_memory_limit"),
        "@@global.tidb_server_memory_limit\n0\n"
    );
}

/// A result larger than the statement's memory quota is sent while the SELECT runs instead of
/// being held whole: through the text protocol (alone and between the results of a
/// multi-statement query) and the binary one. A sort, a DISTINCT, a GROUP BY, windows and a
/// join's build side larger than the quota spill to disk. An error after some rows were sent
/// reaches the client after them, on a connection that goes on.
#[test]
fn results_larger_than_the_memory_quota_stream_to_the_client() {
    use mysql::prelude::Queryable;

    const ROWS: u64 = 100_000;
    // About 25 MiB of rows as the server counts them; the quota is 4 MiB.
    const QUOTA: &str = "SET tidb_mem_quota_query = 4194304";
    let p = Playground::start();
    p.sql(
        None,
        "CREATE DATABASE big; CREATE TABLE big.t (id INT PRIMARY KEY, pad VARCHAR(200))",
    );
    p.sql(
        Some("big"),
        &format!(
            "SET cte_max_recursion_depth = {ROWS}; INSERT INTO t WITH RECURSIVE r(n) AS \
             (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < {ROWS}) \
             SELECT n, REPEAT('x', 180) FROM r"
        ),
    );
    let quick = |sql: &str| {
        common::mariadb_reading(
            p.port,
            &[
                "--quick",
                "-N",
                "-D",
                "big",
                "-e",
                &format!("{QUOTA}; {sql}"),
            ],
            b"",
        )
    };

    let all = quick("SELECT id, pad FROM t");
    assert!(
        all.status.success(),
        "{}",
        String::from_utf8_lossy(&all.stderr)
    );
    let ids: Vec<u64> = String::from_utf8_lossy(&all.stdout)
        .lines()
        .map(|line| line.split('\t').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(ids, (1..=ROWS).collect::<Vec<_>>());

    let batch = quick("SELECT 'first'; SELECT id FROM t; SELECT 'last'");
    let text = String::from_utf8_lossy(&batch.stdout).into_owned();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines.len() as u64,
        ROWS + 2,
        "{}",
        String::from_utf8_lossy(&batch.stderr)
    );
    assert_eq!(
        (lines[0], lines[1], lines[lines.len() - 1]),
        ("first", "1", "last")
    );

    // A sort past the quota writes sorted runs to disk and merges them: the same rows in
    // the same order as the sort held in memory under the default quota.
    const SORT: &str = "SELECT id, IF(id % 3 = 0, NULL, pad), id / 7, -id * 0.5e0, \
                        DATE_ADD('2020-01-01', INTERVAL id DAY), SEC_TO_TIME(id) FROM t \
                        ORDER BY id % 1000, id DESC";
    let spilled = quick(SORT);
    assert!(
        spilled.status.success(),
        "{}",
        String::from_utf8_lossy(&spilled.stderr)
    );
    let in_memory =
        common::mariadb_reading(p.port, &["--quick", "-N", "-D", "big", "-e", SORT], b"");
    assert!(in_memory.status.success());
    assert!(
        spilled.stdout == in_memory.stdout,
        "the spilled sort differs"
    );
    let first: Vec<&str> = std::str::from_utf8(&spilled.stdout)
        .unwrap()
        .lines()
        .take(2)
        .collect();
    assert_eq!(
        first,
        [
            format!(
                "100000\t{}\t14285.7143\t-50000\t2293-10-16\t27:46:40",
                "x".repeat(180)
            ),
            "99000\tNULL\t14142.8571\t-49500\t2291-01-20\t27:30:00".to_string()
        ]
    );

    // DISTINCT and GROUP BY past the quota spill their rows by key and finish each part alone.
    let distinct = quick("SELECT DISTINCT id % 40000, CONCAT(pad, pad) FROM t");
    assert!(
        distinct.status.success(),
        "{}",
        String::from_utf8_lossy(&distinct.stderr)
    );
    let text = String::from_utf8_lossy(&distinct.stdout).into_owned();
    let rows: Vec<&str> = text.lines().collect();
    let unique: std::collections::HashSet<&str> = rows.iter().copied().collect();
    assert_eq!((rows.len(), unique.len()), (40_000, 40_000));
    let grouped =
        quick("SELECT id % 40000, COUNT(*), MAX(CONCAT(pad, id)) FROM t GROUP BY id % 40000");
    assert!(
        grouped.status.success(),
        "{}",
        String::from_utf8_lossy(&grouped.stderr)
    );
    let text = String::from_utf8_lossy(&grouped.stdout).into_owned();
    let counts: u64 = text
        .lines()
        .map(|line| line.split('\t').nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!((text.lines().count(), counts), (40_000, ROWS));

    // A hash join whose build side passes the quota joins through partitions on disk: every
    // pair of rows with the same key, each once, sent as they come; a LEFT JOIN pads the rows
    // whose key is NULL.
    p.sql(
        Some("big"),
        "CREATE TABLE u (id INT PRIMARY KEY, k INT, pad VARCHAR(200)); \
         INSERT INTO u SELECT id, IF(id % 10 = 0, NULL, id % 50000), pad FROM t",
    );
    let joined = quick("SELECT a.id, b.id, b.pad FROM u a JOIN u b ON b.k = a.k");
    assert!(
        joined.status.success(),
        "{}",
        String::from_utf8_lossy(&joined.stderr)
    );
    let text = String::from_utf8_lossy(&joined.stdout).into_owned();
    let mut pairs = std::collections::HashSet::new();
    for line in text.lines() {
        let mut fields = line.split('\t');
        let a: u64 = fields.next().unwrap().parse().unwrap();
        let b: u64 = fields.next().unwrap().parse().unwrap();
        assert_eq!(fields.next().map(str::len), Some(180), "{line}");
        assert!(
            !a.is_multiple_of(10) && a % 50_000 == b % 50_000,
            "{a} joined {b}"
        );
        assert!(pairs.insert((a, b)), "{a} joined {b} twice");
    }
    assert_eq!(pairs.len(), 180_000);
    let left = quick("SELECT COUNT(*), COUNT(b.id), SUM(a.id) FROM u a LEFT JOIN u b ON b.k = a.k");
    assert_eq!(
        String::from_utf8_lossy(&left.stdout),
        "190000\t180000\t9500050000\n",
        "{}",
        String::from_utf8_lossy(&left.stderr)
    );

    // Windows and a nested-loop join (no equality) past the quota go through files on disk:
    // the same rows as in memory under the default quota. The join meets, for each a.id up to
    // 40, the rows whose k (id % 50,000, NULL every tenth) is below it: two per such k that
    // is not a multiple of 10.
    let pairs: usize = (1..=40usize)
        .map(|a| 2 * (1..a).filter(|k| k % 10 != 0).count())
        .sum();
    for (sql, rows) in [
        (
            "SELECT id, ROW_NUMBER() OVER (PARTITION BY id % 1000 ORDER BY id DESC), \
             SUM(id) OVER (PARTITION BY id % 300 ORDER BY id ROWS BETWEEN 1 PRECEDING AND \
             1 FOLLOWING), LAG(pad) OVER (PARTITION BY id % 1000 ORDER BY id DESC) \
             FROM t ORDER BY id",
            ROWS as usize,
        ),
        (
            "SELECT a.id, b.id, b.pad FROM u a JOIN u b ON b.k < a.id WHERE a.id <= 40 \
             ORDER BY a.id, b.id",
            pairs,
        ),
    ] {
        let spilled = quick(sql);
        assert!(
            spilled.status.success(),
            "{}",
            String::from_utf8_lossy(&spilled.stderr)
        );
        let in_memory =
            common::mariadb_reading(p.port, &["--quick", "-N", "-D", "big", "-e", sql], b"");
        assert!(in_memory.status.success());
        assert!(spilled.stdout == in_memory.stdout, "{sql}: spilled differs");
        let sent = spilled.stdout.iter().filter(|&&b| b == b'\n').count();
        assert_eq!(sent, rows, "{sql}");
    }

    // Row 90,000 cannot be computed: the rows before it went out, then the error.
    let failing = quick("SELECT id, JSON_EXTRACT(IF(id = 90000, '{bad', '{}'), '$') FROM t");
    let sent = String::from_utf8_lossy(&failing.stdout).lines().count();
    let error = String::from_utf8_lossy(&failing.stderr).into_owned();
    assert!(error.contains("ERROR 3141"), "{error}");
    assert!(
        (10_000..90_000).contains(&sent),
        "{sent} rows before the error"
    );

    let mut conn = mysql::Conn::new(mysql::Opts::from_url(&p.url("big")).unwrap()).unwrap();
    conn.query_drop(QUOTA).unwrap();
    let mut count = 0u64;
    let mut sum = 0u64;
    for row in conn
        .exec_iter("SELECT id, pad FROM t WHERE id > ?", (0,))
        .unwrap()
    {
        let (id, pad): (u64, String) = mysql::from_row(row.unwrap());
        assert_eq!(pad.len(), 180);
        count += 1;
        sum += id;
    }
    assert_eq!((count, sum), (ROWS, ROWS * (ROWS + 1) / 2));
    let mut sent = 0;
    let mut failed = None;
    for row in conn
        .exec_iter(
            "SELECT id, JSON_EXTRACT(IF(id = ?, '{bad', '{}'), '$') FROM t",
            (90_000,),
        )
        .unwrap()
    {
        match row {
            Ok(_) => sent += 1,
            Err(e) => failed = Some(e.to_string()),
        }
    }
    let failed = failed.unwrap_or_default();
    assert!(failed.contains("3141"), "{sent} rows, then {failed:?}");
    let next: Option<u64> = conn.query_first("SELECT COUNT(*) FROM t").unwrap();
    assert_eq!(next, Some(ROWS));
}

/// Samples a process's resident memory every 20 ms until stopped (or dropped).
struct RssSampler {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl RssSampler {
    fn start(pid: u32) -> RssSampler {
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = done.clone();
        let thread = std::thread::spawn(move || {
            let mut peak_mib = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let status = std::fs::read_to_string(format!("/proc/{pid}/status"));
                let kib: Option<u64> = status.ok().and_then(|status| {
                    status
                        .lines()
                        .find_map(|line| line.strip_prefix("VmRSS:"))
                        .and_then(|rest| rest.trim().strip_suffix("kB"))
                        .and_then(|kib| kib.trim().parse().ok())
                });
                peak_mib = peak_mib.max(kib.unwrap_or(0) >> 10);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            peak_mib
        });
        RssSampler {
            done,
            thread: Some(thread),
        }
    }

    /// Stops sampling; returns the peak in MiB.
    fn stop(mut self) -> u64 {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        self.thread.take().unwrap().join().unwrap()
    }
}

impl Drop for RssSampler {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Polls `SHOW FULL PROCESSLIST` until connection `id` is running a statement that starts with
/// `statement` (for at most 5 seconds), and returns the list that showed it as (Id, Info).
async fn wait_until_running(
    admin: &mut mysql_async::Conn,
    id: u32,
    statement: &str,
) -> Vec<(u32, Option<String>)> {
    use mysql_async::prelude::Queryable;
    let seen = Instant::now();
    loop {
        let list: Vec<(u32, Option<String>)> = admin
            .query_map("SHOW FULL PROCESSLIST", |row: mysql_async::Row| {
                (row.get(0).unwrap(), row.get(7).unwrap())
            })
            .await
            .unwrap();
        if list.iter().any(|(listed, info)| {
            *listed == id && info.as_deref().is_some_and(|i| i.starts_with(statement))
        }) {
            return list;
        }
        assert!(seen.elapsed() < Duration::from_secs(5), "{list:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
