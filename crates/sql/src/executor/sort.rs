//! ORDER BY: every row, sorted by the ORDER BY values that follow its projected columns.
//!
//! Under a LIMIT the sort is a TopN: it keeps only the rows the limit can return (OFFSET +
//! LIMIT of them), sorting and cutting what it holds whenever it has twice that many, so
//! `ORDER BY … LIMIT 10` over any number of rows holds a few hundred.
//!
//! The rows are sorted in memory while the statement's memory allows. When keeping one more
//! would pass `tidb_mem_quota_query` (8175), or the statement holds 80 % of it, the rows held
//! so far are sorted and written to an anonymous temporary file as a run (as TiDB spills a
//! sort under its quota, and MySQL's filesort merges runs on disk), their memory is given
//! back, and the sort goes on; at the end the runs and the rows still held are merged (the
//! files: [`super::spill`]). The same [`Sorter`] sorts the rows of windows that spill.

use std::cmp::Ordering;

use strata_codec::Datum;

use crate::error::Result;
use crate::exec::{compare_sort_keys, Ctx};
use crate::expr::{EvalEnv, Expr};
use crate::memory::row_bytes;
use crate::planner::physical::Plan;

use super::describe;
use super::limit::Count;
use super::spill::{SpillReader, SpillWriter, SPILL_MIN_BYTES};
use super::{Batch, Exec, Held, Node, Operator};

/// A TopN holding fewer rows than this does not cut them yet.
const TOP_N_CUT_MIN_ROWS: usize = 512;

/// Rows a merge hands its parent at once.
const MERGE_BATCH_ROWS: usize = 1024;

pub struct Sort<'p> {
    input: Box<dyn Operator + 'p>,
    /// Its node of the plan, whose rows below the select list EXPLAIN names the keys'
    /// columns by.
    node: &'p Plan,
    order_by: &'p [(Expr, bool)],
    /// The projected columns; the ORDER BY values follow them and are cut off.
    width: usize,
    /// The LIMIT right above, which makes this a TopN.
    limit: Option<Count<'p>>,
    state: State,
    held: Held,
}

enum State {
    /// Nothing read yet.
    Start,
    Sorted(Sorted),
    Done,
}

impl<'p> Sort<'p> {
    pub fn new(
        input: Box<dyn Operator + 'p>,
        node: &'p Plan,
        order_by: &'p [(Expr, bool)],
        width: usize,
        limit: Option<Count<'p>>,
    ) -> Sort<'p> {
        Sort {
            input,
            node,
            order_by,
            width,
            limit,
            state: State::Start,
            held: Held::default(),
        }
    }

    /// Reads every input row: sorted in memory, or in runs when the quota is reached; under a
    /// LIMIT, only the first rows are kept.
    fn sort(&mut self, exec: &mut Exec) -> Result<Sorted> {
        let keep = match &self.limit {
            Some(count) => count.rows_needed(exec)?,
            None => None,
        };
        let cut_at = keep.map(|n| n.max(TOP_N_CUT_MIN_ROWS).saturating_mul(2));
        let mut sorter = Sorter::new(self.width);
        let result: Result<()> = (|| {
            while let Some(batch) = self.input.next(exec)? {
                for row in batch {
                    sorter.push(row, self.order_by, exec.ctx)?;
                    if cut_at == Some(sorter.rows.len()) {
                        sorter.cut(keep.unwrap_or(0), self.order_by, exec.ctx);
                    }
                }
            }
            if let Some(keep) = keep {
                sorter.cut(keep, self.order_by, exec.ctx);
            }
            Ok(())
        })();
        self.held = sorter.held;
        result?;
        let sorted = sorter.finish(self.order_by)?;
        self.held = sorted.held;
        Ok(sorted)
    }
}

impl Operator for Sort<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        if let State::Start = self.state {
            self.state = State::Sorted(self.sort(exec)?);
        }
        let State::Sorted(sorted) = &mut self.state else {
            return Ok(None);
        };
        let batch = sorted.next_batch(self.order_by, exec.ctx)?;
        if batch.is_none() {
            self.state = State::Done;
        }
        Ok(batch)
    }

    fn explain(&self) -> Node {
        let names = describe::Names::of_block(self.node);
        let info = self
            .order_by
            .iter()
            .map(|(e, desc)| {
                let key = describe::exprs([e], &names);
                if *desc {
                    format!("{key}:desc")
                } else {
                    key
                }
            })
            .collect::<Vec<_>>()
            .join(", ");
        match &self.limit {
            Some(count) => {
                let input = self.input.explain();
                let est_rows = count.estimate(input.est_rows);
                Node::root("TopN", format!("{info}, {}", count.info()), vec![input])
                    .estimated(est_rows)
            }
            None => Node::root("Sort", info, vec![self.input.explain()]),
        }
    }

    fn held(&self) -> Option<Held> {
        Some(self.held)
    }
}

