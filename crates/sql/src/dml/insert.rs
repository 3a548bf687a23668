//! INSERT, REPLACE and INSERT … ON DUPLICATE KEY UPDATE: planning and execution, with the
//! checks of a new row against the primary key and unique indexes.

use std::sync::Arc;

use sqlparser::ast::{self, SetExpr};
use strata_codec::Datum;
use strata_txn::Transaction;
use strata_types::Key;

use super::{
    assign, bind_assignments, check_not_null, delete_row, key_text, lock, object_table,
    primary_key_name, put_row, update_row, WriteCtx, WriteResult,
};
use crate::catalog::{PrimaryKey, Schema, TableDef};
use crate::error::{self, Result};
use crate::exec;
use crate::expr::Expr;
use crate::planner::bind::Binder;
use crate::planner::physical::SelectPlan;
use crate::planner::query;
use crate::planner::scope::Scope;
use crate::rows;
use crate::types;

/// Table alias under which `VALUES(col)` of an upsert is bound.
const INSERTED_ALIAS: &str = "\u{1}inserted";

/// Where an INSERT's rows come from.
#[derive(Clone, Debug)]
pub enum InsertSource {
    /// One expression per listed column; None stands for `DEFAULT`.
    Values(Vec<Vec<Option<Expr>>>),
    Select(Box<SelectPlan>),
}

#[derive(Clone, Debug)]
pub struct InsertPlan {
    pub table: Arc<TableDef>,
    /// Table positions of the listed columns.
    pub columns: Vec<usize>,
    pub source: InsertSource,
    pub replace: bool,
    pub ignore: bool,
    /// ON DUPLICATE KEY UPDATE assignments over (old row ++ inserted row).
    pub on_duplicate: Option<Vec<(usize, Expr)>>,
}

pub fn plan_insert(
    insert: &ast::Insert,
    schema: &Schema,
    database: Option<&str>,
) -> Result<InsertPlan> {
    let name = match &insert.table {
        ast::TableObject::TableName(name) => name,
        other => return Err(error::unsupported(other)),
    };
    let table = object_table(schema, database, name, "INSERT")?;
    // INSERT … SET a = 1, b = 2 is INSERT … (a, b) VALUES (1, 2).
    if insert.source.is_none() && !insert.assignments.is_empty() {
        let mut columns = Vec::new();
        let mut values = Vec::new();
        for a in &insert.assignments {
            let ast::AssignmentTarget::ColumnName(name) = &a.target else {
                return Err(error::syntax(format!("near '{}'", a.target)));
            };
            let Some(ast::ObjectNamePart::Identifier(column)) = name.0.last() else {
                return Err(error::syntax(format!("near '{name}'")));
            };
            columns.push(column.clone());
            values.push(a.value.clone());
        }
        let rewritten = ast::Insert {
            columns,
            assignments: Vec::new(),
            source: Some(Box::new(crate::parser::synth::query(SetExpr::Values(
                ast::Values {
                    explicit_row: false,
                    rows: vec![values],
                },
            )))),
            ..insert.clone()
        };
        return plan_insert(&rewritten, schema, database);
    }
    let columns: Vec<usize> = if insert.columns.is_empty() {
        table.visible_columns().map(|(i, _)| i).collect()
    } else {
        insert
            .columns
            .iter()
            .map(|c| {
                table
                    .column_index(&c.value)
                    .ok_or_else(|| error::unknown_column(&c.value, "field list"))
            })
            .collect::<Result<_>>()?
    };
    let empty = Scope::default();
    let source = match insert.source.as_deref() {
        Some(q) => match q.body.as_ref() {
            SetExpr::Values(values) => {
                let mut rows = Vec::with_capacity(values.rows.len());
                for row in &values.rows {
                    if row.len() != columns.len() {
                        return Err(error::column_count_mismatch());
                    }
                    let mut binder = Binder::new(&empty, "field list");
                    rows.push(
                        row.iter()
                            .map(|e| bind_value(&mut binder, e))
                            .collect::<Result<Vec<_>>>()?,
                    );
                }
                InsertSource::Values(rows)
            }
            _ => {
                let plan = query::plan_select(q, schema, database)?;
                if plan.columns.len() != columns.len() {
                    return Err(error::column_count_mismatch());
                }
                InsertSource::Select(Box::new(plan))
            }
        },
        None => return Err(error::unsupported("INSERT without VALUES")),
    };
    let on_duplicate = match &insert.on {
        Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) => {
            let mut scope = query::table_scope(&table, &table.name);
            let inserted = query::table_scope(&table, INSERTED_ALIAS);
            scope.columns.extend(inserted.columns);
            Some(bind_assignments(&table, &scope, assignments, true, None)?)
        }
        Some(other) => return Err(error::unsupported(other)),
        None => None,
    };
    Ok(InsertPlan {
        table,
        columns,
        source,
        replace: insert.replace_into,
        ignore: insert.ignore,
        on_duplicate,
    })
}

