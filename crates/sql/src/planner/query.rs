//! Planning of SELECT: the FROM clause (one table here, several in `join`), the access path of
//! a table (`access`), and the pipeline above it (filter, aggregation, DISTINCT, ORDER BY,
//! LIMIT, projection).

use std::sync::Arc;

use sqlparser::ast::{self, GroupByExpr, SelectItem, SetExpr, TableFactor};
use strata_codec::Datum;

use crate::api::{column_flags, ColumnInfo};
use crate::catalog::{Schema, TableDef};
use crate::error::{self, Error, Result};
use crate::expr::{self, AggCall, BinaryOp, Expr, Func, ResultType};
use crate::planner::bind::Binder;
use crate::planner::join::{self, RelationSource};
use crate::planner::logical::{Plan, Scan, Shape};
use crate::planner::optimize;
use crate::planner::physical::{self, SelectPlan};
use crate::planner::scope::{OuterScope, Reach, Scope, ScopeColumn};
use crate::planner::subquery::{Collector, SubqueryPlan};

/// Lock taken on the rows read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RowLock {
    None,
    ForUpdate,
}

/// Builds the scope of one table's columns.
pub fn table_scope(table: &TableDef, alias: &str) -> Scope {
    Scope {
        columns: table
            .columns
            .iter()
            .map(|c| ScopeColumn {
                table: alias.to_string(),
                name: c.name.clone(),
                ty: ResultType::from_sql(&c.ty, !c.nullable),
                reach: if c.write_only {
                    Reach::Nothing
                } else {
                    Reach::Any
                },
            })
            .collect(),
    }
}

/// Whether a FROM item is MySQL's `DUAL` (unquoted, unqualified).
fn is_dual(factor: &TableFactor) -> bool {
    match factor {
        TableFactor::Table {
            name, alias: None, ..
        } => match name.0.as_slice() {
            [ast::ObjectNamePart::Identifier(i)] => {
                i.quote_style.is_none() && i.value.eq_ignore_ascii_case("DUAL")
            }
            _ => false,
        },
        _ => false,
    }
}

/// Resolves `FROM t [AS a]` to a table and its alias.
pub fn resolve_table(
    schema: &Schema,
    database: Option<&str>,
    factor: &TableFactor,
) -> Result<(Arc<TableDef>, String)> {
    match factor {
        TableFactor::Table { name, alias, .. } => {
            let (db, table) = split_name(name, database)?;
            let def = schema.table(&db, &table)?.clone();
            let alias = alias
                .as_ref()
                .map(|a| a.name.value.clone())
                .unwrap_or_else(|| def.name.clone());
            Ok((def, alias))
        }
        TableFactor::Derived { .. } => Err(error::unsupported("derived tables")),
        other => Err(error::unsupported(other)),
    }
}

/// Splits `db.table` or `table` (using the current database).
pub fn split_name(name: &ast::ObjectName, database: Option<&str>) -> Result<(String, String)> {
    match qualified_name(name)? {
        (Some(db), table) => Ok((db, table)),
        (None, table) => Ok((database.ok_or_else(error::no_database)?.to_string(), table)),
    }
}

/// The parts of a dotted name, unquoted.
pub fn name_parts(name: &ast::ObjectName) -> Vec<String> {
    name.0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// The database (if written) and name of `db.name` or `name`.
pub fn qualified_name(name: &ast::ObjectName) -> Result<(Option<String>, String)> {
    match name_parts(name).as_slice() {
        [name] => Ok((None, name.clone())),
        [db, name] => Ok((Some(db.clone()), name.clone())),
        _ => Err(error::syntax(format!("near '{name}'"))),
    }
}

/// What planning a statement reads, and the state it keeps while it descends into subqueries,
/// derived tables, CTEs and views. It goes down as a value: nothing of a plan lives in
/// thread-locals.
pub struct PlanContext<'a> {
    pub schema: &'a Schema,
    /// The database unqualified names are in.
    pub database: Option<&'a str>,
    /// Recursive CTEs in scope, and the working tables of those being planned.
    pub ctes: crate::planner::cte::CteScope,
    /// Views whose definitions enclose what is being planned.
    pub view_depth: usize,
    /// The sessions and statements the planning session may see, for
    /// information_schema.PROCESSLIST and STATEMENTS_SUMMARY (none outside a session's own
    /// SELECT).
    pub live: Option<&'a dyn crate::infoschema::Live>,
}

