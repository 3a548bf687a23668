//! Accounts and their privileges, as MySQL has them: `'user'@'host'` where the host is a
//! pattern, a password kept as a hash, and grants at the global, database, table and column
//! levels.
//!
//! Accounts are catalog records (`m/user/{user}\0{host}`, see [`crate::catalog`]), so every SQL
//! node of a cluster sees a change with the next schema version and they survive restarts. The
//! protocol server asks [`Accounts::find`] whom a client is, checks the password against
//! [`Account::auth_string`], and opens the session under that account's [`Identity`]; the
//! session checks every statement against the account's grants ([`check`]) before it runs.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::net::IpAddr;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub mod check;
pub(crate) mod grantees;
pub mod locking;
pub mod password;
pub mod privilege;
mod reading;
pub(crate) mod statement;

pub use locking::{Blocked, FailedLogins, LoginLocking};
pub use password::{is_stored_secret, normalized_secret, stored_secret, Credential, Sha2Cache};
pub use privilege::Privileges;

/// The authentication plugin accounts get when none is named.
pub const NATIVE_PASSWORD: &str = "mysql_native_password";
/// MySQL 8's default plugin: a SHA-256 scramble.
pub const CACHING_SHA2_PASSWORD: &str = "caching_sha2_password";

/// The names an account is known by.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Identity {
    pub user: String,
    pub host: String,
}

impl Identity {
    pub fn new(user: impl Into<String>, host: impl Into<String>) -> Identity {
        Identity {
            user: user.into(),
            host: host.into(),
        }
    }
}

impl fmt::Display for Identity {
    /// `'user'@'host'`, as MySQL's messages quote an account.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "'{}'@'{}'", self.user, self.host)
    }
}

/// `REQUIRE SUBJECT 's' AND ISSUER 'i' AND CIPHER 'c'` (each optional): what a client's
/// certificate must name (in OpenSSL's one-line form, `/O=Shop/CN=ann`, compared exactly as
/// MySQL does) and the cipher its connection must use (as `Ssl_cipher` names it).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TlsRequirement {
    pub subject: Option<String>,
    pub issuer: Option<String>,
    pub cipher: Option<String>,
}

impl TlsRequirement {
    pub fn is_empty(&self) -> bool {
        self.subject.is_none() && self.issuer.is_none() && self.cipher.is_none()
    }
}

/// What the protocol server needs of an account to let a client in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Login {
    pub identity: Identity,
    /// The account's authentication plugin.
    pub plugin: String,
    pub credential: Credential,
    pub locked: bool,
    pub password_expired: bool,
    /// Only a connection over TLS may log in (`REQUIRE SSL`).
    pub require_secure: bool,
    /// Only a connection over TLS with a client certificate of the server's CA may log in
    /// (`REQUIRE X509`).
    pub require_x509: bool,
    /// The certificate's names and the cipher (`REQUIRE SUBJECT | ISSUER | CIPHER`).
    pub require_specified: TlsRequirement,
    /// FAILED_LOGIN_ATTEMPTS and PASSWORD_LOCK_TIME.
    pub locking: LoginLocking,
}

impl Login {
    /// An unlocked account with `password` (empty for none), for servers and tests that keep
    /// their accounts outside a catalog.
    pub fn with_password(identity: Identity, password: &str) -> Login {
        let mut account = Account::new(&identity);
        account.auth_string = stored_secret(NATIVE_PASSWORD, password);
        account.login()
    }
}

/// Privileges on the columns of one table, by column name (as the table spells it).
pub type ColumnPrivileges = BTreeMap<String, Privileges>;

