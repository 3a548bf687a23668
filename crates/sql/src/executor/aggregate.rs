//! GROUP BY and aggregate functions: every input row is added to its group; the groups leave
//! as their first row followed by their aggregate values.
//!
//! The groups are held in memory while the statement's memory allows. When a new group would
//! pass `tidb_mem_quota_query` (8175) and the groups hold at least 1 MiB, the aggregation
//! spills: rows of the groups it holds are still added to them, and every row of a group it
//! does not hold is written to one of [`spill::PARTITIONS`] temporary files by a hash of its group
//! key ([`super::spill`]). The groups held leave first and give their memory back; then each
//! file is read and aggregated alone, so every group is made whole in one place. A partition
//! whose own groups pass the quota still fails with 8175. WITH ROLLUP (whose totals span the
//! partitions) and a grouping whose output order the plan relies on (an ORDER BY that the
//! access path's order satisfies, so no sort follows) do not spill.

use std::collections::VecDeque;

use strata_codec::Datum;

use crate::error::Result;
use crate::executor::grouping::{Aggregator, Grouping};
use crate::expr::{AggCall, Expr};
use crate::planner::physical::Plan;

use super::describe;
use super::spill::{self, partition, SpillReader, SpillWriter, SPILL_MIN_BYTES};
use super::{Batch, Exec, Held, Node, Operator};
use crate::memory::row_bytes;

pub struct HashAgg<'p> {
    input: Box<dyn Operator + 'p>,
    /// Its node of the plan, whose rows EXPLAIN names the columns by.
    node: &'p Plan,
    group_by: &'p [Expr],
    aggs: &'p [AggCall],
    rollup: bool,
    /// Columns of the input rows.
    width: usize,
    /// Whether the groups may leave in another order than they were first met.
    may_spill: bool,
    state: State,
    /// Groups made and not handed on yet.
    pending: std::vec::IntoIter<Vec<Datum>>,
    held: Held,
}

/// Groups handed to the parent at once, so that a large grouping streams on.
const OUTPUT_BATCH_ROWS: usize = 1024;

enum State {
    Start,
    /// The groups held went out; these partitions are left to aggregate.
    Partitions(VecDeque<SpillReader>),
    Done,
}

