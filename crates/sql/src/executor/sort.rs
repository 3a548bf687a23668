//! ORDER BY: every row, sorted by the ORDER BY values that follow its projected columns.
//!
//! Under a LIMIT the sort is a TopN: it keeps only the rows the limit can return (OFFSET +
//! LIMIT of them), sorting and cutting what it holds whenever it has twice that many, so
//! `ORDER BY … LIMIT 10` over any number of rows holds a few hundred.
//!
//! The rows are sorted in memory while the statement's memory allows. When keeping one more
//! would pass `tidb_mem_quota_query` (8175), the rows held so far are sorted and written to
//! an anonymous temporary file as a run (as TiDB spills a sort under its quota, and MySQL's
//! filesort merges runs on disk), their memory is given back, and the sort goes on; at the
//! end the runs and the rows still held are merged (the files: [`super::spill`]).

use std::cmp::Ordering;

use strata_codec::Datum;

use crate::error::Result;
use crate::exec::compare_sort_keys;
use crate::expr::{EvalEnv, Expr};
use crate::memory::row_bytes;
use crate::planner::query::SelectPlan;

use super::describe;
use super::limit::Count;
use super::spill::{SpillReader, SpillWriter};
use super::{Batch, Exec, Held, Node, Operator};

/// A TopN holding fewer rows than this does not cut them yet.
const TOP_N_CUT_MIN_ROWS: usize = 512;

/// Below this many bytes held, a sort past its quota fails (8175) rather than write a run:
/// the memory is held elsewhere in the statement, and runs this small would only multiply.
const SPILL_MIN_BYTES: usize = 1 << 20;

/// Rows a merge hands its parent at once.
const MERGE_BATCH_ROWS: usize = 1024;

pub struct Sort<'p> {
    input: Box<dyn Operator + 'p>,
    plan: &'p SelectPlan,
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
    /// Sorted in memory, to be handed over at once.
    Sorted(Batch),
    /// Runs on disk (and the last one in memory) being merged.
    Merging(Merge),
    Done,
}

impl<'p> Sort<'p> {
    pub fn new(
        input: Box<dyn Operator + 'p>,
        plan: &'p SelectPlan,
        order_by: &'p [(Expr, bool)],
        width: usize,
        limit: Option<Count<'p>>,
    ) -> Sort<'p> {
        Sort {
            input,
            plan,
            order_by,
            width,
            limit,
            state: State::Start,
            held: Held::default(),
        }
    }

    /// Reads every input row: sorted in memory, or in runs when the quota is reached; under a
    /// LIMIT, only the first rows are kept.
    fn sort(&mut self, exec: &mut Exec) -> Result<State> {
        let keep = match &self.limit {
            Some(count) => count.rows_needed(exec)?,
            None => None,
        };
        let cut_at = keep.map(|n| n.max(TOP_N_CUT_MIN_ROWS).saturating_mul(2));
        let mut rows: Batch = Vec::new();
        let mut held = 0;
        let mut runs = Vec::new();
        while let Some(batch) = self.input.next(exec)? {
            for row in batch {
                let bytes = row_bytes(&row);
                let kept = exec.ctx.consume_memory(bytes);
                rows.push(row);
                held += bytes;
                self.held.memory = self.held.memory.max(held as u64);
                if let Err(e) = kept {
                    if e.code() != 8175 || held < SPILL_MIN_BYTES {
                        return Err(e);
                    }
                    self.sort_rows(&mut rows);
                    let (run, bytes) = write_run(&rows)?;
                    rows.clear();
                    self.held.disk += bytes;
                    runs.push(run);
                    exec.ctx.session.release_memory(held);
                    held = 0;
                } else if cut_at == Some(rows.len()) {
                    held -= self.cut(exec, &mut rows, keep.unwrap_or(0));
                }
            }
        }
        self.sort_rows(&mut rows);
        if let Some(keep) = keep {
            self.cut(exec, &mut rows, keep);
        }
        if runs.is_empty() {
            for row in &mut rows {
                row.truncate(self.width);
            }
            return Ok(State::Sorted(rows));
        }
        Ok(State::Merging(Merge::new(runs, rows)))
    }

    /// Sorts `rows` and keeps the first `keep`; returns the bytes given back.
    fn cut(&self, exec: &Exec, rows: &mut Batch, keep: usize) -> usize {
        if rows.len() <= keep {
            return 0;
        }
        self.sort_rows(rows);
        let freed = rows[keep..].iter().map(|row| row_bytes(row)).sum();
        rows.truncate(keep);
        exec.ctx.session.release_memory(freed);
        freed
    }

    fn sort_rows(&self, rows: &mut Batch) {
        let (width, order_by) = (self.width, self.order_by);
        rows.sort_by(|a, b| compare_sort_keys(&a[width..], &b[width..], order_by));
    }
}

impl Operator for Sort<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        if let State::Start = self.state {
            self.state = self.sort(exec)?;
        }
        match std::mem::replace(&mut self.state, State::Done) {
            State::Sorted(rows) => Ok((!rows.is_empty()).then_some(rows)),
            State::Merging(mut merge) => {
                let batch = merge.next_batch(self.order_by, self.width)?;
                if batch.is_some() {
                    self.state = State::Merging(merge);
                }
                Ok(batch)
            }
            State::Start | State::Done => Ok(None),
        }
    }

    fn explain(&self) -> Node {
        let names = describe::Names::of_block(self.plan);
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
enum Source {
    File(SpillReader),
    Memory(std::vec::IntoIter<Vec<Datum>>),
}

impl Source {
    fn next_row(&mut self) -> Result<Option<Vec<Datum>>> {
        match self {
            Source::Memory(rows) => Ok(rows.next()),
            Source::File(reader) => reader.next_row(),
        }
    }
}

/// A k-way merge of sorted runs: the smallest head first, the earlier run first among
/// equals, so the merged order is the stable order an in-memory sort gives.
struct Merge {
    sources: Vec<Source>,
    /// The next row of each run that has one, with its run, largest first: the next row out
    /// is the last. Binary search places a new head; there are few (one per run).
    heads: Vec<(Vec<Datum>, usize)>,
    started: bool,
}

impl Merge {
    fn new(runs: Vec<SpillReader>, last: Batch) -> Merge {
        let mut sources: Vec<Source> = runs.into_iter().map(Source::File).collect();
        sources.push(Source::Memory(last.into_iter()));
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
