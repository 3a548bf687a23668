//! Functions that encode values in other forms: digests (MD5, CRC32), base 64, hexadecimal,
//! number bases (CONV), IPv4 addresses, and counts of bits.

use base64::Engine as _;
use strata_codec::Datum;

use crate::types::{datum_to_text, to_i64};

/// Characters per line of `TO_BASE64`'s output, as MySQL wraps it.
const BASE64_LINE_CHARS: usize = 76;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodingFunc {
    Md5,
    Crc32,
    ToBase64,
    FromBase64,
    Unhex,
    Conv,
    InetAton,
    InetNtoa,
    BitCount,
    BitLength,
}

impl EncodingFunc {
    pub fn by_name(name: &str) -> Option<EncodingFunc> {
        use EncodingFunc::*;
        Some(match name {
            "MD5" => Md5,
            "CRC32" => Crc32,
            "TO_BASE64" => ToBase64,
            "FROM_BASE64" => FromBase64,
            "UNHEX" => Unhex,
            "CONV" => Conv,
            "INET_ATON" => InetAton,
            "INET_NTOA" => InetNtoa,
            "BIT_COUNT" => BitCount,
            "BIT_LENGTH" => BitLength,
            _ => return None,
        })
    }

    pub fn arity_ok(self, n: usize) -> bool {
        match self {
            EncodingFunc::Conv => n == 3,
            _ => n == 1,
        }
    }

    /// Whether the result is a number (else text).
    pub fn returns_integer(self) -> bool {
        use EncodingFunc::*;
        matches!(self, Crc32 | InetAton | BitCount | BitLength)
    }

    /// Whether a numeric result is unsigned.
    pub fn returns_unsigned(self) -> bool {
        matches!(self, EncodingFunc::Crc32 | EncodingFunc::InetAton)
    }
}

fn bytes(text: impl Into<Vec<u8>>) -> Datum {
    Datum::Bytes(text.into())
}

/// A number's 64 bits, as the bit functions see them (negative numbers in two's complement).
fn bits(d: &Datum) -> u64 {
    match d {
        Datum::UInt(u) => *u,
        Datum::Float(f) => f.round() as i64 as u64,
        other => to_i64(other).unwrap_or(0) as u64,
    }
}

