//! Queries over several tables: the FROM clause's relations (tables, information_schema tables
//! and derived tables) and the order they are joined in. The executor's join operator
//! (`crate::executor::join`) runs the plan's steps.
//!
//! The joined row has every relation's columns at fixed positions (FROM order), so expressions
//! bound once against the whole scope read it whatever order the relations are joined in. A
//! step is an index nested-loop lookup through an ordinary access path whose key expressions
//! read earlier columns as `Expr::Prefix`, or a build of the relation read once, probed
//! through a hash when an equality ties it to earlier relations; a LEFT JOIN step pads a row
//! that nothing matched with NULLs.
//!
//! The order is the one written when there is a LEFT JOIN; otherwise each next step is the
//! relation cheapest to reach from what is already joined (a point get before a scan).

use std::sync::Arc;

use sqlparser::ast::{self, TableFactor};

use crate::catalog::{Schema, TableDef};
use crate::error::{self, Result};
use crate::expr::{BinaryOp, Expr};
use crate::infoschema::MemoryRows;

use crate::expr::ResultType;
use crate::planner::access::{self, Access, TableSource};
use crate::planner::physical::SelectPlan;
use crate::planner::query::{self, PlanContext};
use crate::planner::scope::{Reach, ScopeColumn};

/// Rows assumed for a derived table when choosing the join order.
const DERIVED_ROWS_GUESS: f64 = 1_000.0;

/// One item of a FROM clause.
#[derive(Clone, Debug)]
pub struct Relation {
    /// The name that qualifies its columns.
    pub alias: String,
    pub source: RelationSource,
    /// Position of its first column in the joined row.
    pub offset: usize,
    pub width: usize,
    /// Padded with NULLs when nothing matches: joined with LEFT JOIN, or the left side of a
    /// RIGHT JOIN.
    pub left: bool,
    /// Joined with RIGHT JOIN to the relation before it (which is then `left`): it is joined
    /// first.
    pub right: bool,
    /// Its ON conditions, bound against the whole scope.
    pub on: Vec<Expr>,
    /// Joined on equal columns (USING or NATURAL) rather than, or besides, ON.
    pub using: Option<Using>,
    /// The FROM item (comma-separated) it belongs to.
    pub item: usize,
    /// Where its rows' row keys go in the joined row (the targets of a multi-table UPDATE or
    /// DELETE; None for every relation of a query).
    pub key_slot: Option<usize>,
}

/// The columns a join is on, besides its ON condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Using {
    Columns(Vec<String>),
    /// NATURAL JOIN: every column name both sides have.
    Natural,
}

#[derive(Clone, Debug)]
pub enum RelationSource {
    /// A stored table, or an information_schema table with its computed rows.
    Table(Arc<TableDef>, Option<MemoryRows>),
    /// A subquery in FROM, run once per execution.
    Derived(Box<SelectPlan>),
}

/// A planned join.
#[derive(Clone, Debug)]
pub struct JoinPlan {
    pub steps: Vec<JoinStep>,
    /// Width of the joined row.
    pub width: usize,
}

/// One relation joined to the rows of the steps before it.
#[derive(Clone, Debug)]
pub struct JoinStep {
    pub alias: String,
    pub item: JoinItem,
    pub offset: usize,
    pub width: usize,
    pub left: bool,
    /// Decides whether a row of this relation matches (ON, and WHERE for inner steps).
    pub on: Option<Expr>,
    /// WHERE conditions that can only be checked after a LEFT JOIN padded its row.
    pub filter: Option<Expr>,
    /// Where the row key of its row goes, if it is kept.
    pub key_slot: Option<usize>,
    /// The joined rows estimated to pass this step (EXPLAIN's estRows of its line).
    pub est_rows: f64,
}

#[derive(Clone, Debug)]
pub enum JoinItem {
    /// Rows found per joined row through an access path (index nested-loop join).
    Lookup(TableSource),
    /// Rows read once; with a hash probe when an equality ties them to earlier relations.
    Build {
        source: BuildSource,
        hash: Option<HashProbe>,
    },
}

#[derive(Clone, Debug)]
pub enum BuildSource {
    Table(TableSource),
    Derived(Box<SelectPlan>),
}

/// `relation.column = expression over earlier relations`, for each key part.
#[derive(Clone, Debug)]
pub struct HashProbe {
    /// Columns of the relation (its own positions) that are hashed.
    pub build: Vec<usize>,
    /// Expressions over the joined row that must equal them.
    pub probe: Vec<Expr>,
}

