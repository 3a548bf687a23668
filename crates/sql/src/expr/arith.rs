//! Arithmetic, comparison and LIKE over values.

use std::cmp::Ordering;

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use strata_codec::Datum;

use crate::error::{self, Result};
use crate::types::{compare, to_bool, to_decimal, to_f64, to_i64};

use super::*;

pub(super) fn negate(v: Datum) -> Result<Datum> {
    Ok(match v {
        Datum::Null => Datum::Null,
        Datum::Int(i) => Datum::Int(
            i.checked_neg()
                .ok_or_else(|| error::value_out_of_range("BIGINT", "-"))?,
        ),
        Datum::UInt(u) => {
            if u <= i64::MAX as u64 + 1 {
                Datum::Int((u as i128).wrapping_neg() as i64)
            } else {
                return Err(error::value_out_of_range("BIGINT", "-"));
            }
        }
        Datum::Float(f) => Datum::Float(-f),
        Datum::Decimal(d) => Datum::Decimal(-d),
        other => Datum::Float(-to_f64(&other).unwrap_or(0.0)),
    })
}

#[derive(PartialEq, PartialOrd)]
pub(super) enum NumClass {
    Int,
    Decimal,
    Float,
}

pub(super) fn num_class(d: &Datum) -> NumClass {
    match d {
        Datum::Int(_) | Datum::UInt(_) => NumClass::Int,
        Datum::Decimal(_) => NumClass::Decimal,
        // As in MySQL, a string in arithmetic is a DOUBLE ('9223372036854775807' + 1 is
        // 9.223372036854776e18, not an overflow).
        _ => NumClass::Float,
    }
}

/// Fraction digits a decimal quotient keeps, as MySQL's decimal division does: the operands'
/// fractions each take whole words of nine digits, `div_precision_increment` more digits are
/// wanted beyond what that rounding added, and the quotient keeps whole words of it, cut (not
/// rounded). The quotient is shown with the dividend's decimals plus the increment, rounded
/// when shown ([`super::conform`]); the digits beyond count in later arithmetic, so that
/// `1/3*3` is `1.0000` as in MySQL.
fn quotient_fraction_digits(dividend_scale: u32, divisor_scale: u32) -> u32 {
    let words = |digits: u32| digits.div_ceil(9) * 9;
    let padding = (words(dividend_scale) - dividend_scale) + (words(divisor_scale) - divisor_scale);
    let wanted = DIV_PRECISION_INCREMENT.saturating_sub(padding);
    words(words(dividend_scale) + words(divisor_scale) + wanted).min(MAX_DECIMAL_SCALE)
}

/// `dividend / divisor` as MySQL's decimal division computes it (see
/// [`quotient_fraction_digits`]); None when it overflows or the divisor is zero.
pub fn decimal_quotient(dividend: Decimal, divisor: Decimal) -> Option<Decimal> {
    let digits = quotient_fraction_digits(dividend.scale(), divisor.scale());
    let mut q = dividend
        .checked_div(divisor)?
        .round_dp_with_strategy(digits, rust_decimal::RoundingStrategy::ToZero);
    // All those digits count in a later division, zeros too.
    q.rescale(digits);
    Some(q)
}

/// The most fraction digits a decimal value holds.
const MAX_DECIMAL_SCALE: u32 = 28;

