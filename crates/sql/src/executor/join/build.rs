//! The build side of a join step: its relation read once, hashed on the columns an equality
//! ties to earlier relations; and, when those rows pass the statement's memory quota, a grace
//! hash join.
//!
//! A hash build that would pass `tidb_mem_quota_query` (8175) while holding at least
//! [`SPILL_MIN_BYTES`] goes to disk instead: its rows are written to [`PARTITIONS`] files by a
//! hash of their join key, and every row the steps before it pass on afterwards goes to the
//! matching partition of a second set of files instead of being joined. Once those steps are
//! done, each partition's build rows are held and hashed alone and its probe rows joined
//! through them and the steps after, one partition after the other. A row whose key is NULL
//! matches nothing: a build row is dropped, a probe row of a LEFT JOIN is kept (to be padded
//! with NULLs) and one of an inner join dropped. The joined rows then leave in partition order
//! rather than in the order of a nested loop; nothing relies on a join's order (a sort above
//! gives ORDER BY).

use std::collections::{HashMap, VecDeque};

use chrono::{NaiveDate, NaiveDateTime, NaiveTime};
use rust_decimal::Decimal;
use strata_codec::Datum;
use strata_txn::Transaction;

use crate::error::Result;
use crate::exec::{self, Ctx};
use crate::expr::{EvalEnv, Expr};
use crate::memory::row_bytes;
use crate::planner::join::{BuildSource, HashProbe, JoinStep};

use super::super::spill::{self, partition, SpillReader, SpillWriter, SPILL_MIN_BYTES};
use super::super::Exec;

/// Rows of a build step (or of one partition of a spilled one), held and hashed.
pub struct Built {
    pub rows: Vec<Vec<Datum>>,
    pub index: Option<HashMap<Vec<u8>, Vec<usize>>>,
    /// The bytes of `rows`, as charged to the statement.
    pub bytes: u64,
}

impl Built {
    fn new(rows: Vec<Vec<Datum>>, bytes: u64, hash: Option<&HashProbe>) -> Built {
        let index = hash.map(|hash| {
            let mut index: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
            for (i, row) in rows.iter().enumerate() {
                strata_fiber::yield_if_long();
                if let Some(key) = build_key(row, hash) {
                    index.entry(key).or_default().push(i);
                }
            }
            index
        });
        Built { rows, index, bytes }
    }

    /// The positions of the rows that may match `row` of the steps before (all of them
    /// without a hash).
    pub fn candidates(
        &self,
        hash: Option<&HashProbe>,
        row: &[Datum],
        ctx: &Ctx,
    ) -> Result<Matches> {
        match (hash, &self.index) {
            (Some(hash), Some(index)) => {
                Ok(Matches::Some(match probe_key(row, &hash.probe, ctx)? {
                    Some(key) => index.get(&key).cloned().unwrap_or_default().into_iter(),
                    None => Vec::new().into_iter(),
                }))
            }
            _ => Ok(Matches::All(0..self.rows.len())),
        }
    }
}

/// Positions in a [`Built`]'s rows.
pub enum Matches {
    All(std::ops::Range<usize>),
    Some(std::vec::IntoIter<usize>),
}

impl Iterator for Matches {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        match self {
            Matches::All(range) => range.next(),
            Matches::Some(ids) => ids.next(),
        }
    }
}

/// A build step read: held, or spilled to partitions (with the most it held before).
pub enum Building {
    Held(Built),
    Spilled {
        partitions: Vec<SpillWriter>,
        peak: u64,
    },
}