/// Rows sorted by the key values that follow their first `width` columns (the keys are cut
/// off as they leave): in memory while the statement's memory allows, in runs on disk past
/// its quota. Used by ORDER BY and by windows that spill.
pub struct Sorter {
    width: usize,
    rows: Batch,
    /// The bytes of `rows`, charged to the statement.
    bytes: usize,
    runs: Vec<SpillReader>,
    /// The most it held, and the bytes of its runs.
    pub held: Held,
}

impl Sorter {
    pub fn new(width: usize) -> Sorter {
        Sorter {
            width,
            rows: Vec::new(),
            bytes: 0,
            runs: Vec::new(),
            held: Held::default(),
        }
    }

    /// Takes `row`, its key values after its first `width` columns. When keeping it would
    /// pass the quota, or the statement holds most of its quota, the rows held are sorted and
    /// written as a run, and given back.
    pub fn push(&mut self, row: Vec<Datum>, order_by: &[(Expr, bool)], ctx: &Ctx) -> Result<()> {
        let bytes = row_bytes(&row);
        let kept = ctx.consume_memory(bytes);
        self.rows.push(row);
        self.bytes += bytes;
        self.held.memory = self.held.memory.max(self.bytes as u64);
        let enough = self.bytes as u64 >= SPILL_MIN_BYTES;
        match kept {
            Err(e) if e.code() != 8175 || !enough => Err(e),
            Err(_) => self.spill(order_by, ctx),
            // Most of the quota is spent (by this or by others): what it holds goes to disk
            // before others fail for want of a little.
            Ok(()) if enough && ctx.session.memory_pressed() => self.spill(order_by, ctx),
            Ok(()) => Ok(()),
        }
    }

    /// The bytes of the rows it holds.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Writes the rows it holds as a run, sorted, and gives their memory back.
    pub fn spill(&mut self, order_by: &[(Expr, bool)], ctx: &Ctx) -> Result<()> {
        self.sort_rows(order_by);
        let (run, bytes) = write_run(&self.rows)?;
        self.rows = Vec::new();
        self.held.disk += bytes;
        self.runs.push(run);
        ctx.session.release_memory(std::mem::take(&mut self.bytes));
        Ok(())
    }

    /// Sorts the rows held and keeps the first `keep` (a TopN), giving back the others.
    fn cut(&mut self, keep: usize, order_by: &[(Expr, bool)], ctx: &Ctx) {
        if self.rows.len() <= keep {
            return;
        }
        self.sort_rows(order_by);
        let freed = self.rows[keep..].iter().map(|row| row_bytes(row)).sum();
        self.rows.truncate(keep);
        self.bytes -= freed;
        ctx.session.release_memory(freed);
    }

    fn sort_rows(&mut self, order_by: &[(Expr, bool)]) {
        let width = self.width;
        self.rows
            .sort_by(|a, b| compare_sort_keys(&a[width..], &b[width..], order_by));
    }

    /// Every row taken, in order: stable, so rows with equal keys leave in the order they
    /// came.
    pub fn finish(mut self, order_by: &[(Expr, bool)]) -> Result<Sorted> {
        self.sort_rows(order_by);
        let source = if self.runs.is_empty() {
            for row in &mut self.rows {
                row.truncate(self.width);
            }
            Source::Memory(self.rows.into_iter())
        } else {
            Source::Merging(Merge::new(self.runs, self.rows))
        };
        Ok(Sorted {
            source,
            width: self.width,
            charged: self.bytes,
            held: self.held,
        })
    }
}

impl Sorter {
    /// Every row taken, in order, read back from disk: what it still holds is written as one
    /// more run and given back, so reading holds only a row per run.
    pub fn finish_on_disk(mut self, order_by: &[(Expr, bool)], ctx: &Ctx) -> Result<Sorted> {
        if !self.rows.is_empty() {
            self.spill(order_by, ctx)?;
        }
        self.finish(order_by)
    }
}

/// The sorted rows of a [`Sorter`], handed on a batch at a time.
pub struct Sorted {
    source: Source,
    width: usize,
    /// The bytes of the rows still held, given back once all have left.
    charged: usize,
    pub held: Held,
}

enum Source {
    /// Sorted in memory, handed over at once.
    Memory(std::vec::IntoIter<Vec<Datum>>),
    /// Runs on disk (and the last one in memory) being merged.
    Merging(Merge),
}

impl Sorted {
    pub fn next_batch(&mut self, order_by: &[(Expr, bool)], ctx: &Ctx) -> Result<Option<Batch>> {
        let batch = match &mut self.source {
            Source::Memory(rows) => {
                let rows: Batch = rows.collect();
                (!rows.is_empty()).then_some(rows)
            }
            Source::Merging(merge) => merge.next_batch(order_by, self.width)?,
        };
        if batch.is_none() {
            ctx.session
                .release_memory(std::mem::take(&mut self.charged));
        }
        Ok(batch)
    }
}

