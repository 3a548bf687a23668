//! Window functions: every row is held, each call's value is computed over its partition, and
//! the values follow the row's columns (and aggregate values). Rows that would pass the
//! statement's memory quota go to disk instead and come back a partition at a time
//! ([`Spilled`]).
//!
//! A call sorts the block's rows by its partition and order keys, and walks each partition:
//! ranking functions and LAG / LEAD read positions and peers (rows equal in the order keys);
//! FIRST_VALUE, LAST_VALUE, NTH_VALUE and aggregates read the frame of each row. A frame that
//! starts at the partition's first row grows as the row moves on, so its aggregate is kept
//! running; one that ends at the last row is run backwards the same way; any other frame is
//! aggregated afresh for each row.

use std::cmp::Ordering;
use std::collections::VecDeque;
use std::ops::Range;

use strata_codec::Datum;

use crate::error::{self, Result};
use crate::exec::{compare_sort_keys, AggEnv, Ctx};
use crate::executor::grouping::FrameAggregate;
use crate::expr::{self, AggCall, BinaryOp, EvalEnv, Expr, Func, IntervalUnit};
use crate::memory::row_bytes;
use crate::planner::window::{
    frame_illegal, Frame, FrameBound, FrameUnits, WindowCall, WindowFunc,
};
use crate::types::{self, sort_compare};

use super::sort::{Sorted, Sorter};
use super::spill::SPILL_MIN_BYTES;
use super::{split_aggs, Batch, Exec, Held, Node, Operator};

pub struct Window<'p> {
    input: Box<dyn Operator + 'p>,
    calls: &'p [WindowCall],
    /// Aggregate values at the end of each row.
    aggs: usize,
    /// The block has no ORDER BY: rows leave in the order of the last window.
    keep_window_order: bool,
    state: State<'p>,
    held: Held,
}

enum State<'p> {
    Start,
    /// Past the quota: sorted on disk and computed a partition at a time.
    Spilled(Box<Spilled<'p>>),
    Done,
}

