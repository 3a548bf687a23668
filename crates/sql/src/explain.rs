//! EXPLAIN: a statement's plan as rows, in the shape of TiDB's (operator, task, access object).

use sqlparser::ast::Statement;

use crate::api::Output;
use crate::error::{self, Result};
use crate::join::{BuildSource, JoinItem};
use crate::query::{self, Access};
use crate::session::Session;
use crate::show::{rows, text, text_column};

/// EXPLAIN of a statement: its plan as TiDB prints one (id, task, access object).
pub fn explain(session: &Session, statement: &Statement) -> Result<Output> {
    let schema = session.server().catalog().schema();
    let db = session.current_database();
    let mut join = None;
    let mut subqueries = 0;
    let (source, what) = match statement {
        Statement::Query(q) => {
            let plan = query::plan_select(q, &schema, db)?;
            join = plan.join;
            subqueries = plan.subqueries.len();
            (plan.source, "Projection")
        }
        Statement::Update {
            table,
            assignments,
            selection,
            ..
        } => (
            Some(
                crate::dml::plan_update(
                    table,
                    assignments,
                    selection.as_ref(),
                    &[],
                    None,
                    &schema,
                    db,
                )?
                .source,
            ),
            "Update",
        ),
        Statement::Delete(d) => (
            Some(crate::dml::plan_delete(d, &schema, db)?.source),
            "Delete",
        ),
        Statement::Insert(_) => (None, "Insert"),
        other => return Err(error::unsupported(format!("EXPLAIN {other}"))),
    };
    let mut out = vec![vec![text(what), text("root"), text("")]];
    if subqueries > 0 {
        out.push(vec![
            text("└─Apply"),
            text("root"),
            text(format!("{subqueries} subqueries")),
        ]);
    }
    if let Some(source) = source {
        let (operator, object) = access_text(&source);
        out.push(vec![
            text(format!("└─{operator}")),
            text("cop[tikv]"),
            text(object),
        ]);
    }
    if let Some(join) = join {
        for (k, step) in join.steps.iter().enumerate() {
            let kind = if step.left { "left " } else { "" };
            let (operator, object) = match &step.item {
                JoinItem::Lookup(source) => {
                    let (operator, object) = access_text(source);
                    let how = if k == 0 { "" } else { "IndexJoin " };
                    (format!("{how}{kind}{operator}"), object)
                }
                JoinItem::Build { source, hash } => {
                    let how = if hash.is_some() {
                        "HashJoin"
                    } else {
                        "NestedLoop"
                    };
                    let object = match source {
                        BuildSource::Table(t) => access_text(t).1,
                        BuildSource::Derived(_) => format!("derived:{}", step.alias),
                    };
                    (format!("{how} {kind}build"), object)
                }
            };
            out.push(vec![
                text(format!("└─{operator}")),
                text(if k == 0 { "cop[tikv]" } else { "root" }),
                text(object),
            ]);
        }
    }
    Ok(rows(
        vec![
            text_column("id"),
            text_column("task"),
            text_column("access object"),
        ],
        out,
    ))
}

/// The operator and object EXPLAIN shows for an access path.
fn access_text(source: &query::TableSource) -> (String, String) {
    let table = &source.table;
    let (operator, object) = match &source.access {
        Access::Point(_) => ("Point_Get", format!("table:{}, handle", table.name)),
        Access::Points(keys) => (
            "Batch_Point_Get",
            format!("table:{}, {} keys", table.name, keys.len()),
        ),
        Access::PkRange { .. } => (
            "TableRangeScan",
            format!("table:{}, range on primary key", table.name),
        ),
        Access::Index { index, .. } => (
            "IndexLookUp",
            format!("table:{}, index:{}", table.name, table.indexes[*index].name),
        ),
        Access::FullScan => ("TableFullScan", format!("table:{}", table.name)),
        Access::PkPrefixes(list) => (
            "TableRangeScan",
            format!("table:{}, {} primary-key prefixes", table.name, list.len()),
        ),
        Access::Memory(_) => ("MemTableScan", format!("table:{}", table.name)),
    };
    let order = if source.ordered { ", keep order" } else { "" };
    (operator.to_string(), format!("{object}{order}"))
}
