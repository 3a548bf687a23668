//! `strata bench tpcc` end to end, against a Strata playground and against MariaDB (started by
//! `/work/shared/bench/mariadb-peer.sh`, which installs it when missing and needs root):
//! prepare one warehouse, check everything right after the load, see a broken customer without
//! deliveries caught by 3.3.2.10 and 3.3.2.12, run 20 s at 4 threads with a JSON result, check
//! again, then see a run stop on an error and one go on with --ignore-error (rolled-back
//! transactions leave the data consistent), and clean up.
//!
//! [`tpcc_sequence`] takes the server as a parameter: both servers go through the same steps.

mod common;

use common::tpcc::{read_result, tpcc};
use mysql_async::prelude::Queryable;

/// Seconds of the measured run.
const RUN_SECONDS: u32 = 20;

/// A MySQL-protocol server and its login.
#[derive(Clone, Debug)]
pub struct Server {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// Strata, whose EXPLAIN ANALYZE is checked too (MariaDB spells it `ANALYZE`).
    pub strata: bool,
}

impl Server {
    fn connection_args(&self, db: &str) -> Vec<String> {
        vec![
            "-H".into(),
            self.host.clone(),
            "-P".into(),
            self.port.to_string(),
            "-U".into(),
            self.user.clone(),
            "-p".into(),
            self.password.clone(),
            "-D".into(),
            db.into(),
        ]
    }

    /// Runs statements in order on one connection (to `db` when given).
    fn execute(&self, db: Option<&str>, statements: &[&str]) -> Vec<Vec<mysql_async::Value>> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let opts = mysql_async::OptsBuilder::default()
                .ip_or_hostname(self.host.clone())
                .tcp_port(self.port)
                .user(Some(self.user.clone()))
                .pass(Some(self.password.clone()))
                .db_name(db.map(str::to_string))
                .prefer_socket(false);
            let mut conn = mysql_async::Conn::new(opts).await.expect("connect");
            let mut last = Vec::new();
            for statement in statements {
                let rows: Vec<mysql_async::Row> = conn
                    .query(*statement)
                    .await
                    .unwrap_or_else(|e| panic!("{statement}: {e}"));
                last = rows.into_iter().map(|r| r.unwrap()).collect();
            }
            let _ = conn.disconnect().await;
            last
        })
    }
}

/// Drops the test database however the test ends.
struct Database<'a> {
    server: &'a Server,
    name: String,
}

impl Drop for Database<'_> {
    fn drop(&mut self) {
        let drop = format!("DROP DATABASE IF EXISTS {}", self.name);
        let _ = std::panic::catch_unwind(|| self.server.execute(None, &[&drop]));
    }
}

fn args(subcommand: &str, server: &Server, db: &str, extra: &[&str]) -> Vec<String> {
    let mut all = vec![subcommand.to_string()];
    all.extend(server.connection_args(db));
    all.extend(extra.iter().map(|s| s.to_string()));
    all
}

fn assert_checks_pass(server: &Server, db: &str, extra: &[&str]) {
    let (ok, stdout, stderr) = tpcc(&args("check", server, db, extra));
    assert!(ok, "check failed:\n{stdout}\n{stderr}");
    assert!(
        !stdout.contains("FAIL") && !stdout.contains("ERROR"),
        "{stdout}"
    );
}

