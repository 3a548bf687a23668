//! `strata bench tpcc prepare`: creates the nine tables and loads the initial population of
//! TPC-C clause 4.3.3 as go-tpc does, with text multi-row INSERTs of up to
//! [`ROWS_PER_INSERT`] rows in autocommit.
//!
//! The work is cut into tasks (item chunks; per warehouse its row, its districts and stock
//! chunks; per district its customers, history, orders, new orders and order lines) that `-T`
//! connections take from a shared queue. Each task draws from its own generator seeded from
//! the load seed and the task's position, so a seed loads the same data whatever the thread
//! count. Progress is one stderr line (rewritten with `\r` on a terminal).

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mysql_async::prelude::Queryable;
use mysql_async::Conn;

use super::rand::{last_name, random_last_name, NurandConstants, TpccRng};
use super::{
    connect, connect_or_explain, create_table_statements, runtime, server_code, TpccError,
    CUSTOMERS_PER_DISTRICT, DISTRICTS_PER_WAREHOUSE, FIRST_NEW_ORDER_ID, ITEMS,
    ORDERS_PER_DISTRICT, TABLES,
};
use crate::client::{self, Target};

/// Rows per INSERT statement (go-tpc's batch size).
pub const ROWS_PER_INSERT: usize = 1024;
/// Rows of item and stock per load task.
const ROWS_PER_CHUNK: u32 = 10_000;
/// Attempts of one INSERT before the load fails.
const INSERT_ATTEMPTS: u32 = 5;
/// Pause between attempts.
const RETRY_PAUSE: Duration = Duration::from_secs(2);
/// How often the progress line is redrawn on a terminal, and printed otherwise.
const PROGRESS_TERMINAL: Duration = Duration::from_millis(500);
const PROGRESS_LOG: Duration = Duration::from_secs(10);
/// MySQL's "Duplicate entry" error: the row is there already, retrying cannot help.
const DUPLICATE_ENTRY: u16 = 1062;

/// What `prepare` loads.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    pub target: Target,
    pub warehouses: u32,
    /// Connections that load in parallel.
    pub threads: u32,
    /// Seed of the generated data.
    pub seed: u64,
}

/// What a load did.
#[derive(Clone, Debug, PartialEq)]
pub struct LoadSummary {
    pub rows: u64,
    pub seconds: f64,
}

/// One unit of load work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LoadTask {
    /// Items `first..=last`.
    Items { first: u32, last: u32 },
    /// The warehouse row and its ten districts.
    Warehouse { w_id: u32 },
    /// Stock of items `first..=last` in warehouse `w_id`.
    Stock { w_id: u32, first: u32, last: u32 },
    /// Customers, history, orders, new orders and order lines of one district.
    District { w_id: u32, d_id: u32 },
}

/// Rows of one table, ready for INSERT.
struct TableRows {
    /// `INSERT INTO t (cols) VALUES `.
    prefix: &'static str,
    /// `(v1, v2, …)` each.
    rows: Vec<String>,
}

const ITEM_INSERT: &str = "INSERT INTO item (i_id, i_im_id, i_name, i_price, i_data) VALUES ";
const WAREHOUSE_INSERT: &str = "INSERT INTO warehouse (w_id, w_name, w_street_1, w_street_2, \
     w_city, w_state, w_zip, w_tax, w_ytd) VALUES ";
const DISTRICT_INSERT: &str = "INSERT INTO district (d_id, d_w_id, d_name, d_street_1, \
     d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id) VALUES ";
const STOCK_INSERT: &str = "INSERT INTO stock (s_i_id, s_w_id, s_quantity, s_dist_01, \
     s_dist_02, s_dist_03, s_dist_04, s_dist_05, s_dist_06, s_dist_07, s_dist_08, s_dist_09, \
     s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data) VALUES ";
