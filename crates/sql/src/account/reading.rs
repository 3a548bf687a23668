//! What a statement reads and writes, read off its syntax tree before it is planned: the
//! tables it names, their aliases, the column names it uses and its `*`s, for the check of
//! privileges ([`super::check`]).

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{self, ObjectName, TableFactor, TableWithJoins, Visit, Visitor};

use super::check::ColumnUse;

/// The table a factor names, if it names one.
pub(super) fn relation_name(factor: &TableFactor) -> Option<&ObjectName> {
    match factor {
        TableFactor::Table { name, .. } => Some(name),
        _ => None,
    }
}

/// The table behind a multiple-table DELETE's target, which may be an alias of `from`.
pub(super) fn unalias(name: &ObjectName, from: &[TableWithJoins]) -> ObjectName {
    let text = name.to_string();
    let factors = from
        .iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)));
    for factor in factors {
        if let TableFactor::Table {
            name: table,
            alias: Some(alias),
            ..
        } = factor
        {
            if alias.name.value.eq_ignore_ascii_case(&text) {
                return table.clone();
            }
        }
    }
    name.clone()
}

/// Each assignment's column, with its qualifier (a table's name or alias) if it has one.
pub(super) fn assigned(
    assignments: &[ast::Assignment],
) -> impl Iterator<Item = (Option<ObjectName>, String)> + '_ {
    assignments
        .iter()
        .flat_map(|a| match &a.target {
            ast::AssignmentTarget::ColumnName(name) => std::slice::from_ref(name),
            ast::AssignmentTarget::Tuple(names) => names.as_slice(),
        })
        .filter_map(|name| {
            let parts: Vec<String> = name
                .0
                .iter()
                .filter_map(|p| p.as_ident().map(|i| i.value.clone()))
                .collect();
            let (column, qualifier) = parts.split_last()?;
            let qualifier = (!qualifier.is_empty()).then(|| {
                ObjectName::from(qualifier.iter().map(ast::Ident::new).collect::<Vec<_>>())
            });
            Some((qualifier, column.clone()))
        })
}

/// What a statement reads: its tables, the names of its common table expressions, the
/// aliases of its tables, the column names it uses and its `*`s.
#[derive(Default)]
pub(super) struct Relations {
    pub(super) tables: Vec<ObjectName>,
    pub(super) ctes: HashSet<String>,
    /// Each aliased table's name and alias.
    aliases: Vec<(ObjectName, String)>,
    /// Each column reference's parts (`c`, `t.c`, `db.t.c`).
    columns: Vec<Vec<String>>,
    /// The tables a `*` reads every column of: those of its SELECT's FROM, or the table its
    /// qualifier names.
    wildcards: Vec<ObjectName>,
    /// The names in ORDER BY and HAVING that name a column of the select list by its alias
    /// (`SELECT name AS salary … ORDER BY salary`), which are no columns of a table.
    alias_refs: HashSet<*const ast::Expr>,
}

impl Relations {
    /// The columns of `name` (a table read, named `table`) the statement uses.
    pub(super) fn columns_of(&self, name: &ObjectName, table: &str) -> ColumnUse {
        if self.wildcards.contains(name)
            || self
                .wildcards
                .iter()
                .any(|w| w.0.len() == 1 && self.names_table(&w.to_string(), name, table))
        {
            return ColumnUse::Every;
        }
        let mut named = Vec::new();
        for parts in &self.columns {
            let Some((column, qualifier)) = parts.split_last() else {
                continue;
            };
            let ours = match qualifier {
                [] => true,
                [q] => self.names_table(q, name, table),
                [.., db, q] => {
                    q.eq_ignore_ascii_case(table)
                        && name.0.len() > 1
                        && name.0[0].as_ident().is_some_and(|d| d.value == *db)
                }
            };
            if ours
                && !named
                    .iter()
                    .any(|n: &String| n.eq_ignore_ascii_case(column))
            {
                named.push(column.clone());
            }
        }
        ColumnUse::Named(named)
    }

    /// Whether `qualifier` names the table `name` (`table` unqualified): its name, or one of
    /// its aliases.
    fn names_table(&self, qualifier: &str, name: &ObjectName, table: &str) -> bool {
        let qualifier = qualifier.trim_matches('`');
        qualifier.eq_ignore_ascii_case(table)
            || self
                .aliases
                .iter()
                .any(|(t, alias)| t == name && alias.eq_ignore_ascii_case(qualifier))
    }

