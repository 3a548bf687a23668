//! The logical plan of one SELECT block: what the binder found, as a tree of nodes from the
//! FROM clause's rows (a leaf) up to LIMIT (the root). The optimizer's passes
//! ([`crate::planner::optimize`]) rewrite the tree: conditions move down into the leaf, a
//! condition that can never hold empties it, the leaf gets its access path (or its join
//! order), a sort the scan's order makes unneeded goes, the scan learns which columns are read.
//! [`crate::planner::physical::lower`] then makes the operator tree the executor builds.
//!
//! ```text
//!   Limit ─ Sort ─ Distinct ─ Project ─ Window ─ Having ─ Aggregate ─ Filter ─ Apply ─ leaf
//! ```
//!
//! Each node is present only when the query needs it, in that order. Expressions keep the
//! binder's positions: a node above `Apply` reads the FROM row followed by the subqueries'
//! values, one above `Aggregate` the grouped row followed by the aggregate values, and
//! `Sort`'s keys read the row below `Project` (the executor computes them beside the select
//! list).

use std::fmt;
use std::sync::Arc;

use crate::api::ColumnInfo;
use crate::catalog::TableDef;
use crate::expr::{AggCall, Expr, ResultType};
use crate::infoschema::MemoryRows;
use crate::planner::access::{Access, TableSource};
use crate::planner::join::{JoinPlan, Relation};
use crate::planner::query::RowLock;
use crate::planner::subquery::SubqueryPlan;
use crate::planner::window::WindowCall;

/// A node of the logical plan.
#[derive(Debug)]
pub enum Plan {
    /// No FROM clause: one row of no columns, if its conditions hold. A FROM clause whose WHERE
    /// can never hold becomes one too, with a false condition.
    Dual { conjuncts: Vec<Expr> },
    /// One table's rows.
    Scan(Scan),
    /// Several relations, joined under the conditions given.
    Join {
        relations: Vec<Relation>,
        conjuncts: Vec<Expr>,
    },
    /// A join whose order and steps are chosen.
    Joined(JoinPlan),
    /// Rows for which every condition holds.
    Filter {
        input: Box<Plan>,
        conjuncts: Vec<Expr>,
    },
    /// Each row followed by the values of the subqueries.
    Apply {
        input: Box<Plan>,
        subqueries: Vec<SubqueryPlan>,
    },
    /// Groups (one without GROUP BY), each row followed by its aggregate values.
    Aggregate {
        input: Box<Plan>,
        group_by: Vec<Expr>,
        aggs: Vec<AggCall>,
        rollup: bool,
    },
    /// Groups for which HAVING holds.
    Having { input: Box<Plan>, predicate: Expr },
    /// Each row followed by its window values.
    Window {
        input: Box<Plan>,
        windows: Vec<WindowCall>,
    },
    /// The select list.
    Project { input: Box<Plan>, exprs: Vec<Expr> },
    /// Rows without repeats.
    Distinct { input: Box<Plan> },
    /// Rows in ORDER BY order.
    Sort {
        input: Box<Plan>,
        keys: Vec<(Expr, bool)>,
    },
    /// OFFSET rows skipped, then at most LIMIT.
    Limit {
        input: Box<Plan>,
        limit: Option<Expr>,
        offset: Option<Expr>,
    },
}

/// The rows of one table.
#[derive(Debug)]
pub struct Scan {
    pub table: Arc<TableDef>,
    /// The rows of an information_schema table, computed when it was planned.
    pub memory: Option<MemoryRows>,
    /// Conditions checked on each row as it is read.
    pub conjuncts: Vec<Expr>,
    /// How its rows are found, once the access pass chose it.
    pub source: Option<TableSource>,
    pub lock: RowLock,
}

/// What a SELECT block's result is, beside its tree.
pub struct Shape {
    /// Columns of the FROM row.
    pub width: usize,
    pub result_types: Vec<ResultType>,
    pub columns: Arc<[ColumnInfo]>,
}

/// The input of a node reached through a reference (shared or not), or None for a leaf.
macro_rules! input_of {
    ($plan:expr) => {
        match $plan {
            Plan::Dual { .. } | Plan::Scan(_) | Plan::Join { .. } | Plan::Joined(_) => None,
            Plan::Filter { input, .. }
            | Plan::Apply { input, .. }
            | Plan::Aggregate { input, .. }
            | Plan::Having { input, .. }
            | Plan::Window { input, .. }
            | Plan::Project { input, .. }
            | Plan::Distinct { input }
            | Plan::Sort { input, .. }
            | Plan::Limit { input, .. } => Some(input),
        }
    };
}

