//! Whether a reservation carries a task's jobs: the simple check of a job's execution bound
//! against the budget and its release spacing against the period. The clustered analysis
//! ([`crate::cluster`]) gives each member its fit, and the job bounds of partitioned
//! reservations ([`crate::job_bound`]) start from it. A job's demand is read from its
//! behaviour; a script's from its reading ([`ScriptReading`]), each server call counted at
//! what its requests drain from the caller's budget ([`crate::gates::CallDrains`]).

use bulwark_core::Duration;
use bulwark_spec::{Behaviour, CostModel, Reservation, ScriptReading, StepTimes};

/// Whether a reservation `(e, p)` gives a task's jobs what they need: each job at most `e`
/// of execution, released at most once per `p`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fit {
    /// Execution bound `C <= e` and period (or minimum inter-arrival time) `T >= p`.
    Carried,
    /// `C > e` or `T < p`: the task's jobs need more than its reservation gives, and a job
    /// may take several periods of the reservation. Says which.
    Exceeds(String),
    /// Not checked (a script has no fixed execution time or period). Says why.
    Unchecked(String),
}

/// Why a script's fit is not checked.
pub(crate) const SCRIPT_UNCHECKED: &str =
    "not checked: a script has no fixed execution time or period \
     (one endless loop of work and one sleep has, its server calls at gates that bound the \
     budget a request drains)";

/// A job's release spacing and execution bound: a periodic or sporadic task's, or an endless
/// job's ([`ScriptReading::Sporadic`]: its releases at least `T - J` apart, its work at most
/// `C`). A server call counts what it drains from the caller's budget, `drains` per server
/// ([`CallDrains`]: the requests ahead it lends to, and its own, whatever operation
/// it asks for); a call to a server without such a bound leaves none. A call's least is
/// nothing, as the reading takes it, so a job that ends sooner cannot bring the next release
/// closer than `T - J`.
pub(crate) fn demand(
    behaviour: &Behaviour,
    cost: &CostModel,
    drains: &[Option<Duration>],
) -> Option<(Duration, Duration)> {
    let Behaviour::Script { offset, steps } = behaviour else {
        return behaviour.spacing_and_execution();
    };
    let times = StepTimes::with_drains(cost, drains);
    let ScriptReading::Sporadic(job) = ScriptReading::of(*offset, steps, &times) else {
        return None;
    };
    Some((job.spacing.saturating_sub(job.jitter), job.wcet))
}