const CUSTOMER_INSERT: &str = "INSERT INTO customer (c_id, c_d_id, c_w_id, c_first, c_middle, \
     c_last, c_street_1, c_street_2, c_city, c_state, c_zip, c_phone, c_since, c_credit, \
     c_credit_lim, c_discount, c_balance, c_ytd_payment, c_payment_cnt, c_delivery_cnt, \
     c_data) VALUES ";
const HISTORY_INSERT: &str = "INSERT INTO history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, \
     h_date, h_amount, h_data) VALUES ";
const ORDERS_INSERT: &str = "INSERT INTO orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, \
     o_carrier_id, o_ol_cnt, o_all_local) VALUES ";
const NEW_ORDER_INSERT: &str = "INSERT INTO new_order (no_o_id, no_d_id, no_w_id) VALUES ";
const ORDER_LINE_INSERT: &str = "INSERT INTO order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, \
     ol_i_id, ol_supply_w_id, ol_delivery_d, ol_quantity, ol_amount, ol_dist_info) VALUES ";

/// Creates the database and the tables, refuses tables that hold rows, and loads them.
pub fn prepare(config: &LoadConfig) -> Result<LoadSummary, TpccError> {
    if config.warehouses == 0 || config.threads == 0 {
        return Err(TpccError(
            "--warehouses and --threads must be at least 1".into(),
        ));
    }
    let create = format!(
        "CREATE DATABASE IF NOT EXISTS {}",
        client::quote_ident(&config.target.db)
    );
    client::execute(&config.target, std::slice::from_ref(&create))?;
    runtime(config.threads)?.block_on(prepare_async(config))
}

async fn prepare_async(config: &LoadConfig) -> Result<LoadSummary, TpccError> {
    let mut conn = connect_or_explain(&config.target).await?;
    for statement in create_table_statements() {
        super::query_drop(&mut conn, &statement).await?;
    }
    for table in TABLES {
        let any: Option<i64> = conn
            .query_first(format!("SELECT 1 FROM {table} LIMIT 1"))
            .await
            .map_err(|e| TpccError(format!("reading {table}: {e}")))?;
        if any.is_some() {
            return Err(TpccError(format!(
                "table {table} in database {} already holds rows: run `strata bench tpcc \
                 cleanup` first",
                config.target.db
            )));
        }
    }
    let _ = conn.disconnect().await;

    let tasks = tasks(config.warehouses);
    let total_rows = expected_rows(config.warehouses);
    let load_time = chrono::Local::now().format("%Y-%m-%d %H:%M:%S").to_string();
    let queue: Arc<Mutex<VecDeque<(usize, LoadTask)>>> =
        Arc::new(Mutex::new(tasks.into_iter().enumerate().collect()));
    let loaded = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut loaders = Vec::new();
    for _ in 0..config.threads {
        let loader = Loader {
            target: config.target.clone(),
            seed: config.seed,
            load_time: load_time.clone(),
            loaded: Arc::clone(&loaded),
            failed: Arc::clone(&failed),
        };
        let queue = Arc::clone(&queue);
        loaders.push(tokio::spawn(async move { loader.run(&queue).await }));
    }
    let progress = tokio::spawn(show_progress(
        Arc::clone(&loaded),
        total_rows,
        started,
        Arc::clone(&failed),
    ));
    let mut first_error = None;
    for loader in loaders {
        let outcome = loader
            .await
            .unwrap_or_else(|e| Err(TpccError(format!("a loader panicked: {e}"))));
        if let Err(e) = outcome {
            failed.store(true, Ordering::Relaxed);
            first_error.get_or_insert(e);
        }
    }
    failed.store(true, Ordering::Relaxed);
    let _ = progress.await;
    let rows = loaded.load(Ordering::Relaxed);
    let seconds = started.elapsed().as_secs_f64();
    eprintln!(
        "{}",
        progress_line(rows, total_rows, seconds, first_error.is_none())
    );
    match first_error {
        Some(e) => Err(e),
        None => Ok(LoadSummary { rows, seconds }),
    }
}

