//! Subqueries in expressions: scalar `(SELECT …)`, `EXISTS (…)` and `x IN (SELECT …)`.
//!
//! A query block's binder hands each subquery it meets to a [`Collector`], which plans it with
//! the block's scope as its enclosing scope and gives back `Expr::Column(width + k)`: the k-th
//! subquery's result is an extra column of the block's row. After the FROM rows are found, the
//! executor computes those columns row by row ([`crate::executor::apply`]) and only then checks the conditions
//! that read them. A subquery that does not read the enclosing row runs once per execution.

use std::cell::{Cell, RefCell};

use sqlparser::ast;

use crate::api::ColumnType;
use crate::error::{self, Result};
use crate::expr::{Expr, ResultType};
use crate::planner::bind::{SubqueryKind, SubqueryPlanner};
use crate::planner::physical::SelectPlan;
use crate::planner::query::{self, PlanContext, Wanted};
use crate::planner::scope::{OuterScope, Scope};

/// A planned subquery of a query block.
#[derive(Clone, Debug)]
pub struct SubqueryPlan {
    pub plan: SelectPlan,
    pub kind: SubqueryKind,
    /// Reads the enclosing row, so runs once per row.
    pub correlated: bool,
}

impl SubqueryPlan {
    /// The type of the column that holds its result.
    pub fn result_type(&self) -> ResultType {
        match &self.kind {
            SubqueryKind::Scalar => {
                let mut ty = self
                    .plan
                    .result_types
                    .first()
                    .cloned()
                    .unwrap_or_else(|| ResultType::of(ColumnType::VarString, 255, 0));
                ty.not_null = false;
                ty
            }
            SubqueryKind::Exists { .. } | SubqueryKind::In { .. } => {
                ResultType::of(ColumnType::LongLong, 1, 0)
            }
        }
    }
}

/// Collects the subqueries of one query block while it is bound.
pub struct Collector<'a> {
    cx: &'a PlanContext<'a>,
    /// Width of the block's FROM row; subquery results follow it.
    base_width: usize,
    /// The scope the block is itself nested in, which its subqueries see beyond the block's.
    outer: Option<&'a OuterScope<'a>>,
    plans: RefCell<Vec<SubqueryPlan>>,
}

impl<'a> Collector<'a> {
    pub fn new(cx: &'a PlanContext<'a>, base_width: usize) -> Collector<'a> {
        Collector {
            cx,
            base_width,
            outer: None,
            plans: RefCell::new(Vec::new()),
        }
    }

    /// The collector of a block nested in `outer` (a subquery's own subqueries).
    pub fn nested_in(self, outer: Option<&'a OuterScope<'a>>) -> Collector<'a> {
        Collector { outer, ..self }
    }

    pub fn into_plans(self) -> Vec<SubqueryPlan> {
        self.plans.into_inner()
    }
}

impl SubqueryPlanner for Collector<'_> {
    fn plan(&self, query: &ast::Query, kind: SubqueryKind, scope: &Scope) -> Result<Expr> {
        let outer = OuterScope {
            scope,
            used: Cell::new(false),
            parent: self.outer,
        };
        let exists = matches!(kind, SubqueryKind::Exists { .. });
        // EXISTS asks whether the subquery has a row: its first row answers.
        let wanted = if exists { Wanted::First } else { Wanted::All };
        let plan = query::plan_query(query, self.cx, Some(&outer), wanted)?;
        if !exists && plan.columns.len() != 1 {
            return Err(error::operand_columns(1));
        }
        let mut plans = self.plans.borrow_mut();
        plans.push(SubqueryPlan {
            plan,
            kind,
            correlated: outer.used.get(),
        });
        Ok(Expr::Column(self.base_width + plans.len() - 1))
    }
}