pub(super) fn arithmetic(op: BinaryOp, a: &Datum, b: &Datum, strict: bool) -> Result<Datum> {
    let by_zero = || {
        if strict {
            Err(error::division_by_zero())
        } else {
            Ok(Datum::Null)
        }
    };
    let class = std::cmp::max_by(num_class(a), num_class(b), |x, y| {
        x.partial_cmp(y).unwrap_or(Ordering::Equal)
    });
    let overflow = || error::value_out_of_range("BIGINT", "arithmetic");
    if op == BinaryOp::Divide {
        let d = to_decimal(b).unwrap_or_default();
        if class == NumClass::Float {
            let y = to_f64(b).unwrap_or(0.0);
            if y == 0.0 {
                return by_zero();
            }
            return finite(to_f64(a).unwrap_or(0.0) / y);
        }
        if d.is_zero() {
            return by_zero();
        }
        let x = to_decimal(a).unwrap_or_default();
        return decimal_quotient(x, d)
            .map(Datum::Decimal)
            .ok_or_else(overflow);
    }
    match class {
        NumClass::Int => {
            let (x, y) = (int_value(a), int_value(b));
            let r = match op {
                BinaryOp::Plus => x.checked_add(y),
                BinaryOp::Minus => x.checked_sub(y),
                BinaryOp::Multiply => x.checked_mul(y),
                BinaryOp::IntDivide => {
                    if y == 0 {
                        return by_zero();
                    }
                    x.checked_div(y)
                }
                BinaryOp::Modulo => {
                    if y == 0 {
                        return by_zero();
                    }
                    x.checked_rem(y)
                }
                _ => unreachable!("arithmetic operator"),
            }
            .ok_or_else(overflow)?;
            // As in MySQL: signed operands give a signed BIGINT, an unsigned one an unsigned.
            let unsigned = matches!(a, Datum::UInt(_)) || matches!(b, Datum::UInt(_));
            if unsigned {
                u64::try_from(r)
                    .map(Datum::UInt)
                    .map_err(|_| error::value_out_of_range("BIGINT UNSIGNED", "arithmetic"))
            } else {
                i64::try_from(r).map(Datum::Int).map_err(|_| overflow())
            }
        }
        NumClass::Decimal => {
            let (x, y) = (
                to_decimal(a).unwrap_or_default(),
                to_decimal(b).unwrap_or_default(),
            );
            let r = match op {
                BinaryOp::Plus => x.checked_add(y),
                BinaryOp::Minus => x.checked_sub(y),
                BinaryOp::Multiply => x.checked_mul(y),
                BinaryOp::IntDivide => {
                    if y.is_zero() {
                        return by_zero();
                    }
                    return Ok(Datum::Int((x / y).trunc().to_i64().ok_or_else(overflow)?));
                }
                BinaryOp::Modulo => {
                    if y.is_zero() {
                        return by_zero();
                    }
                    x.checked_rem(y)
                }
                _ => unreachable!("arithmetic operator"),
            };
            Ok(Datum::Decimal(r.ok_or_else(|| {
                error::value_out_of_range("DECIMAL", "arithmetic")
            })?))
        }
        NumClass::Float => {
            let (x, y) = (to_f64(a).unwrap_or(0.0), to_f64(b).unwrap_or(0.0));
            match op {
                BinaryOp::Plus => finite(x + y),
                BinaryOp::Minus => finite(x - y),
                BinaryOp::Multiply => finite(x * y),
                BinaryOp::IntDivide if y == 0.0 => by_zero(),
                BinaryOp::IntDivide => {
                    let q = (x / y).trunc();
                    // i64::MAX as f64 rounds up to 2^63, which is out of range.
                    if q >= -(2f64.powi(63)) && q < 2f64.powi(63) {
                        Ok(Datum::Int(q as i64))
                    } else {
                        Err(overflow())
                    }
                }
                BinaryOp::Modulo if y == 0.0 => by_zero(),
                BinaryOp::Modulo => finite(x % y),
                _ => unreachable!("arithmetic operator"),
            }
        }
    }
}

/// A DOUBLE result, or MySQL's 1690 when it overflowed (MySQL has no infinities or NaN).
pub(super) fn finite(value: f64) -> Result<Datum> {
    if value.is_finite() {
        Ok(Datum::Float(value))
    } else {
        Err(error::value_out_of_range("DOUBLE", "arithmetic"))
    }
}

pub(super) fn int_value(d: &Datum) -> i128 {
    match d {
        Datum::Int(i) => *i as i128,
        Datum::UInt(u) => *u as i128,
        other => to_i64(other).unwrap_or(0) as i128,
    }
}

