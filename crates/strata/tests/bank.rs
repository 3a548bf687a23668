//! Bank transfers under contention. Tasks move money between random pairs of accounts for a few
//! seconds, in two styles: reading both balances with `SELECT … FOR UPDATE` (in a random order,
//! so that transactions deadlock) and writing the new balances computed by the client, or two
//! relative `UPDATE … SET balance = balance ± ?` statements inside BEGIN/COMMIT. A deadlock
//! (1213) or lock wait timeout (1205) is rolled back and retried; any other error fails.
//!
//! On a cluster the same runs while every region's leader is moved each second; a write
//! conflict (9007) is retried too, and a commit of unknown outcome (1180) counts as applied or
//! not, whichever the balances show.
//!
//! Under faults (a cluster whose KV nodes, placement drivers' leader and a SQL node are killed
//! with `kill -9` and restarted while leaders move), any error before COMMIT is rolled back and
//! retried, a lost connection is opened again, and a commit whose connection is lost counts as
//! of unknown outcome too; an error answered for COMMIT itself must mean nothing was applied.
//!
//! Meanwhile checkers read all accounts in one transaction, with `SUM` and row by row, and the
//! total must always be exactly `ACCOUNTS × BALANCE_INITIAL` with no negative balance. At the
//! end every account's balance is what the committed transfers imply: a lost update, a stale
//! `FOR UPDATE` read or a half-applied transfer shows up there.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::cluster::Cluster;
use common::{bounded, connect, test_seed, ClientError, Playground};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Statement, Value};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

const ACCOUNTS: i64 = 20;
const BALANCE_INITIAL: i64 = 1_000;
const TOTAL: i64 = ACCOUNTS * BALANCE_INITIAL;
/// Largest amount of one transfer.
const AMOUNT_MAX: i64 = 100;
/// Tasks that transfer with `SELECT … FOR UPDATE`.
const LOCKING_TASKS: u64 = 5;
/// Tasks that transfer with two relative UPDATEs.
const UPDATING_TASKS: u64 = 3;
const CHECKER_TASKS: u64 = 2;
/// How long the transfers run.
const RUN_TIME: Duration = Duration::from_secs(5);
/// How long they run on a cluster whose leaders move.
const CLUSTER_RUN_TIME: Duration = Duration::from_secs(15);
/// How long they run on a cluster whose nodes are killed (the faults take a minute).
const FAULTS_RUN_TIME: Duration = Duration::from_secs(60);
/// Most transfers of unknown outcome the final check tries every combination of.
const UNDETERMINED_MAX: usize = 14;
/// The transfer sessions' `innodb_lock_wait_timeout`, in seconds.
const LOCK_WAIT_TIMEOUT_S: u64 = 1;
/// How long the tasks may take to finish after `RUN_TIME`.
const TASK_STOP_TIMEOUT: Duration = Duration::from_secs(30);

const DEADLOCK: u16 = 1213;
const LOCK_WAIT_TIMEOUT: u16 = 1205;
/// A commit that met a newer commit of one of its keys: rolled back, retried.
const WRITE_CONFLICT: u16 = 9007;
/// A commit whose outcome is unknown (its answer was lost while a leader moved).
const COMMIT_UNDETERMINED: u16 = 1180;

const DATABASE: &str = "bank";

/// How a task moves money.
#[derive(Clone, Copy, Debug)]
enum Style {
    /// Locks both rows with `SELECT … FOR UPDATE`, then writes absolute balances.
    Locking,
    /// Two `UPDATE … SET balance = balance ± ?` statements, the debit guarded by the balance.
    Updating,
}

/// One committed transfer.
#[derive(Clone, Copy, Debug)]
struct Transfer {
    from: i64,
    to: i64,
    amount: i64,
}

/// How one attempt of a transfer ended without an error.
enum Attempt {
    Committed,
    /// The payer's balance was below the amount; the transaction was rolled back.
    Insufficient,
}