/// One account.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Account {
    pub user: String,
    pub host: String,
    /// `mysql_native_password` or `caching_sha2_password`.
    pub plugin: String,
    /// The stored form of the password ([`stored_secret`]); empty for no password.
    pub auth_string: String,
    /// `ACCOUNT LOCK`: no one logs in as it.
    pub locked: bool,
    /// `PASSWORD EXPIRE`: a login may only change the password.
    pub password_expired: bool,
    /// `REQUIRE SSL`: only a connection over TLS may log in.
    #[serde(default)]
    pub require_secure: bool,
    /// `REQUIRE X509`: only a connection over TLS with a client certificate of the server's
    /// CA may log in.
    #[serde(default)]
    pub require_x509: bool,
    /// `REQUIRE SUBJECT | ISSUER | CIPHER`: a certificate naming them, a cipher (the first
    /// two set `require_x509`, the last `require_secure`).
    #[serde(default, skip_serializing_if = "TlsRequirement::is_empty")]
    pub require_specified: TlsRequirement,
    /// Privileges on `*.*`.
    pub global: Privileges,
    /// Privileges on `db.*`, by database name (a pattern, as MySQL's `mysql.db`).
    pub databases: BTreeMap<String, Privileges>,
    /// Privileges on `db.table`, by database and then table name.
    pub tables: BTreeMap<String, BTreeMap<String, Privileges>>,
    /// Privileges on columns of `db.table` (SELECT, INSERT, UPDATE and REFERENCES), by
    /// database, table and column name.
    #[serde(default)]
    pub columns: BTreeMap<String, BTreeMap<String, ColumnPrivileges>>,
    /// The roles granted to it (roles are accounts).
    #[serde(default)]
    pub roles: BTreeSet<Identity>,
    /// The roles a session of it starts with (`SET DEFAULT ROLE`).
    #[serde(default)]
    pub default_roles: BTreeSet<Identity>,
    /// FAILED_LOGIN_ATTEMPTS and PASSWORD_LOCK_TIME.
    #[serde(default)]
    pub locking: LoginLocking,
}

impl Account {
    /// A new account without privileges.
    pub fn new(identity: &Identity) -> Account {
        Account {
            user: identity.user.clone(),
            host: identity.host.clone(),
            plugin: NATIVE_PASSWORD.to_string(),
            auth_string: String::new(),
            locked: false,
            password_expired: false,
            require_secure: false,
            require_x509: false,
            require_specified: TlsRequirement::default(),
            global: Privileges::NONE,
            databases: BTreeMap::new(),
            tables: BTreeMap::new(),
            columns: BTreeMap::new(),
            roles: BTreeSet::new(),
            default_roles: BTreeSet::new(),
            locking: LoginLocking::default(),
        }
    }

    /// Adds `other`'s privileges to this account's (an active role's).
    fn absorb(&mut self, other: &Account) {
        self.global = self.global.union(other.global);
        for (db, privileges) in &other.databases {
            let held = self.databases.entry(db.clone()).or_default();
            *held = held.union(*privileges);
        }
        for (db, tables) in &other.tables {
            let mine = self.tables.entry(db.clone()).or_default();
            for (table, privileges) in tables {
                let held = mine.entry(table.clone()).or_default();
                *held = held.union(*privileges);
            }
        }
        for (db, tables) in &other.columns {
            let mine = self.columns.entry(db.clone()).or_default();
            for (table, columns) in tables {
                let held = mine.entry(table.clone()).or_default();
                for (column, privileges) in columns {
                    let entry = held.entry(column.clone()).or_default();
                    *entry = entry.union(*privileges);
                }
            }
        }
    }

    pub fn identity(&self) -> Identity {
        Identity::new(&self.user, &self.host)
    }

    /// What a login as this account is checked against.
    pub fn login(&self) -> Login {
        Login {
            identity: self.identity(),
            plugin: self.plugin.clone(),
            credential: self.credential(),
            locked: self.locked,
            password_expired: self.password_expired,
            require_secure: self.require_secure,
            require_x509: self.require_x509,
            require_specified: self.require_specified.clone(),
            locking: self.locking,
        }
    }

    /// What a login is checked against (without the SQL node's fast-path cache).
    pub fn credential(&self) -> Credential {
        password::credential(&self.auth_string)
    }

    /// Whether the account has every privilege of `needed` on `database.table` (a table of
    /// None asks about the database as a whole), from any level.
    pub fn has(&self, needed: Privileges, database: &str, table: Option<&str>) -> bool {
        let held = self.privileges_on(database, table);
        held.contains(needed)
    }

