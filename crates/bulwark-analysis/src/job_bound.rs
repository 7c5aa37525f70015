//! What an admitted reservation's response `R` (SPR paper, Eq. 1) says of its task's jobs.
//!
//! Eq. 1 bounds the time a reservation takes to receive its budget `b` from a replenishment
//! at which it has work. A job of its task gets that bound when it needs at most `b` and
//! its releases are at least `p` apart ([`crate::fit::fit`]), and when each release finds the
//! budget the bound starts from:
//!
//! - **Sporadic rule** (SPR, the sporadic server): a chunk consumed from an activation comes
//!   back one period after it, so with releases `p` or more apart each job finds the whole
//!   budget at its release: every job completes within `R` of its release, whatever the
//!   phase.
//! - **Deferrable rule** (SPR's deferrable variant, the deferrable server): the budget is
//!   reset at every multiple of `p`. A release on that grid finds it whole: within `R`. A
//!   release off the grid may find it spent by its predecessor, and waits for the next
//!   multiple `g < r + p`; from `g`, with the whole budget, it is served within `R`. By
//!   induction over the jobs (a job's own reset comes at most `p` after its release, and its
//!   predecessor's a period or more before that), every job completes within `R + p`.
//!
//! A job that calls a passive server counts each call at what one request drains from its
//! budget ([`crate::gates::CallDrains`]). With bandwidth inheritance a waiting caller stays
//! ready, lending its budget to the request in service (or spinning while another core runs
//! it), so it is never blocked: a job whose work and drains fit `b` is served as one without
//! calls.

use bulwark_core::reservation::Reservation;
use bulwark_core::Duration;
use bulwark_spec::{Behaviour, CostModel, Step};

use crate::fit::{fit, Fit};
use crate::rbf::ServerKind;

/// A bound on a job's response in an admitted reservation, or why there is none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobBound {
    /// Every job completes within `R` of its release.
    WithinR,
    /// Deferrable rule, releases off the multiples of `p`: within `R + p`.
    OffGrid,
    /// The jobs need more than the reservation gives, or are not checked
    /// ([`Fit::Exceeds`], [`Fit::Unchecked`]): no bound here. Says why.
    Unbounded(String),
}

impl JobBound {
    /// The bound on a job's response from the reservation's `response`, if any.
    pub fn response(&self, response: Duration, reservation: Reservation) -> Option<Duration> {
        match self {
            JobBound::WithinR => Some(response),
            JobBound::OffGrid => Some(response.saturating_add(reservation.period)),
            JobBound::Unbounded(_) => None,
        }
    }
}

/// The bound a reservation `(b, p)` replenished by `kind` gives the jobs of `behaviour`,
/// whose calls drain at most `drains` per server.
pub fn job_bound(
    behaviour: &Behaviour,
    reservation: Reservation,
    kind: ServerKind,
    cost: &CostModel,
    drains: &[Option<Duration>],
) -> JobBound {
    match fit(behaviour, reservation, cost, drains) {
        Fit::Carried => {}
        Fit::Exceeds(why) | Fit::Unchecked(why) => return JobBound::Unbounded(why),
    }
    match kind {
        ServerKind::Sporadic => JobBound::WithinR,
        ServerKind::Deferrable if on_grid(behaviour, reservation.period) => JobBound::WithinR,
        ServerKind::Deferrable => JobBound::OffGrid,
    }
}

/// The bound a constant-bandwidth server `(Q, P)` (Abeni and Buttazzo) on an admitted core
/// gives the jobs of `behaviour`: [`JobBound::WithinR`] with `R = P`. A job that needs at most
/// `Q`, released `P` or more after its predecessor's release, finds that job's server
/// deadline (at most its release plus `P`, since it never ran out of budget) passed: it gets
/// the deadline `r + P` with the whole budget, which it does not exhaust, and EDF over an
/// admitted core meets that deadline.
pub fn cbs_job_bound(
    behaviour: &Behaviour,
    reservation: Reservation,
    cost: &CostModel,
    drains: &[Option<Duration>],
) -> JobBound {
    match fit(behaviour, reservation, cost, drains) {
        Fit::Carried => JobBound::WithinR,
        Fit::Exceeds(why) | Fit::Unchecked(why) => JobBound::Unbounded(why),
    }
}

