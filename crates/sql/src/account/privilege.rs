//! MySQL's static privileges as a set of bits, with the names GRANT reads and SHOW GRANTS
//! prints, and the levels each may be granted at.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A set of privileges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Privileges(pub u64);

/// Where a privilege may be granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scope {
    /// `ON *.*` only.
    Global,
    /// `ON *.*` or `ON db.*`.
    Database,
    /// Any level down to a table.
    Table,
}

/// Each privilege: its bit, its name, and the lowest level it may be granted at. The order is
/// MySQL's, which SHOW GRANTS follows.
const PRIVILEGES: &[(u64, &str, Scope)] = &[
    (1 << 0, "SELECT", Scope::Table),
    (1 << 1, "INSERT", Scope::Table),
    (1 << 2, "UPDATE", Scope::Table),
    (1 << 3, "DELETE", Scope::Table),
    (1 << 4, "CREATE", Scope::Table),
    (1 << 5, "DROP", Scope::Table),
    (1 << 6, "RELOAD", Scope::Global),
    (1 << 7, "SHUTDOWN", Scope::Global),
    (1 << 8, "PROCESS", Scope::Global),
    (1 << 9, "FILE", Scope::Global),
    (1 << 10, "REFERENCES", Scope::Table),
    (1 << 11, "INDEX", Scope::Table),
    (1 << 12, "ALTER", Scope::Table),
    (1 << 13, "SHOW DATABASES", Scope::Global),
    (1 << 14, "SUPER", Scope::Global),
    (1 << 15, "CREATE TEMPORARY TABLES", Scope::Database),
    (1 << 16, "LOCK TABLES", Scope::Database),
    (1 << 17, "EXECUTE", Scope::Database),
    (1 << 18, "REPLICATION SLAVE", Scope::Global),
    (1 << 19, "REPLICATION CLIENT", Scope::Global),
    (1 << 20, "CREATE VIEW", Scope::Table),
    (1 << 21, "SHOW VIEW", Scope::Table),
    (1 << 22, "CREATE ROUTINE", Scope::Database),
    (1 << 23, "ALTER ROUTINE", Scope::Database),
    (1 << 24, "CREATE USER", Scope::Global),
    (1 << 25, "EVENT", Scope::Database),
    (1 << 26, "TRIGGER", Scope::Table),
    (1 << 27, "CREATE TABLESPACE", Scope::Global),
    (1 << 28, "CREATE ROLE", Scope::Global),
    (1 << 29, "DROP ROLE", Scope::Global),
];

/// The bit of GRANT OPTION, which `ALL` does not include.
const GRANT_OPTION_BIT: u64 = 1 << 62;

impl Privileges {
    pub const NONE: Privileges = Privileges(0);
    pub const SELECT: Privileges = Privileges(1 << 0);
    pub const INSERT: Privileges = Privileges(1 << 1);
    pub const UPDATE: Privileges = Privileges(1 << 2);
    pub const DELETE: Privileges = Privileges(1 << 3);
    pub const CREATE: Privileges = Privileges(1 << 4);
    pub const DROP: Privileges = Privileges(1 << 5);
    pub const RELOAD: Privileges = Privileges(1 << 6);
    pub const SHUTDOWN: Privileges = Privileges(1 << 7);
    pub const PROCESS: Privileges = Privileges(1 << 8);
    pub const REFERENCES: Privileges = Privileges(1 << 10);
    pub const INDEX: Privileges = Privileges(1 << 11);
    pub const ALTER: Privileges = Privileges(1 << 12);
    pub const SHOW_DATABASES: Privileges = Privileges(1 << 13);
    pub const SUPER: Privileges = Privileges(1 << 14);
    pub const LOCK_TABLES: Privileges = Privileges(1 << 16);
    pub const CREATE_VIEW: Privileges = Privileges(1 << 20);
    pub const SHOW_VIEW: Privileges = Privileges(1 << 21);
    pub const CREATE_USER: Privileges = Privileges(1 << 24);
    pub const CREATE_ROLE: Privileges = Privileges(1 << 28);
    pub const DROP_ROLE: Privileges = Privileges(1 << 29);
    pub const GRANT_OPTION: Privileges = Privileges(GRANT_OPTION_BIT);