/// How an attempt of a transfer failed: before its COMMIT (nothing was applied) or at it.
enum Failure {
    Before(ClientError),
    AtCommit(ClientError),
}

impl From<ClientError> for Failure {
    fn from(error: ClientError) -> Failure {
        Failure::Before(error)
    }
}

#[derive(Debug, Default)]
struct TransferReport {
    committed: Vec<Transfer>,
    /// Attempts that failed with an error only faults explain, and were retried.
    fault_errors: u64,
    insufficient: u64,
    deadlocks: u64,
    lock_wait_timeouts: u64,
    write_conflicts: u64,
    /// Transfers whose COMMIT was answered 1180: applied or not.
    undetermined: Vec<Transfer>,
}

#[derive(Debug, Default)]
struct CheckReport {
    /// Transactions that summed the balances with `SUM`.
    sum_checks: u64,
    /// Transactions that read every account by its id and summed client-side.
    row_checks: u64,
    /// Autocommit `SUM` statements.
    autocommit_checks: u64,
    /// Checks cut short by an error only faults explain.
    fault_errors: u64,
}

#[test]
fn concurrent_transfers_keep_the_total() {
    let playground = Playground::start();
    run_bank(
        &[playground.url(DATABASE)],
        RUN_TIME,
        false,
        &|sql| playground.sql(None, sql),
        |_| {},
    );
}

/// The same on a cluster of three KV nodes and two SQL nodes whose region leaders are moved
/// every second (pessimistic locks move with them): the tasks of both SQL nodes keep the total.
#[test]
fn transfers_keep_the_total_while_leaders_move_every_second() {
    let mut cluster = Cluster::start(3, 2);
    let mut moves = 0;
    run_bank_on(
        &mut cluster,
        CLUSTER_RUN_TIME,
        false,
        |cluster, deadline| {
            let pd = strata_pd_client::PdClient::connect(&cluster.pd_address).expect("pd client");
            while Instant::now() < deadline {
                moves += common::cluster::move_every_leader(&pd).len();
                std::thread::sleep(Duration::from_secs(1));
            }
        },
    );
    println!("bank: {moves} leader transfers asked for");
    assert!(moves >= 5, "only {moves} leader transfers asked for");
}

/// Everything at once, on three placement drivers, three KV nodes and two SQL nodes: every
/// region's leader moves each second while each KV node, the placement drivers' leader and a
/// SQL node are killed with `kill -9` and started again, and the leading KV node is cut off
/// from the others twice. The total and every balance hold.
#[test]
fn transfers_keep_the_total_while_nodes_are_killed_and_leaders_move() {
    let mut cluster = Cluster::start_partitionable(3, 3, 2);
    let mut transfers = 0;
    run_bank_on(&mut cluster, FAULTS_RUN_TIME, true, |cluster, deadline| {
        let started = Instant::now();
        let run = deadline.saturating_duration_since(started);
        transfers = cluster.inject(&common::cluster::FAULTS, started, run);
    });
    println!("bank: {transfers} leader transfers asked for");
}

/// [`run_bank`] on the two SQL nodes of `cluster`; `meanwhile` starts once the second node
/// sees the accounts.
fn run_bank_on(
    cluster: &mut Cluster,
    run_time: Duration,
    faults: bool,
    meanwhile: impl FnOnce(&mut Cluster, Instant),
) {
    let ports = [cluster.sql[0].port, cluster.sql[1].port];
    let urls: Vec<String> = ports
        .iter()
        .map(|p| format!("mysql://root@127.0.0.1:{p}/{DATABASE}"))
        .collect();
    run_bank(
        &urls,
        run_time,
        faults,
        &|sql| common::sql_at(ports[0], None, sql),
        |deadline| {
            common::wait_for(
                ports[1],
                "SELECT COUNT(*) FROM bank.accounts",
                "COUNT(*)\n20\n",
            );
            meanwhile(cluster, deadline);
        },
    );
}

