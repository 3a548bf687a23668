//! information_schema's USER_PRIVILEGES, SCHEMA_PRIVILEGES, TABLE_PRIVILEGES and
//! COLUMN_PRIVILEGES: each account's grants, one row per privilege and level, as MySQL lists
//! them (`'bob'@'%'`, `def`, …, `SELECT`, `NO`). An account sees its own rows; one that may
//! read `mysql.user` sees every account's (as the whole catalog does).

use strata_codec::Datum;

use super::{Account, Privileges};
use crate::catalog::Schema;
use crate::infoschema::Kind;

/// The level of one of the four tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Level {
    User,
    Schema,
    Table,
    Column,
}

impl Level {
    /// The table of `name` (upper case), if it is one of the four.
    pub(crate) fn of_table(name: &str) -> Option<Level> {
        Some(match name {
            "USER_PRIVILEGES" => Level::User,
            "SCHEMA_PRIVILEGES" => Level::Schema,
            "TABLE_PRIVILEGES" => Level::Table,
            "COLUMN_PRIVILEGES" => Level::Column,
            _ => return None,
        })
    }

    /// The table's columns: GRANTEE, TABLE_CATALOG, the names of the level, PRIVILEGE_TYPE and
    /// IS_GRANTABLE.
    pub(crate) fn columns(self) -> &'static [(&'static str, Kind)] {
        const USER: &[(&str, Kind)] = &[
            ("GRANTEE", Kind::Text),
            ("TABLE_CATALOG", Kind::Text),
            ("PRIVILEGE_TYPE", Kind::Text),
            ("IS_GRANTABLE", Kind::Text),
        ];
        const SCHEMA: &[(&str, Kind)] = &[
            ("GRANTEE", Kind::Text),
            ("TABLE_CATALOG", Kind::Text),
            ("TABLE_SCHEMA", Kind::Text),
            ("PRIVILEGE_TYPE", Kind::Text),
            ("IS_GRANTABLE", Kind::Text),
        ];
        const TABLE: &[(&str, Kind)] = &[
            ("GRANTEE", Kind::Text),
            ("TABLE_CATALOG", Kind::Text),
            ("TABLE_SCHEMA", Kind::Text),
            ("TABLE_NAME", Kind::Text),
            ("PRIVILEGE_TYPE", Kind::Text),
            ("IS_GRANTABLE", Kind::Text),
        ];
        const COLUMN: &[(&str, Kind)] = &[
            ("GRANTEE", Kind::Text),
            ("TABLE_CATALOG", Kind::Text),
            ("TABLE_SCHEMA", Kind::Text),
            ("TABLE_NAME", Kind::Text),
            ("COLUMN_NAME", Kind::Text),
            ("PRIVILEGE_TYPE", Kind::Text),
            ("IS_GRANTABLE", Kind::Text),
        ];
        match self {
            Level::User => USER,
            Level::Schema => SCHEMA,
            Level::Table => TABLE,
            Level::Column => COLUMN,
        }
    }

    /// The rows `schema`'s viewer may see.
    pub(crate) fn rows(self, schema: &Schema) -> Vec<Vec<Datum>> {
        let viewer = schema.viewer.as_deref();
        let sees_all = viewer.is_none_or(|v| {
            v.privileges_on("mysql", Some("user"))
                .contains(Privileges::SELECT)
        });
        let mut out = Vec::new();
        for account in schema.accounts.iter() {
            if sees_all || viewer.is_some_and(|v| v.identity() == account.identity()) {
                self.rows_of(account, &mut out);
            }
        }
        out
    }

    fn rows_of(self, account: &Account, out: &mut Vec<Vec<Datum>>) {
        let grantee = account.identity().to_string();
        let mut push = |names: &[&str], privileges: Vec<&str>, grantable: bool| {
            for privilege in privileges {
                let mut row = vec![text(&grantee), text("def")];
                row.extend(names.iter().map(text));
                row.extend([text(privilege), text(if grantable { "YES" } else { "NO" })]);
                out.push(row);
            }
        };
        let grantable = |p: Privileges| p.contains(Privileges::GRANT_OPTION);
        match self {
            Level::User => {
                // An account without global privileges has one row: USAGE.
                let held = account.global;
                let names = match held.plain().names() {
                    none if none.is_empty() => vec!["USAGE"],
                    names => names,
                };
                push(&[], names, grantable(held));
            }
            Level::Schema => {
                for (database, held) in &account.databases {
                    push(&[database], held.plain().names(), grantable(*held));
                }
            }
            Level::Table => {
                for (database, tables) in &account.tables {
                    for (table, held) in tables {
                        push(&[database, table], held.plain().names(), grantable(*held));
                    }
                }
            }
            Level::Column => {
                for (database, tables) in &account.columns {
                    for (table, columns) in tables {
                        // A column's privilege is grantable with the table's GRANT OPTION.
                        let on_table = account
                            .tables
                            .get(database)
                            .and_then(|t| t.get(table))
                            .is_some_and(|p| grantable(*p));
                        for (column, held) in columns {
                            push(&[database, table, column], held.plain().names(), on_table);
                        }
                    }
                }
            }
        }
    }
}

fn text(s: impl AsRef<str>) -> Datum {
    Datum::Bytes(s.as_ref().as_bytes().to_vec())
}
