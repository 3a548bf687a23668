//! INSERT, UPDATE and DELETE through a view, as MySQL allows them for a view over one table
//! without grouping, DISTINCT, LIMIT or subqueries: the statement is rewritten to write the
//! table. Names of the view's columns become the expressions the view gives them (an UPDATE
//! may set, and an INSERT fill, only those that are plain columns), and the view's WHERE joins
//! the statement's, so rows the view does not show are not written.
//!
//! A view `WITH CHECK OPTION` would also have to refuse rows it would not show afterwards;
//! writes through one are refused instead.

use std::ops::ControlFlow;

use sqlparser::ast::{
    self, AssignmentTarget, FromTable, Ident, ObjectName, ObjectNamePart, OnInsert, SelectItem,
    SetExpr, Statement, TableFactor, TableObject, TableWithJoins, VisitMut, VisitorMut,
};

use crate::catalog::{Schema, ViewDef};
use crate::error::{Error, Result};
use crate::planner::physical::Plan;
use crate::planner::query;

use super::{parse_definition, refuse_write, VIEW_NESTING_MAX};

/// What a view over one table writes.
struct Writable {
    /// The table (or the view under this one), with the alias the view's FROM gave it.
    table: TableFactor,
    /// For each column of the view: its name, the expression it reads, and the table column
    /// when it is a plain one.
    columns: Vec<(String, ast::Expr, Option<Ident>)>,
    /// The view's WHERE.
    filter: Option<ast::Expr>,
}

/// `statement` rewritten to write the table under the view it names (through views of views
/// too); None when it writes no view.
pub fn through_view(
    statement: &Statement,
    schema: &Schema,
    database: Option<&str>,
) -> Result<Option<Statement>> {
    if schema.views.is_empty() {
        return Ok(None);
    }
    let mut rewritten: Option<Statement> = None;
    for _ in 0..VIEW_NESTING_MAX {
        match rewrite_once(rewritten.as_ref().unwrap_or(statement), schema, database)? {
            Some(next) => rewritten = Some(next),
            None => return Ok(rewritten),
        }
    }
    Err(Error::new(
        super::RECURSIVE_CODE,
        "HY000",
        "A view written to contains view recursion",
    ))
}