/// One loading connection's state.
struct Loader {
    target: Target,
    seed: u64,
    load_time: String,
    loaded: Arc<AtomicU64>,
    failed: Arc<AtomicBool>,
}

impl Loader {
    async fn run(&self, queue: &Mutex<VecDeque<(usize, LoadTask)>>) -> Result<(), TpccError> {
        let mut conn = connect_or_explain(&self.target).await?;
        loop {
            if self.failed.load(Ordering::Relaxed) {
                break;
            }
            let next = queue.lock().expect("load queue").pop_front();
            let Some((index, task)) = next else { break };
            let mut rng = TpccRng::seeded(task_seed(self.seed, index));
            for table in generate(task, &mut rng, &self.load_time) {
                for chunk in table.rows.chunks(ROWS_PER_INSERT) {
                    let sql = format!("{}{}", table.prefix, chunk.join(","));
                    self.insert(&mut conn, &sql).await?;
                    self.loaded.fetch_add(chunk.len() as u64, Ordering::Relaxed);
                }
            }
        }
        let _ = conn.disconnect().await;
        Ok(())
    }

    /// Runs one INSERT, retrying errors other than a duplicate key and reconnecting after a
    /// lost connection.
    async fn insert(&self, conn: &mut Conn, sql: &str) -> Result<(), TpccError> {
        let mut attempt = 1;
        loop {
            let error = match conn.query_drop(sql).await {
                Ok(()) => return Ok(()),
                Err(e) => e,
            };
            let table = sql.split_whitespace().nth(2).unwrap_or("?");
            if attempt >= INSERT_ATTEMPTS || server_code(&error) == Some(DUPLICATE_ENTRY) {
                return Err(TpccError(format!(
                    "loading {table} failed after {attempt} attempt(s): {error}"
                )));
            }
            eprintln!("\nstrata bench tpcc: loading {table}: {error}; retrying");
            tokio::time::sleep(RETRY_PAUSE).await;
            if server_code(&error).is_none() {
                if let Ok(fresh) = connect(&self.target).await {
                    *conn = fresh;
                }
            }
            attempt += 1;
        }
    }
}

/// The tasks of a load: item chunks first (every warehouse needs them in New-Order), then per
/// warehouse its row with districts, its stock chunks and its districts' rows.
fn tasks(warehouses: u32) -> Vec<LoadTask> {
    let chunks = |total: u32| {
        (0..total.div_ceil(ROWS_PER_CHUNK)).map(move |k| {
            let first = k * ROWS_PER_CHUNK + 1;
            (first, (first + ROWS_PER_CHUNK - 1).min(total))
        })
    };
    let mut tasks: Vec<LoadTask> = chunks(ITEMS)
        .map(|(first, last)| LoadTask::Items { first, last })
        .collect();
    for w_id in 1..=warehouses {
        tasks.push(LoadTask::Warehouse { w_id });
        tasks.extend(chunks(ITEMS).map(|(first, last)| LoadTask::Stock { w_id, first, last }));
        tasks.extend((1..=DISTRICTS_PER_WAREHOUSE).map(|d_id| LoadTask::District { w_id, d_id }));
    }
    tasks
}

/// Rows a load of `warehouses` writes, counting the expected 10 order lines per order.
pub fn expected_rows(warehouses: u32) -> u64 {
    let per_district = u64::from(CUSTOMERS_PER_DISTRICT) * 2
        + u64::from(ORDERS_PER_DISTRICT) * (1 + 10)
        + u64::from(ORDERS_PER_DISTRICT - FIRST_NEW_ORDER_ID + 1);
    let per_warehouse =
        1 + u64::from(ITEMS) + u64::from(DISTRICTS_PER_WAREHOUSE) * (1 + per_district);
    u64::from(ITEMS) + u64::from(warehouses) * per_warehouse
}

