//! The catalog: databases, tables, columns and indexes, stored as keys through the transaction
//! client (so every SQL node sees the same schema) and cached in memory as one immutable
//! [`Schema`] snapshot per version.
//!
//! ```text
//!   m/version                 -> schema version (u64)
//!   m/next_id                 -> last id handed out for tables and indexes
//!   m/db/{name}               -> DatabaseDef (JSON)
//!   m/table/{db}\0{name}      -> TableDef (JSON)
//!   m/view/{db}\0{name}       -> ViewDef (JSON)
//!   m/autoid/{table_id}       -> highest auto-increment / row id allocated
//!   m/stats/{table_id}        -> TableStats (JSON)
//!   m/users                   -> present once the accounts were created
//!   m/user/{user}\0{host}     -> Account (JSON)
//! ```

use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use strata_codec::Datum;
use strata_txn::{Transaction, TxnClient, TxnMode};
use strata_types::TableId;

use crate::account::{Account, Accounts, Identity, Privileges};
use crate::error::{self, Result};
use crate::types::{SqlType, TypeKind};

pub const META_VERSION_KEY: &[u8] = b"m/version";
pub const META_NEXT_ID_KEY: &[u8] = b"m/next_id";
const META_DB_PREFIX: &[u8] = b"m/db/";
const META_TABLE_PREFIX: &[u8] = b"m/table/";
const META_VIEW_PREFIX: &[u8] = b"m/view/";
pub const META_USERS_KEY: &[u8] = b"m/users";
const META_USER_PREFIX: &[u8] = b"m/user/";
/// Catalog reads in one go; more objects than this are read page by page.
const META_SCAN_PAGE: usize = 4096;

/// How a column's default is given.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum DefaultValue {
    /// A constant, stored in text form and converted to the column type when loaded.
    Literal(Option<String>),
    CurrentTimestamp,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ColumnDef {
    pub id: i64,
    pub name: String,
    pub ty: SqlType,
    pub nullable: bool,
    pub default: Option<DefaultValue>,
    pub auto_increment: bool,
    /// The value, as text, of this column in the rows stored before `ALTER TABLE … ADD` made
    /// it (None: NULL); such rows hold no value for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_default: Option<String>,
    /// Being added or dropped (ddl/alter.rs): no statement names it, `*` leaves it out, and
    /// writes still keep its value (a new row gets its default).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub write_only: bool,
}

impl ColumnDef {
    /// The stored default converted to the column type (None: no default).
    pub fn default_datum(&self) -> Option<Datum> {
        match &self.default {
            None => None,
            Some(DefaultValue::Literal(None)) => Some(Datum::Null),
            Some(DefaultValue::Literal(Some(text))) => self
                .ty
                .coerce(self.ty.stored_default(text), &self.name)
                .ok(),
            // Kept to the column's digits of fraction (none for a plain DATETIME).
            Some(DefaultValue::CurrentTimestamp) => self
                .ty
                .coerce(
                    Datum::DateTime(chrono::Local::now().naive_local()),
                    &self.name,
                )
                .ok(),
        }
    }

