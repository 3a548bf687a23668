//! UPDATE and DELETE over joined tables, MySQL's multiple-table forms:
//!
//! - `UPDATE a JOIN b ON … SET a.x = b.y WHERE …`, `UPDATE a, b SET … WHERE …`;
//! - `DELETE a, b FROM a JOIN b … WHERE …`, `DELETE FROM a, b USING a JOIN b … WHERE …`.
//!
//! The table references are planned as a query's FROM clause is (`planner::join`), and each
//! target's row key is kept in a slot after the joined columns. The joined rows are read first; then
//! every target row they reach is written once, from the first joined row it appears in, as
//! MySQL does ("each matching row is updated once, even if it matches the conditions multiple
//! times"). A table that is the target under two aliases is written from its latest value.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use sqlparser::ast;
use strata_codec::Datum;
use strata_txn::Transaction;
use strata_types::Key;

use super::{delete_row, lock, update_row, WriteCtx, WriteResult};
use crate::api::ColumnType;
use crate::catalog::{Schema, TableDef};
use crate::error::{self, Error, Result};
use crate::exec::holds;
use crate::expr::{Expr, ResultType};
use crate::planner::bind::Binder;
use crate::planner::join::{self, JoinPlan, Relation, RelationSource};
use crate::planner::query::PlanContext;
use crate::planner::scope::{Reach, Scope, ScopeColumn};
use crate::planner::subquery::{Collector, SubqueryPlan};

/// A planned multiple-table UPDATE or DELETE.
#[derive(Clone, Debug)]
pub struct JoinedWritePlan {
    pub join: JoinPlan,
    /// Subqueries of WHERE and SET; their results follow the joined row.
    pub subqueries: Vec<SubqueryPlan>,
    /// WHERE conditions on subquery results, checked once those are computed.
    pub post_filter: Option<Expr>,
    pub targets: Vec<Target>,
    /// UPDATE's assignments; None for DELETE.
    pub assignments: Option<Vec<Assignment>>,
}

/// A table whose rows the statement writes.
#[derive(Clone, Debug)]
pub struct Target {
    pub table: Arc<TableDef>,
    pub alias: String,
    /// Position of its first column in the joined row.
    pub offset: usize,
    /// Position of its row key in the joined row.
    pub key_slot: usize,
}

/// `target.column = value`, the value read from the joined row.
#[derive(Clone, Debug)]
pub struct Assignment {
    pub target: usize,
    pub column: usize,
    pub value: Expr,
}

/// The FROM clause's relations and their scope, before any key slot.
fn relations_of(
    from: &[ast::TableWithJoins],
    schema: &Schema,
    database: Option<&str>,
) -> Result<(Vec<Relation>, Scope)> {
    let mut relations = join::from_relations(from, &PlanContext::new(schema, database))?;
    let mut scope = Scope {
        columns: relations.iter().flat_map(join::relation_scope).collect(),
    };
    join::apply_using(&mut relations, &mut scope)?;
    Ok((relations, scope))
}

fn not_updatable(alias: &str, statement: &str) -> Error {
    Error::new(
        1288,
        "HY000",
        format!("The target table {alias} of the {statement} is not updatable"),
    )
}

/// Checks that relation `r` is a stored table a statement may write.
fn writable(relations: &[Relation], r: usize, statement: &str) -> Result<Arc<TableDef>> {
    match &relations[r].source {
        RelationSource::Table(def, None) => Ok(def.clone()),
        RelationSource::Table(_, Some(_)) => {
            Err(error::access_denied_database(crate::infoschema::NAME))
        }
        RelationSource::Derived(_) => Err(not_updatable(&relations[r].alias, statement)),
    }
}

/// Gives each target relation (by index, in FROM order) a key slot after the joined columns,
/// and the scope a hidden column for it.
fn add_key_slots(
    relations: &mut [Relation],
    scope: &mut Scope,
    targets: &[usize],
    statement: &str,
) -> Result<Vec<Target>> {
    let mut sorted = targets.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut out = Vec::with_capacity(sorted.len());
    for r in sorted {
        let table = writable(relations, r, statement)?;
        let key_slot = scope.columns.len();
        scope.columns.push(ScopeColumn {
            table: String::new(),
            name: String::new(),
            ty: ResultType::of(ColumnType::VarString, 0, 0),
            reach: Reach::Nothing,
        });
        relations[r].key_slot = Some(key_slot);
        out.push(Target {
            table,
            alias: relations[r].alias.clone(),
            offset: relations[r].offset,
            key_slot,
        });
    }
    Ok(out)
}

