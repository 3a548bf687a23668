//! Joins: the joined rows of a FROM clause with several relations, computed by the plan's
//! steps (`crate::planner::join` chose them) when first pulled.
//!
//! The joined row has every relation's columns at fixed positions (FROM order). Each step
//! fills its relation's slots:
//!
//! - an **index nested-loop** step looks its rows up per row of the steps before it, through an
//!   ordinary access path whose key expressions read earlier columns as `Expr::Prefix`; a
//!   lookup by primary key, primary-key range or index reads for a whole batch of earlier
//!   rows at once (on a cluster, one request per region instead of one per row), and a batch
//!   of integer primary keys close together is read as the one range between its lowest and
//!   highest key, merged with the keys wanted, as a merge join reads its inner side;
//! - a **hash** step reads its relation once, hashes it on the columns an equality ties to
//!   earlier relations, and probes with each row; past the statement's memory quota it
//!   becomes a grace hash join over partitions on disk ([`build`]);
//! - a **nested-loop** build step (no equality to hash on) tries every row of its relation;
//!   past the quota that relation goes to a file, joined with each batch of earlier rows as a
//!   block;
//! - a **LEFT JOIN** step pads a row that nothing matched with NULLs.

mod build;

use std::collections::HashMap;

use strata_codec::Datum;
use strata_txn::Transaction;
use strata_types::Key;

use crate::error::{self, Result};
use crate::exec::{self, eval_prefix, holds, index_range, pk_range, Ctx};
use crate::expr::{EvalEnv, Expr};
use crate::planner::access::{Access, TableSource};
use crate::planner::join::{BuildSource, JoinItem, JoinPlan, JoinStep};
use crate::planner::physical::Plan;
use crate::rows;

use super::describe;
use super::scan::{source_node, SCAN_PAGE_ROWS};
use super::spill::SpillFile;
use super::{Batch, Cursor, Exec, Held, Node, Operator, Ran};
use build::{Block, Building, Built, Matches, Spilled};

pub struct Join<'p> {
    /// Its node of the plan, whose FROM row names the columns EXPLAIN shows.
    node: &'p Plan,
    plan: &'p JoinPlan,
    joining: Joining<'p>,
    measured: bool,
}

impl<'p> Join<'p> {
    pub fn new(node: &'p Plan, plan: &'p JoinPlan, measured: bool) -> Join<'p> {
        Join {
            node,
            plan,
            joining: Joining::new(plan),
            measured,
        }
    }
}

impl Operator for Join<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        self.joining.next_batch(exec.txn, exec.ctx)
    }

    /// The build sides it read, when it has any.
    fn held(&self) -> Option<Held> {
        let builds = self
            .plan
            .steps
            .iter()
            .any(|step| matches!(step.item, JoinItem::Build { .. }));
        builds.then_some(self.joining.held)
    }

    fn explain(&self) -> Node {
        let steps = self
            .plan
            .steps
            .iter()
            .enumerate()
            .map(|(k, step)| {
                // A step's line is estimated at the joined rows that pass it, as its actual
                // rows count them.
                let mut node = self.step_node(k, step).estimated(step.est_rows);
                if self.measured {
                    node.ran = Some(self.joining.steps[k]);
                }
                node
            })
            .collect();
        let est_rows = self.plan.steps.last().map_or(0.0, |s| s.est_rows);
        Node::root(
            "Join",
            format!("{} relations, in this order", self.plan.steps.len()),
            steps,
        )
        .estimated(est_rows)
    }
}

impl Join<'_> {
    /// EXPLAIN's line of step `k`.
    fn step_node(&self, k: usize, step: &JoinStep) -> Node {
        let names = describe::Names::of_block(self.node);
        let kind = if step.left { "left outer" } else { "inner" };
        let mut info = Vec::new();
        if let Some(on) = &step.on {
            info.push(format!("on:{}", describe::exprs([on], &names)));
        }
        if let Some(filter) = &step.filter {
            info.push(format!("then:{}", describe::exprs([filter], &names)));
        }
        match &step.item {
            JoinItem::Lookup(source) => {
                if k > 0 {
                    info.insert(0, format!("{kind} index join"));
                }
                source_node(source, info.join(", "))
            }
            JoinItem::Build { source, hash } => {
                let how = if hash.is_some() {
                    "hash join"
                } else {
                    "nested loop"
                };
                info.insert(0, format!("{kind} {how}, build"));
                match source {
                    BuildSource::Table(t) => source_node(t, info.join(", ")),
                    BuildSource::Derived(plan) => Node {
                        name: "Derived".to_string(),
                        est_rows: step.est_rows,
                        task: "root",
                        object: format!("derived:{}", step.alias),
                        info: info.join(", "),
                        children: vec![super::build(plan).explain()],
                        ran: None,
                    },
                }
            }
        }
    }
}

