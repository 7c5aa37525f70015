//! The measuring shape of the host experiments: every point in several rounds, interleaved
//! (every point's round k after every point's round k - 1), so that a slow stretch of the
//! shared machine (another guest, a host interrupt storm) falls on every point alike instead
//! of on whichever point was running; a point keeps its first failure.

/// A point's measurements over the rounds, or the first failure of one of its rounds.
pub type Rounds<T> = Result<Vec<T>, String>;

/// Measures every point of `points` in `rounds` interleaved rounds: `measure(point)` is one
/// round of one point. Returns one entry per point, in `points`' order; a point whose round
/// failed keeps that failure and is not measured again.
pub fn interleaved<P, T>(
    points: &[P],
    rounds: usize,
    mut measure: impl FnMut(&P) -> Result<T, String>,
) -> Vec<Rounds<T>> {
    let mut pooled: Vec<Rounds<T>> = points.iter().map(|_| Ok(Vec::new())).collect();
    for _round in 0..rounds {
        for (point, slot) in points.iter().zip(pooled.iter_mut()) {
            let Ok(all) = slot.as_mut() else {
                continue;
            };
            match measure(point) {
                Ok(value) => all.push(value),
                Err(e) => *slot = Err(e),
            }
        }
    }
    pooled
}

/// The median of `values` (the lower middle one for an even count, the ceil(n / 2)-th
/// smallest); `None` when empty.
pub fn median(values: &[u64]) -> Option<u64> {
    let mut sorted = values.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len().checked_sub(1)? / 2).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounds_interleave_and_keep_the_first_failure() {
        let mut order = Vec::new();
        let mut calls = 0;
        let pooled = interleaved(&['a', 'b', 'c'], 3, |&p| {
            order.push(p);
            calls += 1;
            // Point b fails in its second round: it is not measured again.
            if p == 'b' && calls > 3 {
                Err(format!("b failed at call {calls}"))
            } else {
                Ok(calls)
            }
        });
        assert_eq!(order, ['a', 'b', 'c', 'a', 'b', 'c', 'a', 'c']);
        assert_eq!(pooled[0], Ok(vec![1, 4, 7]));
        assert_eq!(pooled[1], Err("b failed at call 5".to_string()));
        assert_eq!(pooled[2], Ok(vec![3, 6, 8]));
    }

    #[test]
    fn median_is_the_lower_middle() {
        // 3, 1, 2 sorted is 1, 2, 3: the middle is 2; of four, the 2nd smallest.
        assert_eq!(median(&[3, 1, 2]), Some(2));
        assert_eq!(median(&[40, 10, 30, 20]), Some(20));
        assert_eq!(median(&[7]), Some(7));
        assert_eq!(median(&[]), None);
    }
}
