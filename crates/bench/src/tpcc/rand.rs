//! The random inputs of TPC-C (clause 4.3 and 2.1.6): uniform integers, NURand, customer last
//! names built from syllables, a-strings and n-strings, zip codes, the `ORIGINAL` marker and the
//! permutation of customer ids that the initial orders use.
//!
//! Everything draws from [`TpccRng`], a seedable generator, so that the data a seed loads and
//! the inputs a seed runs are reproducible.
//!
//! The constant C of NURand(255, 0, 999) used for last names differs between load and run, as
//! clause 2.1.6.1 requires: the load uses the fixed [`C_LAST_LOAD`] (a separate `run` process
//! must know it), and [`NurandConstants::for_run`] draws a run value whose distance to it lies
//! in 65..=119 without 96 and 112.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// The ten syllables of customer last names (clause 4.3.2.3).
pub const LAST_NAME_SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// C of NURand(255, 0, 999) for last names at load time.
pub const C_LAST_LOAD: u32 = 157;

/// Characters of an a-string: letters and digits.
const ALPHANUMERIC: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const LETTERS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS: &[u8] = b"0123456789";
/// The marker that 10% of i_data and s_data hold (clause 4.3.3.1).
const ORIGINAL: &str = "ORIGINAL";

/// The seedable random generator of the loader and of each worker.
pub struct TpccRng(StdRng);

impl TpccRng {
    /// Returns a generator whose output depends only on `seed`.
    pub fn seeded(seed: u64) -> TpccRng {
        TpccRng(StdRng::seed_from_u64(seed))
    }

    /// Returns a uniform integer in `low..=high`.
    pub fn uniform(&mut self, low: u32, high: u32) -> u32 {
        self.0.gen_range(low..=high)
    }

    /// Returns true with probability `percent` / 100.
    pub fn percent(&mut self, percent: u32) -> bool {
        self.uniform(1, 100) <= percent
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x.
    pub fn nurand(&mut self, a: u32, x: u32, y: u32, c: u32) -> u32 {
        let mixed = self.uniform(0, a) | self.uniform(x, y);
        (mixed + c) % (y - x + 1) + x
    }

    /// Returns an a-string (letters and digits) whose length is uniform in `min..=max`.
    pub fn a_string(&mut self, min: usize, max: usize) -> String {
        self.string_from(ALPHANUMERIC, min, max)
    }

    /// Returns an n-string (digits) whose length is uniform in `min..=max`.
    pub fn n_string(&mut self, min: usize, max: usize) -> String {
        self.string_from(DIGITS, min, max)
    }

    /// Returns two upper-case letters.
    pub fn state(&mut self) -> String {
        self.string_from(LETTERS, 2, 2)
    }

    /// Returns a zip code: an n-string of 4 followed by "11111" (clause 4.3.2.7).
    pub fn zip(&mut self) -> String {
        let mut zip = self.n_string(4, 4);
        zip.push_str("11111");
        zip
    }

    /// Returns an a-string of 26..=50 characters that holds "ORIGINAL" at a random position
    /// in 10% of the calls (i_data, s_data).
    pub fn data_with_original(&mut self) -> String {
        let mut data = self.a_string(26, 50);
        if self.percent(10) {
            let at = self.0.gen_range(0..=data.len() - ORIGINAL.len());
            data.replace_range(at..at + ORIGINAL.len(), ORIGINAL);
        }
        data
    }

    /// Returns the numbers `1..=n` in random order.
    pub fn permutation(&mut self, n: u32) -> Vec<u32> {
        let mut numbers: Vec<u32> = (1..=n).collect();
        numbers.shuffle(&mut self.0);
        numbers
    }

    /// Shuffles `items` in place.
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        items.shuffle(&mut self.0);
    }

    /// Returns a random 64-bit value (to seed other generators).
    pub fn next_u64(&mut self) -> u64 {
        self.0.gen()
    }

