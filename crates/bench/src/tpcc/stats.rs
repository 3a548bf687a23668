//! Latency histograms, per-transaction-type counters and the arithmetic of tpmC, tpmTotal and
//! efficiency, with the `[Current]` / `[Summary]` lines go-tpc prints.
//!
//! A [`Histogram`] keeps counts in log-linear buckets of microseconds: values below 256 µs are
//! exact, larger ones fall into one of 128 buckets per power of two, so a percentile is within
//! 1% of the true sample (the exact minimum, maximum and sum are kept beside).
//!
//! Every transaction type has two histograms, one for successes and one for errors (printed as
//! `<NAME>_ERR`). As in go-tpc, the rate of a type is its count over the seconds since its
//! first sample, times 60; tpmC is the rate of successful New-Orders, tpmTotal the sum of the
//! success rates of all types, and efficiency is `100 × tpmC / (12.86 × warehouses)`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

use crate::result::TpccTransactionStats;

/// Bits of a bucket's mantissa: 2^(bits−1) buckets per power of two, i.e. < 1% relative error.
const MANTISSA_BITS: u32 = 8;
/// Latencies are clamped to this many microseconds (about 71 minutes).
const MAX_MICROS: u64 = (1 << 32) - 1;
/// tpmC of one warehouse at the spec's maximum (keying and think times included).
const TPMC_PER_WAREHOUSE: f64 = 12.86;

/// The five transaction types, in the order of `--weight`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TransactionKind {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl TransactionKind {
    /// All five, in the order of `--weight`.
    pub const ALL: [TransactionKind; 5] = [
        TransactionKind::NewOrder,
        TransactionKind::Payment,
        TransactionKind::OrderStatus,
        TransactionKind::Delivery,
        TransactionKind::StockLevel,
    ];

    /// The key in result files ("new_order", …).
    pub fn key(self) -> &'static str {
        match self {
            TransactionKind::NewOrder => "new_order",
            TransactionKind::Payment => "payment",
            TransactionKind::OrderStatus => "order_status",
            TransactionKind::Delivery => "delivery",
            TransactionKind::StockLevel => "stock_level",
        }
    }

    /// The name in progress lines ("NEW_ORDER", …).
    pub fn display_name(self) -> String {
        self.key().to_ascii_uppercase()
    }
}

/// A log-linear latency histogram in microseconds.
#[derive(Clone, Debug)]
pub struct Histogram {
    buckets: Vec<u64>,
    count: u64,
    sum_micros: u64,
    min_micros: u64,
    max_micros: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            buckets: vec![0; bucket_index(MAX_MICROS) + 1],
            count: 0,
            sum_micros: 0,
            min_micros: u64::MAX,
            max_micros: 0,
        }
    }
}

impl Histogram {
    /// Adds one sample.
    pub fn record(&mut self, latency: Duration) {
        let micros = (latency.as_micros() as u64).min(MAX_MICROS);
        self.buckets[bucket_index(micros)] += 1;
        self.count += 1;
        self.sum_micros += micros;
        self.min_micros = self.min_micros.min(micros);
        self.max_micros = self.max_micros.max(micros);
    }

    /// The number of samples.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The sum of all samples in milliseconds.
    pub fn sum_ms(&self) -> f64 {
        self.sum_micros as f64 / 1000.0
    }

    /// The mean in milliseconds (0 when empty).
    pub fn mean_ms(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ms() / self.count as f64
        }
    }

    /// The largest sample in milliseconds (0 when empty).
    pub fn max_ms(&self) -> f64 {
        self.max_micros as f64 / 1000.0
    }

    /// The value at `percentile` (0..=100) in milliseconds: the middle of the bucket that holds
    /// the sample of that rank, kept within the exact minimum and maximum. 0 when empty.
    pub fn percentile_ms(&self, percentile: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((percentile / 100.0 * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (index, &hits) in self.buckets.iter().enumerate() {
            seen += hits;
            if seen >= rank {
                let (low, high) = bucket_bounds(index);
                let middle = low + (high - low) / 2;
                return middle.clamp(self.min_micros, self.max_micros) as f64 / 1000.0;
            }
        }
        self.max_ms()
    }
}

/// The bucket of `micros`: exact below 2^MANTISSA_BITS, then 2^(MANTISSA_BITS−1) buckets per
/// power of two.
fn bucket_index(micros: u64) -> usize {
    let exact = 1u64 << MANTISSA_BITS;
    if micros < exact {
        return micros as usize;
    }
    let msb = 63 - micros.leading_zeros();
    let shift = msb + 1 - MANTISSA_BITS;
    let top = micros >> shift;
    (shift as usize) * (exact as usize / 2) + top as usize
}

/// The smallest and largest microseconds that fall into bucket `index`.
fn bucket_bounds(index: usize) -> (u64, u64) {
    let exact = 1usize << MANTISSA_BITS;
    if index < exact {
        return (index as u64, index as u64);
    }
    let half = exact / 2;
    let shift = (index / half - 1) as u32;
    let top = (index - shift as usize * half) as u64;
    let low = top << shift;
    (low, low + (1 << shift) - 1)
}

/// Counts one transaction type over some span: successes and errors.
#[derive(Clone, Debug, Default)]
pub struct TypeStats {
    pub ok: Histogram,
    pub errors: Histogram,
    /// When the first sample (success or error) was recorded: go-tpc's rates start there.
    pub first_sample: Option<Instant>,
}

/// The statistics of all types over one span (one interval, or the whole run).
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub types: BTreeMap<TransactionKind, TypeStats>,
}

