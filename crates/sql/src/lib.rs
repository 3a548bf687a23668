//! strata-sql: sessions, parsing, planning and execution of SQL over the transaction client.
//!
//! The layer reaches storage only through [`strata_txn`]: rows and index entries are keys
//! (see the `rows` module), the catalog is keys too (see [`catalog`]). It keeps no data of its
//! own, so any number of SQL nodes can serve one store. Not here: the wire protocol
//! (strata-mysql).
//!
//! # The life of a statement
//!
//! The folders are the stages: [`parser`], [`planner`], [`executor`]; the session
//! ([`session`]) routes between them, and the statements that are not queries have their
//! handlers ([`dml`], [`ddl`], [`show`]).
//!
//! 1. **Wire.** strata-mysql reads a COM_QUERY or a COM_STMT_EXECUTE and calls
//!    [`Session::execute_batch_into`] or [`Session::execute_prepared_into`] with a
//!    [`ResultSink`] that writes to the client.
//! 2. **Parse.** [`parser::parse`] tokenizes the text (executable comments run, optimizer hints
//!    dropped), reads MySQL's own statements (the SHOW forms sqlparser lacks, ANALYZE, DO, …)
//!    into [`parser::statement::Statement`] variants
//!    ([`parser::statement::parse_mysql_only`]) and the others with sqlparser in
//!    [`parser::dialect::StrataDialect`], keeping what sqlparser's tree has no place for
//!    beside it ([`parser::Extras`]). Nothing is routed by matching text.
//! 3. **Route.** A session first holds each statement against its account's privileges
//!    ([`account::check`]; 1142, 1044 or 1227 before anything runs), then runs it in the right
//!    transaction ([`session::Session`]): queries and DML go to planning, SET, USE, DDL and
//!    the SHOW forms sqlparser reads to [`show::execute_other`], Strata's own statements to
//!    [`show::execute_mysql_only`].
//! 4. **Plan.** [`planner::query::plan_select`] resolves the FROM clause
//!    ([`planner::join::from_relations`]), binds names and subqueries against its scope
//!    ([`planner::bind::Binder`], [`planner::subquery`]) and infers result types
//!    ([`expr::typed`]); the bound block becomes a logical plan, a tree of nodes from the FROM
//!    clause's rows up to LIMIT ([`planner::logical::Plan`]). The optimizer's passes rewrite it
//!    ([`planner::optimize`]): conditions of literals decided, conditions pushed into the scan
//!    or join, each table's access path chosen from statistics ([`planner::access::Access`])
//!    and the join order ([`planner::join`]), sorts the scan order serves dropped, the columns
//!    read pruned, a LIMIT pushed into the scan it may stop. [`planner::physical::lower`] makes
//!    of it the tree of physical operators ([`planner::physical::Plan`]: a sort the scan's
//!    order serves gone, conditions on subquery values with the Apply that computes them), the
//!    [`planner::physical::SelectPlan`]. The state planning keeps while it descends goes down in
//!    a [`planner::query::PlanContext`]. DML plans in [`dml`]. A prepared statement caches
//!    its plan for its schema version.
//! 5. **Execute.** [`executor::build`] makes an operator of each node of the plan, one
//!    file each under [`executor`]: a scan of the access path through a
//!    [`strata_txn::Transaction`] ([`executor::scan::Scan`], or a join of several,
//!    [`executor::join::Join`], which is pulled a batch at a time too), then subqueries, grouping
//!    ([`executor::grouping::Grouping`]), HAVING, windows, the projection (each value in its
//!    column's type, [`expr::conform`]), DISTINCT, sort and limit. [`executor::execute_into`]
//!    pulls batches of rows from its root, so a LIMIT stops the scan below it, and hands a
//!    result past [`STREAM_AFTER_BYTES`] to the sink batch by batch instead of holding it;
//!    EXPLAIN prints the same tree ([`executor::Node`]).
//! 6. **Commit.** An autocommit statement commits at once (one-phase, async or two-phase
//!    commit, chosen in strata-txn); one that meets a concurrent commit runs again from
//!    scratch ([`error::Error::is_retryable`]). Inside a transaction a failed statement is
//!    undone alone, except a deadlock, which ends the transaction.
//! 7. **Answer.** The session hands the sink an [`Output`] per statement (rows, the end of
//!    streamed rows, or OK) as each ends; an [`Error`] becomes
//!    MySQL's code, SQLSTATE and message there ([`error::Error::to_packet`]).
//!
//! The map names private items: rustdoc checks that each link resolves, so the map fails
//! `cargo doc` when it goes stale.
#![allow(rustdoc::private_intra_doc_links)]

pub mod account;
mod api;
mod autoid;
pub mod catalog;
mod charset;
mod create_as;
mod datatype;
mod ddl;
mod dml;
mod error;
mod exec;
mod executor;
mod explain;
mod expr;
#[doc(hidden)]
pub mod fuzzing;
mod infoschema;
mod members;
mod memory;
pub mod metrics;
mod mysqlschema;
mod names;
mod parser;
mod peers;
mod planner;
mod process;
mod rows;
mod schema_sync;
mod session;
mod show;
pub mod slowlog;
pub mod summary;
pub mod types;
mod vars;
mod view;

pub use account::{Blocked, Credential, Identity, Login, TlsRequirement};
pub use api::*;
pub use error::Error;
pub use executor::STREAM_AFTER_BYTES;
pub use parser::bytes::decode as decode_statement_text;
pub use parser::Batch;
pub use process::{Client, KillHook};
pub use session::{Session, SqlServer};
pub use strata_codec::Datum;
pub use vars::{MAX_CONNECTIONS_DEFAULT, SERVER_VERSION};
