//! The executor: a planned query block becomes a tree of physical operators, and the rows are
//! pulled from its root in batches.
//!
//! [`build`] makes an operator of each node of a [`SelectPlan`]'s tree, one file each: the
//! rows come from a [`scan::Scan`] of an access path (or a [`dual::Dual`] row, a
//! [`join::Join`], a [`union::Union`]), then pass [`apply::Apply`] (subqueries),
//! [`aggregate::HashAgg`], [`filter::Having`], [`window::Window`], [`project::Project`],
//! [`distinct::Distinct`], [`sort::Sort`] and [`limit::Limit`], as the plan has them. An
//! operator hands its parent a batch of rows at a time, so a LIMIT that has its rows stops
//! the scan below it. EXPLAIN prints the same tree ([`Node`]).
//!
//! Between operators a row is one vector. After grouping it carries the aggregate values
//! after the group's row, and after the window stage the window values after those: the
//! operators above split them off the end (they know how many there are).

mod aggregate;
pub mod apply;
pub mod describe;
mod distinct;
mod dual;
mod filter;
pub mod grouping;
pub mod join;
mod limit;
mod project;
pub mod scan;
mod sort;
mod spill;
mod union;
mod window;

use strata_codec::Datum;
use strata_txn::Transaction;
use strata_types::Key;

use crate::api::{RowSink, SessionStatus};
use crate::error::Result;
use crate::exec::{AggEnv, Ctx};
use crate::expr::EvalEnv;
use crate::expr::Expr;
use crate::planner::physical::{Plan, SelectPlan};

pub use scan::Cursor;

/// Rows an operator hands its parent at once.
pub type Batch = Vec<Vec<Datum>>;

/// What operators run against while a statement executes.
pub struct Exec<'e, 'c> {
    pub txn: &'e mut Transaction,
    pub ctx: &'e Ctx<'c>,
    /// Row keys a locking read (`FOR UPDATE`) must lock, as its scan returned them.
    pub locked: Vec<Key>,
}

/// A physical operator.
pub trait Operator {
    /// The next batch of rows (never empty), or None once there are no more.
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>>;
    /// How EXPLAIN shows the operator and what it reads from.
    fn explain(&self) -> Node;
    /// What it held at most and wrote to disk so far, for an operator that keeps rows (a sort,
    /// groups, DISTINCT keys, a window's rows, join build sides); None for one that only
    /// passes batches on.
    fn held(&self) -> Option<Held> {
        None
    }
}

/// The memory and disk an operator used (EXPLAIN ANALYZE's `memory` and `disk`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// The most bytes of rows it held at once, as the statement's memory counts them.
    pub memory: u64,
    /// Bytes it wrote to temporary files.
    pub disk: u64,
}

/// One line of EXPLAIN and the lines under it, in TiDB's shape.
pub struct Node {
    pub name: String,
    /// The rows it is estimated to hand its parent (EXPLAIN's estRows); NaN for none (a
    /// write's root, which hands none on: `N/A`).
    pub est_rows: f64,
    /// `root` for the SQL node's work, `cop[tikv]` for what storage reads.
    pub task: &'static str,
    pub object: String,
    pub info: String,
    pub children: Vec<Node>,
    /// What the operator did when EXPLAIN ANALYZE ran it (None when it was not measured
    /// on its own: a join's steps, a subquery's or a union branch's operators).
    pub ran: Option<Ran>,
}

/// An operator's actual work in one execution (EXPLAIN ANALYZE).
#[derive(Clone, Copy, Debug, Default)]
pub struct Ran {
    /// Rows it handed its parent.
    pub rows: u64,
    /// Times its parent pulled from it (TiDB's loops).
    pub loops: u64,
    /// Time spent in it and below it (None for a join step, whose work interleaves with the
    /// steps after it).
    pub time: Option<std::time::Duration>,
    /// What it held (see [`Operator::held`]).
    pub held: Option<Held>,
    /// What its reads, and those below it, asked of storage.
    pub kv: strata_txn::ReadStats,
}

/// An operator measured for EXPLAIN ANALYZE.
struct Measured<'p> {
    inner: Box<dyn Operator + 'p>,
    ran: Ran,
}

impl Operator for Measured<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        let started = std::time::Instant::now();
        let reads = exec.txn.read_stats();
        let result = self.inner.next(exec);
        *self.ran.time.get_or_insert_default() += started.elapsed();
        self.ran.kv.add(&exec.txn.read_stats().since(&reads));
        self.ran.loops += 1;
        if let Ok(Some(batch)) = &result {
            self.ran.rows += batch.len() as u64;
        }
        result
    }

    fn explain(&self) -> Node {
        let mut node = self.inner.explain();
        node.ran = Some(Ran {
            held: self.inner.held(),
            ..self.ran
        });
        node
    }
}

impl Node {
    /// A root task, estimated to pass on its first child's rows (one row without children).
    pub fn root(name: impl Into<String>, info: impl Into<String>, children: Vec<Node>) -> Node {
        Node {
            est_rows: children.first().map_or(1.0, |c| c.est_rows),
            name: name.into(),
            task: "root",
            object: String::new(),
            info: info.into(),
            children,
            ran: None,
        }
    }

