//! strata-difftest: the differential tester. It draws a world (tables, indexes, rows) and
//! queries over it from a seed, runs every query on Strata and on MariaDB, and fails on any
//! answer that differs, printing a shrunken reproducer for each.
//!
//! ```text
//!  seed ─▶ World (6 tables, rows) ─▶ CREATE + INSERT on both servers (+ ANALYZE on half)
//!       └▶ Generator ─▶ Query ─▶ SQL ─┬─▶ MariaDB (text protocol) ──┐
//!                                     └─▶ Strata (text, or binary) ─┴─▶ compare
//!                                                   differ ─▶ shrink query, then rows ─▶ reproducer
//! ```
//!
//! MariaDB is the oracle: what it answers is what a MySQL user expects, except for the
//! differences listed in [`known`] with their reasons. MariaDB runs with MySQL 8's SQL mode,
//! and compares strings as Strata does: by their bytes, with trailing spaces significant
//! (MariaDB's `utf8mb4_nopad_bin`, MySQL 8's `utf8mb4_0900_bin`). Strata names that collation
//! `utf8mb4_bin`, whose MySQL form pads with spaces ('a' = 'a ') — a difference the tester
//! leaves out by choosing the peer's collation.
//!
//! Every query is reproducible from the run's seed and its number alone
//! ([`query_seed`]); the tester speaks only the MySQL protocol, so it depends on no other
//! Strata crate.

pub mod cli;
pub mod compare;
pub mod generate;
pub mod known;
pub mod query;
pub mod schema;
pub mod server;
pub mod shrink;

use std::collections::BTreeMap;

use rand::rngs::StdRng;
use rand::SeedableRng;

use compare::{compare, render, Difference};
use generate::Generator;
use query::Query;
use schema::{Table, World};
use server::{Connection, Endpoint, Outcome, Protocol};

/// Rows of each answer that a report shows.
const REPORT_ROWS_MAX: usize = 12;
/// Most attempts when shrinking one query, and when shrinking its rows.
const SHRINK_ATTEMPTS_MAX: usize = 400;
/// Most mismatches of one run that are shrunk (the rest are reported as found).
const SHRUNK_MISMATCHES_MAX: usize = 8;

/// What one run does.
#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    /// The number of the first query (a run from 0 replays everything; a later start replays
    /// one query of an earlier run).
    pub first: usize,
    pub queries: usize,
    /// Queries over each world before a new one is drawn.
    pub queries_per_world: usize,
    pub strata: Endpoint,
    pub peer: Endpoint,
    /// The database created (and dropped) on both servers; `<database>_repro` is used while
    /// shrinking.
    pub database: String,
    /// Every n-th query also runs on Strata as a prepared statement (binary protocol); 0: never.
    pub binary_every: usize,
    /// Shrink mismatches to minimal reproducers.
    pub shrink: bool,
}

/// A query whose answers differ.
#[derive(Clone, Debug)]
pub struct Mismatch {
    /// The query's number in the run (see [`query_seed`]).
    pub number: usize,
    pub difference: Difference,
    pub protocol: Protocol,
    /// SQL that shows it: CREATE TABLE, INSERT, the query, and both answers as comments.
    pub reproducer: String,
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Report {
    pub queries: usize,
    /// Queries both servers refused (a generated query MySQL does not accept either).
    pub both_failed: usize,
    /// Rows that both servers returned and that matched.
    pub rows_matched: usize,
    /// Known differences met, by name.
    pub known: BTreeMap<&'static str, usize>,
    pub mismatches: Vec<Mismatch>,
}

impl Report {
    pub fn summary(&self) -> String {
        let mut text = format!(
            "{} queries, {} matching rows, {} refused by both, {} mismatches",
            self.queries,
            self.rows_matched,
            self.both_failed,
            self.mismatches.len()
        );
        for (name, count) in &self.known {
            text.push_str(&format!(", known difference {name}: {count}"));
        }
        text
    }
}

/// The seed of world `world` of a run.
pub fn world_seed(seed: u64, world: usize) -> u64 {
    mix(seed, world as u64 ^ 0x5eed_0000_0000)
}

/// The seed of query `number` of a run (its world is `number / queries_per_world`).
pub fn query_seed(seed: u64, number: usize) -> u64 {
    mix(seed, number as u64)
}

/// SplitMix64 of two values: nearby seeds give unrelated streams.
fn mix(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The two connections, driven one statement at a time (the pair concurrently).
struct Pair {
    runtime: tokio::runtime::Runtime,
    peer: Connection,
    strata: Connection,
}

impl Pair {
    fn open(config: &Config) -> Result<Pair, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let (peer, strata) = runtime.block_on(async {
            tokio::join!(
                Connection::open(&config.peer),
                Connection::open(&config.strata)
            )
        });
        Ok(Pair {
            runtime,
            peer: peer?,
            strata: strata?,
        })
    }

    fn execute(&mut self, sql: &str) -> Result<(), String> {
        let (peer, strata) = self
            .runtime
            .block_on(async { tokio::join!(self.peer.execute(sql), self.strata.execute(sql)) });
        peer.and(strata)
    }

    fn query(&mut self, sql: &str, strata_protocol: Protocol) -> (Outcome, Outcome) {
        self.runtime.block_on(async {
            tokio::join!(
                self.peer.query(sql, Protocol::Text),
                self.strata.query(sql, strata_protocol)
            )
        })
    }

    /// Creates `database` afresh on both servers with the world's tables and rows.
    fn load(&mut self, database: &str, tables: &[Table], analyze: bool) -> Result<(), String> {
        self.execute(&format!("DROP DATABASE IF EXISTS {database}"))?;
        self.execute(&format!("CREATE DATABASE {database}"))?;
        self.runtime.block_on(async {
            let (p, s) = tokio::join!(
                self.peer.use_database(database),
                self.strata.use_database(database)
            );
            p.and(s)
        })?;
        for table in tables {
            self.execute(&table.create_sql())?;
            if let Some(insert) = table.insert_sql(&table.rows) {
                self.execute(&insert)?;
            }
            if analyze {
                self.execute(&format!("ANALYZE TABLE {}", table.name))?;
            }
        }
        Ok(())
    }

    /// The known difference that explains two answers, if any (asking the peer more if the
    /// difference needs to).
    fn explain(
        &mut self,
        query: &Query,
        peer: &Outcome,
        strata: &Outcome,
    ) -> Option<&'static known::Known> {
        let mut ask = |q: &Query| {
            self.runtime
                .block_on(self.peer.query(&q.to_string(), Protocol::Text))
        };
        known::explain(query, peer, strata, &mut ask)
    }