    /// Every privilege grantable at `*.*` (`ALL [PRIVILEGES]`), without GRANT OPTION.
    pub fn all_global() -> Privileges {
        Privileges(PRIVILEGES.iter().fold(0, |acc, (bit, _, _)| acc | bit))
    }

    /// Every privilege grantable at `db.*`.
    pub fn all_database() -> Privileges {
        Privileges(
            PRIVILEGES
                .iter()
                .filter(|(_, _, scope)| *scope != Scope::Global)
                .fold(0, |acc, (bit, _, _)| acc | bit),
        )
    }

    /// The privileges grantable on columns: SELECT, INSERT, UPDATE and REFERENCES.
    pub fn all_column() -> Privileges {
        Privileges::SELECT
            .union(Privileges::INSERT)
            .union(Privileges::UPDATE)
            .union(Privileges::REFERENCES)
    }

    /// Every privilege grantable at `db.table`.
    pub fn all_table() -> Privileges {
        Privileges(
            PRIVILEGES
                .iter()
                .filter(|(_, _, scope)| *scope == Scope::Table)
                .fold(0, |acc, (bit, _, _)| acc | bit),
        )
    }

    /// The privilege named `name` (`GRANT OPTION` included), as GRANT spells it.
    pub fn named(name: &str) -> Option<Privileges> {
        if name.eq_ignore_ascii_case("GRANT OPTION") {
            return Some(Privileges::GRANT_OPTION);
        }
        PRIVILEGES
            .iter()
            .find(|(_, n, _)| n.eq_ignore_ascii_case(name))
            .map(|(bit, _, _)| Privileges(*bit))
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    pub fn contains(self, other: Privileges) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn intersects(self, other: Privileges) -> bool {
        self.0 & other.0 != 0
    }

    pub fn union(self, other: Privileges) -> Privileges {
        Privileges(self.0 | other.0)
    }

    pub fn without(self, other: Privileges) -> Privileges {
        Privileges(self.0 & !other.0)
    }

    pub fn intersection(self, other: Privileges) -> Privileges {
        Privileges(self.0 & other.0)
    }

    /// The list SHOW FULL COLUMNS and information_schema.COLUMNS print: the names in lower
    /// case, comma-separated (`select,insert,update,references`).
    pub fn column_list(self) -> String {
        self.names()
            .iter()
            .map(|name| name.to_ascii_lowercase())
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The privileges, GRANT OPTION aside.
    pub fn plain(self) -> Privileges {
        self.without(Privileges::GRANT_OPTION)
    }

    /// The names of the privileges in the set, GRANT OPTION aside, in MySQL's order.
    pub fn names(self) -> Vec<&'static str> {
        PRIVILEGES
            .iter()
            .filter(|(bit, _, _)| self.0 & bit != 0)
            .map(|(_, name, _)| *name)
            .collect()
    }

    /// The list SHOW GRANTS prints for a level where `all` is everything grantable: `ALL
    /// PRIVILEGES` when the set holds all of it, `USAGE` when it holds none.
    pub fn describe(self, all: Privileges) -> String {
        let plain = self.plain();
        if plain.is_empty() {
            "USAGE".to_string()
        } else if plain.contains(all) {
            "ALL PRIVILEGES".to_string()
        } else {
            plain.names().join(", ")
        }
    }
}

impl fmt::Display for Privileges {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.names().join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_levels_nest() {
        for (bit, name, _) in PRIVILEGES {
            assert_eq!(Privileges::named(name), Some(Privileges(*bit)));
            assert_eq!(Privileges(*bit).names(), vec![*name]);
        }
        assert_eq!(
            Privileges::named("grant option"),
            Some(Privileges::GRANT_OPTION)
        );
        assert!(Privileges::named("FLY").is_none());
        assert!(Privileges::all_global().contains(Privileges::all_database()));
        assert!(Privileges::all_database().contains(Privileges::all_table()));
        assert!(!Privileges::all_database().intersects(Privileges::SUPER));
        assert!(!Privileges::all_global().intersects(Privileges::GRANT_OPTION));
        assert_eq!(
            Privileges::all_table().describe(Privileges::all_table()),
            "ALL PRIVILEGES"
        );
        assert_eq!(
            Privileges::GRANT_OPTION.describe(Privileges::all_table()),
            "USAGE"
        );
        assert_eq!(
            Privileges::SELECT
                .union(Privileges::INSERT)
                .describe(Privileges::all_table()),
            "SELECT, INSERT"
        );
    }
}