impl<'a> PlanContext<'a> {
    pub fn new(schema: &'a Schema, database: Option<&'a str>) -> PlanContext<'a> {
        PlanContext {
            schema,
            database,
            ctes: crate::planner::cte::CteScope::default(),
            view_depth: 0,
            live: None,
        }
    }
}

/// Plans a SELECT query.
pub fn plan_select(
    query: &ast::Query,
    schema: &Schema,
    database: Option<&str>,
) -> Result<SelectPlan> {
    plan_select_in(query, &PlanContext::new(schema, database), None)
}

/// Whether GROUP BY's modifiers ask for `WITH ROLLUP` (MySQL has no other).
fn rollup_modifier(modifiers: &[ast::GroupByWithModifier]) -> Result<bool> {
    match modifiers {
        [] => Ok(false),
        [ast::GroupByWithModifier::Rollup] => Ok(true),
        _ => Err(error::syntax(format!(
            "near '{}'",
            modifiers
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" ")
        ))),
    }
}

/// Makes the select list, HAVING and ORDER BY of a `GROUP BY … WITH ROLLUP` read each GROUP
/// BY expression where the grouped rows carry its value (column `base + i`, after the row's
/// columns), which super-aggregate rows set to NULL, and `GROUPING(e, …)` from the flags after
/// those values (`executor::grouping::Rollup`): for each argument, 1 when it is rolled up, the first
/// argument the highest bit.
fn roll_up(
    group_by: &[Expr],
    base: usize,
    projection: &mut [Expr],
    having: &mut Option<Expr>,
    order_by: &mut [(Expr, bool)],
) -> Result<()> {
    let mut failed = None;
    let mut rewrite = |e: &mut Expr| {
        e.walk_mut(&mut |node| {
            if let Expr::Call(Func::Grouping, args) = node {
                let mut bits: Option<Expr> = None;
                for (n, arg) in args.iter().enumerate() {
                    let Some(i) = group_by.iter().position(|g| g == arg) else {
                        failed.get_or_insert(Error::new(
                            3602,
                            "HY000",
                            format!(
                                "Argument #{} of GROUPING function is not in GROUP BY",
                                n + 1
                            ),
                        ));
                        return true;
                    };
                    let flag = Expr::Column(base + group_by.len() + i);
                    bits = Some(match bits {
                        None => flag,
                        Some(high) => Expr::Binary(
                            BinaryOp::Plus,
                            Box::new(Expr::Binary(
                                BinaryOp::Multiply,
                                Box::new(high),
                                Box::new(Expr::Literal(Datum::Int(2))),
                            )),
                            Box::new(flag),
                        ),
                    });
                }
                *node = bits.unwrap_or(Expr::Literal(Datum::Int(0)));
                return true;
            }
            match group_by.iter().position(|g| g == node) {
                Some(i) => {
                    *node = Expr::Column(base + i);
                    true
                }
                None => false,
            }
        });
    };
    projection.iter_mut().for_each(&mut rewrite);
    having.iter_mut().for_each(&mut rewrite);
    order_by.iter_mut().for_each(|(e, _)| rewrite(e));
    failed.map_or(Ok(()), Err)
}

/// Plans a SELECT that may be a subquery of a query whose scope is `outer`.
pub fn plan_select_in(
    query: &ast::Query,
    cx: &PlanContext,
    outer: Option<&OuterScope<'_>>,
) -> Result<SelectPlan> {
    plan_query(query, cx, outer, Wanted::All)
}

