//! The handlers of MySQL's statements that Strata parses itself ([`crate::parser::statement`]): the
//! SHOW forms sqlparser lacks, ANALYZE, OPTIMIZE and CHECKSUM TABLE, ALTER DATABASE, DO, and
//! START TRANSACTION WITH CONSISTENT SNAPSHOT.

use sqlparser::ast;
use strata_codec::Datum;

use super::{int_column, matches_pattern, object_name, ok, rows, text, text_column};
use crate::account;
use crate::api::{charsets, ColumnInfo, Output};
use crate::catalog::PrimaryKey;
use crate::error::{self, Result};
use crate::expr::ResultType;
use crate::parser::statement::{DatabaseOptions, EmptyShow, Show, ShowFilter, Statement};
use crate::planner::scope::{Reach, Scope, ScopeColumn};
use crate::session::Session;

/// Runs one of Strata's own statements.
pub(crate) fn execute_mysql_only(session: &mut Session, statement: &Statement) -> Result<Output> {
    match statement {
        Statement::Sql(..) => Err(error::internal(
            "an sqlparser statement reached Strata's own",
        )),
        Statement::Show(show) => execute_show(session, show),
        Statement::Analyze { tables, optimize } => analyze(session, tables, *optimize),
        Statement::Do(exprs) => {
            // Evaluated for their effects (SLEEP, `@x := …`), in the session's transaction.
            for e in exprs {
                session.eval_query_value(e, &[])?;
            }
            Ok(ok())
        }
        Statement::BeginConsistent => session.begin(),
        Statement::AlterDatabase { name, options } => alter_database(session, name, options),
        Statement::Checksum { tables, quick } => checksum(session, tables, *quick),
        Statement::Account(account) => crate::account::statement::execute(session, account),
    }
}

fn execute_show(session: &mut Session, show: &Show) -> Result<Output> {
    let filter = match show {
        Show::Index { filter, .. }
        | Show::TableRegions { filter, .. }
        | Show::TableStatus { filter, .. }
        | Show::Empty { filter, .. }
        | Show::Status { filter, .. }
        | Show::Collation(filter)
        | Show::Charset(filter) => filter.as_ref(),
        _ => None,
    };
    let out = show_rows(session, show)?;
    filtered(session, out, filter)
}

/// Keeps the rows a SHOW's LIKE (on the first column) or WHERE (on the columns by name) holds.
fn filtered(session: &Session, out: Output, filter: Option<&ShowFilter>) -> Result<Output> {
    let (Some(filter), Output::ResultSet { columns, rows }) = (filter, &out) else {
        return Ok(out);
    };
    let kept = match filter {
        ShowFilter::Like(pattern) => rows
            .iter()
            .filter(|row| {
                let first = crate::types::datum_to_text(&row[0]);
                matches_pattern(&String::from_utf8_lossy(&first), Some(pattern))
            })
            .cloned()
            .collect(),
        ShowFilter::Where(condition) => {
            let scope = Scope {
                columns: columns
                    .iter()
                    .map(|c| ScopeColumn {
                        table: String::new(),
                        name: c.name.clone(),
                        ty: ResultType::of(c.column_type, c.column_length, c.decimals),
                        reach: Reach::Any,
                    })
                    .collect(),
            };
            session.filter_rows(&scope, condition, rows.clone())?
        }
    };
    Ok(Output::ResultSet {
        columns: columns.clone(),
        rows: kept,
    })
}

