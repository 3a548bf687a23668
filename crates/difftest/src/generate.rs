//! The query generator: typed, so that every query it writes is one MySQL accepts and answers
//! deterministically.
//!
//! What it draws: joins of up to six tables in comma and `JOIN … ON` forms (self-joins too),
//! LEFT JOIN with conditions in ON and in WHERE, comparisons, IN lists (with NULLs), BETWEEN,
//! LIKE, IS NULL, AND / OR / NOT, CASE, arithmetic on NULL, integers and decimals, string and
//! date functions, EXISTS, IN and scalar subqueries (correlated or not), aggregates with GROUP
//! BY and HAVING, DISTINCT, UNION and UNION ALL, ORDER BY and LIMIT.
//!
//! What it avoids, because the answer would not be determined: a LIMIT whose ORDER BY leaves
//! ties between different rows (ORDER BY then covers every output column), a column outside
//! GROUP BY and aggregates, and a scalar subquery that could return several rows. It also keeps
//! the joined row count bounded, so that every query answers in milliseconds.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

use crate::query::{Expr, Join, JoinKind, Query, Select};
use crate::schema::{self, ColumnType, Ty, World};

/// Most rows a FROM clause may produce in the worst case (its joins' fan-outs multiplied).
const JOINED_ROWS_MAX: usize = 20_000;
/// Most tables in one FROM clause.
const TABLES_MAX: usize = 6;
/// Deepest nesting of subqueries.
const SUBQUERY_DEPTH_MAX: usize = 2;
/// Deepest nesting of value expressions.
const EXPR_DEPTH_MAX: usize = 3;

/// A column a query block can read.
#[derive(Clone, Debug)]
struct ScopeColumn {
    alias: String,
    column: String,
    column_type: ColumnType,
    leads_key: bool,
    /// Most rows sharing one non-NULL value of this column.
    fan_out: usize,
}

impl ScopeColumn {
    fn ty(&self) -> Ty {
        self.column_type.ty()
    }

    fn expr(&self) -> Expr {
        Expr::column(&self.alias, &self.column)
    }
}

type Scope = Vec<ScopeColumn>;

/// Draws queries over one world.
pub struct Generator<'w> {
    world: &'w World,
    rng: StdRng,
    next_alias: usize,
}