/// Joined rows a step takes at a time: a lookup step reads for all of them at once.
pub const JOIN_BATCH_ROWS: usize = 1024;

/// Runs the join; returns the joined rows that pass every step (held whole, and charged to
/// the statement's memory).
pub fn execute(plan: &JoinPlan, txn: &mut Transaction, ctx: &Ctx) -> Result<Vec<Vec<Datum>>> {
    let mut joining = Joining::new(plan);
    let mut out = Vec::new();
    while let Some(batch) = joining.next_batch(txn, ctx)? {
        for row in &batch {
            ctx.keep_row(row)?;
        }
        out.extend(batch);
    }
    Ok(out)
}

/// A join as it runs, pulled a batch of joined rows at a time: the rows a batch of one step
/// passes on are joined through the later steps before that step goes on, so the output keeps
/// the order of a row-at-a-time nested loop while no more than a batch per step is held (and
/// a LIMIT above stops the join).
struct Joining<'p> {
    plan: &'p JoinPlan,
    /// The steps with input left, innermost last.
    stack: Vec<Frame<'p>>,
    /// The rows of each build step, read once (or a partition's, when it spilled).
    built: Vec<Option<Built>>,
    /// Each hash build step that spilled to disk.
    spilled: Vec<Option<Spilled>>,
    /// Each build step without a hash key that spilled to disk (joined a block at a time).
    nested: Vec<Option<SpillFile>>,
    /// What each step did (EXPLAIN ANALYZE).
    steps: Vec<Ran>,
    /// What the build steps held at most, and wrote.
    held: Held,
}

/// Step `k` joining a batch of rows of the steps before it.
struct Frame<'p> {
    k: usize,
    input: std::vec::IntoIter<Vec<Datum>>,
    /// What a batched lookup found for each row of `input`, in order.
    looked_up: Option<std::vec::IntoIter<Vec<Vec<Datum>>>>,
    /// The input row being joined, with what may match it.
    current: Option<Current<'p>>,
    /// The input rows joined as a block with a spilled build side.
    block: Option<Block>,
}

struct Current<'p> {
    /// The input row, its step's slots filled with the candidate being tried.
    row: Vec<Datum>,
    found: Found<'p>,
    matched: bool,
}

/// The rows of a step's relation that may match one input row.
enum Found<'p> {
    Rows(std::vec::IntoIter<Vec<Datum>>),
    /// Rows of the step's build side, by position.
    Built(Matches),
    /// The first step's access path, read a page at a time.
    Paged {
        cursor: Cursor<'p>,
        page: std::vec::IntoIter<(Key, Vec<Datum>)>,
    },
    /// The first step's derived table, pulled a batch at a time.
    Pulled {
        root: Box<dyn Operator + 'p>,
        batch: std::vec::IntoIter<Vec<Datum>>,
    },
}