impl<'p> Window<'p> {
    pub fn new(
        input: Box<dyn Operator + 'p>,
        calls: &'p [WindowCall],
        aggs: usize,
        keep_window_order: bool,
    ) -> Window<'p> {
        Window {
            input,
            calls,
            aggs,
            keep_window_order,
            state: State::Start,
            held: Held::default(),
        }
    }

    /// Reads every input row and computes every call over them in memory; or, when holding
    /// them would pass the statement's quota, hands them to a sort for the first window and
    /// goes on with [`Spilled`].
    fn start(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        let mut rows: Batch = Vec::new();
        let mut bytes = 0u64;
        let mut spilled: Option<Spilled> = None;
        while let Some(batch) = self.input.next(exec)? {
            for row in batch {
                if let Some(spilled) = spilled.as_mut() {
                    spilled.take(row, 0, exec.ctx)?;
                    continue;
                }
                let size = row_bytes(&row);
                match exec.ctx.consume_memory(size) {
                    Ok(()) => {
                        bytes += size as u64;
                        self.held.memory = bytes;
                        rows.push(row);
                    }
                    Err(e) if e.code() == 8175 && bytes >= SPILL_MIN_BYTES => {
                        exec.ctx.session.release_memory(size + bytes as usize);
                        let spilled = spilled.insert(Spilled::new(self.calls, self.aggs));
                        for row in std::mem::take(&mut rows).into_iter().chain([row]) {
                            spilled.take(row, 0, exec.ctx)?;
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        if let Some(mut spilled) = spilled {
            spilled.sorted(exec.ctx)?;
            self.state = State::Spilled(Box::new(spilled));
            return self.next(exec);
        }
        self.state = State::Done;
        let stage: Vec<_> = rows.iter().map(|r| split_aggs(r, self.aggs)).collect();
        let (values, order) = compute(self.calls, &stage, exec.ctx)?;
        drop(stage);
        let mut rows: Vec<_> = rows.into_iter().zip(values).map(Some).collect();
        let mut out = Vec::with_capacity(rows.len());
        for (position, in_order) in order.iter().enumerate() {
            let k = if self.keep_window_order {
                *in_order
            } else {
                position
            };
            let (mut row, values) = rows[k].take().expect("each row leaves once");
            row.extend(values);
            out.push(row);
        }
        Ok((!out.is_empty()).then_some(out))
    }
}

impl Operator for Window<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        match &mut self.state {
            State::Start => self.start(exec),
            State::Spilled(spilled) => {
                let batch = spilled.next_batch(exec.ctx);
                self.held.memory = self.held.memory.max(spilled.held.memory);
                self.held.disk = spilled.held.disk;
                let batch = batch?;
                if batch.is_none() {
                    self.state = State::Done;
                }
                Ok(batch)
            }
            State::Done => Ok(None),
        }
    }

    fn held(&self) -> Option<Held> {
        Some(self.held)
    }

    fn explain(&self) -> Node {
        let info = format!("{} calls", self.calls.len());
        Node::root("Window", info, vec![self.input.explain()])
    }
}

/// Windows past the statement's quota. The calls that share a window (partition and order)
/// are computed together, one such run of calls after another: the rows, with the values
/// computed so far after them, are sorted by the run's partition and order keys on disk (as a
/// spilled ORDER BY), then read back one partition at a time, which alone is held; the rows
/// leave in the order of the last window. A window without PARTITION BY is one partition and
/// must fit the quota (8175).
struct Spilled<'p> {
    calls: &'p [WindowCall],
    aggs: usize,
    /// The runs of calls sharing a window not computed yet; the first is being computed.
    runs: VecDeque<Range<usize>>,
    /// The run being computed: its sort key and its rows in that order.
    reading: Option<(Vec<(Expr, bool)>, Sorted)>,
    /// Rows read and not yet handed on in a partition.
    buffer: std::vec::IntoIter<Vec<Datum>>,
    lookahead: Option<Vec<Datum>>,
    /// The run whose rows are being taken (the first before its rows are read, then the
    /// next): its sort key and its rows.
    taking: (Vec<(Expr, bool)>, Option<Sorter>),
    held: Held,
}

impl<'p> Spilled<'p> {
    fn new(calls: &'p [WindowCall], aggs: usize) -> Spilled<'p> {
        let mut runs = VecDeque::new();
        let mut start = 0;
        for c in 1..=calls.len() {
            if c == calls.len() || !same_window(&calls[c - 1], &calls[c]) {
                runs.push_back(start..c);
                start = c;
            }
        }
        let taking = (sort_key(&calls[0]), None);
        Spilled {
            calls,
            aggs,
            runs,
            reading: None,
            buffer: Vec::new().into_iter(),
            lookahead: None,
            taking,
            held: Held::default(),
        }
    }

    /// The row's part its expressions read, and its aggregate values, when it carries the
    /// values of the first `computed` calls after them.
    fn stage<'r>(&self, row: &'r [Datum], computed: usize) -> StageRow<'r> {
        split_aggs(&row[..row.len() - computed], self.aggs)
    }

    /// Takes a row (carrying `computed` values) for the run whose rows are being taken.
    fn take(&mut self, mut row: Vec<Datum>, computed: usize, ctx: &Ctx) -> Result<()> {
        let (own, aggs) = self.stage(&row, computed);
        let env = AggEnv::new(ctx, aggs);
        let keys: Vec<Datum> = self
            .taking
            .0
            .iter()
            .map(|(e, _)| e.eval(own, &env))
            .collect::<Result<_>>()?;
        let width = row.len();
        row.extend(keys);
        let (key, sorter) = &mut self.taking;
        sorter
            .get_or_insert_with(|| Sorter::new(width))
            .push(row, key, ctx)
    }

    /// Every row of the run being taken is in: its rows are read in its order from now on,
    /// and the next run's (if any) are taken.
    fn sorted(&mut self, ctx: &Ctx) -> Result<()> {
        let next = self
            .runs
            .get(1)
            .map_or(Vec::new(), |r| sort_key(&self.calls[r.start]));
        let (key, sorter) = std::mem::replace(&mut self.taking, (next, None));
        let sorted = match sorter {
            Some(sorter) => {
                let sorted = sorter.finish_on_disk(&key, ctx)?;
                self.held.memory = self.held.memory.max(sorted.held.memory);
                self.held.disk += sorted.held.disk;
                sorted
            }
            None => Sorter::new(0).finish(&key)?,
        };
        self.reading = Some((key, sorted));
        Ok(())
    }

    /// The next row of the run being computed.
    fn next_row(&mut self, ctx: &Ctx) -> Result<Option<Vec<Datum>>> {
        loop {
            if let Some(row) = self.lookahead.take().or_else(|| self.buffer.next()) {
                return Ok(Some(row));
            }
            let (key, sorted) = self.reading.as_mut().expect("a run is being read");
            match sorted.next_batch(key, ctx)? {
                Some(batch) => self.buffer = batch.into_iter(),
                None => return Ok(None),
            }
        }
    }

    /// The next partition of the run being computed, charged to the statement.
    fn next_partition(&mut self, ctx: &Ctx) -> Result<Option<(Batch, usize)>> {
        let Some(first) = self.next_row(ctx)? else {
            return Ok(None);
        };
        let computed = self.runs[0].start;
        let call = &self.calls[computed];
        let aggs = self.aggs;
        let partition_key = |row: &[Datum]| -> Result<Vec<Datum>> {
            let (own, aggs) = split_aggs(&row[..row.len() - computed], aggs);
            let env = AggEnv::new(ctx, aggs);
            call.partition_by
                .iter()
                .map(|e| e.eval(own, &env))
                .collect()
        };
        let key = partition_key(&first)?;
        let mut bytes = row_bytes(&first);
        self.charge(bytes, ctx)?;
        let mut rows = vec![first];
        while let Some(row) = self.next_row(ctx)? {
            if compare_keys(&partition_key(&row)?, &key) != Ordering::Equal {
                self.lookahead = Some(row);
                break;
            }
            let size = row_bytes(&row);
            self.charge(size, ctx)?;
            bytes += size;
            rows.push(row);
        }
        self.held.memory = self.held.memory.max(bytes as u64);
        Ok(Some((rows, bytes)))
    }

    /// Charges a partition's row. Past the quota, the rows the next run holds go to disk
    /// (however few): the partition alone must fit.
    fn charge(&mut self, bytes: usize, ctx: &Ctx) -> Result<()> {
        match ctx.consume_memory(bytes) {
            Err(e) if e.code() == 8175 => match self.taking.1.as_mut() {
                Some(sorter) if sorter.bytes() > 0 => sorter.spill(&self.taking.0, ctx),
                _ => Err(e),
            },
            other => other,
        }
    }

    /// The next rows of the last run, with every call's value after them.
    fn next_batch(&mut self, ctx: &Ctx) -> Result<Option<Batch>> {
        loop {
            ctx.session.check_interrupt()?;
            let Some((mut partition, bytes)) = self.next_partition(ctx)? else {
                // The run is done: the next one reads the rows it took.
                self.runs.pop_front();
                if self.runs.is_empty() {
                    return Ok(None);
                }
                self.sorted(ctx)?;
                continue;
            };
            let run = self.runs[0].clone();
            let values = {
                let stage: Vec<_> = partition.iter().map(|r| self.stage(r, run.start)).collect();
                // The partition is in its window's order already, and stays in it.
                compute(&self.calls[run.clone()], &stage, ctx)?.0
            };
            for (row, values) in partition.iter_mut().zip(values) {
                row.extend(values);
            }
            ctx.session.release_memory(bytes);
            if self.runs.len() == 1 {
                return Ok(Some(partition));
            }
            for row in partition {
                self.take(row, run.end, ctx)?;
            }
        }
    }
}