fn rewrite_once(
    statement: &Statement,
    schema: &Schema,
    database: Option<&str>,
) -> Result<Option<Statement>> {
    let view = |name: &ObjectName| -> Result<Option<&ViewDef>> {
        let (db, table) = match query::qualified_name(name)? {
            (Some(db), table) => (db, table),
            (None, table) => match database {
                Some(db) => (db.to_string(), table),
                None => return Ok(None),
            },
        };
        Ok(schema.view(&db, &table).map(|v| v.as_ref()))
    };
    match statement {
        Statement::Insert(insert) => {
            let TableObject::TableName(name) = &insert.table else {
                return Ok(None);
            };
            let Some(view) = view(name)? else {
                return Ok(None);
            };
            let writable = writable(view, schema, "INSERT")?;
            let refused = || refuse_write(schema, &view.database, &view.name, "INSERT");
            let mut insert = insert.clone();
            let named: Vec<String> = if insert.columns.is_empty() && insert.assignments.is_empty() {
                writable.columns.iter().map(|(n, ..)| n.clone()).collect()
            } else {
                insert.columns.iter().map(|c| c.value.clone()).collect()
            };
            insert.columns = named
                .iter()
                .map(|n| {
                    writable
                        .plain_column(n)
                        .ok_or_else(|| refused().expect("a view"))
                })
                .collect::<Result<_>>()?;
            for assignment in &mut insert.assignments {
                writable.retarget(assignment, &view.name)?;
            }
            if let Some(OnInsert::DuplicateKeyUpdate(assignments)) = &mut insert.on {
                for assignment in assignments {
                    writable.retarget(assignment, &view.name)?;
                }
            }
            insert.table = TableObject::TableName(table_name(&writable.table));
            Ok(Some(Statement::Insert(insert)))
        }
        Statement::Update {
            table,
            assignments,
            from: None,
            selection,
            returning,
            or,
            limit,
        } if table.joins.is_empty() => {
            let TableFactor::Table { name, alias, .. } = &table.relation else {
                return Ok(None);
            };
            let Some(view) = view(name)? else {
                return Ok(None);
            };
            let writable = writable(view, schema, "UPDATE")?;
            let qualifier = alias.as_ref().map_or(&view.name, |a| &a.name.value);
            let mut assignments = assignments.clone();
            for assignment in &mut assignments {
                writable.retarget(assignment, qualifier)?;
            }
            Ok(Some(Statement::Update {
                table: TableWithJoins {
                    relation: writable.table.clone(),
                    joins: Vec::new(),
                },
                assignments,
                from: None,
                selection: writable.filter_with(selection.as_ref(), qualifier),
                returning: returning.clone(),
                or: *or,
                limit: limit.clone(),
            }))
        }
        Statement::Delete(delete) if delete.tables.is_empty() && delete.using.is_none() => {
            let (FromTable::WithFromKeyword(from) | FromTable::WithoutKeyword(from)) = &delete.from;
            let [only] = from.as_slice() else {
                return Ok(None);
            };
            let TableFactor::Table { name, alias, .. } = &only.relation else {
                return Ok(None);
            };
            if !only.joins.is_empty() {
                return Ok(None);
            }
            let Some(view) = view(name)? else {
                return Ok(None);
            };
            let writable = writable(view, schema, "DELETE")?;
            let qualifier = alias.as_ref().map_or(&view.name, |a| &a.name.value);
            let mut delete = delete.clone();
            delete.from = FromTable::WithFromKeyword(vec![TableWithJoins {
                relation: writable.table.clone(),
                joins: Vec::new(),
            }]);
            delete.selection = writable.filter_with(delete.selection.as_ref(), qualifier);
            for item in &mut delete.order_by {
                writable.rename(&mut item.expr, qualifier);
            }
            Ok(Some(Statement::Delete(delete)))
        }
        _ => Ok(None),
    }
}

/// What `view` writes, or the error of `statement` ("INSERT", "UPDATE", …) when it cannot be
/// written.
fn writable(view: &ViewDef, schema: &Schema, statement: &str) -> Result<Writable> {
    let refused =
        || refuse_write(schema, &view.database, &view.name, statement).expect("the view exists");
    if view.check_option != "NONE" {
        return Err(refused());
    }
    let query = parse_definition(&view.definition)?;
    let plan = query::plan_select(&query, schema, Some(&view.database))?;
    let computed = |node: &Plan| {
        matches!(
            node,
            Plan::HashAgg { .. } | Plan::Distinct { .. } | Plan::Window { .. } | Plan::Apply { .. }
        )
    };
    if plan.has(computed) {
        return Err(refused());
    }
    let SetExpr::Select(select) = query.body.as_ref() else {
        return Err(refused());
    };
    if query.with.is_some() || query.limit_clause.is_some() || query.fetch.is_some() {
        return Err(refused());
    }
    let [from] = select.from.as_slice() else {
        return Err(refused());
    };
    let TableFactor::Table {
        name, alias, args, ..
    } = &from.relation
    else {
        return Err(refused());
    };
    if !from.joins.is_empty() || args.is_some() {
        return Err(refused());
    }
    // What it reads is a table, or a view that the next rewrite takes through to its table.
    let (db, table_name) = query::split_name(name, Some(&view.database))?;
    let read_columns: Vec<String> = match schema.view(&db, &table_name) {
        Some(inner) => inner.columns.clone(),
        None => schema
            .table(&db, &table_name)?
            .visible_columns()
            .map(|(_, c)| c.name.clone())
            .collect(),
    };
    let mut exprs = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                exprs.push(e.clone())
            }
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => exprs.extend(
                read_columns
                    .iter()
                    .map(|c| ast::Expr::Identifier(Ident::with_quote('`', c))),
            ),
        }
    }
    if exprs.len() != view.columns.len() {
        return Err(super::invalid(view));
    }
    let columns = view
        .columns
        .iter()
        .zip(exprs)
        .map(|(name, e)| {
            let plain = match &e {
                ast::Expr::Identifier(i) => Some(i.clone()),
                ast::Expr::CompoundIdentifier(parts) => parts.last().cloned(),
                _ => None,
            };
            (name.clone(), e, plain)
        })
        .collect();
    Ok(Writable {
        table: crate::parser::synth::table(
            ObjectName(vec![
                ObjectNamePart::Identifier(Ident::with_quote('`', &db)),
                ObjectNamePart::Identifier(Ident::with_quote('`', &table_name)),
            ]),
            alias.clone(),
        ),
        columns,
        filter: select.selection.clone(),
    })
}

