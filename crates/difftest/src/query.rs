//! Generated queries as a small tree that renders to SQL text, so that the shrinker can take
//! parts away and render again.
//!
//! Every expression renders fully parenthesised: the tester compares results, not operator
//! precedence (which the golden tests cover).

use std::fmt::{self, Write};

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Column {
        alias: String,
        column: String,
    },
    /// An SQL literal, rendered as is.
    Literal(String),
    /// `NOT e`, `-e`.
    Unary {
        op: &'static str,
        expr: Box<Expr>,
    },
    Binary {
        op: &'static str,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    /// `CASE WHEN … THEN … [ELSE …] END`.
    Case {
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    Function {
        name: &'static str,
        args: Vec<Expr>,
    },
    /// An aggregate; `arg` None is `COUNT(*)`.
    Aggregate {
        name: &'static str,
        distinct: bool,
        arg: Option<Box<Expr>>,
    },
    /// `(SELECT …)` producing one value.
    Scalar(Box<Query>),
    Exists {
        query: Box<Query>,
        negated: bool,
    },
    InSubquery {
        expr: Box<Expr>,
        query: Box<Query>,
        negated: bool,
    },
}

impl Expr {
    pub fn column(alias: &str, column: &str) -> Expr {
        Expr::Column {
            alias: alias.to_string(),
            column: column.to_string(),
        }
    }

    pub fn binary(op: &'static str, left: Expr, right: Expr) -> Expr {
        Expr::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        }
    }

    /// `a AND b AND …` over `parts` (None when empty).
    pub fn conjunction(parts: Vec<Expr>) -> Option<Expr> {
        parts.into_iter().reduce(|a, b| Expr::binary("AND", a, b))
    }

    /// Whether the expression reads no column, no aggregate and no subquery.
    pub fn is_constant(&self) -> bool {
        match self {
            Expr::Column { .. }
            | Expr::Aggregate { .. }
            | Expr::Scalar(_)
            | Expr::Exists { .. }
            | Expr::InSubquery { .. } => false,
            other => other.children().iter().all(|c| c.is_constant()),
        }
    }

    /// The expressions directly inside this one, mutable, in the order of [`Expr::children`].
    pub fn children_mut(&mut self) -> Vec<&mut Expr> {
        match self {
            Expr::Column { .. } | Expr::Literal(_) | Expr::Scalar(_) | Expr::Exists { .. } => {
                Vec::new()
            }
            Expr::Unary { expr, .. } | Expr::IsNull { expr, .. } => vec![expr],
            Expr::Binary { left, right, .. } => vec![left, right],
            Expr::InList { expr, list, .. } => std::iter::once(&mut **expr)
                .chain(list.iter_mut())
                .collect(),
            Expr::Between {
                expr, low, high, ..
            } => vec![expr, low, high],
            Expr::Case { whens, otherwise } => whens
                .iter_mut()
                .flat_map(|(w, t)| [w, t])
                .chain(otherwise.as_deref_mut())
                .collect(),
            Expr::Function { args, .. } => args.iter_mut().collect(),
            Expr::Aggregate { arg, .. } => arg.iter_mut().map(|a| &mut **a).collect(),
            Expr::InSubquery { expr, .. } => vec![expr],
        }
    }

    /// The expressions directly inside this one (not inside its subqueries).
    pub fn children(&self) -> Vec<&Expr> {
        match self {
            Expr::Column { .. } | Expr::Literal(_) | Expr::Scalar(_) | Expr::Exists { .. } => {
                Vec::new()
            }
            Expr::Unary { expr, .. } | Expr::IsNull { expr, .. } => vec![expr],
            Expr::Binary { left, right, .. } => vec![left, right],
            Expr::InList { expr, list, .. } => std::iter::once(&**expr).chain(list).collect(),
            Expr::Between {
                expr, low, high, ..
            } => vec![expr, low, high],
            Expr::Case { whens, otherwise } => whens
                .iter()
                .flat_map(|(w, t)| [w, t])
                .chain(otherwise.as_deref())
                .collect(),
            Expr::Function { args, .. } => args.iter().collect(),
            Expr::Aggregate { arg, .. } => arg.iter().map(|a| &**a).collect(),
            Expr::InSubquery { expr, .. } => vec![expr],
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Column { alias, column } => write!(f, "{alias}.{column}"),
            Expr::Literal(text) => f.write_str(text),
            Expr::Unary { op, expr } => write!(f, "({op} {expr})"),
            Expr::Binary { op, left, right } => write!(f, "({left} {op} {right})"),
            Expr::IsNull { expr, negated } => {
                write!(f, "({expr} IS {}NULL)", if *negated { "NOT " } else { "" })
            }
            Expr::InList {
                expr,
                list,
                negated,
            } => {
                write!(f, "({expr} {}IN (", if *negated { "NOT " } else { "" })?;
                write_list(f, list)?;
                f.write_str("))")
            }
            Expr::Between {
                expr,
                low,
                high,
                negated,
            } => write!(
                f,
                "({expr} {}BETWEEN {low} AND {high})",
                if *negated { "NOT " } else { "" }
            ),
            Expr::Case { whens, otherwise } => {
                f.write_str("CASE")?;
                for (when, then) in whens {
                    write!(f, " WHEN {when} THEN {then}")?;
                }
                if let Some(e) = otherwise {
                    write!(f, " ELSE {e}")?;
                }
                f.write_str(" END")
            }
            Expr::Function { name, args } => {
                write!(f, "{name}(")?;
                write_list(f, args)?;
                f.write_char(')')
            }
            Expr::Aggregate {
                name,
                distinct,
                arg,
            } => match arg {
                None => write!(f, "{name}(*)"),
                Some(arg) => write!(
                    f,
                    "{name}({}{arg})",
                    if *distinct { "DISTINCT " } else { "" }
                ),
            },
            Expr::Scalar(query) => write!(f, "({query})"),
            Expr::Exists { query, negated } => {
                write!(
                    f,
                    "({}EXISTS ({query}))",
                    if *negated { "NOT " } else { "" }
                )
            }
            Expr::InSubquery {
                expr,
                query,
                negated,
            } => write!(
                f,
                "({expr} {}IN ({query}))",
                if *negated { "NOT " } else { "" }
            ),
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Expr]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    /// `, t` with its condition in WHERE.
    Comma,
    Inner,
    Left,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Join {
    pub kind: JoinKind,
    pub table: String,
    pub alias: String,
    /// The ON condition (None for a comma join).
    pub on: Option<Expr>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Select {
    pub distinct: bool,
    /// Output expressions, named `c0`, `c1`, … in order.
    pub items: Vec<Expr>,
    /// The first table and its alias; None: no FROM clause.
    pub from: Option<(String, String)>,
    pub joins: Vec<Join>,
    pub filter: Option<Expr>,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
}

impl fmt::Display for Select {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SELECT ")?;
        if self.distinct {
            f.write_str("DISTINCT ")?;
        }
        for (i, item) in self.items.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{item} AS c{i}")?;
        }
        if let Some((table, alias)) = &self.from {
            write!(f, " FROM {table} AS {alias}")?;
            for join in &self.joins {
                match join.kind {
                    JoinKind::Comma => write!(f, ", {} AS {}", join.table, join.alias)?,
                    JoinKind::Inner | JoinKind::Left => {
                        let kind = if join.kind == JoinKind::Left {
                            "LEFT JOIN"
                        } else {
                            "JOIN"
                        };
                        write!(f, " {kind} {} AS {}", join.table, join.alias)?;
                        match &join.on {
                            Some(on) => write!(f, " ON {on}")?,
                            None => f.write_str(" ON TRUE")?,
                        }
                    }
                }
            }
        }
        if let Some(filter) = &self.filter {
            write!(f, " WHERE {filter}")?;
        }
        if !self.group_by.is_empty() {
            f.write_str(" GROUP BY ")?;
            write_list(f, &self.group_by)?;
        }
        if let Some(having) = &self.having {
            write!(f, " HAVING {having}")?;
        }
        Ok(())
    }
}

/// A query: one SELECT or a UNION of several, then ORDER BY output positions and LIMIT.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub selects: Vec<Select>,
    /// Between consecutive selects: UNION ALL (true) or UNION (false).
    pub union_all: Vec<bool>,
    /// Output positions (from 0) and whether descending.
    pub order_by: Vec<(usize, bool)>,
    /// LIMIT count and OFFSET.
    pub limit: Option<(u32, u32)>,
}