impl<'w> Generator<'w> {
    /// A generator whose queries depend only on `seed`.
    pub fn new(world: &'w World, seed: u64) -> Generator<'w> {
        Generator {
            world,
            rng: StdRng::seed_from_u64(seed),
            next_alias: 0,
        }
    }

    /// One query.
    pub fn query(&mut self) -> Query {
        self.next_alias = 0;
        let mut query = if self.rng.gen_bool(0.12) {
            self.union()
        } else {
            let aggregate = self.rng.gen_bool(0.3);
            let (select, _) = self.select(&[], 0, aggregate, None);
            Query::single(select)
        };
        self.order_and_limit(&mut query);
        query
    }

    fn alias(&mut self) -> String {
        self.next_alias += 1;
        format!("a{}", self.next_alias)
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.gen_bool(p)
    }

    /// A UNION [ALL] of two or three SELECTs with the same column types.
    fn union(&mut self) -> Query {
        let width = self.rng.gen_range(1..=3);
        let types: Vec<Ty> = (0..width).map(|_| self.any_type()).collect();
        let arms = self.rng.gen_range(2..=3);
        let selects: Vec<Select> = (0..arms)
            .map(|_| self.select(&[], 0, false, Some(&types)).0)
            .collect();
        let union_all = (1..arms).map(|_| self.chance(0.5)).collect();
        Query {
            selects,
            union_all,
            order_by: Vec::new(),
            limit: None,
        }
    }

    /// ORDER BY output positions, and a LIMIT only when the order leaves no ties between
    /// different rows.
    fn order_and_limit(&mut self, query: &mut Query) {
        let width = query.selects[0].items.len();
        if !self.chance(0.45) {
            return;
        }
        let mut positions: Vec<usize> = (0..width).collect();
        positions.shuffle(&mut self.rng);
        let limit = self.chance(0.5);
        if !limit {
            positions.truncate(self.rng.gen_range(1..=width));
        }
        query.order_by = positions
            .into_iter()
            .map(|p| (p, self.chance(0.4)))
            .collect();
        if limit {
            let offset = if self.chance(0.3) {
                self.rng.gen_range(1..4)
            } else {
                0
            };
            query.limit = Some((self.rng.gen_range(0..12), offset));
        }
    }

    fn any_type(&mut self) -> Ty {
        *[Ty::Int, Ty::Int, Ty::Decimal, Ty::Text, Ty::Date]
            .choose(&mut self.rng)
            .expect("types")
    }

    /// One SELECT block. `outer` is the enclosing blocks' columns (for correlation); `types`
    /// fixes the output column types (UNION arms). Returns the block and its output types.
    fn select(
        &mut self,
        outer: &[ScopeColumn],
        depth: usize,
        aggregate: bool,
        types: Option<&[Ty]>,
    ) -> (Select, Vec<Ty>) {
        let tables_max = if depth > 0 { 2 } else { TABLES_MAX };
        let (from, joins, mut conditions, scope) = self.tables_clause(tables_max);
        if scope.is_empty() {
            // An empty world cannot happen (every table has columns); keep the type checker
            // of the caller honest anyway.
            unreachable!("a FROM clause without columns");
        }
        for _ in 0..self.rng.gen_range(0..=2) {
            let p = self.predicate(&scope, outer, depth, 0);
            conditions.push(p);
        }
        let mut select = Select {
            distinct: false,
            items: Vec::new(),
            from: Some(from),
            joins,
            filter: None,
            group_by: Vec::new(),
            having: None,
        };
        let mut output = Vec::new();
        if aggregate {
            let group_count = self.rng.gen_range(0..=2);
            let groups: Vec<ScopeColumn> = (0..group_count)
                .map(|_| scope.choose(&mut self.rng).expect("scope").clone())
                .collect();
            select.group_by = groups.iter().map(ScopeColumn::expr).collect();
            select.group_by.dedup();
            for g in &groups {
                if self.chance(0.7) {
                    select.items.push(g.expr());
                    output.push(g.ty());
                }
            }
            for _ in 0..self.rng.gen_range(1..=3) {
                let (e, ty) = self.aggregate(&scope);
                select.items.push(e);
                output.push(ty);
            }
            if self.chance(0.35) {
                // MariaDB resolves a grouped column in HAVING through the select list, by
                // name: only a selected one whose name no other selected column shares.
                let selected: Vec<ScopeColumn> = groups
                    .iter()
                    .filter(|g| select.items.contains(&g.expr()))
                    .filter(|g| groups.iter().filter(|o| o.column == g.column).count() == 1)
                    .cloned()
                    .collect();
                select.having = Some(self.having(&scope, &selected));
            }
        } else {
            let wanted: Vec<Option<Ty>> = match types {
                Some(types) => types.iter().map(|t| Some(*t)).collect(),
                None => (0..self.rng.gen_range(1..=4)).map(|_| None).collect(),
            };
            for want in wanted {
                let ty = want.unwrap_or_else(|| self.any_type());
                let e = if depth < SUBQUERY_DEPTH_MAX && self.chance(0.08) {
                    self.scalar_subquery(ty, &scope, outer, depth)
                } else {
                    self.value(ty, &scope, 0)
                };
                select.items.push(e);
                output.push(ty);
            }
            select.distinct = self.chance(0.15);
        }
        select.filter = Expr::conjunction(conditions);
        (select, output)
    }

    /// Tables joined in comma or JOIN form. Returns the first table, the joins, conditions
    /// that belong in WHERE (a comma join's), and the columns in scope.
    #[allow(clippy::type_complexity)]
    fn tables_clause(
        &mut self,
        tables_max: usize,
    ) -> ((String, String), Vec<Join>, Vec<Expr>, Scope) {
        let count = match self.rng.gen_range(0..100) {
            0..=34 => 1,
            35..=59 => 2,
            60..=74 => 3,
            75..=84 => 4,
            85..=92 => 5,
            _ => 6,
        }
        .min(tables_max);
        let comma = self.chance(0.4);
        let first = self.world.tables.choose(&mut self.rng).expect("tables");
        let first_alias = self.alias();
        let mut scope = self.table_scope(first, &first_alias);
        let mut bound = first.rows.len().max(1);
        let mut joins = Vec::new();
        let mut conditions = Vec::new();
        for _ in 1..count {
            let table = self.world.tables.choose(&mut self.rng).expect("tables");
            let alias = self.alias();
            let columns = self.table_scope(table, &alias);
            let link = self.link(&scope, &columns);
            let unlinked_bound = bound.saturating_mul(table.rows.len().max(1));
            let (link, new_bound) = match link {
                Some((e, fan_out)) if self.chance(0.9) || unlinked_bound > JOINED_ROWS_MAX => {
                    (Some(e), bound.saturating_mul(fan_out.max(1)))
                }
                _ => (None, unlinked_bound),
            };
            if new_bound > JOINED_ROWS_MAX {
                self.next_alias -= 1;
                break;
            }
            bound = new_bound;
            let kind = if comma {
                JoinKind::Comma
            } else if self.chance(0.3) {
                JoinKind::Left
            } else {
                JoinKind::Inner
            };
            let on = if kind == JoinKind::Comma {
                conditions.extend(link);
                None
            } else {
                let mut parts: Vec<Expr> = link.into_iter().collect();
                if self.chance(0.3) {
                    // A condition on the new table alone: in ON it keeps the left rows of a
                    // LEFT JOIN, in WHERE it would drop them.
                    parts.push(self.simple_predicate(&columns));
                }
                Expr::conjunction(parts)
            };
            joins.push(Join {
                kind,
                table: table.name.clone(),
                alias,
                on,
            });
            scope.extend(columns);
        }
        ((first.name.clone(), first_alias), joins, conditions, scope)
    }

    fn table_scope(&self, table: &schema::Table, alias: &str) -> Scope {
        table
            .columns
            .iter()
            .enumerate()
            .map(|(i, c)| {
                let mut counts = std::collections::HashMap::new();
                for row in &table.rows {
                    if row[i] != "NULL" {
                        *counts.entry(row[i].as_str()).or_insert(0usize) += 1;
                    }
                }
                ScopeColumn {
                    alias: alias.to_string(),
                    column: c.name.clone(),
                    column_type: c.ty,
                    leads_key: table.leads_a_key(i),
                    fan_out: counts.values().copied().max().unwrap_or(0),
                }
            })
            .collect()
    }

    /// An equality between a column of `new` (preferring one that leads a key) and a column of
    /// `scope` of a comparable type, with the new table's worst fan-out.
    fn link(&mut self, scope: &[ScopeColumn], new: &[ScopeColumn]) -> Option<(Expr, usize)> {
        let mut candidates: Vec<&ScopeColumn> = new.iter().collect();
        candidates.shuffle(&mut self.rng);
        candidates.sort_by_key(|c| !c.leads_key);
        for right in candidates {
            let matching: Vec<&ScopeColumn> = scope
                .iter()
                .filter(|l| comparable(l.ty(), right.ty()))
                .collect();
            if let Some(left) = matching.choose(&mut self.rng) {
                return Some((Expr::binary("=", right.expr(), left.expr()), right.fan_out));
            }
        }
        None
    }

    /// A boolean expression over `scope`, possibly with subqueries correlated to `outer`.
    fn predicate(
        &mut self,
        scope: &[ScopeColumn],
        outer: &[ScopeColumn],
        depth: usize,
        nesting: usize,
    ) -> Expr {
        let roll = self.rng.gen_range(0..100);
        if depth < SUBQUERY_DEPTH_MAX && roll < 15 {
            return self.subquery_predicate(scope, outer, depth);
        }
        if nesting < 2 && roll < 30 {
            let left = self.predicate(scope, outer, depth, nesting + 1);
            let right = self.predicate(scope, outer, depth, nesting + 1);
            let op = if self.chance(0.5) { "OR" } else { "AND" };
            return Expr::binary(op, left, right);
        }
        if nesting < 2 && roll < 35 {
            return Expr::Unary {
                op: "NOT",
                expr: Box::new(self.predicate(scope, outer, depth, nesting + 1)),
            };
        }
        if roll < 50 {
            // A comparison between two expressions.
            let ty = scope.choose(&mut self.rng).expect("scope").ty();
            let left = self.value(ty, scope, 1);
            let right = self.value(ty, scope, 1);
            return Expr::binary(self.comparison(), left, right);
        }
        self.simple_predicate(scope)
    }

    /// A predicate on one column: comparison with a literal, IN list, BETWEEN, LIKE, IS NULL.
    fn simple_predicate(&mut self, scope: &[ScopeColumn]) -> Expr {
        let column = scope.choose(&mut self.rng).expect("scope").clone();
        let ty = column.column_type;
        let target = column.expr();
        match self.rng.gen_range(0..100) {
            0..=34 => Expr::binary(self.comparison(), target, self.literal(ty)),
            35..=59 => {
                let list = (0..self.rng.gen_range(1..=5))
                    .map(|_| {
                        if self.chance(0.08) {
                            Expr::Literal("NULL".into())
                        } else {
                            self.literal(ty)
                        }
                    })
                    .collect();
                Expr::InList {
                    expr: Box::new(target),
                    list,
                    negated: self.chance(0.25),
                }
            }
            60..=72 => {
                let (a, b) = (self.literal(ty), self.literal(ty));
                Expr::Between {
                    expr: Box::new(target),
                    low: Box::new(a),
                    high: Box::new(b),
                    negated: self.chance(0.2),
                }
            }
            73..=82 if ty.ty() == Ty::Text => {
                let pattern = *["'a%'", "'%b'", "'_'", "'%'", "'a_c'", "'%z%'", "''"]
                    .choose(&mut self.rng)
                    .expect("patterns");
                Expr::binary("LIKE", target, Expr::Literal(pattern.into()))
            }
            _ => Expr::IsNull {
                expr: Box::new(target),
                negated: self.chance(0.5),
            },
        }
    }

    fn comparison(&mut self) -> &'static str {
        ["=", "=", "<>", "<", "<=", ">", ">=", "<=>"]
            .choose(&mut self.rng)
            .expect("comparisons")
    }

