//! The optimizer: passes that rewrite a SELECT block's logical plan ([`Plan`]), each a function
//! of the tree, run in [`optimize`]'s order.
//!
//! 1. [`fold_conditions`]: WHERE conditions of literals alone are decided now: one that holds is
//!    dropped, one that cannot hold (`WHERE 1 = 0`, `WHERE FALSE`, `WHERE NULL`) leaves no rows
//!    to read, as MySQL's "Impossible WHERE" and TiDB's `TableDual` with no rows.
//! 2. [`push_down_predicates`]: conditions move from the Filter into the leaf (the scan checks
//!    them as it reads, a join at the step where their columns are joined), except those that
//!    read the subqueries' values, which stay above the Apply that computes them.
//! 3. [`choose_paths`]: a scan gets the access path its conditions and the table's statistics
//!    make cheapest; a join gets its order and each step's path ([`crate::planner::join`]).
//! 4. [`eliminate_sort`]: a Sort whose order the scan already gives (ORDER BY the primary key
//!    after its equal prefix) goes, and the scan keeps its order.
//! 5. [`prune_columns`]: a scan reads only the columns the nodes above it read.
//! 6. [`push_down_limit`]: a scan under a LIMIT with nothing between them that drops, adds or
//!    reorders rows stops after LIMIT + OFFSET rows, and a locking read locks only those.
//!    (The executor pulls batches from the root, so a LIMIT above a sort or a grouping stops
//!    the work above them; this pass stops the reads as well.)

use crate::catalog::Schema;
use crate::expr::{BinaryOp, Expr, ParamsEnv};
use crate::planner::access::{choose_access, columns_read, order_by_key, Access, TableSource};
use crate::planner::logical::{Plan, Scan};
use crate::types;

use crate::error::Result;

/// Runs the passes over `plan`, a block whose FROM row has `width` columns.
pub fn optimize(plan: Plan, width: usize, schema: &Schema) -> Result<Plan> {
    let mut plan = fold_conditions(plan);
    push_down_predicates(&mut plan, width);
    choose_paths(&mut plan, schema)?;
    let mut plan = eliminate_sort(plan);
    prune_columns(&mut plan);
    push_down_limit(&mut plan);
    Ok(plan)
}

/// Whether a condition of literals alone holds (Some(true)), cannot hold (Some(false): false or
/// NULL), or is not decided here (None: it reads a column, a parameter or a function, whose
/// value or warnings belong to execution).
pub fn literal_truth(e: &Expr) -> Option<bool> {
    fn decidable(e: &Expr) -> bool {
        match e {
            Expr::Literal(d) => {
                matches!(d, strata_codec::Datum::Int(_) | strata_codec::Datum::Null)
            }
            Expr::Not(inner) | Expr::IsNull(inner, _) | Expr::IsTrue(inner, _) => decidable(inner),
            Expr::Binary(op, l, r) => {
                matches!(
                    op,
                    BinaryOp::Eq
                        | BinaryOp::NotEq
                        | BinaryOp::Lt
                        | BinaryOp::LtEq
                        | BinaryOp::Gt
                        | BinaryOp::GtEq
                        | BinaryOp::NullSafeEq
                        | BinaryOp::And
                        | BinaryOp::Or
                        | BinaryOp::Xor
                ) && decidable(l)
                    && decidable(r)
            }
            _ => false,
        }
    }
    if !decidable(e) {
        return None;
    }
    let value = e.eval(&[], &ParamsEnv(&[])).ok()?;
    Some(types::to_bool(&value) == Some(true))
}

/// Pass 1: decides the WHERE conditions of literals alone (see the module's list).
pub fn fold_conditions(mut plan: Plan) -> Plan {
    fn fold(node: &mut Plan, impossible: &mut bool) {
        if let Plan::Filter { conjuncts, .. } | Plan::Dual { conjuncts } = node {
            conjuncts.retain(|c| match literal_truth(c) {
                Some(true) => false,
                Some(false) => {
                    *impossible = true;
                    true
                }
                None => true,
            });
        }
        if let Some(input) = node.input_mut() {
            fold(input, impossible);
        }
    }
    let mut impossible = false;
    fold(&mut plan, &mut impossible);
    if impossible {
        // No row is read: the leaf becomes a row-less Dual. The nodes above stay (an
        // aggregate without GROUP BY still makes its one row); the filter goes with its rows.
        *plan.leaf_mut() = Plan::Dual {
            conjuncts: vec![Expr::Literal(strata_codec::Datum::Int(0))],
        };
        plan = remove_filters(plan);
    }
    plan
}