/// Writes sorted `rows` as a run.
fn write_run(rows: &Batch) -> Result<(SpillReader, u64)> {
    let mut writer = SpillWriter::new()?;
    for row in rows {
        strata_fiber::yield_if_long();
        writer.write(row)?;
    }
    let bytes = writer.bytes();
    Ok((writer.finish()?, bytes))
}

/// Where the next row of each run comes from.
enum Run {
    File(SpillReader),
    Memory(std::vec::IntoIter<Vec<Datum>>),
}

impl Run {
    fn next_row(&mut self) -> Result<Option<Vec<Datum>>> {
        match self {
            Run::Memory(rows) => Ok(rows.next()),
            Run::File(reader) => reader.next_row(),
        }
    }
}

/// A k-way merge of sorted runs: the smallest head first, the earlier run first among
/// equals, so the merged order is the stable order an in-memory sort gives.
struct Merge {
    sources: Vec<Run>,
    /// The next row of each run that has one, with its run, largest first: the next row out
    /// is the last. Binary search places a new head; there are few (one per run).
    heads: Vec<(Vec<Datum>, usize)>,
    started: bool,
}

impl Merge {
    fn new(runs: Vec<SpillReader>, last: Batch) -> Merge {
        let mut sources: Vec<Run> = runs.into_iter().map(Run::File).collect();
        sources.push(Run::Memory(last.into_iter()));
        Merge {
            heads: Vec::with_capacity(sources.len()),
            sources,
            started: false,
        }
    }

    fn next_batch(&mut self, order_by: &[(Expr, bool)], width: usize) -> Result<Option<Batch>> {
        if !std::mem::replace(&mut self.started, true) {
            for run in 0..self.sources.len() {
                if let Some(row) = self.sources[run].next_row()? {
                    self.push(row, run, order_by, width);
                }
            }
        }
        let mut batch = Vec::with_capacity(MERGE_BATCH_ROWS);
        while batch.len() < MERGE_BATCH_ROWS {
            let Some((mut row, run)) = self.heads.pop() else {
                break;
            };
            if let Some(next) = self.sources[run].next_row()? {
                self.push(next, run, order_by, width);
            }
            row.truncate(width);
            batch.push(row);
        }
        Ok((!batch.is_empty()).then_some(batch))
    }

    /// Places run `run`'s next row among the heads.
    fn push(&mut self, row: Vec<Datum>, run: usize, order_by: &[(Expr, bool)], width: usize) {
        let at = self.heads.partition_point(|(other, other_run)| {
            compare_sort_keys(&other[width..], &row[width..], order_by).then(other_run.cmp(&run))
                == Ordering::Greater
        });
        self.heads.insert(at, (row, run));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs written to disk and the last one in memory merge into the order one stable sort
    /// of all the rows gives, every value read back exactly.
    #[test]
    fn runs_merge_in_stable_order_with_their_values_intact() {
        let order_by = [(Expr::Column(0), true)];
        let width = 2;
        // Projected: the row's number and a value of another type; then the key, descending,
        // with many equal keys across runs.
        let row = |n: i64| {
            vec![
                Datum::Int(n),
                match n % 4 {
                    0 => Datum::Null,
                    1 => Datum::Decimal(rust_decimal::Decimal::new(150 + n, 2)),
                    2 => Datum::Bytes(vec![0xFF, n as u8]),
                    _ => Datum::Float(-0.0),
                },
                Datum::Int(n % 7),
            ]
        };
        let all: Vec<Vec<Datum>> = (0..1_000).map(row).collect();
        let sort = |rows: &mut Batch| {
            rows.sort_by(|a, b| compare_sort_keys(&a[width..], &b[width..], &order_by));
        };
        let mut runs = Vec::new();
        let mut last = Vec::new();
        for chunk in all.chunks(300) {
            let mut chunk = chunk.to_vec();
            sort(&mut chunk);
            if chunk.len() == 300 {
                runs.push(write_run(&chunk).unwrap().0);
            } else {
                last = chunk;
            }
        }
        assert_eq!(runs.len(), 3);
        let mut merge = Merge::new(runs, last);
        let mut merged = Vec::new();
        while let Some(batch) = merge.next_batch(&order_by, width).unwrap() {
            merged.extend(batch);
        }
        let mut expected = all;
        sort(&mut expected);
        for row in &mut expected {
            row.truncate(width);
        }
        assert_eq!(merged.len(), expected.len());
        for (got, want) in merged.iter().zip(&expected) {
            assert_eq!(format!("{got:?}"), format!("{want:?}"));
        }
    }
}
