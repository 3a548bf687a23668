//! `strata bench tpcc run`: `-T` workers, each with one connection and its 63 prepared
//! statements, draw transactions from a 100-card deck (`--weight`) until `--time` is up.
//!
//! Every `--interval` the driver prints go-tpc's `[Current]` lines of the last interval; at the
//! end it prints the `[Summary]` lines and `tpmC: …, tpmTotal: …, efficiency: …%`, and writes
//! the result file (`--out`) that `strata bench report` reads.
//!
//! Errors never silently shrink concurrency:
//! - lock conflicts (deadlock 1213, lock wait timeout 1205, TiDB 8002, TiKV write conflict
//!   9007) are not retried: the transaction is rolled back and counted under `<NAME>_ERR`, and
//!   the worker goes on with its next card, with or without `--ignore-error`;
//! - any other error is rolled back and counted too; without `--ignore-error` it then stops the
//!   whole run with the error's message (no result file is written), with `--ignore-error` the
//!   worker goes on, reconnecting first if the connection was lost.
//!
//! Each worker sends COM_PING before every transaction (outside the measured latency), as
//! go-tpc does, and reconnects when the ping fails.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use super::input::{Scale, TransactionInput};
use super::rand::{NurandConstants, TpccRng};
use super::stats::{self, Stats, TransactionKind};
use super::txn::{run_transaction, Outcome, Statements, TxnError};
use super::{connect, connect_or_explain, runtime, TpccError};
use crate::client::{self, Target};
use crate::environment;
use crate::resources::{self, Sampler};
use crate::result::{BenchResult, TpccInterval, TpccResult};

/// Cards in a deck (TPC-C 5.2.4.2): the weights must add up to this.
pub const DECK_SIZE: u32 = 100;
/// How long workers may take to finish their last transaction after `--time`.
const FINISH_GRACE: Duration = Duration::from_secs(60);
/// Error messages printed in full; later ones are only counted.
const PRINTED_ERRORS: u32 = 10;
/// Pause before trying a lost connection again.
const RECONNECT_PAUSE: Duration = Duration::from_secs(1);
/// How often, at most, the driver looks at the stop flag.
const TICK: Duration = Duration::from_millis(100);

/// Everything `run` needs.
#[derive(Clone, Debug)]
pub struct RunConfig {
    pub target: Target,
    pub warehouses: u32,
    pub threads: u32,
    pub duration: Duration,
    pub interval: Duration,
    /// New-Order, Payment, Order-Status, Delivery, Stock-Level; they add up to [`DECK_SIZE`].
    pub weights: [u32; 5],
    pub ignore_error: bool,
    pub seed: u64,
    /// Name in reports; the server's VERSION() when empty.
    pub label: String,
    /// The result file.
    pub out: Option<PathBuf>,
    /// Server processes to sample: these ids and every process with this name.
    pub server_pids: Vec<u32>,
    pub server_process: Option<String>,
    /// The command line, recorded in the result.
    pub command: String,
}

/// A deck of [`DECK_SIZE`] cards dealt in random order and reshuffled when used up (TPC-C
/// 5.2.4.2). go-tpc draws a random card each time instead, i.e. with replacement: the mix is
/// the same on average, the deck only has less variance over short runs.
#[derive(Clone, Debug)]
pub struct Deck {
    cards: Vec<TransactionKind>,
    next: usize,
}

impl Deck {
    /// A deck with `weights[i]` cards of `TransactionKind::ALL[i]`.
    pub fn new(weights: [u32; 5]) -> Result<Deck, TpccError> {
        let total: u32 = weights.iter().sum();
        if total != DECK_SIZE {
            return Err(TpccError(format!(
                "--weight must add up to {DECK_SIZE}, not {total}: {weights:?}"
            )));
        }
        let cards = TransactionKind::ALL
            .iter()
            .zip(weights)
            .flat_map(|(&kind, weight)| std::iter::repeat_n(kind, weight as usize))
            .collect::<Vec<_>>();
        let next = cards.len();
        Ok(Deck { cards, next })
    }