/// How many of a query's rows its consumer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    All,
    /// Only whether there is one (EXISTS): a SELECT block without a LIMIT of its own gets
    /// LIMIT 1, which the optimizer pushes down like any other.
    First,
}

/// [`plan_select_in`] for a consumer that reads `wanted` of the rows.
pub fn plan_query(
    query: &ast::Query,
    cx: &PlanContext,
    outer: Option<&OuterScope<'_>>,
    wanted: Wanted,
) -> Result<SelectPlan> {
    if let Some(inlined) = crate::planner::cte::inline(query)? {
        let _in_scope = inlined.enter(&cx.ctes);
        return plan_query(&inlined.query, cx, outer, wanted);
    }
    let select = match query.body.as_ref() {
        SetExpr::Select(s) => s,
        SetExpr::Query(q) => return plan_query(q, cx, outer, wanted),
        SetExpr::SetOperation { .. } => return crate::planner::union::plan(query, cx, outer),
        _ => return Err(error::unsupported("set operations")),
    };
    let mut bound = bind_select(query, select, cx, outer)?;
    if wanted == Wanted::First && bound.limit.is_none() && bound.offset.is_none() {
        bound.limit = Some(Expr::Literal(Datum::Int(1)));
    }
    let (result_types, columns) = type_select(&bound);
    let width = bound.width;
    let plan = optimize::optimize(logical_select(bound), width, cx.schema)?;
    physical::lower(
        plan,
        Shape {
            width,
            result_types,
            columns,
        },
    )
}

/// The optimized logical plan of a query that is one SELECT block.
#[cfg(test)]
pub(crate) fn optimized_plan(query: &ast::Query, cx: &PlanContext) -> Result<Plan> {
    let SetExpr::Select(select) = query.body.as_ref() else {
        return Err(error::unsupported("set operations"));
    };
    let bound = bind_select(query, select, cx, None)?;
    let width = bound.width;
    optimize::optimize(logical_select(bound), width, cx.schema)
}

/// A SELECT after the binder stage: every name resolved against its FROM clause (and the
/// enclosing queries), aggregates, windows and subqueries collected; no types or access paths
/// yet.
struct BoundSelect {
    relations: Vec<join::Relation>,
    scope: Scope,
    /// Columns of the FROM row.
    width: usize,
    where_conjuncts: Vec<Expr>,
    projection: Vec<Expr>,
    names: Vec<String>,
    /// The FROM column each select-list item is, when it is one.
    origins: Vec<Option<usize>>,
    group_by: Vec<Expr>,
    rollup: bool,
    having: Option<Expr>,
    order_by: Vec<(Expr, bool)>,
    aggs: Vec<AggCall>,
    windows: Vec<crate::planner::window::WindowCall>,
    subqueries: Vec<SubqueryPlan>,
    distinct: bool,
    limit: Option<Expr>,
    offset: Option<Expr>,
    lock: RowLock,
}

