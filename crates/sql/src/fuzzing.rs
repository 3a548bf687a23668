//! Entry points for the fuzz targets (`fuzz/`): the parser and the planner over any text.
//!
//! Not an API: the functions exist so that `cargo fuzz` can reach code that is private to
//! the crate. Each must answer every input with statements or an error, never a panic.

use std::collections::HashMap;
use std::sync::Arc;

use sqlparser::ast;

use crate::catalog::{DatabaseDef, Schema, TableDef};
use crate::parser::statement::Statement;
use crate::parser::{self, Batch};
use crate::types::{SqlType, TypeKind};

/// A schema with database `d` and two tables, `t (a INT, b VARCHAR, c DECIMAL, d DOUBLE,
/// e DATETIME)` and `u` of the same columns, for queries to be planned against.
pub fn schema() -> Schema {
    let columns = [
        ("a", TypeKind::Int),
        ("b", TypeKind::Varchar),
        ("c", TypeKind::Decimal),
        ("d", TypeKind::Double),
        ("e", TypeKind::DateTime),
    ];
    let mut tables = HashMap::new();
    for name in ["t", "u"] {
        let table = TableDef::computed(
            "d",
            name,
            columns
                .iter()
                .map(|(column, kind)| (column.to_string(), SqlType::new(*kind))),
        );
        tables.insert(("d".to_string(), name.to_string()), Arc::new(table));
    }
    Schema {
        databases: HashMap::from([(
            "d".to_string(),
            DatabaseDef {
                name: "d".to_string(),
            },
        )]),
        tables,
        ..Schema::default()
    }
}

/// Parses `sql` as a client allowed several statements, and plans every SELECT in it against
/// `schema` in database `d`. Errors are the expected answer to most inputs and are dropped.
pub fn parse_and_plan(sql: &str, schema: &Schema) {
    let Ok(parsed) = parser::parse_batch(sql, Batch::Multiple) else {
        return;
    };
    for statement in &parsed.statements {
        if let Statement::Sql(tree, _) = statement {
            if let ast::Statement::Query(query) = &**tree {
                let _ = crate::planner::query::plan_select(query, schema, Some("d"));
            }
        }
    }
}