    /// A literal of a column type, sometimes NULL.
    fn literal(&mut self, ty: ColumnType) -> Expr {
        if self.chance(0.04) {
            return Expr::Literal("NULL".into());
        }
        Expr::Literal(schema::value(&mut self.rng, ty))
    }

    fn literal_of(&mut self, ty: Ty, maybe_null: bool) -> Expr {
        let column_type = match ty {
            Ty::Int => ColumnType::Int,
            Ty::Decimal => ColumnType::Decimal(8, 2),
            Ty::Text => ColumnType::Varchar(10),
            Ty::Date => ColumnType::Date,
        };
        if maybe_null {
            self.literal(column_type)
        } else {
            Expr::Literal(schema::value(&mut self.rng, column_type))
        }
    }

    /// A value expression of type family `ty` over `scope`.
    fn value(&mut self, ty: Ty, scope: &[ScopeColumn], depth: usize) -> Expr {
        let columns: Vec<&ScopeColumn> = scope.iter().filter(|c| c.ty() == ty).collect();
        let leaf = depth >= EXPR_DEPTH_MAX || self.chance(0.45);
        if leaf {
            return match columns.choose(&mut self.rng) {
                Some(c) if self.chance(0.8) => c.expr(),
                // No NULL literal here: the type MySQL gives `NULL - 3.00` is its own quirk
                // (NULLs come from columns, IN lists and comparisons instead).
                _ => self.literal_of(ty, false),
            };
        }
        let next = depth + 1;
        match (ty, self.rng.gen_range(0..100)) {
            (_, 0..=9) => {
                let when = self.simple_predicate(scope);
                let then = self.value(ty, scope, next);
                let otherwise = if self.chance(0.7) {
                    Some(Box::new(self.value(ty, scope, next)))
                } else {
                    None
                };
                Expr::Case {
                    whens: vec![(when, then)],
                    otherwise,
                }
            }
            (_, 10..=17) => {
                let name = *["COALESCE", "IFNULL"].choose(&mut self.rng).expect("names");
                Expr::Function {
                    name,
                    args: vec![self.value(ty, scope, next), self.value(ty, scope, next)],
                }
            }
            (_, 18..=21) => Expr::Function {
                name: "IF",
                args: vec![
                    self.simple_predicate(scope),
                    self.value(ty, scope, next),
                    self.value(ty, scope, next),
                ],
            },
            (Ty::Int, 22..=59) => {
                let op = *["+", "-", "*", "+", "-", "DIV", "%"]
                    .choose(&mut self.rng)
                    .expect("ops");
                Expr::binary(
                    op,
                    self.value(Ty::Int, scope, next),
                    self.value(Ty::Int, scope, next),
                )
            }
            (Ty::Int, 60..=69) => Expr::Function {
                name: "ABS",
                args: vec![self.value(Ty::Int, scope, next)],
            },
            (Ty::Int, 70..=79) => Expr::Function {
                name: "LENGTH",
                args: vec![self.value(Ty::Text, scope, next)],
            },
            (Ty::Int, 80..=89) => Expr::Function {
                name: ["YEAR", "MONTH", "DAYOFMONTH"]
                    .choose(&mut self.rng)
                    .expect("f"),
                args: vec![self.value(Ty::Date, scope, next)],
            },
            (Ty::Int, _) => Expr::Function {
                name: "DATEDIFF",
                args: vec![
                    self.value(Ty::Date, scope, next),
                    self.value(Ty::Date, scope, next),
                ],
            },
            (Ty::Decimal, 22..=69) => {
                let op = *["+", "-", "*", "/"].choose(&mut self.rng).expect("ops");
                let left_ty = if self.chance(0.7) {
                    Ty::Decimal
                } else {
                    Ty::Int
                };
                let right_ty = if op == "/" || self.chance(0.5) {
                    Ty::Int
                } else {
                    Ty::Decimal
                };
                let (left, right) = if left_ty == Ty::Int && right_ty == Ty::Int && op != "/" {
                    (
                        self.value(Ty::Decimal, scope, next),
                        self.value(Ty::Int, scope, next),
                    )
                } else {
                    (
                        self.value(left_ty, scope, next),
                        self.value(right_ty, scope, next),
                    )
                };
                Expr::binary(op, left, right)
            }
            (Ty::Decimal, 70..=84) => Expr::Function {
                name: "ROUND",
                args: vec![
                    self.value(Ty::Decimal, scope, next),
                    Expr::Literal(self.rng.gen_range(0..3).to_string()),
                ],
            },
            (Ty::Decimal, _) => Expr::Function {
                name: "ABS",
                args: vec![self.value(Ty::Decimal, scope, next)],
            },
            (Ty::Text, 22..=54) => Expr::Function {
                name: "CONCAT",
                args: vec![
                    self.value(Ty::Text, scope, next),
                    self.value(Ty::Text, scope, next),
                ],
            },
            (Ty::Text, 55..=74) => Expr::Function {
                name: ["UPPER", "LOWER"].choose(&mut self.rng).expect("f"),
                args: vec![self.value(Ty::Text, scope, next)],
            },
            (Ty::Text, _) => Expr::Function {
                name: "SUBSTRING",
                args: vec![
                    self.value(Ty::Text, scope, next),
                    Expr::Literal(self.rng.gen_range(1..3).to_string()),
                    Expr::Literal(self.rng.gen_range(0..3).to_string()),
                ],
            },
            (Ty::Date, _) => match columns.choose(&mut self.rng) {
                Some(c) => c.expr(),
                None => self.literal_of(Ty::Date, false),
            },
        }
    }

