//! EXPLAIN: a statement's plan as rows, in the shape of TiDB's (operator, task, access object);
//! EXPLAIN ANALYZE runs a SELECT and adds what each operator did (rows, loops, time).

use sqlparser::ast::Statement;

use crate::api::Output;
use crate::error::{self, Result};
use crate::executor::scan::{source_node, table_filter};
use crate::executor::{self, Node};
use crate::planner::query;
use crate::session::Session;
use crate::show::{rows, text, text_column};

/// EXPLAIN ANALYZE of a SELECT: runs it (its rows are not sent) and prints its operator tree
/// with TiDB's columns: the rows each operator handed its parent (actRows), in
/// `execution info` the time spent in it and below it, how often it was pulled, the read
/// requests to storage made in it and below it (`kv_reads`) and, for scans, the rows they
/// returned from storage and the stored versions read to find them (TiDB's
/// `total_process_keys` and `total_keys`), and the
/// most memory an operator that keeps rows held and what it wrote to disk (`N/A` for one that
/// only passes batches on). Operators measured only as part of another (a join's steps, a
/// subquery's or union branch's operators) show no figures.
pub fn analyze(session: &mut Session, statement: &Statement) -> Result<Output> {
    let Statement::Query(q) = statement else {
        return Err(error::unsupported(
            "EXPLAIN ANALYZE of a statement other than SELECT",
        ));
    };
    let plan = {
        let schema = session.server().catalog().schema();
        query::plan_select(q, &schema, session.current_database())?
    };
    let tree = session.analyze_select(&plan)?;
    let out = tree
        .analyzed_rows()
        .into_iter()
        .map(|([id, est_rows, task, object, info], ran)| {
            let (act_rows, execution) = match ran {
                Some(ran) => {
                    let mut execution = match ran.time {
                        Some(time) => format!("time:{}, ", duration(time)),
                        None => String::new(),
                    };
                    execution += &format!("loops:{}, kv_reads:{}", ran.loops, ran.kv.requests);
                    if ran.kv.versions > 0 {
                        execution += &format!(
                            ", process_keys:{}, total_keys:{}",
                            ran.kv.keys, ran.kv.versions
                        );
                    }
                    (ran.rows.to_string(), execution)
                }
                None => (String::new(), String::new()),
            };
            let (memory, disk) = match ran.and_then(|ran| ran.held) {
                Some(held) => (bytes(held.memory), bytes(held.disk)),
                None if ran.is_some() => ("N/A".to_string(), "N/A".to_string()),
                None => (String::new(), String::new()),
            };
            vec![
                text(id),
                text(est_rows),
                text(act_rows),
                text(task),
                text(object),
                text(execution),
                text(info),
                text(memory),
                text(disk),
            ]
        })
        .collect();
    Ok(rows(
        vec![
            text_column("id"),
            text_column("estRows"),
            text_column("actRows"),
            text_column("task"),
            text_column("access object"),
            text_column("execution info"),
            text_column("operator info"),
            text_column("memory"),
            text_column("disk"),
        ],
        out,
    ))
}

/// A size as TiDB prints one: `512 Bytes`, `1.50 KB`, `2.25 MB`, `1.07 GB`.
fn bytes(n: u64) -> String {
    const KIB: f64 = 1024.0;
    let n_f = n as f64;
    if n < 1024 {
        format!("{n} Bytes")
    } else if n_f < KIB * KIB {
        format!("{:.2} KB", n_f / KIB)
    } else if n_f < KIB * KIB * KIB {
        format!("{:.2} MB", n_f / (KIB * KIB))
    } else {
        format!("{:.2} GB", n_f / (KIB * KIB * KIB))
    }
}

/// A duration as TiDB prints one: `1.23ms`, `456.7µs`, `2.1s`.
fn duration(d: std::time::Duration) -> String {
    let micros = d.as_secs_f64() * 1e6;
    if micros < 1000.0 {
        format!("{micros:.1}µs")
    } else if micros < 1e6 {
        format!("{:.2}ms", micros / 1000.0)
    } else {
        format!("{:.2}s", micros / 1e6)
    }
}

/// EXPLAIN of a statement: the operator tree it runs, as TiDB prints one (id, estRows, task,
/// access object, operator info).
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
            .estimated(f64::NAN)
        }
        Statement::Delete(d) => {
            let plan = crate::dml::plan_delete(d, &schema, db)?;
            let info = plan.filter.as_ref().map(|f| table_filter(&plan.source, f));
            Node::root(
                "Delete",
                "",
                vec![source_node(&plan.source, info.unwrap_or_default())],
            )
            .estimated(f64::NAN)
        }
        Statement::Insert(insert) => {
            // Rows from a query: its operator tree under the insert, as TiDB shows it.
            let plan = crate::dml::plan_insert(insert, &schema, db)?;
            let children = match &plan.source {
                crate::dml::InsertSource::Select(select) => vec![executor::build(select).explain()],
                crate::dml::InsertSource::Values(_) => Vec::new(),
            };
            Node::root("Insert", "", children).estimated(f64::NAN)
        }
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
            text_column("estRows"),
            text_column("task"),
            text_column("access object"),
            text_column("operator info"),
        ],
        out,
    ))
}
