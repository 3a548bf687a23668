//! `information_schema`: read-only tables computed from the catalog when a statement is
//! planned (TABLES, SCHEMATA, COLUMNS, and the keys: STATISTICS, KEY_COLUMN_USAGE,
//! TABLE_CONSTRAINTS, REFERENTIAL_CONSTRAINTS), so clients, tools and ORMs can ask for schema
//! and sizes with plain SELECTs.
//!
//! Sizes in TABLES come from the statistics ANALYZE TABLE collects: TABLE_ROWS is the row
//! count, DATA_LENGTH and INDEX_LENGTH the encoded bytes (keys and values) of the rows and of
//! the index entries, before compression; a table never analyzed reports zeros.

use std::sync::Arc;

use sqlparser::ast;
use strata_codec::Datum;

use crate::catalog::{DefaultValue, Schema, TableDef};
use crate::error::{self, Result};
use crate::types::{SqlType, TypeKind};

/// The name of the database, as clients spell it.
pub const NAME: &str = "information_schema";

/// Rows the SQL layer computes rather than reads from storage: an information_schema table's
/// (fixed when the statement is planned) or a recursive CTE's rows of its last round
/// (replaced each round, `crate::cte`). Clones share the rows.
#[derive(Clone, Debug, Default)]
pub struct MemoryRows(Arc<parking_lot::RwLock<Arc<Vec<Vec<Datum>>>>>);

impl MemoryRows {
    pub fn new(rows: Vec<Vec<Datum>>) -> MemoryRows {
        MemoryRows(Arc::new(parking_lot::RwLock::new(Arc::new(rows))))
    }

    /// The rows as they are now.
    pub fn rows(&self) -> Arc<Vec<Vec<Datum>>> {
        self.0.read().clone()
    }

    pub fn replace(&self, rows: Vec<Vec<Datum>>) {
        *self.0.write() = Arc::new(rows);
    }

    pub fn len(&self) -> usize {
        self.0.read().len()
    }
}