    /// What a row stored before the column existed holds for it.
    pub fn origin_datum(&self) -> Datum {
        match &self.origin_default {
            None => Datum::Null,
            Some(text) => self
                .ty
                .coerce(self.ty.stored_default(text), &self.name)
                .unwrap_or(Datum::Null),
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IndexDef {
    pub id: i64,
    pub name: String,
    /// Positions of the indexed columns in the table.
    pub columns: Vec<usize>,
    pub unique: bool,
    /// Readable by queries; while false the index is being built and is only maintained.
    pub public: bool,
    /// Being added, first of its steps (ddl/alter.rs): writes delete its entries but add none.
    /// A SQL node that does not know the index yet rewrites rows without touching it, so no
    /// node may add an entry such a rewrite would leave behind.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delete_only: bool,
    /// Snapshots older than this do not see the backfilled entries of the index, so their
    /// reads scan the table instead (0: every snapshot may use it).
    #[serde(default)]
    pub readable_from_ts: u64,
}

/// How a row's key (its handle) is formed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum PrimaryKey {
    /// A single integer primary key column is the handle.
    IntHandle(usize),
    /// A clustered primary key of these columns (composite or non-integer).
    Clustered(Vec<usize>),
    /// No primary key: a hidden row id is the handle.
    RowId,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableDef {
    pub id: i64,
    pub database: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    pub primary_key: PrimaryKey,
    pub indexes: Vec<IndexDef>,
    pub next_column_id: i64,
    pub comment: String,
}

impl TableDef {
    /// A table of rows the SQL layer computes (information_schema, a recursive CTE's working
    /// rows): nullable columns, no keys, no storage.
    pub fn computed(
        database: &str,
        name: &str,
        columns: impl IntoIterator<Item = (String, SqlType)>,
    ) -> TableDef {
        let columns: Vec<ColumnDef> = columns
            .into_iter()
            .enumerate()
            .map(|(i, (name, ty))| ColumnDef {
                id: i as i64 + 1,
                name,
                ty,
                nullable: true,
                default: None,
                auto_increment: false,
                origin_default: None,
                write_only: false,
            })
            .collect();
        TableDef {
            id: 0,
            database: database.to_string(),
            name: name.to_string(),
            next_column_id: columns.len() as i64 + 1,
            columns,
            primary_key: PrimaryKey::RowId,
            indexes: Vec::new(),
            comment: String::new(),
        }
    }

    pub fn table_id(&self) -> TableId {
        TableId(self.id)
    }

    /// Finds a column statements can name, by name, case-insensitively.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| !c.write_only && c.name.eq_ignore_ascii_case(name))
    }

    /// The columns statements see (all but those an ALTER TABLE is adding or dropping), with
    /// their positions in the row.
    pub fn visible_columns(&self) -> impl Iterator<Item = (usize, &ColumnDef)> {
        self.columns
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.write_only)
    }

    pub fn auto_increment_column(&self) -> Option<usize> {
        self.columns.iter().position(|c| c.auto_increment)
    }

    /// Columns of the primary key, in key order (empty for a hidden row id).
    pub fn primary_columns(&self) -> Vec<usize> {
        match &self.primary_key {
            PrimaryKey::IntHandle(c) => vec![*c],
            PrimaryKey::Clustered(cs) => cs.clone(),
            PrimaryKey::RowId => Vec::new(),
        }
    }

    pub fn column_ids(&self) -> Vec<i64> {
        self.columns.iter().map(|c| c.id).collect()
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DatabaseDef {
    pub name: String,
}

/// A view: a stored SELECT that queries name like a table (see view.rs).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewDef {
    pub database: String,
    pub name: String,
    /// The names of its columns, fixed when it was created.
    pub columns: Vec<String>,
    /// The names the SELECT gave those columns then: a `SELECT *` over a table that gained
    /// columns since still reads these.
    #[serde(default)]
    pub source_columns: Vec<String>,
    /// Whether CREATE VIEW named the columns (`CREATE VIEW v (a, b) AS …`).
    pub column_list: bool,
    /// The SELECT, as text; unqualified table names in it are the view's database's.
    pub definition: String,
    /// `WITH [CASCADED | LOCAL] CHECK OPTION`: `NONE`, `CASCADED` or `LOCAL`.
    pub check_option: String,
}

/// Statistics collected by `ANALYZE TABLE`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TableStats {
    pub row_count: u64,
    /// Distinct values of each index's full key, by index id.
    pub index_distinct: HashMap<i64, u64>,
    /// Encoded bytes (keys and values) of the rows, before compression.
    #[serde(default)]
    pub data_bytes: u64,
    /// Encoded bytes of all index entries, before compression.
    #[serde(default)]
    pub index_bytes: u64,
}

/// One version of the whole catalog.
#[derive(Clone, Debug, Default)]
pub struct Schema {
    pub version: u64,
    pub databases: HashMap<String, DatabaseDef>,
    pub tables: HashMap<(String, String), Arc<TableDef>>,
    pub views: HashMap<(String, String), Arc<ViewDef>>,
    pub stats: HashMap<i64, Arc<TableStats>>,
    pub accounts: Arc<Accounts>,
    /// The account this part of the catalog was cut for ([`Schema::visible_to`]); None for
    /// the whole catalog.
    pub viewer: Option<Arc<Account>>,
}

impl Schema {
    pub fn table(&self, database: &str, name: &str) -> Result<&Arc<TableDef>> {
        if let Some(t) = self.tables.get(&(database.to_string(), name.to_string())) {
            return Ok(t);
        }
        if !self.databases.contains_key(database) {
            return Err(error::unknown_database(database));
        }
        // Table names compare case-insensitively as with lower_case_table_names = 2 lookups.
        self.tables
            .iter()
            .find(|((db, t), _)| db == database && t.eq_ignore_ascii_case(name))
            .map(|(_, t)| t)
            .ok_or_else(|| error::unknown_table(database, name))
    }

    /// The view `database.name`, if there is one (names compare as table names do).
    pub fn view(&self, database: &str, name: &str) -> Option<&Arc<ViewDef>> {
        self.views
            .get(&(database.to_string(), name.to_string()))
            .or_else(|| {
                self.views
                    .iter()
                    .find(|((db, v), _)| db == database && v.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v)
            })
    }

    /// The views of `database`, by name.
    pub fn views_of(&self, database: &str) -> Vec<&Arc<ViewDef>> {
        let mut views: Vec<_> = self
            .views
            .values()
            .filter(|v| v.database == database)
            .collect();
        views.sort_by(|a, b| a.name.cmp(&b.name));
        views
    }

    /// The part of the catalog `account` may see (what information_schema lists to it): the
    /// databases and the tables and views it holds some privilege on.
    pub fn visible_to(&self, account: &Account) -> Schema {
        let sees_all_databases = account
            .global
            .contains(crate::account::Privileges::SHOW_DATABASES);
        Schema {
            version: self.version,
            databases: self
                .databases
                .iter()
                .filter(|(name, _)| sees_all_databases || account.sees_database(name))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            tables: self
                .tables
                .iter()
                .filter(|((db, name), _)| account.sees_table(db, name))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            views: self
                .views
                .iter()
                .filter(|((db, name), _)| account.sees_table(db, name))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            stats: self.stats.clone(),
            accounts: self.accounts.clone(),
            viewer: Some(Arc::new(account.clone())),
        }
    }

