//! What each statement needs of its account, and the check made before it runs.
//!
//! [`needs`] reads a parsed statement and lists the privileges it needs on which objects,
//! as MySQL asks for them: SELECT on every table or view a statement reads, INSERT / UPDATE /
//! DELETE on what it writes, CREATE / DROP / ALTER / INDEX / CREATE VIEW on what DDL changes,
//! SUPER for `SET GLOBAL`. [`check`] holds them against the account's grants and answers with
//! MySQL's error for the first that is missing: 1142 for a table, 1143 for a column, 1044 for
//! a database, 1227 for a global privilege. An account with every global privilege skips the
//! reading.
//!
//! What is read and written is also known by column, for accounts with grants on columns: a
//! query needs SELECT on every column it names of each table it reads (all of them for `*`),
//! an INSERT needs INSERT on the columns it lists, an UPDATE needs UPDATE on the columns it
//! sets and, as UPDATE and DELETE in MySQL, SELECT on the columns of their targets they only
//! read (WHERE, the values assigned). The statement is read before it is planned, so a name
//! counts as a column of every table it may belong to (a qualified one, of the tables with
//! that name or alias), then only where the table has such a column.

use std::collections::HashSet;

use sqlparser::ast::{self, ObjectName, Statement, Visit};

use super::reading::{assigned, relation_name, unalias, Relations};
use super::{Account, Identity, Privileges};
use crate::error::{Error, Result};
use crate::parser::statement::{self as own, Show};

/// One thing a statement needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Need {
    /// Every privilege of the set on `database.table`.
    Table {
        privileges: Privileges,
        database: String,
        table: String,
    },
    /// A privilege on columns of `database.table`: held on the table (or above), or on each
    /// column `columns` names of those the table has; and, unless `written` (the columns an
    /// UPDATE or DELETE reads of the table it writes, which its own privilege lets it
    /// reach), on one column of it at least.
    Columns {
        privilege: Privileges,
        database: String,
        table: String,
        columns: ColumnUse,
        written: bool,
    },
    /// Any privilege at all on `database.table` (SHOW CREATE TABLE, DESCRIBE).
    AnyOnTable { database: String, table: String },
    /// Every privilege of the set on `database` as a whole.
    Database {
        privileges: Privileges,
        database: String,
    },
    /// Any privilege on `database` or a table in it (USE).
    AnyOnDatabase(String),
    /// One of the global privileges of the set (named in 1227's message).
    Global(Privileges),
}

/// The columns of a table a statement uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ColumnUse {
    /// Every column (`*`, an INSERT without a column list).
    Every,
    /// The names that may be columns of the table (others are not checked).
    Named(Vec<String>),
}

/// The names of the columns of table or view `database.table`, if it exists.
pub fn column_names(
    schema: &crate::catalog::Schema,
    database: &str,
    table: &str,
) -> Option<Vec<String>> {
    if let Ok(table) = schema.table(database, table) {
        return Some(table.columns.iter().map(|c| c.name.clone()).collect());
    }
    schema
        .view(database, table)
        .map(|view| view.columns.clone())
}

/// Databases whose tables every account may read (their rows are filtered instead).
fn is_open_database(database: &str) -> bool {
    database.eq_ignore_ascii_case("information_schema")
        || database.eq_ignore_ascii_case("performance_schema")
}

/// Checks `needs` against `account`; the first missing one is MySQL's error. `columns_of`
/// names the columns of a table (see [`column_names`]), asked only of tables the account
/// holds privileges on by column.
pub fn check(
    account: &Account,
    needs: &[Need],
    columns_of: &dyn Fn(&str, &str) -> Option<Vec<String>>,
) -> Result<()> {
    let identity = || account.identity();
    for need in needs {
        match need {
            Need::Table {
                privileges,
                database,
                table,
            } => {
                if is_open_database(database) {
                    continue;
                }
                let held = account.privileges_on(database, Some(table));
                if !held.contains(*privileges) {
                    let missing = privileges.without(held);
                    let command = missing.names().first().copied().unwrap_or("SELECT");
                    return Err(table_denied(command, &identity(), table));
                }
            }
            Need::Columns {
                privilege,
                database,
                table,
                columns,
                written,
            } => {
                if is_open_database(database)
                    || account
                        .privileges_on(database, Some(table))
                        .contains(*privilege)
                {
                    continue;
                }
                let checked = (database.as_str(), table.as_str(), *written);
                check_columns(account, *privilege, checked, columns, columns_of)?;
            }
            Need::AnyOnTable { database, table } => {
                if !is_open_database(database) && !account.sees_table(database, table) {
                    return Err(table_denied("SHOW", &identity(), table));
                }
            }
            Need::Database {
                privileges,
                database,
            } => {
                if !account.has(*privileges, database, None) {
                    return Err(database_denied(&identity(), database));
                }
            }
            Need::AnyOnDatabase(database) => {
                if !is_open_database(database) && !account.sees_database(database) {
                    return Err(database_denied(&identity(), database));
                }
            }
            Need::Global(any_of) => {
                if !account.global.intersects(*any_of) {
                    return Err(global_denied(*any_of));
                }
            }
        }
    }
    Ok(())
}