fn same_window(a: &WindowCall, b: &WindowCall) -> bool {
    a.partition_by == b.partition_by && a.order_by == b.order_by
}

/// What the rows are sorted by for a window: its partition keys, then its order keys.
fn sort_key(call: &WindowCall) -> Vec<(Expr, bool)> {
    call.partition_by
        .iter()
        .map(|e| (e.clone(), false))
        .chain(call.order_by.iter().cloned())
        .collect()
}

/// One row of a query block at the window stage: the row its expressions read, and its
/// aggregate values.
type StageRow<'r> = (&'r [Datum], &'r [Datum]);

/// Every call's value for each row (`values[row][call]`), and the order the rows leave in
/// when the query has no ORDER BY: the order of the last call.
fn compute(
    calls: &[WindowCall],
    rows: &[StageRow<'_>],
    ctx: &Ctx,
) -> Result<(Vec<Vec<Datum>>, Vec<usize>)> {
    let mut values = vec![vec![Datum::Null; calls.len()]; rows.len()];
    let mut order: Vec<usize> = (0..rows.len()).collect();
    let mut sorted_for: Option<&WindowCall> = None;
    let mut keys: Vec<Keys> = Vec::new();
    for (c, call) in calls.iter().enumerate() {
        let same_window = sorted_for.is_some_and(|previous| same_window(previous, call));
        if !same_window {
            keys = rows
                .iter()
                .map(|(row, aggs)| {
                    let env = AggEnv::new(ctx, aggs);
                    let eval = |e: &Expr| e.eval(row, &env);
                    Ok(Keys {
                        partition: call.partition_by.iter().map(eval).collect::<Result<_>>()?,
                        order: call
                            .order_by
                            .iter()
                            .map(|(e, _)| eval(e))
                            .collect::<Result<_>>()?,
                    })
                })
                .collect::<Result<_>>()?;
            // Stable: rows equal in every key keep the order the previous window left.
            order.sort_by(|&a, &b| {
                compare_keys(&keys[a].partition, &keys[b].partition)
                    .then_with(|| compare_sort_keys(&keys[a].order, &keys[b].order, &call.order_by))
            });
            sorted_for = Some(call);
        }
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len()
                && compare_keys(&keys[order[start]].partition, &keys[order[end]].partition)
                    == Ordering::Equal
            {
                end += 1;
            }
            let partition = Partition {
                rows: &order[start..end],
                keys: &keys,
                descending: call.order_by.first().is_some_and(|(_, d)| *d),
            };
            let answers = partition.evaluate(call, rows, ctx)?;
            for (&row, value) in order[start..end].iter().zip(answers) {
                values[row][c] = value;
            }
            start = end;
        }
    }
    Ok((values, order))
}