    /// The privileges information_schema lists for a column (see
    /// [`Account::shown_column_privileges`]): all four of them in the whole catalog.
    pub fn shown_column_privileges(&self, database: &str, table: &str, column: &str) -> Privileges {
        crate::account::shown_column_privileges(self.viewer.as_deref(), database, table, column)
    }

    pub fn tables_of(&self, database: &str) -> Vec<&Arc<TableDef>> {
        let mut tables: Vec<_> = self
            .tables
            .values()
            .filter(|t| t.database == database)
            .collect();
        tables.sort_by(|a, b| a.name.cmp(&b.name));
        tables
    }
}

pub fn database_key(name: &str) -> Vec<u8> {
    [META_DB_PREFIX, name.as_bytes()].concat()
}

pub fn table_key(database: &str, name: &str) -> Vec<u8> {
    object_key(META_TABLE_PREFIX, database, name)
}

pub fn view_key(database: &str, name: &str) -> Vec<u8> {
    object_key(META_VIEW_PREFIX, database, name)
}

/// The key of an object named `database.name` among those under `prefix`.
fn object_key(prefix: &[u8], database: &str, name: &str) -> Vec<u8> {
    [prefix, database.as_bytes(), b"\0", name.as_bytes()].concat()
}

/// The key of the account `'user'@'host'`.
pub fn user_key(identity: &Identity) -> Vec<u8> {
    object_key(META_USER_PREFIX, &identity.user, &identity.host)
}

pub fn autoid_key(table_id: i64) -> Vec<u8> {
    format!("m/autoid/{table_id}").into_bytes()
}

pub fn stats_key(table_id: i64) -> Vec<u8> {
    format!("m/stats/{table_id}").into_bytes()
}

pub fn encode_json<T: Serialize>(value: &T) -> Vec<u8> {
    serde_json::to_vec(value).expect("catalog records serialize")
}

fn decode_json<T: for<'de> Deserialize<'de>>(bytes: &[u8]) -> Result<T> {
    serde_json::from_slice(bytes)
        .map_err(|e| error::internal(format!("corrupt catalog record: {e}")))
}

pub fn read_u64(txn: &mut Transaction, key: &[u8]) -> Result<u64> {
    Ok(match txn.get(key)? {
        Some(bytes) if bytes.len() == 8 => u64::from_be_bytes(bytes.try_into().expect("8 bytes")),
        _ => 0,
    })
}

/// Reads the whole catalog at a fresh snapshot.
pub fn load_schema(client: &TxnClient) -> Result<Schema> {
    let mut txn = client.begin(TxnMode::Optimistic)?;
    let mut schema = Schema {
        version: read_u64(&mut txn, META_VERSION_KEY)?,
        ..Schema::default()
    };
    for (_, value) in scan_all(&mut txn, META_DB_PREFIX)? {
        let db: DatabaseDef = decode_json(&value)?;
        schema.databases.insert(db.name.clone(), db);
    }
    for (_, value) in scan_all(&mut txn, META_TABLE_PREFIX)? {
        let table: TableDef = decode_json(&value)?;
        if let Some(bytes) = txn.get(&stats_key(table.id))? {
            schema
                .stats
                .insert(table.id, Arc::new(decode_json(&bytes)?));
        }
        schema.tables.insert(
            (table.database.clone(), table.name.clone()),
            Arc::new(table),
        );
    }
    for (_, value) in scan_all(&mut txn, META_VIEW_PREFIX)? {
        let view: ViewDef = decode_json(&value)?;
        schema
            .views
            .insert((view.database.clone(), view.name.clone()), Arc::new(view));
    }
    let initialized = txn.get(META_USERS_KEY)?.is_some();
    let mut accounts = Vec::new();
    for (_, value) in scan_all(&mut txn, META_USER_PREFIX)? {
        accounts.push(decode_json::<Account>(&value)?);
    }
    schema.accounts = Arc::new(Accounts::from_accounts(initialized, accounts));
    txn.rollback();
    Ok(schema)
}

/// Every catalog record under `prefix`, read page by page.
pub(crate) fn scan_all(txn: &mut Transaction, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let end = strata_codec::keys::prefix_next(prefix);
    let mut start = prefix.to_vec();
    let mut out = Vec::new();
    loop {
        let page = txn.scan(&start, &end, META_SCAN_PAGE, false)?;
        let done = page.len() < META_SCAN_PAGE;
        if let Some((last, _)) = page.last() {
            start = [last.as_slice(), b"\0"].concat();
        }
        out.extend(page);
        if done {
            return Ok(out);
        }
    }
}

/// Builds the definition of a column type from its parts.
pub fn sql_type(kind: TypeKind, unsigned: bool, length: u32, scale: u32) -> SqlType {
    SqlType {
        kind,
        unsigned,
        length,
        scale,
        members: Vec::new(),
        binary: false,
    }
}
