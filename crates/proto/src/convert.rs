//! Conversions between the KV service's messages and the KV API's types.

use strata_kvapi::{KvError, LockInfo, Mutation, SecondaryLocks, TxnStatus};
use strata_types::Timestamp;

use crate::kv::{self as pb, key_error::Kind};

pub fn lock_info_to_pb(lock: &LockInfo) -> pb::LockInfo {
    pb::LockInfo {
        key: lock.key.clone(),
        primary: lock.primary.clone(),
        start_ts: lock.start_ts.0,
        ttl_ms: lock.ttl_ms,
    }
}

pub fn lock_info_from_pb(lock: pb::LockInfo) -> LockInfo {
    LockInfo {
        key: lock.key,
        primary: lock.primary,
        start_ts: Timestamp(lock.start_ts),
        ttl_ms: lock.ttl_ms,
    }
}

pub fn key_error_to_pb(error: &KvError) -> pb::KeyError {
    let kind = match error {
        KvError::KeyIsLocked(lock) => Kind::Locked(lock_info_to_pb(lock)),
        KvError::WriteConflict {
            key,
            start_ts,
            conflict_commit_ts,
        } => Kind::WriteConflict(pb::WriteConflict {
            key: key.clone(),
            start_ts: start_ts.0,
            conflict_commit_ts: conflict_commit_ts.0,
        }),
        KvError::Deadlock {
            key,
            blocker_start_ts,
        } => Kind::Deadlock(pb::Deadlock {
            key: key.clone(),
            blocker_start_ts: blocker_start_ts.0,
        }),
        KvError::LockWaitTimeout { key } => Kind::LockWaitTimeout(key.clone()),
        KvError::TxnAborted { start_ts } => Kind::TxnAborted(start_ts.0),
        KvError::AlreadyExists { key } => Kind::AlreadyExists(key.clone()),
        KvError::SnapshotTooOld { ts, safe_point } => Kind::SnapshotTooOld(pb::SnapshotTooOld {
            ts: ts.0,
            safe_point: safe_point.0,
        }),
        KvError::Storage(message) | KvError::Unavailable(message) => Kind::Storage(message.clone()),
        KvError::Undetermined(message) => Kind::Undetermined(message.clone()),
        KvError::CommitTsTooLarge {
            commit_ts,
            max_commit_ts,
        } => Kind::CommitTsTooLarge(pb::CommitTsTooLarge {
            commit_ts: commit_ts.0,
            max_commit_ts: max_commit_ts.0,
        }),
    };
    pb::KeyError { kind: Some(kind) }
}

pub fn key_error_from_pb(error: pb::KeyError) -> KvError {
    match error.kind {
        Some(Kind::Locked(lock)) => KvError::KeyIsLocked(lock_info_from_pb(lock)),
        Some(Kind::WriteConflict(c)) => KvError::WriteConflict {
            key: c.key,
            start_ts: Timestamp(c.start_ts),
            conflict_commit_ts: Timestamp(c.conflict_commit_ts),
        },
        Some(Kind::Deadlock(d)) => KvError::Deadlock {
            key: d.key,
            blocker_start_ts: Timestamp(d.blocker_start_ts),
        },
        Some(Kind::LockWaitTimeout(key)) => KvError::LockWaitTimeout { key },
        Some(Kind::TxnAborted(ts)) => KvError::TxnAborted {
            start_ts: Timestamp(ts),
        },
        Some(Kind::AlreadyExists(key)) => KvError::AlreadyExists { key },
        Some(Kind::SnapshotTooOld(old)) => KvError::SnapshotTooOld {
            ts: Timestamp(old.ts),
            safe_point: Timestamp(old.safe_point),
        },
        Some(Kind::Storage(message)) => KvError::Storage(message),
        Some(Kind::Undetermined(message)) => KvError::Undetermined(message),
        Some(Kind::CommitTsTooLarge(c)) => KvError::CommitTsTooLarge {
            commit_ts: Timestamp(c.commit_ts),
            max_commit_ts: Timestamp(c.max_commit_ts),
        },
        None => KvError::Storage("KV node sent an empty key error".into()),
    }
}

pub fn mutation_to_pb(mutation: &Mutation) -> pb::Mutation {
    use pb::mutation::Op;
    let (op, key, value) = match mutation {
        Mutation::Put(k, v) => (Op::Put, k, v.clone()),
        Mutation::Delete(k) => (Op::Delete, k, Vec::new()),
        Mutation::Lock(k) => (Op::Lock, k, Vec::new()),
        Mutation::Insert(k, v) => (Op::Insert, k, v.clone()),
    };
    pb::Mutation {
        op: op as i32,
        key: key.clone(),
        value,
    }
}

pub fn mutation_from_pb(mutation: pb::Mutation) -> Result<Mutation, KvError> {
    use pb::mutation::Op;
    Ok(match Op::try_from(mutation.op) {
        Ok(Op::Put) => Mutation::Put(mutation.key, mutation.value),
        Ok(Op::Delete) => Mutation::Delete(mutation.key),
        Ok(Op::Lock) => Mutation::Lock(mutation.key),
        Ok(Op::Insert) => Mutation::Insert(mutation.key, mutation.value),
        Err(_) => {
            return Err(KvError::Storage(format!(
                "unknown mutation op {}",
                mutation.op
            )))
        }
    })
}

