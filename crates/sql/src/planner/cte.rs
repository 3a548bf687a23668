//! Common table expressions (`WITH name [(columns)] AS (query), … query`).
//!
//! A non-recursive CTE is a derived table with a name: each reference to it in the query (its
//! subqueries included) becomes that derived table, under the reference's alias or the CTE's
//! name, and its column list renames the derived table's columns. A CTE may use the CTEs
//! before it in its WITH clause.
//!
//! A recursive CTE (`WITH RECURSIVE`, naming itself) is a union of seed SELECTs and recursive
//! ones. It is planned where the query names it: the seeds first, then the recursive parts,
//! in which its name reads a table of the rows the round before added (`MemoryRows`). See
//! the executor's union operator for the rounds. While a query is planned, the recursive CTEs
//! in its scope and the working tables of those being planned are kept in its
//! [`PlanContext`] ([`CteScope`]).

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::sync::Arc;

use sqlparser::ast::{self, ObjectNamePart, TableAlias, TableFactor, Visit, VisitMut, VisitorMut};

use crate::api::ColumnType;
use crate::catalog::TableDef;
use crate::error::{self, Error, Result};
use crate::expr::ResultType;
use crate::infoschema::MemoryRows;
use crate::planner::join::RelationSource;
use crate::planner::physical::SelectPlan;
use crate::planner::query::{self, PlanContext};
use crate::types::{SqlType, TypeKind};

/// One CTE: its name, its query (references to earlier CTEs replaced), its column names.
struct Definition {
    name: String,
    query: ast::Query,
    columns: Vec<ast::TableAliasColumnDef>,
}

/// The one-part table name a FROM item names, with its alias.
fn table_name(factor: &TableFactor) -> Option<(&ast::Ident, &Option<TableAlias>)> {
    match factor {
        TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } => match name.0.as_slice() {
            [ObjectNamePart::Identifier(ident)] => Some((ident, alias)),
            _ => None,
        },
        _ => None,
    }
}

/// Replaces references to `definitions` with their derived tables.
struct Inline<'a> {
    definitions: &'a [Definition],
}

impl Inline<'_> {
    fn definition(&self, name: &ast::Ident) -> Option<&Definition> {
        self.definitions
            .iter()
            .find(|d| d.name.eq_ignore_ascii_case(&name.value))
    }
}

impl VisitorMut for Inline<'_> {
    type Break = ();

    // After the children: the derived table put in is not visited again, so a CTE's query
    // sees only the CTEs before it.
    fn post_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        let Some((name, alias)) = table_name(factor) else {
            return ControlFlow::Continue(());
        };
        let Some(definition) = self.definition(name) else {
            return ControlFlow::Continue(());
        };
        let alias = match alias.clone() {
            Some(alias) if alias.columns.is_empty() => TableAlias {
                name: alias.name,
                columns: definition.columns.clone(),
            },
            Some(alias) => alias,
            None => TableAlias {
                name: ast::Ident::new(definition.name.clone()),
                columns: definition.columns.clone(),
            },
        };
        *factor = TableFactor::Derived {
            lateral: false,
            subquery: Box::new(definition.query.clone()),
            alias: Some(alias),
        };
        ControlFlow::Continue(())
    }
}

/// Whether `query` names a table `name` (a CTE's reference to itself).
fn refers_to(query: &impl Visit, name: &str) -> bool {
    let mut found = false;
    let _ = ast::visit_relations(query, |relation| {
        if let [ObjectNamePart::Identifier(ident)] = relation.0.as_slice() {
            if ident.value.eq_ignore_ascii_case(name) {
                found = true;
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    });
    found
}

/// A recursive CTE of a query being planned.
#[derive(Clone)]
struct RecursiveCte {
    name: String,
    query: ast::Query,
    columns: Vec<ast::TableAliasColumnDef>,
}

/// The recursive CTEs a statement's planning has in scope (part of its
/// [`PlanContext`]).
#[derive(Default)]
pub struct CteScope {
    /// The recursive CTEs in scope of the queries being planned, innermost last.
    recursive: RefCell<Vec<RecursiveCte>>,
    /// The working tables of the recursive CTEs whose recursive parts are being planned.
    working: RefCell<Vec<(String, Arc<TableDef>, MemoryRows)>>,
}

/// A query with its WITH clause inlined, and the recursive CTEs it may name.
pub struct Inlined {
    pub query: ast::Query,
    recursive: Vec<RecursiveCte>,
}

/// Keeps recursive CTEs in scope until dropped.
pub struct InScope<'s>(&'s CteScope, usize);

impl Drop for InScope<'_> {
    fn drop(&mut self) {
        let mut recursive = self.0.recursive.borrow_mut();
        let keep = recursive.len() - self.1;
        recursive.truncate(keep);
    }
}

