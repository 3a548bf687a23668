//! Common table expressions (`WITH name [(columns)] AS (query), … query`).
//!
//! A non-recursive CTE is a derived table with a name: each reference to it in the query (its
//! subqueries included) becomes that derived table, under the reference's alias or the CTE's
//! name, and its column list renames the derived table's columns. A CTE may use the CTEs
//! before it in its WITH clause. A recursive one (`WITH RECURSIVE` naming itself) is refused.

use std::ops::ControlFlow;

use sqlparser::ast::{self, ObjectNamePart, TableAlias, TableFactor, VisitMut, VisitorMut};

use crate::api::SqlError;
use crate::error::{self, Result};

/// One CTE: its name, its query (references to earlier CTEs replaced), its column names.
struct Definition {
    name: String,
    query: ast::Query,
    columns: Vec<ast::TableAliasColumnDef>,
}

/// Replaces references to `definitions` with their derived tables.
struct Inline<'a> {
    definitions: &'a [Definition],
}

impl Inline<'_> {
    fn definition(&self, name: &ast::ObjectName) -> Option<&Definition> {
        match name.0.as_slice() {
            [ObjectNamePart::Identifier(ident)] => self
                .definitions
                .iter()
                .find(|d| d.name.eq_ignore_ascii_case(&ident.value)),
            _ => None,
        }
    }
}

impl VisitorMut for Inline<'_> {
    type Break = ();

    // After the children: the derived table put in is not visited again, so a CTE's query
    // sees only the CTEs before it.
    fn post_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        let TableFactor::Table {
            name,
            alias,
            args: None,
            ..
        } = factor
        else {
            return ControlFlow::Continue(());
        };
        let Some(definition) = self.definition(name) else {
            return ControlFlow::Continue(());
        };
        let alias = match alias.take() {
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
fn refers_to(query: &ast::Query, name: &str) -> bool {
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

/// `query` with its WITH clause inlined, or `None` if it has none.
pub fn inline(query: &ast::Query) -> Result<Option<ast::Query>> {
    let Some(with) = &query.with else {
        return Ok(None);
    };
    let mut definitions: Vec<Definition> = Vec::new();
    for cte in &with.cte_tables {
        let name = cte.alias.name.value.clone();
        if definitions
            .iter()
            .any(|d| d.name.eq_ignore_ascii_case(&name))
        {
            return Err(SqlError::new(
                1066,
                "42000",
                format!("Not unique table/alias: '{name}'"),
            ));
        }
        if with.recursive && refers_to(&cte.query, &name) {
            return Err(error::unsupported("recursive common table expressions"));
        }
        let mut body = (*cte.query).clone();
        let _ = body.visit(&mut Inline {
            definitions: &definitions,
        });
        definitions.push(Definition {
            name,
            query: body,
            columns: cte.alias.columns.clone(),
        });
    }
    let mut main = query.clone();
    main.with = None;
    let _ = main.visit(&mut Inline {
        definitions: &definitions,
    });
    Ok(Some(main))
}