/// `plan` without its Filter nodes.
fn remove_filters(plan: Plan) -> Plan {
    remove_nodes(plan, &|node| matches!(node, Plan::Filter { .. }))
}

/// `plan` with each node that `drop` picks replaced by its input (a leaf always stays).
fn remove_nodes(mut plan: Plan, drop: &dyn Fn(&Plan) -> bool) -> Plan {
    let placeholder = || Plan::Dual {
        conjuncts: Vec::new(),
    };
    while drop(&plan) {
        let Some(input) = plan.input_mut() else { break };
        plan = std::mem::replace(&mut **input, placeholder());
    }
    if let Some(input) = plan.input_mut() {
        let below = std::mem::replace(&mut **input, placeholder());
        **input = remove_nodes(below, drop);
    }
    plan
}

/// Pass 2: moves each condition of a Filter into the leaf, unless it reads a column past the
/// FROM row's `width` (a subquery's value), which only exists above the Apply.
pub fn push_down_predicates(plan: &mut Plan, width: usize) {
    if !matches!(
        plan.leaf_mut(),
        Plan::Scan(_) | Plan::Join { .. } | Plan::Dual { .. }
    ) {
        return;
    }
    fn take(node: &mut Plan, width: usize, pushed: &mut Vec<Expr>) {
        if let Plan::Filter { conjuncts, .. } = node {
            let (down, stay): (Vec<Expr>, Vec<Expr>) = std::mem::take(conjuncts)
                .into_iter()
                .partition(|c| c.columns().iter().all(|&i| i < width));
            pushed.extend(down);
            *conjuncts = stay;
        }
        if let Some(input) = node.input_mut() {
            take(input, width, pushed);
        }
    }
    let mut pushed = Vec::new();
    take(plan, width, &mut pushed);
    if let Plan::Scan(Scan { conjuncts, .. })
    | Plan::Join { conjuncts, .. }
    | Plan::Dual { conjuncts } = plan.leaf_mut()
    {
        conjuncts.extend(pushed);
    }
    // Filters left with no condition go.
    let owned = std::mem::replace(
        plan,
        Plan::Dual {
            conjuncts: Vec::new(),
        },
    );
    *plan = remove_nodes(
        owned,
        &|node| matches!(node, Plan::Filter { conjuncts, .. } if conjuncts.is_empty()),
    );
}

/// Pass 3: the access path of a scan, from its conditions and the table's statistics; the
/// order and steps of a join.
pub fn choose_paths(plan: &mut Plan, schema: &Schema) -> Result<()> {
    let leaf = plan.leaf_mut();
    match leaf {
        Plan::Scan(scan) => {
            let (access, est_rows) = match &scan.memory {
                Some(rows) => {
                    let count = rows.rows().len() as f64;
                    (Access::Memory(rows.clone()), count)
                }
                None => {
                    let stats = schema.stats.get(&scan.table.id).cloned();
                    choose_access(&scan.table, &scan.conjuncts, stats.as_deref())
                }
            };
            scan.source = Some(TableSource::new(scan.table.clone(), access, est_rows));
        }
        Plan::Join {
            relations,
            conjuncts,
        } => {
            // On an error the plan is dropped with the emptied leaf.
            let (relations, conjuncts) = (std::mem::take(relations), std::mem::take(conjuncts));
            *leaf = Plan::Joined(crate::planner::join::plan(relations, conjuncts, schema)?);
        }
        _ => {}
    }
    Ok(())
}

/// Pass 4: a Sort over a scan that already reads in its order goes. Only a Project, an Apply
/// or a Filter may stand between them: grouping, DISTINCT and windows reorder rows.
pub fn eliminate_sort(plan: Plan) -> Plan {
    let mut keys = None;
    let mut node = &plan;
    while let Some(input) = node.input() {
        match node {
            Plan::Sort { keys: k, .. } => keys = Some(k.clone()),
            Plan::Aggregate { .. } | Plan::Distinct { .. } | Plan::Window { .. } => return plan,
            _ => {}
        }
        node = input;
    }
    let Some(keys) = keys else { return plan };
    let mut plan = plan;
    let Plan::Scan(Scan {
        source: Some(source),
        conjuncts,
        ..
    }) = plan.leaf_mut()
    else {
        return plan;
    };
    order_by_key(source, conjuncts, &keys);
    if !source.ordered {
        return plan;
    }
    remove_nodes(plan, &|node| matches!(node, Plan::Sort { .. }))
}