impl Inlined {
    /// Puts the recursive CTEs in `scope` while the query is planned.
    pub fn enter<'s>(&self, scope: &'s CteScope) -> InScope<'s> {
        scope
            .recursive
            .borrow_mut()
            .extend(self.recursive.iter().cloned());
        InScope(scope, self.recursive.len())
    }
}

/// `query` with its WITH clause inlined, or `None` if it has none.
pub fn inline(query: &ast::Query) -> Result<Option<Inlined>> {
    let Some(with) = &query.with else {
        return Ok(None);
    };
    let mut definitions: Vec<Definition> = Vec::new();
    let mut recursive: Vec<RecursiveCte> = Vec::new();
    for cte in &with.cte_tables {
        let name = cte.alias.name.value.clone();
        let taken = definitions
            .iter()
            .any(|d| d.name.eq_ignore_ascii_case(&name))
            || recursive.iter().any(|d| d.name.eq_ignore_ascii_case(&name));
        if taken {
            return Err(Error::new(
                1066,
                "42000",
                format!("Not unique table/alias: '{name}'"),
            ));
        }
        let mut body = (*cte.query).clone();
        let _ = VisitMut::visit(
            &mut body,
            &mut Inline {
                definitions: &definitions,
            },
        );
        if with.recursive && refers_to(&body, &name) {
            recursive.push(RecursiveCte {
                name,
                query: body,
                columns: cte.alias.columns.clone(),
            });
        } else {
            definitions.push(Definition {
                name,
                query: body,
                columns: cte.alias.columns.clone(),
            });
        }
    }
    let mut main = query.clone();
    main.with = None;
    let _ = VisitMut::visit(
        &mut main,
        &mut Inline {
            definitions: &definitions,
        },
    );
    Ok(Some(Inlined {
        query: main,
        recursive,
    }))
}

/// The relation a FROM item names when it names a recursive CTE in scope (planned here) or,
/// inside that CTE's recursive parts, its working table.
pub fn resolve(factor: &TableFactor, cx: &PlanContext) -> Result<Option<(String, RelationSource)>> {
    let Some((ident, alias)) = table_name(factor) else {
        return Ok(None);
    };
    let named = |n: &str| n.eq_ignore_ascii_case(&ident.value);
    let alias = alias
        .as_ref()
        .map_or_else(|| ident.value.clone(), |a| a.name.value.clone());
    let working = cx
        .ctes
        .working
        .borrow()
        .iter()
        .rev()
        .find(|(n, ..)| named(n))
        .map(|(_, def, rows)| (def.clone(), rows.clone()));
    if let Some((def, rows)) = working {
        return Ok(Some((alias, RelationSource::Table(def, Some(rows)))));
    }
    let cte = cx
        .ctes
        .recursive
        .borrow()
        .iter()
        .rev()
        .find(|c| named(&c.name))
        .cloned();
    match cte {
        Some(cte) => {
            let plan = plan_recursive(&cte, cx)?;
            Ok(Some((alias, RelationSource::Derived(Box::new(plan)))))
        }
        None => Ok(None),
    }
}