fn table_name(table: &TableFactor) -> ObjectName {
    match table {
        TableFactor::Table { name, .. } => name.clone(),
        _ => unreachable!("a view writes a table"),
    }
}

impl Writable {
    fn column(&self, name: &str) -> Option<&(String, ast::Expr, Option<Ident>)> {
        self.columns
            .iter()
            .find(|(n, ..)| n.eq_ignore_ascii_case(name))
    }

    /// The table column view column `name` is, when it is a plain one.
    fn plain_column(&self, name: &str) -> Option<Ident> {
        self.column(name).and_then(|(_, _, plain)| plain.clone())
    }

    /// Makes an assignment to a view column one to its table column (ER_NONUPDATEABLE_COLUMN
    /// when it is an expression, 1054 when the view has no such column).
    fn retarget(&self, assignment: &mut ast::Assignment, qualifier: &str) -> Result<()> {
        let AssignmentTarget::ColumnName(target) = &mut assignment.target else {
            return Err(crate::error::unsupported("assigning a tuple of columns"));
        };
        let name = match target.0.last() {
            Some(ObjectNamePart::Identifier(i)) => i.value.clone(),
            _ => target.to_string(),
        };
        let Some((_, _, plain)) = self.column(&name) else {
            return Err(crate::error::unknown_column(&name, "field list"));
        };
        let Some(column) = plain else {
            return Err(Error::new(
                1348,
                "HY000",
                format!("Column '{name}' is not updatable"),
            ));
        };
        *target = ObjectName(vec![ObjectNamePart::Identifier(column.clone())]);
        self.rename(&mut assignment.value, qualifier);
        Ok(())
    }

    /// The view's WHERE and the statement's (renamed), both holding.
    fn filter_with(&self, selection: Option<&ast::Expr>, qualifier: &str) -> Option<ast::Expr> {
        let selection = selection.cloned().map(|mut e| {
            self.rename(&mut e, qualifier);
            e
        });
        match (self.filter.clone(), selection) {
            (Some(view), Some(statement)) => Some(ast::Expr::BinaryOp {
                left: Box::new(ast::Expr::Nested(Box::new(view))),
                op: ast::BinaryOperator::And,
                right: Box::new(ast::Expr::Nested(Box::new(statement))),
            }),
            (view, statement) => view.or(statement),
        }
    }

    /// Replaces the view's columns in `e` (by name, or qualified by `qualifier`) with the
    /// expressions they read; subqueries in `e` keep their own names.
    fn rename(&self, e: &mut ast::Expr, qualifier: &str) {
        let mut renamer = Renamer {
            writable: self,
            qualifier,
            depth: 0,
        };
        let _ = e.visit(&mut renamer);
    }
}

struct Renamer<'a> {
    writable: &'a Writable,
    qualifier: &'a str,
    /// Subqueries entered.
    depth: usize,
}

impl VisitorMut for Renamer<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, _query: &mut ast::Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }

    fn post_visit_query(&mut self, _query: &mut ast::Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }

    // After the operands: a replacement is not visited again.
    fn post_visit_expr(&mut self, e: &mut ast::Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        let name = match e {
            ast::Expr::Identifier(i) => Some(&i.value),
            ast::Expr::CompoundIdentifier(parts) => match parts.as_slice() {
                [q, i] if q.value.eq_ignore_ascii_case(self.qualifier) => Some(&i.value),
                _ => None,
            },
            _ => None,
        };
        if let Some((_, read, _)) = name.and_then(|n| self.writable.column(n)) {
            *e = ast::Expr::Nested(Box::new(read.clone()));
        }
        ControlFlow::Continue(())
    }
}