/// Creates the accounts through `sql`, runs transfer and checker tasks spread over `urls` for
/// `run_time` while `meanwhile` runs (given the tasks' deadline), and checks the balances.
fn run_bank(
    urls: &[String],
    run_time: Duration,
    faults: bool,
    sql: &dyn Fn(&str) -> String,
    meanwhile: impl FnOnce(Instant),
) {
    let seed = test_seed("bank");
    let runtime = common::runtime(4);
    let values: Vec<String> = (0..ACCOUNTS)
        .map(|id| format!("({id}, {BALANCE_INITIAL})"))
        .collect();
    sql(&format!(
        "CREATE DATABASE bank; USE bank; \
         CREATE TABLE accounts (id BIGINT PRIMARY KEY, balance BIGINT NOT NULL); \
         INSERT INTO accounts (id, balance) VALUES {}",
        values.join(", ")
    ));

    let deadline = Instant::now() + run_time;
    let url_of = |task: u64| urls[task as usize % urls.len()].clone();
    let transfers: Vec<_> = (0..LOCKING_TASKS + UPDATING_TASKS)
        .map(|task| {
            let style = if task < LOCKING_TASKS {
                Style::Locking
            } else {
                Style::Updating
            };
            let rng = StdRng::seed_from_u64(seed.wrapping_add(task));
            let url = url_of(task);
            runtime.spawn(async move { transfer_until(&url, style, rng, deadline, faults).await })
        })
        .collect();
    let checkers: Vec<_> = (0..CHECKER_TASKS)
        .map(|task| {
            let rng = StdRng::seed_from_u64(seed.wrapping_add(1_000 + task));
            let url = url_of(task);
            runtime.spawn(async move { check_until(&url, rng, deadline, faults).await })
        })
        .collect();
    meanwhile(deadline);

    let (transfer_reports, check_reports) = runtime.block_on(async {
        let mut transfer_reports = Vec::new();
        for task in transfers {
            transfer_reports.push(join(task).await);
        }
        let mut check_reports = Vec::new();
        for task in checkers {
            check_reports.push(join(task).await);
        }
        (transfer_reports, check_reports)
    });
    let failures: Vec<String> = transfer_reports
        .iter()
        .filter_map(|r| r.as_ref().err().cloned())
        .chain(
            check_reports
                .iter()
                .filter_map(|r| r.as_ref().err().cloned()),
        )
        .collect();
    assert!(failures.is_empty(), "seed {seed}:\n{}", failures.join("\n"));
    let transfer_reports: Vec<TransferReport> =
        transfer_reports.into_iter().map(Result::unwrap).collect();
    let check_reports: Vec<CheckReport> = check_reports.into_iter().map(Result::unwrap).collect();

    let committed: Vec<Transfer> = transfer_reports
        .iter()
        .flat_map(|r| r.committed.iter().copied())
        .collect();
    let undetermined: Vec<Transfer> = transfer_reports
        .iter()
        .flat_map(|r| r.undetermined.iter().copied())
        .collect();
    let sum = |f: fn(&TransferReport) -> u64| transfer_reports.iter().map(f).sum::<u64>();
    println!(
        "bank: {} transfers committed, {} of unknown outcome, {} refused for lack of money, {} \
         deadlocks, {} lock wait timeouts, {} write conflicts, {} other errors under faults",
        committed.len(),
        undetermined.len(),
        sum(|r| r.insufficient),
        sum(|r| r.deadlocks),
        sum(|r| r.lock_wait_timeouts),
        sum(|r| r.write_conflicts),
        sum(|r| r.fault_errors)
    );
    for (task, report) in check_reports.iter().enumerate() {
        println!(
            "bank: checker {task}: {} SUM transactions, {} row-by-row transactions, {} autocommit \
             SUMs, {} cut short by faults",
            report.sum_checks, report.row_checks, report.autocommit_checks, report.fault_errors
        );
        assert!(
            report.sum_checks > 0 && report.row_checks > 0 && report.autocommit_checks > 0,
            "checker {task} did not run every check: {report:?} (seed {seed})"
        );
    }
    assert!(!committed.is_empty(), "no transfer committed (seed {seed})");

    // Every account holds what the committed transfers imply, and each transfer of unknown
    // outcome either applied whole or not at all.
    let balances_after = |applied: &[Transfer]| -> String {
        let mut expected: BTreeMap<i64, i64> =
            (0..ACCOUNTS).map(|id| (id, BALANCE_INITIAL)).collect();
        for transfer in committed.iter().chain(applied) {
            *expected.get_mut(&transfer.from).unwrap() -= transfer.amount;
            *expected.get_mut(&transfer.to).unwrap() += transfer.amount;
        }
        let rows: String = expected
            .iter()
            .map(|(id, balance)| format!("{id}\t{balance}\n"))
            .collect();
        format!("id\tbalance\n{rows}")
    };
    let rows = sql("SELECT id, balance FROM bank.accounts ORDER BY id");
    assert!(
        undetermined.len() <= UNDETERMINED_MAX,
        "{} transfers of unknown outcome",
        undetermined.len()
    );
    let explained = (0..1u32 << undetermined.len()).any(|subset| {
        let applied: Vec<Transfer> = (0..undetermined.len())
            .filter(|i| subset & (1 << i) != 0)
            .map(|i| undetermined[i])
            .collect();
        balances_after(&applied) == rows
    });
    assert!(
        explained,
        "balances differ from the committed transfers (seed {seed}):\n{rows}\nexpected:\n{}",
        balances_after(&[])
    );
    let total = sql("SELECT SUM(balance) FROM bank.accounts");
    assert_eq!(
        integer_text(total.lines().nth(1).unwrap_or_default()),
        Ok(TOTAL),
        "{total}"
    );
}