/// The binder stage of [`plan_select_in`]: FROM, ON, WHERE, the select list, GROUP BY,
/// HAVING, ORDER BY and LIMIT of one SELECT bound to positions in its FROM row.
fn bind_select(
    query: &ast::Query,
    select: &ast::Select,
    cx: &PlanContext,
    outer: Option<&OuterScope<'_>>,
) -> Result<BoundSelect> {
    // `FROM DUAL` names no table, as in MySQL.
    let from: &[ast::TableWithJoins] = match select.from.as_slice() {
        [only] if only.joins.is_empty() && is_dual(&only.relation) => &[],
        all => all,
    };
    let mut relations = join::from_relations(from, cx)?;
    let mut scope = Scope {
        columns: relations.iter().flat_map(join::relation_scope).collect(),
    };
    let merged = join::apply_using(&mut relations, &mut scope)?;
    let scope = scope;
    let width = scope.columns.len();
    let collector = Collector::new(cx, width).nested_in(outer);
    let binder = |context| Binder {
        outer,
        subqueries: Some(&collector),
        ..Binder::new(&scope, context)
    };

    // ON conditions, against the whole scope.
    for (relation, on) in relations.iter_mut().zip(join::join_conditions(from)) {
        if let Some(on) = on {
            let mut b = Binder::new(&scope, "on clause");
            b.outer = outer;
            relation.on.extend(b.bind(on)?.conjuncts());
        }
    }
    // WHERE: no aggregates.
    let where_conjuncts = match &select.selection {
        Some(e) => binder("where clause").bind(e)?.conjuncts(),
        None => Vec::new(),
    };

    // Select list, HAVING and ORDER BY share one binder so aggregates are numbered once.
    crate::planner::window::check_named(&select.named_window)?;
    let mut binder = binder("field list");
    binder.allow_aggregates = true;
    binder.allow_windows = true;
    binder.named_windows = &select.named_window;
    let mut projection = Vec::new();
    let mut names = Vec::new();
    let mut origins: Vec<Option<usize>> = Vec::new();
    for item in &select.projection {
        match item {
            SelectItem::Wildcard(_) => {
                for i in join::star_columns(&relations, &scope, &merged) {
                    projection.push(Expr::Column(i));
                    names.push(scope.columns[i].name.clone());
                    origins.push(Some(i));
                }
            }
            SelectItem::QualifiedWildcard(kind, _) => {
                let qualifier = match kind {
                    ast::SelectItemQualifiedWildcardKind::ObjectName(name) => name
                        .0
                        .last()
                        .map(|p| match p {
                            ast::ObjectNamePart::Identifier(i) => i.value.clone(),
                            other => other.to_string(),
                        })
                        .unwrap_or_default(),
                    other => return Err(error::unsupported(other)),
                };
                let mut any = false;
                for (i, c) in scope.columns.iter().enumerate() {
                    if c.reach != Reach::Nothing && c.table.eq_ignore_ascii_case(&qualifier) {
                        projection.push(Expr::Column(i));
                        names.push(c.name.clone());
                        origins.push(Some(i));
                        any = true;
                    }
                }
                if !any {
                    return Err(error::unknown_table("", &qualifier));
                }
            }
            SelectItem::UnnamedExpr(e) => {
                let bound = binder.bind(e)?;
                origins.push(match bound {
                    Expr::Column(i) if i < width => Some(i),
                    _ => None,
                });
                // A column is named as the query writes it (its definition's spelling is
                // the column's original name).
                names.push(match (e, &bound) {
                    (ast::Expr::Identifier(ident), Expr::Column(_)) => ident.value.clone(),
                    (ast::Expr::CompoundIdentifier(parts), Expr::Column(_)) => {
                        parts.last().map_or_else(String::new, |p| p.value.clone())
                    }
                    (_, Expr::Column(i)) if *i < width => scope.columns[*i].name.clone(),
                    _ => expression_name(e),
                });
                projection.push(bound);
            }
            SelectItem::ExprWithAlias { expr, alias } => {
                let bound = binder.bind(expr)?;
                origins.push(match bound {
                    Expr::Column(i) if i < width => Some(i),
                    _ => None,
                });
                names.push(alias.value.clone());
                projection.push(bound);
            }
        }
    }
    // Window functions are computed after grouping and HAVING, so neither may use them.
    binder.allow_windows = false;
    let group_by = match &select.group_by {
        GroupByExpr::Expressions(exprs, _) => {
            let mut out = Vec::new();
            for e in exprs {
                out.push(bind_order_item(e, &mut binder, &projection, &names)?);
            }
            out
        }
        GroupByExpr::All(_) => return Err(error::unsupported("GROUP BY ALL")),
    };
    let mut having = match &select.having {
        // A number in HAVING is a value, not a select-list position.
        Some(e @ ast::Expr::Value(_)) => Some(binder.bind(e)?),
        Some(e) => Some(bind_order_item(e, &mut binder, &projection, &names)?),
        None => None,
    };
    binder.allow_windows = true;
    let mut order_by = Vec::new();
    if let Some(ob) = &query.order_by {
        if let ast::OrderByKind::Expressions(items) = &ob.kind {
            for item in items {
                let e = bind_order_item(&item.expr, &mut binder, &projection, &names)?;
                order_by.push((e, item.options.asc == Some(false)));
            }
        }
    }
    let aggs = std::mem::take(&mut binder.aggs);
    let windows = std::mem::take(&mut binder.windows);
    drop(binder);
    let subqueries = collector.into_plans();
    let rollup = match &select.group_by {
        GroupByExpr::Expressions(_, modifiers) => rollup_modifier(modifiers)?,
        GroupByExpr::All(_) => false,
    };
    let uses_grouping = |e: &Expr| {
        let mut found = false;
        e.walk(&mut |n| found |= matches!(n, Expr::Call(Func::Grouping, _)));
        found
    };
    let mut read_after_grouping = projection
        .iter()
        .chain(&having)
        .chain(order_by.iter().map(|(e, _)| e));
    if where_conjuncts.iter().any(uses_grouping)
        || (!rollup && read_after_grouping.any(uses_grouping))
    {
        return Err(expr::invalid_grouping());
    }
    if rollup {
        let base = width + subqueries.len();
        roll_up(&group_by, base, &mut projection, &mut having, &mut order_by)?;
    }
    let (limit, offset) = limit_clause(query)?;
    let single_table = match relations.as_slice() {
        [one] => matches!(one.source, RelationSource::Table(..)),
        _ => false,
    };
    let for_update = query
        .locks
        .iter()
        .any(|l| l.lock_type == ast::LockType::Update);
    if for_update && (!single_table || !subqueries.is_empty()) {
        return Err(error::unsupported(
            "FOR UPDATE with joins, derived tables or subqueries",
        ));
    }
    // information_schema rows are computed, not stored: there is nothing to lock.
    let memory = matches!(
        relations.first().map(|r| &r.source),
        Some(RelationSource::Table(_, Some(_)))
    );
    let lock = if for_update && !memory {
        RowLock::ForUpdate
    } else {
        RowLock::None
    };
    let distinct = matches!(select.distinct, Some(ast::Distinct::Distinct));
    Ok(BoundSelect {
        relations,
        scope,
        width,
        where_conjuncts,
        projection,
        names,
        origins,
        group_by,
        rollup,
        having,
        order_by,
        aggs,
        windows,
        subqueries,
        distinct,
        limit,
        offset,
        lock,
    })
}

