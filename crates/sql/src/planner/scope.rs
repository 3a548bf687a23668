//! The names in scope of a query block's expressions: its columns ([`Scope`]) and those of
//! the queries around a subquery ([`OuterScope`]), which the binder
//! ([`crate::planner::bind`]) resolves names against.

use crate::error::{self, Result};
use crate::expr::ResultType;

/// One column visible to expressions.
#[derive(Clone, Debug)]
pub struct ScopeColumn {
    /// The table's alias (or name) that qualifies the column.
    pub table: String,
    pub name: String,
    pub ty: ResultType,
    pub reach: Reach,
}

/// Which names reach a column in scope, and whether `*` lists it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Its name, qualified or not; `*` lists it.
    Any,
    /// Only its qualified name, and `*` leaves it out: a column a JOIN … USING (or NATURAL
    /// JOIN) merged into the other side's.
    Qualified,
    /// No name, and no `*`: a column an ALTER TABLE is adding or dropping, which is in the
    /// rows but not yet (or no longer) in the table.
    Nothing,
}

/// Columns visible to expressions, in row order.
#[derive(Clone, Debug, Default)]
pub struct Scope {
    pub columns: Vec<ScopeColumn>,
}

impl Scope {
    pub(super) fn resolve(&self, table: Option<&str>, name: &str, context: &str) -> Result<usize> {
        let mut found = None;
        for (i, c) in self.columns.iter().enumerate() {
            // Columns under a hidden alias (starting with \u{1}) are reachable only qualified.
            let visible = match table {
                Some(t) => c.reach != Reach::Nothing && c.table.eq_ignore_ascii_case(t),
                None => !c.table.starts_with('\u{1}') && c.reach == Reach::Any,
            };
            if c.name.eq_ignore_ascii_case(name) && visible {
                if found.is_some() {
                    return Err(error::ambiguous_column(name));
                }
                found = Some(i);
            }
        }
        found.ok_or_else(|| {
            let full = match table {
                Some(t) => format!("{t}.{name}"),
                None => name.to_string(),
            };
            error::unknown_column(&full, context)
        })
    }

    pub fn types(&self) -> Vec<ResultType> {
        self.columns.iter().map(|c| c.ty.clone()).collect()
    }
}

/// The scope of the query a subquery is nested in; using it makes the subquery correlated.
/// A subquery nested deeper sees every enclosing query: its outer row is the row of the query
/// directly around it followed by that query's own outer row.
pub struct OuterScope<'a> {
    pub scope: &'a Scope,
    pub used: std::cell::Cell<bool>,
    /// The scope the enclosing query is itself nested in.
    pub parent: Option<&'a OuterScope<'a>>,
}

impl OuterScope<'_> {
    /// Resolves a column of the enclosing queries: its position in the outer row and its type,
    /// marking every query it is read across as correlated. None when no enclosing query has
    /// it.
    pub(super) fn resolve(
        &self,
        table: Option<&str>,
        name: &str,
        context: &str,
    ) -> Result<Option<(usize, ResultType)>> {
        match self.scope.resolve(table, name, context) {
            Ok(i) => {
                self.used.set(true);
                Ok(Some((i, self.scope.columns[i].ty.clone())))
            }
            Err(e) if e.is_unknown_column() => {
                let Some(parent) = self.parent else {
                    return Ok(None);
                };
                let found = parent.resolve(table, name, context)?;
                if found.is_some() {
                    self.used.set(true);
                }
                Ok(found.map(|(i, ty)| (self.scope.columns.len() + i, ty)))
            }
            Err(e) => Err(e),
        }
    }
}
