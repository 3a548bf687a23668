//! Shrinking a failing query to a small reproducer: simpler queries are tried one at a time and
//! kept while they still fail the same way (greedy delta debugging over the query tree), then
//! rows are taken out of the tables it reads, in halves, quarters, … down to single rows.
//!
//! A candidate may be invalid SQL (a column of a join that is gone): both servers then refuse
//! it, which is no difference, so it is simply not kept.

use crate::query::{Expr, JoinKind, Query, Select};

/// Simpler variants of `query`, most drastic first.
pub fn candidates(query: &Query) -> Vec<Query> {
    let mut out = Vec::new();
    if query.limit.is_some() {
        out.push(Query {
            limit: None,
            ..query.clone()
        });
    } else {
        // Without a LIMIT, fewer ORDER BY keys cannot make the answer undetermined.
        if !query.order_by.is_empty() {
            out.push(Query {
                order_by: Vec::new(),
                ..query.clone()
            });
        }
        for i in 0..query.order_by.len().saturating_sub(1) {
            let mut q = query.clone();
            q.order_by.remove(i);
            out.push(q);
        }
    }
    if query.selects.len() > 1 {
        for i in 0..query.selects.len() {
            let mut q = query.clone();
            q.selects.remove(i);
            q.union_all.remove(i.min(q.union_all.len() - 1));
            out.push(q);
        }
    } else {
        // Dropping an output column also drops its ORDER BY key.
        let width = query.selects[0].items.len();
        for i in (0..width).filter(|_| width > 1) {
            let mut q = query.clone();
            q.selects[0].items.remove(i);
            q.order_by.retain(|(p, _)| *p != i);
            for (p, _) in &mut q.order_by {
                if *p > i {
                    *p -= 1;
                }
            }
            out.push(q);
        }
    }
    for (i, select) in query.selects.iter().enumerate() {
        for s in select_candidates(select) {
            let mut q = query.clone();
            q.selects[i] = s;
            out.push(q);
        }
    }
    out
}

fn select_candidates(select: &Select) -> Vec<Select> {
    let mut out = Vec::new();
    let with = |f: &dyn Fn(&mut Select)| {
        let mut s = select.clone();
        f(&mut s);
        s
    };
    if select.distinct {
        out.push(with(&|s| s.distinct = false));
    }
    if select.having.is_some() {
        out.push(with(&|s| s.having = None));
    }
    for i in 0..select.group_by.len() {
        out.push(with(&|s| {
            s.group_by.remove(i);
        }));
    }
    if let Some(filter) = &select.filter {
        out.push(with(&|s| s.filter = None));
        let parts = conjuncts(filter);
        for i in (0..parts.len()).filter(|_| parts.len() > 1) {
            let mut rest = parts.clone();
            rest.remove(i);
            out.push(with(&|s| s.filter = Expr::conjunction(rest.clone())));
        }
        for e in expr_candidates(filter) {
            out.push(with(&|s| s.filter = Some(e.clone())));
        }
    }
    for j in (0..select.joins.len()).rev() {
        out.push(with(&|s| {
            s.joins.remove(j);
        }));
        let join = &select.joins[j];
        if join.kind == JoinKind::Left {
            out.push(with(&|s| s.joins[j].kind = JoinKind::Inner));
        }
        if let Some(on) = &join.on {
            if join.kind != JoinKind::Comma {
                out.push(with(&|s| s.joins[j].on = None));
            }
            for e in expr_candidates(on) {
                out.push(with(&|s| s.joins[j].on = Some(e.clone())));
            }
        }
    }
    for i in 0..select.items.len() {
        for e in expr_candidates(&select.items[i]) {
            out.push(with(&|s| s.items[i] = e.clone()));
        }
    }
    if let Some(having) = &select.having {
        for e in expr_candidates(having) {
            out.push(with(&|s| s.having = Some(e.clone())));
        }
    }
    out
}

/// The parts of an AND chain.
fn conjuncts(e: &Expr) -> Vec<Expr> {
    match e {
        Expr::Binary {
            op: "AND",
            left,
            right,
        } => {
            let mut parts = conjuncts(left);
            parts.extend(conjuncts(right));
            parts
        }
        other => vec![other.clone()],
    }
}