/// The typing stage: each select-list item's type and the result's column definitions.
fn type_select(bound: &BoundSelect) -> (Vec<ResultType>, Arc<[ColumnInfo]>) {
    let BoundSelect {
        relations,
        scope,
        group_by,
        rollup,
        aggs,
        windows,
        subqueries,
        projection,
        names,
        origins,
        ..
    } = bound;
    let rollup = *rollup;
    let mut base_types = scope.types();
    base_types.extend(subqueries.iter().map(SubqueryPlan::result_type));
    if rollup {
        // The GROUP BY values a rollup appends, NULL in super-aggregate rows.
        let typing = expr::Typing {
            columns: &base_types,
            aggs,
            windows: &[],
        };
        let group_types: Vec<ResultType> = group_by
            .iter()
            .map(|g| ResultType {
                not_null: false,
                ..expr::typed(g, &typing)
            })
            .collect();
        let flag = expr::typed(&Expr::Literal(Datum::Int(0)), &typing);
        base_types.extend(group_types);
        // Then whether each is rolled up (GROUPING).
        base_types.extend(group_by.iter().map(|_| flag.clone()));
    }
    let window_types: Vec<ResultType> = windows.iter().map(|w| w.ty.clone()).collect();
    let typing = expr::Typing {
        columns: &base_types,
        aggs,
        windows: &window_types,
    };
    let result_types: Vec<ResultType> =
        projection.iter().map(|e| expr::typed(e, &typing)).collect();
    let columns: Arc<[ColumnInfo]> = projection
        .iter()
        .zip(names)
        .zip(&result_types)
        .zip(origins)
        .map(|(((_, name), ty), origin)| {
            let origin = origin.and_then(|i| join::column_origin(relations, i));
            column_info(
                name,
                ty,
                origin.as_ref().map(|(t, a, _)| (t.as_ref(), a.as_str())),
                origin.as_ref().map(|(_, _, i)| *i),
            )
        })
        .collect();
    (result_types, columns)
}