    /// An aggregate over `scope` and its type family.
    fn aggregate(&mut self, scope: &[ScopeColumn]) -> (Expr, Ty) {
        let column = scope.choose(&mut self.rng).expect("scope").clone();
        let ty = column.ty();
        let arg = if self.chance(0.75) {
            column.expr()
        } else {
            self.value(ty, scope, 1)
        };
        let (name, result) = match self.rng.gen_range(0..100) {
            0..=19 => ("COUNT", None),
            20..=34 => ("MIN", Some(ty)),
            35..=49 => ("MAX", Some(ty)),
            50..=74 if ty.is_numeric() => ("SUM", Some(Ty::Decimal)),
            75..=89 if ty.is_numeric() => ("AVG", Some(Ty::Decimal)),
            _ => ("COUNT", None),
        };
        let (arg, distinct) = match (name, result) {
            ("COUNT", _) if self.chance(0.3) => (None, false),
            _ => (Some(Box::new(arg)), self.chance(0.15)),
        };
        let aggregate = Expr::Aggregate {
            name,
            distinct,
            arg,
        };
        let ty = result.unwrap_or(Ty::Int);
        if ty.is_numeric() && self.chance(0.15) {
            // Arithmetic over an aggregate.
            let other = self.literal_of(Ty::Int, false);
            return (Expr::binary("+", aggregate, other), ty);
        }
        (aggregate, ty)
    }

