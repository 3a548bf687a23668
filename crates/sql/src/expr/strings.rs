//! String functions beyond the few the evaluator knows itself. Positions and lengths count
//! characters (of UTF-8 text), and comparisons are binary, as the rest of the evaluator's.

use strata_codec::Datum;

use crate::error::Result;
use crate::types::{datum_to_text, to_i64};

/// The longest string a function builds (MySQL's `max_allowed_packet` default): a longer
/// result is NULL, as MySQL's is.
const STRING_RESULT_BYTES_MAX: usize = 64 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StrFunc {
    ConcatWs,
    Replace,
    Left,
    Right,
    Lpad,
    Rpad,
    Ltrim,
    Rtrim,
    Reverse,
    Repeat,
    Space,
    Instr,
    Locate,
    Ascii,
    Hex,
    Strcmp,
    SubstringIndex,
    Field,
    Elt,
    FindInSet,
    Ord,
    Bin,
    Oct,
    Sha1,
    Sha2,
    Uuid,
    Format,
    Insert,
    Quote,
}

impl StrFunc {
    /// Whether the result is made of its arguments' strings (so a binary string of one).
    pub fn keeps_binary(self) -> bool {
        use StrFunc::*;
        matches!(
            self,
            ConcatWs
                | Replace
                | Left
                | Right
                | Lpad
                | Rpad
                | Ltrim
                | Rtrim
                | Reverse
                | Repeat
                | SubstringIndex
                | Elt
                | Insert
        )
    }

    pub fn by_name(name: &str) -> Option<StrFunc> {
        use StrFunc::*;
        Some(match name {
            "CONCAT_WS" => ConcatWs,
            "REPLACE" => Replace,
            "LEFT" => Left,
            "RIGHT" => Right,
            "LPAD" => Lpad,
            "RPAD" => Rpad,
            "LTRIM" => Ltrim,
            "RTRIM" => Rtrim,
            "REVERSE" => Reverse,
            "REPEAT" => Repeat,
            "SPACE" => Space,
            "INSTR" => Instr,
            "LOCATE" | "POSITION" => Locate,
            "ASCII" => Ascii,
            "HEX" => Hex,
            "STRCMP" => Strcmp,
            "SUBSTRING_INDEX" => SubstringIndex,
            "FIELD" => Field,
            "ELT" => Elt,
            "FIND_IN_SET" => FindInSet,
            "ORD" => Ord,
            "BIN" => Bin,
            "OCT" => Oct,
            "SHA1" | "SHA" => Sha1,
            "SHA2" => Sha2,
            "UUID" => Uuid,
            "FORMAT" => Format,
            "INSERT" => Insert,
            "QUOTE" => Quote,
            _ => return None,
        })
    }

    pub fn arity_ok(self, n: usize) -> bool {
        use StrFunc::*;
        match self {
            ConcatWs | Field | Elt => n >= 2,
            SubstringIndex => n == 3,
            FindInSet => n == 2,
            Ord | Bin | Oct | Sha1 | Quote => n == 1,
            Insert => n == 4,
            Sha2 | Format => n == 2,
            Uuid => n == 0,
            Replace | Lpad | Rpad => n == 3,
            Left | Right | Repeat | Instr | Strcmp => n == 2,
            Locate => n == 2 || n == 3,
            Ltrim | Rtrim | Reverse | Space | Ascii | Hex => n == 1,
        }
    }

    /// Whether the result is a number (else text).
    pub fn returns_integer(self) -> bool {
        matches!(
            self,
            StrFunc::Instr
                | StrFunc::Locate
                | StrFunc::Ascii
                | StrFunc::Strcmp
                | StrFunc::Field
                | StrFunc::FindInSet
                | StrFunc::Ord
        )
    }
}

fn chars(d: &Datum) -> Vec<char> {
    String::from_utf8_lossy(&datum_to_text(d)).chars().collect()
}

fn text(chars: impl IntoIterator<Item = char>) -> Datum {
    Datum::Bytes(chars.into_iter().collect::<String>().into_bytes())
}