    /// Deals the next card, shuffling a fresh deck first when all were dealt.
    pub fn deal(&mut self, rng: &mut TpccRng) -> TransactionKind {
        if self.next == self.cards.len() {
            rng.shuffle(&mut self.cards);
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

/// What workers share: the statistics of the current interval and of the whole run, and the
/// stop flag with the error that raised it.
struct Shared {
    stats: Mutex<(Stats, Stats)>,
    stop: AtomicBool,
    fatal: Mutex<Option<String>>,
    printed_errors: AtomicU32,
}

impl Shared {
    fn record(&self, kind: TransactionKind, latency: Duration, ok: bool) {
        let now = Instant::now();
        let mut stats = self.stats.lock().expect("stats");
        stats.0.record(kind, latency, ok, now);
        stats.1.record(kind, latency, ok, now);
    }

    fn take_interval(&self) -> Stats {
        std::mem::take(&mut self.stats.lock().expect("stats").0)
    }

    fn stop_with(&self, message: String) {
        self.fatal.lock().expect("fatal").get_or_insert(message);
        self.stop.store(true, Ordering::Relaxed);
    }

    fn report_error(&self, kind: TransactionKind, error: &TxnError) {
        let printed = self.printed_errors.fetch_add(1, Ordering::Relaxed);
        if printed < PRINTED_ERRORS {
            eprintln!("strata bench tpcc: {} error: {error}", kind.display_name());
        }
        if printed + 1 == PRINTED_ERRORS {
            eprintln!("strata bench tpcc: further errors are only counted (the _ERR lines)");
        }
    }
}

/// Runs the workload and returns (and writes) its result.
pub fn run(config: &RunConfig) -> Result<TpccResult, TpccError> {
    let deck = Deck::new(config.weights)?;
    if config.warehouses == 0 || config.threads == 0 || config.duration.is_zero() {
        return Err(TpccError(
            "--warehouses, --threads and --time must be positive".into(),
        ));
    }
    let server_version = client::server_version(&config.target)?;
    let mut environment = environment::machine();
    environment.target = config.target.address();
    environment.server_version = server_version.clone();
    let label = if config.label.is_empty() {
        server_version.clone()
    } else {
        config.label.clone()
    };
    runtime(config.threads)?.block_on(async {
        let mut seeds = TpccRng::seeded(config.seed);
        let constants = NurandConstants::for_run(&mut seeds);
        let scale = Scale {
            warehouses: config.warehouses,
            constants,
        };
        check_loaded(config).await?;
        eprintln!(
            "strata bench tpcc: {} threads, {} warehouses, {} s against {} ({server_version}); \
             seed {}, C_LAST {} (load {})",
            config.threads,
            config.warehouses,
            config.duration.as_secs_f64(),
            config.target.address(),
            config.seed,
            constants.c_last,
            super::rand::C_LAST_LOAD
        );
        let mut workers = Vec::new();
        for _ in 0..config.threads {
            let mut conn = connect_or_explain(&config.target).await?;
            let statements = Statements::prepare(&mut conn)
                .await
                .map_err(|e| TpccError(format!("preparing the TPC-C statements: {e}")))?;
            workers.push((conn, statements, seeds.next_u64()));
        }
        let mut pids = config.server_pids.clone();
        if let Some(name) = &config.server_process {
            pids.extend(resources::pids_named(name));
        }
        let sampler = (!pids.is_empty()).then(|| Sampler::start(pids));
        environment.started_at = environment::now_rfc3339();
        let measured = measure(config, &deck, &scale, workers).await;
        let resources = sampler.map(Sampler::finish);
        environment.finished_at = environment::now_rfc3339();
        let (total, intervals, seconds, end) = measured?;

        let rates = total.rates(end, None);
        for line in total.lines("[Summary] ", end, None) {
            println!("{line}");
        }
        println!("{}", stats::summary_line(rates, config.warehouses));
        let result = TpccResult {
            label,
            environment,
            warehouses: config.warehouses,
            threads: config.threads,
            time_seconds: seconds,
            command: config.command.clone(),
            tpmc: rates.tpmc,
            tpm_total: rates.tpm_total,
            efficiency: stats::efficiency(rates.tpmc, config.warehouses),
            transactions: total.transactions(end),
            intervals,
            resources,
        };
        if let Some(out) = &config.out {
            write_result(out, &result)?;
            eprintln!("strata bench tpcc: wrote {}", out.display());
        }
        Ok(result)
    })
}

/// Fails early when the database holds fewer warehouses than the run would use.
async fn check_loaded(config: &RunConfig) -> Result<(), TpccError> {
    let mut conn = connect_or_explain(&config.target).await?;
    let loaded: Option<i64> = conn
        .query_first("SELECT COUNT(*) FROM warehouse")
        .await
        .map_err(|e| {
            TpccError(format!(
                "reading the warehouse table of {}: {e} (run `strata bench tpcc prepare` first)",
                config.target.db
            ))
        })?;
    let _ = conn.disconnect().await;
    let loaded = loaded.unwrap_or(0);
    if loaded < i64::from(config.warehouses) {
        return Err(TpccError(format!(
            "database {} holds {loaded} warehouses but --warehouses is {}: prepare with the \
             same --warehouses",
            config.target.db, config.warehouses
        )));
    }
    Ok(())
}

type Measured = (Stats, Vec<TpccInterval>, f64, Instant);

/// Runs the workers until the deadline, printing every interval. Returns the statistics of
/// the whole run, the intervals, the measured seconds and the instant the run ended.
async fn measure(
    config: &RunConfig,
    deck: &Deck,
    scale: &Scale,
    workers: Vec<(Conn, Statements, u64)>,
) -> Result<Measured, TpccError> {
    let shared = Arc::new(Shared {
        stats: Mutex::new((Stats::default(), Stats::default())),
        stop: AtomicBool::new(false),
        fatal: Mutex::new(None),
        printed_errors: AtomicU32::new(0),
    });
    let start = Instant::now();
    let deadline = start + config.duration;
    let handles: Vec<_> = workers
        .into_iter()
        .map(|(conn, statements, seed)| {
            let worker = Worker {
                conn,
                statements,
                rng: TpccRng::seeded(seed),
                deck: deck.clone(),
                scale: *scale,
                target: config.target.clone(),
                ignore_error: config.ignore_error,
                shared: Arc::clone(&shared),
                deadline,
            };
            tokio::spawn(worker.run())
        })
        .collect();

    let mut intervals = Vec::new();
    let mut interval_start = start;
    loop {
        let now = Instant::now();
        let stopping = shared.stop.load(Ordering::Relaxed) || now >= deadline;
        let full = now.duration_since(interval_start) >= config.interval;
        // The last, shorter interval is reported too when it lasted at least a second.
        let last = stopping && now.duration_since(interval_start) >= Duration::from_secs(1);
        if full || last {
            let seconds = now.duration_since(interval_start).as_secs_f64();
            let current = shared.take_interval();
            for line in current.lines("[Current] ", now, Some(seconds)) {
                println!("{line}");
            }
            let rates = current.rates(now, Some(seconds));
            intervals.push(TpccInterval {
                second: now.duration_since(start).as_secs_f64(),
                tpmc: rates.tpmc,
                tpm_total: rates.tpm_total,
            });
            interval_start = now;
        }
        if stopping {
            break;
        }
        // Wake at the interval's end or the deadline rather than a whole tick later, so an
        // interval lasts its length and the delays of the ticks do not add up over the run.
        let wake = (Instant::now() + TICK)
            .min(interval_start + config.interval)
            .min(deadline);
        tokio::time::sleep_until(wake.into()).await;
    }
    shared.stop.store(true, Ordering::Relaxed);
    let mut stuck = 0;
    let finish_by = tokio::time::Instant::now() + FINISH_GRACE;
    for handle in handles {
        let abort = handle.abort_handle();
        match tokio::time::timeout_at(finish_by, handle).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => shared.stop_with(format!("a worker panicked: {e}")),
            Err(_) => {
                abort.abort();
                stuck += 1;
            }
        }
    }
    if stuck > 0 {
        eprintln!(
            "strata bench tpcc: {stuck} workers were still in a transaction {FINISH_GRACE:?} \
             after --time and were abandoned"
        );
    }
    let end = Instant::now();
    let total = std::mem::take(&mut shared.stats.lock().expect("stats").1);
    if let Some(message) = shared.fatal.lock().expect("fatal").take() {
        for line in total.lines("[Summary] ", end, None) {
            println!("{line}");
        }
        return Err(TpccError(format!(
            "the run stopped: {message} (pass --ignore-error to count such errors and go on)"
        )));
    }
    let seconds = end.duration_since(start).as_secs_f64();
    Ok((total, intervals, seconds, end))
}

/// One worker: a connection, its statements, its generator and its deck.
struct Worker {
    conn: Conn,
    statements: Statements,
    rng: TpccRng,
    deck: Deck,
    scale: Scale,
    target: Target,
    ignore_error: bool,
    shared: Arc<Shared>,
    deadline: Instant,
}

impl Worker {
    async fn run(mut self) {
        while !self.shared.stop.load(Ordering::Relaxed) && Instant::now() < self.deadline {
            let kind = self.deck.deal(&mut self.rng);
            if self.conn.ping().await.is_err() && !self.reconnect().await {
                continue;
            }
            let input = TransactionInput::generate(kind, &mut self.rng, &self.scale);
            let started = Instant::now();
            let result = run_transaction(&mut self.conn, &self.statements, input).await;
            self.shared.record(kind, started.elapsed(), result.is_ok());
            match result {
                Ok(Outcome::Committed | Outcome::RolledBack) => {}
                Err(e) if e.is_conflict() => self.shared.report_error(kind, &e),
                Err(e) if self.ignore_error => {
                    self.shared.report_error(kind, &e);
                    if e.connection_lost() {
                        self.reconnect().await;
                    }
                }
                Err(e) => {
                    self.shared
                        .stop_with(format!("{} failed: {e}", kind.display_name()));
                }
            }
        }
        let _ = self.conn.disconnect().await;
    }

    /// Opens a fresh connection with fresh statements. Returns false after a failure, which
    /// stops the run unless errors are ignored (then the worker pauses before going on).
    async fn reconnect(&mut self) -> bool {
        let fresh = match connect(&self.target).await {
            Ok(mut conn) => match Statements::prepare(&mut conn).await {
                Ok(statements) => Ok((conn, statements)),
                Err(e) => Err(e.to_string()),
            },
            Err(e) => Err(e.to_string()),
        };
        match fresh {
            Ok((conn, statements)) => {
                self.conn = conn;
                self.statements = statements;
                true
            }
            Err(e) if self.ignore_error => {
                eprintln!("strata bench tpcc: reconnecting: {e}");
                tokio::time::sleep(RECONNECT_PAUSE).await;
                false
            }
            Err(e) => {
                self.shared.stop_with(format!(
                    "the connection was lost and reconnecting failed: {e}"
                ));
                false
            }
        }
    }
}

fn write_result(path: &std::path::Path, result: &TpccResult) -> Result<(), TpccError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| TpccError(format!("{}: {e}", dir.display())))?;
    }
    let json = serde_json::to_string_pretty(&BenchResult::Tpcc(result.clone()))
        .map_err(|e| TpccError(format!("encoding the result: {e}")))?;
    std::fs::write(path, json + "\n").map_err(|e| TpccError(format!("{}: {e}", path.display())))
}

