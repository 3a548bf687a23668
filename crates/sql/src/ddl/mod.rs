//! DDL: the catalog manager that changes schema objects.
//!
//! Schema changes are serialized by one mutex, written as catalog keys in one transaction that
//! also bumps the schema version, and then published as a new immutable [`Schema`].
//!
//! A change to a table that is being written (ALTER TABLE, CREATE INDEX) follows the online
//! schema change of F1 and TiDB in two published steps (alter.rs). A new index is first added as
//! not public (every write from then on maintains it, no read uses it); once every transaction
//! that started under an older schema has ended, existing rows are backfilled in batches that
//! lock the rows they index (so a concurrent update either lands before the batch reads it or
//! waits for the batch); then the index becomes public.

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use sqlparser::ast;
use strata_codec::{keys, Datum};
use strata_txn::{Transaction, TxnClient, TxnError, TxnMode};
use strata_types::Key;

use crate::autoid::AutoIds;
use crate::catalog::{
    database_key, encode_json, load_schema, read_u64, stats_key, table_key, view_key, DatabaseDef,
    IndexDef, Schema, TableDef, TableStats, META_NEXT_ID_KEY, META_VERSION_KEY,
};
use crate::error::{self, Result};
use crate::rows;

mod accounts;
mod alter;
mod define;
mod view;

use define::check_identifier;
pub use define::create_index_columns;
pub(crate) use define::table_definition;
pub use view::Existing;

/// Rows per backfill or delete transaction.
const DDL_BATCH_ROWS: usize = 1024;
/// How long index creation waits for transactions that predate it.
const DDL_WAIT_OLD_TXNS: Duration = Duration::from_secs(120);
/// How long a DDL statement waits for the other SQL nodes to load its change before it
/// returns all the same (they load it on their next successful check).
const DDL_WAIT_LOADED: Duration = Duration::from_secs(10);
/// Pause between two looks at the transactions or nodes a DDL statement waits for.
const DDL_WAIT_POLL: Duration = Duration::from_millis(10);
/// Retries of one backfill batch that met a concurrent write.
const BACKFILL_RETRIES_MAX: usize = 100;
/// How long a backfill batch waits for a row lock held by a writer.
const BACKFILL_LOCK_WAIT_MS: u64 = 1_000;
/// Pause before a backfill batch is tried again.
const BACKFILL_RETRY_PAUSE: Duration = Duration::from_millis(10);

/// Registered while a transaction runs, so DDL can wait for transactions of older schemas.
pub struct ActiveTxn {
    catalog: Arc<Catalog>,
    version: u64,
}

impl Drop for ActiveTxn {
    fn drop(&mut self) {
        let mut active = self.catalog.active.lock();
        if let Some(n) = active.get_mut(&self.version) {
            *n -= 1;
            if *n == 0 {
                active.remove(&self.version);
            }
        }
    }
}

/// The catalog manager of one SQL node.
pub struct Catalog {
    client: TxnClient,
    schema: RwLock<Arc<Schema>>,
    /// Held through a whole DDL statement, waits included (so a fiber's mutex).
    ddl: strata_fiber::Mutex<()>,
    active: Mutex<BTreeMap<u64, usize>>,
    /// This node's id in the cluster's schema reports, once it joined them (schema_sync.rs).
    pub(crate) member: OnceLock<u64>,
    /// When this node last reported its schema (schema_sync.rs), checked at every commit.
    pub(crate) lease: crate::schema_sync::Lease,
    pub autoids: AutoIds,
}

impl Catalog {
    pub fn open(client: TxnClient) -> Result<Arc<Catalog>> {
        let schema = load_schema(&client)?;
        Ok(Arc::new(Catalog {
            autoids: AutoIds::new(client.clone()),
            client,
            schema: RwLock::new(Arc::new(schema)),
            ddl: strata_fiber::Mutex::new(()),
            active: Mutex::new(BTreeMap::new()),
            member: OnceLock::new(),
            lease: crate::schema_sync::Lease::default(),
        }))
    }

    pub fn client(&self) -> &TxnClient {
        &self.client
    }

    /// The current schema.
    // Hot path: every statement.
    pub fn schema(&self) -> Arc<Schema> {
        self.schema.read().clone()
    }