    /// The same node with `est_rows` as its estimate.
    pub fn estimated(self, est_rows: f64) -> Node {
        Node { est_rows, ..self }
    }

    /// The tree as EXPLAIN's rows (id, estRows, task, access object, operator info), children
    /// under their parent with TiDB's `├─`/`└─` marks.
    pub fn rows(&self) -> Vec<[String; 5]> {
        let mut out = Vec::new();
        self.push_rows("", "", &mut out);
        out.into_iter().map(|(row, _)| row).collect()
    }

    /// The tree as EXPLAIN ANALYZE's rows: each line's [`Node::rows`] with what the operator
    /// did, if it was measured.
    pub fn analyzed_rows(&self) -> Vec<([String; 5], Option<Ran>)> {
        let mut out = Vec::new();
        self.push_rows("", "", &mut out);
        out
    }

    fn push_rows(&self, mark: &str, indent: &str, out: &mut Vec<([String; 5], Option<Ran>)>) {
        out.push((
            [
                format!("{indent}{mark}{}", self.name),
                if self.est_rows.is_nan() {
                    "N/A".to_string()
                } else {
                    format!("{:.2}", self.est_rows)
                },
                self.task.to_string(),
                self.object.clone(),
                self.info.clone(),
            ],
            self.ran,
        ));
        let below = match mark {
            "" => indent.to_string(),
            "├─" => format!("{indent}│ "),
            _ => format!("{indent}  "),
        };
        for (k, child) in self.children.iter().enumerate() {
            let mark = if k + 1 == self.children.len() {
                "└─"
            } else {
                "├─"
            };
            child.push_rows(mark, &below, out);
        }
    }
}

/// The operator tree of a planned query block.
pub fn build(plan: &SelectPlan) -> Box<dyn Operator + '_> {
    build_with(plan, false)
}

/// `op`, measured when `measure` (EXPLAIN ANALYZE).
fn measured<'p>(op: Box<dyn Operator + 'p>, measure: bool) -> Box<dyn Operator + 'p> {
    if measure {
        Box::new(Measured {
            inner: op,
            ran: Ran::default(),
        })
    } else {
        op
    }
}

/// [`build`], each operator of the block measured when `measure` (EXPLAIN ANALYZE).
fn build_with(plan: &SelectPlan, measure: bool) -> Box<dyn Operator + '_> {
    let builder = Builder {
        block: plan,
        measure,
    };
    builder.node(&plan.root, Above::default())
}

/// Makes the operators of one query block.
struct Builder<'p> {
    block: &'p SelectPlan,
    measure: bool,
}

/// What the operator above a node asks of it.
#[derive(Clone, Copy, Default)]
struct Above<'p> {
    /// The LIMIT over it with nothing between them that drops or reorders rows: a Sort
    /// keeps only the rows it needs, a scan the optimizer marked `limited` stops after them.
    count: Option<limit::Count<'p>>,
    /// The ORDER BY values the Sort above sorts by, which the Project computes after the
    /// select list.
    sort_keys: &'p [(Expr, bool)],
}

impl<'p> Builder<'p> {
    fn node(&self, node: &'p Plan, above: Above<'p>) -> Box<dyn Operator + 'p> {
        let op: Box<dyn Operator + 'p> = match node {
            Plan::Dual { filter } => Box::new(dual::Dual::new(filter.as_ref())),
            Plan::Scan {
                source,
                filter,
                lock,
            } => {
                let cap = above.count.filter(|_| source.limited);
                Box::new(scan::Scan::new(source, filter.as_ref(), *lock, cap))
            }
            Plan::Join(join) => Box::new(join::Join::new(node, join, self.measure)),
            Plan::Union(union) => Box::new(union::Union::new(union, &self.block.result_types)),
            Plan::Apply {
                input,
                subqueries,
                filter,
            } => Box::new(apply::Apply::new(
                self.node(input, Above::default()),
                node,
                subqueries,
                filter.as_ref(),
            )),
            Plan::HashAgg { input, .. } => Box::new(aggregate::HashAgg::new(
                self.node(input, Above::default()),
                node,
            )),
            Plan::Having { input, predicate } => Box::new(filter::Having::new(
                self.node(input, Above::default()),
                node,
                predicate,
                node.aggs().len(),
            )),
            Plan::Window {
                input,
                windows,
                keep_window_order,
            } => Box::new(window::Window::new(
                self.node(input, Above::default()),
                windows,
                node.aggs().len(),
                *keep_window_order,
            )),
            Plan::Project { input, exprs } => {
                let below = Above {
                    count: above.count,
                    sort_keys: &[],
                };
                let windows = match &**input {
                    Plan::Window { windows, .. } => windows.len(),
                    _ => 0,
                };
                Box::new(project::Project::new(
                    self.node(input, below),
                    node,
                    exprs,
                    &self.block.result_types,
                    above.sort_keys,
                    node.aggs().len(),
                    windows,
                ))
            }
            Plan::Distinct {
                input,
                width,
                may_spill,
            } => {
                let below = Above {
                    count: None,
                    sort_keys: above.sort_keys,
                };
                Box::new(distinct::Distinct::new(
                    self.node(input, below),
                    *width,
                    *may_spill,
                ))
            }
            Plan::Sort { input, keys, width } => {
                let below = Above {
                    count: None,
                    sort_keys: keys,
                };
                Box::new(sort::Sort::new(
                    self.node(input, below),
                    node,
                    keys,
                    *width,
                    above.count,
                ))
            }
            Plan::Limit {
                input,
                limit,
                offset,
            } => {
                let count = limit::Count::new(limit.as_ref(), offset.as_ref());
                let below = Above {
                    count,
                    sort_keys: &[],
                };
                let input = self.node(input, below);
                match count {
                    Some(count) => Box::new(limit::Limit::new(input, count)),
                    None => return input,
                }
            }
        };
        measured(op, self.measure)
    }
}