/// [`Need::Columns`] for an account without the privilege on the table: 1142 when it holds it
/// on no column of the table (unless the table is `written`), 1143 for the first column used
/// it does not hold it on.
fn check_columns(
    account: &Account,
    privilege: Privileges,
    (database, table, written): (&str, &str, bool),
    columns: &ColumnUse,
    columns_of: &dyn Fn(&str, &str) -> Option<Vec<String>>,
) -> Result<()> {
    let command = privilege.names().first().copied().unwrap_or("SELECT");
    let identity = account.identity();
    let held = account.column_privileges(database, table);
    if !written && !held.is_some_and(|held| held.values().any(|p| p.contains(privilege))) {
        return Err(table_denied(command, &identity, table));
    }
    let named = match columns {
        ColumnUse::Named(names) if names.is_empty() => return Ok(()),
        ColumnUse::Named(names) => Some(names),
        ColumnUse::Every => None,
    };
    // Without the table's columns (dropped meanwhile) nothing can be checked by column.
    let Some(known) = columns_of(database, table) else {
        return Err(table_denied(command, &identity, table));
    };
    for column in &known {
        let used = named.is_none_or(|names| names.iter().any(|n| n.eq_ignore_ascii_case(column)));
        if used
            && !account
                .privileges_on_column(database, table, column)
                .contains(privilege)
        {
            // MySQL answers a `*` (all the columns) for the table.
            return Err(match named {
                Some(_) => column_denied(command, &identity, column, table),
                None => table_denied(command, &identity, table),
            });
        }
    }
    Ok(())
}

/// 1143: `SELECT command denied to user 'u'@'h' for column 'c' in table 't'`.
pub fn column_denied(command: &str, identity: &Identity, column: &str, table: &str) -> Error {
    Error::new(
        1143,
        "42000",
        format!(
            "{command} command denied to user {identity} for column '{column}' in table '{table}'"
        ),
    )
}

/// 1142: `SELECT command denied to user 'u'@'h' for table 't'`.
pub fn table_denied(command: &str, identity: &Identity, table: &str) -> Error {
    Error::new(
        1142,
        "42000",
        format!("{command} command denied to user {identity} for table '{table}'"),
    )
}

/// 1044: `Access denied for user 'u'@'h' to database 'db'`.
pub fn database_denied(identity: &Identity, database: &str) -> Error {
    Error::new(
        1044,
        "42000",
        format!("Access denied for user {identity} to database '{database}'"),
    )
}

/// 1227: `Access denied; you need (at least one of) the X privilege(s) for this operation`.
pub fn global_denied(any_of: Privileges) -> Error {
    Error::new(
        1227,
        "42000",
        format!(
            "Access denied; you need (at least one of) the {} privilege(s) for this operation",
            any_of.names().join(", ")
        ),
    )
}