/// A SHOW's rows before its filter.
fn show_rows(session: &mut Session, show: &Show) -> Result<Output> {
    Ok(match show {
        Show::Warnings => rows(
            vec![
                text_column("Level"),
                int_column("Code"),
                text_column("Message"),
            ],
            Vec::new(),
        ),
        Show::Index {
            table, database, ..
        } => {
            // `FROM db.t` names the database too, unless `FROM db` follows.
            let qualifier = match table.0.as_slice() {
                [ast::ObjectNamePart::Identifier(db), _] => Some(db),
                _ => None,
            };
            return show_index(
                session,
                database.as_ref().or(qualifier),
                &object_name(table),
            );
        }
        Show::TableStatus { database, .. } => return table_status(session, database.as_ref()),
        Show::Empty { of, database, .. } => {
            if let Some(db) = database {
                if !session
                    .server()
                    .catalog()
                    .schema()
                    .databases
                    .contains_key(&db.value)
                    && !crate::infoschema::is_information_schema(&db.value)
                {
                    return Err(error::unknown_database(&db.value));
                }
            }
            rows(
                empty_show_columns(*of)
                    .iter()
                    .map(|c| text_column(c))
                    .collect(),
                Vec::new(),
            )
        }
        Show::BinaryLogs => {
            return Err(error::Error::new(
                1381,
                "HY000",
                "You are not using binary logging",
            ))
        }
        Show::TableRegions { table, index, .. } => {
            let (database, name) = match table.0.as_slice() {
                [ast::ObjectNamePart::Identifier(db), _] => {
                    (Some(db.value.as_str()), object_name(table))
                }
                _ => (None, object_name(table)),
            };
            return super::regions::table_regions(
                session,
                database,
                &name,
                index.as_ref().map(|i| i.value.as_str()),
            );
        }
        Show::Engines => rows(
            [
                "Engine",
                "Support",
                "Comment",
                "Transactions",
                "XA",
                "Savepoints",
            ]
            .iter()
            .map(|c| text_column(c))
            .collect(),
            vec![vec![
                text("InnoDB"),
                text("DEFAULT"),
                text("Strata's transactional storage"),
                text("YES"),
                text("NO"),
                text("YES"),
            ]],
        ),
        Show::Status { global, .. } => super::status::status(session, *global),
        Show::Collation(_) => collations(),
        Show::Charset(_) => rows(
            ["Charset", "Description", "Default collation", "Maxlen"]
                .iter()
                .map(|c| text_column(c))
                .collect(),
            vec![vec![
                text("utf8mb4"),
                text("UTF-8 Unicode"),
                text("utf8mb4_bin"),
                Datum::Int(4),
            ]],
        ),
        Show::Processlist { full } => rows(
            [
                "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
            ]
            .iter()
            .map(|c| text_column(c))
            .collect(),
            session
                .processes()
                .into_iter()
                .map(|p| {
                    let info = p
                        .info
                        .as_deref()
                        .map(|info| match info.char_indices().nth(100) {
                            Some((end, _)) if !full => text(&info[..end]),
                            _ => text(info),
                        });
                    vec![
                        Datum::Int(i64::from(p.id)),
                        text(&p.user),
                        text(&p.host),
                        p.database.as_deref().map(text).unwrap_or(Datum::Null),
                        text(p.command()),
                        Datum::Int(p.seconds as i64),
                        text(p.state()),
                        info.unwrap_or(Datum::Null),
                    ]
                })
                .collect(),
        ),
        Show::CreateDatabase(name) => {
            let name = &name.value;
            if !session
                .server()
                .catalog()
                .schema()
                .databases
                .contains_key(name)
            {
                return Err(error::unknown_database(name));
            }
            rows(
                vec![text_column("Database"), text_column("Create Database")],
                vec![vec![
                    text(name),
                    text(format!(
                        "CREATE DATABASE `{name}` /*!40100 DEFAULT CHARACTER SET utf8mb4 */"
                    )),
                ]],
            )
        }
    })
}

/// The collations of SHOW COLLATION.
pub(crate) fn collations() -> Output {
    rows(
        [
            "Collation",
            "Charset",
            "Id",
            "Default",
            "Compiled",
            "Sortlen",
        ]
        .iter()
        .map(|c| text_column(c))
        .collect(),
        vec![
            vec![
                text("utf8mb4_bin"),
                text("utf8mb4"),
                Datum::Int(46),
                text("Yes"),
                text("Yes"),
                Datum::Int(1),
            ],
            vec![
                text("utf8mb4_general_ci"),
                text("utf8mb4"),
                Datum::Int(45),
                text(""),
                text("Yes"),
                Datum::Int(1),
            ],
        ],
    )
}

