//! `KILL` across the SQL nodes of a cluster (TiDB's global kill): a connection can be stopped
//! from any SQL node, whichever node serves it.
//!
//! Connection ids are unique across the cluster. Each SQL node claims a slot number when it
//! joins the cluster's schema reports (see `schema_sync`), and numbers its connections
//! `slot << 22 | n`, n counting from 1 (the playground, alone, uses slot 0):
//!
//! ```text
//!   m/sql_slot/{slot}           -> member id of the node holding it
//!   m/kill/{slot}/{id}          -> a request: scope, whether the asker may stop others'
//!                                  connections, the asker's user
//!                               -> or its answer: killed, unknown, not the owner
//! ```
//!
//! A slot is free when no slot key names a node whose schema report is still remembered.
//! `KILL id` (and COM_PROCESS_KILL) for an id of another node's slot writes a request under
//! that slot; every node looks for requests under its own every [`POLL_INTERVAL`], acts on each
//! as a `KILL` run on it would, and writes the answer in its place. The asking node waits for
//! the answer (1094 for an unknown id, 1095 for another user's connection), deletes it, and
//! gives 1094 when none came within [`ANSWER_WAIT`] (the node is gone, and its connections
//! with it).

use std::sync::Weak;
use std::time::{Duration, Instant};

use strata_txn::{TxnClient, TxnMode};

use crate::catalog::scan_all;
use crate::error::{Error, Result};
use crate::process::{KillScope, ProcessList};
use crate::session::SqlServer;

/// Bits of a connection id that number the connections of one node.
pub const LOCAL_BITS: u32 = 22;
/// The highest slot (10 bits: 1,023 SQL nodes).
const MAX_SLOT: u32 = (1 << (32 - LOCAL_BITS)) - 1;
/// How often a node looks for requests to kill its connections.
pub const POLL_INTERVAL: Duration = Duration::from_millis(100);
/// How long a `KILL` waits for the node of the connection to answer.
const ANSWER_WAIT: Duration = Duration::from_secs(3);

const SLOT_PREFIX: &[u8] = b"m/sql_slot/";
const KILL_PREFIX: &[u8] = b"m/kill/";
/// The first byte of an answer (a request's is its scope: 0 or 1).
const ANSWER: u8 = 0xFF;

/// What the node of a connection did with a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    Killed = 0,
    Unknown = 1,
    NotOwner = 2,
}

/// The slot of a connection id.
pub fn slot_of(id: u32) -> u32 {
    id >> LOCAL_BITS
}

fn slot_key(slot: u32) -> Vec<u8> {
    [SLOT_PREFIX, &slot.to_be_bytes()[..]].concat()
}

fn kill_prefix(slot: u32) -> Vec<u8> {
    [KILL_PREFIX, &slot.to_be_bytes()[..], b"/"].concat()
}

fn kill_key(id: u32) -> Vec<u8> {
    [kill_prefix(slot_of(id)).as_slice(), &id.to_be_bytes()[..]].concat()
}