/// A count argument: negative counts as zero.
fn count(d: &Datum) -> usize {
    to_i64(d).unwrap_or(0).max(0) as usize
}

/// The 1-based character position of `needle` in `hay` at or after character `from` (0-based),
/// or 0.
fn position(hay: &[char], needle: &[char], from: usize) -> i64 {
    if needle.is_empty() {
        return if from <= hay.len() {
            from as i64 + 1
        } else {
            0
        };
    }
    (from..hay.len())
        .find(|&i| hay[i..].starts_with(needle))
        .map_or(0, |i| i as i64 + 1)
}

/// Pads `s` to `n` characters with `pad` on the left or the right, or cuts it to `n`.
fn pad(values: &[Datum], left: bool) -> Datum {
    let (s, pad) = (chars(&values[0]), chars(&values[2]));
    let Some(n) = to_i64(&values[1]).filter(|n| *n >= 0) else {
        return Datum::Null;
    };
    let n = n as usize;
    if n <= s.len() {
        return text(s.into_iter().take(n));
    }
    if pad.is_empty() || n.saturating_mul(4) > STRING_RESULT_BYTES_MAX {
        return Datum::Null;
    }
    let filler = pad.iter().cycle().take(n - s.len()).copied();
    if left {
        text(filler.chain(s))
    } else {
        text(s.into_iter().chain(filler))
    }
}

fn lower_hex(bytes: &[u8]) -> Datum {
    Datum::Bytes(
        bytes
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
            .into_bytes(),
    )
}

