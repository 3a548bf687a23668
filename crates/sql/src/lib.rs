//! strata-sql: sessions, parsing, planning and execution of SQL over the transaction client.
//!
//! The layer reaches storage only through [`strata_txn`]: rows and index entries are keys
//! (see the `rows` module), the catalog is keys too (see [`catalog`]). It keeps no data of its
//! own, so any number of SQL nodes can serve one store. Not here: the wire protocol
//! (strata-mysql).
//!
//! # The life of a statement
//!
//! 1. **Wire.** strata-mysql reads a COM_QUERY or a COM_STMT_EXECUTE and calls
//!    [`Session::execute_text`] or [`Session::execute_prepared`].
//! 2. **Parse.** [`parse::parse`] tokenizes the text (executable comments run, optimizer hints
//!    dropped), reads MySQL's own statements (the SHOW forms sqlparser lacks, ANALYZE, DO, …)
//!    into [`statement::Statement`] variants ([`statement::parse_mysql_only`]) and the others
//!    with sqlparser in [`dialect::StrataDialect`], keeping what sqlparser's tree has no place
//!    for beside it ([`parse::Extras`]). Nothing is routed by matching text.
//! 3. **Route.** A session runs each statement in the right transaction
//!    ([`session::Session`]): queries and DML go to planning, SET, USE, DDL and the SHOW forms
//!    sqlparser reads to [`show::execute_other`], Strata's own statements to
//!    [`show::execute_mysql_only`].
//! 4. **Plan.** [`query::plan_select`] resolves the FROM clause ([`join::from_relations`]),
//!    binds names and subqueries against its scope ([`bind::Binder`], [`subquery`]), infers
//!    result types ([`expr::typed`]), chooses each table's access path from statistics
//!    ([`query::Access`]) and the join order ([`join`]), and returns a [`query::SelectPlan`]:
//!    a record of the pipeline's parts. DML plans in [`dml`]. A prepared statement caches
//!    its plan for its schema version.
//! 5. **Execute.** [`executor::build`] turns the plan into a tree of physical operators, one
//!    file each under [`executor`]: a scan of the access path through a
//!    [`strata_txn::Transaction`] ([`executor::scan::Scan`], or a join of several,
//!    [`executor::join::execute`]), then subqueries, grouping ([`executor::grouping::Grouping`]), HAVING, windows,
//!    the projection (each value in its column's type, [`expr::conform`]), DISTINCT, sort and
//!    limit. [`executor::execute`] pulls batches of rows from its root, so a LIMIT stops the
//!    scan below it; EXPLAIN prints the same tree ([`executor::Node`]).
//! 6. **Commit.** An autocommit statement commits at once (one-phase, async or two-phase
//!    commit, chosen in strata-txn); one that meets a concurrent commit runs again from
//!    scratch ([`error::Error::is_retryable`]). Inside a transaction a failed statement is
//!    undone alone, except a deadlock, which ends the transaction.
//! 7. **Answer.** The session returns an [`Output`] (rows or OK); an [`Error`] becomes
//!    MySQL's code, SQLSTATE and message there ([`error::Error::to_packet`]).
//!
//! The map names private items: rustdoc checks that each link resolves, so the map fails
//! `cargo doc` when it goes stale.
#![allow(rustdoc::private_intra_doc_links)]

mod api;
mod autoid;
mod bind;
pub mod catalog;
mod create_as;
mod cte;
mod datatype;
mod ddl;
mod dialect;
mod dml;
mod error;
mod exec;
mod executor;
mod explain;
mod expr;
#[doc(hidden)]
pub mod fuzzing;
mod infoschema;
mod join;
mod members;
mod memory;
mod names;
mod parse;
mod parse_alter;
mod parse_sets;
mod process;
mod query;
mod rows;
mod schema_sync;
mod session;
mod show;
mod statement;
mod subquery;
mod synth;
pub mod types;
mod union;
mod vars;
mod view;
mod window;

pub use api::*;
pub use error::Error;
pub use parse::Batch;
pub use process::{Client, KillHook};
pub use session::{Session, SqlServer};
pub use strata_codec::Datum;
pub use vars::{MAX_CONNECTIONS_DEFAULT, SERVER_VERSION};
