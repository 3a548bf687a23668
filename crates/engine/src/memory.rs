//! An in-memory engine for unit tests and simulations: one `BTreeMap` per column family.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::{BatchOp, Cf, Engine, EngineError, EngineIterator, WriteBatch};

type Tree = BTreeMap<Vec<u8>, Vec<u8>>;

/// Keeps every column family in memory; `sync` is a no-op.
#[derive(Clone, Default)]
pub struct MemoryEngine {
    trees: Arc<RwLock<[Tree; Cf::ALL.len()]>>,
}

impl MemoryEngine {
    pub fn new() -> MemoryEngine {
        MemoryEngine::default()
    }
}

impl Engine for MemoryEngine {
    fn get(&self, cf: Cf, key: &[u8]) -> Result<Option<Vec<u8>>, EngineError> {
        Ok(self.trees.read()[cf.index()].get(key).cloned())
    }

    fn write(&self, batch: &WriteBatch, _sync: bool) -> Result<(), EngineError> {
        let mut trees = self.trees.write();
        for op in batch.ops() {
            match op {
                BatchOp::Put { cf, key, value } => {
                    trees[cf.index()].insert(key.clone(), value.clone());
                }
                BatchOp::Delete { cf, key } => {
                    trees[cf.index()].remove(key);
                }
            }
        }
        Ok(())
    }

    fn iterator(&self, cf: Cf, lower: &[u8], upper: Option<&[u8]>) -> Box<dyn EngineIterator + '_> {
        Box::new(MemoryIterator {
            engine: self,
            cf,
            lower: lower.to_vec(),
            upper: upper.map(|u| u.to_vec()),
            current: None,
        })
    }
}

/// Re-reads the tree at every step, so it sees writes made while it is open (the MVCC layer
/// never relies on either behaviour).
struct MemoryIterator<'a> {
    engine: &'a MemoryEngine,
    cf: Cf,
    lower: Vec<u8>,
    upper: Option<Vec<u8>>,
    current: Option<(Vec<u8>, Vec<u8>)>,
}

impl MemoryIterator<'_> {
    fn in_bounds(&self, key: &[u8]) -> bool {
        key >= self.lower.as_slice() && self.upper.as_deref().is_none_or(|u| key < u)
    }

    fn settle(&mut self, found: Option<(Vec<u8>, Vec<u8>)>) {
        self.current = found.filter(|(k, _)| self.in_bounds(k));
    }

    fn first_from(&self, start: Bound<&[u8]>) -> Option<(Vec<u8>, Vec<u8>)> {
        let trees = self.engine.trees.read();
        let tree = &trees[self.cf.index()];
        tree.range::<[u8], _>((start, Bound::Unbounded))
            .next()
            .map(|(k, v)| (k.clone(), v.clone()))
    }

    fn last_until(&self, end: Bound<&[u8]>) -> Option<(Vec<u8>, Vec<u8>)> {
        let trees = self.engine.trees.read();
        let tree = &trees[self.cf.index()];
        tree.range::<[u8], _>((Bound::Unbounded, end))
            .next_back()
            .map(|(k, v)| (k.clone(), v.clone()))
    }
}

impl EngineIterator for MemoryIterator<'_> {
    fn seek(&mut self, key: &[u8]) {
        let start = if key < self.lower.as_slice() {
            self.lower.clone()
        } else {
            key.to_vec()
        };
        let found = self.first_from(Bound::Included(&start));
        self.settle(found);
    }

    fn seek_for_prev(&mut self, key: &[u8]) {
        let found = match &self.upper {
            Some(u) if key >= u.as_slice() => self.last_until(Bound::Excluded(u)),
            _ => self.last_until(Bound::Included(key)),
        };
        self.settle(found);
    }

    fn valid(&self) -> Result<bool, EngineError> {
        Ok(self.current.is_some())
    }

    fn key(&self) -> &[u8] {
        &self.current.as_ref().expect("iterator is valid").0
    }

    fn value(&self) -> &[u8] {
        &self.current.as_ref().expect("iterator is valid").1
    }

    fn next(&mut self) {
        let key = self.current.take().expect("iterator is valid").0;
        let found = self.first_from(Bound::Excluded(&key));
        self.settle(found);
    }

    fn prev(&mut self) {
        let key = self.current.take().expect("iterator is valid").0;
        let found = self.last_until(Bound::Excluded(&key));
        self.settle(found);
    }
}