/// A result past this many bytes (as [`crate::memory::row_bytes`] counts them) goes to the
/// client while the SELECT runs instead of being held whole; one below it is held, so that
/// an error before its end still replaces the whole result, as for every small result.
pub const STREAM_AFTER_BYTES: usize = 1 << 20;

/// What [`execute_into`] did with a SELECT's rows.
pub enum Selected {
    /// They are held whole: the result stayed under [`STREAM_AFTER_BYTES`].
    Rows(Batch),
    /// They went to the sink as they came: how many.
    Sent(u64),
}

/// Runs a SELECT that does not lock to the end, handing its rows to `sink` once they pass
/// [`STREAM_AFTER_BYTES`] (the columns first, with `status`), batch by batch as the root
/// makes them; the rows sent no longer count against the statement's memory.
pub fn execute_into(
    plan: &SelectPlan,
    txn: &mut Transaction,
    ctx: &Ctx,
    sink: &mut dyn RowSink,
    status: SessionStatus,
) -> Result<Selected> {
    let mut root = build(plan);
    let mut exec = Exec {
        txn,
        ctx,
        locked: Vec::new(),
    };
    let mut held: Batch = Vec::new();
    let mut held_bytes = 0;
    let mut sent = None;
    while let Some(batch) = root.next(&mut exec)? {
        if let Some(count) = sent.as_mut() {
            sink.rows(&batch)?;
            *count += batch.len() as u64;
            continue;
        }
        for row in &batch {
            let bytes = crate::memory::row_bytes(row);
            ctx.consume_memory(bytes)?;
            held_bytes += bytes;
        }
        if held.is_empty() {
            held = batch;
        } else {
            held.extend(batch);
        }
        if held_bytes > STREAM_AFTER_BYTES {
            sink.columns(&plan.columns, status)?;
            sink.rows(&held)?;
            sent = Some(held.len() as u64);
            ctx.session.release_memory(held_bytes);
            held = Vec::new();
        }
    }
    Ok(match sent {
        Some(count) => Selected::Sent(count),
        None => Selected::Rows(held),
    })
}

/// Runs a SELECT to the end; returns its rows and the row keys a locking read must lock.
pub fn execute(
    plan: &SelectPlan,
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<(Vec<Vec<Datum>>, Vec<Key>)> {
    run(&mut *build(plan), txn, ctx)
}

/// Runs a SELECT to the end with each operator measured (EXPLAIN ANALYZE); returns its
/// operator tree with what each did. The rows are dropped as they come, as if sent.
pub fn analyze(plan: &SelectPlan, txn: &mut Transaction, ctx: &Ctx) -> Result<Node> {
    let mut root = build_with(plan, true);
    let mut exec = Exec {
        txn,
        ctx,
        locked: Vec::new(),
    };
    while root.next(&mut exec)?.is_some() {}
    Ok(root.explain())
}

fn run(
    root: &mut dyn Operator,
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<(Vec<Vec<Datum>>, Vec<Key>)> {
    let mut exec = Exec {
        txn,
        ctx,
        locked: Vec::new(),
    };
    let mut rows = Vec::new();
    while let Some(batch) = root.next(&mut exec)? {
        for row in &batch {
            ctx.keep_row(row)?;
        }
        if rows.is_empty() {
            rows = batch;
        } else {
            rows.extend(batch);
        }
    }
    Ok((rows, exec.locked))
}

/// The batch of an operator that hands over all its rows at once: `compute` runs on the first
/// call; None after it, and at once when it made no row.
fn once(done: &mut bool, compute: impl FnOnce() -> Result<Batch>) -> Result<Option<Batch>> {
    if std::mem::replace(done, true) {
        return Ok(None);
    }
    let rows = compute()?;
    Ok((!rows.is_empty()).then_some(rows))
}

/// A row after grouping, split into the row its expressions read and its `aggs` aggregate
/// values (the last columns).
fn split_aggs(row: &[Datum], aggs: usize) -> (&[Datum], &[Datum]) {
    row.split_at(row.len() - aggs)
}

/// The environment a grouped row's expressions evaluate in.
fn grouped_env<'a>(ctx: &'a Ctx<'a>, aggs: &'a [Datum], windows: &'a [Datum]) -> AggEnv<'a> {
    AggEnv::with_windows(ctx, aggs, windows)
}