    /// The privileges the account holds on `database.table` from every level.
    pub fn privileges_on(&self, database: &str, table: Option<&str>) -> Privileges {
        let mut held = self.global;
        for (pattern, privileges) in &self.databases {
            if database_matches(pattern, database) {
                held = held.union(*privileges);
            }
        }
        if let Some(table) = table {
            if let Some(tables) = self.tables.get(database) {
                if let Some(privileges) = tables
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(table))
                    .map(|(_, p)| *p)
                {
                    held = held.union(privileges);
                }
            }
        }
        held
    }

    /// The privileges the account holds on columns of `database.table`, by column name.
    pub fn column_privileges(&self, database: &str, table: &str) -> Option<&ColumnPrivileges> {
        self.columns
            .get(database)?
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(table))
            .map(|(_, columns)| columns)
    }

    /// The privileges the account holds on `database.table.column` from every level.
    pub fn privileges_on_column(&self, database: &str, table: &str, column: &str) -> Privileges {
        let held = self.privileges_on(database, Some(table));
        let on_column = self
            .column_privileges(database, table)
            .and_then(|columns| {
                columns
                    .iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(column))
            })
            .map_or(Privileges::NONE, |(_, p)| *p);
        held.union(on_column)
    }

    /// The privileges on `database.table.column` that SHOW COLUMNS and
    /// information_schema.COLUMNS list for it: SELECT, INSERT, UPDATE and REFERENCES held at
    /// any level. A column with none is not listed to the account, as in MySQL.
    pub fn shown_column_privileges(&self, database: &str, table: &str, column: &str) -> Privileges {
        self.privileges_on_column(database, table, column)
            .intersection(Privileges::all_column())
    }

    /// Whether the account holds any privilege on `database` or on a table in it: what makes
    /// the database visible to it (SHOW DATABASES, USE).
    pub fn sees_database(&self, database: &str) -> bool {
        !self.global.plain().is_empty()
            || self
                .databases
                .iter()
                .any(|(p, privileges)| database_matches(p, database) && !privileges.is_empty())
            || self
                .tables
                .get(database)
                .is_some_and(|tables| tables.values().any(|p| !p.is_empty()))
            || self.columns.get(database).is_some_and(|tables| {
                tables
                    .values()
                    .any(|columns| columns.values().any(|p| !p.is_empty()))
            })
    }

    /// Whether the account holds any privilege on `database.table` or on a column of it (SHOW
    /// TABLES, DESCRIBE).
    pub fn sees_table(&self, database: &str, table: &str) -> bool {
        !self.privileges_on(database, Some(table)).plain().is_empty()
            || self
                .column_privileges(database, table)
                .is_some_and(|columns| columns.values().any(|p| !p.is_empty()))
    }
}

/// [`Account::shown_column_privileges`] of `viewer`; all four privileges for no account (an
/// embedded session, or the whole catalog).
pub fn shown_column_privileges(
    viewer: Option<&Account>,
    database: &str,
    table: &str,
    column: &str,
) -> Privileges {
    viewer.map_or_else(Privileges::all_column, |account| {
        account.shown_column_privileges(database, table, column)
    })
}

/// Every account, in the order MySQL matches a login against them: the most specific host
/// first, a named user before the anonymous one.
#[derive(Clone, Debug, Default)]
pub struct Accounts {
    /// Whether the accounts were ever created (a catalog from before accounts has none).
    pub initialized: bool,
    by_identity: BTreeMap<Identity, Arc<Account>>,
    /// `by_identity`'s accounts in matching order.
    ordered: Vec<Arc<Account>>,
}

impl Accounts {
    pub fn from_accounts(initialized: bool, accounts: Vec<Account>) -> Accounts {
        let mut set = Accounts {
            initialized,
            ..Accounts::default()
        };
        for account in accounts {
            set.by_identity
                .insert(account.identity(), Arc::new(account));
        }
        set.reorder();
        set
    }

