//! Seeded random datums and the SQL order they must encode, for the tests of every module.
//!
//! Each randomized test takes its seed from `STRATA_TEST_SEED` (a fixed default otherwise) and
//! prints it, so a failure can be replayed.

use std::cmp::Ordering;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;

use crate::Datum;

/// The seed used when `STRATA_TEST_SEED` is not set.
const SEED_DEFAULT: u64 = 0x5354_5241_5441;

/// The variants of [`Datum`], to generate values of one type.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Int,
    UInt,
    Float,
    Decimal,
    Bytes,
    Date,
    DateTime,
    Time,
}

pub const KINDS: [Kind; 8] = [
    Kind::Int,
    Kind::UInt,
    Kind::Float,
    Kind::Decimal,
    Kind::Bytes,
    Kind::Date,
    Kind::DateTime,
    Kind::Time,
];

/// Returns a generator seeded from the environment, printing the seed with `test_name`.
pub fn seeded_rng(test_name: &str) -> StdRng {
    let seed = std::env::var("STRATA_TEST_SEED")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(SEED_DEFAULT);
    eprintln!("{test_name}: seed {seed} (set STRATA_TEST_SEED to replay)");
    StdRng::seed_from_u64(seed)
}

/// Returns a random datum of `kind`, NULL one time in sixteen.
pub fn random_datum_or_null(rng: &mut StdRng, kind: Kind) -> Datum {
    if rng.gen_ratio(1, 16) {
        Datum::Null
    } else {
        random_datum(rng, kind)
    }
}

/// Returns a random non-NULL datum of `kind`, biased towards edge cases.
pub fn random_datum(rng: &mut StdRng, kind: Kind) -> Datum {
    match kind {
        Kind::Int => Datum::Int(random_i64(rng)),
        Kind::UInt => Datum::UInt(random_i64(rng) as u64),
        Kind::Float => Datum::Float(random_f64(rng)),
        Kind::Decimal => Datum::Decimal(random_decimal(rng)),
        Kind::Bytes => Datum::Bytes(random_bytes(rng)),
        Kind::Date => Datum::Date(random_date(rng)),
        Kind::DateTime => Datum::DateTime(random_datetime(rng)),
        Kind::Time => Datum::Time(random_i64(rng)),
    }
}

/// Returns a datum of a random kind.
pub fn random_any_datum(rng: &mut StdRng) -> Datum {
    let kind = KINDS[rng.gen_range(0..KINDS.len())];
    random_datum_or_null(rng, kind)
}

fn random_i64(rng: &mut StdRng) -> i64 {
    match rng.gen_range(0..6) {
        0 => [0, 1, -1, i64::MIN, i64::MAX, i64::MIN + 1, i64::MAX - 1][rng.gen_range(0..7)],
        1 => rng.gen_range(-300..300),
        2 => rng.gen_range(-70_000..70_000),
        _ => rng.gen(),
    }
}

fn random_f64(rng: &mut StdRng) -> f64 {
    match rng.gen_range(0..6) {
        0 => [
            0.0,
            -0.0,
            1.0,
            -1.0,
            f64::MAX,
            f64::MIN,
            f64::MIN_POSITIVE,
            f64::INFINITY,
        ][rng.gen_range(0..8)],
        1 => f64::from(rng.gen_range(-100i32..100)) / 8.0,
        2 => rng.gen_range(-1e6..1e6),
        _ => {
            // Any bit pattern except NaN, which SQL does not have.
            let value = f64::from_bits(rng.gen());
            if value.is_nan() {
                -f64::INFINITY
            } else {
                value
            }
        }
    }
}

