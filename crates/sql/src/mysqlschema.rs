//! MySQL's grant tables as views of the accounts: `mysql.user`, `mysql.db`,
//! `mysql.tables_priv`, `mysql.columns_priv`, `mysql.role_edges` and `mysql.default_roles`,
//! with MySQL 8's columns,
//! for the SELECTs that administration tools and scripts send. They are read-only: accounts
//! change through CREATE USER, GRANT and the like. Reading them takes SELECT on them, as in
//! MySQL (an account with global SELECT has it).

use std::collections::BTreeMap;
use std::sync::Arc;

use sqlparser::ast;

use crate::account::{Account, Privileges};
use crate::catalog::{Schema, TableDef};
use crate::error::{self, Error, Result};
use crate::infoschema::{Kind, MemoryRows};
use strata_codec::Datum;

/// The database of the grant tables.
pub const NAME: &str = "mysql";

/// The grant tables, by their (lower-case) names.
const TABLES: &[&str] = &[
    "user",
    "db",
    "tables_priv",
    "columns_priv",
    "role_edges",
    "default_roles",
];

/// Whether `database`.`table` is one of the grant tables.
pub fn is_grant_table(database: &str, table: &str) -> bool {
    database.eq_ignore_ascii_case(NAME) && TABLES.iter().any(|t| t.eq_ignore_ascii_case(table))
}

/// The error of a write to a grant table.
pub fn read_only(table: &str) -> Error {
    Error::new(1036, "HY000", format!("Table '{table}' is read only"))
}

/// The grant table a FROM item names, if it names one, with its alias.
pub fn resolve(
    factor: &ast::TableFactor,
    database: Option<&str>,
) -> Option<(String, Option<String>)> {
    let (db, table, alias) = crate::infoschema::named_table(factor, database)?;
    is_grant_table(&db, &table).then_some((table, alias))
}

/// The definition and current rows of grant table `name`.
pub fn table(schema: &Schema, name: &str) -> Result<(Arc<TableDef>, MemoryRows)> {
    let lower = name.to_ascii_lowercase();
    let mut accounts: Vec<&Arc<Account>> = schema.accounts.iter().collect();
    // The tables' primary keys lead with Host, then User.
    accounts.sort_by(|a, b| (&a.host, &a.user).cmp(&(&b.host, &b.user)));
    let (columns, rows): (Vec<(String, Kind)>, Vec<Vec<Datum>>) = match lower.as_str() {
        "user" => (
            user_columns(),
            accounts.iter().map(|a| user_row(a)).collect(),
        ),
        "db" => (db_columns(), db_rows(&accounts)),
        "tables_priv" => (named(TABLES_PRIV_COLUMNS), tables_priv_rows(&accounts)),
        "columns_priv" => (named(COLUMNS_PRIV_COLUMNS), columns_priv_rows(&accounts)),
        "role_edges" => (named(ROLE_EDGES_COLUMNS), role_edges_rows(&accounts)),
        "default_roles" => (named(DEFAULT_ROLES_COLUMNS), default_roles_rows(&accounts)),
        _ => return Err(error::unknown_table(NAME, name)),
    };
    let columns = columns
        .into_iter()
        .map(|(name, kind)| (name, kind.sql_type()));
    let def = TableDef::computed(NAME, &lower, columns);
    Ok((Arc::new(def), MemoryRows::new(rows)))
}

fn named(columns: &[(&str, Kind)]) -> Vec<(String, Kind)> {
    columns.iter().map(|(n, k)| (n.to_string(), *k)).collect()
}

