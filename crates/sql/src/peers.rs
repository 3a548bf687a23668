//! What the SQL nodes of a cluster ask of each other: `KILL` of a connection on another node
//! (TiDB's global kill), and the sessions and slow-log entries of every node
//! (`CLUSTER_PROCESSLIST`, `CLUSTER_SLOW_QUERY`).
//!
//! SQL nodes share nothing but the KV store, so that is where the asking goes. Connection ids
//! are unique across the cluster: each SQL node claims a slot number when it joins the
//! cluster's schema reports (see `schema_sync`), and numbers its connections `slot << 22 | n`,
//! n counting from 1 (the playground, alone, uses slot 0):
//!
//! ```text
//!   m/sql_slot/{slot}           -> member id of the node holding it
//!   m/kill/{slot}/{id}          -> a request: scope, whether the asker may stop others'
//!                                  connections, the asker's user
//!                               -> or its answer: killed, unknown, not the owner
//!   m/ask/{slot}/{nonce}        -> a question (the node's sessions, or its slow-log
//!                                  entries), or the answer: the node's address and those
//! ```
//!
//! A slot is free when no slot key names a node whose schema report is still remembered.
//! `KILL id` (and COM_PROCESS_KILL) for an id of another node's slot writes a request under
//! that slot; every node looks for requests under its own every [`POLL_INTERVAL`], acts on each
//! as a `KILL` run on it would, and writes the answer in its place. The asking node waits for
//! the answer (1094 for an unknown id, 1095 for another user's connection), deletes it, and
//! gives 1094 when none came within [`ANSWER_WAIT`] (the node is gone, and its connections
//! with it). A question goes to every other slot held, and the nodes that answer within
//! [`ANSWER_WAIT`] are listed.

use std::sync::Weak;
use std::time::{Duration, Instant};

use strata_codec::Datum;
use strata_txn::{TxnClient, TxnMode};

use crate::catalog::scan_all;
use crate::error::{Error, Result};
use crate::process::{KillScope, ProcessList, ProcessRow};
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
const ASK_PREFIX: &[u8] = b"m/ask/";
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

fn ask_prefix(slot: u32) -> Vec<u8> {
    [ASK_PREFIX, &slot.to_be_bytes()[..], b"/"].concat()
}

/// What one node asks the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Question {
    /// Its sessions (CLUSTER_PROCESSLIST).
    Processes = 0,
    /// Its slow-log entries (CLUSTER_SLOW_QUERY).
    SlowQueries = 1,
}

/// The most bytes of slow-log rows one node answers with: its latest entries.
const SLOW_ANSWER_BYTES_MAX: usize = 4 << 20;

fn kill_key(id: u32) -> Vec<u8> {
    [kill_prefix(slot_of(id)).as_slice(), &id.to_be_bytes()[..]].concat()
}

/// The slots held by remembered nodes, with their holders, as of `txn`'s snapshot.
fn slots_held(txn: &mut strata_txn::Transaction) -> Result<Vec<(u32, u64)>> {
    let live = crate::schema_sync::remembered_members(txn)?;
    let mut held = Vec::new();
    for (key, value) in scan_all(txn, SLOT_PREFIX)? {
        let (Some(slot), Ok(owner)) = (
            key.get(SLOT_PREFIX.len()..)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_be_bytes),
            <[u8; 8]>::try_from(value.as_slice()).map(u64::from_be_bytes),
        ) else {
            continue;
        };
        if live.contains(&owner) && (1..=MAX_SLOT).contains(&slot) {
            held.push((slot, owner));
        }
    }
    Ok(held)
}