/// The columns MySQL 8.0 gives each empty SHOW.
fn empty_show_columns(of: EmptyShow) -> &'static [&'static str] {
    const CLIENT: [&str; 3] = [
        "character_set_client",
        "collation_connection",
        "Database Collation",
    ];
    match of {
        EmptyShow::Triggers => &[
            "Trigger",
            "Event",
            "Table",
            "Statement",
            "Timing",
            "Created",
            "sql_mode",
            "Definer",
            CLIENT[0],
            CLIENT[1],
            CLIENT[2],
        ],
        EmptyShow::Events => &[
            "Db",
            "Name",
            "Definer",
            "Time zone",
            "Type",
            "Execute at",
            "Interval value",
            "Interval field",
            "Starts",
            "Ends",
            "Status",
            "Originator",
            CLIENT[0],
            CLIENT[1],
            CLIENT[2],
        ],
        EmptyShow::FunctionStatus | EmptyShow::ProcedureStatus => &[
            "Db",
            "Name",
            "Type",
            "Definer",
            "Modified",
            "Created",
            "Security_type",
            "Comment",
            CLIENT[0],
            CLIENT[1],
            CLIENT[2],
        ],
        EmptyShow::BinaryLogStatus => &[
            "File",
            "Position",
            "Binlog_Do_DB",
            "Binlog_Ignore_DB",
            "Executed_Gtid_Set",
        ],
    }
}

/// ALTER DATABASE: its names are checked and the database must exist; every database holds
/// utf8mb4, so there is nothing to change.
fn alter_database(
    session: &mut Session,
    name: &Option<ast::Ident>,
    options: &DatabaseOptions,
) -> Result<Output> {
    let name = match name {
        Some(name) => name.value.clone(),
        None => session
            .current_database()
            .ok_or_else(error::no_database)?
            .to_string(),
    };
    crate::charset::check(options)?;
    session.implicit_commit()?;
    if !session
        .server()
        .catalog()
        .schema()
        .databases
        .contains_key(&name)
    {
        return Err(error::unknown_database(&name));
    }
    Ok(Output::Ok {
        affected_rows: 1,
        last_insert_id: 0,
        warnings: 0,
        info: String::new(),
    })
}

/// The database and name of a table a statement names, in the current database when the
/// name has none (1046 without one).
fn table_in(session: &Session, name: &ast::ObjectName) -> Result<(String, String)> {
    let (db, table) = crate::planner::query::qualified_name(name)?;
    let db = match db {
        Some(db) => db,
        None => session
            .current_database()
            .ok_or_else(error::no_database)?
            .to_string(),
    };
    Ok((db, table))
}

/// CHECKSUM TABLE: per table, the wrapping sum of a CRC-32 of each row's values, so equal
/// contents give equal checksums whatever the order or the storage, and a dump restored
/// elsewhere can be compared. QUICK gives NULL, as InnoDB does (it keeps no live checksum); a
/// table that is not there gives NULL too.
fn checksum(session: &mut Session, tables: &[ast::ObjectName], quick: bool) -> Result<Output> {
    let mut out = Vec::new();
    for name in tables {
        let (db, table) = table_in(session, name)?;
        let qualified = ast::ObjectName::from(vec![
            ast::Ident::with_quote('`', &db),
            ast::Ident::with_quote('`', &table),
        ]);
        let sum = if quick {
            Datum::Null
        } else {
            match session.query_rows(&crate::parser::synth::select_all(qualified)) {
                Ok(rows) => Datum::Int(i64::from(
                    rows.iter()
                        .fold(0u32, |sum, row| sum.wrapping_add(row_checksum(row))),
                )),
                Err(e) if e.code() == error::unknown_table("", "").code() => Datum::Null,
                Err(e) => return Err(e),
            }
        };
        out.push(vec![text(format!("{db}.{table}")), sum]);
    }
    Ok(rows(
        vec![text_column("Table"), int_column("Checksum")],
        out,
    ))
}

