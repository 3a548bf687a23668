//! How a session runs a SELECT: in its transaction or a snapshot of its own, its result
//! held or streamed to the client's sink, and EXPLAIN ANALYZE's measured run.

use strata_codec::Datum;
use strata_txn::{Transaction, TxnMode};

use super::{Env, Session, STATEMENT_ATTEMPTS_MAX};
use crate::api::{Output, RowSink, SessionStatus};
use crate::error::{Error, Result};
use crate::exec::{self, Ctx};
use crate::planner::physical::SelectPlan;
use crate::planner::query;

impl Session {
    /// Runs a SELECT. With `sink`, a large result of a read that does not lock goes there
    /// while it runs (a locking read may be retried, and SQL_CALC_FOUND_ROWS runs twice: their
    /// results are held whole).
    pub(super) fn run_select(
        &mut self,
        plan: &SelectPlan,
        params: &[Datum],
        sink: Option<&mut dyn RowSink>,
    ) -> Result<Output> {
        let streamable = plan.lock == query::RowLock::None && !self.extras.calc_found_rows;
        if let (Some(sink), true) = (sink, streamable) {
            let status = SessionStatus {
                in_transaction: self.explicit_txn_active(),
                autocommit: self.autocommit(),
            };
            let selected = self.reading(plan, |session, txn| {
                let env = Env { session };
                let ctx = Ctx::new(params, &env, false);
                crate::executor::execute_into(plan, txn, &ctx, &mut *sink, status)
            })?;
            return Ok(match selected {
                crate::executor::Selected::Rows(rows) => {
                    let found = rows.len() as u64;
                    self.result_set(plan, (rows, found))
                }
                crate::executor::Selected::Sent(rows) => {
                    self.found_rows = rows;
                    self.row_count = -1;
                    Output::Streamed { rows }
                }
            });
        }
        let rows = self.reading(plan, |session, txn| session.select_in(txn, plan, params))?;
        Ok(self.result_set(plan, rows))
    }

    /// Runs `read` (a SELECT of `plan`) in the session's transaction, else in a snapshot of
    /// its own; a locking read that meets a concurrent commit is retried.
    pub(super) fn reading<T>(
        &mut self,
        plan: &SelectPlan,
        mut read: impl FnMut(&Session, &mut Transaction) -> Result<T>,
    ) -> Result<T> {
        let locking = plan.lock == query::RowLock::ForUpdate;
        if !self.explicit_txn_active() {
            // One key needs no snapshot: read its newest data without a timestamp.
            let mut txn = if plan.reads_one_key() {
                self.server.client.begin_latest_read()
            } else {
                self.server.client.begin(TxnMode::Optimistic)?
            };
            txn.set_interrupt(self.process.clone());
            let result = read(self, &mut txn);
            self.note_txn(&txn);
            txn.rollback();
            return result;
        }
        self.ensure_txn()?;
        let mut open = self.txn.take().expect("transaction ensured");
        let mut attempt = 0;
        let result = loop {
            attempt += 1;
            if let Err(e) = open.txn.begin_statement(locking) {
                break Err(Error::Txn(e));
            }
            match read(self, &mut open.txn) {
                Err(e) if locking && e.is_retryable() && attempt < STATEMENT_ATTEMPTS_MAX => {
                    crate::metrics::retried(crate::metrics::Retry::of(&e));
                    open.txn.rollback_statement();
                }
                other => break other,
            }
        };
        self.finish_statement(open, result)
    }

    /// EXPLAIN ANALYZE of a SELECT: runs it as it would run (its rows are not sent), with
    /// each operator of its block measured; returns the operator tree with what each did.
    pub(crate) fn analyze_select(&mut self, plan: &SelectPlan) -> Result<crate::executor::Node> {
        self.reading(plan, |session, txn| {
            let env = Env { session };
            let ctx = Ctx::new(&[], &env, false);
            crate::executor::analyze(plan, txn, &ctx)
        })
    }

    fn select_in(
        &self,
        txn: &mut Transaction,
        plan: &SelectPlan,
        params: &[Datum],
    ) -> Result<(Vec<Vec<Datum>>, u64)> {
        let env = Env { session: self };
        let ctx = Ctx::new(params, &env, false);
        let (rows, mut keys) = exec::execute_select(plan, txn, &ctx)?;
        if plan.lock == query::RowLock::ForUpdate {
            // Rows looked up by their primary key are locked even when they are missing (as
            // TiDB's point gets lock them), so that no one inserts them before this
            // transaction ends: what it read stays what there is.
            if let Some(source) = plan.scan_source() {
                keys.extend(exec::point_keys(source, &ctx)?);
            }
            if !keys.is_empty() {
                crate::dml::lock_keys(txn, keys, self.lock_wait_ms(), &ctx)?;
            }
        }
        // SQL_CALC_FOUND_ROWS: FOUND_ROWS() counts the rows LIMIT left out too.
        let found = if self.extras.calc_found_rows && plan.is_limited() {
            exec::execute_select(&plan.without_limit(), txn, &ctx)?
                .0
                .len()
        } else {
            rows.len()
        };
        Ok((rows, found as u64))
    }

    fn result_set(&mut self, plan: &SelectPlan, (rows, found): (Vec<Vec<Datum>>, u64)) -> Output {
        self.found_rows = found;
        self.row_count = -1;
        Output::ResultSet {
            columns: plan.columns.clone(),
            rows,
        }
    }
}
