//! The physical plan of one query block: the tree of operators the executor builds
//! ([`crate::executor::build`]), one node per operator, from the root (the block's result) down
//! to the leaf its rows come from. [`lower`] makes it from the optimized logical tree
//! ([`crate::planner::logical`]): where the logical tree says what the block computes, this one
//! says how — a Sort the scan's order makes unneeded is gone, grouping and DISTINCT know
//! whether they may spill out of order, conditions on subquery values are checked by the Apply
//! that computes them.
//!
//! ```text
//!   Limit ─ Sort ─ Distinct ─ Project ─ Window ─ Having ─ HashAgg ─ Apply ─ Scan | Join | Dual
//!   Union
//! ```
//!
//! A row between operators is one vector: the FROM row, then the subqueries' values (above
//! Apply), then the aggregate values (above HashAgg), then the window values (above Window);
//! Project makes the select list's values of it, followed by the ORDER BY values when a Sort
//! is above it.

use std::sync::Arc;

use crate::api::ColumnInfo;
use crate::error::{self, Result};
use crate::expr::{AggCall, Expr, ResultType};
use crate::planner::access::{Access, TableSource};
use crate::planner::join::{BuildSource, JoinItem, JoinPlan};
use crate::planner::logical::{self, Shape};
use crate::planner::query::RowLock;
use crate::planner::subquery::SubqueryPlan;
use crate::planner::union::UnionPlan;
use crate::planner::window::WindowCall;

/// A planned query block: its operator tree and the result it hands the client.
#[derive(Clone, Debug)]
pub struct SelectPlan {
    pub root: Plan,
    pub result_types: Vec<ResultType>,
    pub columns: Arc<[ColumnInfo]>,
    /// The lock a single-table read takes on its rows (`FOR UPDATE`).
    pub lock: RowLock,
}

/// A node of the physical plan: an operator and what it needs.
#[derive(Clone, Debug)]
pub enum Plan {
    /// One row of no columns, if the condition holds.
    Dual { filter: Option<Expr> },
    /// One table's rows by their access path, those the condition holds for.
    Scan {
        source: TableSource,
        filter: Option<Expr>,
        /// Locks the rows it reads (`FOR UPDATE`).
        lock: bool,
    },
    /// Several relations joined by the plan's steps.
    Join(Box<JoinPlan>),
    /// The rows of several query blocks.
    Union(Box<UnionPlan>),
    /// Each row followed by the values of the subqueries, kept when the condition on them
    /// holds.
    Apply {
        input: Box<Plan>,
        subqueries: Vec<SubqueryPlan>,
        filter: Option<Expr>,
    },
    /// Groups (one without GROUP BY): each group's first row followed by its aggregate values.
    HashAgg {
        input: Box<Plan>,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
        rollup: bool,
        /// Columns of its input rows.
        width: usize,
        /// Its groups may leave in another order than they were met (false when the ORDER BY
        /// relies on the scan's order, which no sort restores).
        may_spill: bool,
    },
    /// Groups for which HAVING holds.
    Having { input: Box<Plan>, predicate: Expr },
    /// Each row followed by its window values.
    Window {
        input: Box<Plan>,
        windows: Vec<WindowCall>,
        /// The rows leave in the order of the last window's partitions (no ORDER BY follows).
        keep_window_order: bool,
    },
    /// The select list, in the block's result types; the ORDER BY values of a Sort above
    /// follow it.
    Project { input: Box<Plan>, exprs: Vec<Expr> },
    /// Rows without repeats of their first `width` values.
    Distinct {
        input: Box<Plan>,
        width: usize,
        /// Its rows may leave in another order than they came (no sort above restores it).
        may_spill: bool,
    },
    /// Rows in the order of the keys, which its input (a Project, under a Distinct or not)
    /// computes after the select list's `width` values, and it cuts off; a TopN under a Limit.
    Sort {
        input: Box<Plan>,
        keys: Vec<(Expr, bool)>,
        width: usize,
    },
    /// OFFSET rows skipped, then at most LIMIT.
    Limit {
        input: Box<Plan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
}

impl Plan {
    /// The node under this one (None for a leaf).
    pub fn input(&self) -> Option<&Plan> {
        match self {
            Plan::Dual { .. } | Plan::Scan { .. } | Plan::Join(_) | Plan::Union(_) => None,
            Plan::Apply { input, .. }
            | Plan::HashAgg { input, .. }
            | Plan::Having { input, .. }
            | Plan::Window { input, .. }
            | Plan::Project { input, .. }
            | Plan::Distinct { input, .. }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. } => Some(input),
        }
    }