/// A CRC-32 of one row: each value's text, NULL told apart from every string.
fn row_checksum(row: &[Datum]) -> u32 {
    let mut crc = crc32fast::Hasher::new();
    for value in row {
        if matches!(value, Datum::Null) {
            crc.update(&[0]);
        } else {
            let text = crate::types::datum_to_text(value);
            crc.update(&[1]);
            crc.update(&(text.len() as u64).to_le_bytes());
            crc.update(&text);
        }
    }
    crc.finalize()
}

/// ANALYZE TABLE, and OPTIMIZE TABLE, which has nothing to rebuild here and analyzes instead
/// (InnoDB recreates the table, then analyzes it).
pub(crate) fn analyze(
    session: &mut Session,
    tables: &[ast::ObjectName],
    optimize: bool,
) -> Result<Output> {
    let mut out = Vec::new();
    for name in tables {
        let (db, table) = table_in(session, name)?;
        let op = if optimize { "optimize" } else { "analyze" };
        let mut report = |msg_type: &str, msg_text: &str| {
            out.push(vec![
                text(format!("{db}.{table}")),
                text(op),
                text(msg_type),
                text(msg_text),
            ])
        };
        match session.server().catalog().analyze(&db, &table) {
            Ok(_) => {
                if optimize {
                    report(
                        "note",
                        "Table does not support optimize, doing analyze instead",
                    );
                }
                report("status", "OK");
            }
            // A table that is not there is reported in its row, and the others go on.
            Err(e) if e.code() == error::unknown_table("", "").code() => {
                report("Error", &e.to_packet().message);
                report("status", "Operation failed");
            }
            Err(e) => return Err(e),
        }
    }
    Ok(rows(
        ["Table", "Op", "Msg_type", "Msg_text"]
            .iter()
            .map(|c| text_column(c))
            .collect(),
        out,
    ))
}

fn show_index(session: &Session, db: Option<&ast::Ident>, table: &str) -> Result<Output> {
    let db = match db {
        Some(d) => d.value.clone(),
        None => session
            .current_database()
            .ok_or_else(error::no_database)?
            .to_string(),
    };
    let schema = session.server().catalog().schema();
    let mut out = Vec::new();
    // A view has no indexes: MySQL lists none.
    let def = match schema.table(&db, table) {
        Err(_) if schema.view(&db, table).is_some() => None,
        def => Some(def?),
    };
    let viewer = session.effective_account(&schema);
    if let Some(def) = def {
        let mut push = |name: &str, unique: bool, columns: &[usize]| {
            for (seq, c) in columns.iter().enumerate() {
                let column = &def.columns[*c].name;
                // An index's column the account holds no privilege on is not listed (as
                // information_schema.STATISTICS).
                if account::shown_column_privileges(viewer.as_ref(), &db, &def.name, column)
                    .is_empty()
                {
                    continue;
                }
                out.push(vec![
                    text(&def.name),
                    Datum::Int(if unique { 0 } else { 1 }),
                    text(name),
                    Datum::Int(seq as i64 + 1),
                    text(&def.columns[*c].name),
                    text("A"),
                    Datum::Int(0),
                    Datum::Null,
                    Datum::Null,
                    text(if def.columns[*c].nullable { "YES" } else { "" }),
                    text("BTREE"),
                    text(""),
                    text(""),
                    text("YES"),
                ]);
            }
        };
        if def.primary_key != PrimaryKey::RowId {
            push("PRIMARY", true, &def.primary_columns());
        }
        for index in def.indexes.iter().filter(|i| i.public) {
            push(&index.name, index.unique, &index.columns);
        }
    }
    let names = [
        "Table",
        "Non_unique",
        "Key_name",
        "Seq_in_index",
        "Column_name",
        "Collation",
        "Cardinality",
        "Sub_part",
        "Packed",
        "Null",
        "Index_type",
        "Comment",
        "Index_comment",
        "Visible",
    ];
    let columns = names
        .iter()
        .map(|n| {
            if matches!(*n, "Non_unique" | "Seq_in_index" | "Cardinality") {
                int_column(n)
            } else {
                text_column(n)
            }
        })
        .collect();
    Ok(rows(columns, out))
}