/// The logical plan of a bound SELECT: its FROM clause as a leaf (no row source, a table, or a
/// join of several relations) under the nodes its clauses ask for, WHERE as a Filter above the
/// subqueries' Apply; the optimizer's passes then move and decide what they can.
fn logical_select(bound: BoundSelect) -> Plan {
    let BoundSelect {
        mut relations,
        where_conjuncts,
        projection,
        group_by,
        rollup,
        having,
        order_by,
        aggs,
        windows,
        subqueries,
        distinct,
        limit,
        offset,
        lock,
        ..
    } = bound;
    let single_table = match relations.as_slice() {
        [one] => matches!(one.source, RelationSource::Table(..)),
        _ => false,
    };
    let leaf = match relations.pop() {
        None => Plan::Dual {
            conjuncts: Vec::new(),
        },
        Some(join::Relation {
            source: RelationSource::Table(table, memory),
            ..
        }) if single_table => Plan::Scan(Scan {
            table,
            memory,
            conjuncts: Vec::new(),
            source: None,
            lock,
        }),
        Some(last) => {
            relations.push(last);
            Plan::Join {
                relations,
                conjuncts: Vec::new(),
            }
        }
    };
    let aggregate = !aggs.is_empty() || !group_by.is_empty();
    let plan = Plan::wrap_if(leaf, !subqueries.is_empty(), |input| Plan::Apply {
        input,
        subqueries,
    });
    let plan = Plan::wrap_if(plan, !where_conjuncts.is_empty(), |input| Plan::Filter {
        input,
        conjuncts: where_conjuncts,
    });
    let plan = Plan::wrap_if(plan, aggregate, |input| Plan::Aggregate {
        input,
        group_by,
        aggs,
        rollup,
    });
    let plan = match having {
        Some(predicate) => Plan::Having {
            input: Box::new(plan),
            predicate,
        },
        None => plan,
    };
    let plan = Plan::wrap_if(plan, !windows.is_empty(), |input| Plan::Window {
        input,
        windows,
    });
    let plan = Plan::Project {
        input: Box::new(plan),
        exprs: projection,
    };
    let plan = Plan::wrap_if(plan, distinct, |input| Plan::Distinct { input });
    let plan = Plan::wrap_if(plan, !order_by.is_empty(), |input| Plan::Sort {
        input,
        keys: order_by,
    });
    Plan::wrap_if(plan, limit.is_some() || offset.is_some(), |input| {
        Plan::Limit {
            input,
            limit,
            offset,
        }
    })
}

/// Binds an ORDER BY / GROUP BY / HAVING item: a select-list alias, a position, or an expression.
fn bind_order_item(
    e: &ast::Expr,
    binder: &mut Binder<'_>,
    projection: &[Expr],
    names: &[String],
) -> Result<Expr> {
    if let ast::Expr::Value(v) = e {
        if let ast::Value::Number(n, _) = &v.value {
            if let Ok(pos) = n.parse::<usize>() {
                return projection
                    .get(pos.wrapping_sub(1))
                    .cloned()
                    .ok_or_else(|| error::unknown_column(n, "order clause"));
            }
        }
    }
    if let ast::Expr::Identifier(ident) = e {
        let is_column = binder
            .scope
            .columns
            .iter()
            .any(|c| c.name.eq_ignore_ascii_case(&ident.value));
        if !is_column {
            if let Some(i) = names
                .iter()
                .position(|n| n.eq_ignore_ascii_case(&ident.value))
            {
                return Ok(projection[i].clone());
            }
        }
    }
    binder.bind(e)
}