/// The same rows: one table's, shared.
impl PartialEq for MemoryRows {
    fn eq(&self, other: &MemoryRows) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Whether `database` names information_schema (case-insensitively, as MySQL does).
pub fn is_information_schema(database: &str) -> bool {
    database.eq_ignore_ascii_case(NAME)
}

/// The definition and current rows of information_schema table `name`.
pub fn table(schema: &Schema, name: &str) -> Result<(Arc<TableDef>, MemoryRows)> {
    let upper = name.to_ascii_uppercase();
    let (columns, rows): (&[(&str, Kind)], Vec<Vec<Datum>>) = match upper.as_str() {
        "TABLES" => (TABLES_COLUMNS, tables_rows(schema)),
        "SCHEMATA" => (SCHEMATA_COLUMNS, schemata_rows(schema)),
        "COLUMNS" => (COLUMNS_COLUMNS, columns_rows(schema)),
        "STATISTICS" => (STATISTICS_COLUMNS, statistics_rows(schema)),
        "KEY_COLUMN_USAGE" => (KEY_COLUMN_USAGE_COLUMNS, key_column_usage_rows(schema)),
        "TABLE_CONSTRAINTS" => (TABLE_CONSTRAINTS_COLUMNS, table_constraints_rows(schema)),
        // Foreign keys are accepted and not kept (CREATE TABLE ignores them): none to list.
        "REFERENTIAL_CONSTRAINTS" => (REFERENTIAL_CONSTRAINTS_COLUMNS, Vec::new()),
        _ => return Err(error::unknown_table(NAME, name)),
    };
    let columns = columns
        .iter()
        .map(|(name, kind)| (name.to_string(), kind.sql_type()));
    let def = TableDef::computed(NAME, &upper, columns);
    Ok((Arc::new(def), MemoryRows::new(rows)))
}

/// The information_schema table a FROM item names, if it names one.
pub fn resolve(
    factor: &ast::TableFactor,
    database: Option<&str>,
) -> Option<(String, Option<String>)> {
    let ast::TableFactor::Table { name, alias, .. } = factor else {
        return None;
    };
    let (db, table) = crate::query::split_name(name, database).ok()?;
    is_information_schema(&db).then(|| (table, alias.as_ref().map(|a| a.name.value.clone())))
}

#[derive(Clone, Copy)]
enum Kind {
    Text,
    Int,
}

impl Kind {
    fn sql_type(self) -> SqlType {
        match self {
            Kind::Text => SqlType {
                length: 512,
                ..SqlType::new(TypeKind::Varchar)
            },
            Kind::Int => SqlType {
                unsigned: true,
                ..SqlType::new(TypeKind::BigInt)
            },
        }
    }
}

const TABLES_COLUMNS: &[(&str, Kind)] = &[
    ("TABLE_CATALOG", Kind::Text),
    ("TABLE_SCHEMA", Kind::Text),
    ("TABLE_NAME", Kind::Text),
    ("TABLE_TYPE", Kind::Text),
    ("ENGINE", Kind::Text),
    ("VERSION", Kind::Int),
    ("ROW_FORMAT", Kind::Text),
    ("TABLE_ROWS", Kind::Int),
    ("AVG_ROW_LENGTH", Kind::Int),
    ("DATA_LENGTH", Kind::Int),
    ("MAX_DATA_LENGTH", Kind::Int),
    ("INDEX_LENGTH", Kind::Int),
    ("DATA_FREE", Kind::Int),
    ("AUTO_INCREMENT", Kind::Int),
    ("TABLE_COLLATION", Kind::Text),
    ("CREATE_OPTIONS", Kind::Text),
    ("TABLE_COMMENT", Kind::Text),
];

const SCHEMATA_COLUMNS: &[(&str, Kind)] = &[
    ("CATALOG_NAME", Kind::Text),
    ("SCHEMA_NAME", Kind::Text),
    ("DEFAULT_CHARACTER_SET_NAME", Kind::Text),
    ("DEFAULT_COLLATION_NAME", Kind::Text),
    ("SQL_PATH", Kind::Text),
];

const COLUMNS_COLUMNS: &[(&str, Kind)] = &[
    ("TABLE_CATALOG", Kind::Text),
    ("TABLE_SCHEMA", Kind::Text),
    ("TABLE_NAME", Kind::Text),
    ("COLUMN_NAME", Kind::Text),
    ("ORDINAL_POSITION", Kind::Int),
    ("COLUMN_DEFAULT", Kind::Text),
    ("IS_NULLABLE", Kind::Text),
    ("DATA_TYPE", Kind::Text),
    ("CHARACTER_MAXIMUM_LENGTH", Kind::Int),
    ("NUMERIC_PRECISION", Kind::Int),
    ("NUMERIC_SCALE", Kind::Int),
    ("CHARACTER_SET_NAME", Kind::Text),
    ("COLLATION_NAME", Kind::Text),
    ("COLUMN_TYPE", Kind::Text),
    ("COLUMN_KEY", Kind::Text),
    ("EXTRA", Kind::Text),
    ("COLUMN_COMMENT", Kind::Text),
];

const STATISTICS_COLUMNS: &[(&str, Kind)] = &[
    ("TABLE_CATALOG", Kind::Text),
    ("TABLE_SCHEMA", Kind::Text),
    ("TABLE_NAME", Kind::Text),
    ("NON_UNIQUE", Kind::Int),
    ("INDEX_SCHEMA", Kind::Text),
    ("INDEX_NAME", Kind::Text),
    ("SEQ_IN_INDEX", Kind::Int),
    ("COLUMN_NAME", Kind::Text),
    ("COLLATION", Kind::Text),
    ("CARDINALITY", Kind::Int),
    ("SUB_PART", Kind::Int),
    ("PACKED", Kind::Text),
    ("NULLABLE", Kind::Text),
    ("INDEX_TYPE", Kind::Text),
    ("COMMENT", Kind::Text),
    ("INDEX_COMMENT", Kind::Text),
    ("IS_VISIBLE", Kind::Text),
    ("EXPRESSION", Kind::Text),
];

const KEY_COLUMN_USAGE_COLUMNS: &[(&str, Kind)] = &[
    ("CONSTRAINT_CATALOG", Kind::Text),
    ("CONSTRAINT_SCHEMA", Kind::Text),
    ("CONSTRAINT_NAME", Kind::Text),
    ("TABLE_CATALOG", Kind::Text),
    ("TABLE_SCHEMA", Kind::Text),
    ("TABLE_NAME", Kind::Text),
    ("COLUMN_NAME", Kind::Text),
    ("ORDINAL_POSITION", Kind::Int),
    ("POSITION_IN_UNIQUE_CONSTRAINT", Kind::Int),
    ("REFERENCED_TABLE_SCHEMA", Kind::Text),
    ("REFERENCED_TABLE_NAME", Kind::Text),
    ("REFERENCED_COLUMN_NAME", Kind::Text),
];

const TABLE_CONSTRAINTS_COLUMNS: &[(&str, Kind)] = &[
    ("CONSTRAINT_CATALOG", Kind::Text),
    ("CONSTRAINT_SCHEMA", Kind::Text),
    ("CONSTRAINT_NAME", Kind::Text),
    ("TABLE_SCHEMA", Kind::Text),
    ("TABLE_NAME", Kind::Text),
    ("CONSTRAINT_TYPE", Kind::Text),
    ("ENFORCED", Kind::Text),
];

const REFERENTIAL_CONSTRAINTS_COLUMNS: &[(&str, Kind)] = &[
    ("CONSTRAINT_CATALOG", Kind::Text),
    ("CONSTRAINT_SCHEMA", Kind::Text),
    ("CONSTRAINT_NAME", Kind::Text),
    ("UNIQUE_CONSTRAINT_CATALOG", Kind::Text),
    ("UNIQUE_CONSTRAINT_SCHEMA", Kind::Text),
    ("UNIQUE_CONSTRAINT_NAME", Kind::Text),
    ("MATCH_OPTION", Kind::Text),
    ("UPDATE_RULE", Kind::Text),
    ("DELETE_RULE", Kind::Text),
    ("TABLE_NAME", Kind::Text),
    ("REFERENCED_TABLE_NAME", Kind::Text),
];

/// One key of a table as information_schema lists it.
struct KeyOf<'a> {
    name: &'a str,
    primary: bool,
    unique: bool,
    /// Positions of its columns in the table, in key order.
    columns: &'a [usize],
}

