//! Statements other than queries and DML: SET, USE, transaction control, DDL, SHOW, EXPLAIN
//! and DESCRIBE, ANALYZE.

use std::sync::Arc;

use sqlparser::ast::{self, Statement};
use strata_codec::Datum;

use crate::api::{charsets, ColumnInfo, ColumnType, Output};
use crate::catalog::{DefaultValue, PrimaryKey, TableDef};
use crate::error::{self, Result};
use crate::expr::like;
use crate::query;
use crate::session::Session;
use crate::types::{datum_to_text, TypeKind};

pub(crate) fn text_column(name: &str) -> ColumnInfo {
    ColumnInfo {
        schema: String::new(),
        table: String::new(),
        org_table: String::new(),
        name: name.to_string(),
        org_name: name.to_string(),
        charset: charsets::UTF8MB4_GENERAL_CI,
        column_length: 1024,
        column_type: ColumnType::VarString,
        flags: 0,
        decimals: 31,
    }
}

fn int_column(name: &str) -> ColumnInfo {
    ColumnInfo {
        column_type: ColumnType::LongLong,
        charset: charsets::BINARY,
        column_length: 21,
        decimals: 0,
        ..text_column(name)
    }
}

pub(crate) fn text(s: impl AsRef<str>) -> Datum {
    Datum::Bytes(s.as_ref().as_bytes().to_vec())
}

pub(crate) fn rows(columns: Vec<ColumnInfo>, rows: Vec<Vec<Datum>>) -> Output {
    Output::ResultSet {
        columns: Arc::from(columns),
        rows,
    }
}

pub(crate) fn ok() -> Output {
    Output::Ok {
        affected_rows: 0,
        last_insert_id: 0,
        warnings: 0,
        info: String::new(),
    }
}

fn matches_pattern(value: &str, pattern: Option<&str>) -> bool {
    pattern.is_none_or(|p| like(value.as_bytes(), p.as_bytes(), b'\\'))
}