    fn reorder(&mut self) {
        let mut ordered: Vec<_> = self.by_identity.values().cloned().collect();
        ordered.sort_by_key(|a| (host_rank(&a.host), a.user.is_empty(), a.identity()));
        self.ordered = ordered;
    }

    pub fn get(&self, identity: &Identity) -> Option<&Arc<Account>> {
        self.by_identity.get(identity)
    }

    pub fn insert(&mut self, account: Account) {
        self.by_identity
            .insert(account.identity(), Arc::new(account));
        self.reorder();
    }

    pub fn remove(&mut self, identity: &Identity) -> Option<Arc<Account>> {
        let removed = self.by_identity.remove(identity);
        self.reorder();
        removed
    }

    pub fn iter(&self) -> impl Iterator<Item = &Arc<Account>> {
        self.ordered.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.by_identity.is_empty()
    }

    /// What the account `identity` may do with the roles `active` in use: its own privileges
    /// and those of each active role granted to it, and of the roles granted to those. An
    /// account that does not exist (dropped while its session lives) holds nothing.
    pub fn effective(&self, identity: &Identity, active: &[Identity]) -> Account {
        let mut merged = self
            .get(identity)
            .map(|a| (**a).clone())
            .unwrap_or_else(|| Account::new(identity));
        let mut pending: Vec<Identity> = active
            .iter()
            .filter(|role| merged.roles.contains(role))
            .cloned()
            .collect();
        let mut seen = BTreeSet::new();
        while let Some(role) = pending.pop() {
            if !seen.insert(role.clone()) {
                continue;
            }
            if let Some(granted) = self.get(&role) {
                merged.absorb(granted);
                pending.extend(granted.roles.iter().cloned());
            }
        }
        merged
    }

    /// The account a client named `user` connecting from `peer` logs in as: the first, in
    /// matching order, whose user is `user` (or anonymous) and whose host pattern matches the
    /// peer's address (a loopback address also matches `localhost`).
    pub fn find(&self, user: &str, peer: &str) -> Option<&Arc<Account>> {
        self.ordered
            .iter()
            .find(|a| (a.user == user || a.user.is_empty()) && host_matches(&a.host, peer))
    }
}

/// Orders host patterns from the most specific: literal names and addresses, then patterns by
/// how much literal text comes before their first wildcard, `%` last.
fn host_rank(host: &str) -> (bool, std::cmp::Reverse<usize>) {
    match host.find(['%', '_']) {
        None => (false, std::cmp::Reverse(usize::MAX)),
        Some(at) => (true, std::cmp::Reverse(at)),
    }
}

/// Whether an account's host pattern matches a client at `peer` (an IP address, or
/// `localhost` for a client of the embedded API).
pub fn host_matches(pattern: &str, peer: &str) -> bool {
    let loopback = peer == "localhost"
        || peer
            .parse::<IpAddr>()
            .is_ok_and(|ip| ip.is_loopback() || is_mapped_loopback(ip));
    if loopback && pattern.eq_ignore_ascii_case("localhost") {
        return true;
    }
    if let Some((network, mask)) = pattern.split_once('/') {
        return netmask_matches(network, mask, peer);
    }
    let peer = peer.strip_prefix("::ffff:").unwrap_or(peer);
    like_matches(pattern, peer, true)
}

fn is_mapped_loopback(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback()),
        IpAddr::V4(_) => false,
    }
}

/// `10.0.0.0/255.255.255.0`: an IPv4 network and its mask.
fn netmask_matches(network: &str, mask: &str, peer: &str) -> bool {
    let parse = |s: &str| s.parse::<std::net::Ipv4Addr>().ok().map(u32::from);
    let peer = peer.strip_prefix("::ffff:").unwrap_or(peer);
    match (parse(network), parse(mask), parse(peer)) {
        (Some(network), Some(mask), Some(peer)) => peer & mask == network,
        _ => false,
    }
}

/// Whether a database name matches a database-level grant's pattern: `%` and `_` are
/// wildcards unless escaped with `\`, as in MySQL's `mysql.db`.
pub fn database_matches(pattern: &str, database: &str) -> bool {
    like_matches(pattern, database, false)
}