fn task_seed(seed: u64, index: usize) -> u64 {
    seed ^ (index as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

fn generate(task: LoadTask, rng: &mut TpccRng, load_time: &str) -> Vec<TableRows> {
    match task {
        LoadTask::Items { first, last } => vec![TableRows {
            prefix: ITEM_INSERT,
            rows: (first..=last).map(|i_id| item_row(rng, i_id)).collect(),
        }],
        LoadTask::Warehouse { w_id } => vec![
            TableRows {
                prefix: WAREHOUSE_INSERT,
                rows: vec![warehouse_row(rng, w_id)],
            },
            TableRows {
                prefix: DISTRICT_INSERT,
                rows: (1..=DISTRICTS_PER_WAREHOUSE)
                    .map(|d_id| district_row(rng, w_id, d_id))
                    .collect(),
            },
        ],
        LoadTask::Stock { w_id, first, last } => vec![TableRows {
            prefix: STOCK_INSERT,
            rows: (first..=last)
                .map(|i_id| stock_row(rng, w_id, i_id))
                .collect(),
        }],
        LoadTask::District { w_id, d_id } => district_rows(rng, w_id, d_id, load_time),
    }
}

fn item_row(rng: &mut TpccRng, i_id: u32) -> String {
    format!(
        "({i_id},{},{},{},{})",
        rng.uniform(1, 10_000),
        quote(&rng.a_string(14, 24)),
        cents(rng.uniform(100, 10_000)),
        quote(&rng.data_with_original())
    )
}

fn warehouse_row(rng: &mut TpccRng, w_id: u32) -> String {
    format!(
        "({w_id},{},{},300000.00)",
        address(rng, true),
        tax(rng.uniform(0, 2000))
    )
}

fn district_row(rng: &mut TpccRng, w_id: u32, d_id: u32) -> String {
    format!(
        "({d_id},{w_id},{},{},30000.00,{})",
        address(rng, true),
        tax(rng.uniform(0, 2000)),
        ORDERS_PER_DISTRICT + 1
    )
}

fn stock_row(rng: &mut TpccRng, w_id: u32, i_id: u32) -> String {
    let quantity = rng.uniform(10, 100);
    let dists: Vec<String> = (0..10).map(|_| quote(&rng.a_string(24, 24))).collect();
    format!(
        "({i_id},{w_id},{quantity},{},0,0,0,{})",
        dists.join(","),
        quote(&rng.data_with_original())
    )
}

/// Name (when `named`), street 1, street 2, city, state and zip, quoted and comma-separated.
fn address(rng: &mut TpccRng, named: bool) -> String {
    let mut parts = Vec::with_capacity(6);
    if named {
        parts.push(quote(&rng.a_string(6, 10)));
    }
    parts.push(quote(&rng.a_string(10, 20)));
    parts.push(quote(&rng.a_string(10, 20)));
    parts.push(quote(&rng.a_string(10, 20)));
    parts.push(quote(&rng.state()));
    parts.push(quote(&rng.zip()));
    parts.join(",")
}

/// The rows of one district: customers, history, orders, new orders and order lines.
fn district_rows(rng: &mut TpccRng, w_id: u32, d_id: u32, load_time: &str) -> Vec<TableRows> {
    let load = NurandConstants::for_load();
    let since = quote(load_time);
    let mut customers = Vec::with_capacity(CUSTOMERS_PER_DISTRICT as usize);
    let mut history = Vec::with_capacity(CUSTOMERS_PER_DISTRICT as usize);
    for c_id in 1..=CUSTOMERS_PER_DISTRICT {
        let last = if c_id <= 1000 {
            last_name(c_id - 1)
        } else {
            random_last_name(rng, &load)
        };
        let first = rng.a_string(8, 16);
        let address = address(rng, false);
        let phone = rng.n_string(16, 16);
        let credit = if rng.percent(10) { "BC" } else { "GC" };
        let discount = tax(rng.uniform(0, 5000));
        let data = rng.a_string(300, 500);
        customers.push(format!(
            "({c_id},{d_id},{w_id},{},'OE',{},{address},{},{since},'{credit}',50000.00,\
             {discount},-10.00,10.00,1,0,{})",
            quote(&first),
            quote(&last),
            quote(&phone),
            quote(&data)
        ));
        history.push(format!(
            "({c_id},{d_id},{w_id},{d_id},{w_id},{since},10.00,{})",
            quote(&rng.a_string(12, 24))
        ));
    }
    let customer_of_order = rng.permutation(ORDERS_PER_DISTRICT);
    let mut orders = Vec::with_capacity(ORDERS_PER_DISTRICT as usize);
    let mut new_orders = Vec::new();
    let mut order_lines = Vec::with_capacity(ORDERS_PER_DISTRICT as usize * 10);
    for o_id in 1..=ORDERS_PER_DISTRICT {
        let delivered = o_id < FIRST_NEW_ORDER_ID;
        let carrier = if delivered {
            rng.uniform(1, 10).to_string()
        } else {
            "NULL".to_string()
        };
        let line_count = rng.uniform(5, 15);
        orders.push(format!(
            "({o_id},{d_id},{w_id},{},{since},{carrier},{line_count},1)",
            customer_of_order[(o_id - 1) as usize]
        ));
        if !delivered {
            new_orders.push(format!("({o_id},{d_id},{w_id})"));
        }
        for number in 1..=line_count {
            let i_id = rng.uniform(1, ITEMS);
            let (delivery, amount) = if delivered {
                (since.clone(), "0.00".to_string())
            } else {
                ("NULL".to_string(), cents(rng.uniform(1, 999_999)))
            };
            order_lines.push(format!(
                "({o_id},{d_id},{w_id},{number},{i_id},{w_id},{delivery},5,{amount},{})",
                quote(&rng.a_string(24, 24))
            ));
        }
    }
    vec![
        TableRows {
            prefix: CUSTOMER_INSERT,
            rows: customers,
        },
        TableRows {
            prefix: HISTORY_INSERT,
            rows: history,
        },
        TableRows {
            prefix: ORDERS_INSERT,
            rows: orders,
        },
        TableRows {
            prefix: NEW_ORDER_INSERT,
            rows: new_orders,
        },
        TableRows {
            prefix: ORDER_LINE_INSERT,
            rows: order_lines,
        },
    ]
}

/// A SQL string literal.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\\', "\\\\").replace('\'', "''"))
}

/// `cents` as a DECIMAL literal with two digits: 12345 → 123.45.
fn cents(cents: u32) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// `ten_thousandths` as a DECIMAL(4,4) literal: 1234 → 0.1234.
fn tax(ten_thousandths: u32) -> String {
    debug_assert!(ten_thousandths < 10_000);
    format!("0.{ten_thousandths:04}")
}

async fn show_progress(
    loaded: Arc<AtomicU64>,
    total: u64,
    started: Instant,
    done: Arc<AtomicBool>,
) {
    let terminal = std::io::stderr().is_terminal();
    let every = if terminal {
        PROGRESS_TERMINAL
    } else {
        PROGRESS_LOG
    };
    let mut last = Instant::now();
    while !done.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if last.elapsed() < every {
            continue;
        }
        last = Instant::now();
        let line = progress_line(
            loaded.load(Ordering::Relaxed),
            total,
            started.elapsed().as_secs_f64(),
            false,
        );
        if terminal {
            eprint!("\r{line}");
        } else {
            eprintln!("{line}");
        }
    }
    if terminal {
        eprint!("\r");
    }
}