/// Handles the MySQL statements the parser does not know, by their words.
pub fn intercept(session: &mut Session, sql: &str) -> Option<Result<Output>> {
    let trimmed = sql.trim_start();
    let keyword = trimmed.get(..4).unwrap_or("");
    if keyword.eq_ignore_ascii_case("STAR") {
        // START TRANSACTION WITH CONSISTENT SNAPSHOT: every transaction reads one snapshot
        // from its first statement on, which is what the clause asks for.
        let words: Vec<String> = trimmed
            .trim_end()
            .trim_end_matches(';')
            .split(|c: char| c.is_whitespace() || c == ',')
            .filter(|w| !w.is_empty())
            .map(|w| w.to_ascii_uppercase())
            .collect();
        let consistent = words.len() >= 5
            && words[..5] == ["START", "TRANSACTION", "WITH", "CONSISTENT", "SNAPSHOT"]
            && words[5..]
                .iter()
                .all(|w| matches!(w.as_str(), "READ" | "ONLY" | "WRITE"));
        return consistent.then(|| session.begin());
    }
    if let Some(expressions) = do_expressions(trimmed) {
        // DO evaluates its expressions for their effects (SLEEP, `@x := …`) and returns no rows.
        let result = session
            .run_text(&format!("SELECT {expressions}"))
            .pop()
            .expect("one statement");
        return Some(result.map(|_| ok()));
    }
    if !keyword.eq_ignore_ascii_case("SHOW")
        && !keyword.eq_ignore_ascii_case("ANAL")
        && !keyword.eq_ignore_ascii_case("OPTI")
    {
        return None;
    }
    let trimmed = trimmed.trim_end().trim_end_matches(';').trim_end();
    let words: Vec<&str> = trimmed.split_whitespace().collect();

    let upper: Vec<String> = words
        .iter()
        .take(4)
        .map(|w| w.to_ascii_uppercase())
        .collect();
    let first = upper.first().map(String::as_str)?;
    if first != "SHOW" && first != "ANALYZE" && first != "OPTIMIZE" {
        return None;
    }
    let second = upper.get(1).map(String::as_str).unwrap_or("");
    let unquote = |s: &str| s.trim_matches('`').trim_end_matches(';').to_string();
    Some(match (first, second) {
        ("ANALYZE" | "OPTIMIZE", "TABLE" | "NO_WRITE_TO_BINLOG" | "LOCAL") => {
            // `{ANALYZE | OPTIMIZE} [NO_WRITE_TO_BINLOG | LOCAL] TABLE names`.
            let skip = if second == "TABLE" { 2 } else { 3 };
            match trimmed
                .splitn(skip + 1, char::is_whitespace)
                .collect::<Vec<_>>()[..]
            {
                [.., table, names] if table.eq_ignore_ascii_case("TABLE") => {
                    analyze(session, names, first == "OPTIMIZE")
                }
                _ => Err(error::syntax(format!("near '{trimmed}'"))),
            }
        }
        ("SHOW", "WARNINGS") | ("SHOW", "ERRORS") => Ok(rows(
            vec![
                text_column("Level"),
                int_column("Code"),
                text_column("Message"),
            ],
            Vec::new(),
        )),
        ("SHOW", "INDEX") | ("SHOW", "INDEXES") | ("SHOW", "KEYS") => {
            // SHOW INDEX FROM t [FROM db]
            let table = words.get(3).map(|w| unquote(w)).unwrap_or_default();
            let db = words.get(5).map(|w| unquote(w));
            show_index(session, db, &table)
        }
        ("SHOW", "TABLE") if upper.get(2).map(String::as_str) == Some("STATUS") => {
            // The text after `SHOW TABLE STATUS`.
            let mut rest = trimmed;
            for _ in 0..3 {
                rest = rest
                    .trim_start()
                    .split_once(char::is_whitespace)
                    .map_or("", |(_, after)| after);
            }
            let schema = session.server().catalog().schema();
            crate::infoschema::table_status_query(rest, session.current_database(), &schema)
                .and_then(|query| session.run_text(&query).pop().expect("one statement"))
        }
        ("SHOW", "ENGINES") => Ok(rows(
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
        )),
        ("SHOW", "STATUS") | ("SHOW", "GLOBAL") | ("SHOW", "SESSION")
            if upper.get(2).map(String::as_str) != Some("VARIABLES")
                && (second == "STATUS" || upper.get(2).map(String::as_str) == Some("STATUS")) =>
        {
            Ok(rows(
                vec![text_column("Variable_name"), text_column("Value")],
                Vec::new(),
            ))
        }
        ("SHOW", "COLLATION") => Ok(rows(
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
        )),
        ("SHOW", "CHARACTER") | ("SHOW", "CHARSET") => Ok(rows(
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
        )),
        ("SHOW", "PROCESSLIST") | ("SHOW", "FULL")
            if second == "PROCESSLIST"
                || upper.get(2).map(String::as_str) == Some("PROCESSLIST") =>
        {
            Ok(rows(
                [
                    "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
                ]
                .iter()
                .map(|c| text_column(c))
                .collect(),
                vec![vec![
                    Datum::Int(session.connection_id() as i64),
                    text("root"),
                    text("127.0.0.1"),
                    session.current_database().map(text).unwrap_or(Datum::Null),
                    text("Query"),
                    Datum::Int(0),
                    text("autocommit"),
                    text("SHOW PROCESSLIST"),
                ]],
            ))
        }
        ("SHOW", "GRANTS") => Ok(rows(
            vec![text_column("Grants for root@%")],
            vec![vec![text(
                "GRANT ALL PRIVILEGES ON *.* TO 'root'@'%' WITH GRANT OPTION",
            )]],
        )),
        ("SHOW", "CREATE")
            if upper.get(2).map(String::as_str) == Some("DATABASE")
                || upper.get(2).map(String::as_str) == Some("SCHEMA") =>
        {
            let name = words.get(3).map(|w| unquote(w)).unwrap_or_default();
            if session
                .server()
                .catalog()
                .schema()
                .databases
                .contains_key(&name)
            {
                Ok(rows(
                    vec![text_column("Database"), text_column("Create Database")],
                    vec![vec![
                        text(&name),
                        text(format!(
                            "CREATE DATABASE `{name}` /*!40100 DEFAULT CHARACTER SET utf8mb4 */"
                        )),
                    ]],
                ))
            } else {
                Err(error::unknown_database(&name))
            }
        }
        _ => return None,
    })
}

