//! What each statement needs of its account, and the check made before it runs.
//!
//! [`needs`] reads a parsed statement and lists the privileges it needs on which objects,
//! as MySQL asks for them: SELECT on every table or view a statement reads, INSERT / UPDATE /
//! DELETE on what it writes, CREATE / DROP / ALTER / INDEX / CREATE VIEW on what DDL changes,
//! SUPER for `SET GLOBAL`. [`check`] holds them against the account's grants and answers with
//! MySQL's error for the first that is missing: 1142 for a table, 1044 for a database, 1227
//! for a global privilege. An account with every global privilege skips the reading.
//!
//! Column-level grants are not kept, so an UPDATE needs SELECT on the tables it only reads,
//! and none on its target's columns in WHERE (MySQL would ask for SELECT on those columns).

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{self, ObjectName, Statement, TableFactor, TableWithJoins, Visit, Visitor};

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

/// Databases whose tables every account may read (their rows are filtered instead).
fn is_open_database(database: &str) -> bool {
    database.eq_ignore_ascii_case("information_schema")
        || database.eq_ignore_ascii_case("performance_schema")
}

/// Checks `needs` against `account`; the first missing one is MySQL's error.
pub fn check(account: &Account, needs: &[Need]) -> Result<()> {
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
                out.reads(e, &HashSet::new());
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

    /// SELECT on every table or view `node` reads, but `skip` (targets named once) and the
    /// names of its common table expressions.
    fn reads<V: Visit>(&mut self, node: &V, skip: &HashSet<String>) {
        let mut relations = Relations::default();
        let _ = node.visit(&mut relations);
        let mut skipped = HashSet::new();
        for name in relations.tables {
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
            if skip.contains(&text) && skipped.insert(text) {
                continue;
            }
            self.table(&name, Privileges::SELECT);
        }
    }

    fn statement(&mut self, tree: &Statement) {
        match tree {
            Statement::Query(_) => self.reads(tree, &HashSet::new()),
            Statement::Insert(insert) => {
                let mut privileges = Privileges::INSERT;
                if insert.replace_into {
                    privileges = privileges.union(Privileges::DELETE);
                }
                if insert.on.is_some() {
                    privileges = privileges.union(Privileges::UPDATE);
                }
                if let ast::TableObject::TableName(name) = &insert.table {
                    self.table(name, privileges);
                }
                if let Some(source) = &insert.source {
                    self.reads(source.as_ref(), &HashSet::new());
                }
            }
            Statement::Update { table, .. } => {
                let target = relation_name(&table.relation);
                if let Some(target) = target {
                    self.table(target, Privileges::UPDATE);
                }
                self.reads(tree, &target.map(|t| t.to_string()).into_iter().collect());
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
                self.reads(tree, &targets.iter().map(|t| t.to_string()).collect());
            }
            Statement::CreateTable(create) => {
                self.table(&create.name, Privileges::CREATE);
                if let Some(query) = &create.query {
                    self.table(&create.name, Privileges::INSERT);
                    self.reads(query.as_ref(), &HashSet::new());
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
                self.reads(query.as_ref(), &HashSet::new());
            }
            Statement::AlterView { name, query, .. } => {
                self.table(name, Privileges::CREATE_VIEW.union(Privileges::DROP));
                self.reads(query.as_ref(), &HashSet::new());
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
                self.reads(tree, &HashSet::new());
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

/// The table a factor names, if it names one.
fn relation_name(factor: &TableFactor) -> Option<&ObjectName> {
    match factor {
        TableFactor::Table { name, .. } => Some(name),
        _ => None,
    }
}

/// The table behind a multiple-table DELETE's target, which may be an alias of `from`.
fn unalias(name: &ObjectName, from: &[TableWithJoins]) -> ObjectName {
    let text = name.to_string();
    let factors = from
        .iter()
        .flat_map(|t| std::iter::once(&t.relation).chain(t.joins.iter().map(|j| &j.relation)));
    for factor in factors {
        if let TableFactor::Table {
            name: table,
            alias: Some(alias),
            ..
        } = factor
        {
            if alias.name.value.eq_ignore_ascii_case(&text) {
                return table.clone();
            }
        }
    }
    name.clone()
}

/// The tables a statement reads and the names of its common table expressions.
#[derive(Default)]
struct Relations {
    tables: Vec<ObjectName>,
    ctes: HashSet<String>,
}

impl Visitor for Relations {
    type Break = ();

    fn pre_visit_query(&mut self, query: &ast::Query) -> ControlFlow<()> {
        if let Some(with) = &query.with {
            for cte in &with.cte_tables {
                self.ctes.insert(cte.alias.name.value.to_ascii_lowercase());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_relation(&mut self, relation: &ObjectName) -> ControlFlow<()> {
        self.tables.push(relation.clone());
        ControlFlow::Continue(())
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

    #[test]
    fn statements_need_what_mysql_asks_for() {
        assert_eq!(
            needs_of(
                "WITH c AS (SELECT 1) SELECT * FROM t JOIN other.u ON 1 WHERE a IN (SELECT b FROM v) AND EXISTS (SELECT 1 FROM c)"
            ),
            vec![
                on(Privileges::SELECT, "shop", "t"),
                on(Privileges::SELECT, "other", "u"),
                on(Privileges::SELECT, "shop", "v"),
            ]
        );
        assert_eq!(
            needs_of("INSERT INTO t SELECT * FROM u ON DUPLICATE KEY UPDATE a = 1"),
            vec![
                on(Privileges::INSERT.union(Privileges::UPDATE), "shop", "t"),
                on(Privileges::SELECT, "shop", "u"),
            ]
        );
        assert_eq!(
            needs_of("REPLACE INTO t VALUES (1)"),
            vec![on(
                Privileges::INSERT.union(Privileges::DELETE),
                "shop",
                "t"
            )]
        );
        assert_eq!(
            needs_of("UPDATE t SET a = (SELECT MAX(b) FROM u) WHERE c = 1"),
            vec![
                on(Privileges::UPDATE, "shop", "t"),
                on(Privileges::SELECT, "shop", "u"),
            ]
        );
        assert_eq!(
            needs_of("DELETE x FROM t AS x JOIN u ON x.a = u.a"),
            vec![
                on(Privileges::DELETE, "shop", "t"),
                on(Privileges::SELECT, "shop", "u"),
            ]
        );
        assert_eq!(
            needs_of("SELECT * FROM information_schema.tables, dual"),
            vec![on(Privileges::SELECT, "information_schema", "tables")]
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

    #[test]
    fn the_check_answers_with_mysqls_errors() {
        let mut bob = Account::new(&Identity::new("bob", "%"));
        bob.databases.insert("shop".into(), Privileges::SELECT);
        assert!(check(&bob, &needs_of("SELECT * FROM t")).is_ok());
        let denied = check(&bob, &needs_of("INSERT INTO t VALUES (1)")).unwrap_err();
        assert_eq!(denied.code(), 1142);
        assert!(denied
            .to_string()
            .contains("INSERT command denied to user 'bob'@'%' for table 't'"));
        assert_eq!(
            check(&bob, &needs_of("DROP DATABASE shop"))
                .unwrap_err()
                .code(),
            1044
        );
        assert_eq!(
            check(&bob, &needs_of("SET GLOBAL max_connections = 1"))
                .unwrap_err()
                .code(),
            1227
        );
        assert!(check(&bob, &needs_of("SELECT * FROM information_schema.tables")).is_ok());
    }
}