/// Claims the lowest slot no remembered node holds, for node `member`.
pub fn claim_slot(client: &TxnClient, member: u64) -> Result<u32> {
    let mut attempts = 0;
    loop {
        let mut txn = client.begin(TxnMode::Optimistic)?;
        let live = crate::schema_sync::remembered_members(&mut txn)?;
        let mut taken = vec![false; MAX_SLOT as usize + 1];
        for (key, value) in scan_all(&mut txn, SLOT_PREFIX)? {
            let (Some(slot), Ok(owner)) = (
                key.get(SLOT_PREFIX.len()..)
                    .and_then(|b| b.try_into().ok())
                    .map(u32::from_be_bytes),
                <[u8; 8]>::try_from(value.as_slice()).map(u64::from_be_bytes),
            ) else {
                continue;
            };
            if owner != member && live.contains(&owner) {
                if let Some(t) = taken.get_mut(slot as usize) {
                    *t = true;
                }
            }
        }
        let Some(slot) = (1..=MAX_SLOT).find(|&s| !taken[s as usize]) else {
            txn.rollback();
            return Err(Error::new(
                1040,
                "08004",
                "Too many SQL nodes in the cluster: no connection id slot is free",
            ));
        };
        txn.put(slot_key(slot), member.to_be_bytes().to_vec());
        match txn.commit() {
            Ok(_) => return Ok(slot),
            // Another node took a slot at the same time: look again.
            Err(e) if attempts < 20 => {
                attempts += 1;
                tracing::debug!(error = %e, "claiming a connection id slot; trying again");
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Gives up `slot` when the node stops serving.
pub fn release_slot(client: &TxnClient, slot: u32) {
    let released = client.begin(TxnMode::Optimistic).and_then(|mut txn| {
        txn.delete(slot_key(slot));
        txn.commit().map(|_| ())
    });
    if let Err(error) = released {
        tracing::warn!(%error, "releasing the connection id slot failed");
    }
}

/// Asks the node of slot `slot_of(id)` to kill connection `id`, as a user that `may_kill_others`
/// or not; waits for its answer.
pub fn kill_elsewhere(
    client: &TxnClient,
    id: u32,
    scope: KillScope,
    user: &str,
    may_kill_others: bool,
) -> Result<()> {
    let key = kill_key(id);
    let mut request = vec![
        u8::from(scope == KillScope::Connection),
        u8::from(may_kill_others),
    ];
    request.extend_from_slice(user.as_bytes());
    let mut txn = client.begin(TxnMode::Optimistic)?;
    txn.put(key.clone(), request);
    txn.commit()?;
    let deadline = Instant::now() + ANSWER_WAIT;
    let outcome = loop {
        strata_fiber::sleep(POLL_INTERVAL / 4);
        let mut txn = client.begin(TxnMode::Optimistic)?;
        let answer = match txn.get(&key)? {
            Some(value) if value.first() == Some(&ANSWER) => value.get(1).copied(),
            _ => None,
        };
        if answer.is_some() || Instant::now() >= deadline {
            // The answer read, or no answer: the request goes either way.
            txn.delete(key.clone());
            if txn.commit().is_err() && answer.is_none() && Instant::now() < deadline + ANSWER_WAIT
            {
                // The answer came in between: read it next time round.
                continue;
            }
            break answer;
        }
        txn.rollback();
    };
    match outcome {
        Some(o) if o == Outcome::Killed as u8 => Ok(()),
        Some(o) if o == Outcome::NotOwner as u8 => Err(not_owner(id)),
        _ => Err(unknown_thread(id)),
    }
}

pub fn unknown_thread(id: u32) -> Error {
    Error::new(1094, "HY000", format!("Unknown thread id: {id}"))
}

pub fn not_owner(id: u32) -> Error {
    Error::new(1095, "HY000", format!("You are not owner of thread {id}"))
}

/// Starts the thread that answers requests to kill connections of `slot`, until `server` is
/// dropped.
pub fn start_answering(
    client: TxnClient,
    slot: u32,
    server: Weak<SqlServer>,
) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("global-kill".into())
        .spawn(move || loop {
            std::thread::sleep(POLL_INTERVAL);
            let Some(server) = server.upgrade() else {
                return;
            };
            if let Err(error) = answer(&client, slot, &server.processes) {
                tracing::debug!(%error, "answering kill requests failed");
            }
        })
        .expect("spawn the global kill thread")
}

/// Acts on the requests under `slot` and writes their answers.
fn answer(client: &TxnClient, slot: u32, processes: &ProcessList) -> Result<()> {
    let mut txn = client.begin(TxnMode::Optimistic)?;
    let prefix = kill_prefix(slot);
    let mut answered = false;
    for (key, request) in scan_all(&mut txn, &prefix)? {
        let (Some(&scope), Some(&may_kill_others)) = (request.first(), request.get(1)) else {
            continue;
        };
        if scope == ANSWER {
            continue;
        }
        let Some(id) = key
            .get(prefix.len()..)
            .and_then(|b| b.try_into().ok())
            .map(u32::from_be_bytes)
        else {
            continue;
        };
        let user = &request[2..];
        let outcome = match processes.get(id) {
            None => Outcome::Unknown,
            Some(process) if process.user().as_bytes() != user && may_kill_others == 0 => {
                Outcome::NotOwner
            }
            Some(process) => {
                process.kill(if scope == 1 {
                    KillScope::Connection
                } else {
                    KillScope::Query
                });
                Outcome::Killed
            }
        };
        txn.put(key, vec![ANSWER, outcome as u8]);
        answered = true;
    }
    if answered {
        // Fails when the asker gave up in between; its request is gone then.
        txn.commit()?;
    } else {
        txn.rollback();
    }
    Ok(())
}
