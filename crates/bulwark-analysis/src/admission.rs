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
//! - **Deadlines.** A server whose task has a relative deadline `D` shorter than its period
//!   (a constrained deadline) is admitted iff `R_i <= D`; otherwise `R_i <= p_i` as in Eq. 1.
//! - **Where the iteration stops.** As soon as an iterate exceeds the bound (`p_i`, or `D`),
//!   the server is not admitted and that iterate is reported as `R_i` (it is a lower bound on
//!   the real response time, not the response time itself); `Duration::MAX` when no fixed
//!   point exists at all (higher-priority utilisation at least 1). The iterates never
//!   decrease, because every `RBF` is non-decreasing.
//! - **Bounded work, no cap.** The fixed point is found by
//!   [`crate::classic::fixed_point::least_fixed_point`], which jumps ahead to exact lower
//!   bounds of the fixed point: a higher-priority load a hair below 1 in front of a long
//!   period converges in a handful of steps, and every step crosses a higher-priority release
//!   point below the bound, so the work is finite for every input. Every verdict is exact.
//! - **Masked interrupts.** A core on which a termination reclaims with interrupts masked
//!   ([`crate::reclamation`]) runs nothing else for up to the sum `M` of those masks over a
//!   run (each target is terminated once). [`response_times_masked`] adds `M` to every
//!   server's `R = I_i + M + b_i + ...`, as it would a second non-preemptive section: sound
//!   for any window, since no window holds more than all of it. Without a bound on `M`
//!   nothing is admitted.
//! - **Integer nanoseconds.** Demand is summed in `u128`; a demand that reaches `u64::MAX`
//!   nanoseconds (584 years) counts as exceeding every period, so saturation can never make an
//!   overloaded server look admitted.
//!
//! Nothing here panics, on any input: zero periods and budgets larger than their periods are
//! analysed as written (the request-bound functions guard their divisions).

use bulwark_core::reservation::Reservation;
use bulwark_core::{Duration, Priority};

use crate::classic::fixed_point::{least_fixed_point, FixedPoint, Interference};
use crate::levels::Levels;
use crate::rbf::ServerKind;

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
    /// The task's relative deadline, when it is shorter than the period matters: admission
    /// then needs `R <= D` as well as `R <= p`.
    pub deadline: Option<Duration>,
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
            deadline: None,
        }
    }

    /// The same server with relative deadline `deadline`.
    pub fn with_deadline(mut self, deadline: Option<Duration>) -> Self {
        self.deadline = deadline;
        self
    }

    /// The bound `R_i` must meet: `min(D, p)`.
    pub fn bound(&self) -> Duration {
        self.deadline
            .map_or(self.reservation.period, |d| d.min(self.reservation.period))
    }
}

/// The outcome of Eq. 1 for one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// `R_i` is the least fixed point and `R_i <= p_i`.
    Admitted,
    /// An iterate exceeded `p_i`: there is no fixed point within the period.
    ExceedsPeriod,
    /// An iterate exceeded the task's constrained deadline `D < p_i`.
    ExceedsDeadline,
}

/// Eq. 1 for one server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    /// `I_i`: the longest non-preemptive region of a strictly lower-priority server.
    pub blocking: Duration,
    /// `M`: the time the core's interrupts may be masked by reclamations, in all (zero
    /// without terminations; `None`: without bound).
    pub masked: Option<Duration>,
    /// `R_i`: the response bound when admitted; otherwise the first iterate found above the
    /// bound (`Duration::MAX` when there is no fixed point at all).
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
    response_time_masked(servers, index, Some(Duration::ZERO))
}

/// [`response_time`] on a core whose interrupts reclamations may mask for `masked` in all
/// (`None`: without bound), added to the response as blocking is (module notes).
pub fn response_time_masked(
    servers: &[Server],
    index: usize,
    masked: Option<Duration>,
) -> Option<Response> {
    let server = servers.get(index)?;
    let interfering: Vec<Interference> = servers
        .iter()
        .enumerate()
        .filter(|&(j, other)| j != index && interferes(server, other))
        .map(|(_, other)| interference(other))
        .collect();
    Some(response_with(
        server,
        blocking(servers, index),
        &interfering,
        masked,
    ))
}

/// What `other` adds to the demand of a server it can delay: RBF_h(R) = alpha_h(R) * b_h
/// (rbf.rs), `ceil(R / p)` for a sporadic server and `ceil((R + (p - b)) / p)` for a
/// deferrable one, i.e. a jitter of `p - b`.
fn interference(other: &Server) -> Interference {
    let (budget, period) = (
        other.reservation.budget.as_nanos(),
        other.reservation.period.as_nanos().max(1),
    );
    Interference {
        cost: budget,
        period,
        jitter: match other.kind {
            ServerKind::Sporadic => 0,
            ServerKind::Deferrable => period - budget.min(period),
        },
    }
}