/// The relations of a FROM clause, with their columns' positions in the joined row.
pub fn from_relations(from: &[ast::TableWithJoins], cx: &PlanContext) -> Result<Vec<Relation>> {
    let mut relations = Vec::new();
    let mut offset = 0;
    for (item_index, item) in from.iter().enumerate() {
        let mut kinds = vec![(false, false, None)];
        for (position, j) in item.joins.iter().enumerate() {
            kinds.push(join_kind(&j.join_operator, position)?);
        }
        let factors = std::iter::once(&item.relation)
            .chain(item.joins.iter().map(|j| &j.relation))
            .zip(kinds);
        for (factor, (left, right, using)) in factors {
            let (alias, source) = relation_source(factor, cx)?;
            if relations
                .iter()
                .any(|r: &Relation| r.alias.eq_ignore_ascii_case(&alias))
            {
                return Err(crate::error::Error::new(
                    1066,
                    "42000",
                    format!("Not unique table/alias: '{alias}'"),
                ));
            }
            let width = match &source {
                RelationSource::Table(def, _) => def.columns.len(),
                RelationSource::Derived(plan) => plan.columns.len(),
            };
            relations.push(Relation {
                alias,
                source,
                offset,
                width,
                left,
                right,
                on: Vec::new(),
                using,
                item: item_index,
                key_slot: None,
            });
            offset += width;
        }
    }
    Ok(relations)
}

/// The columns `*` lists, as MySQL does: those a USING (or NATURAL) merged first, then every
/// relation's others in FROM order, but for a RIGHT JOIN … USING, whose right side comes first.
pub fn star_columns(
    relations: &[Relation],
    scope: &crate::planner::scope::Scope,
    merged: &[usize],
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..relations.len()).collect();
    for (i, relation) in relations.iter().enumerate().skip(1) {
        if relation.right && relation.using.is_some() {
            order.swap(i - 1, i);
        }
    }
    let rest = order.into_iter().flat_map(|r| {
        let relation = &relations[r];
        (relation.offset..relation.offset + relation.width)
            .filter(|i| !merged.contains(i) && scope.columns[*i].reach == Reach::Any)
    });
    merged.iter().copied().chain(rest).collect()
}

/// Whether the relation a join operator joins is padded (LEFT), joined first (RIGHT), and on
/// which equal columns. `position` is the join's place in its FROM item: a RIGHT JOIN's left
/// side is one relation here, so only the first join may be RIGHT.
fn join_kind(operator: &ast::JoinOperator, position: usize) -> Result<(bool, bool, Option<Using>)> {
    use ast::JoinOperator as J;
    let (left, right, constraint) = match operator {
        J::Join(c) | J::Inner(c) | J::CrossJoin(c) | J::StraightJoin(c) => (false, false, c),
        J::Left(c) | J::LeftOuter(c) => (true, false, c),
        J::Right(c) | J::RightOuter(c) if position == 0 => (false, true, c),
        J::Right(_) | J::RightOuter(_) => {
            return Err(error::unsupported("RIGHT JOIN after another join"))
        }
        J::FullOuter(_) => return Err(error::unsupported("FULL JOIN")),
        _ => return Err(error::unsupported("this kind of join")),
    };
    let using = match constraint {
        ast::JoinConstraint::On(_) | ast::JoinConstraint::None => None,
        ast::JoinConstraint::Natural => Some(Using::Natural),
        ast::JoinConstraint::Using(names) => Some(Using::Columns(
            names
                .iter()
                .map(|n| match n.0.last() {
                    Some(ast::ObjectNamePart::Identifier(i)) => i.value.clone(),
                    _ => n.to_string(),
                })
                .collect(),
        )),
    };
    Ok((left, right, using))
}

