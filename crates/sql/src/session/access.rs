//! What a session's account may do: the check before each statement, what it may see, and the
//! catalog a statement is planned against.

use std::sync::Arc;

use sqlparser::ast::{self, Statement};

use super::Session;
use crate::account::{self, Identity};
use crate::catalog::Schema;
use crate::error::{Error, Result};
use crate::parser::statement;

/// What a prepared statement needs of its account ([`account::check::needs`]), with the
/// database it was read in.
pub(super) type CachedNeeds = Option<(Option<String>, Arc<[account::check::Need]>)>;

impl Session {
    /// Refuses a statement the session's account may not run (1142, 1044, 1227), and every
    /// statement but a password change while its password is expired (1820). A prepared
    /// statement keeps what it needs in `cached`, read again only when the database changes.
    pub(super) fn check_privileges(
        &self,
        statement: &statement::Statement,
        cached: Option<&mut CachedNeeds>,
    ) -> Result<()> {
        let Some(identity) = &self.account else {
            return Ok(());
        };
        if self.password_expired {
            use crate::parser::account::AccountStatement;
            let changes_password = matches!(
                statement,
                statement::Statement::Account(
                    AccountStatement::AlterUser { .. } | AccountStatement::SetPassword { .. }
                )
            );
            if !changes_password {
                return Err(Error::new(
                    1820,
                    "HY000",
                    "You must reset your password using ALTER USER statement before executing this statement.",
                ));
            }
        }
        let schema = self.server.catalog.schema();
        // An account with every global privilege may run anything: no need to read the
        // statement (the common case of root, and the one that must cost nothing).
        let account = self.cached_effective(&schema, identity);
        if account.global.contains(account::Privileges::all_global()) {
            return Ok(());
        }
        let Some(cached) = cached else {
            let needs = account::check::needs(statement, self.database.as_deref());
            return account::check::check(&account, &needs, &columns_in(&schema));
        };
        let needs = match cached {
            Some((database, needs)) if *database == self.database => needs.clone(),
            _ => {
                let needs: Arc<[account::check::Need]> =
                    account::check::needs(statement, self.database.as_deref()).into();
                *cached = Some((self.database.clone(), needs.clone()));
                needs
            }
        };
        let columns = columns_in(&schema);
        account::check::check(&account, &needs, &columns)
    }

    /// [`Session::effective_account`] for the hot path: read once per schema version (every
    /// account change makes a new one) and per `SET ROLE`.
    fn cached_effective(&self, schema: &Schema, identity: &Identity) -> Arc<account::Account> {
        let mut cache = self.effective.borrow_mut();
        match &*cache {
            Some((version, account)) if *version == schema.version => account.clone(),
            _ => {
                let account = Arc::new(schema.accounts.effective(identity, &self.active_roles));
                *cache = Some((schema.version, account.clone()));
                account
            }
        }
    }

    /// The catalog a statement is planned against: all of it, but for an account without
    /// every global privilege reading information_schema, only what the account may see.
    pub(super) fn schema_for(&self, statement: &Statement, schema: Arc<Schema>) -> Arc<Schema> {
        let Some(identity) = &self.account else {
            return schema;
        };
        let account = self.cached_effective(&schema, identity);
        if account.global.contains(account::Privileges::all_global()) {
            return schema;
        }
        let reads_information_schema = ast::visit_relations(statement, |name| {
            match name.0.first().and_then(|part| part.as_ident()) {
                Some(db)
                    if name.0.len() > 1 && crate::infoschema::is_information_schema(&db.value) =>
                {
                    std::ops::ControlFlow::Break(())
                }
                _ => std::ops::ControlFlow::Continue(()),
            }
        })
        .is_break()
            || self
                .database
                .as_deref()
                .is_some_and(crate::infoschema::is_information_schema);
        if reads_information_schema {
            Arc::new(schema.visible_to(&account))
        } else {
            schema
        }
    }

    /// The account the session logged in as (None for an embedded session).
    pub(crate) fn account_identity(&self) -> Option<Identity> {
        self.account.clone()
    }

    /// The TLS protocol version and cipher of the connection; None for a plain one.
    pub(crate) fn tls(&self) -> Option<&(String, String)> {
        self.tls.as_ref()
    }

    /// The user name the client gave.
    pub(crate) fn user_name(&self) -> &str {
        &self.user
    }

    /// The session's own expired password was changed: statements may run again.
    pub(crate) fn password_was_changed(&mut self) {
        self.password_expired = false;
    }

    /// What the session's account may do with its active roles; None for an embedded
    /// session, which may do anything.
    pub(crate) fn effective_account(&self, schema: &Schema) -> Option<account::Account> {
        let identity = self.account.as_ref()?;
        Some(schema.accounts.effective(identity, &self.active_roles))
    }

    pub(crate) fn set_active_roles(&mut self, roles: Vec<Identity>) {
        self.active_roles = roles;
        *self.effective.get_mut() = None;
    }

    /// Whether the session's account may see `database` (SHOW DATABASES, information_schema).
    pub(crate) fn sees_database(&self, schema: &Schema, database: &str) -> bool {
        self.effective_account(schema).is_none_or(|a| {
            a.sees_database(database) || a.global.contains(account::Privileges::SHOW_DATABASES)
        })
    }

    /// Whether the session's account may see `database.table` (SHOW TABLES,
    /// information_schema).
    pub(crate) fn sees_table(&self, schema: &Schema, database: &str, table: &str) -> bool {
        self.effective_account(schema)
            .is_none_or(|a| a.sees_table(database, table))
    }

    /// Whether the session's account holds `privileges` globally (PROCESS, SUPER).
    pub(crate) fn has_global(&self, privileges: account::Privileges) -> bool {
        self.effective_account(&self.server.catalog.schema())
            .is_none_or(|a| a.global.intersects(privileges))
    }
}

/// Checks `needs` against the account `identity` with the roles `active`, as `schema` has
/// them; a dropped account holds nothing.
pub(super) fn check_account(
    schema: &Schema,
    identity: &Identity,
    active: &[Identity],
    needs: &[account::check::Need],
) -> Result<()> {
    let account = schema.accounts.effective(identity, active);
    account::check::check(&account, needs, &columns_in(schema))
}

/// The columns of a table or view of `schema`, for the check of grants on columns.
fn columns_in(schema: &Schema) -> impl Fn(&str, &str) -> Option<Vec<String>> + '_ {
    |database, table| account::check::column_names(schema, database, table)
}