/// Awaits a task for at most `TASK_STOP_TIMEOUT` after the run.
async fn join<T>(task: tokio::task::JoinHandle<Result<T, String>>) -> Result<T, String> {
    match tokio::time::timeout(RUN_TIME + TASK_STOP_TIMEOUT, task).await {
        Ok(joined) => joined.map_err(|e| format!("task panicked: {e}"))?,
        Err(_) => Err(format!(
            "a task did not finish within {TASK_STOP_TIMEOUT:?} after the run"
        )),
    }
}

/// Transfers between random accounts until `deadline`, retrying deadlocks and lock wait
/// timeouts (and, under `faults`, any error before COMMIT; a lost connection is opened again).
async fn transfer_until(
    url: &str,
    style: Style,
    mut rng: StdRng,
    deadline: Instant,
    faults: bool,
) -> Result<TransferReport, String> {
    let mut session: Option<(Conn, TransferStatements)> = None;
    let mut report = TransferReport::default();
    while Instant::now() < deadline {
        let from = rng.gen_range(0..ACCOUNTS);
        let to = (from + rng.gen_range(1..ACCOUNTS)) % ACCOUNTS;
        let transfer = Transfer {
            from,
            to,
            amount: rng.gen_range(1..=AMOUNT_MAX),
        };
        let payer_first = rng.gen_bool(0.5);
        // Retries of one transfer stop at the deadline too, so the task ends in bounded time.
        while Instant::now() < deadline {
            let (conn, statements) = match &mut session {
                Some(open) => open,
                None => {
                    let opened = TransferStatements::open(url).await;
                    match opened_or_retry(opened, faults, &mut report.fault_errors).await? {
                        Some(open) => session.insert(open),
                        None => continue,
                    }
                }
            };
            let attempt = match style {
                Style::Locking => transfer_locking(conn, statements, transfer, payer_first).await,
                Style::Updating => transfer_updating(conn, statements, transfer, payer_first).await,
            };
            let (error, at_commit) = match attempt {
                Ok(Attempt::Committed) => {
                    report.committed.push(transfer);
                    break;
                }
                Ok(Attempt::Insufficient) => {
                    report.insufficient += 1;
                    break;
                }
                Err(Failure::Before(e)) => (e, false),
                Err(Failure::AtCommit(e)) => (e, true),
            };
            match error.server_code() {
                Some(DEADLOCK) => report.deadlocks += 1,
                Some(LOCK_WAIT_TIMEOUT) => report.lock_wait_timeouts += 1,
                Some(WRITE_CONFLICT) => report.write_conflicts += 1,
                Some(COMMIT_UNDETERMINED) => {
                    report.undetermined.push(transfer);
                    break;
                }
                // Any other answer, at COMMIT too, says the transaction was not applied.
                Some(_) if faults => report.fault_errors += 1,
                // The connection broke or went silent: gone with its transaction, which
                // may have been applied if COMMIT had been sent.
                None if faults => {
                    session = None;
                    if at_commit {
                        report.undetermined.push(transfer);
                        break;
                    }
                    report.fault_errors += 1;
                    continue;
                }
                _ => return Err(format!("{style:?} transfer {transfer:?}: {error}")),
            }
            match bounded(conn.query_drop("ROLLBACK")).await {
                Ok(()) => {}
                Err(_) if faults => session = None,
                Err(e) => return Err(format!("rollback after a retryable error: {e}")),
            }
        }
    }
    if let Some((conn, _)) = session {
        match bounded(conn.disconnect()).await {
            Err(e) if !faults => return Err(format!("disconnect: {e}")),
            _ => {}
        }
    }
    Ok(report)
}