/// Pass 5: the columns a scan must read: those that some node above it reads. Under an Apply
/// it reads them all (a correlated subquery may read any).
pub fn prune_columns(plan: &mut Plan) {
    let mut read: Vec<&Expr> = Vec::new();
    let mut node = &*plan;
    loop {
        match node {
            Plan::Apply { .. } => return,
            Plan::Filter { conjuncts, .. } | Plan::Dual { conjuncts } => read.extend(conjuncts),
            Plan::Scan(scan) => read.extend(&scan.conjuncts),
            Plan::Aggregate { group_by, aggs, .. } => {
                read.extend(group_by);
                for agg in aggs {
                    read.push(&agg.arg);
                    read.extend(agg.order_by.iter().map(|(e, _)| e));
                }
            }
            Plan::Having { predicate, .. } => read.push(predicate),
            Plan::Window { windows, .. } => read.extend(
                windows
                    .iter()
                    .flat_map(crate::planner::window::WindowCall::exprs),
            ),
            Plan::Project { exprs, .. } => read.extend(exprs),
            Plan::Sort { keys, .. } => read.extend(keys.iter().map(|(e, _)| e)),
            Plan::Join { .. } | Plan::Joined(_) | Plan::Distinct { .. } | Plan::Limit { .. } => {}
        }
        match node.input() {
            Some(input) => node = input,
            None => break,
        }
    }
    let Plan::Scan(scan) = node else { return };
    let columns = columns_read(read, scan.table.columns.len());
    if let Plan::Scan(Scan {
        source: Some(source),
        ..
    }) = plan.leaf_mut()
    {
        source.columns = columns;
    }
}

/// Pass 6: marks the scan that may stop after the root's LIMIT + OFFSET rows: the root is a
/// Limit, and between it and the scan there is only the select list (conditions are in the
/// scan by now; a Sort still present means the scan's order is not the ORDER BY).
pub fn push_down_limit(plan: &mut Plan) {
    let Plan::Limit { input, .. } = plan else {
        return;
    };
    let mut node = &mut **input;
    while let Plan::Project { input, .. } = node {
        node = &mut **input;
    }
    if let Plan::Scan(Scan {
        source: Some(source),
        ..
    }) = node
    {
        source.limited = true;
    }
}

/// The fuzz targets' schema (database `d`, tables `t` and `u` of columns `a INT, b VARCHAR,
/// c DECIMAL, d DOUBLE, e DATETIME`), with `a` the primary key of each: the planner tests'.
#[cfg(test)]
pub(crate) fn test_schema() -> Schema {
    let mut schema = crate::fuzzing::schema();
    for (n, table) in schema.tables.values_mut().enumerate() {
        let table = std::sync::Arc::make_mut(table);
        table.id = 100 + n as i64;
        table.primary_key = crate::catalog::PrimaryKey::IntHandle(0);
        table.columns[0].nullable = false;
    }
    schema
}

#[cfg(test)]
mod tests {
    use sqlparser::ast;

    use crate::parser::statement::Statement;
    use crate::parser::{self, Batch};
    use crate::planner::query::{optimized_plan, PlanContext};

    /// The optimized tree of `sql`'s SELECT, as [`super::Plan`] displays it.
    fn plan(sql: &str) -> String {
        let schema = super::test_schema();
        let parsed = parser::parse_batch(sql, Batch::Single).expect("parses");
        let Some(Statement::Sql(tree, _)) = parsed.statements.first() else {
            panic!("not a statement of sqlparser's: {sql}");
        };
        let ast::Statement::Query(query) = &**tree else {
            panic!("not a query: {sql}");
        };
        optimized_plan(query, &PlanContext::new(&schema, Some("d")))
            .expect("plans")
            .to_string()
    }

    #[test]
    fn conditions_move_into_the_scan_and_literal_truths_go() {
        assert_eq!(
            plan("SELECT b FROM t WHERE a = 1 AND 1 = 1 AND TRUE"),
            "Project exprs=1\n  Scan t conditions=1 access=Point columns=[0, 1]\n"
        );
        assert_eq!(
            plan("SELECT b FROM t WHERE c > 5"),
            "Project exprs=1\n  Scan t conditions=1 access=FullScan columns=[1, 2]\n"
        );
    }

