//! Window functions: every row is held, each call's value is computed over its partition, and
//! the values follow the row's columns (and aggregate values).

use crate::error::Result;
use crate::expr::EvalEnv;
use crate::window::WindowCall;

use super::{drain, split_aggs, Batch, Exec, Node, Operator};

pub struct Window<'p> {
    input: Box<dyn Operator + 'p>,
    calls: &'p [WindowCall],
    /// Aggregate values at the end of each row.
    aggs: usize,
    /// The block has no ORDER BY: rows leave in the order of the last window.
    keep_window_order: bool,
    done: bool,
}

impl<'p> Window<'p> {
    pub fn new(
        input: Box<dyn Operator + 'p>,
        calls: &'p [WindowCall],
        aggs: usize,
        keep_window_order: bool,
    ) -> Window<'p> {
        Window {
            input,
            calls,
            aggs,
            keep_window_order,
            done: false,
        }
    }
}

impl Operator for Window<'_> {
    fn next(&mut self, exec: &mut Exec) -> Result<Option<Batch>> {
        if std::mem::replace(&mut self.done, true) {
            return Ok(None);
        }
        let rows = drain(self.input.as_mut(), exec)?;
        for row in &rows {
            exec.ctx.keep_row(row)?;
        }
        let stage: Vec<_> = rows.iter().map(|r| split_aggs(r, self.aggs)).collect();
        let (values, order) = crate::window::compute(self.calls, &stage, exec.ctx)?;
        drop(stage);
        let mut rows: Vec<_> = rows.into_iter().zip(values).map(Some).collect();
        let mut out = Vec::with_capacity(rows.len());
        for (position, in_order) in order.iter().enumerate() {
            let k = if self.keep_window_order {
                *in_order
            } else {
                position
            };
            let (mut row, values) = rows[k].take().expect("each row leaves once");
            row.extend(values);
            out.push(row);
        }
        Ok((!out.is_empty()).then_some(out))
    }

    fn explain(&self) -> Node {
        let info = format!("{} calls", self.calls.len());
        Node::root("Window", info, vec![self.input.explain()])
    }
}
