//! Random sequences of kernel calls against FP and EDF: no panic, invariants hold after every
//! call, a refused call changes nothing, and every decision picks what a reference model says.

use bulwark_core::reservation::{DeferrableServer, Reservation};
use bulwark_core::{
    CoreError, Decision, Duration, Edf, FixedPriority, Instant, Policy, Priority, TaskId, Wake,
    Work,
};
use proptest::prelude::*;

const TASKS: u32 = 8;

#[derive(Clone, Debug)]
enum Call {
    Activate(u32, u16),
    Sleep(u32, u16, u16),
    Block(u32),
    SetPriority(u32, u8),
    Timer,
    Schedule,
    Advance(u16),
}

fn call() -> impl Strategy<Value = Call> {
    // Ids up to TASKS + 1 so unknown tasks are exercised too.
    let task = 0..TASKS + 2;
    prop_oneof![
        (task.clone(), any::<u16>()).prop_map(|(t, d)| Call::Activate(t, d)),
        (task.clone(), any::<u16>(), any::<u16>()).prop_map(|(t, u, d)| Call::Sleep(t, u, d)),
        task.clone().prop_map(Call::Block),
        (task, 0u8..6).prop_map(|(t, p)| Call::SetPriority(t, p)),
        Just(Call::Timer),
        Just(Call::Schedule),
        (0u16..500).prop_map(Call::Advance),
    ]
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Ready,
    Sleeping(Instant, Wake),
    Blocked,
}

/// What the policy should know, kept the obvious way.
struct Model {
    state: Vec<State>,
    deadline: Vec<Instant>,
    priority: Vec<Priority>,
}

impl Model {
    fn wake(&mut self, t: usize, wake: Wake) {
        self.state[t] = State::Ready;
        if let Wake::NextJob { deadline } = wake {
            self.deadline[t] = deadline;
        }
    }

    fn expire(&mut self, now: Instant) {
        for t in 0..self.state.len() {
            if let State::Sleeping(at, wake) = self.state[t] {
                if at <= now {
                    self.wake(t, wake);
                }
            }
        }
    }

    fn ready(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.state.len()).filter(|t| self.state[*t] == State::Ready)
    }

    fn next_timeout(&self) -> Option<Instant> {
        self.state
            .iter()
            .filter_map(|s| match s {
                State::Sleeping(at, _) => Some(*at),
                _ => None,
            })
            .min()
    }
}

/// Drives `policy` and `model` with the same calls; `check_pick` judges each decision.
fn drive<P: Policy + Clone + core::fmt::Debug>(
    mut policy: P,
    mut model: Model,
    calls: Vec<Call>,
    check_pick: impl Fn(&P, &Model, &Decision) -> Result<(), TestCaseError>,
    budgets: bool,
    priorities: bool,
) -> Result<(), TestCaseError> {
    let mut now = Instant::ZERO;
    for c in calls {
        let before = format!("{policy:?}");
        let mut work = Work::default();
        let result: Result<(), CoreError> = match c {
            Call::Activate(t, d) => {
                let wake = Wake::NextJob {
                    deadline: now.saturating_add(Duration::from_nanos(d as u64)),
                };
                let r = policy.activate(now, TaskId(t), wake, &mut work);
                let known = (t as usize) < model.state.len();
                let suspended = known && model.state[t as usize] != State::Ready;
                prop_assert_eq!(r.is_ok(), suspended);
                if r.is_ok() {
                    model.wake(t as usize, wake);
                }
                r
            }
            Call::Sleep(t, u, d) => {
                let until = now
                    .saturating_add(Duration::from_nanos(u as u64))
                    .saturating_sub(Duration::from_nanos(100));
                let wake = Wake::NextJob {
                    deadline: until.saturating_add(Duration::from_nanos(d as u64)),
                };
                let r = policy.sleep(now, TaskId(t), until, wake, &mut work);
                let known = (t as usize) < model.state.len();
                let sleepable = known && !matches!(model.state[t as usize], State::Sleeping(..));
                prop_assert_eq!(r.is_ok(), sleepable);
                if r.is_ok() {
                    if until <= now {
                        model.wake(t as usize, wake);
                    } else {
                        model.state[t as usize] = State::Sleeping(until, wake);
                    }
                }
                r
            }
            Call::Block(t) => {
                let r = policy.block(now, TaskId(t), &mut work);
                let known = (t as usize) < model.state.len();
                prop_assert_eq!(r.is_ok(), known && model.state[t as usize] == State::Ready);
                if r.is_ok() {
                    model.state[t as usize] = State::Blocked;
                }
                r
            }
            Call::SetPriority(t, p) => {
                let r = policy.set_priority(now, TaskId(t), Priority(p), &mut work);
                let known = (t as usize) < model.state.len();
                prop_assert_eq!(r.is_ok(), priorities && known);
                if r.is_ok() {
                    model.priority[t as usize] = Priority(p);
                }
                r
            }
            Call::Timer => {
                policy.timer_interrupt(now, &mut work);
                Ok(())
            }
            Call::Schedule => {
                let decision = policy.schedule(now, &mut work);
                model.expire(now);
                check_pick(&policy, &model, &decision)?;
                if budgets {
                    // Replenishment and depletion timers come on top of the activations.
                    if let Some(wake) = model.next_timeout() {
                        prop_assert!(decision.timer.is_some_and(|t| t <= wake));
                    }
                } else {
                    prop_assert_eq!(decision.timer, model.next_timeout());
                }
                if let Some(at) = decision.timer {
                    prop_assert!(at > now, "no timer in the past after schedule");
                }
                Ok(())
            }
            Call::Advance(d) => {
                now = now.saturating_add(Duration::from_nanos(d as u64));
                Ok(())
            }
        };
        if result.is_err() {
            prop_assert_eq!(
                format!("{policy:?}"),
                before,
                "a refused call changed nothing"
            );
        }
        prop_assert_eq!(policy.check_invariants(), Ok(()));
    }
    Ok(())
}