/// `mysql.user`'s privilege columns, in MySQL's order, with the privilege each shows.
const USER_PRIVILEGES: &[(&str, &str)] = &[
    ("Select_priv", "SELECT"),
    ("Insert_priv", "INSERT"),
    ("Update_priv", "UPDATE"),
    ("Delete_priv", "DELETE"),
    ("Create_priv", "CREATE"),
    ("Drop_priv", "DROP"),
    ("Reload_priv", "RELOAD"),
    ("Shutdown_priv", "SHUTDOWN"),
    ("Process_priv", "PROCESS"),
    ("File_priv", "FILE"),
    ("Grant_priv", "GRANT OPTION"),
    ("References_priv", "REFERENCES"),
    ("Index_priv", "INDEX"),
    ("Alter_priv", "ALTER"),
    ("Show_db_priv", "SHOW DATABASES"),
    ("Super_priv", "SUPER"),
    ("Create_tmp_table_priv", "CREATE TEMPORARY TABLES"),
    ("Lock_tables_priv", "LOCK TABLES"),
    ("Execute_priv", "EXECUTE"),
    ("Repl_slave_priv", "REPLICATION SLAVE"),
    ("Repl_client_priv", "REPLICATION CLIENT"),
    ("Create_view_priv", "CREATE VIEW"),
    ("Show_view_priv", "SHOW VIEW"),
    ("Create_routine_priv", "CREATE ROUTINE"),
    ("Alter_routine_priv", "ALTER ROUTINE"),
    ("Create_user_priv", "CREATE USER"),
    ("Event_priv", "EVENT"),
    ("Trigger_priv", "TRIGGER"),
    ("Create_tablespace_priv", "CREATE TABLESPACE"),
];

/// `mysql.user`'s columns after the privileges, up to the two role privileges.
const USER_ACCOUNT_COLUMNS: &[(&str, Kind)] = &[
    ("ssl_type", Kind::Text),
    ("ssl_cipher", Kind::Text),
    ("x509_issuer", Kind::Text),
    ("x509_subject", Kind::Text),
    ("max_questions", Kind::Int),
    ("max_updates", Kind::Int),
    ("max_connections", Kind::Int),
    ("max_user_connections", Kind::Int),
    ("plugin", Kind::Text),
    ("authentication_string", Kind::Text),
    ("password_expired", Kind::Text),
    ("password_last_changed", Kind::Text),
    ("password_lifetime", Kind::Int),
    ("account_locked", Kind::Text),
];

/// `mysql.user`'s last columns, after the role privileges.
const USER_PASSWORD_COLUMNS: &[(&str, Kind)] = &[
    ("Password_reuse_history", Kind::Int),
    ("Password_reuse_time", Kind::Int),
    ("Password_require_current", Kind::Text),
    ("User_attributes", Kind::Text),
];

const USER_ROLE_PRIVILEGES: &[(&str, &str)] = &[
    ("Create_role_priv", "CREATE ROLE"),
    ("Drop_role_priv", "DROP ROLE"),
];

fn user_columns() -> Vec<(String, Kind)> {
    let privilege = |(name, _): &(&str, &str)| (name.to_string(), Kind::Text);
    [("Host", Kind::Text), ("User", Kind::Text)]
        .iter()
        .map(|(n, k)| (n.to_string(), *k))
        .chain(USER_PRIVILEGES.iter().map(privilege))
        .chain(named(USER_ACCOUNT_COLUMNS))
        .chain(USER_ROLE_PRIVILEGES.iter().map(privilege))
        .chain(named(USER_PASSWORD_COLUMNS))
        .collect()
}

/// 'Y' when `held` holds the privilege `name`, else 'N'.
fn flag(held: Privileges, name: &str) -> Datum {
    let has = Privileges::named(name).is_some_and(|p| held.contains(p));
    text(if has { "Y" } else { "N" })
}

fn text(s: impl AsRef<str>) -> Datum {
    Datum::Bytes(s.as_ref().as_bytes().to_vec())
}