/// Reads a build step's relation. A hash build past the statement's quota spills.
pub fn build(
    source: &BuildSource,
    hash: Option<&HashProbe>,
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<Building> {
    let mut rows = Vec::new();
    let mut bytes = 0u64;
    let mut peak = 0u64;
    let mut partitions: Vec<SpillWriter> = Vec::new();
    let mut take = |row: Vec<Datum>| -> Result<()> {
        if !partitions.is_empty() {
            return write_build(&mut partitions, row, hash);
        }
        let size = row_bytes(&row);
        match ctx.consume_memory(size) {
            Ok(()) => {
                bytes += size as u64;
                peak = bytes;
                rows.push(row);
                Ok(())
            }
            Err(e) if e.code() == 8175 && bytes >= SPILL_MIN_BYTES => {
                // What it held, and the charge that failed, are given back: all goes to disk
                // (by key, or without one in a single file).
                ctx.session.release_memory(size + bytes as usize);
                bytes = 0;
                partitions = match hash {
                    Some(_) => spill::partitions()?,
                    None => vec![SpillWriter::new()?],
                };
                for held in std::mem::take(&mut rows).into_iter().chain([row]) {
                    write_build(&mut partitions, held, hash)?;
                }
                Ok(())
            }
            Err(e) => Err(e),
        }
    };
    match source {
        BuildSource::Table(source) => {
            exec::scan_source(txn, source, ctx, None, &mut |_, r| {
                take(r)?;
                Ok(true)
            })?;
        }
        BuildSource::Derived(plan) => {
            let mut root = super::super::build(plan);
            let mut exec = Exec {
                txn,
                ctx,
                locked: Vec::new(),
            };
            while let Some(batch) = root.next(&mut exec)? {
                for row in batch {
                    take(row)?;
                }
            }
        }
    }
    Ok(if partitions.is_empty() {
        Building::Held(Built::new(rows, bytes, hash))
    } else {
        Building::Spilled { partitions, peak }
    })
}

fn write_build(
    partitions: &mut [SpillWriter],
    row: Vec<Datum>,
    hash: Option<&HashProbe>,
) -> Result<()> {
    let Some(hash) = hash else {
        return partitions[0].write(&row);
    };
    match build_key(&row, hash) {
        Some(key) => partitions[partition(&key)].write(&row),
        None => Ok(()),
    }
}

/// A block nested loop: the rows a step before passed on (a batch of them, held) joined
/// with every row of a build side without a hash key that went to disk, read once per block;
/// the rows leave build row by build row, and a LEFT JOIN's rows that matched none after the
/// last.
pub struct Block {
    rows: Vec<Vec<Datum>>,
    matched: Vec<bool>,
    build: SpillReader,
    /// The build row being joined, and the next block row it meets.
    candidate: Option<Vec<Datum>>,
    position: usize,
}

impl Block {
    pub fn new(rows: Vec<Vec<Datum>>, build: SpillReader) -> Block {
        Block {
            matched: vec![false; rows.len()],
            rows,
            build,
            candidate: None,
            position: 0,
        }
    }

    /// Joins until `max` rows passed or the build rows are used up; returns those rows and
    /// whether they are (the block is done).
    pub fn fill(
        &mut self,
        step: &JoinStep,
        max: usize,
        ctx: &Ctx,
    ) -> Result<(Vec<Vec<Datum>>, bool)> {
        let slots = step.offset..step.offset + step.width;
        let mut out = Vec::new();
        while out.len() < max {
            let Some(candidate) = &self.candidate else {
                ctx.session.check_interrupt()?;
                strata_fiber::yield_if_long();
                match self.build.next_row()? {
                    Some(row) => {
                        self.candidate = Some(row);
                        self.position = 0;
                        continue;
                    }
                    None => break,
                }
            };
            while self.position < self.rows.len() && out.len() < max {
                let p = self.position;
                self.position += 1;
                let row = &mut self.rows[p];
                let mut values = candidate.iter();
                for (slot, value) in row[slots.clone()].iter_mut().zip(&mut values) {
                    *slot = value.clone();
                }
                if let Some(k) = step.key_slot {
                    row[k] = values.next().cloned().unwrap_or(Datum::Null);
                }
                if exec::holds(step.on.as_ref(), row, ctx)? {
                    self.matched[p] = true;
                    if exec::holds(step.filter.as_ref(), row, ctx)? {
                        out.push(row.clone());
                    }
                }
            }
            if self.position == self.rows.len() {
                self.candidate = None;
            }
        }
        if out.len() == max {
            return Ok((out, false));
        }
        if step.left {
            for (mut row, matched) in std::mem::take(&mut self.rows)
                .into_iter()
                .zip(&self.matched)
            {
                if *matched {
                    continue;
                }
                for slot in &mut row[slots.clone()] {
                    *slot = Datum::Null;
                }
                if let Some(k) = step.key_slot {
                    row[k] = Datum::Null;
                }
                if exec::holds(step.filter.as_ref(), &row, ctx)? {
                    out.push(row);
                }
            }
        }
        Ok((out, true))
    }
}

/// A spilled build step, as its joining goes.
pub enum Spilled {
    /// The steps before it still run: their rows go to `probe`.
    Writing {
        build: Vec<SpillWriter>,
        probe: Vec<SpillWriter>,
    },
    /// Joining the partitions, one at a time: those left, and the probe rows left of the one
    /// whose build rows are held.
    Joining {
        left: VecDeque<(SpillReader, SpillReader)>,
        probe: Option<SpillReader>,
    },
    Done,
}

impl Spilled {
    pub fn new(build: Vec<SpillWriter>) -> Result<Spilled> {
        Ok(Spilled::Writing {
            build,
            probe: spill::partitions()?,
        })
    }

    /// Writes the rows of the steps before to the partitions of their keys (`left`: a LEFT
    /// JOIN, whose rows with a NULL key are kept).
    pub fn write_probe(
        &mut self,
        rows: Vec<Vec<Datum>>,
        hash: &HashProbe,
        left: bool,
        ctx: &Ctx,
    ) -> Result<()> {
        let Spilled::Writing { probe, .. } = self else {
            unreachable!("probe rows come while the steps before run")
        };
        for row in rows {
            match probe_key(&row, &hash.probe, ctx)? {
                Some(key) => probe[partition(&key)].write(&row)?,
                None if left => probe[0].write(&row)?,
                None => {}
            }
        }
        Ok(())
    }

    pub fn is_writing(&self) -> bool {
        matches!(self, Spilled::Writing { .. })
    }

    /// The next probe rows to join (at most `max`), with their partition's build rows held
    /// in `built` (those of the partition before given back first); None once all are joined.
    /// Adds the bytes written to disk to `disk` when the writing ends.
    pub fn next_probe(
        &mut self,
        max: usize,
        hash: &HashProbe,
        left: bool,
        built: &mut Option<Built>,
        ctx: &Ctx,
        disk: &mut u64,
    ) -> Result<Option<Vec<Vec<Datum>>>> {
        loop {
            match self {
                Spilled::Writing { build, probe } => {
                    let mut partitions = VecDeque::with_capacity(build.len());
                    for (b, p) in std::mem::take(build).into_iter().zip(std::mem::take(probe)) {
                        *disk += b.bytes() + p.bytes();
                        let (b, p) = (b.finish()?, p.finish()?);
                        // Nothing to join: no probe rows, or no build rows for an inner join.
                        if p.rows_left() > 0 && (left || b.rows_left() > 0) {
                            partitions.push_back((b, p));
                        }
                    }
                    *self = Spilled::Joining {
                        left: partitions,
                        probe: None,
                    };
                }
                Spilled::Joining {
                    probe: Some(reader),
                    ..
                } => {
                    let mut rows = Vec::new();
                    while rows.len() < max {
                        match reader.next_row()? {
                            Some(row) => rows.push(row),
                            None => break,
                        }
                    }
                    if !rows.is_empty() {
                        return Ok(Some(rows));
                    }
                    if let Some(done) = built.take() {
                        ctx.session.release_memory(done.bytes as usize);
                    }
                    if let Spilled::Joining { probe, .. } = self {
                        *probe = None;
                    }
                }
                Spilled::Joining { left, probe: None } => {
                    let Some((mut build, next)) = left.pop_front() else {
                        *self = Spilled::Done;
                        return Ok(None);
                    };
                    let mut rows = Vec::with_capacity(build.rows_left());
                    let mut bytes = 0;
                    while let Some(row) = build.next_row()? {
                        ctx.keep_row(&row)?;
                        bytes += row_bytes(&row) as u64;
                        rows.push(row);
                    }
                    *built = Some(Built::new(rows, bytes, Some(hash)));
                    if let Spilled::Joining { probe, .. } = self {
                        *probe = Some(next);
                    }
                }
                Spilled::Done => return Ok(None),
            }
        }
    }
}

fn build_key(row: &[Datum], hash: &HashProbe) -> Option<Vec<u8>> {
    let values: Vec<Datum> = hash
        .build
        .iter()
        .map(|&c| row.get(c).cloned().unwrap_or(Datum::Null))
        .collect();
    hash_key(&values)
}

fn probe_key(row: &[Datum], probe: &[Expr], ctx: &Ctx) -> Result<Option<Vec<u8>>> {
    let mut values = Vec::with_capacity(probe.len());
    for e in probe {
        values.push(e.eval(row, ctx)?);
    }
    Ok(hash_key(&values))
}

/// A hash key under which values that compare equal meet (numbers of any type by value);
/// None when a value is NULL, which equals nothing. The ON condition still decides.
fn hash_key(values: &[Datum]) -> Option<Vec<u8>> {
    let mut canonical = Vec::with_capacity(values.len());
    for v in values {
        canonical.push(match v {
            Datum::Null => return None,
            Datum::Int(i) => Datum::Decimal(Decimal::from(*i)),
            Datum::UInt(u) => Datum::Decimal(Decimal::from(*u)),
            Datum::Float(f) => match Decimal::try_from(*f) {
                Ok(d) => Datum::Decimal(d),
                Err(_) => Datum::Float(*f),
            },
            // A string equals a number when it reads as that number, and a date or datetime
            // when it reads as one.
            Datum::Bytes(b) => {
                let text = std::str::from_utf8(b).unwrap_or("").trim();
                if let Ok(d) = text.parse::<Decimal>() {
                    Datum::Decimal(d)
                } else if let Ok(t) = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f") {
                    Datum::DateTime(t)
                } else if let Ok(d) = NaiveDate::parse_from_str(text, "%Y-%m-%d") {
                    Datum::DateTime(d.and_time(NaiveTime::MIN))
                } else {
                    v.clone()
                }
            }
            Datum::Date(d) => Datum::DateTime(d.and_time(NaiveTime::MIN)),
            other => other.clone(),
        });
    }
    Some(exec::group_key(&canonical))
}
