//! Group commit of synced writes, in front of RocksDB.
//!
//! RocksDB groups concurrent writers itself, but each writer that waits for its group spins
//! first (a fixed busy loop of `pause` instructions, several microseconds on current CPUs)
//! before it sleeps. On two cores that spinning takes the CPU from the group's leader it waits
//! for. Here writers queue their batches; one of them, the leader, writes everything queued as
//! one synced batch while the others sleep, then wakes them and hands the lead to the first
//! writer that queued meanwhile. So RocksDB sees one synced writer at a time, and the data of a
//! group becomes visible only once it is on disk, as with RocksDB's own groups.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::thread::{self, Thread};

use parking_lot::Mutex;

use crate::{EngineError, WriteBatch};

/// What a queued writer is told.
enum Turn {
    /// Its batch is written (or failed with the message).
    Done(Result<(), String>),
    /// It leads the next group.
    Lead,
}

/// One queued writer.
struct Writer {
    thread: Thread,
    turn: Mutex<Option<Turn>>,
}

impl Writer {
    fn tell(&self, turn: Turn) {
        *self.turn.lock() = Some(turn);
        self.thread.unpark();
    }

    fn wait(&self) -> Turn {
        loop {
            if let Some(turn) = self.turn.lock().take() {
                return turn;
            }
            thread::park();
        }
    }
}

#[derive(Default)]
struct Queue {
    /// Whether a leader is writing (or about to).
    leading: bool,
    waiting: Vec<(WriteBatch, Arc<Writer>)>,
}

/// Serializes synced writes into groups; see the module documentation.
#[derive(Default)]
pub struct GroupCommit {
    queue: Mutex<Queue>,
}

impl GroupCommit {
    /// Writes `batch` with the batches of concurrent callers, through `write_group`, which
    /// writes all the batches it is given as one synced write.
    // Hot path: every commit.
    pub fn write(
        &self,
        batch: &WriteBatch,
        write_group: impl Fn(&[&WriteBatch]) -> Result<(), EngineError>,
    ) -> Result<(), EngineError> {
        let me = Arc::new(Writer {
            thread: thread::current(),
            turn: Mutex::new(None),
        });
        let lead_now = {
            let mut queue = self.queue.lock();
            queue.waiting.push((batch.clone(), me.clone()));
            !std::mem::replace(&mut queue.leading, true)
        };
        if !lead_now {
            match me.wait() {
                Turn::Done(result) => return result.map_err(EngineError::Storage),
                Turn::Lead => {}
            }
        }
        let group = std::mem::take(&mut self.queue.lock().waiting);
        let batches: Vec<&WriteBatch> = group.iter().map(|(b, _)| b).collect();
        // A panic while writing must not leave the others asleep and the lead taken: they
        // hear of a failure, the lead passes on, and then the panic goes on in this thread.
        let written = panic::catch_unwind(AssertUnwindSafe(|| write_group(&batches)));
        let (result, panicked) = match written {
            Ok(result) => (result, None),
            Err(payload) => (
                Err(EngineError::Storage("the group's write panicked".into())),
                Some(payload),
            ),
        };
        let shared = result.as_ref().map(|_| ()).map_err(|e| e.to_string());
        for (_, writer) in &group {
            if !Arc::ptr_eq(writer, &me) {
                writer.tell(Turn::Done(shared.clone()));
            }
        }
        let mut queue = self.queue.lock();
        match queue.waiting.first() {
            Some((_, next)) => next.tell(Turn::Lead),
            None => queue.leading = false,
        }
        drop(queue);
        if let Some(payload) = panicked {
            panic::resume_unwind(payload);
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BatchOp, Cf};
    use std::collections::HashMap;

    fn key_of(batch: &WriteBatch) -> Vec<u8> {
        match &batch.ops()[0] {
            BatchOp::Put { key, .. } => key.clone(),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn every_writer_hears_the_outcome_of_the_one_group_that_wrote_its_batch() {
        let group_commit = Arc::new(GroupCommit::default());
        // Each key's group outcome, recorded by the leaders.
        let outcomes = Arc::new(Mutex::new(HashMap::<Vec<u8>, bool>::new()));
        let threads: Vec<_> = (0..8u8)
            .map(|t| {
                let (group_commit, outcomes) = (group_commit.clone(), outcomes.clone());
                thread::spawn(move || {
                    let mut heard = Vec::new();
                    for i in 0..500u16 {
                        let mut batch = WriteBatch::new();
                        let key = [&[t][..], &i.to_be_bytes()].concat();
                        batch.put(Cf::Default, key.clone(), vec![t]);
                        let result = group_commit.write(&batch, |batches| {
                            // A group holding a "bad" batch fails as a whole.
                            let ok = !batches.iter().any(|b| key_of(b)[2] % 50 == 7);
                            let mut outcomes = outcomes.lock();
                            for b in batches {
                                let previous = outcomes.insert(key_of(b), ok);
                                assert!(previous.is_none(), "a batch was written twice");
                            }
                            if ok {
                                Ok(())
                            } else {
                                Err(EngineError::Storage("disk full".into()))
                            }
                        });
                        heard.push((key, result.is_ok()));
                    }
                    heard
                })
            })
            .collect();
        let heard: Vec<(Vec<u8>, bool)> = threads
            .into_iter()
            .flat_map(|t| t.join().unwrap())
            .collect();
        let outcomes = outcomes.lock();
        assert_eq!(outcomes.len(), 8 * 500, "a batch was never written");
        for (key, ok) in heard {
            assert_eq!(
                outcomes[&key], ok,
                "writer of {key:?} heard another outcome"
            );
        }
    }

    #[test]
    fn a_panicking_leader_tells_its_group_and_passes_the_lead_on() {
        let group_commit = Arc::new(GroupCommit::default());
        let entered = Arc::new(std::sync::Barrier::new(2));
        let leader = {
            let (group_commit, entered) = (group_commit.clone(), entered.clone());
            thread::spawn(move || {
                let mut batch = WriteBatch::new();
                batch.put(Cf::Default, b"a".to_vec(), Vec::new());
                let _ = group_commit.write(&batch, |_| {
                    entered.wait();
                    // Let the other writer queue behind this group.
                    thread::sleep(std::time::Duration::from_millis(50));
                    panic!("engine bug");
                });
            })
        };
        entered.wait();
        let mut batch = WriteBatch::new();
        batch.put(Cf::Default, b"b".to_vec(), Vec::new());
        // Queued behind the panicking group: it leads the next one and is written.
        assert!(group_commit.write(&batch, |_| Ok(())).is_ok());
        assert!(leader.join().is_err(), "the leader's own thread panics");
        assert!(group_commit.write(&batch, |_| Ok(())).is_ok());
    }

    #[test]
    fn a_failed_group_frees_the_queue_for_the_next_writer() {
        let group_commit = GroupCommit::default();
        let mut batch = WriteBatch::new();
        batch.put(Cf::Default, b"k".to_vec(), b"v".to_vec());
        let result = group_commit.write(&batch, |_| Err(EngineError::Storage("disk full".into())));
        assert!(matches!(result, Err(EngineError::Storage(m)) if m.contains("disk full")));
        assert!(group_commit.write(&batch, |_| Ok(())).is_ok());
    }
}