pub(super) fn binary(
    op: BinaryOp,
    l: &Expr,
    r: &Expr,
    row: &[Datum],
    env: &dyn EvalEnv,
) -> Result<Datum> {
    match op {
        BinaryOp::And => {
            let a = to_bool(&l.eval(row, env)?);
            if a == Some(false) {
                return Ok(bool_datum(false));
            }
            let b = to_bool(&r.eval(row, env)?);
            return Ok(match (a, b) {
                (_, Some(false)) => bool_datum(false),
                (Some(true), Some(true)) => bool_datum(true),
                _ => Datum::Null,
            });
        }
        BinaryOp::Or => {
            let a = to_bool(&l.eval(row, env)?);
            if a == Some(true) {
                return Ok(bool_datum(true));
            }
            let b = to_bool(&r.eval(row, env)?);
            return Ok(match (a, b) {
                (_, Some(true)) => bool_datum(true),
                (Some(false), Some(false)) => bool_datum(false),
                _ => Datum::Null,
            });
        }
        _ => {}
    }
    let a = l.eval(row, env)?;
    let b = r.eval(row, env)?;
    if op == BinaryOp::NullSafeEq {
        return Ok(bool_datum(match (&a, &b) {
            (Datum::Null, Datum::Null) => true,
            (Datum::Null, _) | (_, Datum::Null) => false,
            _ => compare(&a, &b) == Some(Ordering::Equal),
        }));
    }
    if a == Datum::Null || b == Datum::Null {
        return Ok(Datum::Null);
    }
    Ok(match op {
        BinaryOp::Eq => opt_bool(compare(&a, &b).map(|o| o == Ordering::Equal)),
        BinaryOp::NotEq => opt_bool(compare(&a, &b).map(|o| o != Ordering::Equal)),
        BinaryOp::Lt => opt_bool(compare(&a, &b).map(|o| o == Ordering::Less)),
        BinaryOp::LtEq => opt_bool(compare(&a, &b).map(|o| o != Ordering::Greater)),
        BinaryOp::Gt => opt_bool(compare(&a, &b).map(|o| o == Ordering::Greater)),
        BinaryOp::GtEq => opt_bool(compare(&a, &b).map(|o| o != Ordering::Less)),
        BinaryOp::Xor => opt_bool(match (to_bool(&a), to_bool(&b)) {
            (Some(x), Some(y)) => Some(x != y),
            _ => None,
        }),
        BinaryOp::BitAnd => Datum::UInt((int_value(&a) as u64) & (int_value(&b) as u64)),
        BinaryOp::BitOr => Datum::UInt((int_value(&a) as u64) | (int_value(&b) as u64)),
        BinaryOp::BitXor => Datum::UInt((int_value(&a) as u64) ^ (int_value(&b) as u64)),
        // A shift by 64 or more (a negative count is a huge unsigned one) leaves no bit.
        BinaryOp::ShiftLeft => Datum::UInt(
            u32::try_from(int_value(&b) as u64)
                .ok()
                .and_then(|n| (int_value(&a) as u64).checked_shl(n))
                .unwrap_or(0),
        ),
        BinaryOp::ShiftRight => Datum::UInt(
            u32::try_from(int_value(&b) as u64)
                .ok()
                .and_then(|n| (int_value(&a) as u64).checked_shr(n))
                .unwrap_or(0),
        ),
        _ => arithmetic(op, &a, &b, env.division_by_zero_is_error())?,
    })
}

/// SQL LIKE with `%`, `_` and an escape character, in the binary collation: characters
/// compare by their bytes, and `_` stands for one UTF-8 character (a byte of text that is not
/// UTF-8 counts as one).
pub fn like(text: &[u8], pattern: &[u8], escape: u8) -> bool {
    let (mut t, mut p) = (0usize, 0usize);
    let (mut star_p, mut star_t) = (usize::MAX, 0usize);
    while t < text.len() {
        let text_char = &text[t..t + utf8_len(text, t)];
        if p < pattern.len() {
            let c = pattern[p];
            if c == escape && p + 1 < pattern.len() {
                let escaped = &pattern[p + 1..p + 1 + utf8_len(pattern, p + 1)];
                if escaped == text_char {
                    p += 1 + escaped.len();
                    t += text_char.len();
                    continue;
                }
            } else if c == b'%' {
                star_p = p;
                star_t = t;
                p += 1;
                continue;
            } else if c == b'_' {
                p += 1;
                t += text_char.len();
                continue;
            } else {
                let literal = &pattern[p..p + utf8_len(pattern, p)];
                if literal == text_char {
                    p += literal.len();
                    t += text_char.len();
                    continue;
                }
            }
        }
        if star_p != usize::MAX {
            p = star_p + 1;
            star_t += utf8_len(text, star_t);
            t = star_t;
            continue;
        }
        return false;
    }
    while p < pattern.len() && pattern[p] == b'%' {
        p += 1;
    }
    p == pattern.len()
}

/// Bytes of the UTF-8 character that starts at `at` (1 for a byte that starts none).
fn utf8_len(bytes: &[u8], at: usize) -> usize {
    let len = match bytes[at] {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    };
    if at + len <= bytes.len() && bytes[at + 1..at + len].iter().all(|b| b & 0xc0 == 0x80) {
        len
    } else {
        1
    }
}