impl Plan {
    /// The node under this one (None for a leaf).
    pub fn input(&self) -> Option<&Plan> {
        input_of!(self).map(|input| &**input)
    }

    /// The node under this one, to rewrite (None for a leaf).
    pub fn input_mut(&mut self) -> Option<&mut Box<Plan>> {
        input_of!(self)
    }

    /// The leaf the rows come from.
    pub fn leaf_mut(&mut self) -> &mut Plan {
        if self.input().is_none() {
            return self;
        }
        self.input_mut().expect("not a leaf").leaf_mut()
    }

    /// The node's name in [`Plan`]'s display.
    fn name(&self) -> &'static str {
        match self {
            Plan::Dual { .. } => "Dual",
            Plan::Scan(_) => "Scan",
            Plan::Join { .. } => "Join",
            Plan::Joined(_) => "Joined",
            Plan::Filter { .. } => "Filter",
            Plan::Apply { .. } => "Apply",
            Plan::Aggregate { .. } => "Aggregate",
            Plan::Having { .. } => "Having",
            Plan::Window { .. } => "Window",
            Plan::Project { .. } => "Project",
            Plan::Distinct { .. } => "Distinct",
            Plan::Sort { .. } => "Sort",
            Plan::Limit { .. } => "Limit",
        }
    }

    /// Wraps `input` in a node made by `make` when `present`.
    pub fn wrap_if(input: Plan, present: bool, make: impl FnOnce(Box<Plan>) -> Plan) -> Plan {
        if present {
            make(Box::new(input))
        } else {
            input
        }
    }
}

/// One line per node, the root first, each with what the passes decided about it: conditions
/// counted, a scan's access path, order and columns read, a join's steps.
impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut node = Some(self);
        let mut depth = 0;
        while let Some(n) = node {
            write!(f, "{:indent$}{}", "", n.name(), indent = depth * 2)?;
            match n {
                Plan::Dual { conjuncts } | Plan::Filter { conjuncts, .. } => {
                    write!(f, " conditions={}", conjuncts.len())?
                }
                Plan::Scan(scan) => {
                    write!(
                        f,
                        " {} conditions={}",
                        scan.table.name,
                        scan.conjuncts.len()
                    )?;
                    if let Some(source) = &scan.source {
                        write!(f, " access={}", access_name(&source.access))?;
                        if source.ordered {
                            write!(f, " ordered")?;
                        }
                        if source.limited {
                            write!(f, " limited")?;
                        }
                        if let Some(columns) = &source.columns {
                            write!(f, " columns={columns:?}")?;
                        }
                    }
                }
                Plan::Join {
                    relations,
                    conjuncts,
                } => write!(
                    f,
                    " relations={} conditions={}",
                    relations.len(),
                    conjuncts.len()
                )?,
                Plan::Joined(join) => {
                    let steps: Vec<&str> = join.steps.iter().map(|s| s.alias.as_str()).collect();
                    write!(f, " {}", steps.join(","))?
                }
                Plan::Apply { subqueries, .. } => write!(f, " subqueries={}", subqueries.len())?,
                Plan::Aggregate { group_by, aggs, .. } => {
                    write!(f, " group_by={} aggs={}", group_by.len(), aggs.len())?
                }
                Plan::Project { exprs, .. } => write!(f, " exprs={}", exprs.len())?,
                Plan::Sort { keys, .. } => write!(f, " keys={}", keys.len())?,
                Plan::Window { windows, .. } => write!(f, " windows={}", windows.len())?,
                Plan::Having { .. } | Plan::Distinct { .. } | Plan::Limit { .. } => {}
            }
            writeln!(f)?;
            node = n.input();
            depth += 1;
        }
        Ok(())
    }
}

fn access_name(access: &Access) -> &'static str {
    match access {
        Access::Point(_) => "Point",
        Access::Points(_) => "Points",
        Access::PkRange { .. } => "PkRange",
        Access::Index { .. } => "Index",
        Access::FullScan => "FullScan",
        Access::PkPrefixes(_) => "PkPrefixes",
        Access::Memory(_) => "Memory",
    }
}
