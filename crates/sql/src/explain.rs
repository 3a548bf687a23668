//! EXPLAIN: a statement's plan as rows, in the shape of TiDB's (operator, task, access object).

use sqlparser::ast::Statement;

use crate::api::Output;
use crate::error::{self, Result};
use crate::executor::scan::{source_node, table_filter};
use crate::executor::{self, Node};
use crate::planner::query;
use crate::session::Session;
use crate::show::{rows, text, text_column};

/// EXPLAIN of a statement: the operator tree it runs, as TiDB prints one (id, task, access
/// object, operator info).
pub fn explain(session: &Session, statement: &Statement) -> Result<Output> {
    let schema = session.server().catalog().schema();
    let db = session.current_database();
    let tree = match statement {
        Statement::Query(q) => {
            let plan = query::plan_select(q, &schema, db)?;
            let tree = executor::build(&plan).explain();
            tree
        }
        Statement::Update {
            table,
            assignments,
            selection,
            ..
        } => {
            let plan = crate::dml::plan_update(
                table,
                assignments,
                selection.as_ref(),
                &[],
                None,
                &schema,
                db,
            )?;
            let info = plan.filter.as_ref().map(|f| table_filter(&plan.source, f));
            Node::root(
                "Update",
                "",
                vec![source_node(&plan.source, info.unwrap_or_default())],
            )
        }
        Statement::Delete(d) => {
            let plan = crate::dml::plan_delete(d, &schema, db)?;
            let info = plan.filter.as_ref().map(|f| table_filter(&plan.source, f));
            Node::root(
                "Delete",
                "",
                vec![source_node(&plan.source, info.unwrap_or_default())],
            )
        }
        Statement::Insert(_) => Node::root("Insert", "", Vec::new()),
        other => return Err(error::unsupported(format!("EXPLAIN {other}"))),
    };
    let out = tree
        .rows()
        .into_iter()
        .map(|row| row.map(text).to_vec())
        .collect();
    Ok(rows(
        vec![
            text_column("id"),
            text_column("task"),
            text_column("access object"),
            text_column("operator info"),
        ],
        out,
    ))
}
