//! SPR admission control (SPR paper, section III-G, Eq. 1): limited-preemptive fixed-priority
//! response-time analysis of the reservation servers on one core.
//!
//! For each server `i`:
//!
//! - `I_i = max({eta_l | sigma_l < sigma_i} ∪ {0})`: the longest non-preemptive region of a
//!   strictly lower-priority server, the priority inversion `i` can suffer once per busy window;
//! - `R_i` is the least fixed point of `R = I_i + b_i + sum_{h in hp(i)} RBF_h(R)`, found by the
//!   usual iteration from `R = I_i + b_i`;
//! - `i` is admitted iff `R_i <= p_i`: it can consume its whole budget within every period,
//!   whatever the other servers do, while it is continuously active.
//!
//! Choices written down here:
//!
//! - **Equal priorities.** Servers of the same priority are dispatched first-in first-out, so a
//!   server can wait for every other server of its priority. We count each of them as
//!   interference, exactly as if it had a higher priority. That is conservative (never admits
//!   more than the FIFO schedule can serve) and reduces to the paper's test when priorities
//!   are distinct. Equal-priority servers do not contribute to `I_i`: their regions are already
//!   inside their budgets, which are counted whole.
//! - **Where the iteration stops.** As soon as an iterate exceeds `p_i`, the server is not
//!   admitted and that iterate is reported as `R_i` (it is a lower bound on the real response
//!   time, not the response time itself). The iterates never decrease, because every `RBF` is
//!   non-decreasing.
//! - **Bounded work.** The iteration takes at most [`MAX_ITERATIONS`] steps. Hand-written
//!   systems converge in a handful; only pathological inputs (nanosecond budgets against
//!   periods of years, higher-priority utilisation a hair below one) can reach the limit, and
//!   then the server is reported [`Verdict::IterationLimit`], which counts as not admitted.
//! - **Integer nanoseconds.** Demand is summed in `u128`; a demand that reaches `u64::MAX`
//!   nanoseconds (584 years) counts as exceeding every period, so saturation can never make an
//!   overloaded server look admitted.
//!
//! Nothing here panics, on any input: zero periods and budgets larger than their periods are
//! analysed as written (the request-bound functions guard their divisions).

use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Priority};

use crate::rbf::{rbf, ServerKind};

/// The most iterations the fixed-point search takes before giving up (not admitted).
pub const MAX_ITERATIONS: u32 = 100_000;

/// One reservation server under analysis: `(b, p, eta)` at priority `sigma`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Server {
    /// The task's name, for reports.
    pub name: String,
    /// Its fixed priority `sigma` (larger is more important).
    pub priority: Priority,
    /// Its budget `b`, period `p`, queue capacity `S` and non-preemptive region `eta`.
    pub reservation: Reservation,
    /// How its budget comes back, which decides its request-bound function.
    pub kind: ServerKind,
}

impl Server {
    /// A server named `name`.
    pub fn new(
        name: impl Into<String>,
        priority: Priority,
        reservation: Reservation,
        kind: ServerKind,
    ) -> Self {
        Server {
            name: name.into(),
            priority,
            reservation,
            kind,
        }
    }
}

/// The outcome of Eq. 1 for one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `R_i` is the least fixed point and `R_i <= p_i`.
    Admitted,
    /// An iterate exceeded `p_i`: there is no fixed point within the period.
    ExceedsPeriod,
    /// [`MAX_ITERATIONS`] iterations without deciding; treated as not admitted.
    IterationLimit,
}

/// Eq. 1 for one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// `I_i`: the longest non-preemptive region of a strictly lower-priority server.
    pub blocking: Duration,
    /// `R_i`: the response bound when admitted; otherwise the last iterate (the first one
    /// above `p_i`, or the one where the iteration limit stopped the search).
    pub response: Duration,
    /// Whether the server is admitted.
    pub verdict: Verdict,
}

impl Response {
    /// True when the server is admitted (`R_i <= p_i`).
    pub fn admitted(&self) -> bool {
        self.verdict == Verdict::Admitted
    }
}

/// True when `other` can delay `server` by its budget: a higher priority, or the same priority
/// (FIFO among equals; see the module notes). A server never interferes with itself; callers
/// pass distinct indices.
fn interferes(server: &Server, other: &Server) -> bool {
    other.priority >= server.priority
}

/// `I_i` for `servers[index]`: the longest `eta` among strictly lower priorities, zero if none
/// (and zero for an index out of range).
pub fn blocking(servers: &[Server], index: usize) -> Duration {
    let Some(server) = servers.get(index) else {
        return Duration::ZERO;
    };
    servers
        .iter()
        .filter(|l| l.priority < server.priority)
        .map(|l| l.reservation.non_preemptive)
        .max()
        .unwrap_or(Duration::ZERO)
}