/// Turns each join's USING (or NATURAL) columns into equalities of its ON, and merges each
/// pair into one column: the left side's (the right side's for a RIGHT JOIN), which is then
/// the one an unqualified name reaches. Returns the merged columns, which `*` lists first.
pub fn apply_using(
    relations: &mut [Relation],
    scope: &mut crate::planner::scope::Scope,
) -> Result<Vec<usize>> {
    let mut coalesced = Vec::new();
    for r in 0..relations.len() {
        let Some(using) = relations[r].using.clone() else {
            continue;
        };
        let own = relations[r].offset..relations[r].offset + relations[r].width;
        // The left side: the relations of the same FROM item before it.
        let first = relations
            .iter()
            .position(|x| x.item == relations[r].item)
            .unwrap_or(r);
        let before = relations[first].offset..relations[r].offset;
        let visible_before = |name: &str| {
            before.clone().find(|&i| {
                scope.columns[i].reach == Reach::Any
                    && scope.columns[i].name.eq_ignore_ascii_case(name)
            })
        };
        let own_column = |name: &str| {
            own.clone().find(|&i| {
                scope.columns[i].reach == Reach::Any
                    && scope.columns[i].name.eq_ignore_ascii_case(name)
            })
        };
        let names: Vec<String> = match using {
            Using::Columns(names) => names,
            Using::Natural => own
                .clone()
                .filter(|&i| scope.columns[i].reach == Reach::Any)
                .map(|i| scope.columns[i].name.clone())
                .filter(|n| visible_before(n).is_some())
                .collect(),
        };
        let mut pairs = Vec::new();
        for name in names {
            let unknown = || error::unknown_column(&name, "from clause");
            pairs.push((
                visible_before(&name).ok_or_else(unknown)?,
                own_column(&name).ok_or_else(unknown)?,
            ));
        }
        for (l, o) in pairs {
            relations[r].on.push(Expr::Binary(
                BinaryOp::Eq,
                Box::new(Expr::Column(l)),
                Box::new(Expr::Column(o)),
            ));
            let (kept, merged) = if relations[r].right { (o, l) } else { (l, o) };
            scope.columns[merged].reach = Reach::Qualified;
            if !coalesced.contains(&kept) {
                coalesced.push(kept);
            }
        }
    }
    Ok(coalesced)
}

/// The ON condition of each relation, in the order of [`from_relations`].
pub fn join_conditions(from: &[ast::TableWithJoins]) -> Vec<Option<&ast::Expr>> {
    let mut out = Vec::new();
    for item in from {
        out.push(None);
        for j in &item.joins {
            out.push(match &j.join_operator {
                ast::JoinOperator::Join(ast::JoinConstraint::On(e))
                | ast::JoinOperator::Inner(ast::JoinConstraint::On(e))
                | ast::JoinOperator::Left(ast::JoinConstraint::On(e))
                | ast::JoinOperator::LeftOuter(ast::JoinConstraint::On(e))
                | ast::JoinOperator::Right(ast::JoinConstraint::On(e))
                | ast::JoinOperator::RightOuter(ast::JoinConstraint::On(e))
                | ast::JoinOperator::CrossJoin(ast::JoinConstraint::On(e))
                | ast::JoinOperator::StraightJoin(ast::JoinConstraint::On(e)) => Some(e),
                _ => None,
            });
        }
    }
    out
}

pub fn relation_source(factor: &TableFactor, cx: &PlanContext) -> Result<(String, RelationSource)> {
    let (schema, database) = (cx.schema, cx.database);
    if let Some(relation) = crate::planner::cte::resolve(factor, cx)? {
        return Ok(relation);
    }
    if let Some(relation) = crate::view::resolve(factor, cx)? {
        return Ok(relation);
    }
    if let Some((name, alias)) = crate::infoschema::resolve(factor, database) {
        let (def, rows) = crate::infoschema::table(schema, &name, cx.live)?;
        let alias = alias.unwrap_or_else(|| def.name.clone());
        return Ok((alias, RelationSource::Table(def, Some(rows))));
    }
    if let Some((name, alias)) = crate::mysqlschema::resolve(factor, database) {
        let (def, rows) = crate::mysqlschema::table(schema, &name)?;
        let alias = alias.unwrap_or_else(|| def.name.clone());
        return Ok((alias, RelationSource::Table(def, Some(rows))));
    }
    match factor {
        TableFactor::Derived {
            lateral: false,
            subquery,
            alias,
        } => {
            let Some(alias) = alias else {
                // MySQL: every derived table must have its own alias.
                return Err(crate::error::Error::new(
                    1248,
                    "42000",
                    "Every derived table must have its own alias",
                ));
            };
            let mut plan = query::plan_select_in(subquery, cx, None)?;
            // `AS name (a, b, …)` names the columns.
            if !alias.columns.is_empty() {
                if alias.columns.len() != plan.columns.len() {
                    return Err(crate::error::Error::new(
                        1353,
                        "HY000",
                        "In definition of view, derived table or common table expression, \
                         SELECT list and column names list have different column counts",
                    ));
                }
                let mut columns = plan.columns.to_vec();
                for (column, name) in columns.iter_mut().zip(&alias.columns) {
                    column.name = name.name.value.clone();
                }
                plan.columns = columns.into();
            }
            for (i, c) in plan.columns.iter().enumerate() {
                if plan.columns[..i]
                    .iter()
                    .any(|d| d.name.eq_ignore_ascii_case(&c.name))
                {
                    return Err(crate::error::Error::new(
                        1060,
                        "42S21",
                        format!("Duplicate column name '{}'", c.name),
                    ));
                }
            }
            Ok((
                alias.name.value.clone(),
                RelationSource::Derived(Box::new(plan)),
            ))
        }
        _ => {
            let (def, alias) = query::resolve_table(schema, database, factor)?;
            Ok((alias, RelationSource::Table(def, None)))
        }
    }
}

