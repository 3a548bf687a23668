//! Long chains of set operations, regrouped right after parsing so that no later walk of the
//! tree recurses once per part.

use std::ops::ControlFlow;

use sqlparser::ast::{SetExpr, SetOperator, SetQuantifier, Statement, VisitMut, VisitorMut};

use crate::error::{Error, Result};

/// Regroups every long chain of UNIONs in `statement` as a balanced tree, before anything walks
/// it. sqlparser builds `a UNION b UNION c …` left-deep, and each walk of that tree (cloning,
/// planning, dropping) recurses once per part; balanced, a chain of 10,000 parts is 14 deep.
/// Regrouping keeps the parts in order and keeps MySQL's meaning: a UNION DISTINCT removes
/// duplicates from every part to its left, so the operators up to the last DISTINCT are all
/// DISTINCT and those after it all ALL, and each run of one operator associates. A chain of
/// EXCEPT or INTERSECT stays left-deep, and may be at most [`MAX_LEFT_DEEP`] long.
///
/// [`MAX_LEFT_DEEP`]: crate::parser::dialect::MAX_LEFT_DEEP
pub fn balance_set_operations(statement: &mut Statement) -> Result<()> {
    struct Balancer;
    impl VisitorMut for Balancer {
        type Break = Error;
        fn pre_visit_query(&mut self, query: &mut sqlparser::ast::Query) -> ControlFlow<Error> {
            match balance_chain(&mut query.body) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => ControlFlow::Break(e),
            }
        }
    }
    match statement.visit(&mut Balancer) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(e) => Err(e),
    }
}

/// The operator of a set-operation node, if `body` is one.
fn set_operator(body: &SetExpr) -> Option<(SetOperator, SetQuantifier)> {
    match body {
        SetExpr::SetOperation {
            op, set_quantifier, ..
        } => Some((*op, *set_quantifier)),
        _ => None,
    }
}

/// Chains shorter than this are left as sqlparser builds them.
const BALANCE_SET_FROM: usize = 16;

fn balance_chain(body: &mut SetExpr) -> Result<()> {
    // The left spine, walked without taking it apart.
    let mut operators = Vec::new();
    let mut node = &*body;
    while let SetExpr::SetOperation { left, .. } = node {
        operators.push(set_operator(node).expect("a set operation"));
        node = left;
    }
    if operators.len() < BALANCE_SET_FROM {
        return Ok(());
    }
    let unions = operators.iter().all(|(op, _)| *op == SetOperator::Union);
    if !unions {
        return if operators.len() > crate::parser::dialect::MAX_LEFT_DEEP {
            Err(crate::error::too_deep())
        } else {
            Ok(())
        };
    }
    // Taken apart iteratively: the leftmost part, then each right part in order.
    let mut rights = Vec::with_capacity(operators.len());
    let mut rest = std::mem::replace(body, crate::parser::synth::no_rows());
    while let SetExpr::SetOperation { left, right, .. } = rest {
        rights.push(*right);
        rest = *left;
    }
    operators.reverse();
    rights.reverse();
    let distinct = |q: &SetQuantifier| !matches!(q, SetQuantifier::All);
    let last_distinct = operators.iter().rposition(|(_, q)| distinct(q));
    let (before, after) = rights.split_at_mut(last_distinct.map_or(0, |i| i + 1));
    let mut tree = rest;
    for (parts, quantifier) in [
        (before, SetQuantifier::Distinct),
        (after, SetQuantifier::All),
    ] {
        if !parts.is_empty() {
            tree = SetExpr::SetOperation {
                op: SetOperator::Union,
                set_quantifier: quantifier,
                left: Box::new(tree),
                right: Box::new(balanced_union(quantifier, parts)),
            };
        }
    }
    *body = tree;
    Ok(())
}

/// `parts` joined by one UNION as a balanced tree, parts in order.
fn balanced_union(quantifier: SetQuantifier, parts: &mut [SetExpr]) -> SetExpr {
    if let [only] = parts {
        return std::mem::replace(only, crate::parser::synth::no_rows());
    }
    let (left, right) = parts.split_at_mut(parts.len() / 2);
    SetExpr::SetOperation {
        op: SetOperator::Union,
        set_quantifier: quantifier,
        left: Box::new(balanced_union(quantifier, left)),
        right: Box::new(balanced_union(quantifier, right)),
    }
}