    /// Loads the schema again if another SQL node changed it; returns whether it did. SQL nodes
    /// of a cluster call this every `SCHEMA_SYNC_INTERVAL` (schema_sync.rs). While a DDL
    /// statement of this node runs, this leaves the schema to it and returns false, so the
    /// node's reports go on while that statement waits for other nodes.
    pub fn reload_if_changed(&self) -> Result<bool> {
        match self.ddl.try_lock() {
            Some(_ddl) => self.reload_locked(),
            None => Ok(false),
        }
    }

    /// Loads the schema again if the stored version is newer; the caller holds `ddl`.
    fn reload_locked(&self) -> Result<bool> {
        let mut txn = self.client.begin(TxnMode::Optimistic)?;
        let stored = read_u64(&mut txn, META_VERSION_KEY)?;
        drop(txn);
        if stored <= self.schema.read().version {
            return Ok(false);
        }
        let schema = load_schema(&self.client)?;
        let mut current = self.schema.write();
        if schema.version > current.version {
            *current = Arc::new(schema);
            return Ok(true);
        }
        Ok(false)
    }

    /// Takes the DDL lock of this node with the newest stored schema loaded, so that a change
    /// is made to what other nodes changed before it, not to a copy from before their change.
    fn lock_for_ddl(&self) -> Result<strata_fiber::MutexGuard<'_, ()>> {
        let guard = self.ddl.lock();
        self.reload_locked()?;
        Ok(guard)
    }

    /// The schema version this node has loaded, and the oldest version a write still running
    /// here was planned with (the loaded one when none runs).
    pub(crate) fn versions_in_use(&self) -> (u64, u64) {
        let loaded = self.schema.read().version;
        let oldest = self.active.lock().keys().next().copied();
        (loaded, oldest.unwrap_or(loaded).min(loaded))
    }

    /// Registers a transaction starting under the current schema.
    pub fn register_txn(self: &Arc<Self>) -> ActiveTxn {
        let version = self.schema.read().version;
        *self.active.lock().entry(version).or_insert(0) += 1;
        ActiveTxn {
            catalog: self.clone(),
            version,
        }
    }

    /// Waits until no transaction of this node and no write of any other SQL node of the
    /// cluster runs under a schema older than `version` (1205 after [`DDL_WAIT_OLD_TXNS`]).
    fn wait_for_older_writers(&self, version: u64) -> Result<()> {
        let deadline = Instant::now() + DDL_WAIT_OLD_TXNS;
        loop {
            if self.active.lock().range(..version).next().is_none() {
                // A failed look at the reports (a region changing leaders) is tried again.
                match self.others_reached(version, true) {
                    Ok(true) => return Ok(()),
                    Ok(false) => {}
                    Err(error) => tracing::debug!(%error, "reading the schema reports failed"),
                }
            }
            if Instant::now() > deadline {
                return Err(error::lock_wait_timeout());
            }
            strata_fiber::sleep(DDL_WAIT_POLL);
        }
    }

    /// Waits until every other SQL node of the cluster has loaded `version`, or for
    /// [`DDL_WAIT_LOADED`]: the change is committed, so a node that is slow to load it (or a
    /// failed look at the reports) delays the statement's answer but does not fail it.
    fn wait_until_loaded(&self, version: u64) {
        let deadline = Instant::now() + DDL_WAIT_LOADED;
        loop {
            match self.others_reached(version, false) {
                Ok(true) => return,
                Ok(false) => {}
                Err(error) => tracing::debug!(%error, "reading the schema reports failed"),
            }
            if Instant::now() > deadline {
                tracing::warn!(version, "other SQL nodes have not loaded the schema yet");
                return;
            }
            strata_fiber::sleep(DDL_WAIT_POLL);
        }
    }

    /// Runs a catalog change: `change` edits a copy of the schema and writes its keys; the version
    /// is bumped and the new schema published on commit.
    fn change(
        &self,
        mut change: impl FnMut(&mut Schema, &mut Transaction) -> Result<()>,
    ) -> Result<Arc<Schema>> {
        let mut txn = self.client.begin(TxnMode::Optimistic)?;
        let mut schema = (*self.schema()).clone();
        change(&mut schema, &mut txn)?;
        let version = read_u64(&mut txn, META_VERSION_KEY)?.max(schema.version) + 1;
        txn.put(META_VERSION_KEY.to_vec(), version.to_be_bytes().to_vec());
        txn.commit()?;
        schema.version = version;
        let schema = Arc::new(schema);
        *self.schema.write() = schema.clone();
        self.wait_until_loaded(version);
        Ok(schema)
    }

    fn next_id(txn: &mut Transaction) -> Result<i64> {
        let id = read_u64(txn, META_NEXT_ID_KEY)? + 1;
        txn.put(META_NEXT_ID_KEY.to_vec(), id.to_be_bytes().to_vec());
        Ok(id as i64 + 100)
    }

    pub fn create_database(&self, name: &str, if_not_exists: bool) -> Result<bool> {
        let _ddl = self.lock_for_ddl()?;
        check_identifier(name)?;
        if self.schema().databases.contains_key(name) {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(error::database_exists(name))
            };
        }
        self.change(|schema, txn| {
            let db = DatabaseDef {
                name: name.to_string(),
            };
            txn.put(database_key(name), encode_json(&db));
            schema.databases.insert(name.to_string(), db);
            Ok(())
        })?;
        Ok(true)
    }

    pub fn drop_database(&self, name: &str, if_exists: bool) -> Result<u64> {
        let _ddl = self.lock_for_ddl()?;
        let schema = self.schema();
        if !schema.databases.contains_key(name) {
            return if if_exists {
                Ok(0)
            } else {
                Err(crate::error::Error::new(
                    1008,
                    "HY000",
                    format!("Can't drop database '{name}'; database doesn't exist"),
                ))
            };
        }
        let tables: Vec<Arc<TableDef>> = schema.tables_of(name).into_iter().cloned().collect();
        self.change(|schema, txn| {
            for t in &tables {
                txn.delete(table_key(&t.database, &t.name));
                txn.delete(stats_key(t.id));
                schema.tables.remove(&(t.database.clone(), t.name.clone()));
            }
            for view in schema
                .views_of(name)
                .into_iter()
                .cloned()
                .collect::<Vec<_>>()
            {
                txn.delete(view_key(&view.database, &view.name));
                schema
                    .views
                    .remove(&(view.database.clone(), view.name.clone()));
            }
            txn.delete(database_key(name));
            schema.databases.remove(name);
            Ok(())
        })?;
        for t in &tables {
            self.delete_table_data(t.id)?;
        }
        Ok(tables.len() as u64)
    }

    /// CREATE TABLE, and CREATE TABLE … LIKE (CREATE TABLE … AS is create_as.rs's, which
    /// calls [`Catalog::create_table_def`]).
    pub fn create_table(&self, create: &ast::CreateTable, database: Option<&str>) -> Result<()> {
        let (db, name) = crate::planner::query::split_name(&create.name, database)?;
        let def = match &create.like {
            Some(
                ast::CreateTableLikeKind::Plain(like)
                | ast::CreateTableLikeKind::Parenthesized(like),
            ) => {
                let (source_db, source) = crate::planner::query::split_name(&like.name, database)?;
                let source = self.schema().table(&source_db, &source)?.clone();
                define::like_definition(&source, &db, &name)
            }
            None => table_definition(create, &db, &name)?,
        };
        self.create_table_def(def, create.if_not_exists).map(drop)
    }

    /// Creates the table `def` describes (its id and index ids are given here); returns false
    /// when it exists and `if_not_exists` lets that pass.
    pub fn create_table_def(&self, mut def: TableDef, if_not_exists: bool) -> Result<bool> {
        let _ddl = self.lock_for_ddl()?;
        let (db, name) = (def.database.clone(), def.name.clone());
        check_identifier(&name)?;
        let schema = self.schema();
        if !schema.databases.contains_key(&db) {
            return Err(error::unknown_database(&db));
        }
        if schema.table(&db, &name).is_ok() || schema.view(&db, &name).is_some() {
            return if if_not_exists {
                Ok(false)
            } else {
                Err(error::table_exists(&name))
            };
        }
        self.change(|schema, txn| {
            def.id = Self::next_id(txn)?;
            for (id, index) in (1..).zip(def.indexes.iter_mut()) {
                index.id = id;
            }
            txn.put(table_key(&db, &name), encode_json(&def));
            schema
                .tables
                .insert((db.clone(), name.clone()), Arc::new(def.clone()));
            Ok(())
        })?;
        Ok(true)
    }

    /// Drops tables; returns the names that did not exist (an error unless `if_exists`).
    pub fn drop_tables(&self, names: &[(String, String)], if_exists: bool) -> Result<()> {
        let _ddl = self.lock_for_ddl()?;
        let schema = self.schema();
        let mut found = Vec::new();
        let mut missing = Vec::new();
        for (db, name) in names {
            match schema.table(db, name) {
                Ok(t) => found.push(t.clone()),
                Err(_) => missing.push(format!("{db}.{name}")),
            }
        }
        if !missing.is_empty() && !if_exists {
            return Err(error::bad_table(&missing.join(",")));
        }
        self.change(|schema, txn| {
            for t in &found {
                txn.delete(table_key(&t.database, &t.name));
                txn.delete(stats_key(t.id));
                schema.tables.remove(&(t.database.clone(), t.name.clone()));
                schema.stats.remove(&t.id);
            }
            Ok(())
        })?;
        for t in &found {
            self.autoids.forget(t.id);
            self.delete_table_data(t.id)?;
        }
        Ok(())
    }

    /// Empties a table by giving it a new id (the old rows are deleted afterwards).
    pub fn truncate_table(&self, db: &str, name: &str) -> Result<()> {
        let _ddl = self.lock_for_ddl()?;
        let old = self.schema().table(db, name)?.clone();
        self.change(|schema, txn| {
            let mut def = (*old).clone();
            def.id = Self::next_id(txn)?;
            txn.put(table_key(db, &def.name), encode_json(&def));
            txn.delete(stats_key(old.id));
            schema.stats.remove(&old.id);
            schema
                .tables
                .insert((db.to_string(), def.name.clone()), Arc::new(def));
            Ok(())
        })?;
        self.autoids.forget(old.id);
        self.delete_table_data(old.id)
    }

    /// Deletes every row and index entry of a table id.
    fn delete_table_data(&self, table_id: i64) -> Result<()> {
        self.delete_range(keys::KeyRange::prefix(keys::table_prefix(
            strata_types::TableId(table_id),
        )))
    }

    /// Deletes every key of a range, batch by batch, each batch its own transaction. A batch
    /// that meets a concurrent write is read again.
    fn delete_range(&self, range: keys::KeyRange) -> Result<()> {
        loop {
            let mut txn = self.client.begin(TxnMode::Optimistic)?;
            let batch = txn.scan(&range.start, &range.end, DDL_BATCH_ROWS, false)?;
            if batch.is_empty() {
                return Ok(());
            }
            for (key, _) in batch {
                txn.delete(key);
            }
            match txn.commit() {
                Ok(_) | Err(TxnError::Kv(strata_txn::KvError::WriteConflict { .. })) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Writes index entries for every existing row, batch by batch, locking the rows indexed.
    /// A batch that meets a concurrent write is tried again with half as many rows (rows being
    /// written often would keep failing a large one), and the batches grow back after one
    /// that commits.
    fn backfill(&self, db: &str, table: &str, index_id: i64) -> Result<()> {
        let def = self.schema().table(db, table)?.clone();
        let index = def
            .indexes
            .iter()
            .find(|i| i.id == index_id)
            .expect("index was just added")
            .clone();
        let decoder = rows::RowDecoder::new(&def, None);
        let range = keys::record_range(def.table_id());
        let mut start = range.start.clone();
        let mut batch_rows = DDL_BATCH_ROWS;
        loop {
            let mut attempt = 0;
            let next = loop {
                attempt += 1;
                match self.backfill_batch(&def, &index, &decoder, &start, &range.end, batch_rows) {
                    Ok(next) => {
                        batch_rows = (batch_rows * 2).min(DDL_BATCH_ROWS);
                        break next;
                    }
                    Err(BackfillError::Retry) if attempt < BACKFILL_RETRIES_MAX => {
                        batch_rows = (batch_rows / 2).max(1);
                        strata_fiber::sleep(BACKFILL_RETRY_PAUSE);
                        continue;
                    }
                    Err(BackfillError::Retry) => return Err(error::lock_wait_timeout()),
                    Err(BackfillError::Fail(e)) => return Err(e),
                }
            };
            match next {
                Some(next) => start = next,
                None => return Ok(()),
            }
        }
    }

    fn backfill_batch(
        &self,
        def: &TableDef,
        index: &IndexDef,
        decoder: &rows::RowDecoder,
        start: &[u8],
        end: &[u8],
        batch_rows: usize,
    ) -> std::result::Result<Option<Key>, BackfillError> {
        let mut txn = self
            .client
            .begin(TxnMode::Pessimistic)
            .map_err(BackfillError::from_txn)?;
        txn.begin_statement(true).map_err(BackfillError::from_txn)?;
        let batch = txn
            .scan(start, end, batch_rows, false)
            .map_err(BackfillError::from_txn)?;
        let next = (batch.len() == batch_rows)
            .then(|| batch.last().map(|(k, _)| [k.as_slice(), &[0]].concat()))
            .flatten();
        let mut locks = Vec::with_capacity(batch.len());
        for (key, value) in &batch {
            let row = decoder.decode(value).map_err(BackfillError::Fail)?;
            let handle = rows::handle_from_row_key(def, key).map_err(BackfillError::Fail)?;
            let (index_key, index_value) = rows::index_entry(def, index, &row, &handle);
            if index.unique && !index_value.is_empty() {
                if let Some(existing) = txn.get(&index_key).map_err(BackfillError::from_txn)? {
                    if existing != index_value {
                        let values: Vec<String> = index
                            .columns
                            .iter()
                            .map(|c| {
                                String::from_utf8_lossy(&crate::types::datum_to_text(&row[*c]))
                                    .into_owned()
                            })
                            .collect();
                        return Err(BackfillError::Fail(error::duplicate_key(
                            &values.join("-"),
                            &format!("{}.{}", def.name, index.name),
                        )));
                    }
                }
            }
            txn.put(index_key, index_value);
            locks.push(key.clone());
        }
        txn.lock_keys(locks, BACKFILL_LOCK_WAIT_MS)
            .map_err(BackfillError::from_txn)?;
        txn.commit().map_err(BackfillError::from_txn)?;
        Ok(next)
    }

    fn delete_index_data(&self, def: &TableDef, index_id: i64) -> Result<()> {
        self.delete_range(keys::index_range(
            def.table_id(),
            strata_types::IndexId(index_id),
        ))
    }

    /// Collects row count and per-index distinct counts.
    pub fn analyze(&self, db: &str, table: &str) -> Result<()> {
        let def = self.schema().table(db, table)?.clone();
        let mut txn = self.client.begin(TxnMode::Optimistic)?;
        let (row_count, data_bytes) =
            count_range(&mut txn, keys::record_range(def.table_id()), None)?;
        let mut stats = TableStats {
            row_count,
            data_bytes,
            ..Default::default()
        };
        for index in &def.indexes {
            let range = keys::index_range(def.table_id(), strata_types::IndexId(index.id));
            let (distinct, bytes) = count_range(&mut txn, range, Some((&def, index)))?;
            stats.index_distinct.insert(index.id, distinct);
            stats.index_bytes += bytes;
        }
        txn.rollback();
        // Published as a schema change, so every SQL node plans with the new statistics.
        let _ddl = self.lock_for_ddl()?;
        self.change(|schema, txn| {
            if schema.table(db, table)?.id != def.id {
                return Ok(()); // dropped or truncated meanwhile: the counts are of nothing
            }
            txn.put(stats_key(def.id), encode_json(&stats));
            schema.stats.insert(def.id, Arc::new(stats.clone()));
            Ok(())
        })?;
        Ok(())
    }
}

enum BackfillError {
    Retry,
    Fail(crate::error::Error),
}

impl BackfillError {
    fn from_txn(e: TxnError) -> BackfillError {
        match e {
            TxnError::Kv(strata_txn::KvError::WriteConflict { .. })
            | TxnError::Kv(strata_txn::KvError::KeyIsLocked(_))
            | TxnError::Kv(strata_txn::KvError::LockWaitTimeout { .. }) => BackfillError::Retry,
            other => BackfillError::Fail(other.into()),
        }
    }
}

/// Counts the entries of a range (rows), or the distinct index values in it, and the bytes
/// of its keys and values.
fn count_range(
    txn: &mut Transaction,
    range: keys::KeyRange,
    index: Option<(&TableDef, &IndexDef)>,
) -> Result<(u64, u64)> {
    let mut start = range.start.clone();
    let mut count = 0;
    let mut bytes = 0u64;
    let mut previous: Option<Vec<Datum>> = None;
    loop {
        let page = txn.scan(&start, &range.end, 4096, false)?;
        let done = page.len() < 4096;
        for (key, value) in &page {
            bytes += (key.len() + value.len()) as u64;

            match index {
                None => count += 1,
                Some((_, index)) => {
                    let mut input = key.get(keys::INDEX_PREFIX_LEN..).unwrap_or_default();
                    let values = strata_codec::memcomparable::decode_key_datums(
                        &mut input,
                        index.columns.len(),
                    )?;
                    if previous.as_ref() != Some(&values) {
                        count += 1;
                        previous = Some(values);
                    }
                }
            }
        }
        match page.last() {
            Some((last, _)) if !done => start = [last.as_slice(), &[0]].concat(),
            _ => return Ok((count, bytes)),
        }
    }
}
