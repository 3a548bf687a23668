//! Statements other than queries and DML: SET, USE, transaction control, DDL, SHOW, EXPLAIN
//! and DESCRIBE, ANALYZE.

use std::sync::Arc;

use sqlparser::ast::{self, Statement};
use strata_codec::Datum;

use crate::account;
use crate::api::{charsets, ColumnInfo, ColumnType, Output};
use crate::catalog::{DefaultValue, PrimaryKey, TableDef};
use crate::error::{self, Result};
use crate::expr::like;
use crate::planner::query;
use crate::session::Session;
use crate::types::{datum_to_text, TypeKind};

mod own;
pub(crate) mod regions;
mod status;

pub(crate) use own::execute_mysql_only;

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
            crate::charset::check(&session.extras().database_options)?;
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
            let mut names: Vec<&str> = schema
                .databases
                .keys()
                .map(String::as_str)
                .filter(|db| session.sees_database(&schema, db))
                .collect();
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
                .filter(|(name, _)| session.sees_table(&schema, &db, name))
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
        Statement::ShowStatus { global, .. } => Ok(status::status(session, *global)),
        Statement::ShowCollation { .. } => Ok(own::collations()),
        Statement::Explain {
            statement, analyze, ..
        } if *analyze => crate::explain::analyze(session, statement),
        Statement::Explain { statement, .. } => crate::explain::explain(session, statement),
        Statement::Analyze { table_name, .. } => {
            own::analyze(session, std::slice::from_ref(table_name), false)
        }
        Statement::Kill { modifier, id } => {
            let scope = match modifier {
                Some(ast::KillType::Query) => crate::process::KillScope::Query,
                Some(ast::KillType::Connection) | None => crate::process::KillScope::Connection,
                Some(ast::KillType::Mutation) => return Err(error::syntax("near 'MUTATION'")),
            };
            // An id beyond 32 bits names no connection.
            let id = u32::try_from(*id).unwrap_or(0);
            session.kill_process(id, scope)?;
            Ok(ok())
        }
        Statement::Flush {
            object_type: ast::FlushType::Privileges,
            ..
        } => {
            session.flush_privileges();
            Ok(ok())
        }
        Statement::Flush { .. } | Statement::UnlockTables | Statement::LockTables { .. } => {
            Ok(ok())
        }
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
    let parts = crate::planner::query::name_parts(variable);
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
    let viewer = session.effective_account(&schema);
    let out = def
        .visible_columns()
        .filter_map(|(i, c)| {
            // Only the columns the account holds a privilege on, as in MySQL.
            let privileges =
                account::shown_column_privileges(viewer.as_ref(), db, &def.name, &c.name);
            if privileges.is_empty() {
                return None;
            }
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
                row.extend([text(privileges.column_list()), text("")]);
            }
            Some(row)
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