/// Eq. 1's least fixed point for `server`, given its blocking `I_i` and the servers that can
/// delay it (in any order: the search only sums over them).
fn response_with(
    server: &Server,
    blocking: Duration,
    interfering: &[Interference],
    masked: Option<Duration>,
) -> Response {
    let bound = server.bound();
    // R starts at I_i + M + b_i.
    let start = masked
        .and_then(|masked| blocking.as_nanos().checked_add(masked.as_nanos()))
        .and_then(|n| n.checked_add(server.reservation.budget.as_nanos()))
        .filter(|&n| n < u64::MAX);
    let Some(start) = start else {
        return Response {
            blocking,
            masked,
            response: Duration::MAX,
            verdict: Verdict::ExceedsPeriod,
        };
    };
    match least_fixed_point(start, interfering, start, bound.as_nanos()) {
        FixedPoint::Found { value, .. } => Response {
            blocking,
            masked,
            response: Duration::from_nanos(value),
            verdict: Verdict::Admitted,
        },
        FixedPoint::Exceeds { value, .. } => Response {
            blocking,
            masked,
            response: Duration::from_nanos(value),
            verdict: if bound < server.reservation.period {
                Verdict::ExceedsDeadline
            } else {
                Verdict::ExceedsPeriod
            },
        },
    }
}

/// Eq. 1 for every server of one core, in the order given.
pub fn response_times(servers: &[Server]) -> Vec<Response> {
    response_times_masked(servers, Some(Duration::ZERO))
}