/// Binds a VALUES item; `DEFAULT` becomes None.
fn bind_value(binder: &mut Binder<'_>, e: &ast::Expr) -> Result<Option<Expr>> {
    if let ast::Expr::Identifier(ident) = e {
        if ident.quote_style.is_none() && ident.value.eq_ignore_ascii_case("DEFAULT") {
            return Ok(None);
        }
    }
    binder.bind(e).map(Some)
}

/// Rewrites `VALUES(col)` to a reference to the inserted row's column.
pub(super) fn rewrite_values_function(e: &ast::Expr) -> ast::Expr {
    use sqlparser::ast::{visit_expressions_mut, Expr as A};
    let mut e = e.clone();
    let _ = visit_expressions_mut(&mut e, |node| {
        if let A::Function(f) = node {
            if f.name.to_string().eq_ignore_ascii_case("VALUES") {
                if let ast::FunctionArguments::List(list) = &f.args {
                    if let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(A::Identifier(
                        column,
                    )))] = list.args.as_slice()
                    {
                        *node = A::CompoundIdentifier(vec![
                            ast::Ident::new(INSERTED_ALIAS),
                            column.clone(),
                        ]);
                    }
                }
            }
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    e
}

/// A conflict of a new row with a stored one.
struct Conflict {
    key: Key,
    row: Vec<Datum>,
    message: crate::error::Error,
}

/// Finds a stored row that the new row would duplicate on the primary key or a unique index.
fn find_conflict(
    txn: &mut Transaction,
    table: &TableDef,
    row: &[Datum],
    handle: &[Datum],
) -> Result<Option<Conflict>> {
    if table.primary_key != PrimaryKey::RowId {
        let key = rows::row_key(table, handle);
        if let Some(value) = txn.get(&key)? {
            let stored = rows::decode_row(table, &value)?;
            let message = error::duplicate_key(&key_text(handle), &primary_key_name(table));
            return Ok(Some(Conflict {
                key,
                row: stored,
                message,
            }));
        }
    }
    for index in table.indexes.iter().filter(|i| i.unique && !i.delete_only) {
        let values: Vec<Datum> = index.columns.iter().map(|c| row[*c].clone()).collect();
        if values.contains(&Datum::Null) {
            continue;
        }
        let (index_key, _) = rows::index_entry(table, index, row, handle);
        if let Some(value) = txn.get(&index_key)? {
            let other = rows::handle_from_index_entry(table, index, &index_key, &value)?;
            let key = rows::row_key(table, &other);
            let stored = match txn.get(&key)? {
                Some(v) => rows::decode_row(table, &v)?,
                None => {
                    return Err(error::internal(
                        "unique index entry points at a missing row",
                    ))
                }
            };
            let message = error::duplicate_key(
                &key_text(&values),
                &format!("{}.{}", table.name, index.name),
            );
            return Ok(Some(Conflict {
                key,
                row: stored,
                message,
            }));
        }
    }
    Ok(None)
}

/// Writes a new row without reading first: the row key and unique index keys go as inserts that
/// the commit checks for existence (TiDB's lazy uniqueness check). Returns false, writing
/// nothing, when the transaction already wrote one of those keys (the caller then reads).
fn insert_presumed(
    txn: &mut Transaction,
    table: &TableDef,
    row: &[Datum],
    handle: &[Datum],
) -> bool {
    let key = rows::row_key(table, handle);
    let entries: Vec<(Key, Vec<u8>, bool)> = table
        .indexes
        .iter()
        .filter(|index| !index.delete_only)
        .map(|index| {
            let (k, v) = rows::index_entry(table, index, row, handle);
            let distinct = index.unique && !v.is_empty();
            (k, v, distinct)
        })
        .collect();
    let primary_checked = table.primary_key != PrimaryKey::RowId;
    if (primary_checked && txn.is_buffered(&key))
        || entries.iter().any(|(k, _, d)| *d && txn.is_buffered(k))
    {
        return false;
    }
    let value = rows::encode_row(table, row);
    if primary_checked {
        txn.insert_new(key, value);
    } else {
        txn.put(key, value);
    }
    for (k, v, distinct) in entries {
        if distinct {
            txn.insert_new(k, v);
        } else {
            txn.put(k, v);
        }
    }
    true
}

/// The duplicate-key error for a key an insert found existing at commit.
pub fn duplicate_from_key(schema: &Schema, key: &[u8]) -> crate::error::Error {
    let unknown = || error::duplicate_key("?", "?");
    let Ok(table_id) = strata_codec::keys::decode_table_id(key) else {
        return unknown();
    };
    let Some(table) = schema.tables.values().find(|t| t.id == table_id.0) else {
        return unknown();
    };
    if strata_codec::keys::is_record_key(key) {
        return match rows::handle_from_row_key(table, key) {
            Ok(handle) => error::duplicate_key(&key_text(&handle), &primary_key_name(table)),
            Err(_) => unknown(),
        };
    }
    let Ok((_, index_id)) = strata_codec::keys::decode_index_ids(key) else {
        return unknown();
    };
    let Some(index) = table.indexes.iter().find(|i| i.id == index_id.0) else {
        return unknown();
    };
    let mut input = key
        .get(strata_codec::keys::INDEX_PREFIX_LEN..)
        .unwrap_or_default();
    match strata_codec::memcomparable::decode_key_datums(&mut input, index.columns.len()) {
        Ok(values) => error::duplicate_key(
            &key_text(&values),
            &format!("{}.{}", table.name, index.name),
        ),
        Err(_) => unknown(),
    }
}

pub fn execute_insert(
    plan: &InsertPlan,
    txn: &mut Transaction,
    w: &WriteCtx,
) -> Result<WriteResult> {
    let table = &*plan.table;
    let ctx = w.ctx;
    let source_rows: Vec<Vec<Option<Datum>>> = match &plan.source {
        InsertSource::Values(rows) => rows
            .iter()
            .map(|r| {
                r.iter()
                    .map(|e| e.as_ref().map(|e| e.eval(&[], ctx)).transpose())
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?,
        InsertSource::Select(select) => exec::execute_select(select, txn, ctx)?
            .0
            .into_iter()
            .map(|r| r.into_iter().map(Some).collect())
            .collect(),
    };
    let auto_column = table.auto_increment_column();
    // A plain INSERT in an optimistic transaction leaves uniqueness to the commit.
    let presume_absent = !plan.replace
        && !plan.ignore
        && plan.on_duplicate.is_none()
        && txn.mode() == strata_txn::TxnMode::Optimistic;

    let mut result = WriteResult::default();
    let mut locks = Vec::new();
    for values in source_rows {
        // Start from defaults, then the listed columns.
        let mut row: Vec<Option<Datum>> = vec![None; table.columns.len()];
        for (position, value) in plan.columns.iter().zip(values) {
            row[*position] = value;
        }
        let mut full = Vec::with_capacity(row.len());
        for (i, (def, value)) in table.columns.iter().zip(row).enumerate() {
            let value = match value {
                _ if Some(i) == auto_column && value.as_ref().is_none_or(|v| *v == Datum::Null) => {
                    Datum::Null
                }
                Some(v) => def.ty.coerce(v, &def.name)?,
                None => match def.default_datum() {
                    Some(d) => d,
                    None if def.nullable => Datum::Null,
                    // Being dropped: a value no statement reads, but the older schema's does.
                    None if def.write_only => def.ty.implicit_value().unwrap_or(Datum::Null),
                    None => return Err(error::no_default(&def.name)),
                },
            };
            full.push(value);
        }
        if let Some(c) = auto_column {
            let zero = matches!(full[c], Datum::Int(0) | Datum::UInt(0));
            if full[c] == Datum::Null || zero {
                let id = w.autoids.allocate(table.id, 1)?;
                full[c] = table.columns[c]
                    .ty
                    .coerce(Datum::UInt(id), &table.columns[c].name)?;
                if result.last_insert_id == 0 {
                    result.last_insert_id = id;
                }
            } else if let Some(v) = types::to_i64(&full[c]) {
                if v > 0 {
                    w.autoids.rebase(table.id, v as u64)?;
                }
            }
        }
        check_not_null(table, &full)?;
        let row_id = if table.primary_key == PrimaryKey::RowId {
            Some(w.autoids.allocate(table.id, 1)? as i64)
        } else {
            None
        };
        let handle = rows::handle_of(table, &full, row_id);
        if presume_absent && insert_presumed(txn, table, &full, &handle) {
            result.affected_rows += 1;
            continue;
        }
        match find_conflict(txn, table, &full, &handle)? {
            None => {
                put_row(txn, table, &full, &handle, &mut locks);
                result.affected_rows += 1;
            }
            Some(conflict) if plan.replace => {
                // REPLACE deletes every row the new one collides with, then inserts it.
                delete_row(txn, table, &conflict.key, &conflict.row, &mut locks)?;
                result.affected_rows += 1;
                while let Some(more) = find_conflict(txn, table, &full, &handle)? {
                    delete_row(txn, table, &more.key, &more.row, &mut locks)?;
                    result.affected_rows += 1;
                }
                put_row(txn, table, &full, &handle, &mut locks);
                result.affected_rows += 1;
            }
            Some(conflict) => match &plan.on_duplicate {
                Some(assignments) => {
                    let new = assign(table, assignments, &conflict.row, &full, ctx)?;
                    if update_row(txn, table, &conflict.key, &conflict.row, &new, &mut locks)? {
                        result.affected_rows += 2;
                    } else {
                        result.unchanged_rows += 1;
                    }
                }
                None if plan.ignore => locks.push(conflict.key),
                None => return Err(conflict.message),
            },
        }
    }
    lock(txn, locks, w)?;
    Ok(result)
}
