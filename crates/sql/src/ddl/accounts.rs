//! Account changes: the catalog writes the accounts a statement changed, under the DDL lock and
//! with a new schema version, so every SQL node loads them with the schema.

use std::sync::Arc;

use crate::account::{Account, Accounts};
use crate::catalog::{encode_json, user_key, META_USERS_KEY};
use crate::error::Result;

use super::Catalog;

/// Attempts of the first node to create the accounts when other nodes may be doing the same.
const BOOTSTRAP_ATTEMPTS: usize = 5;

impl Catalog {
    /// Applies `edit` to the newest accounts and stores the accounts it added, changed or
    /// removed; an error from `edit` changes nothing.
    pub(crate) fn edit_accounts(
        &self,
        edit: impl FnOnce(&mut Accounts) -> Result<()>,
    ) -> Result<()> {
        let _ddl = self.lock_for_ddl()?;
        let old = self.schema().accounts.clone();
        let mut new = (*old).clone();
        edit(&mut new)?;
        new.initialized = true;
        let removed: Vec<_> = old
            .iter()
            .filter(|a| new.get(&a.identity()).is_none())
            .map(|a| a.identity())
            .collect();
        let written: Vec<Arc<Account>> = new
            .iter()
            .filter(|a| old.get(&a.identity()) != Some(*a))
            .cloned()
            .collect();
        if old.initialized && removed.is_empty() && written.is_empty() {
            return Ok(());
        }
        let new = Arc::new(new);
        self.change(|schema, txn| {
            txn.put(META_USERS_KEY.to_vec(), Vec::new());
            for identity in &removed {
                txn.delete(user_key(identity));
            }
            for account in &written {
                txn.put(user_key(&account.identity()), encode_json(&**account));
            }
            schema.accounts = new.clone();
            Ok(())
        })?;
        Ok(())
    }

    /// Creates `first` as the only account of a catalog that never had accounts (a new data
    /// folder, or one from before accounts); does nothing to one that has them.
    pub fn bootstrap_accounts(&self, first: Account) -> Result<()> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = self.edit_accounts(|accounts| {
                if !accounts.initialized {
                    accounts.insert(first.clone());
                }
                Ok(())
            });
            match result {
                // Another SQL node created them at the same moment: look again.
                Err(e) if e.is_retryable() && attempt < BOOTSTRAP_ATTEMPTS => continue,
                other => return other,
            }
        }
    }
}
