//! strata-sql: sessions, parsing, planning and execution of SQL over the transaction client.
//!
//! ```text
//!  text ──parse──▶ sqlparser AST ──plan──▶ Plan (bound exprs, access path) ──execute──▶ Output
//!                                  ▲ cached per prepared statement and schema version
//! ```
//!
//! The layer reaches storage only through [`strata_txn`]: rows and index entries are keys
//! (see the `rows` module), the catalog is keys too (see [`catalog`]). It keeps no data of its own, so
//! any number of SQL nodes can serve one store.
//!
//! Not here: the wire protocol (strata-mysql).

mod aggregate;
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
mod explain;
mod expr;
mod infoschema;
mod join;
mod members;
mod names;
mod parse;
mod parse_alter;
mod query;
mod rows;
mod schema_sync;
mod session;
mod show;
mod subquery;
pub mod types;
mod union;
mod vars;
mod view;
mod window;

pub use api::*;
pub use error::Error;
pub use session::{Session, SqlServer};
pub use strata_codec::Datum;
pub use vars::SERVER_VERSION;