/// The stored type a working table column gets for a seed's result type.
fn sql_type(ty: &ResultType) -> SqlType {
    use ColumnType as C;
    let (kind, length, scale) = match ty.column_type {
        C::Tiny | C::Short | C::Int24 | C::Long | C::LongLong => (TypeKind::BigInt, 20, 0),
        C::Float | C::Double => (TypeKind::Double, 22, 0),
        C::NewDecimal => (TypeKind::Decimal, 65, u32::from(ty.decimals).min(30)),
        C::Date => (TypeKind::Date, 10, 0),
        C::DateTime => (TypeKind::DateTime, 19, u32::from(ty.decimals).min(6)),
        C::Timestamp => (TypeKind::Timestamp, 19, u32::from(ty.decimals).min(6)),
        C::Time => (TypeKind::Time, 10, u32::from(ty.decimals).min(6)),
        C::Json => (TypeKind::Json, 0, 0),
        C::Year => (TypeKind::Year, 4, 0),
        C::Bit => (TypeKind::BigInt, 20, 0),
        C::VarString | C::String | C::Blob | C::Null => (TypeKind::Text, 65_535, 0),
    };
    SqlType {
        kind,
        unsigned: ty.unsigned,
        length,
        scale,
        members: Vec::new(),
        binary: false,
    }
}

/// Takes a working table out of scope when dropped.
struct Working<'s>(&'s CteScope);

impl Drop for Working<'_> {
    fn drop(&mut self) {
        self.0.working.borrow_mut().pop();
    }
}

fn shape_error(name: &str) -> Error {
    Error::new(
        3573,
        "HY000",
        format!(
            "Recursive Common Table Expression '{name}' should have one or more non-recursive \
             query blocks followed by one or more recursive ones"
        ),
    )
}

/// Plans a recursive CTE: its seeds, its working table, then its recursive parts.
fn plan_recursive(cte: &RecursiveCte, cx: &PlanContext) -> Result<SelectPlan> {
    if cte.query.order_by.is_some() || cte.query.limit_clause.is_some() {
        return Err(error::unsupported("ORDER BY or LIMIT in a recursive CTE"));
    }
    let mut bodies = Vec::new();
    crate::planner::union::flatten(&cte.query.body, &mut bodies)?;
    let seeds = bodies
        .iter()
        .take_while(|(body, _)| !refers_to(*body, &cte.name))
        .count();
    if seeds == 0 || seeds == bodies.len() {
        return Err(shape_error(&cte.name));
    }
    if bodies[seeds..]
        .iter()
        .any(|(body, _)| !refers_to(*body, &cte.name))
    {
        return Err(shape_error(&cte.name));
    }
    let distinct = bodies.iter().skip(1).any(|(_, distinct)| *distinct);
    let plan_part = |body: &ast::SetExpr| {
        let mut part = cte.query.clone();
        *part.body = body.clone();
        query::plan_select_in(&part, cx, None)
    };
    let mut parts = bodies[..seeds]
        .iter()
        .map(|(body, _)| plan_part(body))
        .collect::<Result<Vec<_>>>()?;
    let seed = &parts[0];
    let names: Vec<String> = if cte.columns.is_empty() {
        seed.columns.iter().map(|c| c.name.clone()).collect()
    } else if cte.columns.len() == seed.columns.len() {
        cte.columns.iter().map(|c| c.name.value.clone()).collect()
    } else {
        return Err(Error::new(
            1353,
            "HY000",
            "In definition of view, derived table or common table expression, SELECT list and \
             column names list have different column counts",
        ));
    };
    let columns = names
        .iter()
        .zip(&seed.result_types)
        .map(|(name, ty)| (name.clone(), sql_type(ty)));
    let def = TableDef::computed("", &cte.name, columns);
    let working = MemoryRows::default();
    cx.ctes
        .working
        .borrow_mut()
        .push((cte.name.clone(), Arc::new(def), working.clone()));
    let in_scope = Working(&cx.ctes);
    for (body, _) in &bodies[seeds..] {
        parts.push(plan_part(body)?);
    }
    drop(in_scope);
    let mut plan = crate::planner::union::plan_parts(parts, 0)?;
    if let crate::planner::physical::Plan::Union(union) = &mut plan.root {
        union.recursion = Some(crate::planner::union::Recursion {
            seeds,
            working,
            distinct,
        });
    }
    let columns: Vec<_> = plan
        .columns
        .iter()
        .zip(&names)
        .map(|(c, name)| crate::api::ColumnInfo {
            name: name.clone(),
            ..c.clone()
        })
        .collect();
    plan.columns = columns.into();
    Ok(plan)
}