/// Whether `reservation` carries jobs of `behaviour`: the simple check of a job's execution
/// bound against the budget and its release spacing against the period.
pub fn fit(
    behaviour: &Behaviour,
    reservation: Reservation,
    cost: &CostModel,
    drains: &[Option<Duration>],
) -> Fit {
    let Some((spacing, execution)) = demand(behaviour, cost, drains) else {
        return Fit::Unchecked(SCRIPT_UNCHECKED.to_owned());
    };
    let (budget, period) = (reservation.budget, reservation.period);
    let mut short = Vec::new();
    if execution > budget {
        short.push(format!("a job needs up to {execution} > budget {budget}"));
    }
    if spacing < period {
        short.push(format!(
            "jobs come every {spacing} < reservation period {period}"
        ));
    }
    if short.is_empty() {
        Fit::Carried
    } else {
        Fit::Exceeds(format!(
            "{}: the task's jobs need more than its reservation gives, and a job may take \
             several periods of the reservation",
            short.join(", ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{ms, periodic};
    use bulwark_spec::{Execution, Step};

    #[test]
    fn releases_faster_than_the_reservation_do_not_fit_and_scripts_are_unchecked() {
        let reservation = Reservation::new(ms(2), ms(10));
        let Fit::Exceeds(why) = fit(&periodic(5, 1), reservation, &CostModel::FREE, &[]) else {
            panic!("every 5 ms against a 10 ms period");
        };
        assert!(why.starts_with("jobs come every 5ms < reservation period 10ms:"));
        let script = Behaviour::Script {
            offset: Duration::ZERO,
            steps: Vec::new(),
        };
        assert!(matches!(
            fit(&script, reservation, &CostModel::FREE, &[]),
            Fit::Unchecked(_)
        ));
    }

    /// By hand, against 2 ms per 10 ms: an endless job of 1 ms until the next 10 ms release
    /// fits; one of 3 ms needs more than the budget; one on a 10 ms grid from 3 ms comes 7 ms
    /// after the first release at the soonest (T - J), faster than the period; one that calls
    /// a server, or a script run once, is not checked.
    #[test]
    fn an_endless_job_is_checked_against_its_reservation() {
        let reservation = Reservation::new(ms(2), ms(10));
        let endless = |offset: u64, run: u64, sleep: Step| Behaviour::Script {
            offset: ms(offset),
            steps: vec![Step::Loop {
                count: None,
                body: vec![Step::Run(Execution::Fixed(ms(run))), sleep],
            }],
        };
        let check = |behaviour: &Behaviour| fit(behaviour, reservation, &CostModel::FREE, &[]);
        let next = || Step::SleepUntilNextRelease(ms(10));
        assert_eq!(check(&endless(0, 1, next())), Fit::Carried);
        let Fit::Exceeds(why) = check(&endless(0, 3, next())) else {
            panic!("3 ms against a 2 ms budget");
        };
        assert!(
            why.starts_with("a job needs up to 3ms > budget 2ms"),
            "{why}"
        );
        let Fit::Exceeds(why) = check(&endless(3, 1, Step::SleepUntilAligned(ms(10)))) else {
            panic!("a first release 3 ms off its grid");
        };
        assert!(
            why.starts_with("jobs come every 7ms < reservation period 10ms"),
            "{why}"
        );
        let calling = Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![Step::Loop {
                count: None,
                body: vec![
                    Step::Invoke {
                        server: 0,
                        operation: None,
                    },
                    next(),
                ],
            }],
        };
        assert!(matches!(check(&calling), Fit::Unchecked(_)));
    }

    /// A call counts what it drains from the caller's budget. A job of a 1 ms run, a call
    /// whose requests drain at most 4 ms at server 0, and the reply step: 5 ms + 1 ns, which
    /// a 6 ms budget carries and a 5 ms one does not, also when the call asks for an operation
    /// of its own. Without a bound at the server it is not checked. After `sleep-for`
    /// 15 ms the next release comes at least 16 ms later (the run, the call read at its least,
    /// nothing, and the pause), under a 17 ms period.
    #[test]
    fn a_call_counts_the_budget_its_requests_drain() {
        let job = |operation: Option<Execution>, sleep: Step| Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![Step::Loop {
                count: None,
                body: vec![
                    Step::Run(Execution::Fixed(ms(1))),
                    Step::Invoke {
                        server: 0,
                        operation,
                    },
                    sleep,
                ],
            }],
        };
        let next = Step::SleepUntilNextRelease(ms(20));
        let drains = [Some(ms(4))];
        let fits =
            |behaviour: &Behaviour, budget: u64, period: u64, drains: &[Option<Duration>]| {
                fit(
                    behaviour,
                    Reservation::new(ms(budget), ms(period)),
                    &CostModel::FREE,
                    drains,
                )
            };
        let calling = job(None, next.clone());
        assert_eq!(fits(&calling, 6, 20, &drains), Fit::Carried);
        let Fit::Exceeds(why) = fits(&calling, 5, 20, &drains) else {
            panic!("5 ms + 1 ns against a 5 ms budget");
        };
        assert!(
            why.starts_with("a job needs up to 5.000001ms > budget 5ms"),
            "{why}"
        );
        assert!(matches!(fits(&calling, 6, 20, &[None]), Fit::Unchecked(_)));
        // A call asking for an operation of its own drains no more than the bound, which
        // counts the longest operation any client asks for.
        let named = job(Some(Execution::Fixed(ms(1))), next);
        assert_eq!(fits(&named, 6, 20, &drains), Fit::Carried);
        assert!(matches!(fits(&named, 5, 20, &drains), Fit::Exceeds(_)));
        let relative = job(None, Step::SleepFor(ms(15)));
        let Fit::Exceeds(why) = fits(&relative, 6, 17, &drains) else {
            panic!("releases 16 ms apart under a 17 ms period");
        };
        assert!(
            why.starts_with("jobs come every 16ms < reservation period 17ms"),
            "{why}"
        );
        assert_eq!(fits(&relative, 6, 16, &drains), Fit::Carried);
    }
}