    /// A HAVING condition: on an aggregate, or on a grouped column.
    fn having(&mut self, scope: &[ScopeColumn], groups: &[ScopeColumn]) -> Expr {
        if let Some(g) = groups.choose(&mut self.rng).filter(|_| self.chance(0.3)) {
            let literal = self.literal(g.column_type);
            return Expr::binary(self.comparison(), g.expr(), literal);
        }
        let (aggregate, ty) = self.aggregate(scope);
        let literal = if ty.is_numeric() {
            self.literal_of(Ty::Int, true)
        } else {
            self.literal_of(ty, true)
        };
        Expr::binary(self.comparison(), aggregate, literal)
    }

    /// EXISTS, IN or a comparison with a scalar subquery.
    fn subquery_predicate(
        &mut self,
        scope: &[ScopeColumn],
        outer: &[ScopeColumn],
        depth: usize,
    ) -> Expr {
        let mut visible: Vec<ScopeColumn> = scope.to_vec();
        visible.extend(outer.iter().cloned());
        match self.rng.gen_range(0..3) {
            0 => {
                let mut inner = self.correlated_select(&visible, depth);
                inner.items = vec![Expr::Literal("1".into())];
                Expr::Exists {
                    query: Box::new(Query::single(inner)),
                    negated: self.chance(0.3),
                }
            }
            1 => {
                let target = scope.choose(&mut self.rng).expect("scope").clone();
                let mut inner = self.correlated_select(&visible, depth);
                let inner_scope = self.select_scope(&inner);
                let matching: Vec<&ScopeColumn> = inner_scope
                    .iter()
                    .filter(|c| comparable(c.ty(), target.ty()))
                    .collect();
                let Some(column) = matching.choose(&mut self.rng) else {
                    return self.simple_predicate(scope);
                };
                inner.items = vec![column.expr()];
                inner.distinct = self.chance(0.2);
                Expr::InSubquery {
                    expr: Box::new(target.expr()),
                    query: Box::new(Query::single(inner)),
                    negated: self.chance(0.3),
                }
            }
            _ => {
                let ty = if self.chance(0.7) {
                    Ty::Int
                } else {
                    Ty::Decimal
                };
                let left = self.value(ty, scope, 1);
                let right = self.scalar_subquery(ty, scope, outer, depth);
                Expr::binary(self.comparison(), left, right)
            }
        }
    }