impl Stats {
    /// Records one transaction that ended at `now` after `latency`.
    pub fn record(&mut self, kind: TransactionKind, latency: Duration, ok: bool, now: Instant) {
        let stats = self.types.entry(kind).or_default();
        stats.first_sample.get_or_insert(now);
        if ok {
            stats.ok.record(latency);
        } else {
            stats.errors.record(latency);
        }
    }

    /// Successful transactions of `kind`.
    pub fn count(&self, kind: TransactionKind) -> u64 {
        self.types.get(&kind).map_or(0, |s| s.ok.count())
    }

    /// Failed transactions of `kind`.
    pub fn errors(&self, kind: TransactionKind) -> u64 {
        self.types.get(&kind).map_or(0, |s| s.errors.count())
    }

    /// The seconds a type's rate is computed over: from its first sample to `now`, or
    /// `fixed_seconds` when given (the length of a `[Current]` interval).
    fn seconds(&self, kind: TransactionKind, now: Instant, fixed_seconds: Option<f64>) -> f64 {
        if let Some(seconds) = fixed_seconds {
            return seconds;
        }
        self.types
            .get(&kind)
            .and_then(|s| s.first_sample)
            .map_or(0.0, |first| now.duration_since(first).as_secs_f64())
    }

    /// tpmC and tpmTotal at `now`.
    pub fn rates(&self, now: Instant, fixed_seconds: Option<f64>) -> Rates {
        let rate = |kind| per_minute(self.count(kind), self.seconds(kind, now, fixed_seconds));
        Rates {
            tpmc: rate(TransactionKind::NewOrder),
            tpm_total: TransactionKind::ALL.iter().map(|&k| rate(k)).sum(),
        }
    }

    /// The go-tpc lines of this span, types sorted by name, `_ERR` lines only when errors
    /// occurred: `{prefix}NEW_ORDER - Takes(s): …`.
    pub fn lines(&self, prefix: &str, now: Instant, fixed_seconds: Option<f64>) -> Vec<String> {
        let mut named: Vec<(String, &Histogram, f64)> = Vec::new();
        for (&kind, stats) in &self.types {
            let seconds = self.seconds(kind, now, fixed_seconds);
            named.push((kind.display_name(), &stats.ok, seconds));
            named.push((
                format!("{}_ERR", kind.display_name()),
                &stats.errors,
                seconds,
            ));
        }
        named.sort_by(|a, b| a.0.cmp(&b.0));
        named
            .into_iter()
            .filter(|(_, histogram, _)| histogram.count() > 0)
            .map(|(name, histogram, seconds)| line(prefix, &name, histogram, seconds))
            .collect()
    }

    /// The result-file statistics of every type at `now`.
    pub fn transactions(&self, now: Instant) -> BTreeMap<String, TpccTransactionStats> {
        self.types
            .iter()
            .map(|(&kind, stats)| {
                let seconds = self.seconds(kind, now, None);
                let ok = &stats.ok;
                let summary = TpccTransactionStats {
                    count: ok.count(),
                    errors: stats.errors.count(),
                    tpm: per_minute(ok.count(), seconds),
                    avg_ms: ok.mean_ms(),
                    p50_ms: ok.percentile_ms(50.0),
                    p90_ms: ok.percentile_ms(90.0),
                    p95_ms: ok.percentile_ms(95.0),
                    p99_ms: ok.percentile_ms(99.0),
                    max_ms: ok.max_ms(),
                };
                (kind.key().to_string(), summary)
            })
            .collect()
    }
}

/// tpmC and tpmTotal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rates {
    pub tpmc: f64,
    pub tpm_total: f64,
}

/// `count` over `seconds`, per minute (0 when no time passed).
pub fn per_minute(count: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        count as f64 / seconds * 60.0
    } else {
        0.0
    }
}

/// tpmC over the spec's maximum of 12.86 per warehouse, in percent.
pub fn efficiency(tpmc: f64, warehouses: u32) -> f64 {
    100.0 * tpmc / (TPMC_PER_WAREHOUSE * f64::from(warehouses))
}

/// The go-tpc summary line.
pub fn summary_line(rates: Rates, warehouses: u32) -> String {
    format!(
        "tpmC: {:.1}, tpmTotal: {:.1}, efficiency: {:.1}%",
        rates.tpmc,
        rates.tpm_total,
        efficiency(rates.tpmc, warehouses)
    )
}

