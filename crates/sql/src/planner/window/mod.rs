//! Window functions (`… OVER (PARTITION BY … ORDER BY … frame)`): the planned call and its
//! window, and their binding (`bind.rs`). The executor's window operator computes every
//! call's value for each row of a query block once its grouping and HAVING are done, before
//! its DISTINCT, ORDER BY and LIMIT.

use crate::error::Error;
use crate::expr::{AggCall, Expr, IntervalUnit, ResultType};

mod bind;

pub use bind::{bind_call, check_named};

#[derive(Clone, Debug, PartialEq)]
pub enum WindowFunc {
    RowNumber,
    Rank,
    DenseRank,
    PercentRank,
    CumeDist,
    /// NTILE(n): `args[0]` is n.
    Ntile,
    /// LAG / LEAD(expr, offset, default): `args` are those three.
    Lag,
    Lead,
    FirstValue,
    LastValue,
    /// NTH_VALUE(expr, n): `args[1]` is n.
    NthValue,
    /// An aggregate over the frame; its argument is the call's.
    Aggregate(AggCall),
}

impl WindowFunc {
    /// Whether the value depends on the frame (the others read the whole partition).
    fn reads_frame(&self) -> bool {
        matches!(
            self,
            WindowFunc::FirstValue
                | WindowFunc::LastValue
                | WindowFunc::NthValue
                | WindowFunc::Aggregate(_)
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameUnits {
    Rows,
    Range,
}

/// How far a frame bound is from the current row: rows, or a distance in the order key (a
/// number, or an INTERVAL of a date).
#[derive(Clone, Debug, PartialEq)]
pub struct Offset {
    pub amount: Expr,
    pub unit: Option<IntervalUnit>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Offset),
    CurrentRow,
    Following(Offset),
    UnboundedFollowing,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Frame {
    pub units: FrameUnits,
    pub start: FrameBound,
    pub end: FrameBound,
}

impl Frame {
    /// The frame of a window without one: up to the current row's last peer when the window
    /// orders its rows, else the whole partition.
    fn default_for(ordered: bool) -> Frame {
        Frame {
            units: FrameUnits::Range,
            start: FrameBound::UnboundedPreceding,
            end: if ordered {
                FrameBound::CurrentRow
            } else {
                FrameBound::UnboundedFollowing
            },
        }
    }
}

/// A window function call of a query block; expressions read its value through
/// `Expr::Window(i)`.
#[derive(Clone, Debug, PartialEq)]
pub struct WindowCall {
    pub func: WindowFunc,
    pub args: Vec<Expr>,
    pub partition_by: Vec<Expr>,
    /// Each expression with whether it is descending.
    pub order_by: Vec<(Expr, bool)>,
    pub frame: Frame,
    /// The window's name in errors.
    pub window: String,
    pub ty: ResultType,
}

impl WindowCall {
    /// The expressions the call reads of each row.
    pub fn exprs(&self) -> impl Iterator<Item = &Expr> {
        let agg = match &self.func {
            WindowFunc::Aggregate(call) => Some(&call.arg),
            _ => None,
        };
        self.args
            .iter()
            .chain(agg)
            .chain(&self.partition_by)
            .chain(self.order_by.iter().map(|(e, _)| e))
    }
}

pub(crate) fn window_error(code: u16, message: String) -> Error {
    Error::new(code, "HY000", message)
}

pub(crate) fn frame_illegal(window: &str) -> Error {
    window_error(
        3586,
        format!("Window '{window}': frame start or end is negative, NULL or of non-integral type"),
    )
}
