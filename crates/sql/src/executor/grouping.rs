//! Aggregation: GROUP BY groups and the states of their aggregate calls.

use std::collections::{HashMap, HashSet};

use rust_decimal::Decimal;
use strata_codec::Datum;

use crate::error::Result;
use crate::exec::{compare_sort_keys, group_key};
use crate::expr::{AggCall, AggFunc, EvalEnv, Expr, SessionValue};
use crate::types::{self, datum_to_text, to_decimal, to_f64, to_i64};

/// The longest GROUP_CONCAT result when `group_concat_max_len` cannot be read (MySQL's
/// default).
const GROUP_CONCAT_MAX_LEN: usize = 1024;

#[derive(Clone)]
enum AggState {
    Count(i64),
    SumDecimal(Option<Decimal>),
    SumFloat(Option<f64>),
    Avg {
        sum: Decimal,
        sum_float: f64,
        float: bool,
        count: i64,
    },
    Extreme(Option<Datum>),
    /// Values seen, their mean and the sum of squared distances from it (Welford's method).
    Spread {
        count: i64,
        mean: f64,
        m2: f64,
    },
    Bits(u64),
    First(Option<Datum>),
    /// GROUP_CONCAT's values, each with its ORDER BY keys.
    Concat(Vec<(Vec<Datum>, Vec<u8>)>),
}

/// One group: its first row, its aggregate states, the values seen by DISTINCT aggregates.
type Group = (Vec<Datum>, Vec<AggState>, Vec<HashSet<Vec<u8>>>);

pub(crate) struct Aggregator<'a> {
    aggs: &'a [AggCall],
    /// `group_concat_max_len`: the longest GROUP_CONCAT result, in bytes.
    concat_max_len: usize,
    index: HashMap<Vec<u8>, usize>,
    groups: Vec<Group>,
    grouped: bool,
    /// See [`Aggregator::charged`].
    charged: u64,
}