impl<'p> HashAgg<'p> {
    /// The operator of a [`Plan::HashAgg`] node.
    pub fn new(input: Box<dyn Operator + 'p>, node: &'p Plan) -> HashAgg<'p> {
        let Plan::HashAgg {
            group_by,
            aggs,
            rollup,
            width,
            may_spill,
            ..
        } = node
        else {
            unreachable!("HashAgg of another node")
        };
        HashAgg {
            input,
            node,
            group_by,
            aggs,
            rollup: *rollup,
            width: *width,
            may_spill: *may_spill,
            state: State::Start,
            pending: Vec::new().into_iter(),
            held: Held::default(),
        }
    }

    /// Reads every input row into groups (spilling what does not fit); returns the groups
    /// held and the partitions written, if any.
    fn aggregate(&mut self, exec: &mut Exec) -> Result<(Batch, VecDeque<SpillReader>)> {
        let (group_by, may_spill) = (self.group_by, self.may_spill);
        let mut grouping = Grouping::new(self.aggs, group_by.len(), self.rollup, exec.ctx);
        let mut partitions: Vec<SpillWriter> = Vec::new();
        while let Some(batch) = self.input.next(exec)? {
            for row in &batch {
                let Grouping::Plain(aggregator) = &mut grouping else {
                    grouping.add(group_by, row, exec.ctx)?;
                    continue;
                };
                let key = Aggregator::key_of(group_by, row, exec.ctx)?;
                if !partitions.is_empty() && !aggregator.has_group(&key) {
                    partitions[partition(&key)].write(row)?;
                    continue;
                }
                let charged = aggregator.charged();
                match aggregator.add_keyed(key.clone(), row, exec.ctx) {
                    Err(e)
                        if may_spill
                            && e.code() == 8175
                            && partitions.is_empty()
                            && charged >= SPILL_MIN_BYTES =>
                    {
                        // The failed group's charge is given back; its row goes to disk.
                        exec.ctx
                            .session
                            .release_memory((aggregator.charged() - charged) as usize);
                        partitions = spill::partitions()?;
                        partitions[partition(&key)].write(row)?;
                    }
                    other => other?,
                }
            }
        }
        let charged = match &grouping {
            Grouping::Plain(aggregator) => aggregator.charged(),
            Grouping::Rollup(_) => 0,
        };
        let rows = self.finish(grouping, exec)?;
        self.held.memory = self.held.memory.max(charged);
        if !partitions.is_empty() {
            exec.ctx.session.release_memory(charged as usize);
        }
        let mut readers = VecDeque::with_capacity(partitions.len());
        for writer in partitions {
            self.held.disk += writer.bytes();
            readers.push_back(writer.finish()?);
        }
        Ok((rows, readers))
    }

    /// Each group's row followed by its aggregate values.
    fn finish(&self, grouping: Grouping, exec: &Exec) -> Result<Batch> {
        let groups = grouping.finish(self.width, self.group_by, exec.ctx)?;
        Ok(groups
            .into_iter()
            .map(|(mut row, aggs)| {
                row.extend(aggs);
                row
            })
            .collect())
    }

    /// The groups of one spilled partition, made whole; their memory is given back once they
    /// leave.
    fn aggregate_partition(&mut self, mut reader: SpillReader, exec: &Exec) -> Result<Batch> {
        let mut grouping = Grouping::new(self.aggs, self.group_by.len(), false, exec.ctx);
        while let Some(row) = reader.next_row()? {
            strata_fiber::yield_if_long();
            grouping.add(self.group_by, &row, exec.ctx)?;
        }
        let charged = match &grouping {
            Grouping::Plain(aggregator) => aggregator.charged(),
            Grouping::Rollup(_) => 0,
        };
        self.held.memory = self.held.memory.max(charged);
        let rows = self.finish(grouping, exec)?;
        exec.ctx.session.release_memory(charged as usize);
        Ok(rows)
    }
}

impl Operator for HashAgg<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        loop {
            let batch: Batch = self.pending.by_ref().take(OUTPUT_BATCH_ROWS).collect();
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
            match std::mem::replace(&mut self.state, State::Done) {
                State::Start => {
                    let (rows, partitions) = self.aggregate(exec)?;
                    if !partitions.is_empty() {
                        self.state = State::Partitions(partitions);
                    }
                    if self.held.memory == 0 {
                        self.held.memory = rows.iter().map(|row| row_bytes(row) as u64).sum();
                    }
                    self.pending = rows.into_iter();
                }
                State::Partitions(mut partitions) => {
                    let Some(reader) = partitions.pop_front() else {
                        return Ok(None);
                    };
                    self.pending = self.aggregate_partition(reader, exec)?.into_iter();
                    self.state = State::Partitions(partitions);
                }
                State::Done => return Ok(None),
            }
        }
    }

    fn held(&self) -> Option<Held> {
        Some(self.held)
    }

    fn explain(&self) -> Node {
        let names = describe::Names::of_block(self.node);
        let mut info = Vec::new();
        if !self.group_by.is_empty() {
            info.push(format!(
                "group by:{}",
                describe::exprs(self.group_by, &names)
            ));
        }
        if self.rollup {
            info.push("with rollup".to_string());
        }
        let funcs = names.aggs.join(", ");
        info.push(format!("funcs:{funcs}"));
        let input = self.input.explain();
        // One row without GROUP BY; with it, at most a group per row.
        let est_rows = if self.group_by.is_empty() {
            1.0
        } else {
            input.est_rows
        };
        Node::root("HashAgg", info.join(", "), vec![input]).estimated(est_rows)
    }
}