    /// This node and those under it, the leaf last.
    pub fn nodes(&self) -> impl Iterator<Item = &Plan> {
        std::iter::successors(Some(self), |node| node.input())
    }

    /// The leaf the rows come from.
    pub fn leaf(&self) -> &Plan {
        self.nodes().last().expect("a plan has a leaf")
    }

    /// The subqueries computed under this node (none without an Apply).
    pub fn subqueries(&self) -> &[SubqueryPlan] {
        self.nodes()
            .find_map(|node| match node {
                Plan::Apply { subqueries, .. } => Some(&subqueries[..]),
                _ => None,
            })
            .unwrap_or(&[])
    }

    /// The aggregate calls computed under this node (none without a HashAgg).
    pub fn aggs(&self) -> &[AggCall] {
        self.nodes()
            .find_map(|node| match node {
                Plan::HashAgg { aggs, .. } => Some(&aggs[..]),
                _ => None,
            })
            .unwrap_or(&[])
    }
}

impl SelectPlan {
    /// The table source of a block that reads one table.
    pub fn scan_source(&self) -> Option<&TableSource> {
        match self.root.leaf() {
            Plan::Scan { source, .. } => Some(source),
            _ => None,
        }
    }

    /// Whether some node of the block is one `is` picks.
    pub fn has(&self, is: impl Fn(&Plan) -> bool) -> bool {
        self.root.nodes().any(is)
    }

    /// Whether the block's rows are made distinct (SELECT DISTINCT).
    pub fn is_distinct(&self) -> bool {
        self.has(|node| matches!(node, Plan::Distinct { .. }))
    }

    /// Whether a LIMIT or OFFSET ends the block.
    pub fn is_limited(&self) -> bool {
        matches!(self.root, Plan::Limit { .. })
    }

    /// The same block without its LIMIT and OFFSET (SQL_CALC_FOUND_ROWS counts every row).
    pub fn without_limit(&self) -> SelectPlan {
        let mut plan = self.clone();
        if let Plan::Limit { input, .. } = plan.root {
            plan.root = *input;
        }
        plan
    }

    /// Whether the block reads exactly one key (a row by its full primary key) and nothing
    /// else.
    pub fn reads_one_key(&self) -> bool {
        self.lock == RowLock::None
            && self.root.subqueries().is_empty()
            && self
                .scan_source()
                .is_some_and(|s| matches!(s.access, Access::Point(_)))
    }

    /// Whether the block reads rows computed when it was planned (information_schema),
    /// anywhere: such a plan must not be reused.
    pub fn reads_computed_rows(&self) -> bool {
        let computed = |s: &TableSource| matches!(s.access, Access::Memory(_));
        self.root.nodes().any(|node| match node {
            Plan::Scan { source, .. } => computed(source),
            Plan::Apply { subqueries, .. } => {
                subqueries.iter().any(|s| s.plan.reads_computed_rows())
            }
            Plan::Join(join) => join.steps.iter().any(|step| match &step.item {
                JoinItem::Lookup(s) => computed(s),
                JoinItem::Build { source: b, .. } => match b {
                    BuildSource::Table(s) => computed(s),
                    BuildSource::Derived(p) => p.reads_computed_rows(),
                },
            }),
            Plan::Union(union) => union.parts.iter().any(SelectPlan::reads_computed_rows),
            _ => false,
        })
    }
}