impl<'a> Aggregator<'a> {
    pub(crate) fn new(
        aggs: &'a [AggCall],
        group_by_len: usize,
        env: &dyn EvalEnv,
    ) -> Aggregator<'a> {
        Aggregator {
            aggs,
            concat_max_len: concat_max_len(env),
            index: HashMap::new(),
            groups: Vec::new(),
            grouped: group_by_len > 0,
            charged: 0,
        }
    }

    fn fresh_states(&self) -> Vec<AggState> {
        self.aggs.iter().map(fresh_state).collect()
    }

    pub(crate) fn add(
        &mut self,
        group_by: &[Expr],
        row: &[Datum],
        ctx: &dyn EvalEnv,
    ) -> Result<()> {
        let key = Self::key_of(group_by, row, ctx)?;
        self.add_keyed(key, row, ctx)
    }

    /// The key of `row`'s group.
    pub(crate) fn key_of(group_by: &[Expr], row: &[Datum], ctx: &dyn EvalEnv) -> Result<Vec<u8>> {
        if group_by.is_empty() {
            return Ok(Vec::new());
        }
        let values: Vec<Datum> = group_by
            .iter()
            .map(|e| e.eval(row, ctx))
            .collect::<Result<_>>()?;
        Ok(group_key(&values))
    }

    /// Whether the group of `key` is here.
    pub(crate) fn has_group(&self, key: &[u8]) -> bool {
        self.index.contains_key(key)
    }

    /// The bytes charged to the statement for the groups (including a group whose charge
    /// failed, which the statement's memory counted all the same).
    pub(crate) fn charged(&self) -> u64 {
        self.charged
    }

    /// [`Aggregator::add`] of a row whose group key is `key`.
    pub(crate) fn add_keyed(
        &mut self,
        key: Vec<u8>,
        row: &[Datum],
        ctx: &dyn EvalEnv,
    ) -> Result<()> {
        let slot = match self.index.get(&key) {
            Some(i) => *i,
            None => {
                let bytes = crate::memory::row_bytes(row);
                self.charged += bytes as u64;
                ctx.consume_memory(bytes)?;
                self.charged += key.len() as u64;
                ctx.consume_memory(key.len())?;
                let states = self.fresh_states();
                self.groups
                    .push((row.to_vec(), states, vec![HashSet::new(); self.aggs.len()]));
                self.index.insert(key, self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        let (_, states, seen) = &mut self.groups[slot];
        for (i, call) in self.aggs.iter().enumerate() {
            let value = if call.func == AggFunc::CountStar {
                Datum::Int(1)
            } else {
                call.arg.eval(row, ctx)?
            };
            if value == Datum::Null {
                continue;
            }
            if call.distinct && !seen[i].insert(group_key(std::slice::from_ref(&value))) {
                continue;
            }
            if let AggState::Concat(parts) = &mut states[i] {
                let keys = call
                    .order_by
                    .iter()
                    .map(|(e, _)| e.eval(row, ctx))
                    .collect::<Result<_>>()?;
                parts.push((keys, datum_to_text(&value)));
                continue;
            }
            accumulate(&mut states[i], call.func, value);
        }
        Ok(())
    }

    /// Returns each group's first row with its aggregate values. Without GROUP BY an empty
    /// input still gives one group (of NULL columns).
    pub(crate) fn finish(mut self, width: usize) -> Vec<GroupRow> {
        if self.groups.is_empty() && !self.grouped {
            let states = self.fresh_states();
            self.groups
                .push((vec![Datum::Null; width], states, Vec::new()));
        }
        self.groups
            .into_iter()
            .map(|(row, states, _)| {
                let values = states
                    .into_iter()
                    .zip(self.aggs)
                    .map(|(state, call)| finish_state(state, call, self.concat_max_len))
                    .collect();
                (row, values)
            })
            .collect()
    }
}

/// A group's first row and its aggregate values.
type GroupRow = (Vec<Datum>, Vec<Datum>);

/// Where a rollup row sorts: per GROUP BY value, whether it is rolled up, and the value.
type RollupKey = Vec<(bool, Datum)>;

/// The grouping of a query: plain GROUP BY (or none), or WITH ROLLUP.
pub(crate) enum Grouping<'a> {
    Plain(Aggregator<'a>),
    Rollup(Rollup<'a>),
}

impl<'a> Grouping<'a> {
    pub(crate) fn new(
        aggs: &'a [AggCall],
        group_by_len: usize,
        rollup: bool,
        env: &dyn EvalEnv,
    ) -> Grouping<'a> {
        if rollup {
            Grouping::Rollup(Rollup::new(aggs, group_by_len, env))
        } else {
            Grouping::Plain(Aggregator::new(aggs, group_by_len, env))
        }
    }

    pub(crate) fn add(
        &mut self,
        group_by: &[Expr],
        row: &[Datum],
        ctx: &dyn EvalEnv,
    ) -> Result<()> {
        match self {
            Grouping::Plain(a) => a.add(group_by, row, ctx),
            Grouping::Rollup(r) => r.add(group_by, row, ctx),
        }
    }

    /// Each group's first row (`width` columns, with the GROUP BY values after them for a
    /// rollup) and its aggregate values.
    pub(crate) fn finish(
        self,
        width: usize,
        group_by: &[Expr],
        ctx: &dyn EvalEnv,
    ) -> Result<Vec<GroupRow>> {
        match self {
            Grouping::Plain(a) => Ok(a.finish(width)),
            Grouping::Rollup(r) => r.finish(width, group_by, ctx),
        }
    }
}

/// `GROUP BY e1, …, en WITH ROLLUP`: the groups of every prefix of the list, from all of it
/// down to none (the grand total). A group of a shorter prefix is a super-aggregate row,
/// whose rolled-up GROUP BY values are NULL.
///
/// Rows come out with the GROUP BY values appended to the group's first row, then for each
/// value 1 if it is rolled up, else 0 (the plan reads them there: `query::roll_up`), ordered
/// as MySQL returns them: by the GROUP BY values, a
/// super-aggregate row after the groups it sums up.
pub(crate) struct Rollup<'a> {
    /// `levels[k]` groups by the first k expressions.
    levels: Vec<Aggregator<'a>>,
}

impl<'a> Rollup<'a> {
    pub(crate) fn new(aggs: &'a [AggCall], group_by_len: usize, env: &dyn EvalEnv) -> Rollup<'a> {
        // Every level is grouped: no input rows, no rows at all (not a grand total of NULLs).
        let levels = (0..=group_by_len)
            .map(|_| Aggregator::new(aggs, group_by_len.max(1), env))
            .collect();
        Rollup { levels }
    }

    pub(crate) fn add(
        &mut self,
        group_by: &[Expr],
        row: &[Datum],
        ctx: &dyn EvalEnv,
    ) -> Result<()> {
        for (k, level) in self.levels.iter_mut().enumerate() {
            level.add(&group_by[..k], row, ctx)?;
        }
        Ok(())
    }

    /// Each group's first row (`width` columns) with the GROUP BY values appended, and its
    /// aggregate values.
    pub(crate) fn finish(
        self,
        width: usize,
        group_by: &[Expr],
        ctx: &dyn EvalEnv,
    ) -> Result<Vec<GroupRow>> {
        let mut out: Vec<(RollupKey, GroupRow)> = Vec::new();
        for (k, level) in self.levels.into_iter().enumerate() {
            for (mut row, values) in level.finish(width) {
                let mut key = Vec::with_capacity(group_by.len());
                for (i, e) in group_by.iter().enumerate() {
                    let value = if i < k {
                        e.eval(&row, ctx)?
                    } else {
                        Datum::Null
                    };
                    key.push((i >= k, value));
                }
                row.extend(key.iter().map(|(_, v)| v.clone()));
                row.extend(key.iter().map(|(rolled, _)| Datum::Int(i64::from(*rolled))));
                out.push((key, (row, values)));
            }
        }
        out.sort_by(|(a, _), (b, _)| {
            a.iter()
                .zip(b)
                .map(|((ra, va), (rb, vb))| ra.cmp(rb).then_with(|| types::sort_compare(va, vb)))
                .find(|o| o.is_ne())
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        Ok(out.into_iter().map(|(_, row)| row).collect())
    }
}

/// `group_concat_max_len`: the longest GROUP_CONCAT result, in bytes.
fn concat_max_len(env: &dyn EvalEnv) -> usize {
    let max_len = env.session_value(&SessionValue::SystemVariable("group_concat_max_len".into()));
    to_i64(&max_len).map_or(GROUP_CONCAT_MAX_LEN, |n| n.max(4) as usize)
}

fn fresh_state(call: &AggCall) -> AggState {
    match call.func {
        AggFunc::Count | AggFunc::CountStar => AggState::Count(0),
        AggFunc::Sum => AggState::SumDecimal(None),
        AggFunc::Avg => AggState::Avg {
            sum: Decimal::ZERO,
            sum_float: 0.0,
            float: false,
            count: 0,
        },
        AggFunc::Min | AggFunc::Max => AggState::Extreme(None),
        AggFunc::GroupConcat | AggFunc::JsonArrayAgg | AggFunc::JsonObjectAgg => {
            AggState::Concat(Vec::new())
        }
        AggFunc::VarPop | AggFunc::VarSamp | AggFunc::StdPop | AggFunc::StdSamp => {
            AggState::Spread {
                count: 0,
                mean: 0.0,
                m2: 0.0,
            }
        }
        // BIT_AND of no rows is all ones, as in MySQL.
        AggFunc::BitAnd => AggState::Bits(u64::MAX),
        AggFunc::BitOr | AggFunc::BitXor => AggState::Bits(0),
        AggFunc::AnyValue => AggState::First(None),
    }
}

/// One aggregate call over the rows of a window frame, which are added one by one (or, for a
/// frame that grows backwards, last first).
#[derive(Clone)]
pub(crate) struct FrameAggregate<'a> {
    call: &'a AggCall,
    state: AggState,
    concat_max_len: usize,
}

impl<'a> FrameAggregate<'a> {
    pub(crate) fn new(call: &'a AggCall, env: &dyn EvalEnv) -> FrameAggregate<'a> {
        FrameAggregate {
            call,
            state: fresh_state(call),
            concat_max_len: concat_max_len(env),
        }
    }

    /// Forgets the rows added so far.
    pub(crate) fn clear(&mut self) {
        self.state = fresh_state(self.call);
    }

    /// Adds a row whose argument has `value` (any value for COUNT(*)).
    pub(crate) fn add(&mut self, value: &Datum) {
        let value = if self.call.func == AggFunc::CountStar {
            Datum::Int(1)
        } else {
            value.clone()
        };
        if value == Datum::Null {
            return;
        }
        match &mut self.state {
            AggState::Concat(parts) => parts.push((Vec::new(), datum_to_text(&value))),
            state => accumulate(state, self.call.func, value),
        }
    }

    /// The aggregate of the rows added; `reversed` when they were added last first.
    pub(crate) fn value(&self, reversed: bool) -> Datum {
        let mut state = self.state.clone();
        if let (true, AggState::Concat(parts)) = (reversed, &mut state) {
            parts.reverse();
        }
        finish_state(state, self.call, self.concat_max_len)
    }
}

fn accumulate(state: &mut AggState, func: AggFunc, value: Datum) {
    match state {
        AggState::Count(n) => *n += 1,
        AggState::SumDecimal(acc) => {
            if matches!(value, Datum::Float(_)) || matches!(value, Datum::Bytes(_)) {
                let start = acc
                    .map(|d| rust_decimal::prelude::ToPrimitive::to_f64(&d).unwrap_or(0.0))
                    .unwrap_or(0.0);
                *state = AggState::SumFloat(Some(start + to_f64(&value).unwrap_or(0.0)));
            } else {
                let v = to_decimal(&value).unwrap_or_default();
                *acc = Some(
                    acc.unwrap_or(Decimal::ZERO)
                        .checked_add(v)
                        .unwrap_or(Decimal::MAX),
                );
            }
        }
        AggState::SumFloat(acc) => *acc = Some(acc.unwrap_or(0.0) + to_f64(&value).unwrap_or(0.0)),
        AggState::Avg {
            sum,
            sum_float,
            float,
            count,
        } => {
            if matches!(value, Datum::Float(_) | Datum::Bytes(_)) {
                *float = true;
            }
            *sum_float += to_f64(&value).unwrap_or(0.0);
            *sum = sum
                .checked_add(to_decimal(&value).unwrap_or_default())
                .unwrap_or(Decimal::MAX);
            *count += 1;
        }
        AggState::Extreme(current) => {
            let replace = match current {
                None => true,
                Some(c) => {
                    let o = types::sort_compare(&value, c);
                    if func == AggFunc::Min {
                        o == std::cmp::Ordering::Less
                    } else {
                        o == std::cmp::Ordering::Greater
                    }
                }
            };
            if replace {
                *current = Some(value);
            }
        }
        AggState::Concat(parts) => parts.push((Vec::new(), datum_to_text(&value))),
        AggState::Spread { count, mean, m2 } => {
            let x = to_f64(&value).unwrap_or(0.0);
            *count += 1;
            let delta = x - *mean;
            *mean += delta / *count as f64;
            *m2 += delta * (x - *mean);
        }
        AggState::Bits(bits) => {
            let v = match value {
                Datum::UInt(u) => u,
                Datum::Float(f) => f.round() as i64 as u64,
                other => to_i64(&other).unwrap_or(0) as u64,
            };
            match func {
                AggFunc::BitAnd => *bits &= v,
                AggFunc::BitOr => *bits |= v,
                _ => *bits ^= v,
            }
        }
        AggState::First(first) => {
            if first.is_none() {
                *first = Some(value);
            }
        }
    }
}

fn finish_state(state: AggState, call: &AggCall, concat_max_len: usize) -> Datum {
    match state {
        AggState::Count(n) => Datum::Int(n),
        AggState::SumDecimal(acc) => acc.map(Datum::Decimal).unwrap_or(Datum::Null),
        AggState::SumFloat(acc) => acc.map(Datum::Float).unwrap_or(Datum::Null),
        AggState::Avg { count: 0, .. } => Datum::Null,
        AggState::Avg {
            sum_float,
            float: true,
            count,
            ..
        } => Datum::Float(sum_float / count as f64),
        // As MySQL divides: further digits are rounded away when the value is shown.
        AggState::Avg { sum, count, .. } => {
            crate::expr::decimal_quotient(sum, Decimal::from(count))
                .map(Datum::Decimal)
                .unwrap_or(Datum::Null)
        }
        AggState::Extreme(v) | AggState::First(v) => v.unwrap_or(Datum::Null),
        AggState::Bits(bits) => Datum::UInt(bits),
        AggState::Spread { count, m2, .. } => {
            let sample = matches!(call.func, AggFunc::VarSamp | AggFunc::StdSamp);
            let divisor = if sample { count - 1 } else { count };
            if divisor <= 0 {
                return Datum::Null;
            }
            let variance = m2 / divisor as f64;
            match call.func {
                AggFunc::StdPop | AggFunc::StdSamp => Datum::Float(variance.sqrt()),
                _ => Datum::Float(variance),
            }
        }
        AggState::Concat(parts) if parts.is_empty() => Datum::Null,
        AggState::Concat(parts) if call.func == AggFunc::JsonArrayAgg => {
            let items: Vec<&[u8]> = parts.iter().map(|(_, part)| part.as_slice()).collect();
            let mut out = b"[".to_vec();
            out.extend_from_slice(&items.join(&b", "[..]));
            out.push(b']');
            Datum::Bytes(out)
        }
        AggState::Concat(parts) if call.func == AggFunc::JsonObjectAgg => {
            // Each part is `[key, value]`; a later key replaces an earlier one, as in MySQL.
            let mut object = serde_json::Map::new();
            for (_, part) in parts {
                if let Ok(serde_json::Value::Array(mut pair)) = serde_json::from_slice(&part) {
                    let value = pair.pop().unwrap_or_default();
                    let key = match pair.pop() {
                        Some(serde_json::Value::String(key)) => key,
                        Some(serde_json::Value::Number(n)) => n.to_string(),
                        _ => continue,
                    };
                    object.insert(key, value);
                }
            }
            Datum::Bytes(crate::expr::print_json(&serde_json::Value::Object(object)).into_bytes())
        }
        AggState::Concat(mut parts) => {
            if !call.order_by.is_empty() {
                parts.sort_by(|(a, _), (b, _)| compare_sort_keys(a, b, &call.order_by));
            }
            let mut out = Vec::new();
            for (i, (_, part)) in parts.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(&call.separator);
                }
                out.extend_from_slice(part);
                if out.len() >= concat_max_len {
                    break;
                }
            }
            // As MySQL: cut at group_concat_max_len bytes (on a character boundary).
            if out.len() > concat_max_len {
                let mut end = concat_max_len;
                while end > 0 && (out[end] & 0xC0) == 0x80 {
                    end -= 1;
                }
                out.truncate(end);
            }
            Datum::Bytes(out)
        }
    }
}