/// The scope columns a relation contributes.
pub fn relation_scope(relation: &Relation) -> Vec<ScopeColumn> {
    match &relation.source {
        RelationSource::Table(def, _) => query::table_scope(def, &relation.alias).columns,
        RelationSource::Derived(plan) => plan
            .columns
            .iter()
            .zip(&plan.result_types)
            .map(|(c, ty)| ScopeColumn {
                table: relation.alias.clone(),
                name: c.name.clone(),
                ty: ResultType {
                    not_null: false,
                    ..ty.clone()
                },
                reach: Reach::Any,
            })
            .collect(),
    }
}

/// The stored table, alias and column position behind column `i` of the joined row.
pub fn column_origin(relations: &[Relation], i: usize) -> Option<(Arc<TableDef>, String, usize)> {
    let r = relations
        .iter()
        .find(|r| (r.offset..r.offset + r.width).contains(&i))?;
    match &r.source {
        RelationSource::Table(def, _) => Some((def.clone(), r.alias.clone(), i - r.offset)),
        RelationSource::Derived(_) => None,
    }
}

/// Most relations whose join orders are all compared; beyond, each next step is chosen greedily.
const EXHAUSTIVE_ORDER_MAX: usize = 5;

/// Plans the join of `relations` under the WHERE conjuncts.
pub fn plan(
    relations: Vec<Relation>,
    where_conjuncts: Vec<Expr>,
    schema: &Schema,
) -> Result<JoinPlan> {
    let width = relations
        .iter()
        .map(|r| r.offset + r.width)
        .chain(relations.iter().filter_map(|r| r.key_slot.map(|k| k + 1)))
        .max()
        .unwrap_or(0);
    // An inner join's ON is a WHERE condition: it is checked at the step where every relation
    // it reads has been joined, whatever the order. A LEFT JOIN's ON decides matches instead.
    let mut relations = relations;
    // `a RIGHT JOIN b ON c` is `b LEFT JOIN a ON c`, its columns kept in place.
    let mut order_written: Vec<usize> = (0..relations.len()).collect();
    for i in 1..relations.len() {
        if relations[i].right {
            relations[i - 1].left = true;
            relations[i - 1].on = std::mem::take(&mut relations[i].on);
            order_written.swap(i - 1, i);
        }
    }
    let mut where_conjuncts = where_conjuncts;
    for r in relations.iter_mut().filter(|r| !r.left) {
        where_conjuncts.append(&mut r.on);
    }
    let order: Vec<usize> = if relations.iter().any(|r| r.left) {
        // LEFT JOIN: the written order.
        order_written
    } else if relations.len() <= EXHAUSTIVE_ORDER_MAX {
        let mut best: Option<(f64, Vec<usize>)> = None;
        // In lexicographic order, so the written order wins ties.
        let mut orders = permutations(relations.len());
        orders.sort();
        for order in orders {
            let cost = order_cost(&relations, &order, &where_conjuncts, width, schema);
            if best.as_ref().is_none_or(|(b, _)| cost < *b) {
                best = Some((cost, order));
            }
        }
        best.map(|(_, o)| o).unwrap_or_default()
    } else {
        greedy_order(&relations, &where_conjuncts, width, schema)
    };
    let mut placed = vec![false; width];
    let mut pending: Vec<Expr> = where_conjuncts;
    let mut steps = Vec::new();
    let mut rows = 1.0;
    for &i in &order {
        let relation = &relations[i];
        let (estimate, mut item) =
            choose_step(relation, &pending, &placed, schema, steps.is_empty());
        rows *= estimate.rows.max(1.0);
        if relation.key_slot.is_some() {
            match &mut item {
                JoinItem::Lookup(source)
                | JoinItem::Build {
                    source: BuildSource::Table(source),
                    ..
                } => source.with_key = true,
                JoinItem::Build { .. } => {
                    return Err(error::internal("a derived table has no row keys"))
                }
            }
        }
        for slot in &mut placed[relation.offset..relation.offset + relation.width] {
            *slot = true;
        }
        // WHERE conjuncts whose columns are all joined now are checked at this step.
        let (ready, rest): (Vec<Expr>, Vec<Expr>) = pending
            .into_iter()
            .partition(|c| c.columns().iter().all(|&i| placed.get(i) == Some(&true)));
        pending = rest;
        let (on, filter) = if relation.left {
            (relation.on.clone(), ready)
        } else {
            (
                relation.on.iter().cloned().chain(ready).collect(),
                Vec::new(),
            )
        };
        steps.push(JoinStep {
            alias: relation.alias.clone(),
            item,
            offset: relation.offset,
            width: relation.width,
            left: relation.left,
            on: Expr::conjoin(on),
            filter: Expr::conjoin(filter),
            key_slot: relation.key_slot,
            est_rows: rows,
        });
    }
    Ok(JoinPlan { steps, width })
}