    /// `(SELECT aggregate FROM … WHERE …)`: one value of family `ty` (numeric families take
    /// any numeric aggregate).
    fn scalar_subquery(
        &mut self,
        ty: Ty,
        scope: &[ScopeColumn],
        outer: &[ScopeColumn],
        depth: usize,
    ) -> Expr {
        let mut visible: Vec<ScopeColumn> = scope.to_vec();
        visible.extend(outer.iter().cloned());
        let mut inner = self.correlated_select(&visible, depth);
        let inner_scope = self.select_scope(&inner);
        let typed: Vec<&ScopeColumn> = inner_scope.iter().filter(|c| c.ty() == ty).collect();
        let item = match (ty, typed.choose(&mut self.rng)) {
            (Ty::Int, _) if self.chance(0.3) => Expr::Aggregate {
                name: "COUNT",
                distinct: false,
                arg: None,
            },
            (_, Some(c)) => {
                let name = match ty {
                    Ty::Decimal => *["MIN", "MAX", "SUM", "AVG"]
                        .choose(&mut self.rng)
                        .expect("f"),
                    _ => *["MIN", "MAX"].choose(&mut self.rng).expect("f"),
                };
                Expr::Aggregate {
                    name,
                    distinct: false,
                    arg: Some(Box::new(c.expr())),
                }
            }
            (Ty::Int, None) => Expr::Aggregate {
                name: "COUNT",
                distinct: false,
                arg: None,
            },
            (_, None) => return self.literal_of(ty, true),
        };
        inner.items = vec![item];
        Expr::Scalar(Box::new(Query::single(inner)))
    }