/// `FORMAT(x, d)`: `x` rounded to `d` decimals (half away from zero) with a comma between
/// each three digits of its whole part, as MySQL's default `en_US` locale writes it.
fn format_number(x: &Datum, places: i64) -> Datum {
    let places = places.clamp(0, 30) as u32;
    let Some(d) = crate::types::to_decimal(x) else {
        return Datum::Null;
    };
    let rounded =
        d.round_dp_with_strategy(places, rust_decimal::RoundingStrategy::MidpointAwayFromZero);
    let mut text = rounded.abs().to_string();
    if places > 0 && !text.contains('.') {
        text.push('.');
    }
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let mut grouped = String::new();
    for (i, c) in whole.chars().enumerate() {
        if i > 0 && (whole.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    let mut fraction = fraction.to_string();
    while fraction.len() < places as usize {
        fraction.push('0');
    }
    let sign = if rounded.is_sign_negative() && !rounded.is_zero() {
        "-"
    } else {
        ""
    };
    let out = if places == 0 {
        format!("{sign}{grouped}")
    } else {
        format!("{sign}{grouped}.{fraction}")
    };
    Datum::Bytes(out.into_bytes())
}

pub(super) fn eval(func: StrFunc, values: &[Datum]) -> Result<Datum> {
    use StrFunc::*;
    if func == ConcatWs {
        // NULL arguments are skipped; only a NULL separator makes the result NULL.
        if values[0] == Datum::Null {
            return Ok(Datum::Null);
        }
        let separator = datum_to_text(&values[0]);
        let parts: Vec<Vec<u8>> = values[1..]
            .iter()
            .filter(|v| **v != Datum::Null)
            .map(datum_to_text)
            .collect();
        return Ok(Datum::Bytes(parts.join(&separator[..])));
    }
    match func {
        Uuid => {
            // A random (version 4) UUID in MySQL's text form.
            let b: [u8; 16] = rand::random();
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            let (v, r) = (
                format!("4{}", &hex[13..16]),
                format!("{:x}{}", 8 | (b[8] & 0x3), &hex[17..20]),
            );
            let text = format!("{}-{}-{v}-{r}-{}", &hex[0..8], &hex[8..12], &hex[20..32]);
            return Ok(Datum::Bytes(text.into_bytes()));
        }
        // The position of the first argument among the others (0: none, or NULL).
        Field => {
            if values[0] == Datum::Null {
                return Ok(Datum::Int(0));
            }
            let at = values[1..].iter().position(|v| {
                crate::types::compare(&values[0], v) == Some(std::cmp::Ordering::Equal)
            });
            return Ok(Datum::Int(at.map_or(0, |i| i as i64 + 1)));
        }
        // The argument the first one numbers, from 1.
        Elt => {
            let n = to_i64(&values[0]).unwrap_or(0);
            return Ok(match usize::try_from(n) {
                Ok(n) if n >= 1 && n < values.len() => values[n].clone(),
                _ => Datum::Null,
            });
        }
        // The text as a string literal, quotes and backslashes escaped; NULL as the word.
        Quote => {
            let Some(first) = values.first().filter(|v| **v != Datum::Null) else {
                return Ok(Datum::Bytes(b"NULL".to_vec()));
            };
            let mut out = vec![b'\''];
            for c in datum_to_text(first) {
                match c {
                    b'\'' | b'\\' => out.extend_from_slice(&[b'\\', c]),
                    0 => out.extend_from_slice(b"\\0"),
                    26 => out.extend_from_slice(b"\\Z"),
                    c => out.push(c),
                }
            }
            out.push(b'\'');
            return Ok(Datum::Bytes(out));
        }
        _ => {}
    }
    if values.contains(&Datum::Null) {
        return Ok(Datum::Null);
    }
    let first = &values[0];
    Ok(match func {
        ConcatWs => unreachable!("handled above"),
        Replace => {
            let (s, from, to) = (
                String::from_utf8_lossy(&datum_to_text(first)).into_owned(),
                String::from_utf8_lossy(&datum_to_text(&values[1])).into_owned(),
                String::from_utf8_lossy(&datum_to_text(&values[2])).into_owned(),
            );
            if from.is_empty() {
                Datum::Bytes(s.into_bytes())
            } else {
                let grows = to.len().saturating_sub(from.len()) * s.matches(&from).count();
                if s.len() + grows > STRING_RESULT_BYTES_MAX {
                    return Ok(Datum::Null);
                }
                Datum::Bytes(s.replace(&from, &to).into_bytes())
            }
        }
        Left => text(chars(first).into_iter().take(count(&values[1]))),
        Right => {
            let s = chars(first);
            let n = count(&values[1]).min(s.len());
            text(s[s.len() - n..].iter().copied())
        }
        Lpad => pad(values, true),
        Rpad => pad(values, false),
        Ltrim => {
            let s = datum_to_text(first);
            let start = s.iter().position(|b| *b != b' ').unwrap_or(s.len());
            Datum::Bytes(s[start..].to_vec())
        }
        Rtrim => {
            let s = datum_to_text(first);
            let end = s.iter().rposition(|b| *b != b' ').map_or(0, |i| i + 1);
            Datum::Bytes(s[..end].to_vec())
        }
        Reverse => text(chars(first).into_iter().rev()),
        Repeat | Space => {
            let (unit, times) = match func {
                Repeat => (datum_to_text(first), count(&values[1])),
                _ => (b" ".to_vec(), count(first)),
            };
            if unit.len().saturating_mul(times) > STRING_RESULT_BYTES_MAX {
                return Ok(Datum::Null);
            }
            Datum::Bytes(unit.repeat(times))
        }
        Instr => Datum::Int(position(&chars(first), &chars(&values[1]), 0)),
        Locate => {
            let from = match values.get(2) {
                Some(p) => match to_i64(p) {
                    Some(p) if p >= 1 => p as usize - 1,
                    _ => return Ok(Datum::Int(0)),
                },
                None => 0,
            };
            Datum::Int(position(&chars(&values[1]), &chars(first), from))
        }
        Ascii => Datum::Int(datum_to_text(first).first().map_or(0, |b| i64::from(*b))),
        Hex => match first {
            Datum::Int(_) | Datum::UInt(_) | Datum::Float(_) | Datum::Decimal(_) => {
                // Numbers in hexadecimal, negative ones as 64-bit two's complement.
                let n = match first {
                    Datum::UInt(u) => *u,
                    Datum::Float(f) => f.round() as i64 as u64,
                    other => to_i64(other).unwrap_or(0) as u64,
                };
                Datum::Bytes(format!("{n:X}").into_bytes())
            }
            other => Datum::Bytes(
                datum_to_text(other)
                    .iter()
                    .map(|b| format!("{b:02X}"))
                    .collect::<String>()
                    .into_bytes(),
            ),
        },
        SubstringIndex => {
            let (s, delim) = (datum_to_text(first), datum_to_text(&values[1]));
            let n = to_i64(&values[2]).unwrap_or(0);
            if delim.is_empty() || n == 0 {
                return Ok(Datum::Bytes(Vec::new()));
            }
            let starts: Vec<usize> = (0..=s.len().saturating_sub(delim.len()))
                .filter(|&i| s[i..].starts_with(&delim))
                .collect();
            let wanted = n.unsigned_abs() as usize;
            Datum::Bytes(if wanted > starts.len() {
                s
            } else if n > 0 {
                s[..starts[wanted - 1]].to_vec()
            } else {
                s[starts[starts.len() - wanted] + delim.len()..].to_vec()
            })
        }
        FindInSet => {
            let (needle, list) = (datum_to_text(first), datum_to_text(&values[1]));
            if needle.contains(&b',') {
                Datum::Int(0)
            } else {
                let at = list
                    .split(|b| *b == b',')
                    .position(|item| item == needle.as_slice());
                Datum::Int(at.map_or(0, |i| i as i64 + 1))
            }
        }
        Ord => {
            // The leftmost character's bytes as one number, first byte highest.
            let s = datum_to_text(first);
            let width = std::str::from_utf8(&s)
                .ok()
                .and_then(|t| t.chars().next())
                .map_or(s.len().min(1), char::len_utf8);
            Datum::Int(s[..width].iter().fold(0, |n, b| n * 256 + i64::from(*b)))
        }
        Bin | Oct => {
            let n = match first {
                Datum::UInt(u) => *u,
                Datum::Float(f) => *f as i64 as u64,
                other => to_i64(other).unwrap_or(0) as u64,
            };
            Datum::Bytes(
                match func {
                    Bin => format!("{n:b}"),
                    _ => format!("{n:o}"),
                }
                .into_bytes(),
            )
        }
        Sha1 => {
            use sha1::Digest;
            lower_hex(&sha1::Sha1::digest(datum_to_text(first)))
        }
        Sha2 => {
            use sha2::Digest;
            let text = datum_to_text(first);
            match to_i64(&values[1]) {
                Some(224) => lower_hex(&sha2::Sha224::digest(&text)),
                Some(0 | 256) => lower_hex(&sha2::Sha256::digest(&text)),
                Some(384) => lower_hex(&sha2::Sha384::digest(&text)),
                Some(512) => lower_hex(&sha2::Sha512::digest(&text)),
                _ => Datum::Null,
            }
        }
        Format => format_number(first, to_i64(&values[1]).unwrap_or(0)),
        // INSERT(text, position, length, new): a position outside the text changes nothing; a
        // length past its end replaces the rest.
        Insert => {
            let s = chars(first);
            let position = to_i64(&values[1]).unwrap_or(0);
            if position < 1 || position as usize > s.len() {
                return Ok(Datum::Bytes(datum_to_text(first)));
            }
            let start = position as usize - 1;
            let length = to_i64(&values[2]).unwrap_or(0);
            let end = if length < 0 {
                s.len()
            } else {
                start.saturating_add(length as usize).min(s.len())
            };
            let new = chars(&values[3]);
            text(s[..start].iter().chain(&new).chain(&s[end..]).copied())
        }
        Field | Elt | Uuid | Quote => unreachable!("handled above"),
        Strcmp => Datum::Int(match datum_to_text(first).cmp(&datum_to_text(&values[1])) {
            std::cmp::Ordering::Less => -1,
            std::cmp::Ordering::Equal => 0,
            std::cmp::Ordering::Greater => 1,
        }),
    })
}
