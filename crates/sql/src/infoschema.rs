//! `information_schema`: read-only tables computed from the catalog when a statement is
//! planned (TABLES, SCHEMATA, COLUMNS, and the keys: STATISTICS, KEY_COLUMN_USAGE,
//! TABLE_CONSTRAINTS, REFERENTIAL_CONSTRAINTS), so clients, tools and ORMs can ask for schema
//! and sizes with plain SELECTs; SLOW_QUERY, read from the slow log file; PROCESSLIST, the
//! sessions the planning session may see (as SHOW FULL PROCESSLIST); and the accounts' grants
//! (USER_, SCHEMA_, TABLE_ and COLUMN_PRIVILEGES, `crate::account::grantees`).
//!
//! Sizes in TABLES come from the statistics ANALYZE TABLE collects: TABLE_ROWS is the row
//! count, DATA_LENGTH and INDEX_LENGTH the encoded bytes (keys and values) of the rows and of
//! the index entries, before compression; a table never analyzed reports zeros.

use std::sync::Arc;

use sqlparser::ast;
use strata_codec::Datum;

use crate::catalog::{DefaultValue, Schema, TableDef, ViewDef};
use crate::error::{self, Result};
use crate::process::ProcessRow;
use crate::types::{SqlType, TypeKind};

/// The name of the database, as clients spell it.
pub const NAME: &str = "information_schema";

/// Rows the SQL layer computes rather than reads from storage: an information_schema table's
/// (fixed when the statement is planned) or a recursive CTE's rows of its last round
/// (replaced each round, `crate::planner::cte`). Clones share the rows.
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

/// What information_schema shows of the running server, as the session that plans the
/// query may see it.
pub trait Live {
    /// The sessions PROCESSLIST lists.
    fn processes(&self) -> Vec<ProcessRow>;
    /// The sessions of every SQL node of the cluster, each with its node's address
    /// (CLUSTER_PROCESSLIST).
    fn cluster_processes(&self) -> Result<Vec<(String, ProcessRow)>>;
    /// This node's slow-log entries the session may see (SLOW_QUERY).
    fn slow_queries(&self) -> Vec<Vec<Datum>>;
    /// Those of every SQL node of the cluster, each with its node's address
    /// (CLUSTER_SLOW_QUERY).
    fn cluster_slow_queries(&self) -> Result<Vec<(String, Vec<Datum>)>>;
    /// The rows of STATEMENTS_SUMMARY (with `history`, of STATEMENTS_SUMMARY_HISTORY).
    fn statements(&self, history: bool) -> Vec<Vec<Datum>>;
    /// The cluster's regions and stores (none for a session without PROCESS).
    fn placement(&self) -> Result<(Vec<strata_txn::RegionInfo>, Vec<strata_txn::StoreInfo>)>;
}