    /// A SELECT block of one or two tables whose filter, most of the time, ties it to a column
    /// of `outer` by equality. Its items are left for the caller.
    fn correlated_select(&mut self, outer: &[ScopeColumn], depth: usize) -> Select {
        let (from, joins, mut conditions, scope) = self.tables_clause(2);
        if self.chance(0.7) {
            if let Some((link, _)) = self.link(outer, &scope) {
                conditions.push(link);
            }
        }
        for _ in 0..self.rng.gen_range(0..=1) {
            let p = self.predicate(&scope, outer, depth + 1, 1);
            conditions.push(p);
        }
        Select {
            distinct: false,
            items: Vec::new(),
            from: Some(from),
            joins,
            filter: Expr::conjunction(conditions),
            group_by: Vec::new(),
            having: None,
        }
    }

    /// The columns a SELECT block's FROM clause puts in scope.
    fn select_scope(&self, select: &Select) -> Scope {
        let mut scope = Vec::new();
        let sources = select
            .from
            .iter()
            .map(|(t, a)| (t.as_str(), a.as_str()))
            .chain(
                select
                    .joins
                    .iter()
                    .map(|j| (j.table.as_str(), j.alias.as_str())),
            );
        for (table, alias) in sources {
            if let Some(t) = self.world.table(table) {
                scope.extend(self.table_scope(t, alias));
            }
        }
        scope
    }
}

/// Whether values of two type families compare without MySQL's implicit conversions between
/// strings and numbers.
fn comparable(a: Ty, b: Ty) -> bool {
    a == b || (a.is_numeric() && b.is_numeric())
}