    fn close(self) {
        let Pair {
            runtime,
            peer,
            strata,
        } = self;
        runtime.block_on(async {
            tokio::join!(peer.close(), strata.close());
        });
    }
}

/// Runs `config.queries` queries and reports what differed. `log` hears progress and each
/// mismatch as it is found.
pub fn run(config: &Config, log: &mut dyn FnMut(&str)) -> Result<Report, String> {
    let mut pair = Pair::open(config)?;
    let result = run_on(&mut pair, config, log);
    let cleanup = [
        format!("DROP DATABASE IF EXISTS {}", config.database),
        format!("DROP DATABASE IF EXISTS {}_repro", config.database),
    ];
    for sql in cleanup {
        let _ = pair.execute(&sql);
    }
    pair.close();
    result
}

fn run_on(pair: &mut Pair, config: &Config, log: &mut dyn FnMut(&str)) -> Result<Report, String> {
    let mut report = Report::default();
    let per_world = config.queries_per_world.max(1);
    let mut world = None;
    let mut world_index = None;
    for number in config.first..config.first + config.queries {
        let index = number / per_world;
        if world_index != Some(index) {
            world_index = Some(index);
            let mut rng = StdRng::seed_from_u64(world_seed(config.seed, index));
            let w = World::generate(&mut rng);
            pair.load(&config.database, &w.tables, index % 2 == 1)?;
            log(&format!(
                "world {index}: {} tables, {} rows",
                w.tables.len(),
                w.tables.iter().map(|t| t.rows.len()).sum::<usize>()
            ));
            world = Some(w);
        }
        let world = world.as_ref().expect("a world");
        let query = Generator::new(world, query_seed(config.seed, number)).query();
        let sql = query.to_string();
        let protocol = if config.binary_every > 0 && number % config.binary_every == 0 {
            Protocol::Binary
        } else {
            Protocol::Text
        };
        let (peer, strata) = pair.query(&sql, protocol);
        report.queries += 1;
        let order: Vec<usize> = query.order_by.iter().map(|(p, _)| *p).collect();
        let Some(difference) = compare(&peer, &strata, &order) else {
            match &peer {
                Outcome::Rows(rows) => report.rows_matched += rows.len(),
                _ => report.both_failed += 1,
            }
            continue;
        };
        if let Some(known) = pair.explain(&query, &peer, &strata) {
            *report.known.entry(known.name).or_default() += 1;
            continue;
        }
        let reproducer = if config.shrink && report.mismatches.len() < SHRUNK_MISMATCHES_MAX {
            shrunk_reproducer(pair, config, world, &query, &difference, protocol)?
        } else {
            reproducer_text(world.tables.iter().collect(), &query, &peer, &strata)
        };
        let mismatch = Mismatch {
            number,
            difference,
            protocol,
            reproducer,
        };
        log(&format!(
            "mismatch at query {number} (seed {}, {:?}, {:?} protocol):\n{}",
            config.seed, mismatch.difference, protocol, mismatch.reproducer
        ));
        report.mismatches.push(mismatch);
        // Shrinking left the connections in the reproducer's database.
        pair.runtime.block_on(async {
            let (p, s) = tokio::join!(
                pair.peer.use_database(&config.database),
                pair.strata.use_database(&config.database)
            );
            p.and(s)
        })?;
    }
    Ok(report)
}