impl Query {
    pub fn single(select: Select) -> Query {
        Query {
            selects: vec![select],
            union_all: Vec::new(),
            order_by: Vec::new(),
            limit: None,
        }
    }

    /// Names of the tables the query reads, its subqueries' too.
    pub fn tables(&self) -> Vec<String> {
        let mut names = Vec::new();
        self.collect_tables(&mut names);
        names.sort();
        names.dedup();
        names
    }

    fn collect_tables(&self, names: &mut Vec<String>) {
        for select in &self.selects {
            if let Some((table, _)) = &select.from {
                names.push(table.clone());
            }
            for join in &select.joins {
                names.push(join.table.clone());
            }
            let mut exprs: Vec<&Expr> = select.items.iter().collect();
            exprs.extend(select.joins.iter().filter_map(|j| j.on.as_ref()));
            exprs.extend(select.filter.iter());
            exprs.extend(select.group_by.iter());
            exprs.extend(select.having.iter());
            for e in exprs {
                collect_expr_tables(e, names);
            }
        }
    }
}

fn collect_expr_tables(e: &Expr, names: &mut Vec<String>) {
    match e {
        Expr::Scalar(q) | Expr::Exists { query: q, .. } => q.collect_tables(names),
        Expr::InSubquery { expr, query, .. } => {
            collect_expr_tables(expr, names);
            query.collect_tables(names);
        }
        other => {
            for child in other.children() {
                collect_expr_tables(child, names);
            }
        }
    }
}

impl fmt::Display for Query {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, select) in self.selects.iter().enumerate() {
            if i > 0 {
                let all = self.union_all.get(i - 1).copied().unwrap_or(false);
                f.write_str(if all { " UNION ALL " } else { " UNION " })?;
            }
            write!(f, "{select}")?;
        }
        if !self.order_by.is_empty() {
            f.write_str(" ORDER BY ")?;
            for (i, (position, descending)) in self.order_by.iter().enumerate() {
                if i > 0 {
                    f.write_str(", ")?;
                }
                write!(f, "{}", position + 1)?;
                if *descending {
                    f.write_str(" DESC")?;
                }
            }
        }
        if let Some((count, offset)) = self.limit {
            write!(f, " LIMIT {count}")?;
            if offset > 0 {
                write!(f, " OFFSET {offset}")?;
            }
        }
        Ok(())
    }
}