/// Eq. 1 for `servers[index]` against the other servers of its core; `None` for an index out
/// of range.
pub fn response_time(servers: &[Server], index: usize) -> Option<Response> {
    let server = servers.get(index)?;
    let blocking = blocking(servers, index);
    let period = server.reservation.period;
    let interfering: Vec<&Server> = servers
        .iter()
        .enumerate()
        .filter(|&(j, other)| j != index && interferes(server, other))
        .map(|(_, other)| other)
        .collect();

    let start = blocking.as_nanos() as u128 + server.reservation.budget.as_nanos() as u128;
    // The demand in a window of length `r`; `None` when it reaches u64::MAX nanoseconds.
    let demand = |r: Duration| -> Option<Duration> {
        let total = interfering.iter().fold(start, |sum, h| {
            sum + rbf(h.kind, r, h.reservation).as_nanos() as u128
        });
        u64::try_from(total)
            .ok()
            .filter(|&n| n < u64::MAX)
            .map(Duration::from_nanos)
    };
    let not_admitted = |response: Duration, verdict: Verdict| Response {
        blocking,
        response,
        verdict,
    };

    let Some(mut r) = u64::try_from(start)
        .ok()
        .filter(|&n| n < u64::MAX)
        .map(Duration::from_nanos)
    else {
        return Some(not_admitted(Duration::MAX, Verdict::ExceedsPeriod));
    };
    for _ in 0..MAX_ITERATIONS {
        if r > period {
            return Some(not_admitted(r, Verdict::ExceedsPeriod));
        }
        let Some(next) = demand(r) else {
            return Some(not_admitted(Duration::MAX, Verdict::ExceedsPeriod));
        };
        if next == r {
            return Some(Response {
                blocking,
                response: r,
                verdict: Verdict::Admitted,
            });
        }
        // `next > r`: the RBFs are non-decreasing and the first iterate is `start`.
        r = next;
    }
    Some(not_admitted(r, Verdict::IterationLimit))
}

/// Eq. 1 for every server of one core, in the order given.
pub fn response_times(servers: &[Server]) -> Vec<Response> {
    (0..servers.len())
        .filter_map(|i| response_time(servers, i))
        .collect()
}

/// The most involuntary preemptions a server suffers per period (section III-F):
/// `ceil(b / eta) - 1`, because every dispatch runs at least `min(eta, remaining budget)`.
/// `None` (unbounded) when `eta = 0`: then higher-priority activations alone decide.
pub fn preemptions_per_period(reservation: Reservation) -> Option<u64> {
    let eta = reservation.non_preemptive.as_nanos();
    if eta == 0 {
        return None;
    }
    Some(
        reservation
            .budget
            .as_nanos()
            .div_ceil(eta)
            .saturating_sub(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn server(priority: u8, b: u64, p: u64) -> Server {
        Server::new(
            format!("s{priority}"),
            Priority(priority),
            Reservation::new(ms(b), ms(p)),
            ServerKind::Sporadic,
        )
    }

    /// Two servers of priority 1, (2, 10) each: each waits for the other (FIFO among equals),
    /// so R = 2 + ceil(4/10) * 2 = 4 for both, by hand.
    #[test]
    fn equal_priorities_interfere_with_each_other() {
        let set = [server(1, 2, 10), server(1, 2, 10)];
        for r in response_times(&set) {
            assert_eq!(r.response, ms(4));
            assert!(r.admitted());
        }
    }

    /// An index out of range has no response and no blocking; an empty core has no responses.
    #[test]
    fn out_of_range_is_not_a_panic() {
        assert_eq!(response_time(&[], 0), None);
        assert_eq!(blocking(&[], 3), Duration::ZERO);
        assert!(response_times(&[]).is_empty());
    }

    /// A higher-priority server that takes the whole processor (b = p) leaves nothing: with
    /// p = 1 ns the iterates grow by b_i each step, R > p after one.
    #[test]
    fn a_full_higher_priority_server_starves_the_rest() {
        let hog = Server::new(
            "hog",
            Priority(2),
            Reservation::new(Duration::from_nanos(1), Duration::from_nanos(1)),
            ServerKind::Sporadic,
        );
        let victim = server(1, 1, 10);
        let r = response_time(&[hog, victim], 1).unwrap();
        assert_eq!(r.verdict, Verdict::ExceedsPeriod);
        // Start 1 ms, then 1 ms + ceil(1 ms / 1 ns) * 1 ns = 2 ms, ..., the first above 10 ms.
        assert_eq!(r.response, ms(11));
    }

    /// A demand past u64::MAX nanoseconds is never admitted, even with p = u64::MAX.
    #[test]
    fn saturated_demand_is_not_admitted() {
        let huge = Reservation::new(Duration::MAX, Duration::MAX);
        let set = [
            Server::new("a", Priority(2), huge, ServerKind::Deferrable),
            Server::new("b", Priority(1), huge, ServerKind::Deferrable),
        ];
        let r = response_time(&set, 1).unwrap();
        assert!(!r.admitted());
        assert_eq!(r.response, Duration::MAX);
    }

    /// ceil(b / eta) - 1 by hand: 10/6 -> 1, 10/5 -> 1, 10/10 -> 0, 10/20 -> 0, 10/3 -> 3.
    #[test]
    fn preemptions_by_hand() {
        let r = |eta: u64| Reservation::new(ms(10), ms(60)).with_non_preemptive(ms(eta));
        assert_eq!(preemptions_per_period(r(6)), Some(1));
        assert_eq!(preemptions_per_period(r(5)), Some(1));
        assert_eq!(preemptions_per_period(r(10)), Some(0));
        assert_eq!(preemptions_per_period(r(20)), Some(0));
        assert_eq!(preemptions_per_period(r(3)), Some(3));
        assert_eq!(preemptions_per_period(r(0)), None);
    }
}