fn user_row(account: &Account) -> Vec<Datum> {
    let mut row = vec![text(&account.host), text(&account.user)];
    row.extend(USER_PRIVILEGES.iter().map(|(_, p)| flag(account.global, p)));
    row.extend([
        text(if !account.require_specified.is_empty() {
            "SPECIFIED"
        } else if account.require_x509 {
            "X509"
        } else if account.require_secure {
            "ANY"
        } else {
            ""
        }),
        text(account.require_specified.cipher.as_deref().unwrap_or("")),
        text(account.require_specified.issuer.as_deref().unwrap_or("")),
        text(account.require_specified.subject.as_deref().unwrap_or("")),
        Datum::UInt(0),
        Datum::UInt(0),
        Datum::UInt(0),
        Datum::UInt(0),
        text(&account.plugin),
        text(&account.auth_string),
        text(if account.password_expired { "Y" } else { "N" }),
        Datum::Null,
        Datum::Null,
        text(if account.locked { "Y" } else { "N" }),
    ]);
    row.extend(
        USER_ROLE_PRIVILEGES
            .iter()
            .map(|(_, p)| flag(account.global, p)),
    );
    // User_attributes holds the failed-login locking, as MySQL writes it.
    let locking = account.locking;
    let attributes = if locking.attempts > 0 || locking.lock_days != 0 {
        text(format!(
            "{{\"Password_locking\": {{\"failed_login_attempts\": {}, \"password_lock_time_days\": {}}}}}",
            locking.attempts, locking.lock_days
        ))
    } else {
        Datum::Null
    };
    row.extend([Datum::Null, Datum::Null, Datum::Null, attributes]);
    row
}

/// `mysql.db`'s privilege columns, in MySQL's order.
const DB_PRIVILEGES: &[(&str, &str)] = &[
    ("Select_priv", "SELECT"),
    ("Insert_priv", "INSERT"),
    ("Update_priv", "UPDATE"),
    ("Delete_priv", "DELETE"),
    ("Create_priv", "CREATE"),
    ("Drop_priv", "DROP"),
    ("Grant_priv", "GRANT OPTION"),
    ("References_priv", "REFERENCES"),
    ("Index_priv", "INDEX"),
    ("Alter_priv", "ALTER"),
    ("Create_tmp_table_priv", "CREATE TEMPORARY TABLES"),
    ("Lock_tables_priv", "LOCK TABLES"),
    ("Create_view_priv", "CREATE VIEW"),
    ("Show_view_priv", "SHOW VIEW"),
    ("Create_routine_priv", "CREATE ROUTINE"),
    ("Alter_routine_priv", "ALTER ROUTINE"),
    ("Execute_priv", "EXECUTE"),
    ("Event_priv", "EVENT"),
    ("Trigger_priv", "TRIGGER"),
];

fn db_columns() -> Vec<(String, Kind)> {
    ["Host", "Db", "User"]
        .iter()
        .map(|n| (n.to_string(), Kind::Text))
        .chain(
            DB_PRIVILEGES
                .iter()
                .map(|(n, _)| (n.to_string(), Kind::Text)),
        )
        .collect()
}

fn db_rows(accounts: &[&Arc<Account>]) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for account in accounts {
        for (database, held) in &account.databases {
            let mut row = vec![text(&account.host), text(database), text(&account.user)];
            row.extend(DB_PRIVILEGES.iter().map(|(_, p)| flag(*held, p)));
            rows.push(row);
        }
    }
    rows
}

const TABLES_PRIV_COLUMNS: &[(&str, Kind)] = &[
    ("Host", Kind::Text),
    ("Db", Kind::Text),
    ("User", Kind::Text),
    ("Table_name", Kind::Text),
    ("Grantor", Kind::Text),
    ("Timestamp", Kind::Text),
    ("Table_priv", Kind::Text),
    ("Column_priv", Kind::Text),
];

/// The privileges `Table_priv` lists, with MySQL's spelling of each.
const TABLE_PRIVILEGES: &[(&str, &str)] = &[
    ("Select", "SELECT"),
    ("Insert", "INSERT"),
    ("Update", "UPDATE"),
    ("Delete", "DELETE"),
    ("Create", "CREATE"),
    ("Drop", "DROP"),
    ("Grant", "GRANT OPTION"),
    ("References", "REFERENCES"),
    ("Index", "INDEX"),
    ("Alter", "ALTER"),
    ("Create View", "CREATE VIEW"),
    ("Show view", "SHOW VIEW"),
    ("Trigger", "TRIGGER"),
];