impl<'p> Joining<'p> {
    fn new(plan: &'p JoinPlan) -> Joining<'p> {
        let start = Frame {
            k: 0,
            input: vec![vec![Datum::Null; plan.width]].into_iter(),
            looked_up: None,
            current: None,
            block: None,
        };
        let mut steps = vec![Ran::default(); plan.steps.len()];
        let stack = match steps.first_mut() {
            Some(first) => {
                first.loops = 1;
                vec![start]
            }
            None => Vec::new(),
        };
        Joining {
            plan,
            stack,
            built: (0..plan.steps.len()).map(|_| None).collect(),
            spilled: (0..plan.steps.len()).map(|_| None).collect(),
            nested: (0..plan.steps.len()).map(|_| None).collect(),
            steps,
            held: Held::default(),
        }
    }

    /// Notes the memory the build steps hold now.
    fn note_held(&mut self) {
        let now = self.built.iter().flatten().map(|b| b.bytes).sum();
        self.held.memory = self.held.memory.max(now);
    }

    /// Reads the relation of build step `k` before its first rows come, unless it was.
    fn prepare_build(&mut self, k: usize, txn: &mut Transaction, ctx: &Ctx) -> Result<()> {
        let JoinItem::Build { source, hash } = &self.plan.steps[k].item else {
            return Ok(());
        };
        if self.built[k].is_some() || self.spilled[k].is_some() || self.nested[k].is_some() {
            return Ok(());
        }
        match build::build(source, hash.as_ref(), txn, ctx)? {
            Building::Held(b) => {
                self.built[k] = Some(b);
                self.note_held();
            }
            Building::Spilled { partitions, peak } => {
                self.held.memory = self.held.memory.max(peak);
                if hash.is_some() {
                    self.spilled[k] = Some(Spilled::new(partitions)?);
                } else {
                    let file = partitions.into_iter().next().expect("one file");
                    self.held.disk += file.bytes();
                    self.nested[k] = Some(file.finish_file()?);
                }
            }
        }
        Ok(())
    }

    /// With no step left running, the next rows of the first spilled step with partitions
    /// left to join: pushes them as its step's input. False when there are none.
    fn next_partition_rows(&mut self, ctx: &Ctx) -> Result<bool> {
        for k in 0..self.plan.steps.len() {
            let Some(spilled) = self.spilled[k].as_mut() else {
                continue;
            };
            let step = &self.plan.steps[k];
            let JoinItem::Build {
                hash: Some(hash), ..
            } = &step.item
            else {
                unreachable!("only a hash build spills")
            };
            let rows = spilled.next_probe(
                JOIN_BATCH_ROWS,
                hash,
                step.left,
                &mut self.built[k],
                ctx,
                &mut self.held.disk,
            )?;
            self.note_held();
            if let Some(rows) = rows {
                self.steps[k].loops += 1;
                self.stack.push(Frame {
                    k,
                    input: rows.into_iter(),
                    looked_up: None,
                    current: None,
                    block: None,
                });
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The next joined rows (never none), or None once the join is done.
    fn next_batch(&mut self, txn: &mut Transaction, ctx: &Ctx) -> Result<Option<Batch>> {
        let plan = self.plan;
        loop {
            if self.stack.is_empty() && !self.next_partition_rows(ctx)? {
                return Ok(None);
            }
            let frame = self.stack.last_mut().expect("pushed above");
            let k = frame.k;
            let reads = txn.read_stats();
            let (batch, exhausted) = fill(plan, frame, &mut self.built, txn, ctx)?;
            self.steps[k].kv.add(&txn.read_stats().since(&reads));
            if exhausted {
                self.stack.pop();
            }
            if batch.is_empty() {
                continue;
            }
            self.steps[k].rows += batch.len() as u64;
            if k + 1 == plan.steps.len() {
                return Ok(Some(batch));
            }
            ctx.session.check_interrupt()?;
            let step = &plan.steps[k + 1];
            let reads = txn.read_stats();
            self.prepare_build(k + 1, txn, ctx)?;
            if let Some(spilled) = self.spilled[k + 1].as_mut().filter(|s| s.is_writing()) {
                // Its build side went to disk: these rows wait in partitions too.
                let JoinItem::Build {
                    hash: Some(hash), ..
                } = &step.item
                else {
                    unreachable!("only a hash build spills")
                };
                spilled.write_probe(batch, hash, step.left, ctx)?;
                self.steps[k + 1].kv.add(&txn.read_stats().since(&reads));
                continue;
            }
            if let Some(file) = &self.nested[k + 1] {
                // Its build side went to disk without a key: the batch is joined with it
                // as a block.
                self.steps[k + 1].kv.add(&txn.read_stats().since(&reads));
                self.steps[k + 1].loops += 1;
                self.stack.push(Frame {
                    k: k + 1,
                    input: Vec::new().into_iter(),
                    looked_up: None,
                    current: None,
                    block: Some(Block::new(batch, file.read()?)),
                });
                continue;
            }
            let looked_up = match &step.item {
                JoinItem::Lookup(source) => match &source.access {
                    Access::Point(exprs) => {
                        Some(point_lookups(txn, source, exprs, &batch, ctx)?.into_iter())
                    }
                    _ => range_lookups(txn, source, &batch, ctx)?.map(Vec::into_iter),
                },
                JoinItem::Build { .. } => None,
            };
            self.steps[k + 1].kv.add(&txn.read_stats().since(&reads));
            self.steps[k + 1].loops += 1;
            self.stack.push(Frame {
                k: k + 1,
                input: batch.into_iter(),
                looked_up,
                current: None,
                block: None,
            });
        }
    }
}

/// Joins `frame`'s step to its input rows until [`JOIN_BATCH_ROWS`] rows passed or the input
/// is used up; returns those rows and whether it is.
fn fill<'p>(
    plan: &'p JoinPlan,
    frame: &mut Frame<'p>,
    built: &mut [Option<Built>],
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<(Batch, bool)> {
    let k = frame.k;
    let step = &plan.steps[k];
    if let Some(block) = frame.block.as_mut() {
        return block.fill(step, JOIN_BATCH_ROWS, ctx);
    }
    let slots = step.offset..step.offset + step.width;
    let mut out = Vec::new();
    while out.len() < JOIN_BATCH_ROWS {
        if frame.current.is_none() {
            let Some(row) = frame.input.next() else {
                return Ok((out, true));
            };
            let found = match (frame.looked_up.as_mut(), &step.item) {
                (Some(rows), _) => Found::Rows(rows.next().unwrap_or_default().into_iter()),
                // The first step reads its whole relation: a page (or batch) at a time.
                (
                    None,
                    JoinItem::Lookup(source)
                    | JoinItem::Build {
                        source: BuildSource::Table(source),
                        ..
                    },
                ) if k == 0 => Found::Paged {
                    cursor: Cursor::new(source, None),
                    page: Vec::new().into_iter(),
                },
                (
                    None,
                    JoinItem::Build {
                        source: BuildSource::Derived(derived),
                        ..
                    },
                ) if k == 0 => Found::Pulled {
                    root: super::build(derived),
                    batch: Vec::new().into_iter(),
                },
                (None, JoinItem::Build { hash, .. }) => {
                    let b = built[k]
                        .as_ref()
                        .expect("a build step's rows are read before the rows it joins come");
                    Found::Built(b.candidates(hash.as_ref(), &row, ctx)?)
                }
                (None, JoinItem::Lookup(source)) => {
                    Found::Rows(lookup(source, &row, txn, ctx)?.into_iter())
                }
            };
            frame.current = Some(Current {
                row,
                found,
                matched: false,
            });
        }
        let Current {
            row,
            found,
            matched,
        } = frame.current.as_mut().expect("set above");
        let candidate = match found {
            Found::Rows(rows) => rows.next(),
            Found::Built(ids) => ids
                .next()
                .map(|i| built[k].as_ref().expect("read above").rows[i].clone()),
            Found::Paged { cursor, page } => loop {
                if let Some((_, r)) = page.next() {
                    break Some(r);
                }
                match cursor.next_page(txn, &ctx.with_prefix(row))? {
                    Some(next) => *page = next.into_iter(),
                    None => break None,
                }
            },
            Found::Pulled { root, batch } => loop {
                if let Some(r) = batch.next() {
                    break Some(r);
                }
                let mut exec = Exec {
                    txn,
                    ctx,
                    locked: Vec::new(),
                };
                match root.next(&mut exec)? {
                    Some(next) => *batch = next.into_iter(),
                    None => break None,
                }
            },
        };
        match candidate {
            Some(candidate) => {
                let mut values = candidate.into_iter();
                for (slot, value) in row[slots.clone()].iter_mut().zip(&mut values) {
                    *slot = value;
                }
                if let Some(k) = step.key_slot {
                    row[k] = values.next().unwrap_or(Datum::Null);
                }
                if holds(step.on.as_ref(), row, ctx)? {
                    *matched = true;
                    if holds(step.filter.as_ref(), row, ctx)? {
                        out.push(row.clone());
                    }
                }
            }
            None => {
                let Current {
                    mut row, matched, ..
                } = frame.current.take().expect("set above");
                if step.left && !matched {
                    for slot in &mut row[slots.clone()] {
                        *slot = Datum::Null;
                    }
                    if let Some(k) = step.key_slot {
                        row[k] = Datum::Null;
                    }
                    if holds(step.filter.as_ref(), &row, ctx)? {
                        out.push(row);
                    }
                }
            }
        }
    }
    Ok((out, frame.input.len() == 0 && frame.current.is_none()))
}

/// The rows of a lookup step's relation that may match `row` (when [`point_lookups`] or
/// [`range_lookups`] did not read them for many rows at once).
fn lookup(
    source: &TableSource,
    row: &[Datum],
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<Vec<Vec<Datum>>> {
    let mut found = Vec::new();
    exec::scan_source(txn, source, &ctx.with_prefix(row), None, &mut |_, r| {
        found.push(r);
        Ok(true)
    })?;
    Ok(found)
}

/// The rows a forward range access (primary-key or secondary-index range) finds for each of
/// `prefixes`, the joined rows of an index nested-loop join, with the ranges of all of them
/// read together (and, through an index, their rows with one batched read). None when
/// `source` is not such an access; [`scan_source`] then reads row by row.
fn range_lookups(
    txn: &mut Transaction,
    source: &TableSource,
    prefixes: &[Vec<Datum>],
    ctx: &Ctx,
) -> Result<Option<Vec<Vec<Vec<Datum>>>>> {
    let table = &*source.table;
    if source.reverse {
        return Ok(None);
    }
    let index = match &source.access {
        Access::PkRange { .. } => None,
        Access::Index { index, .. }
            if txn.read_ts().0 >= table.indexes[*index].readable_from_ts =>
        {
            Some(&table.indexes[*index])
        }
        _ => return Ok(None),
    };
    let mut ranges = Vec::with_capacity(prefixes.len());
    let mut of_row = Vec::with_capacity(prefixes.len());
    for prefix in prefixes {
        let lookup = ctx.with_prefix(prefix);
        let range = match &source.access {
            Access::PkRange { prefix, low, high } => pk_range(table, prefix, low, high, &lookup)?,
            Access::Index {
                prefix, low, high, ..
            } => index_range(
                table,
                index.expect("an index access"),
                prefix,
                low,
                high,
                &lookup,
            )?,
            _ => unreachable!("checked above"),
        };
        of_row.push(range.is_some().then_some(ranges.len()));
        ranges.extend(range);
    }
    let found = txn.scan_many(&ranges, SCAN_PAGE_ROWS)?;
    let decoder =
        rows::RowDecoder::new(table, source.columns.as_deref()).keeping_key(source.with_key);
    // Row keys the index entries point at, with the row each belongs to.
    let mut row_keys = Vec::new();
    let mut out: Vec<Vec<Vec<Datum>>> = Vec::with_capacity(prefixes.len());
    for (prefix, slot) in prefixes.iter().zip(of_row) {
        let Some(entries) = slot.map(|i| &found[i]) else {
            out.push(Vec::new());
            continue;
        };
        if entries.len() >= SCAN_PAGE_ROWS {
            // More than one page: this row's lookup reads on, page by page.
            let mut rows = Vec::new();
            exec::scan_source(txn, source, &ctx.with_prefix(prefix), None, &mut |_, r| {
                rows.push(r);
                Ok(true)
            })?;
            out.push(rows);
            continue;
        }
        match index {
            None => out.push(
                entries
                    .iter()
                    .map(|(key, value)| decoder.decode_entry(key, value))
                    .collect::<Result<_>>()?,
            ),
            Some(index) => {
                for (key, value) in entries {
                    let handle = rows::handle_from_index_entry(table, index, key, value)?;
                    row_keys.push((out.len(), rows::row_key(table, &handle)));
                }
                out.push(Vec::new());
            }
        }
    }
    if !row_keys.is_empty() {
        let keys: Vec<Key> = row_keys.iter().map(|(_, k)| k.clone()).collect();
        let values = txn.batch_get(&keys)?;
        for ((i, key), value) in row_keys.into_iter().zip(values) {
            match value {
                Some(v) => out[i].push(decoder.decode_entry(&key, &v)?),
                None => return Err(error::internal("index entry points at a missing row")),
            }
        }
    }
    Ok(Some(out))
}

/// The rows (none or one) a primary-key point access (`exprs`) finds for each of `prefixes`,
/// the joined rows of an index nested-loop join, read together in one batched read: one round
/// trip to the stores for many rows of the join, not one per row.
fn point_lookups(
    txn: &mut Transaction,
    source: &TableSource,
    exprs: &[Expr],
    prefixes: &[Vec<Datum>],
    ctx: &Ctx,
) -> Result<Vec<Vec<Vec<Datum>>>> {
    let table = &*source.table;
    let pk = table.primary_columns();
    let mut keys: Vec<Key> = Vec::new();
    let mut slots: HashMap<Key, usize> = HashMap::new();
    let mut wanted = Vec::with_capacity(prefixes.len());
    // The integer handles looked up, while every one is.
    let mut span = Some(IntSpan::default());
    for prefix in prefixes {
        let Some(handle) = eval_prefix(table, &pk, exprs, &ctx.with_prefix(prefix))? else {
            wanted.push(None);
            continue;
        };
        span = match (span, handle.as_slice()) {
            (Some(span), [Datum::Int(i)]) => Some(span.with(*i)),
            _ => None,
        };
        let key = rows::row_key(table, &handle);
        let slot = *slots.entry(key).or_insert_with_key(|key| {
            keys.push(key.clone());
            keys.len() - 1
        });
        wanted.push(Some(slot));
    }
    let decoder =
        rows::RowDecoder::new(table, source.columns.as_deref()).keeping_key(source.with_key);
    let found = match span.and_then(|span| span.dense_range(keys.len())) {
        // Dense handles: the rows between the lowest and the highest, in one range read, are
        // merged with the keys wanted (a merge join's read of its inner side), cheaper than
        // finding each key on its own.
        Some((low, high)) => {
            let start = rows::row_key(table, &[Datum::Int(low)]);
            let end = rows::row_key(table, &[Datum::Int(high)]);
            let limit = usize::try_from(high - low).unwrap_or(usize::MAX);
            let mut found = vec![None; keys.len()];
            for (key, value) in txn.scan(&start, &end, limit, false)? {
                if let Some(&slot) = slots.get(&key) {
                    found[slot] = Some(decoder.decode_entry(&key, &value)?);
                }
            }
            found
        }
        None => txn
            .batch_get(&keys)?
            .into_iter()
            .zip(&keys)
            .map(|(value, key)| value.map(|v| decoder.decode_entry(key, &v)).transpose())
            .collect::<Result<Vec<_>>>()?,
    };
    Ok(wanted
        .into_iter()
        .map(|slot| slot.and_then(|i| found[i].clone()).into_iter().collect())
        .collect())
}

/// The lowest and highest of the integer handles a batched point lookup wants.
#[derive(Clone, Copy, Debug, Default)]
struct IntSpan {
    bounds: Option<(i64, i64)>,
}

/// Point lookups of fewer keys than this are always read key by key.
const MERGE_MIN_KEYS: usize = 64;
/// Handles spread over at most this many times their number are read as one range.
const MERGE_MAX_SPREAD: u64 = 2;

impl IntSpan {
    fn with(self, handle: i64) -> IntSpan {
        let bounds = match self.bounds {
            Some((low, high)) => (low.min(handle), high.max(handle)),
            None => (handle, handle),
        };
        IntSpan {
            bounds: Some(bounds),
        }
    }

    /// The range `[low, high)` to read instead of `keys` distinct handles one by one, when
    /// they are many and close together.
    fn dense_range(self, keys: usize) -> Option<(i64, i64)> {
        let (low, high) = self.bounds?;
        let width = high.abs_diff(low).checked_add(1)?;
        let keys = u64::try_from(keys).ok()?;
        (keys >= MERGE_MIN_KEYS as u64 && width <= keys.saturating_mul(MERGE_MAX_SPREAD))
            .then_some((low, high.checked_add(1)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_many_close_handles_are_read_as_a_range() {
        let span = |handles: &[i64]| handles.iter().fold(IntSpan::default(), |s, &h| s.with(h));
        let dense: Vec<i64> = (100..200).rev().collect();
        assert_eq!(span(&dense).dense_range(100), Some((100, 200)));
        // Half of a range twice their number wide still is; wider is not.
        let every_other: Vec<i64> = (0..100).map(|i| i * 2).collect();
        assert_eq!(span(&every_other).dense_range(100), Some((0, 199)));
        let every_third: Vec<i64> = (0..100).map(|i| i * 3).collect();
        assert_eq!(span(&every_third).dense_range(100), None);
        // Too few keys, none, and the ends of the integers.
        assert_eq!(span(&dense[..10]).dense_range(10), None);
        assert_eq!(IntSpan::default().dense_range(0), None);
        let top: Vec<i64> = (0..100).map(|i| i64::MAX - i).collect();
        assert_eq!(span(&top).dense_range(100), None);
        let bottom: Vec<i64> = (0..100).map(|i| i64::MIN + i).collect();
        assert_eq!(
            span(&bottom).dense_range(100),
            Some((i64::MIN, i64::MIN + 100))
        );
    }
}