fn fresh_model(priority: &[u8]) -> Model {
    Model {
        state: vec![State::Blocked; priority.len()],
        deadline: vec![Instant::NEVER; priority.len()],
        priority: priority.iter().map(|p| Priority(*p)).collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Fixed priority always runs a ready task of the highest ready priority.
    #[test]
    fn fixed_priority_runs_a_highest_priority_ready_task(
        priority in proptest::collection::vec(0u8..6, TASKS as usize),
        calls in proptest::collection::vec(call(), 0..120),
    ) {
        let mut policy = FixedPriority::with_capacity(TASKS as usize);
        for (t, p) in priority.iter().enumerate() {
            policy.add_task(TaskId(t as u32), Priority(*p)).unwrap();
        }
        prop_assert_eq!(policy.add_task(TaskId(0), Priority(1)), Err(CoreError::AlreadyAdded));
        prop_assert_eq!(policy.add_task(TaskId(TASKS), Priority(1)), Err(CoreError::UnknownTask));
        drive(policy, fresh_model(&priority), calls, |_, model, decision| {
            let best = model.ready().map(|t| model.priority[t]).max();
            match decision.next {
                None => prop_assert_eq!(best, None),
                Some(t) => {
                    prop_assert_eq!(model.state[t.index()], State::Ready);
                    prop_assert_eq!(Some(model.priority[t.index()]), best);
                }
            }
            Ok(())
        }, false, true)?;
    }

    /// EDF always runs a ready task with the earliest deadline.
    #[test]
    fn edf_runs_an_earliest_deadline_ready_task(
        calls in proptest::collection::vec(call(), 0..120),
    ) {
        let mut policy = Edf::with_capacity(TASKS as usize);
        for t in 0..TASKS {
            policy.add_task(TaskId(t)).unwrap();
        }
        drive(policy, fresh_model(&[0; TASKS as usize]), calls, |_, model, decision| {
            let best = model.ready().map(|t| model.deadline[t]).min();
            match decision.next {
                None => prop_assert_eq!(best, None),
                Some(t) => {
                    prop_assert_eq!(model.state[t.index()], State::Ready);
                    prop_assert_eq!(Some(model.deadline[t.index()]), best);
                }
            }
            Ok(())
        }, false, false)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The deferrable server under random calls: no panic, invariants after every call,
    /// refused calls change nothing, and it always runs a ready task of the highest priority
    /// among the ready tasks with budget left.
    #[test]
    fn deferrable_server_runs_a_highest_priority_task_with_budget(
        priority in proptest::collection::vec(0u8..6, TASKS as usize),
        budget in proptest::collection::vec((1u64..300, 1u64..300), TASKS as usize),
        calls in proptest::collection::vec(call(), 0..120),
    ) {
        let mut policy = DeferrableServer::with_capacity(TASKS as usize);
        for (t, (p, (b, extra))) in priority.iter().zip(&budget).enumerate() {
            let r = Reservation::new(Duration::from_nanos(*b), Duration::from_nanos(b + extra));
            policy.add_task(TaskId(t as u32), Priority(*p), r).unwrap();
        }
        drive(policy, fresh_model(&priority), calls, |ds, model, decision| {
            let has_budget = |t: usize| ds.remaining(TaskId(t as u32)).is_some_and(|r| !r.is_zero());
            let best = model.ready().filter(|t| has_budget(*t)).map(|t| model.priority[t]).max();
            match decision.next {
                None => prop_assert_eq!(best, None),
                Some(t) => {
                    prop_assert_eq!(model.state[t.index()], State::Ready);
                    prop_assert!(has_budget(t.index()));
                    prop_assert_eq!(Some(model.priority[t.index()]), best);
                }
            }
            Ok(())
        }, true, false)?;
    }
}

/// A preempted task resumes before its equal-priority peers (it stays at the head of its list),
/// and a task that wakes joins the tail.
#[test]
fn fixed_priority_is_fifo_within_a_priority() {
    let mut fp = FixedPriority::with_capacity(3);
    let mut w = Work::default();
    for t in 0..3 {
        fp.add_task(TaskId(t), Priority(if t == 2 { 9 } else { 4 }))
            .unwrap();
    }
    let job = Wake::NextJob {
        deadline: Instant::NEVER,
    };
    let t0 = Instant::ZERO;
    fp.activate(t0, TaskId(0), job, &mut w).unwrap();
    fp.activate(t0, TaskId(1), job, &mut w).unwrap();
    assert_eq!(fp.schedule(t0, &mut w).next, Some(TaskId(0)));
    fp.activate(t0, TaskId(2), job, &mut w).unwrap();
    assert_eq!(fp.schedule(t0, &mut w).next, Some(TaskId(2)), "preempts");
    fp.block(t0, TaskId(2), &mut w).unwrap();
    assert_eq!(
        fp.schedule(t0, &mut w).next,
        Some(TaskId(0)),
        "the preempted task resumes first"
    );
    let later = Instant::from_nanos(10);
    fp.sleep(t0, TaskId(0), later, job, &mut w).unwrap();
    assert_eq!(
        fp.schedule(t0, &mut w),
        Decision {
            next: Some(TaskId(1)),
            timer: Some(later)
        }
    );
    assert_eq!(
        fp.schedule(later, &mut w).next,
        Some(TaskId(1)),
        "the woken task joins the tail"
    );
}