/// Claims the lowest slot no remembered node holds, for node `member`.
pub fn claim_slot(client: &TxnClient, member: u64) -> Result<u32> {
    let mut attempts = 0;
    loop {
        let mut txn = client.begin(TxnMode::Optimistic)?;
        let mut taken = vec![false; MAX_SLOT as usize + 1];
        for (slot, owner) in slots_held(&mut txn)? {
            taken[slot as usize] = owner != member;
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

/// Starts the thread that answers the requests of other nodes for `slot` (kill a connection,
/// list the sessions), until `server` is dropped.
pub fn start_answering(
    client: TxnClient,
    slot: u32,
    server: Weak<SqlServer>,
) -> std::thread::JoinHandle<()> {
    std::thread::Builder::new()
        .name("sql-peers".into())
        .spawn(move || loop {
            std::thread::sleep(POLL_INTERVAL);
            let Some(server) = server.upgrade() else {
                return;
            };
            if let Err(error) = answer(&client, slot, &server.processes) {
                tracing::debug!(%error, "answering kill requests failed");
            }
            if let Err(error) = answer_questions(&client, slot, &server) {
                tracing::debug!(%error, "answering processlist requests failed");
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
    finish(txn, answered)
}

/// Commits the answers written in `txn`, if any. Fails when an asker gave up in between (its
/// request is gone then).
fn finish(txn: strata_txn::Transaction, wrote: bool) -> Result<()> {
    if wrote {
        txn.commit()?;
    } else {
        txn.rollback();
    }
    Ok(())
}

/// Answers the questions under `slot`: this node's sessions, or its slow-log entries.
fn answer_questions(client: &TxnClient, slot: u32, server: &SqlServer) -> Result<()> {
    let mut txn = client.begin(TxnMode::Optimistic)?;
    let mut answered = false;
    let now = txn.start_ts();
    let prefix = ask_prefix(slot);
    for (key, request) in scan_all(&mut txn, &prefix)? {
        if request.first() == Some(&ANSWER) {
            // An answer its asker never collected (it gave up as the answer came).
            let asked = key
                .get(prefix.len()..)
                .and_then(|b| <[u8; 8]>::try_from(b).ok())
                .map(|b| strata_types::Timestamp(u64::from_be_bytes(b)));
            if asked.is_none_or(|at| now.physical_ms().saturating_sub(at.physical_ms()) > 60_000) {
                txn.delete(key);
                answered = true;
            }
            continue;
        }
        let mut answer = vec![ANSWER];
        put_text(&mut answer, &server.instance());
        if request.first() == Some(&(Question::SlowQueries as u8)) {
            encode_rows(&mut answer, &crate::slowlog::rows(), SLOW_ANSWER_BYTES_MAX);
        } else {
            for row in server.processes.rows() {
                encode_process(&mut answer, &row);
            }
        }
        txn.put(key, answer);
        answered = true;
    }
    finish(txn, answered)
}

/// The sessions of every other SQL node that answers within [`ANSWER_WAIT`], each with its
/// node's address; none when this node is not part of a cluster (`own` is None).
pub fn processes_elsewhere(
    client: &TxnClient,
    own: Option<u32>,
) -> Result<Vec<(String, ProcessRow)>> {
    let answers = ask_elsewhere(client, own, Question::Processes)?;
    Ok(answers
        .iter()
        .flat_map(|answer| decode_processes(answer).unwrap_or_default())
        .collect())
}

/// The slow-log entries (rows of `crate::slowlog::COLUMNS`) of every other SQL node that
/// answers within [`ANSWER_WAIT`], each with its node's address.
pub fn slow_queries_elsewhere(
    client: &TxnClient,
    own: Option<u32>,
) -> Result<Vec<(String, Vec<Datum>)>> {
    let answers = ask_elsewhere(client, own, Question::SlowQueries)?;
    Ok(answers
        .iter()
        .flat_map(|answer| decode_rows(answer).unwrap_or_default())
        .collect())
}

/// Asks every other SQL node `question`; returns the answers that came within
/// [`ANSWER_WAIT`] (each the node's address, then what it answers).
fn ask_elsewhere(client: &TxnClient, own: Option<u32>, question: Question) -> Result<Vec<Vec<u8>>> {
    let Some(own) = own else {
        return Ok(Vec::new());
    };
    let nonce = client.current_ts()?.0.to_be_bytes();
    let mut txn = client.begin(TxnMode::Optimistic)?;
    let mut keys: Vec<Vec<u8>> = slots_held(&mut txn)?
        .into_iter()
        .filter(|&(slot, _)| slot != own)
        .map(|(slot, _)| [ask_prefix(slot).as_slice(), &nonce[..]].concat())
        .collect();
    for key in &keys {
        txn.put(key.clone(), vec![question as u8]);
    }
    txn.commit()?;
    let deadline = Instant::now() + ANSWER_WAIT;
    let mut out = Vec::new();
    while !keys.is_empty() {
        strata_fiber::sleep(POLL_INTERVAL / 4);
        let late = Instant::now() >= deadline;
        let mut txn = client.begin(TxnMode::Optimistic)?;
        let mut waiting = Vec::new();
        let mut done = Vec::new();
        for key in keys {
            match txn.get(&key)? {
                Some(mut value) if value.first() == Some(&ANSWER) => {
                    value.remove(0);
                    out.push(value);
                    done.push(key);
                }
                // No answer in time: the request goes.
                _ if late => done.push(key),
                _ => waiting.push(key),
            }
        }
        txn.rollback();
        keys = waiting;
        if !done.is_empty() {
            // An answer that races a late deletion is left; its node deletes it later.
            let mut txn = client.begin(TxnMode::Optimistic)?;
            for key in done {
                txn.delete(key);
            }
            let _ = txn.commit();
        }
    }
    Ok(out)
}

/// Writes the last of `rows` whose encodings fit in `max` bytes, in their order.
fn encode_rows(out: &mut Vec<u8>, rows: &[Vec<Datum>], max: usize) {
    let mut encoded = Vec::new();
    let mut bytes = 0;
    for row in rows.iter().rev() {
        let columns: Vec<(i64, &Datum)> =
            row.iter().enumerate().map(|(i, d)| (i as i64, d)).collect();
        let mut one = Vec::new();
        strata_codec::encode_row(&mut one, &columns);
        bytes += 4 + one.len();
        if bytes > max {
            break;
        }
        encoded.push(one);
    }
    for one in encoded.iter().rev() {
        out.extend_from_slice(&(one.len() as u32).to_be_bytes());
        out.extend_from_slice(one);
    }
}

/// Reads what [`encode_rows`] wrote, after the node's address: each row after that address;
/// None when malformed.
fn decode_rows(mut bytes: &[u8]) -> Option<Vec<(String, Vec<Datum>)>> {
    let instance = take_text(&mut bytes)?;
    let mut rows = Vec::new();
    while !bytes.is_empty() {
        let n = u32::from_be_bytes(take(&mut bytes, 4)?.try_into().ok()?) as usize;
        let columns = strata_codec::decode_row_all(take(&mut bytes, n)?).ok()?;
        rows.push((
            instance.clone(),
            columns.into_iter().map(|(_, d)| d).collect(),
        ));
    }
    Some(rows)
}

fn take<'a>(bytes: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    let (head, rest) = bytes.split_at_checked(n)?;
    *bytes = rest;
    Some(head)
}

fn take_text(bytes: &mut &[u8]) -> Option<String> {
    let n = u32::from_be_bytes(take(bytes, 4)?.try_into().ok()?) as usize;
    Some(String::from_utf8_lossy(take(bytes, n)?).into_owned())
}

fn put_text(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u32).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
}

fn put_optional(out: &mut Vec<u8>, text: Option<&str>) {
    match text {
        Some(text) => {
            out.push(1);
            put_text(out, text);
        }
        None => out.push(0),
    }
}

fn encode_process(out: &mut Vec<u8>, row: &ProcessRow) {
    out.extend_from_slice(&row.id.to_be_bytes());
    put_text(out, &row.user);
    put_text(out, &row.host);
    put_optional(out, row.database.as_deref());
    put_optional(out, row.info.as_deref());
    out.extend_from_slice(&row.seconds.to_be_bytes());
    out.extend_from_slice(&row.memory.to_be_bytes());
    out.push(u8::from(row.user_sleep));
}

/// Reads what [`encode_process`] wrote, after the node's address; None when malformed.
fn decode_processes(mut bytes: &[u8]) -> Option<Vec<(String, ProcessRow)>> {
    let text = take_text;
    fn optional(bytes: &mut &[u8]) -> Option<Option<String>> {
        match take(bytes, 1)?[0] {
            0 => Some(None),
            _ => Some(Some(take_text(bytes)?)),
        }
    }
    fn number(bytes: &mut &[u8]) -> Option<u64> {
        Some(u64::from_be_bytes(take(bytes, 8)?.try_into().ok()?))
    }
    let instance = text(&mut bytes)?;
    let mut rows = Vec::new();
    while !bytes.is_empty() {
        let id = u32::from_be_bytes(take(&mut bytes, 4)?.try_into().ok()?);
        rows.push((
            instance.clone(),
            ProcessRow {
                id,
                user: text(&mut bytes)?,
                host: text(&mut bytes)?,
                database: optional(&mut bytes)?,
                info: optional(&mut bytes)?.map(std::sync::Arc::from),
                seconds: number(&mut bytes)?,
                memory: number(&mut bytes)?,
                user_sleep: take(&mut bytes, 1)?[0] != 0,
            },
        ));
    }
    Some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Slow-log rows come back exactly; past the byte cap the latest are kept, in order.
    #[test]
    fn slow_query_rows_round_trip_and_the_latest_fit() {
        let rows: Vec<Vec<Datum>> = (0..10)
            .map(|i| {
                vec![
                    Datum::Bytes(format!("2026-12-06 10:00:0{i}.000000").into_bytes()),
                    Datum::UInt(i),
                    Datum::Float(0.25 * i as f64),
                    if i % 2 == 0 {
                        Datum::Null
                    } else {
                        Datum::Int(-(i as i64))
                    },
                ]
            })
            .collect();
        let mut all = Vec::new();
        put_text(&mut all, "127.0.0.1:4001");
        encode_rows(&mut all, &rows, usize::MAX);
        let decoded = decode_rows(&all).unwrap();
        assert_eq!(decoded.len(), 10);
        assert!(decoded
            .iter()
            .all(|(instance, _)| instance == "127.0.0.1:4001"));
        let back: Vec<Vec<Datum>> = decoded.into_iter().map(|(_, row)| row).collect();
        assert_eq!(format!("{back:?}"), format!("{rows:?}"));

        let one = all.len() / 10;
        let mut capped = Vec::new();
        put_text(&mut capped, "n");
        encode_rows(&mut capped, &rows, one * 3);
        let kept: Vec<Vec<Datum>> = decode_rows(&capped)
            .unwrap()
            .into_iter()
            .map(|(_, r)| r)
            .collect();
        assert!(!kept.is_empty() && kept.len() < 4, "{}", kept.len());
        assert_eq!(format!("{:?}", kept.last()), format!("{:?}", rows.last()));
        assert!(decode_rows(&capped[..capped.len() - 1]).is_none());
    }

    #[test]
    fn a_processlist_answer_round_trips_and_bad_bytes_are_none() {
        let row = ProcessRow {
            id: (3 << LOCAL_BITS) | 7,
            user: "bob".into(),
            host: "127.0.0.1:5000".into(),
            database: Some("d".into()),
            info: Some(std::sync::Arc::from("SELECT SLEEP(1)")),
            seconds: 12,
            memory: 4096,
            user_sleep: true,
        };
        let idle = ProcessRow {
            database: None,
            info: None,
            user_sleep: false,
            ..row.clone()
        };
        let mut bytes = Vec::new();
        put_text(&mut bytes, "127.0.0.1:4001");
        encode_process(&mut bytes, &row);
        encode_process(&mut bytes, &idle);
        let decoded = decode_processes(&bytes).unwrap();
        assert_eq!(decoded.len(), 2);
        assert_eq!(decoded[0].0, "127.0.0.1:4001");
        assert_eq!(decoded[0].1, row);
        assert_eq!(decoded[1].1, idle);
        for cut in 1..bytes.len() {
            assert!(
                decode_processes(&bytes[..cut]).is_none_or(|rows| rows.len() < 2),
                "cut at {cut}"
            );
        }
    }
}
