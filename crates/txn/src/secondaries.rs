//! Commits the remaining keys of committed transactions in the background, on a pool of
//! threads: until they are committed, their locks make other writers of those keys wait.

use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam::channel::{self, Sender, TrySendError};
use strata_kvapi::KvApi;
use strata_types::{Key, Timestamp};
use tracing::debug;

/// Transactions whose keys wait for the background threads; past this, a commit commits its
/// keys itself.
pub const SECONDARY_QUEUE: usize = 4096;
/// Threads that commit in the background (each waits for one commit's Raft round at a time).
pub const SECONDARY_COMMIT_THREADS: usize = 32;

struct Job {
    keys: Vec<Key>,
    start_ts: Timestamp,
    commit_ts: Timestamp,
}

/// Background threads that commit keys; they stop when the last handle goes.
pub struct SecondaryCommitter {
    kv: Arc<dyn KvApi>,
    queue: Option<Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
}

impl SecondaryCommitter {
    pub fn start(kv: Arc<dyn KvApi>) -> SecondaryCommitter {
        let (queue, jobs) = channel::bounded::<Job>(SECONDARY_QUEUE);
        let mut workers = Vec::with_capacity(SECONDARY_COMMIT_THREADS);
        for _ in 0..SECONDARY_COMMIT_THREADS {
            let (worker, jobs) = (kv.clone(), jobs.clone());
            let spawned = std::thread::Builder::new()
                .name("commit-secondaries".into())
                .spawn(move || {
                    for job in jobs {
                        // A failure leaves locks that readers resolve from the primary.
                        if let Err(e) = worker.commit(&job.keys, job.start_ts, job.commit_ts) {
                            debug!(%e, start_ts = job.start_ts.0, "background commit failed");
                        }
                    }
                });
            workers.extend(spawned.ok());
        }
        SecondaryCommitter {
            kv,
            queue: (!workers.is_empty()).then_some(queue),
            workers,
        }
    }

    /// Commits `keys` of the transaction `start_ts`, committed at `commit_ts`, soon.
    pub fn commit(&self, keys: Vec<Key>, start_ts: Timestamp, commit_ts: Timestamp) {
        let job = Job {
            keys,
            start_ts,
            commit_ts,
        };
        let job = match &self.queue {
            Some(queue) => match queue.try_send(job) {
                Ok(()) => return,
                Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => job,
            },
            None => job,
        };
        let _ = self.kv.commit(&job.keys, job.start_ts, job.commit_ts);
    }
}

impl Drop for SecondaryCommitter {
    /// Closes the queue and waits for the threads to commit what it held. Their handles on
    /// the storage go with them, before the owner goes on: a process that exits next must not
    /// close its storage on one of these threads while it tears down.
    fn drop(&mut self) {
        self.queue.take();
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}