pub fn txn_status_to_pb(status: TxnStatus) -> pb::CheckTxnStatusResponse {
    use pb::check_txn_status_response::Status;
    let (status, commit_ts, ttl_ms, secondaries) = match status {
        TxnStatus::Committed { commit_ts } => (Status::Committed, commit_ts.0, 0, Vec::new()),
        TxnStatus::RolledBack => (Status::RolledBack, 0, 0, Vec::new()),
        TxnStatus::Locked { ttl_ms } => (Status::Locked, 0, ttl_ms, Vec::new()),
        TxnStatus::Undecided {
            min_commit_ts,
            secondaries,
        } => (Status::Undecided, min_commit_ts.0, 0, secondaries),
    };
    pb::CheckTxnStatusResponse {
        error: None,
        status: status as i32,
        commit_ts,
        ttl_ms,
        secondaries,
    }
}

pub fn txn_status_from_pb(response: pb::CheckTxnStatusResponse) -> Result<TxnStatus, KvError> {
    use pb::check_txn_status_response::Status;
    Ok(match Status::try_from(response.status) {
        Ok(Status::Committed) => TxnStatus::Committed {
            commit_ts: Timestamp(response.commit_ts),
        },
        Ok(Status::RolledBack) => TxnStatus::RolledBack,
        Ok(Status::Locked) => TxnStatus::Locked {
            ttl_ms: response.ttl_ms,
        },
        Ok(Status::Undecided) => TxnStatus::Undecided {
            min_commit_ts: Timestamp(response.commit_ts),
            secondaries: response.secondaries,
        },
        Err(_) => {
            return Err(KvError::Storage(format!(
                "unknown transaction status {}",
                response.status
            )))
        }
    })
}

pub fn secondary_locks_to_pb(locks: SecondaryLocks) -> pb::CheckSecondaryLocksResponse {
    use pb::check_secondary_locks_response::Status;
    let (status, ts) = match locks {
        SecondaryLocks::Locked { min_commit_ts } => (Status::Locked, min_commit_ts.0),
        SecondaryLocks::Committed { commit_ts } => (Status::Committed, commit_ts.0),
        SecondaryLocks::RolledBack => (Status::RolledBack, 0),
    };
    pb::CheckSecondaryLocksResponse {
        error: None,
        status: status as i32,
        ts,
    }
}

pub fn secondary_locks_from_pb(
    response: &pb::CheckSecondaryLocksResponse,
) -> Result<SecondaryLocks, KvError> {
    use pb::check_secondary_locks_response::Status;
    Ok(match Status::try_from(response.status) {
        Ok(Status::Locked) => SecondaryLocks::Locked {
            min_commit_ts: Timestamp(response.ts),
        },
        Ok(Status::Committed) => SecondaryLocks::Committed {
            commit_ts: Timestamp(response.ts),
        },
        Ok(Status::RolledBack) => SecondaryLocks::RolledBack,
        Err(_) => {
            return Err(KvError::Storage(format!(
                "unknown secondary lock status {}",
                response.status
            )))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_errors_survive_the_round_trip() {
        let errors = [
            KvError::KeyIsLocked(LockInfo {
                key: b"k".to_vec(),
                primary: b"p".to_vec(),
                start_ts: Timestamp(7),
                ttl_ms: 3000,
            }),
            KvError::WriteConflict {
                key: b"k".to_vec(),
                start_ts: Timestamp(1),
                conflict_commit_ts: Timestamp(2),
            },
            KvError::Deadlock {
                key: b"d".to_vec(),
                blocker_start_ts: Timestamp(9),
            },
            KvError::LockWaitTimeout { key: b"w".to_vec() },
            KvError::TxnAborted {
                start_ts: Timestamp(5),
            },
            KvError::AlreadyExists { key: b"a".to_vec() },
            KvError::SnapshotTooOld {
                ts: Timestamp(3),
                safe_point: Timestamp(4),
            },
            KvError::Storage("disk full".into()),
            KvError::Undetermined("no answer".into()),
            KvError::CommitTsTooLarge {
                commit_ts: Timestamp(12),
                max_commit_ts: Timestamp(11),
            },
        ];
        for error in errors {
            assert_eq!(key_error_from_pb(key_error_to_pb(&error)), error);
        }
    }

    #[test]
    fn mutations_and_statuses_survive_the_round_trip() {
        for m in [
            Mutation::Put(b"k".to_vec(), b"v".to_vec()),
            Mutation::Delete(b"k".to_vec()),
            Mutation::Lock(b"k".to_vec()),
            Mutation::Insert(b"k".to_vec(), b"".to_vec()),
        ] {
            assert_eq!(mutation_from_pb(mutation_to_pb(&m)).unwrap(), m);
        }
        assert!(mutation_from_pb(pb::Mutation {
            op: 42,
            key: vec![],
            value: vec![]
        })
        .is_err());
        for s in [
            TxnStatus::Committed {
                commit_ts: Timestamp(11),
            },
            TxnStatus::RolledBack,
            TxnStatus::Locked { ttl_ms: 20 },
            TxnStatus::Undecided {
                min_commit_ts: Timestamp(12),
                secondaries: vec![b"s1".to_vec(), b"s2".to_vec()],
            },
        ] {
            assert_eq!(txn_status_from_pb(txn_status_to_pb(s.clone())).unwrap(), s);
        }
        for s in [
            SecondaryLocks::Locked {
                min_commit_ts: Timestamp(3),
            },
            SecondaryLocks::Committed {
                commit_ts: Timestamp(4),
            },
            SecondaryLocks::RolledBack,
        ] {
            assert_eq!(
                secondary_locks_from_pb(&secondary_locks_to_pb(s)).unwrap(),
                s
            );
        }
    }
}