/// The physical plan of an optimized logical tree.
pub fn lower(plan: logical::Plan, shape: Shape) -> Result<SelectPlan> {
    // The logical nodes root first; the physical tree is built from the leaf up.
    let mut chain = Vec::new();
    let mut node = plan;
    let leaf = loop {
        let input = match &mut node {
            logical::Plan::Filter { input, .. }
            | logical::Plan::Apply { input, .. }
            | logical::Plan::Aggregate { input, .. }
            | logical::Plan::Having { input, .. }
            | logical::Plan::Window { input, .. }
            | logical::Plan::Project { input, .. }
            | logical::Plan::Distinct { input }
            | logical::Plan::Sort { input, .. }
            | logical::Plan::Limit { input, .. } => std::mem::replace(
                &mut **input,
                logical::Plan::Dual {
                    conjuncts: Vec::new(),
                },
            ),
            _ => break node,
        };
        chain.push(node);
        node = input;
    };
    let (mut root, lock, ordered) = match leaf {
        logical::Plan::Dual { conjuncts } => (
            Plan::Dual {
                filter: Expr::conjoin(conjuncts),
            },
            RowLock::None,
            false,
        ),
        logical::Plan::Scan(scan) => {
            let Some(source) = scan.source else {
                return Err(error::internal("a scan was left without an access path"));
            };
            let ordered = source.ordered;
            (
                Plan::Scan {
                    source,
                    filter: Expr::conjoin(scan.conjuncts),
                    lock: scan.lock == RowLock::ForUpdate,
                },
                scan.lock,
                ordered,
            )
        }
        logical::Plan::Joined(join) => (Plan::Join(Box::new(join)), RowLock::None, false),
        logical::Plan::Join { .. } => {
            return Err(error::internal("a join was left without its order"))
        }
        _ => return Err(error::internal("a plan without a leaf")),
    };
    // An ORDER BY that the scan's order gives needs no sort; grouping, DISTINCT and windows
    // must then keep the order they meet rows in.
    let order_by = chain
        .iter()
        .any(|n| matches!(n, logical::Plan::Sort { .. }));
    let sorts = order_by && !ordered;
    let mut width = shape.width;
    for node in chain.into_iter().rev() {
        let input = Box::new(root);
        root = match node {
            logical::Plan::Filter { conjuncts, .. } => {
                // Conditions on subquery values: the Apply under it checks them.
                let Plan::Apply {
                    input,
                    subqueries,
                    filter: None,
                } = *input
                else {
                    return Err(error::internal(
                        "a filter was left outside the subqueries after predicate pushdown",
                    ));
                };
                Plan::Apply {
                    input,
                    subqueries,
                    filter: Expr::conjoin(conjuncts),
                }
            }
            logical::Plan::Apply { subqueries, .. } => {
                width += subqueries.len();
                Plan::Apply {
                    input,
                    subqueries,
                    filter: None,
                }
            }
            logical::Plan::Aggregate {
                group_by,
                aggs: calls,
                rollup,
                ..
            } => {
                let may_spill = !rollup && !group_by.is_empty() && (!order_by || !ordered);
                Plan::HashAgg {
                    input,
                    group_by,
                    aggs: calls,
                    rollup,
                    width,
                    may_spill,
                }
            }
            logical::Plan::Having { predicate, .. } => Plan::Having { input, predicate },
            logical::Plan::Window { windows, .. } => Plan::Window {
                input,
                windows,
                keep_window_order: !order_by,
            },
            logical::Plan::Project { exprs, .. } => Plan::Project { input, exprs },
            logical::Plan::Distinct { .. } => Plan::Distinct {
                input,
                width: shape.result_types.len(),
                may_spill: !order_by || !ordered,
            },
            logical::Plan::Sort { keys, .. } if sorts => Plan::Sort {
                input,
                keys,
                width: shape.result_types.len(),
            },
            logical::Plan::Sort { .. } => *input,
            logical::Plan::Limit { limit, offset, .. } => Plan::Limit {
                input,
                limit,
                offset,
            },
            logical::Plan::Dual { .. }
            | logical::Plan::Scan(_)
            | logical::Plan::Join { .. }
            | logical::Plan::Joined(_) => return Err(error::internal("a leaf above the leaf")),
        };
    }
    Ok(SelectPlan {
        root,
        result_types: shape.result_types,
        columns: shape.columns,
        lock,
    })
}

