//! `SHOW [GLOBAL | SESSION] STATUS`: MySQL's status variables that Strata counts, in its
//! alphabetical order. A session's own counters (`Com_…`, `Questions`) are its own under
//! SESSION (the default) and the whole server's under GLOBAL; the others are the server's.

use strata_codec::Datum;

use super::{rows, text, text_column};
use crate::api::Output;
use crate::metrics::{self, StatementKind};
use crate::session::Session;

pub(crate) fn status(session: &Session, global: bool) -> Output {
    let counts = session.statement_counts();
    let count = |kind: StatementKind| {
        if global {
            metrics::statements(kind)
        } else {
            counts.get(kind)
        }
    };
    let questions: u64 = if global {
        StatementKind::ALL
            .iter()
            .map(|k| metrics::statements(*k))
            .sum()
    } else {
        counts.total()
    };
    let (connected, connections) = metrics::connections();
    let running = session
        .processes()
        .iter()
        .filter(|p| p.info.is_some())
        .count();
    let uptime = metrics::uptime().as_secs();
    let (ssl_version, ssl_cipher) = session.tls().cloned().unwrap_or_default();
    let mut values: Vec<(String, String)> = StatementKind::ALL
        .iter()
        .filter_map(|kind| {
            kind.com_variable()
                .map(|name| (name.to_string(), count(*kind).to_string()))
        })
        .collect();
    values.extend([
        (
            "Caching_sha2_password_rsa_public_key".to_string(),
            session.rsa_public_key(),
        ),
        ("Connections".to_string(), connections.to_string()),
        ("Queries".to_string(), questions.to_string()),
        ("Questions".to_string(), questions.to_string()),
        ("Ssl_cipher".to_string(), ssl_cipher),
        ("Ssl_version".to_string(), ssl_version),
        ("Threads_connected".to_string(), connected.to_string()),
        ("Threads_running".to_string(), running.to_string()),
        ("Uptime".to_string(), uptime.to_string()),
        ("Uptime_since_flush_status".to_string(), uptime.to_string()),
    ]);
    values.sort();
    rows(
        vec![text_column("Variable_name"), text_column("Value")],
        values
            .into_iter()
            .map(|(name, value)| vec![text(&name), Datum::Bytes(value.into_bytes())])
            .collect(),
    )
}