/// A connection a task opened; or, when that failed under faults, None after a pause (the
/// task tries again; `errors` counts it). Without faults the failure ends the task.
async fn opened_or_retry<T>(
    opened: Result<T, String>,
    faults: bool,
    errors: &mut u64,
) -> Result<Option<T>, String> {
    match opened {
        Ok(open) => Ok(Some(open)),
        Err(_) if faults => {
            *errors += 1;
            tokio::time::sleep(Duration::from_millis(200)).await;
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The transfer tasks' prepared statements.
struct TransferStatements {
    select_for_update: Statement,
    set_balance: Statement,
    debit: Statement,
    credit: Statement,
}

impl TransferStatements {
    /// Connects to `url` and prepares the statements there.
    async fn open(url: &str) -> Result<(Conn, TransferStatements), String> {
        let mut conn = connect(url).await.map_err(|e| format!("connect: {e}"))?;
        bounded(conn.query_drop(format!(
            "SET innodb_lock_wait_timeout = {LOCK_WAIT_TIMEOUT_S}"
        )))
        .await
        .map_err(|e| format!("set the lock wait timeout: {e}"))?;
        let statements = TransferStatements::prepare(&mut conn).await?;
        Ok((conn, statements))
    }

    async fn prepare(conn: &mut Conn) -> Result<TransferStatements, String> {
        Ok(TransferStatements {
            select_for_update: prepare(
                conn,
                "SELECT balance FROM accounts WHERE id = ? FOR UPDATE",
            )
            .await?,
            set_balance: prepare(conn, "UPDATE accounts SET balance = ? WHERE id = ?").await?,
            debit: prepare(
                conn,
                "UPDATE accounts SET balance = balance - ? WHERE id = ? AND balance >= ?",
            )
            .await?,
            credit: prepare(
                conn,
                "UPDATE accounts SET balance = balance + ? WHERE id = ?",
            )
            .await?,
        })
    }
}

async fn prepare(conn: &mut Conn, sql: &str) -> Result<Statement, String> {
    bounded(conn.prep(sql))
        .await
        .map_err(|e| format!("prepare {sql}: {e}"))
}

/// One attempt of a transfer that reads both balances with `SELECT … FOR UPDATE`.
async fn transfer_locking(
    conn: &mut Conn,
    statements: &TransferStatements,
    transfer: Transfer,
    payer_first: bool,
) -> Result<Attempt, Failure> {
    let order = if payer_first {
        [transfer.from, transfer.to]
    } else {
        [transfer.to, transfer.from]
    };
    bounded(conn.query_drop("BEGIN")).await?;
    let mut balances = BTreeMap::new();
    for id in order {
        let balance: Option<i64> =
            bounded(conn.exec_first(&statements.select_for_update, (id,))).await?;
        balances.insert(id, balance.expect("every account exists"));
    }
    let (payer, payee) = (balances[&transfer.from], balances[&transfer.to]);
    if payer < transfer.amount {
        bounded(conn.query_drop("ROLLBACK")).await?;
        return Ok(Attempt::Insufficient);
    }
    for (id, balance) in [
        (transfer.from, payer - transfer.amount),
        (transfer.to, payee + transfer.amount),
    ] {
        bounded(conn.exec_drop(&statements.set_balance, (balance, id))).await?;
        assert_eq!(
            conn.affected_rows(),
            1,
            "setting account {id} to {balance} changed no row"
        );
    }
    bounded(conn.query_drop("COMMIT"))
        .await
        .map_err(Failure::AtCommit)?;
    Ok(Attempt::Committed)
}

/// One attempt of a transfer made of two relative UPDATEs, debit or credit first.
async fn transfer_updating(
    conn: &mut Conn,
    statements: &TransferStatements,
    transfer: Transfer,
    payer_first: bool,
) -> Result<Attempt, Failure> {
    bounded(conn.query_drop("BEGIN")).await?;
    for debit in [payer_first, !payer_first] {
        if debit {
            let params = (transfer.amount, transfer.from, transfer.amount);
            bounded(conn.exec_drop(&statements.debit, params)).await?;
            if conn.affected_rows() == 0 {
                bounded(conn.query_drop("ROLLBACK")).await?;
                return Ok(Attempt::Insufficient);
            }
        } else {
            let params = (transfer.amount, transfer.to);
            bounded(conn.exec_drop(&statements.credit, params)).await?;
            assert_eq!(
                conn.affected_rows(),
                1,
                "crediting account {} changed no row",
                transfer.to
            );
        }
    }
    bounded(conn.query_drop("COMMIT"))
        .await
        .map_err(Failure::AtCommit)?;
    Ok(Attempt::Committed)
}

/// Checks the total until `deadline`, rotating through the kinds of reads. Under `faults`, a
/// check cut short by an error is left (its connection opened again if it broke).
async fn check_until(
    url: &str,
    mut rng: StdRng,
    deadline: Instant,
    faults: bool,
) -> Result<CheckReport, String> {
    let mut session: Option<(Conn, Statement)> = None;
    let mut report = CheckReport::default();
    let mut ids: Vec<i64> = (0..ACCOUNTS).collect();
    let mut round = 0u64;
    while Instant::now() < deadline {
        let (conn, select_one) = match &mut session {
            Some(open) => open,
            None => {
                let opened = async {
                    let mut conn = connect(url).await.map_err(|e| format!("connect: {e}"))?;
                    let select_one =
                        prepare(&mut conn, "SELECT balance FROM accounts WHERE id = ?").await?;
                    Ok::<_, String>((conn, select_one))
                };
                match opened_or_retry(opened.await, faults, &mut report.fault_errors).await? {
                    Some(open) => session.insert(open),
                    None => continue,
                }
            }
        };
        let kind = round % 3;
        if kind == 1 {
            ids.shuffle(&mut rng);
        }
        match check_once(conn, select_one, kind, &ids).await {
            Ok(checked) => {
                checked?;
                match kind {
                    0 => report.sum_checks += 1,
                    1 => report.row_checks += 1,
                    _ => report.autocommit_checks += 1,
                }
                round += 1;
            }
            Err(e) if faults => {
                report.fault_errors += 1;
                if e.server_code().is_none() || bounded(conn.query_drop("ROLLBACK")).await.is_err()
                {
                    session = None;
                }
            }
            Err(e) => return Err(format!("check {kind}: {e}")),
        }
    }
    if let Some((conn, _)) = session {
        match bounded(conn.disconnect()).await {
            Err(e) if !faults => return Err(format!("disconnect: {e}")),
            _ => {}
        }
    }
    Ok(report)
}

/// One check of kind `kind` (0: SUM then every row in one transaction; 1: every account by
/// its id, in the order of `ids`, in one transaction; 2: an autocommit SUM). The outer error
/// is the client's, the inner one what the check found wrong.
async fn check_once(
    conn: &mut Conn,
    select_one: &Statement,
    kind: u64,
    ids: &[i64],
) -> Result<Result<(), String>, ClientError> {
    Ok(match kind {
        0 => {
            bounded(conn.query_drop("BEGIN")).await?;
            let total = sum_of(conn).await?;
            let rows: Vec<(i64, i64)> =
                bounded(conn.query("SELECT id, balance FROM accounts")).await?;
            bounded(conn.query_drop("COMMIT")).await?;
            total
                .and_then(|total| check_total("SUM in a transaction", total))
                .and_then(|()| check_balances("scan after SUM in the same transaction", &rows))
        }
        1 => {
            bounded(conn.query_drop("BEGIN")).await?;
            let mut rows = Vec::new();
            for &id in ids {
                let balance: Option<i64> = bounded(conn.exec_first(select_one, (id,))).await?;
                rows.push((id, balance));
            }
            bounded(conn.query_drop("COMMIT")).await?;
            match rows.iter().find(|(_, balance)| balance.is_none()) {
                Some((id, _)) => Err(format!("account {id} is missing")),
                None => {
                    let rows: Vec<(i64, i64)> =
                        rows.into_iter().map(|(id, b)| (id, b.unwrap())).collect();
                    check_balances("point reads in one transaction", &rows)
                }
            }
        }
        _ => sum_of(conn)
            .await?
            .and_then(|total| check_total("autocommit SUM", total)),
    })
}

/// Runs `SELECT SUM(balance)`, whose value MySQL types as DECIMAL. The outer error is the
/// client's, the inner one a value that is not an integer.
async fn sum_of(conn: &mut Conn) -> Result<Result<i64, String>, ClientError> {
    let value: Option<Value> =
        bounded(conn.query_first("SELECT SUM(balance) FROM accounts")).await?;
    Ok(match value {
        Some(Value::Int(n)) => Ok(n),
        Some(Value::UInt(n)) => i64::try_from(n).map_err(|e| e.to_string()),
        Some(Value::Bytes(text)) => integer_text(&String::from_utf8_lossy(&text)),
        other => Err(format!("SUM returned {other:?}")),
    })
}

/// Parses an integer that may come as a DECIMAL with a zero fraction ("20000.00").
fn integer_text(text: &str) -> Result<i64, String> {
    let (whole, fraction) = text.trim().split_once('.').unwrap_or((text.trim(), ""));
    match (whole.parse(), fraction.bytes().all(|b| b == b'0')) {
        (Ok(n), true) => Ok(n),
        _ => Err(format!("{text:?} is not an integer")),
    }
}

fn check_total(read: &str, total: i64) -> Result<(), String> {
    if total == TOTAL {
        Ok(())
    } else {
        Err(format!("{read}: the total is {total}, not {TOTAL}"))
    }
}

/// Checks that one transaction saw every account once, none negative, with the right total.
fn check_balances(read: &str, rows: &[(i64, i64)]) -> Result<(), String> {
    let mut seen: Vec<i64> = rows.iter().map(|&(id, _)| id).collect();
    seen.sort_unstable();
    if seen != (0..ACCOUNTS).collect::<Vec<_>>() {
        return Err(format!("{read}: saw accounts {seen:?}"));
    }
    if let Some((id, balance)) = rows.iter().find(|&&(_, balance)| balance < 0) {
        return Err(format!(
            "{read}: account {id} has a negative balance {balance}"
        ));
    }
    check_total(read, rows.iter().map(|&(_, balance)| balance).sum())
        .map_err(|e| format!("{e}; balances {rows:?}"))
}