/// [`response_times`] on a core whose interrupts reclamations may mask for `masked` in all.
///
/// The servers are taken from the highest priority down: a server's interference is every
/// other server at its priority or above, so the levels above are kept summed by period
/// from level to level and only its own level is laid out for each
/// ([`Levels::with_interference`]); its blocking is the longest `eta` of the levels below,
/// one running maximum from the lowest level up. (One scan of the whole core per server, as
/// [`response_time_masked`] does, made `analyze` of a core of 50,000 servers take 40 s.)
pub fn response_times_masked(servers: &[Server], masked: Option<Duration>) -> Vec<Response> {
    let levels = Levels::new(servers.len(), |i| servers[i].priority);
    let below = levels.longest_below(|i| servers[i].reservation.non_preemptive);
    let mut responses: Vec<Option<Response>> = vec![None; servers.len()];
    levels.with_interference(
        |j| Some(interference(&servers[j])),
        |i, terms| responses[i] = Some(response_with(&servers[i], below[i], terms, masked)),
    );
    responses.into_iter().flatten().collect()
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
    use crate::test_support::ms;
    use proptest::prelude::*;

    /// Small times and few priorities, so ties, blocking from several levels and sets that
    /// miss are all common.
    fn servers() -> impl Strategy<Value = Vec<Server>> {
        let one = (
            0u8..4,
            1u64..=6,
            1u64..=30,
            0u64..=4,
            any::<bool>(),
            any::<bool>(),
        );
        prop::collection::vec(one, 0..10).prop_map(|set| {
            set.into_iter()
                .enumerate()
                .map(
                    |(i, (priority, budget, period, eta, deferrable, constrained))| {
                        let kind = if deferrable {
                            ServerKind::Deferrable
                        } else {
                            ServerKind::Sporadic
                        };
                        let reservation =
                            Reservation::new(ms(budget), ms(period)).with_non_preemptive(ms(eta));
                        Server::new(format!("s{i}"), Priority(priority), reservation, kind)
                            .with_deadline(constrained.then(|| ms(period.div_ceil(2))))
                    },
                )
                .collect()
        })
    }

    proptest! {
        /// The level-by-level analysis of a core gives each server what its own scan of the
        /// core gives, masked or not.
        #[test]
        fn levels_match_one_scan_per_server(set in servers(), masked in prop::option::of(0u64..=5)) {
            let masked = masked.map(ms);
            let each: Vec<Response> = (0..set.len())
                .filter_map(|i| response_time_masked(&set, i, masked))
                .collect();
            prop_assert_eq!(response_times_masked(&set, masked), each);
        }
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

    /// High (2, 10) over low (3, 20), by hand: high's R = M + 2, low's the least fixed point
    /// of R = M + 3 + ceil(R / 10) 2 from M + 3. M = 0: 2 and 5; M = 1 ms: 3 and 4 -> 6;
    /// M = 9 ms: high 11 > 10, refused, and low 12 -> 16, admitted; M = 15 ms: low 18 -> 22
    /// > 20, refused. Without a bound on the mask nothing is admitted.
    #[test]
    fn a_masked_core_adds_its_mask_to_every_response() {
        let set = [server(2, 2, 10), server(1, 3, 20)];
        let response = |masked: Option<u64>| -> Vec<(Duration, bool)> {
            response_times_masked(&set, masked.map(ms))
                .iter()
                .map(|r| (r.response, r.admitted()))
                .collect()
        };
        assert_eq!(response(Some(0)), [(ms(2), true), (ms(5), true)]);
        assert_eq!(response(Some(1)), [(ms(3), true), (ms(6), true)]);
        assert_eq!(response(Some(9)), [(ms(11), false), (ms(16), true)]);
        assert_eq!(response(Some(15))[1], (ms(22), false));
        let unbounded = response_times_masked(&set, None);
        assert!(unbounded
            .iter()
            .all(|r| !r.admitted() && r.masked.is_none()));
        assert_eq!(
            response_times(&set),
            response_times_masked(&set, Some(ms(0)))
        );
    }

    /// An index out of range has no response and no blocking; an empty core has no responses.
    #[test]
    fn out_of_range_is_not_a_panic() {
        assert_eq!(response_time(&[], 0), None);
        assert_eq!(blocking(&[], 3), Duration::ZERO);
        assert!(response_times(&[]).is_empty());
    }

    /// A higher-priority server that takes the whole processor (b = p) leaves nothing: with
    /// p = 1 ns the iterates grow by b_i each step, R > p after ten.
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

    /// The same hog in front of a server with a period of a year: no fixed point exists
    /// (demand 1 ms + R > R for every R), so after the plain steps the answer is unbounded at
    /// once instead of a year of millisecond steps.
    #[test]
    fn a_full_load_is_unbounded_without_walking_the_period() {
        let hog = Server::new(
            "hog",
            Priority(2),
            Reservation::new(Duration::from_nanos(1), Duration::from_nanos(1)),
            ServerKind::Sporadic,
        );
        let victim = Server::new(
            "victim",
            Priority(1),
            Reservation::new(ms(1), Duration::from_secs(365 * 24 * 3600)),
            ServerKind::Sporadic,
        );
        let r = response_time(&[hog, victim], 1).unwrap();
        assert_eq!(
            (r.verdict, r.response),
            (Verdict::ExceedsPeriod, Duration::MAX)
        );
    }

    /// A 0.99999 higher-priority load (b = 99 999 ns, p = 100 000 ns) in front of a server of
    /// budget 5 ms and period 1000 s. By hand the fixed point is b + k * 99 999 with the least
    /// k such that it fits in k periods: k >= 5e6 / (100 000 - 99 999) = 5e6, so
    /// R = 5e6 + 5e6 * 99 999 ns = 5e11 ns = 500 s <= 1000 s: admitted. The plain iteration
    /// would need about 1.5 million steps.
    #[test]
    fn a_load_close_to_one_gets_an_exact_answer() {
        let hog = Server::new(
            "hog",
            Priority(2),
            Reservation::new(Duration::from_nanos(99_999), Duration::from_nanos(100_000)),
            ServerKind::Sporadic,
        );
        let long = Server::new(
            "long",
            Priority(1),
            Reservation::new(ms(5), Duration::from_secs(1000)),
            ServerKind::Sporadic,
        );
        let r = response_time(&[hog.clone(), long.clone()], 1).unwrap();
        assert_eq!(r.verdict, Verdict::Admitted);
        assert_eq!(r.response, Duration::from_secs(500));
        // A period just below 500 s: exactly not admitted.
        let short = Server {
            reservation: Reservation::new(ms(5), Duration::from_nanos(499_999_999_999)),
            ..long
        };
        let r = response_time(&[hog, short], 1).unwrap();
        assert_eq!(r.verdict, Verdict::ExceedsPeriod);
    }

    /// A constrained deadline is the bound: mid of Table I (b 20, p 40 under b 10, p 30) has
    /// R = 20 -> 30 -> 30 by hand; with D = 30 it is admitted, with D = 29 it is not.
    #[test]
    fn a_constrained_deadline_is_checked() {
        let set = |d: u64| {
            [
                server(3, 10, 30),
                server(2, 20, 40).with_deadline(Some(ms(d))),
            ]
        };
        let r = response_time(&set(30), 1).unwrap();
        assert_eq!((r.response, r.verdict), (ms(30), Verdict::Admitted));
        let r = response_time(&set(29), 1).unwrap();
        assert_eq!(r.verdict, Verdict::ExceedsDeadline);
        // A deadline past the period changes nothing: R <= p is still required.
        let r = response_time(&set(45), 1).unwrap();
        assert_eq!(r.verdict, Verdict::Admitted);
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