/// Estimated rows read when joining in `order`: each step's reads once per row before it.
fn order_cost(
    relations: &[Relation],
    order: &[usize],
    conjuncts: &[Expr],
    width: usize,
    schema: &Schema,
) -> f64 {
    let mut placed = vec![false; width];
    let mut rows = 1.0;
    let mut total = 0.0;
    for (k, &i) in order.iter().enumerate() {
        let relation = &relations[i];
        let (estimate, _) = choose_step(relation, conjuncts, &placed, schema, k == 0);
        total += estimate.once + rows * estimate.per_row;
        rows *= estimate.rows.max(1.0);
        for slot in &mut placed[relation.offset..relation.offset + relation.width] {
            *slot = true;
        }
    }
    total
}

/// Each next relation the cheapest to join to those before it.
fn greedy_order(
    relations: &[Relation],
    conjuncts: &[Expr],
    width: usize,
    schema: &Schema,
) -> Vec<usize> {
    let mut placed = vec![false; width];
    let mut order = Vec::new();
    while order.len() < relations.len() {
        let mut best = (f64::INFINITY, 0);
        for (i, relation) in relations.iter().enumerate() {
            if order.contains(&i) {
                continue;
            }
            let (estimate, _) = choose_step(relation, conjuncts, &placed, schema, order.is_empty());
            let cost = estimate.once + estimate.per_row;
            if cost < best.0 {
                best = (cost, i);
            }
        }
        order.push(best.1);
        let relation = &relations[best.1];
        for slot in &mut placed[relation.offset..relation.offset + relation.width] {
            *slot = true;
        }
    }
    order
}

/// All orders of `n` items.
fn permutations(n: usize) -> Vec<Vec<usize>> {
    if n == 0 {
        return vec![Vec::new()];
    }
    let mut out = Vec::new();
    for rest in permutations(n - 1) {
        for position in 0..=rest.len() {
            let mut order = rest.clone();
            order.insert(position, n - 1);
            out.push(order);
        }
    }
    out
}

/// What comparing a row held in memory costs, in rows read from the KV nodes.
const IN_MEMORY_ROW_COST: f64 = 0.05;

/// What a join step is estimated to read.
#[derive(Clone, Copy, Debug)]
struct StepEstimate {
    /// Rows read once per execution (a hash build).
    once: f64,
    /// Rows read per row of the steps before.
    per_row: f64,
    /// Rows it yields per row of the steps before.
    rows: f64,
}

impl StepEstimate {
    fn per_row(rows: f64) -> StepEstimate {
        StepEstimate {
            once: 0.0,
            per_row: rows,
            rows,
        }
    }
}

