//! DISTINCT: the first row of each set of equal projected values.

use std::collections::HashSet;

use crate::error::Result;
use crate::exec::group_key;
use crate::expr::EvalEnv;

use super::{Batch, Exec, Held, Node, Operator};

pub struct Distinct<'p> {
    input: Box<dyn Operator + 'p>,
    /// The projected columns compared; ORDER BY values may follow them.
    width: usize,
    seen: HashSet<Vec<u8>>,
    /// The bytes of the keys it keeps.
    memory: u64,
}

impl<'p> Distinct<'p> {
    pub fn new(input: Box<dyn Operator + 'p>, width: usize) -> Distinct<'p> {
        Distinct {
            input,
            width,
            seen: HashSet::new(),
            memory: 0,
        }
    }
}

impl Operator for Distinct<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        while let Some(mut batch) = self.input.next(exec)? {
            let mut kept = Ok(());
            batch.retain(|row| {
                let key = group_key(&row[..self.width]);
                if kept.is_err() || self.seen.contains(&key) {
                    return false;
                }
                kept = exec.ctx.consume_memory(key.len());
                self.memory += key.len() as u64;
                self.seen.insert(key)
            });
            kept?;
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
        }
        Ok(None)
    }

    fn explain(&self) -> Node {
        Node::root("HashAgg", "distinct", vec![self.input.explain()])
    }

    fn held(&self) -> Option<Held> {
        Some(Held {
            memory: self.memory,
            disk: 0,
        })
    }
}
