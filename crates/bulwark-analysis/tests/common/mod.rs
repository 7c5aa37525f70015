//! What the global-scheduling tests share: the periods their random sets draw from, the
//! hyperperiod's arithmetic, and a small seeded generator for their fixed sweeps.

/// The periods of the random sets, in units (hyperperiod at most 120).
pub const PERIODS: [u64; 6] = [4, 5, 6, 8, 10, 12];

pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The least common multiple of `periods`.
pub fn hyperperiod(periods: impl IntoIterator<Item = u64>) -> u64 {
    periods.into_iter().fold(1, |l, t| l / gcd(l, t) * t)
}

/// SplitMix64: a fixed, seeded stream for the sweeps that show a property is not vacuous.
pub struct SplitMix(u64);

impl SplitMix {
    pub fn new(seed: u64) -> Self {
        SplitMix(seed)
    }

    /// The next draw in `0..bound`.
    pub fn below(&mut self, bound: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % bound
    }
}

/// A random set for a sweep: 1 to 3 cores and 1 to 6 tasks `(C, T, priority)`, `T` from
/// [`PERIODS`], `C` in `1..=ceil(T / 2)`, priorities 0 to 3.
pub fn draw_set(rng: &mut SplitMix) -> (usize, Vec<(u64, u64, u8)>) {
    let m = 1 + rng.below(3) as usize;
    let n = 1 + rng.below(6) as usize;
    let tasks = (0..n)
        .map(|_| {
            let t = PERIODS[rng.below(PERIODS.len() as u64) as usize];
            (1 + rng.below(t.div_ceil(2)), t, rng.below(4) as u8)
        })
        .collect();
    (m, tasks)
}