    #[test]
    fn a_where_that_cannot_hold_reads_nothing() {
        for never in ["1 = 0", "FALSE", "NULL", "0", "b = 'x' AND 1 <> 1", "NOT 1"] {
            assert_eq!(
                plan(&format!("SELECT COUNT(*) FROM t WHERE {never}")),
                "Project exprs=1\n  Aggregate group_by=0 aggs=1\n    Dual conditions=1\n",
                "{never}"
            );
        }
        assert_eq!(
            plan("SELECT t.b FROM t JOIN u ON t.a = u.a WHERE 1 = 2"),
            "Project exprs=1\n  Dual conditions=1\n"
        );
        // Comparisons with columns, and literals other than integers, wait for execution.
        assert!(plan("SELECT b FROM t WHERE 1 = 1.0").contains("Scan t conditions=1"));
        assert!(plan("SELECT b FROM t WHERE c = c").contains("Scan t conditions=1"));
    }

    #[test]
    fn conditions_on_subquery_values_stay_above_the_apply() {
        let tree = plan(
            "SELECT a, (SELECT MAX(c) FROM u WHERE u.a = t.a) FROM t \
             WHERE b = 'x' AND (SELECT COUNT(*) FROM u WHERE u.c = t.c) > 1",
        );
        assert_eq!(
            tree,
            "Project exprs=2\n  Filter conditions=1\n    Apply subqueries=2\n      \
             Scan t conditions=1 access=FullScan\n"
        );
    }

    #[test]
    fn the_scan_order_replaces_a_sort_on_the_primary_key() {
        assert_eq!(
            plan("SELECT a, b FROM t ORDER BY a DESC LIMIT 3"),
            "Limit\n  Project exprs=2\n    Scan t conditions=0 access=FullScan ordered limited \
             columns=[0, 1]\n"
        );
        assert_eq!(
            plan("SELECT b FROM t WHERE a BETWEEN 5 AND 10 ORDER BY a"),
            "Project exprs=1\n  Scan t conditions=1 access=PkRange ordered columns=[0, 1]\n"
        );
        // Other orders, and orders that grouping or DISTINCT make, are sorted.
        assert!(plan("SELECT b FROM t ORDER BY c").starts_with("Sort keys=1\n"));
        assert!(plan("SELECT DISTINCT a FROM t ORDER BY a").starts_with("Sort keys=1\n"));
        assert!(plan("SELECT a FROM t GROUP BY a ORDER BY a").starts_with("Sort keys=1\n"));
    }

    #[test]
    fn a_limit_stops_the_scan_only_when_nothing_between_them_drops_or_reorders_rows() {
        assert_eq!(
            plan("SELECT b FROM t WHERE c > 1 LIMIT 2, 3"),
            "Limit\n  Project exprs=1\n    Scan t conditions=1 access=FullScan limited \
             columns=[1, 2]\n"
        );
        assert!(plan("SELECT a FROM t ORDER BY a LIMIT 3").contains(" ordered limited "));
        for whole in [
            "SELECT b FROM t ORDER BY c LIMIT 3",
            "SELECT DISTINCT b FROM t LIMIT 3",
            "SELECT b, COUNT(*) FROM t GROUP BY b LIMIT 3",
            "SELECT a, (SELECT MAX(c) FROM u WHERE u.a = t.a) AS m FROM t LIMIT 3",
            "SELECT a, ROW_NUMBER() OVER () FROM t LIMIT 3",
            "SELECT b FROM t",
        ] {
            assert!(!plan(whole).contains("limited"), "{whole}");
        }
    }

    #[test]
    fn a_scan_reads_what_grouping_orders_by() {
        assert_eq!(
            plan("SELECT GROUP_CONCAT(b ORDER BY c) FROM t"),
            "Project exprs=1\n  Aggregate group_by=0 aggs=1\n    Scan t conditions=0 \
             access=FullScan columns=[1, 2]\n"
        );
    }

    #[test]
    fn a_join_is_ordered_with_its_conditions() {
        assert_eq!(
            plan("SELECT t.b FROM t, u WHERE t.a = u.c AND u.a = 7"),
            "Project exprs=1\n  Joined u,t\n"
        );
    }
}