fn random_decimal(rng: &mut StdRng) -> Decimal {
    let scale = rng.gen_range(0..=Decimal::MAX_SCALE);
    let mantissa: i128 = match rng.gen_range(0..5) {
        0 => rng.gen_range(-3..=3),
        1 => rng.gen_range(-100_000..100_000),
        2 => {
            // A small value with trailing zeros, so that equal values appear at several scales.
            let zeros = rng.gen_range(0..6);
            i128::from(rng.gen_range(-99i32..99)) * 10i128.pow(zeros)
        }
        3 => [1 << 95, (1 << 96) - 1, -((1 << 96) - 1), 10i128.pow(28)][rng.gen_range(0..4)],
        _ => rng.gen_range(-(1i128 << 96) + 1..1i128 << 96),
    };
    Decimal::from_i128_with_scale(mantissa, scale)
}

/// Bytes from a small alphabet, so that equal strings, prefixes and 0x00 / 0xff runs are common.
fn random_bytes(rng: &mut StdRng) -> Vec<u8> {
    const ALPHABET: [u8; 5] = [0x00, 0x01, b'a', 0xfe, 0xff];
    let len = match rng.gen_range(0..4) {
        0 => rng.gen_range(0..4),
        1 => rng.gen_range(6..11),
        2 => rng.gen_range(14..18),
        _ => rng.gen_range(0..40),
    };
    (0..len)
        .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())])
        .collect()
}

fn random_date(rng: &mut StdRng) -> NaiveDate {
    let days = match rng.gen_range(0..3) {
        0 => rng.gen_range(730_000..740_000),
        1 => [NaiveDate::MIN, NaiveDate::MAX][rng.gen_range(0..2)].num_days_from_ce(),
        _ => rng.gen_range(NaiveDate::MIN.num_days_from_ce()..=NaiveDate::MAX.num_days_from_ce()),
    };
    NaiveDate::from_num_days_from_ce_opt(days).expect("days in chrono's range")
}

fn random_datetime(rng: &mut StdRng) -> NaiveDateTime {
    let min = NaiveDateTime::MIN.and_utc().timestamp();
    let max = NaiveDateTime::MAX.and_utc().timestamp();
    let seconds = match rng.gen_range(0..3) {
        0 => rng.gen_range(1_600_000_000..1_600_000_100),
        1 => [min, max, 0, -1][rng.gen_range(0..4)],
        _ => rng.gen_range(min..=max),
    };
    let nanos = match rng.gen_range(0..3) {
        0 => 0,
        1 => rng.gen_range(0..1_000_000) * 1_000,
        _ => rng.gen_range(0..1_000_000_000),
    };
    let mut value = DateTime::from_timestamp(seconds, nanos)
        .expect("in range")
        .naive_utc();
    if rng.gen_ratio(1, 50) {
        // A leap second: chrono represents 23:59:60 as :59 with nanoseconds past one second.
        let leap = chrono::NaiveTime::from_hms_nano_opt(23, 59, 59, 1_000_000_000 + nanos / 2);
        value = value.date().and_time(leap.expect("valid leap second"));
    }
    value
}

/// Compares two datums of one variant in SQL order, NULL first.
pub fn sql_cmp(left: &Datum, right: &Datum) -> Ordering {
    match (left, right) {
        (Datum::Null, Datum::Null) => Ordering::Equal,
        (Datum::Null, _) => Ordering::Less,
        (_, Datum::Null) => Ordering::Greater,
        (Datum::Int(a), Datum::Int(b)) => a.cmp(b),
        (Datum::UInt(a), Datum::UInt(b)) => a.cmp(b),
        (Datum::Float(a), Datum::Float(b)) => a.partial_cmp(b).expect("no NaN"),
        (Datum::Decimal(a), Datum::Decimal(b)) => a.cmp(b),
        (Datum::Bytes(a), Datum::Bytes(b)) => a.cmp(b),
        (Datum::Date(a), Datum::Date(b)) => a.cmp(b),
        (Datum::DateTime(a), Datum::DateTime(b)) => a.cmp(b),
        (Datum::Time(a), Datum::Time(b)) => a.cmp(b),
        _ => panic!("sql_cmp of different variants: {left:?} and {right:?}"),
    }
}