/// One line per node, the root first: its operator and the choices lowering made for it.
impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (depth, node) in self.nodes().enumerate() {
            write!(f, "{:indent$}", "", indent = depth * 2)?;
            match node {
                Plan::Dual { filter } => write!(f, "Dual filter={}", filter.is_some())?,
                Plan::Scan { source, lock, .. } => {
                    write!(f, "Scan {}", source.table.name)?;
                    for (set, mark) in [
                        (source.ordered, " ordered"),
                        (source.limited, " limited"),
                        (*lock, " locking"),
                    ] {
                        if set {
                            write!(f, "{mark}")?;
                        }
                    }
                }
                Plan::Join(join) => write!(f, "Join steps={}", join.steps.len())?,
                Plan::Union(union) => write!(f, "Union parts={}", union.parts.len())?,
                Plan::Apply {
                    subqueries, filter, ..
                } => write!(
                    f,
                    "Apply subqueries={} filter={}",
                    subqueries.len(),
                    filter.is_some()
                )?,
                Plan::HashAgg {
                    group_by,
                    aggs,
                    may_spill,
                    ..
                } => write!(
                    f,
                    "HashAgg group_by={} aggs={} may_spill={may_spill}",
                    group_by.len(),
                    aggs.len()
                )?,
                Plan::Having { .. } => write!(f, "Having")?,
                Plan::Window {
                    windows,
                    keep_window_order,
                    ..
                } => write!(
                    f,
                    "Window windows={} keep_window_order={keep_window_order}",
                    windows.len()
                )?,
                Plan::Project { exprs, .. } => write!(f, "Project exprs={}", exprs.len())?,
                Plan::Distinct { may_spill, .. } => write!(f, "Distinct may_spill={may_spill}")?,
                Plan::Sort { keys, .. } => write!(f, "Sort keys={}", keys.len())?,
                Plan::Limit { .. } => write!(f, "Limit")?,
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use sqlparser::ast;

    use crate::parser::statement::Statement;
    use crate::parser::{self, Batch};
    use crate::planner::query::{plan_select_in, PlanContext};

    /// The physical tree of `sql`'s SELECT over the fuzz targets' schema (database `d`,
    /// tables `t` and `u` of columns `a INT, b VARCHAR, c DECIMAL, d DOUBLE, e DATETIME`,
    /// `a` the primary key).
    fn plan(sql: &str) -> String {
        let schema = crate::planner::optimize::test_schema();
        let parsed = parser::parse_batch(sql, Batch::Single).expect("parses");
        let Some(Statement::Sql(tree, _)) = parsed.statements.first() else {
            panic!("not a statement of sqlparser's: {sql}");
        };
        let ast::Statement::Query(query) = &**tree else {
            panic!("not a query: {sql}");
        };
        plan_select_in(query, &PlanContext::new(&schema, Some("d")), None)
            .expect("plans")
            .root
            .to_string()
    }

    #[test]
    fn a_sort_goes_where_the_scan_reads_in_its_order() {
        assert_eq!(
            plan("SELECT a, b FROM t ORDER BY a LIMIT 3"),
            "Limit\n  Project exprs=2\n    Scan t ordered limited\n"
        );
        assert_eq!(
            plan("SELECT a, b FROM t ORDER BY b LIMIT 3"),
            "Limit\n  Sort keys=1\n    Project exprs=2\n      Scan t\n"
        );
    }

    #[test]
    fn conditions_on_subquery_values_are_checked_by_the_apply() {
        assert_eq!(
            plan("SELECT b FROM t WHERE a > (SELECT MAX(a) FROM u) AND b = 'x'"),
            "Project exprs=1\n  Apply subqueries=1 filter=true\n    Scan t\n"
        );
        assert_eq!(
            plan("SELECT b, (SELECT MAX(a) FROM u) FROM t"),
            "Project exprs=2\n  Apply subqueries=1 filter=false\n    Scan t\n"
        );
        assert_eq!(
            plan("SELECT b FROM t WHERE a = 1 FOR UPDATE"),
            "Project exprs=1\n  Scan t locking\n"
        );
    }

    #[test]
    fn grouping_and_distinct_spill_unless_their_order_is_relied_on() {
        assert_eq!(
            plan("SELECT b, COUNT(*) FROM t GROUP BY b ORDER BY b"),
            "Sort keys=1\n  Project exprs=2\n    HashAgg group_by=1 aggs=1 may_spill=true\n      \
             Scan t\n"
        );
        assert_eq!(
            plan("SELECT b, COUNT(*) FROM t GROUP BY b WITH ROLLUP"),
            "Project exprs=2\n  HashAgg group_by=1 aggs=1 may_spill=false\n    Scan t\n"
        );
        assert_eq!(
            plan("SELECT DISTINCT b FROM t ORDER BY b"),
            "Sort keys=1\n  Distinct may_spill=true\n    Project exprs=1\n      Scan t\n"
        );
        assert_eq!(
            plan("SELECT b, ROW_NUMBER() OVER (ORDER BY c) FROM t"),
            "Project exprs=2\n  Window windows=1 keep_window_order=true\n    Scan t\n"
        );
    }
}
