//! A session's transaction: BEGIN, COMMIT, ROLLBACK and savepoints, the implicit commit
//! before DDL, and the transaction a statement runs in.

use super::*;
use crate::error::Error;

impl Session {
    pub(crate) fn begin(&mut self) -> Result<Output> {
        self.commit()?;
        self.ensure_txn_in(self.extras.begin_mode.unwrap_or_else(|| self.txn_mode()))?;
        Ok(ok(0, 0))
    }

    pub(crate) fn commit(&mut self) -> Result<Output> {
        if let Some(mut open) = self.txn.take() {
            if open.txn.is_dirty() {
                // The transaction ends either way, as after any failed commit.
                let limit = self.server.catalog.check_schema_lease()?;
                open.txn.set_max_commit_ts(limit);
            }
            self.choose_commit_protocols(&mut open.txn);
            open.txn
                .commit()
                .map_err(|e| self.commit_error(Error::Txn(e)))?;
        }
        Ok(ok(0, 0))
    }

    /// Applies `tidb_enable_1pc` and `tidb_enable_async_commit` to a commit about to start.
    pub(super) fn choose_commit_protocols(&self, txn: &mut Transaction) {
        let (one_pc, async_commit) = self.commit_protocols();
        txn.set_one_pc(one_pc);
        txn.set_async_commit(async_commit);
    }

    pub(crate) fn rollback(&mut self) -> Result<Output> {
        if let Some(open) = self.txn.take() {
            open.txn.rollback();
        }
        Ok(ok(0, 0))
    }

    /// SAVEPOINT: replaces one of the same name. Outside a transaction there is nothing to
    /// mark, as in MySQL with autocommit.
    pub(crate) fn savepoint(&mut self, name: &str) -> Result<Output> {
        if self.explicit_txn_active() {
            self.ensure_txn()?;
            let open = self.txn.as_mut().expect("transaction ensured");
            open.savepoints
                .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            let point = open.txn.savepoint();
            open.savepoints.push((name.to_string(), point));
        }
        Ok(ok(0, 0))
    }

    /// ROLLBACK TO SAVEPOINT: undoes the writes since, and forgets the savepoints set after.
    pub(crate) fn rollback_to_savepoint(&mut self, name: &str) -> Result<Output> {
        let open = self.find_savepoint(name)?;
        let (i, open) = open;
        let point = open.savepoints[i].1.clone();
        open.txn.rollback_to(&point);
        open.savepoints.truncate(i + 1);
        Ok(ok(0, 0))
    }

    /// RELEASE SAVEPOINT: forgets it and those set after it.
    pub(crate) fn release_savepoint(&mut self, name: &str) -> Result<Output> {
        let (i, open) = self.find_savepoint(name)?;
        open.savepoints.truncate(i);
        Ok(ok(0, 0))
    }

    fn find_savepoint(&mut self, name: &str) -> Result<(usize, &mut OpenTxn)> {
        let missing = || Error::new(1305, "42000", format!("SAVEPOINT {name} does not exist"));
        let open = self.txn.as_mut().ok_or_else(missing)?;
        let i = open
            .savepoints
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
            .ok_or_else(missing)?;
        Ok((i, open))
    }

    /// Ends an open transaction before DDL (MySQL commits implicitly).
    pub(crate) fn implicit_commit(&mut self) -> Result<()> {
        self.commit().map(|_| ())
    }

    pub(super) fn explicit_txn_active(&self) -> bool {
        self.txn.is_some() || !self.autocommit()
    }

    pub(super) fn ensure_txn(&mut self) -> Result<()> {
        self.ensure_txn_in(self.txn_mode())
    }

    pub(super) fn ensure_txn_in(&mut self, mode: TxnMode) -> Result<()> {
        if self.txn.is_none() {
            // Registered before its start_ts is taken, so DDL that waits for it also covers it.
            let active = self.server.catalog.register_txn();
            let mut txn = self.server.client.begin(mode)?;
            txn.set_interrupt(self.process.clone());
            self.txn = Some(OpenTxn {
                txn,
                _active: active,
                savepoints: Vec::new(),
            });
        }
        Ok(())
    }

    /// Puts the transaction back after a statement, or ends it after a deadlock.
    pub(super) fn finish_statement<T>(
        &mut self,
        mut open: OpenTxn,
        result: Result<T>,
    ) -> Result<T> {
        self.note_txn(&open.txn);
        match result {
            Ok(v) => {
                self.txn = Some(open);
                Ok(v)
            }
            Err(e) => {
                if e.is_deadlock() {
                    // A deadlock ends the whole transaction, as in InnoDB.
                    open.txn.rollback();
                } else {
                    open.txn.rollback_statement();
                    self.txn = Some(open);
                }
                Err(e)
            }
        }
    }
}