/// The columns of SHOW TABLE STATUS: information_schema.TABLES' column, and its name here.
const TABLE_STATUS_COLUMNS: [(&str, &str); 18] = [
    ("TABLE_NAME", "Name"),
    ("ENGINE", "Engine"),
    ("VERSION", "Version"),
    ("ROW_FORMAT", "Row_format"),
    ("TABLE_ROWS", "Rows"),
    ("AVG_ROW_LENGTH", "Avg_row_length"),
    ("DATA_LENGTH", "Data_length"),
    ("MAX_DATA_LENGTH", "Max_data_length"),
    ("INDEX_LENGTH", "Index_length"),
    ("DATA_FREE", "Data_free"),
    ("AUTO_INCREMENT", "Auto_increment"),
    ("CREATE_TIME", "Create_time"),
    ("UPDATE_TIME", "Update_time"),
    ("CHECK_TIME", "Check_time"),
    ("TABLE_COLLATION", "Collation"),
    ("CHECKSUM", "Checksum"),
    ("CREATE_OPTIONS", "Create_options"),
    ("TABLE_COMMENT", "Comment"),
];

/// SHOW TABLE STATUS: information_schema.TABLES' rows of one database under MySQL's names,
/// by name.
fn table_status(session: &Session, database: Option<&ast::Ident>) -> Result<Output> {
    let schema = session.server().catalog().schema();
    let database = match database {
        Some(d) => d.value.clone(),
        None => session
            .current_database()
            .ok_or_else(error::no_database)?
            .to_string(),
    };
    if !schema.databases.contains_key(&database)
        && !crate::infoschema::is_information_schema(&database)
    {
        return Err(error::unknown_database(&database));
    }
    let (def, all) = crate::infoschema::table(&schema, "TABLES", None)?;
    let position = |name: &str| {
        def.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
            .ok_or_else(|| error::internal(format!("information_schema.TABLES lacks {name}")))
    };
    let in_database = position("TABLE_SCHEMA")?;
    let positions = TABLE_STATUS_COLUMNS
        .iter()
        .map(|(column, _)| position(column))
        .collect::<Result<Vec<usize>>>()?;
    let mut out: Vec<Vec<Datum>> = all
        .rows()
        .iter()
        .filter(|row| crate::types::datum_to_text(&row[in_database]) == database.as_bytes())
        .map(|row| {
            positions
                .iter()
                .map(|&p| row[p].clone())
                .collect::<Vec<Datum>>()
        })
        .filter(|row| {
            let name = crate::types::datum_to_text(&row[0]);
            session.sees_table(&schema, &database, &String::from_utf8_lossy(&name))
        })
        .collect();
    out.sort_by(|a, b| crate::types::sort_compare(&a[0], &b[0]));
    let columns = TABLE_STATUS_COLUMNS
        .iter()
        .zip(&positions)
        .map(|((_, name), &p)| {
            let ty = ResultType::from_sql(&def.columns[p].ty, false);
            ColumnInfo {
                charset: if ty.column_type == crate::api::ColumnType::VarString {
                    charsets::UTF8MB4_GENERAL_CI
                } else {
                    charsets::BINARY
                },
                column_length: ty.length,
                column_type: ty.column_type,
                decimals: ty.decimals,
                ..text_column(name)
            }
        })
        .collect();
    Ok(rows(columns, out))
}
