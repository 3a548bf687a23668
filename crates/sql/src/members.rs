//! The column types whose values come from a list or a short range: ENUM (one member), SET
//! (any members) and YEAR.
//!
//! ENUM and SET values are stored as their text (the members, in the column's order for a
//! SET), so they read, compare and print as strings; MySQL stores a member's number instead,
//! so two things differ: ORDER BY sorts them as text, not by member number, and in a numeric
//! context they are text (`e + 0` is 0 unless the member is a number), not the member number.
//! A number written to them is a member number (ENUM) or a bit set of members (SET), as in
//! MySQL. A value that is no member is an error (1265), as in MySQL's strict mode.

use strata_codec::Datum;

use crate::error::{self, Error, Result};
use crate::types::{datum_to_text, to_i64};

fn truncated(column: &str) -> Error {
    Error::new(
        1265,
        "01000",
        format!("Data truncated for column '{column}' at row 1"),
    )
}

/// Whether `value` is a number (not text that spells one).
fn is_number(value: &Datum) -> bool {
    matches!(
        value,
        Datum::Int(_) | Datum::UInt(_) | Datum::Decimal(_) | Datum::Float(_)
    )
}

/// An ENUM column's value: the member `value` names, or member number `value` (from 1).
pub fn enum_value(members: &[String], value: Datum, column: &str) -> Result<Datum> {
    if is_number(&value) {
        let n = to_i64(&value).unwrap_or(0);
        return match usize::try_from(n) {
            Ok(n) if n >= 1 && n <= members.len() => {
                Ok(Datum::Bytes(members[n - 1].clone().into_bytes()))
            }
            _ => Err(truncated(column)),
        };
    }
    let text = datum_to_text(&value);
    let text = text.trim_ascii_end();
    members
        .iter()
        .find(|m| m.as_bytes() == text)
        .map(|m| Datum::Bytes(m.clone().into_bytes()))
        .ok_or_else(|| truncated(column))
}

/// A SET column's value: the members `value` names (comma-separated), or whose bits number
/// `value` sets (bit 0 the first member), in the column's order, each once.
pub fn set_value(members: &[String], value: Datum, column: &str) -> Result<Datum> {
    let mut chosen = vec![false; members.len()];
    if is_number(&value) {
        let bits = match value {
            Datum::UInt(u) => u,
            other => to_i64(&other).unwrap_or(0) as u64,
        };
        if members.len() < 64 && bits >> members.len() != 0 {
            return Err(truncated(column));
        }
        for (i, chosen) in chosen.iter_mut().enumerate() {
            *chosen = bits >> i & 1 == 1;
        }
    } else {
        let text = datum_to_text(&value);
        for part in text.split(|b| *b == b',').filter(|p| !p.is_empty()) {
            let part = part.trim_ascii_end();
            let at = members
                .iter()
                .position(|m| m.as_bytes() == part)
                .ok_or_else(|| truncated(column))?;
            chosen[at] = true;
        }
    }
    let parts: Vec<&str> = members
        .iter()
        .zip(&chosen)
        .filter(|(_, c)| **c)
        .map(|(m, _)| m.as_str())
        .collect();
    Ok(Datum::Bytes(parts.join(",").into_bytes()))
}

/// A YEAR column's value: 1901 to 2155, or 0; two-digit years 1 to 69 are 2001 to 2069 and
/// 70 to 99 are 1970 to 1999, and the text `'0'` or `'00'` is 2000, as in MySQL.
pub fn year_value(value: Datum, column: &str) -> Result<Datum> {
    let (n, text_zero) = match &value {
        Datum::Bytes(b) => {
            let text = std::str::from_utf8(b).unwrap_or("").trim();
            let n: i64 = text.parse().map_err(|_| {
                error::incorrect_value("integer", &String::from_utf8_lossy(b), column)
            })?;
            (n, n == 0 && !text.is_empty() && text.len() <= 2)
        }
        Datum::Date(_) | Datum::DateTime(_) => {
            let text = String::from_utf8_lossy(&datum_to_text(&value)).into_owned();
            (text[..4].parse().unwrap_or(0), false)
        }
        other => (to_i64(other).unwrap_or(0), false),
    };
    let year = match n {
        0 if text_zero => 2000,
        0 => 0,
        1..=69 => n + 2000,
        70..=99 => n + 1900,
        1901..=2155 => n,
        _ => return Err(error::out_of_range(column)),
    };
    Ok(Datum::Int(year))
}

/// A BIT(`bits`) column's value: a number, or a binary string read as a big-endian number (as
/// MySQL reads `b'101'`, `0x05` and text); 1406 when it needs more bits than the column has.
pub fn bit_value(value: Datum, bits: u32, column: &str) -> Result<Datum> {
    let n: u64 = match &value {
        Datum::Bytes(b) => {
            if b.len() > 8 {
                return Err(error::data_too_long(column));
            }
            b.iter().fold(0u64, |n, byte| n << 8 | u64::from(*byte))
        }
        Datum::UInt(u) => *u,
        other => match to_i64(other) {
            Some(n) if n >= 0 => n as u64,
            _ => return Err(error::data_too_long(column)),
        },
    };
    if bits < 64 && n >> bits != 0 {
        return Err(error::data_too_long(column));
    }
    Ok(Datum::UInt(n))
}

/// `'a','b'` as the column's members: quotes doubled inside, trailing spaces dropped.
pub fn quoted_list(members: &[String]) -> String {
    members
        .iter()
        .map(|m| format!("'{}'", m.replace('\'', "''")))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Datum {
        Datum::Bytes(text.as_bytes().to_vec())
    }

    #[test]
    fn members_are_checked_and_numbers_name_them() {
        let members: Vec<String> = ["small", "medium", "large"].map(String::from).to_vec();
        assert_eq!(enum_value(&members, s("medium"), "e").unwrap(), s("medium"));
        assert_eq!(
            enum_value(&members, Datum::Int(3), "e").unwrap(),
            s("large")
        );
        assert_eq!(
            enum_value(&members, s("huge"), "e").unwrap_err().code(),
            1265
        );
        assert_eq!(
            enum_value(&members, Datum::Int(0), "e").unwrap_err().code(),
            1265
        );
        assert_eq!(
            set_value(&members, s("large,small,small"), "s").unwrap(),
            s("small,large")
        );
        assert_eq!(
            set_value(&members, Datum::Int(6), "s").unwrap(),
            s("medium,large")
        );
        assert_eq!(set_value(&members, s(""), "s").unwrap(), s(""));
        assert_eq!(
            set_value(&members, Datum::Int(8), "s").unwrap_err().code(),
            1265
        );
    }

    #[test]
    fn years_follow_mysql() {
        let y = |v: Datum| year_value(v, "y");
        assert_eq!(y(Datum::Int(2024)).unwrap(), Datum::Int(2024));
        assert_eq!(y(Datum::Int(24)).unwrap(), Datum::Int(2024));
        assert_eq!(y(Datum::Int(70)).unwrap(), Datum::Int(1970));
        assert_eq!(y(Datum::Int(0)).unwrap(), Datum::Int(0));
        assert_eq!(y(s("0")).unwrap(), Datum::Int(2000));
        assert_eq!(y(s("1999")).unwrap(), Datum::Int(1999));
        assert_eq!(y(Datum::Int(1900)).unwrap_err().code(), 1264);
        assert_eq!(y(Datum::Int(2156)).unwrap_err().code(), 1264);
    }
}
