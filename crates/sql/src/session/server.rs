//! The SQL layer of one server: the catalog, the global variables and the process list that
//! every session shares, and the accounts clients log in as.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::RwLock;
use strata_codec::Datum;
use strata_txn::TxnClient;

use super::access::check_account;
use super::Session;
use crate::account::{self, Identity};
use crate::api::SqlError;
use crate::ddl::Catalog;
use crate::error::{self, Error, Result};
use crate::parser;
use crate::process::{Client, ProcessList};
use crate::vars;

/// The SQL layer shared by every connection of one server.
pub struct SqlServer {
    pub(crate) catalog: Arc<Catalog>,
    pub(super) client: TxnClient,
    pub(super) globals: RwLock<HashMap<String, Datum>>,
    pub(crate) processes: ProcessList,
    /// Failed logins of accounts with FAILED_LOGIN_ATTEMPTS.
    failed_logins: account::FailedLogins,
    /// The fast-path hashes of `caching_sha2_password` accounts that logged in here.
    sha2_cache: account::Sha2Cache,
    /// The RSA public key clients encrypt passwords with
    /// (`Caching_sha2_password_rsa_public_key`), once the protocol server has one.
    rsa_public_key: RwLock<String>,
    /// Bumped by every SET GLOBAL, so sessions read again what they keep of the globals.
    globals_version: std::sync::atomic::AtomicU64,
    /// The statements run, by digest (information_schema.STATEMENTS_SUMMARY).
    pub(super) summary: crate::summary::StatementSummary,
    /// The address clients reach this node at (CLUSTER_PROCESSLIST's INSTANCE).
    instance: RwLock<String>,
}

impl SqlServer {
    /// Opens the SQL layer over a transaction client, loading the catalog.
    pub fn open(client: TxnClient) -> Result<Arc<SqlServer>> {
        crate::metrics::init();
        let catalog = Catalog::open(client.clone())?;
        let processes = ProcessList::default();
        let memory_limit = processes.memory().limit();
        Ok(Arc::new(SqlServer {
            catalog,
            client,
            globals: RwLock::new(HashMap::from([(
                "tidb_server_memory_limit".to_string(),
                Datum::Int(i64::try_from(memory_limit).unwrap_or(i64::MAX)),
            )])),
            processes,
            failed_logins: account::FailedLogins::default(),
            sha2_cache: account::Sha2Cache::default(),
            rsa_public_key: RwLock::new(String::new()),
            globals_version: std::sync::atomic::AtomicU64::new(0),
            summary: Default::default(),
            instance: RwLock::new(String::new()),
        }))
    }

