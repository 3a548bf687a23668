//! UNION, INTERSECT and EXCEPT of query blocks, and recursive CTEs (planned in
//! `crate::planner::union`).

use std::collections::HashSet;

use strata_codec::Datum;
use strata_txn::Transaction;

use crate::error::{Error, Result};
use crate::exec::{self, group_key, Ctx};
use crate::expr::{ResultType, SessionValue};
use crate::planner::union::{Combine, Recursion, UnionPlan};

use super::{once, Batch, Exec, Node, Operator};

pub struct Union<'p> {
    plan: &'p UnionPlan,
    types: &'p [ResultType],
    done: bool,
}

impl<'p> Union<'p> {
    pub fn new(plan: &'p UnionPlan, types: &'p [ResultType]) -> Union<'p> {
        Union {
            plan,
            types,
            done: false,
        }
    }
}

impl Operator for Union<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        once(&mut self.done, || {
            let rows = execute(self.plan, self.types, exec.txn, exec.ctx)?;
            Ok(rows)
        })
    }

    fn explain(&self) -> Node {
        let plan = self.plan;
        let name = match (&plan.recursion, plan.combine) {
            (Some(_), _) => "RecursiveUnion",
            (None, Some(how)) if how.intersect => "Intersect",
            (None, Some(_)) => "Except",
            (None, None) => "Union",
        };
        let info = if plan.distinct_until > 0 {
            "distinct"
        } else {
            "all"
        };
        let children = plan
            .parts
            .iter()
            .map(|p| super::build(p).explain())
            .collect::<Vec<Node>>();
        let est_rows = children.iter().map(|c| c.est_rows).sum();
        Node::root(name, info, children).estimated(est_rows)
    }
}

/// Runs each part and concatenates their rows, in the union's column `types`.
fn execute(
    union: &UnionPlan,
    types: &[ResultType],
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<Vec<Vec<Datum>>> {
    if let Some(recursion) = &union.recursion {
        return execute_recursive(union, recursion, txn, ctx);
    }
    if let Some(how) = union.combine {
        let (left, _) = exec::execute_select(&union.parts[0], txn, ctx)?;
        let (right, _) = exec::execute_select(&union.parts[1], txn, ctx)?;
        return Ok(combine(left, &right, how));
    }
    let mut rows = Vec::new();
    let mut seen = HashSet::new();
    for (i, part) in union.parts.iter().enumerate() {
        let (mut part_rows, _) = exec::execute_select(part, txn, ctx)?;
        if part.is_distinct() {
            for row in &mut part_rows {
                for (value, ty) in row.iter_mut().zip(types) {
                    *value = crate::expr::conform(std::mem::replace(value, Datum::Null), ty);
                }
            }
        }
        if i < union.distinct_until {
            rows.extend(part_rows.into_iter().filter(|r| seen.insert(group_key(r))));
        } else {
            rows.extend(part_rows);
        }
    }
    Ok(rows)
}

/// The rows of `left` that INTERSECT or EXCEPT keeps given `right` (NULLs equal, as in DISTINCT).
fn combine(left: Vec<Vec<Datum>>, right: &[Vec<Datum>], how: Combine) -> Vec<Vec<Datum>> {
    let mut counts: std::collections::HashMap<Vec<u8>, usize> = std::collections::HashMap::new();
    for row in right {
        *counts.entry(group_key(row)).or_default() += 1;
    }
    let mut seen = HashSet::new();
    left.into_iter()
        .filter(|row| {
            let key = group_key(row);
            if !how.all && !seen.insert(key.clone()) {
                return false;
            }
            let count = counts.get_mut(&key).filter(|n| **n > 0);
            match (how.intersect, count) {
                (true, Some(n)) => {
                    if how.all {
                        *n -= 1;
                    }
                    true
                }
                (true, None) => false,
                (false, Some(n)) => {
                    if how.all {
                        *n -= 1;
                    }
                    false
                }
                (false, None) => true,
            }
        })
        .collect()
}

/// Rounds a recursive CTE may run when `cte_max_recursion_depth` cannot be read (MySQL's
/// default).
const RECURSION_DEPTH_DEFAULT: i64 = 1000;

/// The most rows a recursive CTE may produce: its rows are held in memory, and a runaway
/// recursion must end in an error, not take the node's memory.
const RECURSIVE_ROWS_MAX: usize = 4_000_000;

/// Runs a recursive CTE's union: the seeds, then rounds of the recursive parts over the rows
/// of the round before, until one adds no row. A round past `cte_max_recursion_depth` that
/// still adds rows fails with MySQL's 3636.
fn execute_recursive(
    union: &UnionPlan,
    recursion: &Recursion,
    txn: &mut Transaction,
    ctx: &Ctx,
) -> Result<Vec<Vec<Datum>>> {
    use crate::expr::EvalEnv;
    let depth = ctx.session_value(&SessionValue::SystemVariable(
        "cte_max_recursion_depth".into(),
    ));
    let max_depth = crate::types::to_i64(&depth).unwrap_or(RECURSION_DEPTH_DEFAULT);
    let mut seen = HashSet::new();
    let mut keep = |row: &Vec<Datum>| !recursion.distinct || seen.insert(group_key(row));
    let mut round = Vec::new();
    for part in &union.parts[..recursion.seeds] {
        let (rows, _) = exec::execute_select(part, txn, ctx)?;
        round.extend(rows.into_iter().filter(&mut keep));
    }
    let mut all = round.clone();
    let mut rounds = 0i64;
    let result = loop {
        if round.is_empty() {
            break Ok(all);
        }
        rounds += 1;
        recursion.working.replace(std::mem::take(&mut round));
        for part in &union.parts[recursion.seeds..] {
            match exec::execute_select(part, txn, ctx) {
                Ok((rows, _)) => round.extend(rows.into_iter().filter(&mut keep)),
                Err(e) => {
                    recursion.working.replace(Vec::new());
                    return Err(e);
                }
            }
        }
        if rounds > max_depth && !round.is_empty() {
            break Err(Error::new(
                3636,
                "HY000",
                format!(
                    "Recursive query aborted after {rounds} iterations. Try increasing \
                     @@cte_max_recursion_depth to a larger value."
                ),
            ));
        }
        if all.len() + round.len() > RECURSIVE_ROWS_MAX {
            break Err(Error::new(
                8175,
                "HY000",
                format!(
                    "Your query has been cancelled due to exceeding the allowed memory limit \
                     for a single SQL query: a recursive CTE may hold {RECURSIVE_ROWS_MAX} rows"
                ),
            ));
        }
        all.extend(round.iter().cloned());
    };
    recursion.working.replace(Vec::new());
    result
}