/// Binds the ON and WHERE conditions and plans the join; returns it with the WHERE conditions
/// that read subquery results.
fn plan_join(
    from: &[ast::TableWithJoins],
    mut relations: Vec<Relation>,
    scope: &Scope,
    collector: &Collector,
    selection: Option<&ast::Expr>,
    schema: &Schema,
) -> Result<(JoinPlan, Option<Expr>)> {
    for (relation, on) in relations.iter_mut().zip(join::join_conditions(from)) {
        if let Some(on) = on {
            relation
                .on
                .extend(Binder::new(scope, "on clause").bind(on)?.conjuncts());
        }
    }
    let conjuncts = match selection {
        Some(e) => {
            let mut binder = Binder::new(scope, "where clause");
            binder.subqueries = Some(collector);
            binder.bind(e)?.conjuncts()
        }
        None => Vec::new(),
    };
    let width = scope.columns.len();
    let (conjuncts, post): (Vec<Expr>, Vec<Expr>) = conjuncts
        .into_iter()
        .partition(|c| c.columns().iter().all(|&i| i < width));
    let join = join::plan(relations, conjuncts, schema)?;
    Ok((join, Expr::conjoin(post)))
}

/// The relation whose columns include joined position `i`.
fn relation_at(relations: &[Relation], i: usize) -> Option<usize> {
    relations
        .iter()
        .position(|r| (r.offset..r.offset + r.width).contains(&i))
}

fn column_expr(name: &ast::ObjectName) -> Result<ast::Expr> {
    let parts: Vec<ast::Ident> = name
        .0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => Ok(i.clone()),
            other => Err(error::syntax(format!("near '{other}'"))),
        })
        .collect::<Result<_>>()?;
    Ok(match parts.as_slice() {
        [one] => ast::Expr::Identifier(one.clone()),
        _ => ast::Expr::CompoundIdentifier(parts),
    })
}

/// Plans `UPDATE <table>[, <from>] SET … [WHERE …]` over several tables. `order_and_limit`
/// are the statement's ORDER BY and LIMIT, which MySQL refuses here with 1221.
pub fn plan_joined_update(
    table: &ast::TableWithJoins,
    more: Option<&ast::UpdateTableFromKind>,
    assignments: &[ast::Assignment],
    selection: Option<&ast::Expr>,
    order_and_limit: (&[ast::OrderByExpr], Option<&ast::Expr>),
    schema: &Schema,
    database: Option<&str>,
) -> Result<JoinedWritePlan> {
    let usage = |clause| {
        Error::new(
            1221,
            "HY000",
            format!("Incorrect usage of UPDATE and {clause}"),
        )
    };
    match order_and_limit {
        ([_, ..], _) => return Err(usage("ORDER BY")),
        (_, Some(_)) => return Err(usage("LIMIT")),
        _ => {}
    }
    let mut from = vec![table.clone()];
    if let Some(
        ast::UpdateTableFromKind::BeforeSet(more) | ast::UpdateTableFromKind::AfterSet(more),
    ) = more
    {
        from.extend(more.iter().cloned());
    }
    let from = from.as_slice();
    let (mut relations, mut scope) = relations_of(from, schema, database)?;
    // Each assignment's column, as (relation, column of its table).
    let mut columns = Vec::with_capacity(assignments.len());
    for a in assignments {
        let name = match &a.target {
            ast::AssignmentTarget::ColumnName(name) => name,
            ast::AssignmentTarget::Tuple(_) => return Err(error::unsupported("tuple assignment")),
        };
        let bound = Binder::new(&scope, "field list").bind(&column_expr(name)?)?;
        let Expr::Column(i) = bound else {
            return Err(error::syntax(format!("near '{name}'")));
        };
        let r = relation_at(&relations, i)
            .ok_or_else(|| error::internal("an assigned column outside the joined row"))?;
        writable(&relations, r, "UPDATE")?;
        columns.push((r, i - relations[r].offset));
    }
    let target_relations: Vec<usize> = columns.iter().map(|(r, _)| *r).collect();
    let targets = add_key_slots(&mut relations, &mut scope, &target_relations, "UPDATE")?;
    let target_of = |r: usize| {
        targets
            .iter()
            .position(|t| t.key_slot == relations[r].key_slot.unwrap_or(usize::MAX))
            .expect("every assigned relation is a target")
    };
    let column_targets: Vec<(usize, usize)> =
        columns.iter().map(|&(r, c)| (target_of(r), c)).collect();
    refuse_moving_shared_rows(&targets, &column_targets)?;
    let cx = PlanContext::new(schema, database);
    let collector = Collector::new(&cx, scope.columns.len());
    let mut bound = Vec::with_capacity(assignments.len());
    for (a, (target, column)) in assignments.iter().zip(column_targets) {
        let mut binder = Binder::new(&scope, "field list");
        binder.subqueries = Some(&collector);
        bound.push(Assignment {
            target,
            column,
            value: binder.bind(&a.value)?,
        });
    }
    let (join, post_filter) = plan_join(from, relations, &scope, &collector, selection, schema)?;
    Ok(JoinedWritePlan {
        join,
        subqueries: collector.into_plans(),
        post_filter,
        targets,
        assignments: Some(bound),
    })
}