    fn string_from(&mut self, alphabet: &[u8], min: usize, max: usize) -> String {
        let len = self.0.gen_range(min..=max);
        (0..len)
            .map(|_| alphabet[self.0.gen_range(0..alphabet.len())] as char)
            .collect()
    }
}

/// The constants C of the three NURand uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NurandConstants {
    /// For NURand(255, 0, 999): customer last names.
    pub c_last: u32,
    /// For NURand(1023, 1, 3000): customer ids.
    pub c_id: u32,
    /// For NURand(8191, 1, 100000): item ids.
    pub ol_i_id: u32,
}

impl NurandConstants {
    /// The constants of the initial population (only `c_last` is used there).
    pub fn for_load() -> NurandConstants {
        NurandConstants {
            c_last: C_LAST_LOAD,
            c_id: 0,
            ol_i_id: 0,
        }
    }

    /// Draws the constants of a run: `c_last` at a valid distance from [`C_LAST_LOAD`]
    /// (clause 2.1.6.1), the others uniform.
    pub fn for_run(rng: &mut TpccRng) -> NurandConstants {
        let valid: Vec<u32> = (0..=255)
            .filter(|&c| is_valid_run_c_last(c, C_LAST_LOAD))
            .collect();
        NurandConstants {
            c_last: valid[rng.uniform(0, valid.len() as u32 - 1) as usize],
            c_id: rng.uniform(0, 1023),
            ol_i_id: rng.uniform(0, 8191),
        }
    }
}

/// Whether `run` may be C_LAST of a run whose data was loaded with `load`: their distance is in
/// 65..=119 and is neither 96 nor 112.
pub fn is_valid_run_c_last(run: u32, load: u32) -> bool {
    let delta = run.abs_diff(load);
    (65..=119).contains(&delta) && delta != 96 && delta != 112
}

/// The last name of number `n` in 0..=999: the syllables of its three digits.
pub fn last_name(n: u32) -> String {
    assert!(n <= 999, "last-name number {n} out of 0..=999");
    let digits = [n / 100, (n / 10) % 10, n % 10];
    digits
        .iter()
        .map(|&d| LAST_NAME_SYLLABLES[d as usize])
        .collect()
}

/// A random last name of a run or of customers 1001..=3000 at load: NURand(255, 0, 999).
pub fn random_last_name(rng: &mut TpccRng, constants: &NurandConstants) -> String {
    last_name(rng.nurand(255, 0, 999, constants.c_last))
}

/// A customer id of a run: NURand(1023, 1, 3000).
pub fn random_customer_id(rng: &mut TpccRng, constants: &NurandConstants) -> u32 {
    rng.nurand(1023, 1, 3000, constants.c_id)
}