/// The expressions of `DO expr, …` (one statement, nothing after it).
fn do_expressions(sql: &str) -> Option<&str> {
    let (word, rest) = sql.split_once(char::is_whitespace)?;
    let rest = rest.trim().trim_end_matches(';').trim_end();
    (word.eq_ignore_ascii_case("DO") && !rest.is_empty() && !rest.contains(';')).then_some(rest)
}

/// ANALYZE TABLE, and OPTIMIZE TABLE, which has nothing to rebuild here and analyzes instead
/// (InnoDB recreates the table, then analyzes it).
fn analyze(session: &mut Session, names: &str, optimize: bool) -> Result<Output> {
    let mut out = Vec::new();
    for name in names.split(',') {
        let name = name.trim().trim_matches('`');
        if name.is_empty() {
            return Err(error::syntax("near end of ANALYZE TABLE"));
        }
        let (db, table) = match name.split_once('.') {
            Some((d, t)) => (
                d.trim_matches('`').to_string(),
                t.trim_matches('`').to_string(),
            ),
            None => (
                session
                    .current_database()
                    .ok_or_else(error::no_database)?
                    .to_string(),
                name.to_string(),
            ),
        };
        session.server().catalog().analyze(&db, &table)?;
        let op = if optimize { "optimize" } else { "analyze" };
        if optimize {
            out.push(vec![
                text(format!("{db}.{table}")),
                text(op),
                text("note"),
                text("Table does not support optimize, doing analyze instead"),
            ]);
        }
        out.push(vec![
            text(format!("{db}.{table}")),
            text(op),
            text("status"),
            text("OK"),
        ]);
    }
    Ok(rows(
        ["Table", "Op", "Msg_type", "Msg_text"]
            .iter()
            .map(|c| text_column(c))
            .collect(),
        out,
    ))
}