/// The digits at the start of `text` in `base` (2 to 36), as MySQL's CONV reads them: an
/// optional sign, then digits up to the first that is not one. A signed read clamps to the
/// 64-bit signed range; an unsigned one saturates, and a minus sign negates in two's
/// complement.
fn read_in_base(text: &[u8], base: u32, signed: bool) -> u64 {
    let text = text.trim_ascii_start();
    let (negative, digits) = match text.first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let mut value: u64 = 0;
    let mut overflow = false;
    for &c in digits {
        let Some(digit) = (c as char).to_digit(base) else {
            break;
        };
        match value
            .checked_mul(u64::from(base))
            .and_then(|v| v.checked_add(u64::from(digit)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    if signed {
        let magnitude = if overflow { u64::MAX } else { value };
        let clamped: i64 = if negative {
            if magnitude > i64::MAX as u64 {
                i64::MIN
            } else {
                -(magnitude as i64)
            }
        } else {
            magnitude.min(i64::MAX as u64) as i64
        };
        clamped as u64
    } else if overflow {
        u64::MAX
    } else if negative {
        value.wrapping_neg()
    } else {
        value
    }
}

fn write_in_base(mut value: u64, base: u32) -> String {
    if value == 0 {
        return "0".to_string();
    }
    let mut digits = Vec::new();
    while value > 0 {
        let digit = (value % u64::from(base)) as u32;
        digits.push(
            std::char::from_digit(digit, base)
                .expect("a digit below the base")
                .to_ascii_uppercase(),
        );
        value /= u64::from(base);
    }
    digits.iter().rev().collect()
}

/// `CONV(n, from_base, to_base)`: a negative base reads or writes signed numbers.
fn conv(values: &[Datum]) -> Datum {
    let (from, to) = (
        to_i64(&values[1]).unwrap_or(0),
        to_i64(&values[2]).unwrap_or(0),
    );
    let base_ok = |b: i64| (2..=36).contains(&b.abs());
    if !base_ok(from) || !base_ok(to) {
        return Datum::Null;
    }
    let text = match &values[0] {
        Datum::Float(f) => f.trunc().to_string().into_bytes(),
        other => datum_to_text(other),
    };
    let value = read_in_base(&text, from.unsigned_abs() as u32, from < 0);
    let out = if to < 0 && (value as i64) < 0 {
        format!(
            "-{}",
            write_in_base((value as i64).unsigned_abs(), to.unsigned_abs() as u32)
        )
    } else {
        write_in_base(value, to.unsigned_abs() as u32)
    };
    bytes(out)
}

/// `INET_ATON`: dotted IPv4 text to its number. `a.b` and `a.b.c` give their last part the
/// remaining bytes, as MySQL does; anything else malformed is NULL.
fn inet_aton(text: &[u8]) -> Datum {
    let Ok(text) = std::str::from_utf8(text) else {
        return Datum::Null;
    };
    let parts: Vec<&str> = text.split('.').collect();
    if parts.len() > 4 || parts.iter().any(|p| p.is_empty() || p.len() > 3) {
        return Datum::Null;
    }
    let Ok(numbers) = parts
        .iter()
        .map(|p| p.parse::<u64>().ok().filter(|n| *n <= 255).ok_or(()))
        .collect::<Result<Vec<u64>, ()>>()
    else {
        return Datum::Null;
    };
    let (last, leading) = numbers.split_last().expect("split gives one part at least");
    let mut value = 0u64;
    for n in leading {
        value = (value << 8) | n;
    }
    value = (value << (8 * (4 - leading.len()))) | last;
    Datum::UInt(value)
}

/// `UNHEX`: pairs of hexadecimal digits to bytes (an odd first digit stands alone); NULL on
/// anything else.
fn unhex(text: &[u8]) -> Datum {
    unhex_bytes(text).map_or(Datum::Null, Datum::Bytes)
}

/// Pairs of hexadecimal digits to bytes, an odd first digit standing alone (`a` is 0x0a);
/// `None` when anything is not a hexadecimal digit. Shared by `UNHEX` and `x'…'` literals.
pub(crate) fn unhex_bytes(text: &[u8]) -> Option<Vec<u8>> {
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(text.len() / 2 + 1);
    let (head, rest) = if text.len() % 2 == 1 {
        (Some(text[0]), &text[1..])
    } else {
        (None, text)
    };
    if let Some(c) = head {
        out.push(digit(c)?);
    }
    for pair in rest.chunks(2) {
        out.push(digit(pair[0])? << 4 | digit(pair[1])?);
    }
    Some(out)
}

pub(super) fn eval(func: EncodingFunc, values: &[Datum]) -> Datum {
    use EncodingFunc::*;
    if values.contains(&Datum::Null) {
        return Datum::Null;
    }
    let first = &values[0];
    match func {
        Md5 => {
            use md5::Digest;
            let digest = md5::Md5::digest(datum_to_text(first));
            bytes(
                digest
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect::<String>(),
            )
        }
        Crc32 => Datum::UInt(u64::from(crc32fast::hash(&datum_to_text(first)))),
        ToBase64 => {
            let encoded = base64::engine::general_purpose::STANDARD.encode(datum_to_text(first));
            let lines: Vec<&[u8]> = encoded.as_bytes().chunks(BASE64_LINE_CHARS).collect();
            Datum::Bytes(lines.join(&b'\n'))
        }
        FromBase64 => {
            let text: Vec<u8> = datum_to_text(first)
                .into_iter()
                .filter(|c| !matches!(c, b' ' | b'\t' | b'\r' | b'\n'))
                .collect();
            base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_or(Datum::Null, Datum::Bytes)
        }
        Unhex => unhex(&datum_to_text(first)),
        Conv => conv(values),
        InetAton => inet_aton(&datum_to_text(first)),
        InetNtoa => match first {
            Datum::Int(_) | Datum::UInt(_) | Datum::Decimal(_) | Datum::Float(_) => {
                match u32::try_from(bits(first)) {
                    Ok(n) if to_i64(first).is_none_or(|i| i >= 0) => {
                        bytes(std::net::Ipv4Addr::from(n).to_string())
                    }
                    _ => Datum::Null,
                }
            }
            other => match std::str::from_utf8(&datum_to_text(other))
                .ok()
                .and_then(|t| t.trim().parse::<u32>().ok())
            {
                Some(n) => bytes(std::net::Ipv4Addr::from(n).to_string()),
                None => Datum::Null,
            },
        },
        BitCount => Datum::Int(i64::from(bits(first).count_ones())),
        BitLength => Datum::Int(datum_to_text(first).len() as i64 * 8),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> Datum {
        Datum::Bytes(text.as_bytes().to_vec())
    }

    fn conv3(n: Datum, from: i64, to: i64) -> Datum {
        eval(EncodingFunc::Conv, &[n, Datum::Int(from), Datum::Int(to)])
    }

    #[test]
    fn conv_reads_and_writes_bases_as_mysql_does() {
        // The reference manual's examples.
        assert_eq!(conv3(s("a"), 16, 2), s("1010"));
        assert_eq!(conv3(s("6E"), 18, 8), s("172"));
        assert_eq!(conv3(Datum::Int(-17), 10, -18), s("-H"));
        assert_eq!(conv3(s("-1"), 10, 16), s("FFFFFFFFFFFFFFFF"));
        assert_eq!(conv3(s("zz"), 36, 10), s("1295"));
        assert_eq!(conv3(s("12x"), 10, 10), s("12"));
        assert_eq!(conv3(s("x"), 10, 10), s("0"));
        assert_eq!(
            conv3(s("99999999999999999999"), 10, 10),
            s("18446744073709551615")
        );
        assert_eq!(conv3(s("1"), 1, 10), Datum::Null);
    }

    #[test]
    fn ipv4_addresses_round_trip() {
        let aton = |t: &str| eval(EncodingFunc::InetAton, &[s(t)]);
        assert_eq!(aton("10.0.5.9"), Datum::UInt(167773449));
        assert_eq!(aton("127.1"), Datum::UInt(2130706433));
        assert_eq!(aton("1.2.3.256"), Datum::Null);
        assert_eq!(aton("1..2"), Datum::Null);
        let ntoa = |n: Datum| eval(EncodingFunc::InetNtoa, &[n]);
        assert_eq!(ntoa(Datum::Int(167773449)), s("10.0.5.9"));
        assert_eq!(ntoa(Datum::Int(-1)), Datum::Null);
        assert_eq!(ntoa(Datum::Int(1 << 32)), Datum::Null);
    }

    #[test]
    fn hex_and_base64_decode_or_give_null() {
        assert_eq!(eval(EncodingFunc::Unhex, &[s("4D7953514C")]), s("MySQL"));
        assert_eq!(
            eval(EncodingFunc::Unhex, &[s("F")]),
            Datum::Bytes(vec![0x0F])
        );
        assert_eq!(eval(EncodingFunc::Unhex, &[s("GG")]), Datum::Null);
        let long = "x".repeat(100);
        let encoded = eval(EncodingFunc::ToBase64, &[s(&long)]);
        let Datum::Bytes(text) = &encoded else {
            panic!("text expected")
        };
        assert_eq!(
            text.iter().position(|c| *c == b'\n'),
            Some(BASE64_LINE_CHARS)
        );
        assert_eq!(eval(EncodingFunc::FromBase64, &[encoded]), s(&long));
        assert_eq!(eval(EncodingFunc::FromBase64, &[s("!!")]), Datum::Null);
    }
}