fn progress_line(rows: u64, total: u64, seconds: f64, finished: bool) -> String {
    let percent = if finished {
        100.0
    } else {
        (rows as f64 * 100.0 / total.max(1) as f64).min(99.9)
    };
    format!("strata bench tpcc: loaded {rows} of ~{total} rows ({percent:.1}%) in {seconds:.1} s")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(row: &str) -> Vec<String> {
        // Rows of this module never hold commas inside values (a-strings are alphanumeric).
        row.trim_start_matches('(')
            .trim_end_matches(')')
            .split(',')
            .map(str::to_string)
            .collect()
    }

    #[test]
    fn tasks_cover_every_row_once() {
        let tasks = tasks(2);
        let items: u32 = tasks
            .iter()
            .map(|t| match t {
                LoadTask::Items { first, last } => last - first + 1,
                _ => 0,
            })
            .sum();
        assert_eq!(items, ITEMS);
        let stock: u32 = tasks
            .iter()
            .map(|t| match t {
                LoadTask::Stock { first, last, .. } => last - first + 1,
                _ => 0,
            })
            .sum();
        assert_eq!(stock, 2 * ITEMS);
        let districts = tasks
            .iter()
            .filter(|t| matches!(t, LoadTask::District { .. }))
            .count();
        assert_eq!(districts, 20);
    }

    #[test]
    fn district_rows_follow_the_population_rules() {
        let mut rng = TpccRng::seeded(9);
        let tables = district_rows(&mut rng, 3, 7, "2024-01-02 03:04:05");
        let [customers, history, orders, new_orders, order_lines] = &tables[..] else {
            panic!("five tables");
        };
        assert_eq!(customers.rows.len(), 3000);
        assert_eq!(history.rows.len(), 3000);
        assert_eq!(orders.rows.len(), 3000);
        assert_eq!(new_orders.rows.len(), 900);
        let bad_credit = customers.rows.iter().filter(|r| r.contains("'BC'")).count();
        assert!((200..400).contains(&bad_credit), "{bad_credit}");
        let first = values(&customers.rows[0]);
        assert_eq!(first[5], "'BARBARBAR'");
        assert_eq!(values(&customers.rows[371])[5], "'PRICALLYOUGHT'");
        assert_eq!(first[16], "-10.00");
        let mut customer_ids: Vec<u32> = orders
            .rows
            .iter()
            .map(|r| values(r)[3].parse().unwrap())
            .collect();
        customer_ids.sort_unstable();
        assert_eq!(customer_ids, (1..=3000).collect::<Vec<_>>());
        let line_total: usize = orders
            .rows
            .iter()
            .map(|r| values(r)[6].parse::<usize>().unwrap())
            .sum();
        assert_eq!(order_lines.rows.len(), line_total);
        for row in &orders.rows {
            let v = values(row);
            let o_id: u32 = v[0].parse().unwrap();
            assert_eq!(v[5] == "NULL", o_id >= FIRST_NEW_ORDER_ID, "{row}");
        }
        for row in &order_lines.rows {
            let v = values(row);
            let o_id: u32 = v[0].parse().unwrap();
            if o_id < FIRST_NEW_ORDER_ID {
                assert_eq!(v[8], "0.00");
                assert_ne!(v[6], "NULL");
            } else {
                assert_eq!(v[6], "NULL");
            }
        }
    }

    #[test]
    fn literals() {
        assert_eq!(quote("it's"), "'it''s'");
        assert_eq!(quote("a\\b"), "'a\\\\b'");
        assert_eq!(cents(12345), "123.45");
        assert_eq!(cents(1), "0.01");
        assert_eq!(tax(5), "0.0005");
        assert_eq!(tax(2000), "0.2000");
    }

    #[test]
    fn same_seed_same_rows() {
        let a = generate(
            LoadTask::Items { first: 1, last: 50 },
            &mut TpccRng::seeded(1),
            "t",
        );
        let b = generate(
            LoadTask::Items { first: 1, last: 50 },
            &mut TpccRng::seeded(1),
            "t",
        );
        assert_eq!(a[0].rows, b[0].rows);
        assert!(a[0].rows[0].starts_with("(1,"));
    }

    #[test]
    fn expected_rows_of_one_warehouse() {
        // 100k items + 1 warehouse + 100k stock + 10 × (1 district + 3k customers + 3k history
        // + 3k orders + 900 new orders + ~30k order lines).
        assert_eq!(expected_rows(1), 100_000 + 1 + 100_000 + 10 * (1 + 39_900));
    }
}