fn show_index(session: &Session, db: Option<String>, table: &str) -> Result<Output> {
    let db = match db {
        Some(d) => d,
        None => session
            .current_database()
            .ok_or_else(error::no_database)?
            .to_string(),
    };
    let schema = session.server().catalog().schema();
    let def = schema.table(&db, table)?;
    let mut out = Vec::new();
    let mut push = |name: &str, unique: bool, columns: &[usize]| {
        for (seq, c) in columns.iter().enumerate() {
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

fn object_name(name: &ast::ObjectName) -> String {
    name.0
        .last()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .unwrap_or_default()
}

/// Runs a statement that is neither a query nor DML.
pub fn execute_other(
    session: &mut Session,
    statement: &Statement,
    params: &[Datum],
) -> Result<Output> {
    match statement {
        Statement::StartTransaction { .. } => session.begin(),
        Statement::Commit { .. } => session.commit(),
        Statement::Rollback {
            savepoint: None, ..
        } => session.rollback(),
        Statement::Rollback {
            savepoint: Some(name),
            ..
        } => session.rollback_to_savepoint(&name.value),
        Statement::Savepoint { name } => session.savepoint(&name.value),
        Statement::ReleaseSavepoint { name } => session.release_savepoint(&name.value),
        Statement::Set(set) => execute_set(session, set, params).map(|_| ok()),
        Statement::Use(use_) => {
            let name = match use_ {
                ast::Use::Object(n) | ast::Use::Database(n) | ast::Use::Schema(n) => object_name(n),
                other => return Err(error::unsupported(other)),
            };
            session.switch_database(&name).map(|_| ok())
        }
        Statement::CreateDatabase {
            db_name: name,
            if_not_exists,
            ..
        }
        | Statement::CreateSchema {
            schema_name: ast::SchemaName::Simple(name),
            if_not_exists,
            ..
        } => {
            session.implicit_commit()?;
            let created = session
                .server()
                .catalog()
                .create_database(&object_name(name), *if_not_exists)?;
            Ok(Output::Ok {
                affected_rows: created as u64,
                last_insert_id: 0,
                warnings: 0,
                info: String::new(),
            })
        }
        Statement::CreateTable(create) if create.query.is_some() => {
            let query = create.query.as_deref().expect("matched");
            crate::create_as::create_table_as(session, create, query)
        }
        Statement::CreateTable(create) => {
            session.implicit_commit()?;
            let db = session.current_database().map(str::to_string);
            session
                .server()
                .catalog()
                .create_table(create, db.as_deref())
                .map(|_| ok())
        }
        Statement::CreateView {
            or_replace,
            materialized: false,
            temporary: false,
            name,
            columns,
            query,
            if_not_exists,
            ..
        } => {
            let columns: Vec<ast::Ident> = columns.iter().map(|c| c.name.clone()).collect();
            let existing = if *or_replace {
                crate::ddl::Existing::Replace
            } else {
                crate::ddl::Existing::Refuse
            };
            crate::view::execute_create(session, name, &columns, query, existing, *if_not_exists)
        }
        Statement::AlterView {
            name,
            columns,
            query,
            ..
        } => crate::view::execute_create(
            session,
            name,
            columns,
            query,
            crate::ddl::Existing::Require,
            false,
        ),
        Statement::CreateIndex(create) => {
            session.implicit_commit()?;
            let (db, table) = query::split_name(&create.table_name, session.current_database())?;
            let name = create
                .name
                .as_ref()
                .map(object_name)
                .ok_or_else(|| error::syntax("CREATE INDEX needs a name"))?;
            let columns = crate::ddl::create_index_columns(create);
            session
                .server()
                .catalog()
                .create_index(
                    &db,
                    &table,
                    &name,
                    &columns,
                    create.unique,
                    create.if_not_exists,
                )
                .map(|_| ok())
        }
        Statement::Drop {
            object_type,
            if_exists,
            names,
            table,
            ..
        } => {
            session.implicit_commit()?;
            let catalog = session.server().catalog().clone();
            match object_type {
                ast::ObjectType::Table | ast::ObjectType::View => {
                    let names: Vec<(String, String)> = names
                        .iter()
                        .map(|n| query::split_name(n, session.current_database()))
                        .collect::<Result<_>>()?;
                    if *object_type == ast::ObjectType::View {
                        catalog.drop_views(&names, *if_exists).map(|_| ok())
                    } else {
                        catalog.drop_tables(&names, *if_exists).map(|_| ok())
                    }
                }
                ast::ObjectType::Database | ast::ObjectType::Schema => {
                    let name = object_name(&names[0]);
                    catalog.drop_database(&name, *if_exists)?;
                    if session.current_database() == Some(name.as_str()) {
                        session.clear_database();
                    }
                    Ok(ok())
                }
                ast::ObjectType::Index => {
                    let table = table
                        .as_ref()
                        .ok_or_else(|| error::syntax("DROP INDEX needs ON table"))?;
                    let (db, t) = query::split_name(table, session.current_database())?;
                    catalog
                        .drop_index(&db, &t, &object_name(&names[0]), *if_exists)
                        .map(|_| ok())
                }
                other => Err(error::unsupported(format!("DROP {other}"))),
            }
        }
        Statement::AlterTable {
            name, operations, ..
        } => {
            session.implicit_commit()?;
            let (db, table) = query::split_name(name, session.current_database())?;
            let current = session.current_database().map(str::to_string);
            session
                .server()
                .catalog()
                .alter_table(&db, &table, operations, current.as_deref())
                .map(|_| ok())
        }
        Statement::RenameTable(renames) => {
            session.implicit_commit()?;
            let renames = renames
                .iter()
                .map(|r| {
                    Ok((
                        query::split_name(&r.old_name, session.current_database())?,
                        query::split_name(&r.new_name, session.current_database())?,
                    ))
                })
                .collect::<Result<Vec<_>>>()?;
            session
                .server()
                .catalog()
                .rename_tables(&renames)
                .map(|_| ok())
        }
        Statement::Truncate { table_names, .. } => {
            session.implicit_commit()?;
            for target in table_names {
                let (db, table) = query::split_name(&target.name, session.current_database())?;
                session.server().catalog().truncate_table(&db, &table)?;
            }
            Ok(ok())
        }
        Statement::ShowDatabases { show_options, .. }
        | Statement::ShowSchemas { show_options, .. } => {
            let pattern = like_pattern(show_options);
            let schema = session.server().catalog().schema();
            let mut names: Vec<&str> = schema.databases.keys().map(String::as_str).collect();
            names.push(crate::infoschema::NAME);
            names.sort();
            let out = names
                .into_iter()
                .filter(|n| matches_pattern(n, pattern.as_deref()))
                .map(|n| vec![text(n)])
                .collect();
            // MySQL names the column after the pattern: `Database (sb%)`.
            let header = match &pattern {
                Some(p) => format!("Database ({p})"),
                None => "Database".to_string(),
            };
            Ok(rows(vec![text_column(&header)], out))
        }
        Statement::ShowTables {
            full, show_options, ..
        } => {
            let db = match show_options
                .show_in
                .as_ref()
                .and_then(|i| i.parent_name.as_ref())
            {
                Some(n) => object_name(n),
                None => session
                    .current_database()
                    .ok_or_else(error::no_database)?
                    .to_string(),
            };
            let schema = session.server().catalog().schema();
            if !schema.databases.contains_key(&db) {
                return Err(error::unknown_database(&db));
            }
            let pattern = like_pattern(show_options);
            let mut names: Vec<(&str, &str)> = schema
                .tables_of(&db)
                .into_iter()
                .map(|t| (t.name.as_str(), "BASE TABLE"))
                .chain(
                    schema
                        .views_of(&db)
                        .into_iter()
                        .map(|v| (v.name.as_str(), "VIEW")),
                )
                .filter(|(name, _)| matches_pattern(name, pattern.as_deref()))
                .collect();
            names.sort_unstable();
            let out: Vec<Vec<Datum>> = names
                .into_iter()
                .map(|(name, kind)| {
                    if *full {
                        vec![text(name), text(kind)]
                    } else {
                        vec![text(name)]
                    }
                })
                .collect();
            let header = match &pattern {
                Some(p) => format!("Tables_in_{db} ({p})"),
                None => format!("Tables_in_{db}"),
            };
            let mut columns = vec![text_column(&header)];
            if *full {
                columns.push(text_column("Table_type"));
            }
            Ok(rows(columns, out))
        }
        Statement::ShowColumns {
            full, show_options, ..
        } => {
            let name = show_options
                .show_in
                .as_ref()
                .and_then(|i| i.parent_name.as_ref())
                .ok_or_else(|| error::syntax("SHOW COLUMNS needs FROM"))?;
            let (db, table) = query::split_name(name, session.current_database())?;
            describe(session, &db, &table, *full)
        }
        Statement::ExplainTable { table_name, .. } => {
            let (db, table) = query::split_name(table_name, session.current_database())?;
            describe(session, &db, &table, false)
        }
        Statement::ShowCreate {
            obj_type: ast::ShowCreateObject::View,
            obj_name,
        } => crate::view::show_create(session, obj_name),
        Statement::ShowCreate {
            obj_type: ast::ShowCreateObject::Table,
            obj_name,
        } => {
            let (db, table) = query::split_name(obj_name, session.current_database())?;
            // SHOW CREATE TABLE of a view shows the view, as in MySQL.
            if session
                .server()
                .catalog()
                .schema()
                .view(&db, &table)
                .is_some()
            {
                return crate::view::show_create(session, obj_name);
            }
            let schema = session.server().catalog().schema();
            let def = schema.table(&db, &table)?;
            Ok(rows(
                vec![text_column("Table"), text_column("Create Table")],
                vec![vec![text(&def.name), text(show_create_table(def))]],
            ))
        }
        Statement::ShowVariables { filter, global, .. } => {
            let pattern = match filter {
                Some(ast::ShowStatementFilter::Like(p)) => Some(p.clone()),
                Some(ast::ShowStatementFilter::NoKeyword(p)) => Some(p.clone()),
                _ => None,
            };
            let out = crate::vars::defaults()
                .into_iter()
                .filter(|(n, _)| matches_pattern(n, pattern.as_deref()))
                .map(|(n, _)| {
                    let value = if *global {
                        session.global_variable(n)
                    } else {
                        session.variable(n)
                    };
                    vec![
                        text(n),
                        Datum::Bytes(value.map(|v| datum_to_text(&v)).unwrap_or_default()),
                    ]
                })
                .collect();
            Ok(rows(
                vec![text_column("Variable_name"), text_column("Value")],
                out,
            ))
        }
        Statement::ShowStatus { .. } => Ok(rows(
            vec![text_column("Variable_name"), text_column("Value")],
            Vec::new(),
        )),
        Statement::ShowCollation { .. } => intercept(session, "SHOW COLLATION").expect("handled"),
        Statement::Explain { statement, .. } => crate::explain::explain(session, statement),
        Statement::Analyze { table_name, .. } => analyze(session, &table_name.to_string(), false),
        Statement::Kill { .. }
        | Statement::Flush { .. }
        | Statement::UnlockTables
        | Statement::LockTables { .. } => Ok(ok()),
        Statement::Query(_)
        | Statement::Insert(_)
        | Statement::Update { .. }
        | Statement::Delete(_) => Err(error::unsupported("this form of the statement")),
        other => Err(error::unsupported(
            other
                .to_string()
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" "),
        )),
    }
}

fn like_pattern(options: &ast::ShowStatementOptions) -> Option<String> {
    match &options.filter_position {
        Some(ast::ShowStatementFilterPosition::Infix(ast::ShowStatementFilter::Like(p)))
        | Some(ast::ShowStatementFilterPosition::Suffix(ast::ShowStatementFilter::Like(p))) => {
            Some(p.clone())
        }
        _ => None,
    }
}

fn execute_set(session: &mut Session, set: &ast::Set, params: &[Datum]) -> Result<()> {
    match set {
        ast::Set::SingleAssignment {
            scope,
            variable,
            values,
            ..
        } => {
            let value = match values.as_slice() {
                [v] => set_value(session, v, params)?,
                _ => return Err(error::syntax("SET takes one value")),
            };
            assign(session, scope.as_ref(), variable, value)
        }
        ast::Set::MultipleAssignments { assignments } => {
            for a in assignments {
                let value = set_value(session, &a.value, params)?;
                assign(session, a.scope.as_ref(), &a.name, value)?;
            }
            Ok(())
        }
        ast::Set::SetNames { .. } | ast::Set::SetNamesDefault {} => Ok(()),
        ast::Set::SetTransaction { .. } => Ok(()),
        ast::Set::SetTimeZone { .. } => Ok(()),
        other => Err(error::unsupported(other)),
    }
}

/// A SET value: an identifier like `ON` or `utf8mb4` is a string, anything else an expression
/// (one with a subquery runs as a query).
fn set_value(session: &mut Session, e: &ast::Expr, params: &[Datum]) -> Result<Datum> {
    if let ast::Expr::Identifier(i) = e {
        if !i.value.starts_with('@') {
            return Ok(text(&i.value));
        }
    }
    let has_subquery = ast::visit_expressions(e, |x| match x {
        ast::Expr::Subquery(_) | ast::Expr::Exists { .. } | ast::Expr::InSubquery { .. } => {
            std::ops::ControlFlow::Break(())
        }
        _ => std::ops::ControlFlow::Continue(()),
    })
    .is_break();
    if has_subquery {
        session.eval_query_value(e, params)
    } else {
        session.eval_constant(e, params)
    }
}

fn assign(
    session: &mut Session,
    scope: Option<&ast::ContextModifier>,
    variable: &ast::ObjectName,
    value: Datum,
) -> Result<()> {
    let parts: Vec<String> = variable
        .0
        .iter()
        .map(|p| match p {
            ast::ObjectNamePart::Identifier(i) => i.value.clone(),
            other => other.to_string(),
        })
        .collect();
    let mut global = matches!(scope, Some(ast::ContextModifier::Global));
    let name = match parts.as_slice() {
        [one] => one.clone(),
        [scope, name] => {
            let s = scope.trim_start_matches('@').to_ascii_lowercase();
            global |= s == "global";
            name.clone()
        }
        _ => return Err(error::syntax(format!("near '{variable}'"))),
    };
    if let Some(system) = name.strip_prefix("@@") {
        return session.set_variable(system, value, global);
    }
    if let Some(user) = name.strip_prefix('@') {
        session.set_user_variable(user, value);
        return Ok(());
    }
    session.set_variable(&name, value, global)
}

fn describe(session: &Session, db: &str, table: &str, full: bool) -> Result<Output> {
    let schema = session.server().catalog().schema();
    let def = match schema.view(db, table) {
        Some(view) => &Arc::new(crate::view::table_def(view, &schema)?),
        None => schema.table(db, table)?,
    };
    let out = def
        .visible_columns()
        .map(|(i, c)| {
            let key = crate::infoschema::column_key(def, i);
            let default = match &c.default {
                Some(DefaultValue::Literal(Some(v))) => text(v),
                Some(DefaultValue::CurrentTimestamp) => text("CURRENT_TIMESTAMP"),
                _ => Datum::Null,
            };
            let mut row = vec![text(&c.name), text(c.ty.sql_name())];
            if full {
                row.push(if c.ty.is_string() {
                    text("utf8mb4_bin")
                } else {
                    Datum::Null
                });
            }
            row.extend([
                text(if c.nullable { "YES" } else { "NO" }),
                text(key),
                default,
                text(if c.auto_increment {
                    "auto_increment"
                } else {
                    ""
                }),
            ]);
            if full {
                row.extend([text("select,insert,update,references"), text("")]);
            }
            row
        })
        .collect();
    let mut names = vec!["Field", "Type"];
    if full {
        names.push("Collation");
    }
    names.extend(["Null", "Key", "Default", "Extra"]);
    if full {
        names.extend(["Privileges", "Comment"]);
    }
    Ok(rows(names.iter().map(|n| text_column(n)).collect(), out))
}

/// Renders `SHOW CREATE TABLE`.
pub fn show_create_table(def: &TableDef) -> String {
    let mut lines = Vec::new();
    for (_, c) in def.visible_columns() {
        let mut line = format!("  `{}` {}", c.name, c.ty.sql_name());
        if !c.nullable {
            line.push_str(" NOT NULL");
        }
        match &c.default {
            // A BIT's default shows as a bit-value literal, as MySQL shows it.
            Some(DefaultValue::Literal(Some(v))) if c.ty.kind == TypeKind::Bit => {
                let bits = v
                    .parse::<u64>()
                    .map_or_else(|_| v.clone(), |n| format!("{n:b}"));
                line.push_str(&format!(" DEFAULT b'{bits}'"))
            }
            Some(DefaultValue::Literal(Some(v))) => {
                line.push_str(&format!(" DEFAULT '{}'", v.replace('\'', "''")))
            }
            Some(DefaultValue::Literal(None)) => line.push_str(" DEFAULT NULL"),
            Some(DefaultValue::CurrentTimestamp) => line.push_str(" DEFAULT CURRENT_TIMESTAMP"),
            None if c.nullable => line.push_str(" DEFAULT NULL"),
            None => {}
        }
        if c.auto_increment {
            line.push_str(" AUTO_INCREMENT");
        }
        lines.push(line);
    }
    let names = |cs: &[usize]| {
        cs.iter()
            .map(|c| format!("`{}`", def.columns[*c].name))
            .collect::<Vec<_>>()
            .join(",")
    };
    if def.primary_key != PrimaryKey::RowId {
        lines.push(format!(
            "  PRIMARY KEY ({}) /*T![clustered_index] CLUSTERED */",
            names(&def.primary_columns())
        ));
    }
    for index in def.indexes.iter().filter(|i| i.public) {
        let kind = if index.unique { "UNIQUE KEY" } else { "KEY" };
        lines.push(format!(
            "  {kind} `{}` ({})",
            index.name,
            names(&index.columns)
        ));
    }
    let comment = if def.comment.is_empty() {
        String::new()
    } else {
        format!(" COMMENT='{}'", def.comment.replace('\'', "''"))
    };
    format!(
        "CREATE TABLE `{}` (\n{}\n) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin{comment}",
        def.name,
        lines.join(",\n")
    )
}
