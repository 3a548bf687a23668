//! CREATE TABLE … [AS] SELECT: a table with the columns the statement declares, then one per
//! query column it does not, filled with the query's rows.
//!
//! A query column read straight from a table keeps that column's type, NULL-ability and
//! default, as MySQL keeps them; any other takes the type of its expression. The rows are
//! inserted by the INSERT … SELECT the statement amounts to; if that fails, the new table is
//! dropped, so the statement leaves nothing behind.

use sqlparser::ast;

use crate::api::{ColumnInfo, ColumnType, Output};
use crate::catalog::{sql_type, ColumnDef, Schema, TableDef};
use crate::error::{self, Result};
use crate::expr::ResultType;
use crate::session::Session;
use crate::types::{SqlType, TypeKind};

/// Longest VARCHAR a query column becomes; a longer one becomes TEXT.
const VARCHAR_CHARS_MAX: u32 = 16_383;
/// Most digits of a DECIMAL.
const DECIMAL_DIGITS_MAX: u32 = 65;

pub fn create_table_as(
    session: &mut Session,
    create: &ast::CreateTable,
    query: &ast::Query,
) -> Result<Output> {
    session.implicit_commit()?;
    let database = session.current_database().map(str::to_string);
    let (db, name) = crate::planner::query::split_name(&create.name, database.as_deref())?;
    let schema = session.server().catalog().schema();
    let plan = crate::planner::query::plan_select(query, &schema, database.as_deref())?;
    let declared = ast::CreateTable {
        query: None,
        ..create.clone()
    };
    let mut def = crate::ddl::table_definition(&declared, &db, &name)?;
    let mut inserted = Vec::with_capacity(plan.columns.len());
    for (info, ty) in plan.columns.iter().zip(&plan.result_types) {
        if inserted
            .iter()
            .any(|n: &String| n.eq_ignore_ascii_case(&info.name))
        {
            return Err(error::duplicate_column(&info.name));
        }
        inserted.push(info.name.clone());
        if def.column_index(&info.name).is_some() {
            continue;
        }
        let column = query_column(&schema, info, ty, def.next_column_id);
        def.next_column_id += 1;
        def.columns.push(column);
    }
    if !session
        .server()
        .catalog()
        .create_table_def(def, create.if_not_exists)?
    {
        return Ok(ok(0));
    }
    let insert = crate::parser::synth::insert_select(
        ast::ObjectName::from(vec![ast::Ident::new(&db), ast::Ident::new(&name)]),
        inserted.iter().map(ast::Ident::new).collect(),
        query.clone(),
    );
    match session.execute_write(&insert) {
        Ok(Output::Ok { affected_rows, .. }) => Ok(ok(affected_rows)),
        Ok(_) => Ok(ok(0)),
        Err(e) => {
            let _ = session.server().catalog().drop_tables(&[(db, name)], true);
            Err(e)
        }
    }
}

fn ok(rows: u64) -> Output {
    Output::Ok {
        affected_rows: rows,
        last_insert_id: 0,
        warnings: 0,
        info: format!("Records: {rows}  Duplicates: 0  Warnings: 0"),
    }
}

/// The column a query column becomes.
pub(crate) fn query_column(
    schema: &Schema,
    info: &ColumnInfo,
    ty: &ResultType,
    id: i64,
) -> ColumnDef {
    let source = schema
        .table(&info.schema, &info.org_table)
        .ok()
        .filter(|_| !info.org_table.is_empty())
        .and_then(|t| source_column(t, &info.org_name));
    match source {
        Some(column) => ColumnDef {
            id,
            name: info.name.clone(),
            auto_increment: false,
            origin_default: None,
            write_only: false,
            ..column
        },
        None => ColumnDef {
            id,
            name: info.name.clone(),
            ty: expression_type(ty),
            nullable: !ty.not_null,
            default: None,
            auto_increment: false,
            origin_default: None,
            write_only: false,
        },
    }
}

fn source_column(table: &TableDef, name: &str) -> Option<ColumnDef> {
    table.column_index(name).map(|i| table.columns[i].clone())
}

/// The column type of an expression's result type.
fn expression_type(ty: &ResultType) -> SqlType {
    let scale = u32::from(ty.decimals);
    let kind = |k: TypeKind| sql_type(k, ty.unsigned, 0, 0);
    match ty.column_type {
        ColumnType::Tiny => kind(TypeKind::TinyInt),
        ColumnType::Short => kind(TypeKind::SmallInt),
        ColumnType::Int24 => kind(TypeKind::MediumInt),
        ColumnType::Long => kind(TypeKind::Int),
        ColumnType::LongLong => kind(TypeKind::BigInt),
        ColumnType::Float => sql_type(TypeKind::Float, false, 0, 0),
        ColumnType::Double => sql_type(TypeKind::Double, false, 0, 0),
        ColumnType::NewDecimal => {
            // The display length counts a sign and a point (types.rs display_length).
            let digits = ty
                .length
                .saturating_sub(2)
                .clamp(scale.max(1), DECIMAL_DIGITS_MAX);
            sql_type(TypeKind::Decimal, ty.unsigned, digits, scale)
        }
        ColumnType::VarString | ColumnType::String | ColumnType::Null => {
            let chars = ty.length / 4;
            if chars > VARCHAR_CHARS_MAX {
                sql_type(TypeKind::Text, false, 0, 0)
            } else {
                sql_type(TypeKind::Varchar, false, chars, 0)
            }
        }
        ColumnType::Blob => sql_type(TypeKind::Text, false, 0, 0),
        ColumnType::Date => sql_type(TypeKind::Date, false, 0, 0),
        ColumnType::DateTime => sql_type(TypeKind::DateTime, false, 0, scale.min(6)),
        ColumnType::Timestamp => sql_type(TypeKind::Timestamp, false, 0, scale.min(6)),
        ColumnType::Time => sql_type(TypeKind::Time, false, 0, scale.min(6)),
        ColumnType::Year => sql_type(TypeKind::Year, false, 0, 0),
        ColumnType::Bit => sql_type(TypeKind::Bit, true, ty.length.clamp(1, 64), 0),
        ColumnType::Json => sql_type(TypeKind::Json, false, 0, 0),
    }
}