pub fn limit_clause(query: &ast::Query) -> Result<(Option<Expr>, Option<Expr>)> {
    let scope = Scope::default();
    let mut bind = |e: &ast::Expr| Binder::new(&scope, "limit clause").bind(e);
    Ok(match &query.limit_clause {
        None => (None, None),
        Some(ast::LimitClause::LimitOffset { limit, offset, .. }) => (
            limit.as_ref().map(&mut bind).transpose()?,
            offset.as_ref().map(|o| bind(&o.value)).transpose()?,
        ),
        Some(ast::LimitClause::OffsetCommaLimit { offset, limit }) => {
            (Some(bind(limit)?), Some(bind(offset)?))
        }
    })
}

fn expression_name(e: &ast::Expr) -> String {
    match e {
        ast::Expr::Value(v) => match &v.value {
            ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) => s.clone(),
            ast::Value::Boolean(b) => if *b { "TRUE" } else { "FALSE" }.to_string(),
            other => other.to_string(),
        },
        // `_binary'ab'` is named `ab`, as its string would be.
        ast::Expr::Prefixed { value, .. } if is_string_literal(value) => expression_name(value),
        other => other.to_string(),
    }
}

fn is_string_literal(e: &ast::Expr) -> bool {
    matches!(e, ast::Expr::Value(v) if matches!(v.value,
        ast::Value::SingleQuotedString(_) | ast::Value::DoubleQuotedString(_)))
}

fn column_info(
    name: &str,
    ty: &ResultType,
    table: Option<(&TableDef, &str)>,
    origin: Option<usize>,
) -> ColumnInfo {
    let mut flags = 0;
    if ty.not_null {
        flags |= column_flags::NOT_NULL;
    }
    if ty.unsigned {
        flags |= column_flags::UNSIGNED;
    }
    if ty.column_type == crate::api::ColumnType::Year {
        flags |= column_flags::UNSIGNED | column_flags::ZEROFILL;
    }
    // A binary string (a BINARY, VARBINARY or BLOB column, `X'…'`, CAST(… AS BINARY)) is
    // bytes to the client, as in MySQL.
    let mut binary_string = ty.binary;
    let (schema, table_name, org_table, org_name) = match (table, origin) {
        (Some((def, alias)), Some(i)) => {
            let column = &def.columns[i];
            binary_string |= column.ty.binary;
            flags |= column.ty.client_flags();
            if def.primary_columns().contains(&i) {
                flags |= column_flags::PRIMARY_KEY;
            }
            if column.auto_increment {
                flags |= column_flags::AUTO_INCREMENT;
            }
            (
                def.database.clone(),
                alias.to_string(),
                def.name.clone(),
                column.name.clone(),
            )
        }
        _ => (String::new(), String::new(), String::new(), String::new()),
    };
    let is_text = !binary_string
        && matches!(
            ty.column_type,
            crate::api::ColumnType::VarString
                | crate::api::ColumnType::String
                | crate::api::ColumnType::Blob
        );
    if !is_text {
        flags |= column_flags::BINARY;
    }
    if ty.column_type == crate::api::ColumnType::Blob {
        // As MySQL marks TEXT and BLOB columns (drivers read it to pick a buffer type).
        flags |= column_flags::BLOB;
    }
    ColumnInfo {
        schema,
        table: table_name,
        org_table,
        name: name.to_string(),
        org_name,
        charset: if is_text {
            crate::api::charsets::UTF8MB4_GENERAL_CI
        } else {
            crate::api::charsets::BINARY
        },
        column_length: ty.length,
        column_type: ty.column_type,
        flags,
        decimals: ty.decimals,
    }
}