/// Shrinks a failing query, then the rows of the tables it reads, in `<database>_repro`.
fn shrunk_reproducer(
    pair: &mut Pair,
    config: &Config,
    world: &World,
    query: &Query,
    difference: &Difference,
    protocol: Protocol,
) -> Result<String, String> {
    let repro = format!("{}_repro", config.database);
    pair.load(&repro, &world.tables, false)?;
    // A smaller query must fail the same way, and not turn into a known difference.
    let fails = |pair: &mut Pair, q: &Query| {
        let order: Vec<usize> = q.order_by.iter().map(|(p, _)| *p).collect();
        let (peer, strata) = pair.query(&q.to_string(), protocol);
        compare(&peer, &strata, &order).as_ref() == Some(difference)
            && pair.explain(q, &peer, &strata).is_none()
    };
    let mut current = query.clone();
    let mut attempts = 0;
    'shrinking: while attempts < SHRINK_ATTEMPTS_MAX {
        for candidate in shrink::candidates(&current) {
            attempts += 1;
            if attempts >= SHRINK_ATTEMPTS_MAX {
                break 'shrinking;
            }
            if fails(pair, &candidate) {
                current = candidate;
                continue 'shrinking;
            }
        }
        break;
    }
    let names = current.tables();
    let mut tables: Vec<Table> = world
        .tables
        .iter()
        .filter(|t| names.contains(&t.name))
        .cloned()
        .collect();
    let mut attempts = 0;
    for table in &mut tables {
        let mut chunk = table.rows.len().div_ceil(2);
        while chunk > 0 && attempts < SHRINK_ATTEMPTS_MAX {
            let mut removed = false;
            for keep in shrink::row_removals(table.rows.len(), chunk) {
                // One-row tables are left out, as the generator leaves them out (see
                // schema.rs).
                if keep.len() == 1 {
                    continue;
                }
                attempts += 1;
                let rows: Vec<Vec<String>> = keep.iter().map(|&i| table.rows[i].clone()).collect();
                replace_rows(pair, table, &rows)?;
                if fails(pair, &current) {
                    table.rows = rows;
                    removed = true;
                    break;
                }
            }
            if !removed {
                replace_rows(pair, table, &table.rows)?;
                chunk /= 2;
            }
            chunk = chunk.min(table.rows.len());
        }
    }
    let order: Vec<usize> = current.order_by.iter().map(|(p, _)| *p).collect();
    let (peer, strata) = pair.query(&current.to_string(), protocol);
    if compare(&peer, &strata, &order).as_ref() != Some(difference) {
        // The failure did not survive the last step (a flaky one): show the original.
        return Ok(reproducer_text(
            world.tables.iter().collect(),
            query,
            &peer,
            &strata,
        ));
    }
    Ok(reproducer_text(
        tables.iter().collect(),
        &current,
        &peer,
        &strata,
    ))
}

fn replace_rows(pair: &mut Pair, table: &Table, rows: &[Vec<String>]) -> Result<(), String> {
    pair.execute(&format!("DELETE FROM {}", table.name))?;
    if let Some(insert) = table.insert_sql(rows) {
        pair.execute(&insert)?;
    }
    Ok(())
}

/// The SQL that shows a mismatch, with both answers as comments.
fn reproducer_text(tables: Vec<&Table>, query: &Query, peer: &Outcome, strata: &Outcome) -> String {
    let mut text = String::new();
    let names = query.tables();
    for table in tables.into_iter().filter(|t| names.contains(&t.name)) {
        text.push_str(&table.create_sql());
        text.push_str(";\n");
        if let Some(insert) = table.insert_sql(&table.rows) {
            text.push_str(&insert);
            text.push_str(";\n");
        }
    }
    text.push_str(&query.to_string());
    text.push_str(";\n");
    for (label, outcome) in [("MariaDB", peer), ("Strata", strata)] {
        text.push_str(&format!("-- {label}: "));
        text.push_str(&render(outcome, REPORT_ROWS_MAX).replace('\n', "\n--   "));
        text.push('\n');
    }
    let (only_peer, only_strata) = compare::extra_rows(peer, strata);
    for (label, rows) in [("only MariaDB", only_peer), ("only Strata", only_strata)] {
        if !rows.is_empty() {
            text.push_str(&format!("-- {label}: "));
            let shown = render(&Outcome::Rows(rows), REPORT_ROWS_MAX);
            text.push_str(&shown.replace('\n', "\n--   "));
            text.push('\n');
        }
    }
    text
}