/// An item id of a run: NURand(8191, 1, 100000).
pub fn random_item_id(rng: &mut TpccRng, constants: &NurandConstants) -> u32 {
    rng.nurand(8191, 1, 100_000, constants.ol_i_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nurand_stays_in_range_and_is_skewed() {
        let mut rng = TpccRng::seeded(7);
        let mut counts = vec![0u32; 3001];
        let draws = 300_000;
        for _ in 0..draws {
            let id = rng.nurand(1023, 1, 3000, 259);
            assert!((1..=3000).contains(&id), "{id}");
            counts[id as usize] += 1;
        }
        // Uniform draws would give every id about 100 hits (between 60 and 140 with
        // overwhelming probability); NURand's OR makes ids with many one bits far more
        // frequent than ids with few.
        let hits = &counts[1..];
        let max = *hits.iter().max().unwrap();
        let rare = hits.iter().filter(|&&h| h < 50).count();
        let frequent = hits.iter().filter(|&&h| h > 200).count();
        eprintln!("max {max}, {rare} ids under 50 hits, {frequent} over 200");
        assert!(max > 300, "max {max}");
        assert!(
            rare > 300 && frequent > 100,
            "{rare} rare, {frequent} frequent"
        );
        for _ in 0..10_000 {
            let item = rng.nurand(8191, 1, 100_000, 5000);
            assert!((1..=100_000).contains(&item));
            let name = rng.nurand(255, 0, 999, 200);
            assert!(name <= 999);
        }
    }

    #[test]
    fn nurand_is_uniform_only_without_the_or() {
        // With A = 0 the OR is a no-op and the result is a shifted uniform draw: every value
        // of a small range is hit about equally often.
        let mut rng = TpccRng::seeded(1);
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[rng.nurand(0, 0, 9, 3) as usize] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn last_names_follow_the_syllable_rule() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
        assert_eq!(last_name(100), "OUGHTBARBAR");
        let all: std::collections::BTreeSet<String> = (0..=999).map(last_name).collect();
        assert_eq!(all.len(), 1000);
        for n in 0..=999 {
            let name = last_name(n);
            assert!(name.len() <= 16, "{name} fits c_last VARCHAR(16)");
            let expected = format!(
                "{}{}{}",
                LAST_NAME_SYLLABLES[(n / 100) as usize],
                LAST_NAME_SYLLABLES[((n / 10) % 10) as usize],
                LAST_NAME_SYLLABLES[(n % 10) as usize]
            );
            assert_eq!(name, expected);
        }
    }

    #[test]
    fn strings_have_the_requested_lengths_and_alphabets() {
        let mut rng = TpccRng::seeded(3);
        let mut lengths = std::collections::BTreeSet::new();
        for _ in 0..2_000 {
            let a = rng.a_string(8, 16);
            assert!((8..=16).contains(&a.len()), "{a}");
            assert!(a.bytes().all(|b| b.is_ascii_alphanumeric()));
            lengths.insert(a.len());
            let n = rng.n_string(16, 16);
            assert_eq!(n.len(), 16);
            assert!(n.bytes().all(|b| b.is_ascii_digit()));
            let zip = rng.zip();
            assert_eq!(zip.len(), 9);
            assert!(zip.ends_with("11111") && zip.bytes().all(|b| b.is_ascii_digit()));
            let state = rng.state();
            assert!(state.len() == 2 && state.bytes().all(|b| b.is_ascii_uppercase()));
        }
        assert_eq!(lengths.len(), 9, "every length 8..=16 occurs");
    }

    #[test]
    fn original_appears_in_about_ten_percent() {
        let mut rng = TpccRng::seeded(11);
        let draws = 20_000;
        let mut with = 0;
        for _ in 0..draws {
            let data = rng.data_with_original();
            assert!((26..=50).contains(&data.len()));
            if data.contains(ORIGINAL) {
                with += 1;
            }
        }
        assert!((1_700..2_300).contains(&with), "{with} of {draws}");
    }

    #[test]
    fn permutation_is_a_permutation() {
        let mut rng = TpccRng::seeded(5);
        let p = rng.permutation(3000);
        let mut sorted = p.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (1..=3000).collect::<Vec<_>>());
        assert_ne!(p, sorted, "shuffled");
    }

    #[test]
    fn run_constants_respect_the_load_constant() {
        for seed in 0..200 {
            let mut rng = TpccRng::seeded(seed);
            let c = NurandConstants::for_run(&mut rng);
            assert!(is_valid_run_c_last(c.c_last, C_LAST_LOAD), "{c:?}");
            assert!(c.c_last <= 255 && c.c_id <= 1023 && c.ol_i_id <= 8191);
        }
        assert!(!is_valid_run_c_last(C_LAST_LOAD + 96, C_LAST_LOAD));
        assert!(!is_valid_run_c_last(C_LAST_LOAD, C_LAST_LOAD));
        assert!(is_valid_run_c_last(C_LAST_LOAD - 65, C_LAST_LOAD));
    }

    #[test]
    fn same_seed_same_data() {
        let mut a = TpccRng::seeded(42);
        let mut b = TpccRng::seeded(42);
        assert_eq!(a.a_string(10, 20), b.a_string(10, 20));
        assert_eq!(a.permutation(10), b.permutation(10));
    }
}