/// The cheapest way to join `relation` to the columns in `placed`, and its estimated cost.
fn choose_step(
    relation: &Relation,
    pending: &[Expr],
    placed: &[bool],
    schema: &Schema,
    first: bool,
) -> (StepEstimate, JoinItem) {
    let range = relation.offset..relation.offset + relation.width;
    // Conditions that may narrow this relation's rows: its ON conditions, and for an inner
    // join the WHERE conjuncts that only need it and relations already joined.
    let usable: Vec<&Expr> = relation
        .on
        .iter()
        .chain(pending.iter().filter(|_| !relation.left))
        .filter(|c| {
            let columns = c.columns();
            columns.iter().any(|i| range.contains(i))
                && columns
                    .iter()
                    .all(|&i| range.contains(&i) || placed.get(i) == Some(&true))
        })
        .collect();
    // The same conditions seen from the relation: its columns by own position, earlier ones
    // as prefix values.
    let localize = |c: &Expr, allow_prefix: bool| {
        c.try_map_columns(&mut |i| {
            if range.contains(&i) {
                Some(Expr::Column(i - relation.offset))
            } else if allow_prefix && placed.get(i) == Some(&true) {
                Some(Expr::Prefix(i))
            } else {
                None
            }
        })
    };
    let with_prefix: Vec<Expr> = usable.iter().filter_map(|c| localize(c, true)).collect();
    let local_only: Vec<Expr> = usable.iter().filter_map(|c| localize(c, false)).collect();
    let hash = hash_probe(&usable, relation, placed);
    match &relation.source {
        RelationSource::Table(def, Some(rows)) => (
            StepEstimate::per_row(rows.len() as f64),
            JoinItem::Lookup(TableSource::new(
                def.clone(),
                Access::Memory(rows.clone()),
                rows.len() as f64,
            )),
        ),
        RelationSource::Table(def, None) => {
            let stats = schema.stats.get(&def.id).cloned();
            let (cost, access) = access::choose_access_costed(def, &with_prefix, stats.as_deref());
            if matches!(access, Access::FullScan) && !first {
                let (build_cost, build_access) =
                    access::choose_access_costed(def, &local_only, stats.as_deref());
                // Read once, then probed for each row before it: through the hash on an
                // equality, else every row of it compared in memory (MySQL's join buffer),
                // not read again from the KV nodes for each row before it.
                let estimate = match hash {
                    Some(_) => StepEstimate {
                        once: build_cost,
                        per_row: 1.0,
                        rows: 1.0,
                    },
                    None => StepEstimate {
                        once: build_cost,
                        per_row: build_cost * IN_MEMORY_ROW_COST,
                        rows: build_cost,
                    },
                };
                return (
                    estimate,
                    JoinItem::Build {
                        source: BuildSource::Table(TableSource::new(
                            def.clone(),
                            build_access.clone(),
                            access::rows_of_cost(&build_access, build_cost),
                        )),
                        hash,
                    },
                );
            }
            let rows = access::rows_of_cost(&access, cost);
            (
                StepEstimate::per_row(cost),
                JoinItem::Lookup(TableSource::new(def.clone(), access, rows)),
            )
        }
        RelationSource::Derived(plan) => (
            StepEstimate {
                once: DERIVED_ROWS_GUESS,
                per_row: if hash.is_some() {
                    1.0
                } else {
                    DERIVED_ROWS_GUESS
                },
                rows: if hash.is_some() {
                    1.0
                } else {
                    DERIVED_ROWS_GUESS
                },
            },
            JoinItem::Build {
                source: BuildSource::Derived(plan.clone()),
                hash,
            },
        ),
    }
}

/// The equalities `relation.column = expression over joined relations` among `usable`.
fn hash_probe(usable: &[&Expr], relation: &Relation, placed: &[bool]) -> Option<HashProbe> {
    let range = relation.offset..relation.offset + relation.width;
    let earlier = |e: &Expr| {
        let columns = e.columns();
        !columns.is_empty() && columns.iter().all(|&i| placed.get(i) == Some(&true))
    };
    let mut probe = HashProbe {
        build: Vec::new(),
        probe: Vec::new(),
    };
    for c in usable {
        if let Expr::Binary(BinaryOp::Eq, l, r) = c {
            let pair = match (l.as_ref(), r.as_ref()) {
                (Expr::Column(i), other) if range.contains(i) && earlier(other) => (*i, other),
                (other, Expr::Column(i)) if range.contains(i) && earlier(other) => (*i, other),
                _ => continue,
            };
            probe.build.push(pair.0 - relation.offset);
            probe.probe.push(pair.1.clone());
        }
    }
    (!probe.build.is_empty()).then_some(probe)
}