/// What `statement` needs, with unqualified names in `database` (a name that needs a
/// database when none is selected needs nothing here: planning answers 1046).
pub fn needs(statement: &own::Statement, database: Option<&str>) -> Vec<Need> {
    let mut out = Needs {
        database,
        needs: Vec::new(),
    };
    match statement {
        own::Statement::Sql(tree, _) => out.statement(tree),
        own::Statement::Show(show) => match show {
            Show::Index {
                table,
                database: db,
                ..
            } => {
                let db = db.as_ref().map(|d| d.value.as_str());
                if let Some((database, table)) = out.resolve_in(table, db) {
                    out.needs.push(Need::AnyOnTable { database, table });
                }
            }
            Show::TableRegions { table, .. } => {
                if let Some((database, table)) = out.resolve_in(table, None) {
                    out.needs.push(Need::AnyOnTable { database, table });
                }
            }
            Show::TableStatus {
                database: Some(db), ..
            } => out.needs.push(Need::AnyOnDatabase(db.value.clone())),
            Show::CreateDatabase(db) => out.needs.push(Need::AnyOnDatabase(db.value.clone())),
            _ => {}
        },
        own::Statement::Analyze { tables, .. } => {
            for table in tables {
                out.table(table, Privileges::SELECT.union(Privileges::INSERT));
            }
        }
        own::Statement::Checksum { tables, .. } => {
            for table in tables {
                out.table(table, Privileges::SELECT);
            }
        }
        own::Statement::AlterDatabase { name, .. } => {
            if let Some(db) = name.as_ref().map(|n| n.value.as_str()).or(database) {
                out.database(db, Privileges::ALTER);
            }
        }
        own::Statement::Do(exprs) => {
            for e in exprs {
                out.reads(e, &[]);
            }
        }
        // Account statements check what they need when they run (account::statement).
        own::Statement::BeginConsistent | own::Statement::Account(_) => {}
    }
    out.needs
}

struct Needs<'a> {
    database: Option<&'a str>,
    needs: Vec<Need>,
}