/// A table's primary key (if it has one), then its indexes that queries may use.
fn keys_of(t: &TableDef) -> Vec<KeyOf<'_>> {
    let primary = match &t.primary_key {
        crate::catalog::PrimaryKey::IntHandle(c) => Some(std::slice::from_ref(c)),
        crate::catalog::PrimaryKey::Clustered(cs) => Some(cs.as_slice()),
        crate::catalog::PrimaryKey::RowId => None,
    };
    let primary = primary.map(|columns| KeyOf {
        name: "PRIMARY",
        primary: true,
        unique: true,
        columns,
    });
    let indexes = t.indexes.iter().filter(|i| i.public).map(|i| KeyOf {
        name: &i.name,
        primary: false,
        unique: i.unique,
        columns: &i.columns,
    });
    primary.into_iter().chain(indexes).collect()
}

fn statistics_rows(schema: &Schema) -> Vec<Vec<Datum>> {
    let mut out = Vec::new();
    for t in sorted_tables(schema) {
        let stats = schema.stats.get(&t.id);
        for key in keys_of(t) {
            for (seq, c) in key.columns.iter().enumerate() {
                let column = &t.columns[*c];
                let cardinality = stats.map_or(0, |s| {
                    if key.primary {
                        s.row_count
                    } else {
                        t.indexes
                            .iter()
                            .find(|i| i.name == key.name)
                            .and_then(|i| s.index_distinct.get(&i.id).copied())
                            .unwrap_or(0)
                    }
                });
                out.push(vec![
                    text("def"),
                    text(&t.database),
                    text(&t.name),
                    uint(u64::from(!key.unique)),
                    text(&t.database),
                    text(key.name),
                    uint(seq as u64 + 1),
                    text(&column.name),
                    text("A"),
                    uint(cardinality),
                    Datum::Null,
                    Datum::Null,
                    text(if column.nullable { "YES" } else { "" }),
                    text("BTREE"),
                    text(""),
                    text(""),
                    text("YES"),
                    Datum::Null,
                ]);
            }
        }
    }
    out
}

fn key_column_usage_rows(schema: &Schema) -> Vec<Vec<Datum>> {
    let mut out = Vec::new();
    for t in sorted_tables(schema) {
        for key in keys_of(t).into_iter().filter(|k| k.unique) {
            for (seq, c) in key.columns.iter().enumerate() {
                out.push(vec![
                    text("def"),
                    text(&t.database),
                    text(key.name),
                    text("def"),
                    text(&t.database),
                    text(&t.name),
                    text(&t.columns[*c].name),
                    uint(seq as u64 + 1),
                    Datum::Null,
                    Datum::Null,
                    Datum::Null,
                    Datum::Null,
                ]);
            }
        }
    }
    out
}