struct Keys {
    partition: Vec<Datum>,
    order: Vec<Datum>,
}

fn compare_keys(a: &[Datum], b: &[Datum]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = sort_compare(x, y);
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// One partition's rows, in the window's order.
struct Partition<'p> {
    rows: &'p [usize],
    keys: &'p [Keys],
    /// Whether the window's first order key is descending.
    descending: bool,
}

impl Partition<'_> {
    fn order_key(&self, position: usize) -> &[Datum] {
        &self.keys[self.rows[position]].order
    }

    fn peers(&self, a: usize, b: usize) -> bool {
        compare_keys(self.order_key(a), self.order_key(b)) == Ordering::Equal
    }

    /// For each position, the first and one past the last position of its peers.
    fn peer_groups(&self) -> Vec<(usize, usize)> {
        let n = self.rows.len();
        let mut groups = vec![(0, 0); n];
        let mut start = 0;
        while start < n {
            let mut end = start + 1;
            while end < n && self.peers(start, end) {
                end += 1;
            }
            for slot in &mut groups[start..end] {
                *slot = (start, end);
            }
            start = end;
        }
        groups
    }

    fn evaluate(&self, call: &WindowCall, rows: &[StageRow<'_>], ctx: &Ctx) -> Result<Vec<Datum>> {
        let n = self.rows.len();
        let peers = self.peer_groups();
        // An argument of the call, for the row at `position`.
        let arg = |i: usize, position: usize| -> Result<Datum> {
            let (row, aggs) = rows[self.rows[position]];
            call.args[i].eval(row, &AggEnv::new(ctx, aggs))
        };
        let count = |i: usize| -> Result<Option<i64>> {
            let v = arg(i, 0)?;
            Ok(match v {
                Datum::Null => None,
                Datum::Float(_) | Datum::Decimal(_) | Datum::Bytes(_) => None,
                other => types::to_i64(&other),
            })
        };
        Ok(match &call.func {
            WindowFunc::RowNumber => (1..=n as i64).map(Datum::Int).collect(),
            WindowFunc::Rank => peers
                .iter()
                .map(|(s, _)| Datum::Int(*s as i64 + 1))
                .collect(),
            WindowFunc::DenseRank => {
                let mut rank = 0;
                let mut out = Vec::with_capacity(n);
                for (position, (s, _)) in peers.iter().enumerate() {
                    if *s == position {
                        rank += 1;
                    }
                    out.push(Datum::Int(rank));
                }
                out
            }
            WindowFunc::PercentRank => peers
                .iter()
                .map(|(s, _)| {
                    Datum::Float(if n > 1 {
                        *s as f64 / (n - 1) as f64
                    } else {
                        0.0
                    })
                })
                .collect(),
            WindowFunc::CumeDist => peers
                .iter()
                .map(|(_, e)| Datum::Float(*e as f64 / n as f64))
                .collect(),
            WindowFunc::Ntile => {
                let buckets = match count(0)? {
                    Some(b) if b > 0 => b as usize,
                    _ => return Err(error::wrong_arguments("ntile")),
                };
                let (size, larger) = (n / buckets, n % buckets);
                (0..n)
                    .map(|p| {
                        let bucket = if p < larger * (size + 1) {
                            p / (size + 1)
                        } else {
                            larger + (p - larger * (size + 1)) / size.max(1)
                        };
                        Datum::Int(bucket as i64 + 1)
                    })
                    .collect()
            }
            WindowFunc::Lag | WindowFunc::Lead => {
                let offset = if call.args.len() > 1 {
                    match count(1)? {
                        Some(o) if o >= 0 => o as usize,
                        _ => {
                            let name = if call.func == WindowFunc::Lag {
                                "lag"
                            } else {
                                "lead"
                            };
                            return Err(error::wrong_arguments(name));
                        }
                    }
                } else {
                    1
                };
                let mut out = Vec::with_capacity(n);
                for p in 0..n {
                    let source = if call.func == WindowFunc::Lag {
                        p.checked_sub(offset)
                    } else {
                        p.checked_add(offset).filter(|s| *s < n)
                    };
                    out.push(match source {
                        Some(s) => arg(0, s)?,
                        None if call.args.len() > 2 => arg(2, p)?,
                        None => Datum::Null,
                    });
                }
                out
            }
            WindowFunc::FirstValue | WindowFunc::LastValue | WindowFunc::NthValue => {
                let nth = if call.func == WindowFunc::NthValue {
                    match count(1)? {
                        Some(k) if k > 0 => k as usize,
                        _ => return Err(error::wrong_arguments("nth_value")),
                    }
                } else {
                    1
                };
                let mut out = Vec::with_capacity(n);
                for p in 0..n {
                    let (lo, hi) = self.frame(&call.frame, p, &peers, &call.window, ctx)?;
                    let pick = match call.func {
                        WindowFunc::LastValue => hi.checked_sub(1).filter(|&h| h >= lo),
                        _ => Some(lo + nth - 1).filter(|&q| q < hi),
                    };
                    out.push(match pick {
                        Some(q) => arg(0, q)?,
                        None => Datum::Null,
                    });
                }
                out
            }
            WindowFunc::Aggregate(agg) => {
                let values: Vec<Datum> = (0..n)
                    .map(|p| {
                        let (row, aggs) = rows[self.rows[p]];
                        agg.arg.eval(row, &AggEnv::new(ctx, aggs))
                    })
                    .collect::<Result<_>>()?;
                let frames: Vec<(usize, usize)> = (0..n)
                    .map(|p| self.frame(&call.frame, p, &peers, &call.window, ctx))
                    .collect::<Result<_>>()?;
                aggregate_frames(agg, &values, &frames, &call.frame, ctx)
            }
        })
    }

    /// The frame of the row at `position`: its first position and one past its last (empty
    /// when the first is not below the second).
    fn frame(
        &self,
        frame: &Frame,
        position: usize,
        peers: &[(usize, usize)],
        window: &str,
        ctx: &Ctx,
    ) -> Result<(usize, usize)> {
        let n = self.rows.len();
        let lo = self.bound(
            &frame.start,
            frame.units,
            position,
            peers,
            false,
            window,
            ctx,
        )?;
        let hi = self.bound(&frame.end, frame.units, position, peers, true, window, ctx)?;
        Ok((lo.min(n), hi.min(n).max(lo.min(n))))
    }

    /// A frame bound as a position: the first row in the frame (`end` false) or one past the
    /// last (`end` true).
    #[allow(clippy::too_many_arguments)]
    fn bound(
        &self,
        bound: &FrameBound,
        units: FrameUnits,
        position: usize,
        peers: &[(usize, usize)],
        end: bool,
        window: &str,
        ctx: &Ctx,
    ) -> Result<usize> {
        let n = self.rows.len();
        let (offset, following) = match bound {
            FrameBound::UnboundedPreceding => return Ok(0),
            FrameBound::UnboundedFollowing => return Ok(n),
            FrameBound::CurrentRow => {
                return Ok(match (units, end) {
                    (FrameUnits::Rows, false) => position,
                    (FrameUnits::Rows, true) => position + 1,
                    (FrameUnits::Range, false) => peers[position].0,
                    (FrameUnits::Range, true) => peers[position].1,
                });
            }
            FrameBound::Preceding(o) => (o, false),
            FrameBound::Following(o) => (o, true),
        };
        let amount = offset.amount.eval(&[], ctx)?;
        if units == FrameUnits::Rows {
            let rows = match amount {
                Datum::Int(i) if i >= 0 => i as usize,
                Datum::UInt(u) => usize::try_from(u).unwrap_or(usize::MAX),
                _ => return Err(frame_illegal(window)),
            };
            let at = if following {
                position.saturating_add(rows)
            } else if rows > position {
                // Before the partition's first row: an end there leaves the frame empty.
                return Ok(0);
            } else {
                position - rows
            };
            return Ok(if end { at.saturating_add(1) } else { at });
        }
        if amount == Datum::Null || types::to_f64(&amount).is_none_or(|a| a < 0.0) {
            return Err(frame_illegal(window));
        }
        let current = &self.order_key(position)[0];
        if *current == Datum::Null {
            // NULL ± N is NULL: the frame bound is the NULL peers'.
            return Ok(if end {
                peers[position].1
            } else {
                peers[position].0
            });
        }
        let descending = self.descending;
        // The key value the bound stands at: ahead in the order is `following`.
        let add = following != descending;
        let target = shift(current, &amount, offset.unit, add, ctx)?;
        // Positions before the bound: rows whose key comes before `target` in the window's
        // order (for an end, also those equal to it).
        let before = |p: usize| {
            // NULL keys come first in ascending order, last in descending order.
            let o = sort_compare(&self.order_key(p)[0], &target);
            let o = if descending { o.reverse() } else { o };
            if end {
                o != Ordering::Greater
            } else {
                o == Ordering::Less
            }
        };
        Ok(self.partition_point(before))
    }

    fn partition_point(&self, before: impl Fn(usize) -> bool) -> usize {
        let (mut lo, mut hi) = (0, self.rows.len());
        while lo < hi {
            let mid = (lo + hi) / 2;
            if before(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }
}

/// `value` moved by `amount` (of `unit`, for a date) forward (`add`) or back.
fn shift(
    value: &Datum,
    amount: &Datum,
    unit: Option<IntervalUnit>,
    add: bool,
    ctx: &Ctx,
) -> Result<Datum> {
    let (value, amount) = (Expr::Literal(value.clone()), Expr::Literal(amount.clone()));
    let moved = match unit {
        None => Expr::Binary(
            if add { BinaryOp::Plus } else { BinaryOp::Minus },
            Box::new(value),
            Box::new(amount),
        ),
        Some(unit) => {
            let amount = if add {
                amount
            } else {
                Expr::Neg(Box::new(amount))
            };
            Expr::Call(Func::Date(expr::DateFunc::Add(unit)), vec![value, amount])
        }
    };
    moved.eval(&[], ctx)
}

/// An aggregate over each row's frame (`frames[p]`, positions into `values`).
fn aggregate_frames(
    call: &AggCall,
    values: &[Datum],
    frames: &[(usize, usize)],
    frame: &Frame,
    ctx: &Ctx,
) -> Vec<Datum> {
    let n = values.len();
    let mut state = FrameAggregate::new(call, ctx);
    let mut out = vec![Datum::Null; n];
    if frame.start == FrameBound::UnboundedPreceding {
        // Frames grow: [0, hi) with hi never shrinking.
        let mut added = 0;
        for (p, &(_, hi)) in frames.iter().enumerate() {
            while added < hi {
                state.add(&values[added]);
                added += 1;
            }
            out[p] = state.value(false);
        }
    } else if frame.end == FrameBound::UnboundedFollowing {
        // Frames grow backwards: [lo, n) with lo never rising as the row moves back.
        let mut added = n;
        for p in (0..n).rev() {
            let lo = frames[p].0;
            while added > lo {
                added -= 1;
                state.add(&values[added]);
            }
            out[p] = state.value(true);
        }
    } else {
        for (p, &(lo, hi)) in frames.iter().enumerate() {
            state.clear();
            for value in &values[lo..hi] {
                strata_fiber::yield_if_long();
                state.add(value);
            }
            out[p] = state.value(false);
        }
    }
    out
}