impl Needs<'_> {
    /// `database.table` of a name, the current database for an unqualified one.
    fn resolve_in(&self, name: &ObjectName, database: Option<&str>) -> Option<(String, String)> {
        let parts: Vec<&str> = name
            .0
            .iter()
            .filter_map(|p| p.as_ident().map(|i| i.value.as_str()))
            .collect();
        match parts.as_slice() {
            [table] => Some((database.or(self.database)?.to_string(), table.to_string())),
            [.., db, table] => Some((db.to_string(), table.to_string())),
            [] => None,
        }
    }

    fn resolve(&self, name: &ObjectName) -> Option<(String, String)> {
        self.resolve_in(name, None)
    }

    fn table(&mut self, name: &ObjectName, privileges: Privileges) {
        if let Some((database, table)) = self.resolve(name) {
            self.needs.push(Need::Table {
                privileges,
                database,
                table,
            });
        }
    }

    fn database(&mut self, name: &str, privileges: Privileges) {
        self.needs.push(Need::Database {
            privileges,
            database: name.to_string(),
        });
    }

    /// SELECT on every table or view `node` reads, on the columns it names of each, but the
    /// names of its common table expressions. The first appearance of each of `targets` (the
    /// tables an UPDATE or DELETE writes) needs SELECT only on the columns it names.
    fn reads<V: Visit>(&mut self, node: &V, targets: &[ObjectName]) {
        let mut relations = Relations::default();
        let _ = node.visit(&mut relations);
        let mut passed = HashSet::new();
        for name in &relations.tables {
            let unqualified = name.0.len() == 1;
            let text = name.to_string();
            if unqualified {
                let bare = text.trim_matches('`');
                if relations.ctes.contains(&bare.to_ascii_lowercase())
                    || bare.eq_ignore_ascii_case("dual")
                {
                    continue;
                }
            }
            let Some((database, table)) = self.resolve(name) else {
                continue;
            };
            let target = targets.iter().any(|t| t.to_string() == text) && passed.insert(text);
            let columns = relations.columns_of(name, &table);
            if target && columns == ColumnUse::Named(Vec::new()) {
                continue;
            }
            self.needs.push(Need::Columns {
                privilege: Privileges::SELECT,
                database,
                table,
                columns,
                written: target,
            });
        }
    }

    /// `privilege` on the columns `names` of the table `name`.
    fn columns(&mut self, name: &ObjectName, privilege: Privileges, columns: ColumnUse) {
        if let Some((database, table)) = self.resolve(name) {
            self.needs.push(Need::Columns {
                privilege,
                database,
                table,
                columns,
                written: false,
            });
        }
    }

    fn statement(&mut self, tree: &Statement) {
        match tree {
            Statement::Query(_) => self.reads(tree, &[]),
            Statement::Insert(insert) => {
                if let ast::TableObject::TableName(name) = &insert.table {
                    let listed = if !insert.columns.is_empty() {
                        ColumnUse::Named(insert.columns.iter().map(|c| c.value.clone()).collect())
                    } else if !insert.assignments.is_empty() {
                        // INSERT … SET a = 1, b = 2.
                        let set = assigned(&insert.assignments).map(|(_, c)| c).collect();
                        ColumnUse::Named(set)
                    } else {
                        ColumnUse::Every
                    };
                    self.columns(name, Privileges::INSERT, listed);
                    if insert.replace_into {
                        self.table(name, Privileges::DELETE);
                    }
                    if let Some(ast::OnInsert::DuplicateKeyUpdate(assignments)) = &insert.on {
                        let set = assigned(assignments).map(|(_, c)| c).collect();
                        self.columns(name, Privileges::UPDATE, ColumnUse::Named(set));
                    }
                }
                if let Some(source) = &insert.source {
                    self.reads(source.as_ref(), &[]);
                }
            }
            Statement::Update {
                table, assignments, ..
            } => {
                let Some(first) = relation_name(&table.relation) else {
                    return self.reads(tree, &[]);
                };
                // Each assignment's table: its qualifier's (a name or alias), or the first.
                let factors = std::slice::from_ref(table);
                let mut targets: Vec<(ObjectName, Vec<String>)> = Vec::new();
                for (qualifier, column) in assigned(assignments) {
                    let target = match qualifier {
                        Some(q) => unalias(&q, factors),
                        None => first.clone(),
                    };
                    match targets.iter_mut().find(|(t, _)| *t == target) {
                        Some((_, columns)) => columns.push(column),
                        None => targets.push((target, vec![column])),
                    }
                }
                for (target, columns) in &targets {
                    self.columns(
                        target,
                        Privileges::UPDATE,
                        ColumnUse::Named(columns.clone()),
                    );
                }
                let targets: Vec<ObjectName> = targets.into_iter().map(|(t, _)| t).collect();
                self.reads(tree, &targets);
            }
            Statement::Delete(delete) => {
                let from = match &delete.from {
                    ast::FromTable::WithFromKeyword(from)
                    | ast::FromTable::WithoutKeyword(from) => from,
                };
                let targets: Vec<ObjectName> = if delete.tables.is_empty() {
                    from.first()
                        .and_then(|t| relation_name(&t.relation))
                        .cloned()
                        .into_iter()
                        .collect()
                } else {
                    delete
                        .tables
                        .iter()
                        .map(|name| unalias(name, from))
                        .collect()
                };
                for target in &targets {
                    self.table(target, Privileges::DELETE);
                }
                self.reads(tree, &targets);
            }
            Statement::CreateTable(create) => {
                self.table(&create.name, Privileges::CREATE);
                if let Some(query) = &create.query {
                    self.table(&create.name, Privileges::INSERT);
                    self.reads(query.as_ref(), &[]);
                }
                if let Some(
                    ast::CreateTableLikeKind::Plain(like)
                    | ast::CreateTableLikeKind::Parenthesized(like),
                ) = &create.like
                {
                    self.table(&like.name, Privileges::SELECT);
                }
            }
            Statement::CreateView {
                name,
                query,
                or_replace,
                ..
            } => {
                let mut privileges = Privileges::CREATE_VIEW;
                if *or_replace {
                    privileges = privileges.union(Privileges::DROP);
                }
                self.table(name, privileges);
                self.reads(query.as_ref(), &[]);
            }
            Statement::AlterView { name, query, .. } => {
                self.table(name, Privileges::CREATE_VIEW.union(Privileges::DROP));
                self.reads(query.as_ref(), &[]);
            }
            Statement::CreateIndex(create) => self.table(&create.table_name, Privileges::INDEX),
            Statement::Drop {
                object_type,
                names,
                table,
                ..
            } => match object_type {
                ast::ObjectType::Table | ast::ObjectType::View => {
                    for name in names {
                        self.table(name, Privileges::DROP);
                    }
                }
                ast::ObjectType::Database | ast::ObjectType::Schema => {
                    for name in names {
                        self.database(&name.to_string().replace('`', ""), Privileges::DROP);
                    }
                }
                ast::ObjectType::Index => {
                    if let Some(table) = table {
                        self.table(table, Privileges::INDEX);
                    }
                }
                _ => {}
            },
            Statement::AlterTable {
                name, operations, ..
            } => {
                self.table(name, Privileges::ALTER);
                for operation in operations {
                    if let ast::AlterTableOperation::RenameTable { table_name } = operation {
                        let new = match table_name {
                            ast::RenameTableNameKind::As(n) | ast::RenameTableNameKind::To(n) => n,
                        };
                        self.table(name, Privileges::DROP);
                        self.table(new, Privileges::CREATE.union(Privileges::INSERT));
                    }
                }
            }
            Statement::RenameTable(renames) => {
                for rename in renames {
                    self.table(&rename.old_name, Privileges::ALTER.union(Privileges::DROP));
                    self.table(
                        &rename.new_name,
                        Privileges::CREATE.union(Privileges::INSERT),
                    );
                }
            }
            Statement::Truncate { table_names, .. } => {
                for target in table_names {
                    self.table(&target.name, Privileges::DROP);
                }
            }
            Statement::CreateDatabase { db_name, .. } => {
                self.database(&db_name.to_string().replace('`', ""), Privileges::CREATE)
            }
            Statement::CreateSchema { schema_name, .. } => {
                let name = schema_name.to_string().replace('`', "");
                self.database(&name, Privileges::CREATE)
            }
            Statement::ShowCreate { obj_name, .. } => {
                if let Some((database, table)) = self.resolve(obj_name) {
                    self.needs.push(Need::AnyOnTable { database, table });
                }
            }
            Statement::ShowColumns { show_options, .. } => {
                if let Some(ast::ShowStatementIn {
                    parent_name: Some(name),
                    ..
                }) = &show_options.show_in
                {
                    if let Some((database, table)) = self.resolve(name) {
                        self.needs.push(Need::AnyOnTable { database, table });
                    }
                }
            }
            Statement::ExplainTable { table_name, .. } => {
                if let Some((database, table)) = self.resolve(table_name) {
                    self.needs.push(Need::AnyOnTable { database, table });
                }
            }
            Statement::Explain { statement, .. } => self.statement(statement),
            Statement::Use(use_) => {
                let name = match use_ {
                    ast::Use::Object(name) | ast::Use::Database(name) | ast::Use::Schema(name) => {
                        Some(name)
                    }
                    _ => None,
                };
                if let Some(name) = name {
                    self.needs
                        .push(Need::AnyOnDatabase(name.to_string().replace('`', "")));
                }
            }
            Statement::Set(set) => {
                if sets_global(set) {
                    self.needs.push(Need::Global(Privileges::SUPER));
                }
                self.reads(tree, &[]);
            }
            Statement::Analyze { table_name, .. } => {
                self.table(table_name, Privileges::SELECT.union(Privileges::INSERT))
            }
            Statement::Flush { .. } => self.needs.push(Need::Global(Privileges::RELOAD)),
            Statement::LockTables { tables } => {
                for table in tables {
                    self.table(
                        &ObjectName::from(vec![table.table.clone()]),
                        Privileges::LOCK_TABLES.union(Privileges::SELECT),
                    );
                }
            }
            _ => {}
        }
    }
}