/// LIKE-style matching of `%` (any run) and `_` (one character), `\` escaping either.
fn like_matches(pattern: &str, text: &str, ignore_case: bool) -> bool {
    // Most patterns are plain names: compared without collecting characters.
    if !pattern.contains(['%', '_', '\\']) {
        return if ignore_case {
            pattern.eq_ignore_ascii_case(text)
        } else {
            pattern == text
        };
    }
    let pattern: Vec<char> = pattern.chars().collect();
    let text: Vec<char> = text.chars().collect();
    let same = |a: char, b: char| {
        if ignore_case {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    // Iterative matching with one backtrack point for the last `%`: linear in practice and
    // never recursive.
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == '%' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == '_' {
            p += 1;
            t += 1;
        } else if p + 1 < pattern.len() && pattern[p] == '\\' && same(pattern[p + 1], text[t]) {
            p += 2;
            t += 1;
        } else if p < pattern.len() && pattern[p] != '\\' && same(pattern[p], text[t]) {
            p += 1;
            t += 1;
        } else if let Some((star_p, star_t)) = star {
            p = star_p + 1;
            t = star_t + 1;
            star = Some((star_p, star_t + 1));
        } else {
            return false;
        }
    }
    while p < pattern.len() && pattern[p] == '%' {
        p += 1;
    }
    p == pattern.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn account(user: &str, host: &str) -> Account {
        Account::new(&Identity::new(user, host))
    }

    #[test]
    fn hosts_match_as_mysql_matches_them() {
        assert!(host_matches("%", "10.1.2.3"));
        assert!(host_matches("localhost", "127.0.0.1"));
        assert!(host_matches("localhost", "::1"));
        assert!(host_matches("localhost", "localhost"));
        assert!(!host_matches("localhost", "10.1.2.3"));
        assert!(host_matches("10.1.%", "10.1.2.3"));
        assert!(!host_matches("10.1.%", "10.2.2.3"));
        assert!(host_matches("10.1.2._", "10.1.2.3"));
        assert!(!host_matches("10.1.2._", "10.1.2.33"));
        assert!(host_matches("127.0.0.1", "::ffff:127.0.0.1"));
        assert!(host_matches("10.1.2.0/255.255.255.0", "10.1.2.77"));
        assert!(!host_matches("10.1.2.0/255.255.255.0", "10.1.3.77"));
        assert!(database_matches("shop", "shop"));
        assert!(!database_matches("shop", "Shop"));
        assert!(database_matches("shop\\_%", "shop_1"));
        assert!(!database_matches("shop\\_%", "shopx1"));
        assert!(database_matches("a%b%c", "aXXbYYc"));
        assert!(!database_matches("a%b%c", "aXXbYY"));
    }

    #[test]
    fn the_most_specific_account_wins() {
        let accounts = Accounts::from_accounts(
            true,
            vec![
                account("bob", "%"),
                account("bob", "10.1.%"),
                account("bob", "10.1.2.3"),
                account("", "localhost"),
                account("root", "localhost"),
            ],
        );
        let host_of = |user: &str, peer: &str| accounts.find(user, peer).map(|a| a.host.clone());
        assert_eq!(host_of("bob", "10.1.2.3").as_deref(), Some("10.1.2.3"));
        assert_eq!(host_of("bob", "10.1.9.9").as_deref(), Some("10.1.%"));
        assert_eq!(host_of("bob", "192.168.0.1").as_deref(), Some("%"));
        // From loopback, `localhost` is more specific than `%`: the anonymous account of
        // localhost wins over bob@'%', as in MySQL.
        assert_eq!(
            accounts.find("bob", "127.0.0.1").map(|a| a.identity()),
            Some(Identity::new("", "localhost"))
        );
        assert_eq!(
            accounts.find("root", "127.0.0.1").map(|a| a.identity()),
            Some(Identity::new("root", "localhost"))
        );
        assert!(accounts.find("root", "10.0.0.1").is_none());
    }

    #[test]
    fn passwords_are_stored_as_mysql_stores_them() {
        // MySQL: SELECT PASSWORD('secret') before 8.0, the authentication_string of
        // mysql_native_password.
        assert_eq!(
            stored_secret(NATIVE_PASSWORD, "secret"),
            "*14E65567ABDB5135D0CFD9A70B3032C179A49EE7"
        );
        assert_eq!(stored_secret(NATIVE_PASSWORD, ""), "");
        let mut bob = account("bob", "%");
        bob.auth_string = stored_secret(NATIVE_PASSWORD, "secret");
        let stage2: [u8; 20] = {
            use sha1::{Digest, Sha1};
            Sha1::digest(Sha1::digest(b"secret")).into()
        };
        assert_eq!(bob.credential(), Credential::Native(stage2));
        assert!(is_stored_secret(NATIVE_PASSWORD, &bob.auth_string));
        assert!(!is_stored_secret(NATIVE_PASSWORD, "*14E65567"));
        bob.plugin = CACHING_SHA2_PASSWORD.into();
        bob.auth_string = stored_secret(CACHING_SHA2_PASSWORD, "secret");
        assert!(matches!(
            bob.credential(),
            Credential::Sha2Crypt { ref secret, cached: None } if secret.matches(b"secret")
        ));
        assert!(is_stored_secret(CACHING_SHA2_PASSWORD, &bob.auth_string));
        assert!(!is_stored_secret(NATIVE_PASSWORD, &bob.auth_string));
        // The older stored form of caching_sha2_password: SHA256(SHA256(password)).
        let stage2 = password::sha2_double_hash(b"secret");
        bob.auth_string = format!(
            "$S${}",
            stage2
                .iter()
                .map(|b| format!("{b:02X}"))
                .collect::<String>()
        );
        assert!(is_stored_secret(CACHING_SHA2_PASSWORD, &bob.auth_string));
        assert_eq!(bob.credential(), Credential::CachingSha2(stage2));
        bob.auth_string = "garbage".into();
        assert_eq!(bob.credential(), Credential::Native([0; 20]));
        bob.auth_string.clear();
        assert_eq!(bob.credential(), Credential::None);
    }

    #[test]
    fn active_roles_add_their_privileges() {
        let mut reader = account("reader", "%");
        reader.databases.insert("shop".into(), Privileges::SELECT);
        let mut auditor = account("auditor", "%");
        auditor.global = Privileges::PROCESS;
        auditor.roles.insert(reader.identity());
        let mut bob = account("bob", "%");
        bob.roles.insert(auditor.identity());
        let accounts = Accounts::from_accounts(true, vec![reader.clone(), auditor.clone(), bob]);
        let bob = Identity::new("bob", "%");
        let none = accounts.effective(&bob, &[]);
        assert!(!none.has(Privileges::SELECT, "shop", Some("t")));
        // A role granted to an active role is active too.
        let active = accounts.effective(&bob, &[auditor.identity()]);
        assert!(active.has(Privileges::SELECT, "shop", Some("t")));
        assert!(active.global.contains(Privileges::PROCESS));
        // A role that is not granted does nothing.
        let stranger = accounts.effective(&reader.identity(), &[auditor.identity()]);
        assert!(!stranger.global.contains(Privileges::PROCESS));
    }

    #[test]
    fn privileges_add_up_over_levels() {
        let mut bob = account("bob", "%");
        bob.databases.insert("shop".into(), Privileges::SELECT);
        bob.tables
            .entry("shop".into())
            .or_default()
            .insert("orders".into(), Privileges::INSERT);
        assert!(bob.has(Privileges::SELECT, "shop", Some("items")));
        assert!(!bob.has(Privileges::INSERT, "shop", Some("items")));
        assert!(bob.has(
            Privileges::SELECT.union(Privileges::INSERT),
            "shop",
            Some("ORDERS")
        ));
        assert!(bob.sees_database("shop"));
        assert!(!bob.sees_database("other"));
        assert!(!bob.sees_table("other", "t"));
    }
}