fn table_constraints_rows(schema: &Schema) -> Vec<Vec<Datum>> {
    let mut out = Vec::new();
    for t in sorted_tables(schema) {
        for key in keys_of(t).into_iter().filter(|k| k.unique) {
            out.push(vec![
                text("def"),
                text(&t.database),
                text(key.name),
                text(&t.database),
                text(&t.name),
                text(if key.primary { "PRIMARY KEY" } else { "UNIQUE" }),
                text("YES"),
            ]);
        }
    }
    out
}

fn text(s: impl AsRef<str>) -> Datum {
    Datum::Bytes(s.as_ref().as_bytes().to_vec())
}

fn uint(v: u64) -> Datum {
    Datum::UInt(v)
}

/// Tables in a stable order: by database, then name.
fn sorted_tables(schema: &Schema) -> Vec<&Arc<TableDef>> {
    let mut tables: Vec<&Arc<TableDef>> = schema.tables.values().collect();
    tables.sort_by(|a, b| (&a.database, &a.name).cmp(&(&b.database, &b.name)));
    tables
}

fn tables_rows(schema: &Schema) -> Vec<Vec<Datum>> {
    sorted_tables(schema)
        .into_iter()
        .map(|t| {
            let stats = schema.stats.get(&t.id);
            let rows = stats.map_or(0, |s| s.row_count);
            let data = stats.map_or(0, |s| s.data_bytes);
            let index = stats.map_or(0, |s| s.index_bytes);
            vec![
                text("def"),
                text(&t.database),
                text(&t.name),
                text("BASE TABLE"),
                text("InnoDB"),
                uint(10),
                text("Dynamic"),
                uint(rows),
                uint(data.checked_div(rows).unwrap_or(0)),
                uint(data),
                uint(0),
                uint(index),
                uint(0),
                Datum::Null,
                text("utf8mb4_bin"),
                text(""),
                text(&t.comment),
            ]
        })
        .collect()
}

fn schemata_rows(schema: &Schema) -> Vec<Vec<Datum>> {
    let mut names: Vec<&str> = schema.databases.keys().map(String::as_str).collect();
    names.push(NAME);
    names.sort_unstable();
    names
        .into_iter()
        .map(|n| {
            vec![
                text("def"),
                text(n),
                text("utf8mb4"),
                text("utf8mb4_bin"),
                Datum::Null,
            ]
        })
        .collect()
}

fn columns_rows(schema: &Schema) -> Vec<Vec<Datum>> {
    let mut out = Vec::new();
    for t in sorted_tables(schema) {
        for (ordinal, (i, c)) in t.visible_columns().enumerate() {
            let string = c.ty.is_string();
            let numeric = !string
                && !matches!(
                    c.ty.kind,
                    TypeKind::Date | TypeKind::DateTime | TypeKind::Timestamp
                );
            let type_name = c.ty.sql_name();
            let data_type = type_name
                .split(['(', ' '])
                .next()
                .unwrap_or_default()
                .to_ascii_lowercase();
            out.push(vec![
                text("def"),
                text(&t.database),
                text(&t.name),
                text(&c.name),
                uint(ordinal as u64 + 1),
                match &c.default {
                    Some(DefaultValue::Literal(Some(v))) => text(v),
                    Some(DefaultValue::CurrentTimestamp) => text("CURRENT_TIMESTAMP"),
                    _ => Datum::Null,
                },
                text(if c.nullable { "YES" } else { "NO" }),
                text(data_type),
                if string {
                    uint(u64::from(c.ty.length))
                } else {
                    Datum::Null
                },
                if numeric && c.ty.length > 0 {
                    uint(u64::from(c.ty.length))
                } else {
                    Datum::Null
                },
                if numeric {
                    uint(u64::from(c.ty.scale))
                } else {
                    Datum::Null
                },
                if string { text("utf8mb4") } else { Datum::Null },
                if string {
                    text("utf8mb4_bin")
                } else {
                    Datum::Null
                },
                text(type_name),
                text(column_key(t, i)),
                text(if c.auto_increment {
                    "auto_increment"
                } else {
                    ""
                }),
                text(""),
            ]);
        }
    }
    out
}

/// `PRI`, `UNI`, `MUL` or empty, as SHOW COLUMNS and information_schema.COLUMNS say.
pub fn column_key(def: &TableDef, column: usize) -> &'static str {
    if def.primary_columns().contains(&column) {
        "PRI"
    } else if def
        .indexes
        .iter()
        .any(|x| x.public && x.unique && x.columns.first() == Some(&column))
    {
        "UNI"
    } else if def
        .indexes
        .iter()
        .any(|x| x.public && x.columns.first() == Some(&column))
    {
        "MUL"
    } else {
        ""
    }
}