    /// Notes each name in `exprs` (outside function calls, whose arguments name columns)
    /// that is one of `aliases` as a name of the select list.
    fn note_alias_refs<'e>(
        &mut self,
        exprs: impl Iterator<Item = &'e ast::Expr>,
        aliases: &[&str],
    ) {
        let mut refs = AliasRefs {
            aliases,
            calls: 0,
            found: &mut self.alias_refs,
        };
        for expr in exprs {
            let _ = expr.visit(&mut refs);
        }
    }

    /// The `*`s of `body`'s SELECTs, and the names of their select lists' aliases in HAVING
    /// and in `order_by` (the ORDER BY of the query whose body it is).
    fn wildcards_of(&mut self, body: &ast::SetExpr, order_by: Option<&ast::OrderBy>) {
        match body {
            ast::SetExpr::Select(select) => {
                let aliases: Vec<&str> = select
                    .projection
                    .iter()
                    .filter_map(|item| match item {
                        ast::SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.as_str()),
                        _ => None,
                    })
                    .collect();
                if !aliases.is_empty() {
                    if let Some(ast::OrderByKind::Expressions(order)) = order_by.map(|o| &o.kind) {
                        self.note_alias_refs(order.iter().map(|o| &o.expr), &aliases);
                    }
                    self.note_alias_refs(select.having.iter(), &aliases);
                }
                for item in &select.projection {
                    match item {
                        ast::SelectItem::Wildcard(_) => {
                            for from in &select.from {
                                let factors = std::iter::once(&from.relation)
                                    .chain(from.joins.iter().map(|j| &j.relation));
                                self.wildcards
                                    .extend(factors.filter_map(relation_name).cloned());
                            }
                        }
                        ast::SelectItem::QualifiedWildcard(
                            ast::SelectItemQualifiedWildcardKind::ObjectName(name),
                            _,
                        ) => self.wildcards.push(name.clone()),
                        _ => {}
                    }
                }
            }
            ast::SetExpr::SetOperation { left, right, .. } => {
                self.wildcards_of(left, None);
                self.wildcards_of(right, None);
            }
            _ => {}
        }
    }
}

/// Finds the names of select-list aliases in an expression, outside function calls.
struct AliasRefs<'a> {
    aliases: &'a [&'a str],
    calls: usize,
    found: &'a mut HashSet<*const ast::Expr>,
}

impl Visitor for AliasRefs<'_> {
    type Break = ();

    fn pre_visit_expr(&mut self, expr: &ast::Expr) -> ControlFlow<()> {
        match expr {
            ast::Expr::Function(_) => self.calls += 1,
            ast::Expr::Identifier(name)
                if self.calls == 0
                    && self
                        .aliases
                        .iter()
                        .any(|a| a.eq_ignore_ascii_case(&name.value)) =>
            {
                self.found.insert(expr as *const ast::Expr);
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn post_visit_expr(&mut self, expr: &ast::Expr) -> ControlFlow<()> {
        if let ast::Expr::Function(_) = expr {
            self.calls -= 1;
        }
        ControlFlow::Continue(())
    }
}

impl Visitor for Relations {
    type Break = ();

    fn pre_visit_query(&mut self, query: &ast::Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                self.ctes.insert(cte.alias.name.value.to_ascii_lowercase());
            }
        }
        self.wildcards_of(&query.body, query.order_by.as_ref());
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<()> {
        self.tables.push(relation.clone());
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table {
            name,
            alias: Some(alias),
            ..
        } = factor
        {
            self.aliases.push((name.clone(), alias.name.value.clone()));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, expr: &ast::Expr) -> ControlFlow<()> {
        if self.alias_refs.contains(&(expr as *const ast::Expr)) {
            return ControlFlow::Continue(());
        }
        match expr {
            ast::Expr::Identifier(ident) => self.columns.push(vec![ident.value.clone()]),
            ast::Expr::CompoundIdentifier(parts) => self
                .columns
                .push(parts.iter().map(|p| p.value.clone()).collect()),
            _ => {}
        }
        ControlFlow::Continue(())
    }
}