/// Simpler variants of one expression: a child in its place, a shorter IN list, a CASE without
/// ELSE, a subquery shrunk, and the same for every part inside.
fn expr_candidates(e: &Expr) -> Vec<Expr> {
    let mut out: Vec<Expr> = e.children().into_iter().cloned().collect();
    match e {
        Expr::InList {
            expr,
            list,
            negated,
        } if list.len() > 1 => {
            for i in 0..list.len() {
                let mut shorter = list.clone();
                shorter.remove(i);
                out.push(Expr::InList {
                    expr: expr.clone(),
                    list: shorter,
                    negated: *negated,
                });
            }
        }
        Expr::Case {
            whens,
            otherwise: Some(_),
        } => out.push(Expr::Case {
            whens: whens.clone(),
            otherwise: None,
        }),
        Expr::Scalar(query) => {
            out.extend(
                candidates(query)
                    .into_iter()
                    .map(|q| Expr::Scalar(Box::new(q))),
            );
        }
        Expr::Exists { query, negated } => {
            out.push(Expr::Literal("TRUE".into()));
            out.extend(candidates(query).into_iter().map(|q| Expr::Exists {
                query: Box::new(q),
                negated: *negated,
            }));
        }
        Expr::InSubquery {
            expr,
            query,
            negated,
        } => {
            out.push(Expr::Literal("TRUE".into()));
            out.extend(candidates(query).into_iter().map(|q| Expr::InSubquery {
                expr: expr.clone(),
                query: Box::new(q),
                negated: *negated,
            }));
        }
        _ => {}
    }
    let children = e.children();
    for (i, child) in children.iter().enumerate() {
        for replacement in expr_candidates(child) {
            let mut copy = e.clone();
            *copy.children_mut()[i] = replacement;
            out.push(copy);
        }
    }
    out
}

/// Row sets to try for a table of `count` rows: each chunk of a halving size taken out, as
/// lists of the row positions that stay.
pub fn row_removals(count: usize, chunk: usize) -> Vec<Vec<usize>> {
    if chunk == 0 || count == 0 {
        return Vec::new();
    }
    (0..count)
        .step_by(chunk)
        .map(|start| {
            (0..count)
                .filter(|i| *i < start || *i >= start + chunk)
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn select(filter: Expr) -> Select {
        Select {
            distinct: false,
            items: vec![Expr::column("a1", "c1"), Expr::column("a1", "c2")],
            from: Some(("t1".into(), "a1".into())),
            joins: Vec::new(),
            filter: Some(filter),
            group_by: Vec::new(),
            having: None,
        }
    }

    #[test]
    fn candidates_take_parts_away() {
        let filter = Expr::binary(
            "AND",
            Expr::binary("=", Expr::column("a1", "c1"), Expr::Literal("1".into())),
            Expr::InList {
                expr: Box::new(Expr::column("a1", "c2")),
                list: vec![Expr::Literal("1".into()), Expr::Literal("2".into())],
                negated: false,
            },
        );
        let mut query = Query::single(select(filter));
        query.order_by = vec![(1, false), (0, true)];
        query.limit = Some((3, 0));
        let texts: Vec<String> = candidates(&query).iter().map(|q| q.to_string()).collect();
        // The LIMIT goes first; the ORDER BY is kept while the LIMIT stands.
        assert_eq!(
            texts[0],
            "SELECT a1.c1 AS c0, a1.c2 AS c1 FROM t1 AS a1 WHERE ((a1.c1 = 1) AND (a1.c2 IN (1, 2))) ORDER BY 2, 1 DESC"
        );
        assert!(texts.iter().all(|t| t.contains("ORDER BY")));
        // Dropping output column 0 renumbers the ORDER BY.
        assert!(texts.contains(
            &"SELECT a1.c2 AS c0 FROM t1 AS a1 WHERE ((a1.c1 = 1) AND (a1.c2 IN (1, 2))) ORDER BY 1 LIMIT 3"
                .to_string()
        ));
        assert!(texts
            .iter()
            .any(|t| t.contains("WHERE (a1.c2 IN (1, 2)) ORDER")));
        assert!(texts.iter().any(|t| t.contains("(a1.c2 IN (2))")));
    }

    #[test]
    fn row_removals_cover_every_chunk() {
        assert_eq!(
            row_removals(5, 2),
            vec![vec![2, 3, 4], vec![0, 1, 4], vec![0, 1, 2, 3]]
        );
        assert!(row_removals(0, 1).is_empty());
    }
}