    /// The version of the global variables (see `globals_version`).
    pub(super) fn globals_version(&self) -> u64 {
        self.globals_version
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub(super) fn globals_changed(&self) {
        self.globals_version
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// The statements this server ran, by digest.
    pub fn statement_summary(&self) -> &crate::summary::StatementSummary {
        &self.summary
    }

    /// Records the address clients reach this node at (`host:port`).
    pub fn set_instance(&self, address: &str) {
        *self.instance.write() = address.to_string();
    }

    /// The address clients reach this node at.
    pub fn instance(&self) -> String {
        self.instance.read().clone()
    }

    /// Brings the metrics that are read rather than counted up to date (before a scrape of
    /// `/metrics`): the statements' working memory.
    pub fn refresh_metrics(&self) {
        let pool = self.processes.memory();
        crate::metrics::set_memory(pool.reserved(), pool.largest(), pool.limit());
    }

    /// Makes `path` the slow log file of this process (`slow_query_log_file`).
    pub fn set_slow_log_file(&self, path: &std::path::Path) {
        crate::slowlog::set_file(path);
    }

    /// Starts a thread that picks up schema changes made by other SQL nodes of the cluster
    /// and reports this node's schema versions to them (see schema_sync.rs); it ends when the
    /// server is dropped.
    ///
    /// The node also claims its slot of connection ids and starts answering requests of other
    /// nodes to kill its connections (peers.rs).
    pub fn start_schema_sync(self: &Arc<Self>) -> Result<std::thread::JoinHandle<()>> {
        let sync = self.catalog.start_sync()?;
        let member = *self.catalog.member.get().expect("set by start_sync");
        let slot = crate::peers::claim_slot(&self.client, member)?;
        self.processes.set_slot(slot);
        crate::peers::start_answering(self.client.clone(), slot, Arc::downgrade(self));
        Ok(sync)
    }

    /// Withdraws this node's schema report and its slot of connection ids when it stops
    /// serving (see schema_sync.rs).
    pub fn leave_schema_sync(&self) {
        self.catalog.leave_sync();
        if let Some(slot) = self.processes.slot() {
            crate::peers::release_slot(&self.client, slot);
        }
    }

    /// Stops connection `id` of another SQL node of the cluster, for `user` (who may stop
    /// others' connections when `may_kill_others`): 1094 when no node has it.
    pub(crate) fn kill_elsewhere(
        &self,
        id: u32,
        scope: crate::process::KillScope,
        user: &str,
        may_kill_others: bool,
    ) -> Result<()> {
        let slot = crate::peers::slot_of(id);
        if slot == 0 || Some(slot) == self.processes.slot() {
            return Err(crate::peers::unknown_thread(id));
        }
        crate::peers::kill_elsewhere(&self.client, id, scope, user, may_kill_others)
    }

    /// Opens a session of this process for `user`, optionally in a database (1049 if
    /// unknown).
    pub fn new_session(
        self: &Arc<Self>,
        user: &str,
        database: Option<&str>,
    ) -> std::result::Result<Session, SqlError> {
        let client = Client {
            connection_id: self.next_connection_id(),
            user: user.to_string(),
            host: "localhost".to_string(),
            on_kill: None,
            ..Client::default()
        };
        self.open_session(client, database)
    }

    /// `@@global.max_connections`: how many authenticated connections the protocol server
    /// serves at once.
    pub fn max_connections(&self) -> usize {
        match self.globals.read().get("max_connections") {
            Some(Datum::Int(n)) => usize::try_from(*n).unwrap_or(0),
            _ => vars::MAX_CONNECTIONS_DEFAULT,
        }
    }

    /// Sets `@@global.max_connections` (from the protocol server's configuration).
    pub fn set_max_connections(&self, limit: usize) {
        let value = vars::normalize("max_connections", Datum::UInt(limit as u64))
            .unwrap_or(Datum::Int(vars::MAX_CONNECTIONS_DEFAULT as i64));
        self.globals
            .write()
            .insert("max_connections".to_string(), value);
    }

    /// Records the Unix socket the protocol server listens on (`@@socket`).
    pub fn set_socket(&self, path: &str) {
        self.globals
            .write()
            .insert("socket".to_string(), Datum::Bytes(path.as_bytes().to_vec()));
    }

    /// Records that the protocol server offers TLS (`@@have_ssl` is YES).
    pub fn set_tls_offered(&self) {
        self.globals
            .write()
            .insert("have_ssl".to_string(), Datum::Bytes(b"YES".to_vec()));
    }

    /// `@@global.require_secure_transport`: whether plain connections are refused (3159).
    pub fn require_secure_transport(&self) -> bool {
        matches!(
            self.globals.read().get("require_secure_transport"),
            Some(Datum::Int(n)) if *n != 0
        )
    }

    /// Sets `@@global.require_secure_transport` (from the server's configuration).
    pub fn set_require_secure_transport(&self, on: bool) {
        self.globals.write().insert(
            "require_secure_transport".to_string(),
            Datum::Int(i64::from(on)),
        );
        self.globals_changed();
    }

    /// Sets how many bytes the statements of all sessions may hold together (8176 beyond;
    /// 0 for no limit): `@@global.tidb_server_memory_limit`.
    pub fn set_memory_limit(&self, bytes: u64) {
        let limit = if bytes == 0 { u64::MAX } else { bytes };
        self.processes.memory().set_limit(limit);
        self.globals.write().insert(
            "tidb_server_memory_limit".to_string(),
            Datum::Int(i64::try_from(bytes).unwrap_or(i64::MAX)),
        );
        self.globals_changed();
    }

    /// A fresh connection id, for the handshake of a connection whose session opens later.
    pub fn next_connection_id(&self) -> u32 {
        self.processes.next_id()
    }

    /// Opens the session of an authenticated client, optionally in a database (1049 if
    /// unknown).
    pub fn open_session(
        self: &Arc<Self>,
        client: Client,
        database: Option<&str>,
    ) -> std::result::Result<Session, SqlError> {
        let schema = self.catalog.schema();
        let active_roles: Vec<Identity> = client
            .account
            .as_ref()
            .and_then(|identity| schema.accounts.get(identity))
            .map(|a| a.default_roles.iter().cloned().collect())
            .unwrap_or_default();
        if let Some(db) = database {
            if let Some(identity) = &client.account {
                let needs = [account::check::Need::AnyOnDatabase(db.to_string())];
                check_account(&schema, identity, &active_roles, &needs)
                    .map_err(Error::into_packet)?;
            }
            if !schema.databases.contains_key(db) {
                return Err(error::unknown_database(db).into_packet());
            }
        }
        Ok(Session {
            server: self.clone(),
            user: client.user.clone(),
            account: client.account.clone(),
            tls: client.tls.clone(),
            active_roles,
            effective: RefCell::new(None),
            password_expired: client.password_expired,
            database: database.map(str::to_string),
            vars: HashMap::new(),
            user_vars: RefCell::new(HashMap::new()),
            txn: None,
            prepared: HashMap::new(),
            next_statement_id: 1,
            last_insert_id: 0,
            found_rows: 0,
            extras: parser::Extras::default(),
            counts: Default::default(),
            observing: Default::default(),
            settings: Default::default(),
            row_count: -1,
            client_found_rows: client.found_rows,
            process: self.processes.register(client, database),
            // As MySQL, a session starts with the global sql_mode.
            modes: self
                .globals
                .read()
                .get("sql_mode")
                .map(vars::parser_modes)
                .unwrap_or_default(),
        })
    }

    /// The transaction client the server reaches storage through.
    pub(crate) fn client(&self) -> &TxnClient {
        &self.client
    }

    pub fn catalog(&self) -> &Arc<Catalog> {
        &self.catalog
    }

    /// The account a client named `user` connecting from `peer` (an IP address) logs in as.
    pub fn find_login(&self, user: &str, peer: &str) -> Option<account::Login> {
        let schema = self.catalog.schema();
        let account = schema.accounts.find(user, peer)?;
        let mut login = account.login();
        if let account::Credential::Sha2Crypt { cached, .. } = &mut login.credential {
            *cached = self.sha2_cache.get(&login.identity, &account.auth_string);
        }
        Some(login)
    }

    /// Keeps SHA256(SHA256(password)) of `login`, a `caching_sha2_password` account whose
    /// password a client just proved in full, for the fast path of its next logins here.
    pub fn remember_sha2(&self, login: &account::Login, hash: [u8; 32]) {
        let schema = self.catalog.schema();
        if let Some(account) = schema.accounts.get(&login.identity) {
            self.sha2_cache
                .insert(&login.identity, &account.auth_string, hash);
        }
    }

    /// Empties what `FLUSH PRIVILEGES` empties: the fast-path cache of `caching_sha2_password`.
    pub(crate) fn flush_privileges(&self) {
        self.sha2_cache.clear();
    }

    /// Notes the RSA public key of `caching_sha2_password` (PEM).
    pub fn set_rsa_public_key(&self, pem: &str) {
        *self.rsa_public_key.write() = pem.to_string();
    }

    pub(crate) fn rsa_public_key(&self) -> String {
        self.rsa_public_key.read().clone()
    }

    /// Notes a login as `login` with a right or wrong password; `Some` refuses it, the
    /// account being blocked by FAILED_LOGIN_ATTEMPTS (error 3955).
    pub fn login_outcome(
        &self,
        login: &account::Login,
        password_ok: bool,
    ) -> Option<account::Blocked> {
        self.failed_logins.outcome(login, password_ok)
    }

    /// The accounts anyone may log in as without a password.
    pub fn accounts_without_password(&self) -> Vec<Identity> {
        self.catalog
            .schema()
            .accounts
            .iter()
            .filter(|a| a.auth_string.is_empty() && !a.locked)
            .map(|a| a.identity())
            .collect()
    }

    /// Creates the first account of a catalog that has none (a new data folder): `root` on
    /// `host` with `password` (empty for none) and every privilege. A catalog with accounts
    /// keeps them.
    pub fn bootstrap_root(&self, host: &str, password: &str) -> Result<()> {
        let mut root = account::Account::new(&Identity::new("root", host));
        root.auth_string = account::stored_secret(account::NATIVE_PASSWORD, password);
        root.global = account::Privileges::all_global().union(account::Privileges::GRANT_OPTION);
        self.catalog.bootstrap_accounts(root)
    }
}