/// True when every release of `behaviour` is a multiple of `period`: a periodic task (or a
/// script that is one endless loop closed by `sleep-until-next-release`, its releases on the
/// grid of its first) whose first release and period are multiples of it. A sporadic task's
/// releases may fall anywhere.
fn on_grid(behaviour: &Behaviour, period: Duration) -> bool {
    let multiple = |d: Duration| d.as_nanos().is_multiple_of(period.as_nanos().max(1));
    match behaviour {
        Behaviour::Periodic {
            period: own,
            offset,
            ..
        } => multiple(*offset) && multiple(*own),
        Behaviour::Sporadic { .. } => false,
        Behaviour::Script { offset, steps } => match steps.as_slice() {
            [Step::Loop { count: None, body }] => match body.last() {
                Some(Step::SleepUntilNextRelease(own)) => multiple(*offset) && multiple(*own),
                _ => false,
            },
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::ms;
    use bulwark_spec::Execution;

    fn periodic(period: u64, execution: u64, offset: u64) -> Behaviour {
        Behaviour::Periodic {
            period: ms(period),
            offset: ms(offset),
            execution: Execution::Fixed(ms(execution)),
        }
    }

    fn bound(behaviour: &Behaviour, budget: u64, period: u64, kind: ServerKind) -> JobBound {
        let reservation = Reservation::new(ms(budget), ms(period));
        job_bound(behaviour, reservation, kind, &CostModel::default(), &[])
    }

    #[test]
    fn the_sporadic_rule_bounds_every_phase_by_r() {
        for offset in [0, 3, 10] {
            let task = periodic(10, 2, offset);
            assert_eq!(bound(&task, 2, 10, ServerKind::Sporadic), JobBound::WithinR);
        }
        let sporadic = Behaviour::Sporadic {
            min_interarrival: ms(12),
            jitter: ms(3),
            offset: ms(1),
            execution: Execution::Fixed(ms(2)),
        };
        assert_eq!(
            bound(&sporadic, 2, 10, ServerKind::Sporadic),
            JobBound::WithinR
        );
    }

    #[test]
    fn the_deferrable_rule_bounds_releases_off_its_grid_by_r_plus_p() {
        let deferrable = ServerKind::Deferrable;
        // On the grid of 6 ms: offset 0 or 12, period 6 or 18. Off it: offset 4, or a period
        // of 9 that drifts across it.
        let cases = [
            (periodic(6, 1, 0), JobBound::WithinR),
            (periodic(18, 1, 12), JobBound::WithinR),
            (periodic(6, 1, 4), JobBound::OffGrid),
            (periodic(9, 1, 0), JobBound::OffGrid),
        ];
        for (task, expected) in cases {
            assert_eq!(bound(&task, 1, 6, deferrable), expected, "{task:?}");
        }
        let off = JobBound::OffGrid.response(ms(5), Reservation::new(ms(1), ms(6)));
        assert_eq!(off, Some(ms(11)));
        let sporadic = Behaviour::Sporadic {
            min_interarrival: ms(6),
            jitter: Duration::ZERO,
            offset: Duration::ZERO,
            execution: Execution::Fixed(ms(1)),
        };
        assert_eq!(bound(&sporadic, 1, 6, deferrable), JobBound::OffGrid);
    }

    #[test]
    fn a_script_on_the_grid_is_within_r_and_one_with_a_relative_sleep_is_not() {
        let script = |sleep: Step, offset: u64| Behaviour::Script {
            offset: ms(offset),
            steps: vec![Step::Loop {
                count: None,
                body: vec![Step::Run(Execution::Fixed(ms(1))), sleep],
            }],
        };
        let deferrable = ServerKind::Deferrable;
        let grid = script(Step::SleepUntilNextRelease(ms(10)), 20);
        assert_eq!(bound(&grid, 1, 10, deferrable), JobBound::WithinR);
        let late = script(Step::SleepUntilNextRelease(ms(10)), 5);
        assert_eq!(bound(&late, 1, 10, deferrable), JobBound::OffGrid);
        let relative = script(Step::SleepFor(ms(10)), 0);
        assert_eq!(bound(&relative, 1, 10, deferrable), JobBound::OffGrid);
    }

    #[test]
    fn a_constant_bandwidth_server_bounds_fitting_jobs_of_any_phase_by_its_period() {
        let server = Reservation::new(ms(2), ms(10));
        let cost = CostModel::default();
        for offset in [0, 3] {
            let task = periodic(10, 2, offset);
            assert_eq!(cbs_job_bound(&task, server, &cost, &[]), JobBound::WithinR);
        }
        assert_eq!(
            JobBound::WithinR.response(ms(10), server),
            Some(ms(10)),
            "R = P"
        );
        let heavy = periodic(10, 3, 0);
        assert!(matches!(
            cbs_job_bound(&heavy, server, &cost, &[]),
            JobBound::Unbounded(_)
        ));
    }

    #[test]
    fn jobs_that_need_more_than_the_reservation_have_no_bound() {
        let JobBound::Unbounded(why) = bound(&periodic(10, 3, 0), 2, 10, ServerKind::Sporadic)
        else {
            panic!("a job of 3 ms in a budget of 2 ms");
        };
        assert!(why.contains("a job needs up to 3ms > budget 2ms"), "{why}");
        assert_eq!(
            JobBound::Unbounded(why).response(ms(5), Reservation::new(ms(2), ms(10))),
            None
        );
        let JobBound::Unbounded(why) = bound(&periodic(8, 1, 0), 1, 10, ServerKind::Deferrable)
        else {
            panic!("releases 8 ms apart in a period of 10 ms");
        };
        assert!(
            why.contains("jobs come every 8ms < reservation period 10ms"),
            "{why}"
        );
    }
}