/// EXPLAIN ANALYZE of Stock-Level's join (its rows, not their count) on the loaded data:
/// the root's actual rows are the rows the query returns, and the join's steps' rows are
/// what each relation contributed.
fn assert_explain_analyze_counts_the_join(server: &Server, db: &str) {
    let query = "SELECT ol_i_id, s_quantity FROM order_line, stock WHERE ol_w_id = 1 \
                 AND ol_d_id = 1 AND ol_o_id < 3001 AND ol_o_id >= 2981 AND s_w_id = 1 \
                 AND s_i_id = ol_i_id AND s_quantity < 15";
    let returned = server.execute(Some(db), &[query]).len();
    assert!(returned > 0, "the Stock-Level join returned nothing");
    let plan = server.execute(Some(db), &[&format!("EXPLAIN ANALYZE {query}")]);
    let text = |row: &[mysql_async::Value], i: usize| -> String {
        mysql_async::from_value::<String>(row[i].clone())
    };
    let lines: Vec<String> = plan
        .iter()
        .map(|r| {
            (0..r.len())
                .map(|i| text(r, i))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect();
    // id, estRows, actRows, task, access object, execution info, …
    assert_eq!(
        text(&plan[0], 2),
        returned.to_string(),
        "the root's actRows:\n{}",
        lines.join("\n")
    );
    let join = plan
        .iter()
        .find(|r| text(r, 0).trim_start_matches(['└', '─', ' ']) == "Join")
        .unwrap_or_else(|| panic!("no Join in\n{}", lines.join("\n")));
    assert_eq!(text(join, 2), returned.to_string(), "{}", lines.join("\n"));
    assert!(text(join, 5).starts_with("time:"), "{}", lines.join("\n"));
    // The last step passes on every joined row.
    assert_eq!(
        text(plan.last().unwrap(), 2),
        returned.to_string(),
        "{}",
        lines.join("\n")
    );
}

/// The whole driver against `server`, in a fresh database that is dropped at the end.
pub fn tpcc_sequence(server: &Server) {
    let db = format!("tpcc_test_{}", std::process::id());
    let _database = Database {
        server,
        name: db.clone(),
    };
    let dir = tempfile::tempdir().unwrap();

    let (ok, stdout, stderr) = tpcc(&args(
        "prepare",
        server,
        &db,
        &["--warehouses", "1", "-T", "4", "--seed", "7"],
    ));
    assert!(ok, "prepare failed:\n{stdout}\n{stderr}");
    assert!(stderr.contains("(100.0%)"), "{stderr}");
    assert_checks_pass(server, &db, &["--warehouses", "1", "--check-all"]);
    if server.strata {
        assert_explain_analyze_counts_the_join(server, &db);
    }

    // A customer whose only order is undelivered (orders 2101..=3000 are new orders after the
    // load): a wrong balance must be caught although no order line of theirs is delivered.
    let rows = server.execute(
        Some(&db),
        &["SELECT o_c_id FROM orders WHERE o_w_id = 1 AND o_d_id = 4 AND o_id = 3000"],
    );
    let c_id: u32 = mysql_async::from_value(rows[0][0].clone());
    let nudge = |delta: &str| {
        let sql = format!(
            "UPDATE customer SET c_balance = c_balance {delta} WHERE c_w_id = 1 AND c_d_id = 4 \
             AND c_id = {c_id}"
        );
        server.execute(Some(&db), &[&sql]);
    };
    nudge("+ 1");
    let (ok, stdout, _) = tpcc(&args("check", server, &db, &["--warehouses", "1"]));
    assert!(!ok, "a wrong balance must fail the check:\n{stdout}");
    let offender = format!("c_d_id=4 c_id={c_id} ");
    for condition in ["3.3.2.10", "3.3.2.12"] {
        let line = stdout
            .lines()
            .find(|l| l.starts_with(condition))
            .unwrap_or_else(|| panic!("{condition} in\n{stdout}"));
        assert!(line.contains("FAIL (1 offending row)"), "{line}");
    }
    assert_eq!(stdout.matches(&offender).count(), 2, "{stdout}");
    let untouched = stdout.lines().find(|l| l.starts_with("3.3.2.8 ")).unwrap();
    assert!(untouched.ends_with("pass"), "{untouched}");
    nudge("- 1");

    let out = dir.path().join("tpcc.json");
    let seconds = RUN_SECONDS.to_string();
    let (ok, stdout, stderr) = tpcc(&args(
        "run",
        server,
        &db,
        &[
            "--warehouses",
            "1",
            "-T",
            "4",
            "--time",
            &seconds,
            "--out",
            out.to_str().unwrap(),
        ],
    ));
    assert!(ok, "run failed:\n{stdout}\n{stderr}");
    // The first interval ends 10 s in, reported when the driver wakes then (a busy machine
    // may wake it a little late; the report gives the time measured).
    let first_interval: f64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("[Current] NEW_ORDER - Takes(s): "))
        .and_then(|rest| rest.split(", Count: ").next())
        .and_then(|seconds| seconds.parse().ok())
        .unwrap_or_else(|| panic!("a [Current] NEW_ORDER line in\n{stdout}"));
    assert!((10.0..10.5).contains(&first_interval), "{stdout}");
    assert!(
        stdout.contains("[Summary] PAYMENT - Takes(s): "),
        "{stdout}"
    );
    let summary = stdout
        .lines()
        .find(|l| l.starts_with("tpmC: "))
        .expect("the tpmC line");
    let result = read_result(&out);
    assert!(result.tpmc > 0.0, "{summary}");
    assert_eq!(
        summary,
        format!(
            "tpmC: {:.1}, tpmTotal: {:.1}, efficiency: {:.1}%",
            result.tpmc, result.tpm_total, result.efficiency
        )
    );
    assert!(result.tpm_total > result.tpmc);
    assert_eq!((result.warehouses, result.threads), (1, 4));
    assert!(
        result.time_seconds >= f64::from(RUN_SECONDS),
        "{}",
        result.time_seconds
    );
    assert_eq!(result.intervals.len(), 2, "{:?}", result.intervals);
    assert!(!result.environment.server_version.is_empty());
    assert!(result.command.contains("-p ***"), "{}", result.command);
    for key in [
        "new_order",
        "payment",
        "order_status",
        "delivery",
        "stock_level",
    ] {
        let stats = &result.transactions[key];
        assert!(
            stats.count > 0 && stats.p99_ms >= stats.p50_ms,
            "{key}: {stats:?}"
        );
    }
    assert_checks_pass(server, &db, &["--warehouses", "1"]);

    // Every 50th item vanishes, so about a fifth of the New-Orders fail. Without
    // --ignore-error the first failure stops the run; with it the run goes on and counts them.
    // Failed transactions are rolled back, so the data stays consistent.
    server.execute(Some(&db), &["DELETE FROM item WHERE i_id % 50 = 0"]);
    let (ok, stdout, stderr) = tpcc(&args(
        "run",
        server,
        &db,
        &[
            "--warehouses",
            "1",
            "-T",
            "2",
            "--time",
            "60",
            "--weight",
            "100,0,0,0,0",
        ],
    ));
    assert!(!ok, "the run must stop on the error:\n{stdout}\n{stderr}");
    assert!(stderr.contains("NEW_ORDER failed: item "), "{stderr}");
    assert!(stderr.contains("--ignore-error"), "{stderr}");
    assert!(stdout.contains("[Summary] NEW_ORDER_ERR"), "{stdout}");
    let ignored = dir.path().join("ignored.json");
    let (ok, stdout, stderr) = tpcc(&args(
        "run",
        server,
        &db,
        &[
            "--warehouses",
            "1",
            "-T",
            "2",
            "--time",
            "3",
            "--ignore-error",
            "-o",
            ignored.to_str().unwrap(),
        ],
    ));
    assert!(ok, "--ignore-error must go on:\n{stdout}\n{stderr}");
    let new_order = &read_result(&ignored).transactions["new_order"];
    assert!(new_order.count > 0 && new_order.errors > 0, "{new_order:?}");
    assert!(stdout.contains("[Summary] NEW_ORDER_ERR"), "{stdout}");
    assert_checks_pass(server, &db, &["--warehouses", "1"]);

    let (ok, stdout, stderr) = tpcc(&args("cleanup", server, &db, &[]));
    assert!(ok, "cleanup failed:\n{stdout}\n{stderr}");
    let tables =
        format!("SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '{db}'");
    let rows = server.execute(None, &[&tables]);
    assert_eq!(mysql_async::from_value::<u64>(rows[0][0].clone()), 0);
}

#[test]
fn tpcc_against_a_playground() {
    let mut playground = common::Playground::start();
    let run = std::panic::catch_unwind(|| {
        tpcc_sequence(&Server {
            host: "127.0.0.1".into(),
            port: playground.port,
            user: "root".into(),
            password: String::new(),
            strata: true,
        })
    });
    if let Err(panic) = run {
        // What the playground said, and whether it still runs, tell a server failure from
        // a driver failure.
        let status = playground.child.try_wait();
        let log = std::fs::read_to_string(playground.data_dir.with_extension("log"));
        eprintln!(
            "playground: {status:?}; its log:\n{}",
            log.unwrap_or_default()
        );
        std::panic::resume_unwind(panic);
    }
}

#[test]
fn tpcc_against_mariadb() {
    let _peer = common::MariadbPeer::start();
    tpcc_sequence(&Server {
        host: "127.0.0.1".into(),
        port: 3306,
        user: "sbtest".into(),
        password: "password".into(),
        strata: false,
    });
}