/// The names of `held`'s privileges among `names` (MySQL's spelling, Strata's name), joined
/// with commas as MySQL's SET columns show them.
fn listed(held: Privileges, names: &[(&str, &str)]) -> String {
    let names: Vec<&str> = names
        .iter()
        .filter(|(_, p)| Privileges::named(p).is_some_and(|p| held.contains(p)))
        .map(|(name, _)| *name)
        .collect();
    names.join(",")
}

/// The privileges `Column_priv` lists.
const COLUMN_PRIVILEGES: &[(&str, &str)] = &[
    ("Select", "SELECT"),
    ("Insert", "INSERT"),
    ("Update", "UPDATE"),
    ("References", "REFERENCES"),
];

fn tables_priv_rows(accounts: &[&Arc<Account>]) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for account in accounts {
        // A table with privileges on its columns has a row too, naming their kinds.
        let mut tables: BTreeMap<(&str, &str), (Privileges, Privileges)> = BTreeMap::new();
        for (database, held) in &account.tables {
            for (table, privileges) in held {
                tables.entry((database, table)).or_default().0 = *privileges;
            }
        }
        for (database, held) in &account.columns {
            for (table, columns) in held {
                let on_columns = columns
                    .values()
                    .fold(Privileges::NONE, |all, p| all.union(*p));
                tables.entry((database, table)).or_default().1 = on_columns;
            }
        }
        for ((database, table), (on_table, on_columns)) in tables {
            rows.push(vec![
                text(&account.host),
                text(database),
                text(&account.user),
                text(table),
                text(""),
                Datum::Null,
                text(listed(on_table, TABLE_PRIVILEGES)),
                text(listed(on_columns, COLUMN_PRIVILEGES)),
            ]);
        }
    }
    rows
}

const COLUMNS_PRIV_COLUMNS: &[(&str, Kind)] = &[
    ("Host", Kind::Text),
    ("Db", Kind::Text),
    ("User", Kind::Text),
    ("Table_name", Kind::Text),
    ("Column_name", Kind::Text),
    ("Timestamp", Kind::Text),
    ("Column_priv", Kind::Text),
];

fn columns_priv_rows(accounts: &[&Arc<Account>]) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for account in accounts {
        for (database, tables) in &account.columns {
            for (table, columns) in tables {
                for (column, held) in columns {
                    rows.push(vec![
                        text(&account.host),
                        text(database),
                        text(&account.user),
                        text(table),
                        text(column),
                        Datum::Null,
                        text(listed(*held, COLUMN_PRIVILEGES)),
                    ]);
                }
            }
        }
    }
    rows
}

const ROLE_EDGES_COLUMNS: &[(&str, Kind)] = &[
    ("FROM_HOST", Kind::Text),
    ("FROM_USER", Kind::Text),
    ("TO_HOST", Kind::Text),
    ("TO_USER", Kind::Text),
    ("WITH_ADMIN_OPTION", Kind::Text),
];

fn role_edges_rows(accounts: &[&Arc<Account>]) -> Vec<Vec<Datum>> {
    // In the table's key order: the role, then the account it is granted to.
    let mut edges: Vec<[&str; 4]> = accounts
        .iter()
        .flat_map(|account| {
            account
                .roles
                .iter()
                .map(|role| [&role.host[..], &role.user, &account.host, &account.user])
        })
        .collect();
    edges.sort();
    edges
        .into_iter()
        .map(|edge| {
            let mut row: Vec<Datum> = edge.iter().map(text).collect();
            row.push(text("N"));
            row
        })
        .collect()
}

const DEFAULT_ROLES_COLUMNS: &[(&str, Kind)] = &[
    ("HOST", Kind::Text),
    ("USER", Kind::Text),
    ("DEFAULT_ROLE_HOST", Kind::Text),
    ("DEFAULT_ROLE_USER", Kind::Text),
];

fn default_roles_rows(accounts: &[&Arc<Account>]) -> Vec<Vec<Datum>> {
    let mut rows = Vec::new();
    for account in accounts {
        for role in &account.default_roles {
            rows.push(vec![
                text(&account.host),
                text(&account.user),
                text(&role.host),
                text(&role.user),
            ]);
        }
    }
    rows
}