/// MySQL's 1706: a table updated under two aliases may not have its primary key changed, since
/// the two would then write different rows for one.
fn refuse_moving_shared_rows(targets: &[Target], columns: &[(usize, usize)]) -> Result<()> {
    for &(t, column) in columns {
        let table = &targets[t].table;
        if !table.primary_columns().contains(&column) {
            continue;
        }
        if let Some(other) = targets
            .iter()
            .enumerate()
            .find(|(o, other)| *o != t && other.table.id == table.id)
        {
            return Err(Error::new(
                1706,
                "HY000",
                format!(
                    "Primary key/partition key update is not allowed since the table is updated \
                     both as '{}' and '{}'.",
                    targets[t].alias, other.1.alias
                ),
            ));
        }
    }
    Ok(())
}

/// Plans `DELETE t, … FROM <from> [WHERE …]` and `DELETE FROM t, … USING <from> [WHERE …]`.
pub fn plan_joined_delete(
    delete: &ast::Delete,
    schema: &Schema,
    database: Option<&str>,
) -> Result<JoinedWritePlan> {
    let from = match &delete.from {
        ast::FromTable::WithFromKeyword(f) | ast::FromTable::WithoutKeyword(f) => f,
    };
    let names = &delete.tables;
    let (mut relations, mut scope) = relations_of(from, schema, database)?;
    let mut target_relations = Vec::with_capacity(names.len());
    for name in names {
        let (db, table) = crate::planner::query::qualified_name(name)?;
        let found = relations.iter().position(|r| {
            r.alias.eq_ignore_ascii_case(&table)
                && match (&db, &r.source) {
                    (None, _) => true,
                    (Some(db), RelationSource::Table(def, _)) => {
                        def.database.eq_ignore_ascii_case(db)
                    }
                    (Some(_), RelationSource::Derived(_)) => false,
                }
        });
        let Some(r) = found else {
            return Err(Error::new(
                1109,
                "42S02",
                format!("Unknown table '{table}' in MULTI DELETE"),
            ));
        };
        if target_relations.contains(&r) {
            return Err(Error::new(
                1066,
                "42000",
                format!("Not unique table/alias: '{table}'"),
            ));
        }
        target_relations.push(r);
    }
    let targets = add_key_slots(&mut relations, &mut scope, &target_relations, "DELETE")?;
    let cx = PlanContext::new(schema, database);
    let collector = Collector::new(&cx, scope.columns.len());
    let (join, post_filter) = plan_join(
        from,
        relations,
        &scope,
        &collector,
        delete.selection.as_ref(),
        schema,
    )?;
    Ok(JoinedWritePlan {
        join,
        subqueries: collector.into_plans(),
        post_filter,
        targets,
        assignments: None,
    })
}

/// Runs a planned multiple-table UPDATE or DELETE.
pub fn execute_joined(
    plan: &JoinedWritePlan,
    txn: &mut Transaction,
    w: &WriteCtx,
) -> Result<WriteResult> {
    let ctx = w.ctx;
    let mut rows = crate::executor::join::execute(&plan.join, txn, ctx)?;
    crate::executor::apply::apply(&plan.subqueries, &mut rows, txn, ctx)?;
    if plan.post_filter.is_some() {
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            if holds(plan.post_filter.as_ref(), &row, ctx)? {
                kept.push(row);
            }
        }
        rows = kept;
    }
    let mut result = WriteResult::default();
    let mut locks = Vec::new();
    // What each row written so far now holds (None: deleted), for a table that is a target
    // under more than one alias.
    let mut written: HashMap<Key, Option<Vec<Datum>>> = HashMap::new();
    for (t, target) in plan.targets.iter().enumerate() {
        let table = &*target.table;
        let columns = target.offset..target.offset + table.columns.len();
        let mut seen: HashSet<&[u8]> = HashSet::new();
        for row in &rows {
            // A NULL key: an outer join padded this table's side of the row.
            let Datum::Bytes(key) = &row[target.key_slot] else {
                continue;
            };
            if !seen.insert(key) {
                continue;
            }
            let stored = match written.get(key.as_slice()) {
                Some(Some(current)) => current.clone(),
                Some(None) => continue,
                None => row[columns.clone()].to_vec(),
            };
            let key: Key = key.clone();
            match &plan.assignments {
                None => {
                    delete_row(txn, table, &key, &stored, &mut locks)?;
                    result.affected_rows += 1;
                    result.matched_rows += 1;
                    written.insert(key, None);
                }
                Some(assignments) => {
                    result.matched_rows += 1;
                    let mut input = row.clone();
                    input[columns.clone()].clone_from_slice(&stored);
                    for a in assignments.iter().filter(|a| a.target == t) {
                        let def = &table.columns[a.column];
                        let value = def.ty.coerce(a.value.eval(&input, ctx)?, &def.name)?;
                        input[target.offset + a.column] = value;
                    }
                    let new = input[columns.clone()].to_vec();
                    if update_row(txn, table, &key, &stored, &new, &mut locks)? {
                        result.affected_rows += 1;
                    }
                    written.insert(key, Some(new));
                }
            }
        }
    }
    lock(txn, locks, w)?;
    Ok(result)
}