/// The definition and current rows of information_schema table `name`; `live` gives the
/// server's sessions and statements (none when not given).
pub fn table(
    schema: &Schema,
    name: &str,
    live: Option<&dyn Live>,
) -> Result<(Arc<TableDef>, MemoryRows)> {
    let upper = name.to_ascii_uppercase();
    let (columns, rows): (&[(&str, Kind)], Vec<Vec<Datum>>) = match upper.as_str() {
        "TABLES" => (TABLES_COLUMNS, tables_rows(schema)),
        "VIEWS" => (VIEWS_COLUMNS, views_rows(schema)),
        "SCHEMATA" => (SCHEMATA_COLUMNS, schemata_rows(schema)),
        "COLUMNS" => (COLUMNS_COLUMNS, columns_rows(schema)),
        "STATISTICS" => (STATISTICS_COLUMNS, statistics_rows(schema)),
        "KEY_COLUMN_USAGE" => (KEY_COLUMN_USAGE_COLUMNS, key_column_usage_rows(schema)),
        "TABLE_CONSTRAINTS" => (TABLE_CONSTRAINTS_COLUMNS, table_constraints_rows(schema)),
        "PARTITIONS" => (PARTITIONS_COLUMNS, partitions_rows(schema)),
        // Tables have no tablespaces or files of their own to list.
        "FILES" => (FILES_COLUMNS, Vec::new()),
        // There are no triggers or stored routines.
        "TRIGGERS" => (TRIGGERS_COLUMNS, Vec::new()),
        "ROUTINES" => (ROUTINES_COLUMNS, Vec::new()),
        // Foreign keys are accepted and not kept (CREATE TABLE ignores them): none to list.
        "REFERENTIAL_CONSTRAINTS" => (REFERENTIAL_CONSTRAINTS_COLUMNS, Vec::new()),
        "SLOW_QUERY" => (
            SLOW_QUERY_COLUMNS,
            live.map_or_else(crate::slowlog::rows, |l| l.slow_queries()),
        ),
        "CLUSTER_SLOW_QUERY" => (
            &CLUSTER_SLOW_QUERY_COLUMNS[..],
            match live {
                Some(l) => l
                    .cluster_slow_queries()?
                    .into_iter()
                    .map(|(instance, row)| [vec![text(&instance)], row].concat())
                    .collect(),
                None => Vec::new(),
            },
        ),
        "PROCESSLIST" => (
            PROCESSLIST_COLUMNS,
            live.map_or_else(Vec::new, |l| l.processes())
                .iter()
                .map(process_row)
                .collect(),
        ),
        "CLUSTER_PROCESSLIST" => (
            &CLUSTER_PROCESSLIST_COLUMNS[..],
            match live {
                Some(l) => l
                    .cluster_processes()?
                    .iter()
                    .map(|(instance, p)| {
                        let mut row = vec![text(instance)];
                        row.extend(process_row(p));
                        row
                    })
                    .collect(),
                None => Vec::new(),
            },
        ),
        "STATEMENTS_SUMMARY" | "STATEMENTS_SUMMARY_HISTORY" => (
            crate::summary::COLUMNS,
            live.map_or_else(Vec::new, |l| {
                l.statements(upper == "STATEMENTS_SUMMARY_HISTORY")
            }),
        ),
        "TIKV_REGION_STATUS" => (
            crate::show::regions::REGION_STATUS_COLUMNS,
            match live {
                Some(l) => crate::show::regions::region_status_rows(schema, &l.placement()?.0),
                None => Vec::new(),
            },
        ),
        "TIKV_STORE_STATUS" => (
            crate::show::regions::STORE_STATUS_COLUMNS,
            match live {
                Some(l) => crate::show::regions::store_status_rows(&l.placement()?.1),
                None => Vec::new(),
            },
        ),
        other => match crate::account::grantees::Level::of_table(other) {
            Some(level) => (level.columns(), level.rows(schema)),
            None => return Err(error::unknown_table(NAME, name)),
        },
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
    let (db, table, alias) = named_table(factor, database)?;
    is_information_schema(&db).then_some((table, alias))
}

/// The database, table and alias of a FROM item that names a table (unqualified names in
/// `database`).
pub(crate) fn named_table(
    factor: &ast::TableFactor,
    database: Option<&str>,
) -> Option<(String, String, Option<String>)> {
    let ast::TableFactor::Table { name, alias, .. } = factor else {
        return None;
    };
    let (db, table) = crate::planner::query::split_name(name, database).ok()?;
    Some((db, table, alias.as_ref().map(|a| a.name.value.clone())))
}

/// The type of a computed column: text, an unsigned number or a DOUBLE.
#[derive(Clone, Copy)]
pub(crate) enum Kind {
    Text,
    Int,
    Double,
}

impl Kind {
    pub(crate) fn sql_type(self) -> SqlType {
        match self {
            Kind::Text => SqlType {
                length: 512,
                ..SqlType::new(TypeKind::Varchar)
            },
            Kind::Int => SqlType {
                unsigned: true,
                ..SqlType::new(TypeKind::BigInt)
            },
            Kind::Double => SqlType::new(TypeKind::Double),
        }
    }
}

/// MySQL's PROCESSLIST: what SHOW FULL PROCESSLIST shows.
const PROCESSLIST_COLUMNS: &[(&str, Kind)] = &[
    ("ID", Kind::Int),
    ("USER", Kind::Text),
    ("HOST", Kind::Text),
    ("DB", Kind::Text),
    ("COMMAND", Kind::Text),
    ("TIME", Kind::Int),
    ("STATE", Kind::Text),
    ("INFO", Kind::Text),
    // TiDB's: the running statement's working memory, in bytes.
    ("MEM", Kind::Int),
];

/// The columns of a TiDB CLUSTER_ table: the node's address, then those of its table.
fn cluster_columns(columns: &[(&'static str, Kind)]) -> Vec<(&'static str, Kind)> {
    [("INSTANCE", Kind::Text)]
        .into_iter()
        .chain(columns.iter().copied())
        .collect()
}

/// TiDB's CLUSTER_PROCESSLIST: PROCESSLIST of every SQL node, after the node's address.
static CLUSTER_PROCESSLIST_COLUMNS: std::sync::LazyLock<Vec<(&str, Kind)>> =
    std::sync::LazyLock::new(|| cluster_columns(PROCESSLIST_COLUMNS));

fn process_row(p: &ProcessRow) -> Vec<Datum> {
    vec![
        Datum::UInt(u64::from(p.id)),
        text(&p.user),
        text(&p.host),
        p.database.as_deref().map_or(Datum::Null, text),
        text(p.command()),
        Datum::UInt(p.seconds),
        text(p.state()),
        p.info.as_deref().map_or(Datum::Null, text),
        Datum::UInt(p.memory),
    ]
}

/// TiDB's CLUSTER_SLOW_QUERY: SLOW_QUERY of every SQL node, after the node's address.
static CLUSTER_SLOW_QUERY_COLUMNS: std::sync::LazyLock<Vec<(&str, Kind)>> =
    std::sync::LazyLock::new(|| cluster_columns(SLOW_QUERY_COLUMNS));

/// The slow log's entries ([`crate::slowlog::COLUMNS`]).
const SLOW_QUERY_COLUMNS: &[(&str, Kind)] = &[
    ("Time", Kind::Text),
    ("Txn_start_ts", Kind::Int),
    ("User", Kind::Text),
    ("Host", Kind::Text),
    ("Conn_ID", Kind::Int),
    ("Query_time", Kind::Double),
    ("Rows_sent", Kind::Int),
    ("Rows_affected", Kind::Int),
    ("Mem_max", Kind::Int),
    ("Request_count", Kind::Int),
    ("Total_keys", Kind::Int),
    ("Process_keys", Kind::Int),
    ("KV_total", Kind::Double),
    ("DB", Kind::Text),
    ("Succ", Kind::Int),
    ("Query", Kind::Text),
];

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
    ("CREATE_TIME", Kind::Text),
    ("UPDATE_TIME", Kind::Text),
    ("CHECK_TIME", Kind::Text),
    ("TABLE_COLLATION", Kind::Text),
    ("CHECKSUM", Kind::Int),
    ("CREATE_OPTIONS", Kind::Text),
    ("TABLE_COMMENT", Kind::Text),
];

const VIEWS_COLUMNS: &[(&str, Kind)] = &[
    ("TABLE_CATALOG", Kind::Text),
    ("TABLE_SCHEMA", Kind::Text),
    ("TABLE_NAME", Kind::Text),
    ("VIEW_DEFINITION", Kind::Text),
    ("CHECK_OPTION", Kind::Text),
    ("IS_UPDATABLE", Kind::Text),
    ("DEFINER", Kind::Text),
    ("SECURITY_TYPE", Kind::Text),
    ("CHARACTER_SET_CLIENT", Kind::Text),
    ("COLLATION_CONNECTION", Kind::Text),
];

const PARTITIONS_COLUMNS: &[(&str, Kind)] = &[
    ("TABLE_CATALOG", Kind::Text),
    ("TABLE_SCHEMA", Kind::Text),
    ("TABLE_NAME", Kind::Text),
    ("PARTITION_NAME", Kind::Text),
    ("SUBPARTITION_NAME", Kind::Text),
    ("PARTITION_ORDINAL_POSITION", Kind::Int),
    ("SUBPARTITION_ORDINAL_POSITION", Kind::Int),
    ("PARTITION_METHOD", Kind::Text),
    ("SUBPARTITION_METHOD", Kind::Text),
    ("PARTITION_EXPRESSION", Kind::Text),
    ("SUBPARTITION_EXPRESSION", Kind::Text),
    ("PARTITION_DESCRIPTION", Kind::Text),
    ("TABLE_ROWS", Kind::Int),
    ("AVG_ROW_LENGTH", Kind::Int),
    ("DATA_LENGTH", Kind::Int),
    ("MAX_DATA_LENGTH", Kind::Int),
    ("INDEX_LENGTH", Kind::Int),
    ("DATA_FREE", Kind::Int),
    ("CREATE_TIME", Kind::Text),
    ("UPDATE_TIME", Kind::Text),
    ("CHECK_TIME", Kind::Text),
    ("CHECKSUM", Kind::Int),
    ("PARTITION_COMMENT", Kind::Text),
    ("NODEGROUP", Kind::Text),
    ("TABLESPACE_NAME", Kind::Text),
];

const FILES_COLUMNS: &[(&str, Kind)] = &[
    ("FILE_ID", Kind::Int),
    ("FILE_NAME", Kind::Text),
    ("FILE_TYPE", Kind::Text),
    ("TABLESPACE_NAME", Kind::Text),
    ("TABLE_CATALOG", Kind::Text),
    ("TABLE_SCHEMA", Kind::Text),
    ("TABLE_NAME", Kind::Text),
    ("LOGFILE_GROUP_NAME", Kind::Text),
    ("LOGFILE_GROUP_NUMBER", Kind::Int),
    ("ENGINE", Kind::Text),
    ("FULLTEXT_KEYS", Kind::Text),
    ("DELETED_ROWS", Kind::Int),
    ("UPDATE_COUNT", Kind::Int),
    ("FREE_EXTENTS", Kind::Int),
    ("TOTAL_EXTENTS", Kind::Int),
    ("EXTENT_SIZE", Kind::Int),
    ("INITIAL_SIZE", Kind::Int),
    ("MAXIMUM_SIZE", Kind::Int),
    ("AUTOEXTEND_SIZE", Kind::Int),
    ("CREATION_TIME", Kind::Text),
    ("LAST_UPDATE_TIME", Kind::Text),
    ("LAST_ACCESS_TIME", Kind::Text),
    ("RECOVER_TIME", Kind::Int),
    ("TRANSACTION_COUNTER", Kind::Int),
    ("VERSION", Kind::Int),
    ("ROW_FORMAT", Kind::Text),
    ("TABLE_ROWS", Kind::Int),
    ("AVG_ROW_LENGTH", Kind::Int),
    ("DATA_LENGTH", Kind::Int),
    ("MAX_DATA_LENGTH", Kind::Int),
    ("INDEX_LENGTH", Kind::Int),
    ("DATA_FREE", Kind::Int),
    ("CREATE_TIME", Kind::Text),
    ("UPDATE_TIME", Kind::Text),
    ("CHECK_TIME", Kind::Text),
    ("CHECKSUM", Kind::Int),
    ("STATUS", Kind::Text),
    ("EXTRA", Kind::Text),
];

const TRIGGERS_COLUMNS: &[(&str, Kind)] = &[
    ("TRIGGER_CATALOG", Kind::Text),
    ("TRIGGER_SCHEMA", Kind::Text),
    ("TRIGGER_NAME", Kind::Text),
    ("EVENT_MANIPULATION", Kind::Text),
    ("EVENT_OBJECT_CATALOG", Kind::Text),
    ("EVENT_OBJECT_SCHEMA", Kind::Text),
    ("EVENT_OBJECT_TABLE", Kind::Text),
    ("ACTION_ORDER", Kind::Int),
    ("ACTION_CONDITION", Kind::Text),
    ("ACTION_STATEMENT", Kind::Text),
    ("ACTION_ORIENTATION", Kind::Text),
    ("ACTION_TIMING", Kind::Text),
    ("ACTION_REFERENCE_OLD_TABLE", Kind::Text),
    ("ACTION_REFERENCE_NEW_TABLE", Kind::Text),
    ("ACTION_REFERENCE_OLD_ROW", Kind::Text),
    ("ACTION_REFERENCE_NEW_ROW", Kind::Text),
    ("CREATED", Kind::Text),
    ("SQL_MODE", Kind::Text),
    ("DEFINER", Kind::Text),
    ("CHARACTER_SET_CLIENT", Kind::Text),
    ("COLLATION_CONNECTION", Kind::Text),
    ("DATABASE_COLLATION", Kind::Text),
];

const ROUTINES_COLUMNS: &[(&str, Kind)] = &[
    ("SPECIFIC_NAME", Kind::Text),
    ("ROUTINE_CATALOG", Kind::Text),
    ("ROUTINE_SCHEMA", Kind::Text),
    ("ROUTINE_NAME", Kind::Text),
    ("ROUTINE_TYPE", Kind::Text),
    ("DATA_TYPE", Kind::Text),
    ("CHARACTER_MAXIMUM_LENGTH", Kind::Int),
    ("CHARACTER_OCTET_LENGTH", Kind::Int),
    ("NUMERIC_PRECISION", Kind::Int),
    ("NUMERIC_SCALE", Kind::Int),
    ("DATETIME_PRECISION", Kind::Int),
    ("CHARACTER_SET_NAME", Kind::Text),
    ("COLLATION_NAME", Kind::Text),
    ("DTD_IDENTIFIER", Kind::Text),
    ("ROUTINE_BODY", Kind::Text),
    ("ROUTINE_DEFINITION", Kind::Text),
    ("EXTERNAL_NAME", Kind::Text),
    ("EXTERNAL_LANGUAGE", Kind::Text),
    ("PARAMETER_STYLE", Kind::Text),
    ("IS_DETERMINISTIC", Kind::Text),
    ("SQL_DATA_ACCESS", Kind::Text),
    ("SQL_PATH", Kind::Text),
    ("SECURITY_TYPE", Kind::Text),
    ("CREATED", Kind::Text),
    ("LAST_ALTERED", Kind::Text),
    ("SQL_MODE", Kind::Text),
    ("ROUTINE_COMMENT", Kind::Text),
    ("DEFINER", Kind::Text),
    ("CHARACTER_SET_CLIENT", Kind::Text),
    ("COLLATION_CONNECTION", Kind::Text),
    ("DATABASE_COLLATION", Kind::Text),
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
    ("CHARACTER_OCTET_LENGTH", Kind::Int),
    ("NUMERIC_PRECISION", Kind::Int),
    ("NUMERIC_SCALE", Kind::Int),
    ("DATETIME_PRECISION", Kind::Int),
    ("CHARACTER_SET_NAME", Kind::Text),
    ("COLLATION_NAME", Kind::Text),
    ("COLUMN_TYPE", Kind::Text),
    ("COLUMN_KEY", Kind::Text),
    ("EXTRA", Kind::Text),
    ("PRIVILEGES", Kind::Text),
    ("COLUMN_COMMENT", Kind::Text),
    ("GENERATION_EXPRESSION", Kind::Text),
    ("SRS_ID", Kind::Int),
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
                // An index's column the account holds no privilege on is not listed (as
                // MariaDB lists them).
                if schema
                    .shown_column_privileges(&t.database, &t.name, &column.name)
                    .is_empty()
                {
                    continue;
                }
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

/// Views in a stable order: by database, then name.
fn sorted_views(schema: &Schema) -> Vec<&Arc<ViewDef>> {
    let mut views: Vec<&Arc<ViewDef>> = schema.views.values().collect();
    views.sort_by(|a, b| (&a.database, &a.name).cmp(&(&b.database, &b.name)));
    views
}

fn views_rows(schema: &Schema) -> Vec<Vec<Datum>> {
    sorted_views(schema)
        .into_iter()
        .map(|v| {
            vec![
                text("def"),
                text(&v.database),
                text(&v.name),
                text(&v.definition),
                text(&v.check_option),
                text("NO"),
                text("root@%"),
                text("DEFINER"),
                text("utf8mb4"),
                text("utf8mb4_bin"),
            ]
        })
        .collect()
}

/// A view's row of information_schema.TABLES: MySQL leaves what only a stored table has
/// NULL, and comments it `VIEW`.
fn view_table_row(view: &ViewDef) -> Vec<Datum> {
    let mut row = vec![Datum::Null; TABLES_COLUMNS.len()];
    row[0] = text("def");
    row[1] = text(&view.database);
    row[2] = text(&view.name);
    row[3] = text("VIEW");
    row[TABLES_COLUMNS.len() - 1] = text("VIEW");
    row
}

/// One row per stored table, as MySQL lists a table without partitions: the partition
/// columns NULL, the sizes the table's.
fn partitions_rows(schema: &Schema) -> Vec<Vec<Datum>> {
    sorted_tables(schema)
        .into_iter()
        .map(|t| {
            let stats = schema.stats.get(&t.id);
            let mut row = vec![Datum::Null; PARTITIONS_COLUMNS.len()];
            row[0] = text("def");
            row[1] = text(&t.database);
            row[2] = text(&t.name);
            row[12] = uint(stats.map_or(0, |s| s.row_count));
            row[14] = uint(stats.map_or(0, |s| s.data_bytes));
            row[16] = uint(stats.map_or(0, |s| s.index_bytes));
            row[22] = text("");
            row
        })
        .collect()
}

fn tables_rows(schema: &Schema) -> Vec<Vec<Datum>> {
    let mut rows = stored_tables_rows(schema);
    rows.extend(sorted_views(schema).into_iter().map(|v| view_table_row(v)));
    // By database, then name, as MySQL lists them.
    let bytes = |d: &Datum| match d {
        Datum::Bytes(b) => b.clone(),
        _ => Vec::new(),
    };
    rows.sort_by_cached_key(|row| (bytes(&row[1]), bytes(&row[2])));
    rows
}

fn stored_tables_rows(schema: &Schema) -> Vec<Vec<Datum>> {
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
                Datum::Null,
                Datum::Null,
                Datum::Null,
                text("utf8mb4_bin"),
                Datum::Null,
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
    // A view's columns are its SELECT's (a view that is invalid now has none to list).
    let views: Vec<TableDef> = sorted_views(schema)
        .into_iter()
        .filter_map(|v| crate::view::table_def(v, schema).ok())
        .collect();
    let mut tables: Vec<&TableDef> = sorted_tables(schema)
        .into_iter()
        .map(|t| t.as_ref())
        .chain(&views)
        .collect();
    tables.sort_by(|a, b| (&a.database, &a.name).cmp(&(&b.database, &b.name)));
    for t in tables {
        for (ordinal, (i, c)) in t.visible_columns().enumerate() {
            let privileges = schema.shown_column_privileges(&t.database, &t.name, &c.name);
            if privileges.is_empty() {
                continue;
            }
            let string = c.ty.is_string();
            let (precision, scale, datetime_precision) = numeric_shape(&c.ty);
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
                if string {
                    uint(u64::from(c.ty.length) * 4)
                } else {
                    Datum::Null
                },
                precision.map_or(Datum::Null, uint),
                scale.map_or(Datum::Null, uint),
                datetime_precision.map_or(Datum::Null, uint),
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
                text(privileges.column_list()),
                text(""),
                text(""),
                Datum::Null,
            ]);
        }
    }
    out
}

/// `PRI`, `UNI`, `MUL` or empty, as SHOW COLUMNS and information_schema.COLUMNS say.
/// NUMERIC_PRECISION, NUMERIC_SCALE and DATETIME_PRECISION of a column of type `ty`, as
/// MySQL gives them (NULL where a type has none).
fn numeric_shape(ty: &SqlType) -> (Option<u64>, Option<u64>, Option<u64>) {
    let integer = |signed: u64, unsigned: u64| {
        let digits = if ty.unsigned { unsigned } else { signed };
        (Some(digits), Some(0), None)
    };
    match ty.kind {
        TypeKind::TinyInt => integer(3, 3),
        TypeKind::SmallInt => integer(5, 5),
        TypeKind::MediumInt => integer(7, 8),
        TypeKind::Int => integer(10, 10),
        TypeKind::BigInt => integer(19, 20),
        TypeKind::Float => (Some(12), None, None),
        TypeKind::Double => (Some(22), None, None),
        TypeKind::Decimal => (Some(u64::from(ty.length)), Some(u64::from(ty.scale)), None),
        TypeKind::Bit => (Some(u64::from(ty.length)), None, None),
        TypeKind::DateTime | TypeKind::Timestamp | TypeKind::Time => {
            (None, None, Some(u64::from(ty.scale)))
        }
        _ => (None, None, None),
    }
}

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