fn line(prefix: &str, name: &str, histogram: &Histogram, seconds: f64) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "{prefix}{name} - Takes(s): {seconds:.1}, Count: {}, TPM: {:.1}, Sum(ms): {:.1}, \
         Avg(ms): {:.1}, 50th(ms): {:.1}, 90th(ms): {:.1}, 95th(ms): {:.1}, 99th(ms): {:.1}, \
         99.9th(ms): {:.1}, Max(ms): {:.1}",
        histogram.count(),
        per_minute(histogram.count(), seconds),
        histogram.sum_ms(),
        histogram.mean_ms(),
        histogram.percentile_ms(50.0),
        histogram.percentile_ms(90.0),
        histogram.percentile_ms(95.0),
        histogram.percentile_ms(99.0),
        histogram.percentile_ms(99.9),
        histogram.max_ms(),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(value: u64) -> Duration {
        Duration::from_millis(value)
    }

    #[test]
    fn buckets_are_contiguous_and_tight() {
        let mut previous = 0;
        for micros in (0..200_000u64).chain([MAX_MICROS - 1, MAX_MICROS]) {
            let index = bucket_index(micros);
            assert!(index == previous || index == previous + 1 || micros >= MAX_MICROS - 1);
            previous = index;
            let (low, high) = bucket_bounds(index);
            assert!(
                low <= micros && micros <= high,
                "{micros} in {low}..={high}"
            );
            assert!(
                (high - low) as f64 <= low as f64 / 100.0 + 1.0,
                "{low}..={high}"
            );
        }
    }

    #[test]
    fn percentiles_of_known_samples() {
        let mut h = Histogram::default();
        for value in 1..=1000 {
            h.record(ms(value));
        }
        assert_eq!(h.count(), 1000);
        let close = |got: f64, want: f64| (got - want).abs() <= want * 0.01;
        assert!(
            close(h.percentile_ms(50.0), 500.0),
            "{}",
            h.percentile_ms(50.0)
        );
        assert!(
            close(h.percentile_ms(90.0), 900.0),
            "{}",
            h.percentile_ms(90.0)
        );
        assert!(
            close(h.percentile_ms(99.0), 990.0),
            "{}",
            h.percentile_ms(99.0)
        );
        assert_eq!(h.percentile_ms(100.0), 1000.0);
        assert_eq!(h.max_ms(), 1000.0);
        assert!(close(h.percentile_ms(0.0), 1.0));
        assert!((h.mean_ms() - 500.5).abs() < 1e-9);
        assert!((h.sum_ms() - 500_500.0).abs() < 1e-9);
    }

    #[test]
    fn percentiles_of_a_skewed_set() {
        let mut h = Histogram::default();
        for _ in 0..99 {
            h.record(Duration::from_micros(150));
        }
        h.record(ms(2_000));
        assert_eq!(h.percentile_ms(50.0), 0.15);
        assert_eq!(h.percentile_ms(99.0), 0.15);
        assert_eq!(h.percentile_ms(99.9), 2_000.0);
        assert_eq!(Histogram::default().percentile_ms(99.0), 0.0);
    }

    #[test]
    fn tpmc_tpm_total_and_efficiency() {
        let start = Instant::now();
        let mut stats = Stats::default();
        for _ in 0..1000 {
            stats.record(TransactionKind::NewOrder, ms(5), true, start);
        }
        for _ in 0..500 {
            stats.record(TransactionKind::Payment, ms(3), true, start);
        }
        for _ in 0..7 {
            stats.record(TransactionKind::Payment, ms(3), false, start);
        }
        let end = start + Duration::from_secs(120);
        let rates = stats.rates(end, None);
        assert!((rates.tpmc - 500.0).abs() < 1e-9);
        assert!(
            (rates.tpm_total - 750.0).abs() < 1e-9,
            "errors do not count"
        );
        let efficiency = efficiency(rates.tpmc, 10);
        assert!((efficiency - 388.802_488).abs() < 1e-5, "{efficiency}");
        assert_eq!(
            summary_line(rates, 10),
            "tpmC: 500.0, tpmTotal: 750.0, efficiency: 388.8%"
        );
        let transactions = stats.transactions(end);
        assert_eq!(transactions["payment"].count, 500);
        assert_eq!(transactions["payment"].errors, 7);
        assert!((transactions["new_order"].tpm - 500.0).abs() < 1e-9);
    }

    #[test]
    fn lines_look_like_go_tpc() {
        let start = Instant::now();
        let mut stats = Stats::default();
        stats.record(TransactionKind::Payment, ms(10), true, start);
        stats.record(TransactionKind::NewOrder, ms(20), true, start);
        stats.record(TransactionKind::NewOrder, ms(40), false, start);
        let lines = stats.lines("[Current] ", start, Some(10.0));
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            "[Current] NEW_ORDER - Takes(s): 10.0, Count: 1, TPM: 6.0, Sum(ms): 20.0, \
             Avg(ms): 20.0, 50th(ms): 20.0, 90th(ms): 20.0, 95th(ms): 20.0, 99th(ms): 20.0, \
             99.9th(ms): 20.0, Max(ms): 20.0"
        );
        assert!(lines[1].starts_with("[Current] NEW_ORDER_ERR - "));
        assert!(lines[2].starts_with("[Current] PAYMENT - "));
    }
}