/// Whether a SET assigns a global variable.
fn sets_global(set: &ast::Set) -> bool {
    let global =
        |scope: &Option<ast::ContextModifier>| matches!(scope, Some(ast::ContextModifier::Global));
    let global_name = |name: &ObjectName| {
        let text = name.to_string().to_ascii_lowercase();
        text.starts_with("@@global.") || text.starts_with("global.")
    };
    match set {
        ast::Set::SingleAssignment {
            scope, variable, ..
        } => global(scope) || global_name(variable),
        ast::Set::MultipleAssignments { assignments } => assignments
            .iter()
            .any(|a| global(&a.scope) || global_name(&a.name)),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser;

    fn needs_of(sql: &str) -> Vec<Need> {
        let parsed = parser::parse(sql).unwrap();
        needs(&parsed.statements[0], Some("shop"))
    }

    fn on(privileges: Privileges, database: &str, table: &str) -> Need {
        Need::Table {
            privileges,
            database: database.into(),
            table: table.into(),
        }
    }

    fn read(database: &str, table: &str, columns: &[&str]) -> Need {
        uses(Privileges::SELECT, database, table, columns)
    }

    fn uses(privilege: Privileges, database: &str, table: &str, columns: &[&str]) -> Need {
        Need::Columns {
            privilege,
            database: database.into(),
            table: table.into(),
            columns: ColumnUse::Named(columns.iter().map(|c| c.to_string()).collect()),
            written: false,
        }
    }

    fn read_of_target(table: &str, columns: &[&str]) -> Need {
        match read("shop", table, columns) {
            Need::Columns {
                privilege,
                database,
                table,
                columns,
                ..
            } => Need::Columns {
                privilege,
                database,
                table,
                columns,
                written: true,
            },
            other => other,
        }
    }

    fn every(privilege: Privileges, table: &str) -> Need {
        Need::Columns {
            privilege,
            database: "shop".into(),
            table: table.into(),
            columns: ColumnUse::Every,
            written: false,
        }
    }

    #[test]
    fn statements_need_what_mysql_asks_for() {
        assert_eq!(
            needs_of(
                "WITH c AS (SELECT 1) SELECT * FROM t JOIN other.u ON 1 WHERE a IN (SELECT b FROM v) AND EXISTS (SELECT 1 FROM c)"
            ),
            vec![
                every(Privileges::SELECT, "t"),
                Need::Columns {
                    privilege: Privileges::SELECT,
                    database: "other".into(),
                    table: "u".into(),
                    columns: ColumnUse::Every,
                    written: false,
                },
                read("shop", "v", &["a", "b"]),
            ]
        );
        assert_eq!(
            needs_of("SELECT x.a, u.b, COUNT(*) FROM t AS x, u WHERE c = 1"),
            vec![
                read("shop", "t", &["a", "c"]),
                read("shop", "u", &["b", "c"])
            ]
        );
        assert_eq!(
            needs_of("SELECT x.*, u.b FROM t AS x, u"),
            vec![every(Privileges::SELECT, "t"), read("shop", "u", &["b"])]
        );
        assert_eq!(
            needs_of("INSERT INTO t SELECT * FROM u ON DUPLICATE KEY UPDATE a = 1"),
            vec![
                every(Privileges::INSERT, "t"),
                uses(Privileges::UPDATE, "shop", "t", &["a"]),
                every(Privileges::SELECT, "u"),
            ]
        );
        assert_eq!(
            needs_of("REPLACE INTO t (a, b) VALUES (1, 2)"),
            vec![
                uses(Privileges::INSERT, "shop", "t", &["a", "b"]),
                on(Privileges::DELETE, "shop", "t")
            ]
        );
        assert_eq!(
            needs_of("UPDATE t SET a = (SELECT MAX(b) FROM u) WHERE c = 1"),
            vec![
                uses(Privileges::UPDATE, "shop", "t", &["a"]),
                read_of_target("t", &["b", "c"]),
                read("shop", "u", &["b", "c"]),
            ]
        );
        assert_eq!(
            needs_of("UPDATE t AS x JOIN u ON x.id = u.id SET x.a = 1, u.b = 2"),
            vec![
                uses(Privileges::UPDATE, "shop", "t", &["a"]),
                uses(Privileges::UPDATE, "shop", "u", &["b"]),
                read_of_target("t", &["id"]),
                read_of_target("u", &["id"]),
            ]
        );
        assert_eq!(
            needs_of("UPDATE t SET a = 1"),
            vec![uses(Privileges::UPDATE, "shop", "t", &["a"])]
        );
        assert_eq!(
            needs_of("DELETE x FROM t AS x JOIN u ON x.a = u.a"),
            vec![
                on(Privileges::DELETE, "shop", "t"),
                read_of_target("t", &["a"]),
                read("shop", "u", &["a"]),
            ]
        );
        assert_eq!(
            needs_of("SELECT * FROM information_schema.tables, dual"),
            vec![Need::Columns {
                privilege: Privileges::SELECT,
                database: "information_schema".into(),
                table: "tables".into(),
                columns: ColumnUse::Every,
                written: false,
            }]
        );
        assert_eq!(
            needs_of("DROP DATABASE other"),
            vec![Need::Database {
                privileges: Privileges::DROP,
                database: "other".into()
            }]
        );
        assert_eq!(
            needs_of("SET GLOBAL max_connections = 10"),
            vec![Need::Global(Privileges::SUPER)]
        );
        assert!(needs_of("SET @a = 1").is_empty());
        assert_eq!(
            needs_of("CREATE INDEX i ON t (a)"),
            vec![on(Privileges::INDEX, "shop", "t")]
        );
    }

    /// Columns `a`, `b`, `c` and `id` for every table.
    fn four_columns(_: &str, _: &str) -> Option<Vec<String>> {
        Some(["id", "a", "b", "c"].map(String::from).to_vec())
    }

    #[test]
    fn the_check_answers_with_mysqls_errors() {
        let mut bob = Account::new(&Identity::new("bob", "%"));
        bob.databases.insert("shop".into(), Privileges::SELECT);
        let check = |account: &Account, sql: &str| check(account, &needs_of(sql), &four_columns);
        assert!(check(&bob, "SELECT * FROM t").is_ok());
        let denied = check(&bob, "INSERT INTO t VALUES (1)").unwrap_err();
        assert_eq!(denied.code(), 1142);
        assert!(denied
            .to_string()
            .contains("INSERT command denied to user 'bob'@'%' for table 't'"));
        assert_eq!(check(&bob, "DROP DATABASE shop").unwrap_err().code(), 1044);
        assert_eq!(
            check(&bob, "SET GLOBAL max_connections = 1")
                .unwrap_err()
                .code(),
            1227
        );
        assert!(check(&bob, "SELECT * FROM information_schema.tables").is_ok());
    }

    #[test]
    fn grants_on_columns_admit_only_those_columns() {
        let mut eve = Account::new(&Identity::new("eve", "%"));
        let columns = eve
            .columns
            .entry("shop".into())
            .or_default()
            .entry("t".into())
            .or_default();
        columns.insert("id".into(), Privileges::SELECT);
        columns.insert("a".into(), Privileges::SELECT.union(Privileges::UPDATE));
        let check = |sql: &str| check(&eve, &needs_of(sql), &four_columns);
        assert!(check("SELECT id, a FROM t WHERE a > 1 ORDER BY id").is_ok());
        assert!(check("SELECT COUNT(*) FROM t").is_ok());
        assert!(check("UPDATE t SET a = a + 1 WHERE id = 7").is_ok());
        let denied = check("SELECT id, b FROM t").unwrap_err();
        assert_eq!(denied.code(), 1143);
        assert!(
            denied
                .to_string()
                .contains("SELECT command denied to user 'eve'@'%' for column 'b' in table 't'"),
            "{denied}"
        );
        // All the columns, one of them not granted: the table is refused, as in MySQL.
        assert_eq!(check("SELECT * FROM t").unwrap_err().code(), 1142);
        assert_eq!(check("SELECT x.c FROM t AS x").unwrap_err().code(), 1143);
        // A name that is not a column of the table (an alias of the select list) is no use,
        // nor one in ORDER BY or HAVING that names the select list's column by its alias.
        assert!(check("SELECT a AS z FROM t ORDER BY z").is_ok());
        assert!(check("SELECT a AS c FROM t ORDER BY c").is_ok());
        assert!(check("SELECT a AS c FROM t GROUP BY a HAVING c > 1").is_ok());
        assert_eq!(
            check("SELECT a AS c FROM t WHERE c > 1")
                .unwrap_err()
                .code(),
            1143
        );
        assert_eq!(
            check("SELECT c AS a FROM t ORDER BY a").unwrap_err().code(),
            1143
        );
        let denied = check("UPDATE t SET b = 1 WHERE id = 7").unwrap_err();
        assert!(
            denied.to_string().contains("UPDATE command denied"),
            "{denied}"
        );
        assert_eq!(denied.code(), 1143);
        assert_eq!(check("UPDATE t SET a = c").unwrap_err().code(), 1143);
        // Nothing on another table, and nothing to insert with.
        assert_eq!(check("SELECT a FROM u").unwrap_err().code(), 1142);
        assert_eq!(
            check("INSERT INTO t (a) VALUES (1)").unwrap_err().code(),
            1142
        );
        // A write's own privilege reaches the table: reading a column it may not read is
        // 1143, as in MySQL.
        let mut writer = Account::new(&Identity::new("w", "%"));
        writer
            .tables
            .entry("shop".into())
            .or_default()
            .insert("t".into(), Privileges::UPDATE.union(Privileges::DELETE));
        let check = |sql: &str| super::check(&writer, &needs_of(sql), &four_columns);
        assert!(check("UPDATE t SET a = 1").is_ok());
        assert!(check("DELETE FROM t").is_ok());
        let denied = check("DELETE FROM t WHERE id = 1").unwrap_err();
        assert_eq!(denied.code(), 1143);
        assert!(denied.to_string().contains("for column 'id'"), "{denied}");
    }
}