/// Parses `--weight`: five comma-separated integers.
pub fn parse_weights(text: &str) -> Result<[u32; 5], String> {
    let values: Vec<u32> = text
        .split(',')
        .map(|v| v.trim().parse::<u32>())
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--weight {text}: {e}"))?;
    <[u32; 5]>::try_from(values)
        .map_err(|v| format!("--weight needs five numbers (New-Order, Payment, Order-Status, Delivery, Stock-Level), got {}", v.len()))
}

/// Parses a duration: plain seconds ("20") or with a unit ("20s", "10m", "1h").
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let value: u64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration like 20, 20s, 10m or 1h"))?;
    let seconds = match unit {
        "s" => value,
        "m" => value * 60,
        "h" => value * 3600,
        _ => return Err(format!("{text:?}: the unit must be s, m or h")),
    };
    Ok(Duration::from_secs(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deck_deals_its_weights_exactly() {
        let mut deck = Deck::new([45, 43, 4, 4, 4]).unwrap();
        let mut rng = TpccRng::seeded(2);
        for _ in 0..3 {
            let mut counts = std::collections::BTreeMap::new();
            for _ in 0..DECK_SIZE {
                *counts.entry(deck.deal(&mut rng)).or_insert(0) += 1;
            }
            assert_eq!(counts[&TransactionKind::NewOrder], 45);
            assert_eq!(counts[&TransactionKind::Payment], 43);
            assert_eq!(counts[&TransactionKind::StockLevel], 4);
        }
        assert!(Deck::new([45, 43, 4, 4, 5]).is_err());
        let mut only = Deck::new([0, 100, 0, 0, 0]).unwrap();
        assert_eq!(only.deal(&mut rng), TransactionKind::Payment);
    }

    #[test]
    fn weights_and_durations_parse() {
        assert_eq!(parse_weights("45,43,4,4,4").unwrap(), [45, 43, 4, 4, 4]);
        assert!(parse_weights("45,43,4,4").is_err());
        assert!(parse_weights("a,b").is_err());
        assert_eq!(parse_duration("20").unwrap(), Duration::from_secs(20));
        assert_eq!(parse_duration("20s").unwrap(), Duration::from_secs(20));
        assert_eq!(parse_duration("10m").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("10x").is_err());
        assert!(parse_duration("").is_err());
    }
}
