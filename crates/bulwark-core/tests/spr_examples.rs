//! The SPR paper's worked examples, driven call by call as a kernel would, with every expected
//! value derived by hand from the paper's algorithms (the derivations are in the comments).

use bulwark_core::reservation::{
    DeferrableServer, ReplenishmentRule, Reservation, SporadicServer, Spr,
};
use bulwark_core::{Decision, Duration, Instant, Policy, Priority, TaskId, Wake, Work};

fn at(n: u64) -> Instant {
    Instant::from_nanos(n)
}

fn d(n: u64) -> Duration {
    Duration::from_nanos(n)
}

const JOB: Wake = Wake::NextJob {
    deadline: Instant::NEVER,
};

fn decision(next: Option<u32>, timer: Option<u64>) -> Decision {
    Decision {
        next: next.map(TaskId),
        timer: timer.map(at),
    }
}

fn entries(spr: &Spr, task: u32) -> Vec<(u64, u64)> {
    spr.replenishments(TaskId(task))
        .unwrap()
        .iter()
        .map(|r| (r.at.as_nanos(), r.amount.as_nanos()))
        .collect()
}

const HI: TaskId = TaskId(0);
const MID: TaskId = TaskId(1);

/// Table I's tau_hi (p 30, b 10) and tau_mid (p 40, b 20), times in units of 1 ns.
fn table_i() -> Spr {
    let mut spr = Spr::with_capacity(2, ReplenishmentRule::Sporadic);
    spr.add_task(HI, Priority(3), Reservation::new(d(10), d(30)))
        .unwrap();
    spr.add_task(MID, Priority(2), Reservation::new(d(20), d(40)))
        .unwrap();
    spr
}

/// Fig. 3, early replenishment. tau_mid first runs [10, 20) and sleeps to 40, so its queue is
/// (10, 10), (50, 10) (Algorithm 1, lines 10-13). Dispatched at 40 with 10 left, its budget
/// would run out at 50 exactly when the next 10 arrive: Algorithm 2 counts them, so the timer
/// is at 60 and no interrupt happens at 50. What it used in [50, 60) comes back at
/// 50 + 40 = 90. At 80 it is replenished and dispatched; the entry due at 90 is counted early
/// again (depletion 100), but tau_hi's release at 90 preempts it: the early budget is only
/// used from 100, when it would have arrived anyway.
#[test]
fn fig_3_early_replenishment() {
    let mut spr = table_i();
    let mut w = Work::default();
    spr.sleep(at(0), HI, at(30), JOB, &mut w).unwrap();
    spr.sleep(at(0), MID, at(10), JOB, &mut w).unwrap();
    assert_eq!(spr.schedule(at(0), &mut w), decision(None, Some(10)));

    // 10: mid activates (Algorithm 3: t_head <- 10); depletion 30, hi's timeout at 30.
    assert_eq!(spr.schedule(at(10), &mut w), decision(Some(1), Some(30)));
    // 20: mid sleeps until 40 with 10 used: split into (10, 10) and (50, 10).
    spr.sleep(at(20), MID, at(40), JOB, &mut w).unwrap();
    assert_eq!(entries(&spr, 1), [(10, 10), (50, 10)]);
    assert_eq!(spr.schedule(at(20), &mut w), decision(None, Some(30)));

    // 30: hi activates and runs its whole budget to 40.
    assert_eq!(spr.schedule(at(30), &mut w), decision(Some(0), Some(40)));
    // 40: hi sleeps until 60, depleted: its queue is (60, 10), so no premature timer.
    spr.sleep(at(40), HI, at(60), JOB, &mut w).unwrap();
    // mid's wake-up at 40 is processed: head restarted at 40; depletion 40 + 10 = 50 >= 50,
    // so the (50, 10) entry is replenished early: depletion 60, which is hi's timeout too.
    assert_eq!(spr.schedule(at(40), &mut w), decision(Some(1), Some(60)));
    assert_eq!(entries(&spr, 1), [(40, 10), (50, 10)]);

    // 60: mid has used 20: (40, 10) -> (80, 10) and (50, 10) -> (90, 10); it is depleted.
    // hi's wake-up is processed and it runs to 70.
    assert_eq!(spr.schedule(at(60), &mut w), decision(Some(0), Some(70)));
    assert_eq!(entries(&spr, 1), [(80, 10), (90, 10)]);
    // 70: hi sleeps until 90 (its queue is (90, 10)); nothing is due, mid waits for 80.
    spr.sleep(at(70), HI, at(90), JOB, &mut w).unwrap();
    assert_eq!(spr.schedule(at(70), &mut w), decision(None, Some(80)));

    // 80: mid's replenishment. Only 10 has arrived, but the entry due at 90 will have by the
    // time those run out: depletion 100. hi's release at 90 comes first.
    assert_eq!(spr.schedule(at(80), &mut w), decision(Some(1), Some(90)));
    assert_eq!(spr.remaining(MID, at(80)), Some(d(10)));
    // 90: hi preempts. mid used 10: (80, 10) -> (120, 10); its head (90, 10) is due.
    assert_eq!(spr.schedule(at(90), &mut w), decision(Some(0), Some(100)));
    assert_eq!(entries(&spr, 1), [(90, 10), (120, 10)]);
    spr.sleep(at(100), HI, at(120), JOB, &mut w).unwrap();
    // 100: mid resumes with the budget that arrived at 90; it lasts to 110.
    assert_eq!(spr.schedule(at(100), &mut w), decision(Some(1), Some(110)));
    spr.check_invariants().unwrap();
}

/// Fig. 8c through the policy: three replenishments expire while the task is suspended;
/// its activation merges them into one head (Algorithm 3, lines 1-3) restarted at the
/// wake-up time it asked for (line 5).
#[test]
fn fig_8c_activation_merges_expired_replenishments() {
    let mut spr = Spr::with_capacity(1, ReplenishmentRule::Sporadic);
    let r = Reservation::new(d(30), d(100)).with_replenishments(4);
    spr.add_task(TaskId(0), Priority(1), r).unwrap();
    let mut w = Work::default();
    spr.activate(at(0), TaskId(0), JOB, &mut w).unwrap();
    spr.schedule(at(0), &mut w);
    // Three runs of 10 separated by sleeps. At 10 the 10 used are split off: (0, 20),
    // (100, 10). Waking at 20 restarts the head: (20, 20); at 30 another split: (20, 10),
    // (100, 10), (120, 10). Waking at 40 restarts the head at 40; at 50 it is used up and
    // planned at 140 (Fig. 8b); the new head (100, 10) is not due, so the task sleeps
    // depleted (its wake-up at 500 is later than 100 anyway).
    spr.sleep(at(10), TaskId(0), at(20), JOB, &mut w).unwrap();
    spr.schedule(at(10), &mut w);
    spr.schedule(at(20), &mut w);
    spr.sleep(at(30), TaskId(0), at(40), JOB, &mut w).unwrap();
    spr.schedule(at(30), &mut w);
    spr.schedule(at(40), &mut w);
    spr.sleep(at(50), TaskId(0), at(500), JOB, &mut w).unwrap();
    assert_eq!(spr.schedule(at(50), &mut w), decision(None, Some(500)));
    assert_eq!(entries(&spr, 0), [(100, 10), (120, 10), (140, 10)]);
    // Wake at 500: everything expired merges into one head of 30 at 500.
    assert_eq!(spr.schedule(at(500), &mut w), decision(Some(0), Some(530)));
    assert_eq!(entries(&spr, 0), [(500, 30)]);
    spr.check_invariants().unwrap();
}

/// Section III-E and attack A1: N lower-priority tasks are depleted with replenishments due
/// at the instant the victim's wake-up is. SPR processes the victim's timeout alone; the
/// naive deferrable and sporadic servers process all N + 1.
#[test]
fn one_timeout_per_invocation_however_many_expire() {
    for n in [1u32, 16, 1024] {
        let victim = TaskId(n);
        // Attackers run back to back (10 each) well within one period, so every one of their
        // replenishments is due at P, the victim's wake-up.
        const P: u64 = 100_000;
        let r = Reservation::new(d(10), d(P));
        let mut spr = Spr::with_capacity(n as usize + 1, ReplenishmentRule::Deferrable);
        let mut ds = DeferrableServer::with_capacity(n as usize + 1);
        let mut ss = SporadicServer::with_capacity(n as usize + 1);
        for t in 0..n {
            spr.add_task(TaskId(t), Priority(1), r).unwrap();
            ds.add_task(TaskId(t), Priority(1), r).unwrap();
            ss.add_task(TaskId(t), Priority(1), r).unwrap();
        }
        spr.add_task(victim, Priority(9), r).unwrap();
        ds.add_task(victim, Priority(9), r).unwrap();
        ss.add_task(victim, Priority(9), r).unwrap();
        let policies: [&mut dyn Policy; 3] = [&mut spr, &mut ds, &mut ss];
        let mut processed = Vec::new();
        for policy in policies {
            let mut w = Work::default();
            // Every attacker runs its budget in turn and depletes; the victim sleeps to P.
            policy.sleep(at(0), victim, at(P), JOB, &mut w).unwrap();
            for t in 0..n {
                policy.activate(at(0), TaskId(t), JOB, &mut w).unwrap();
            }
            let mut now = 0;
            let mut next = policy.schedule(at(0), &mut w).next;
            while next.is_some() {
                assert!(now < P, "attackers deplete before P");
                now += 10;
                next = policy.schedule(at(now), &mut w).next;
            }
            policy.check_invariants().unwrap();
            let mut w = Work::default();
            let d = policy.schedule(at(P), &mut w);
            assert_eq!(d.next, Some(victim), "{} runs the victim", policy.name());
            processed.push(w.timeouts_processed);
            if policy.name() == "spr-deferrable" {
                assert!(w.reservations_touched <= 2, "{w:?}");
            }
        }
        assert_eq!(processed[0], 1, "SPR: the victim's timeout only");
        assert!(processed[1] > n, "naive DS: {} for n = {n}", processed[1]);
        assert!(processed[2] > n, "naive SS: {} for n = {n}", processed[2]);
    }
}

/// The notices an MC-IPC gate acts on, under SPR's two rules and the eager deferrable and
/// sporadic servers: a task with b 2, p 5 that keeps running from 0. Its budget runs out at 2
/// (the timer the decision at 0 set): the decision at 2 reports the exhaustion and idles.
/// Every rule brings the budget back at 5 (sporadic: the 2 used from the activation at 0
/// return at 0 + 5; deferrable: the period boundary), so the decision at 5 reports the
/// replenishment and dispatches it. Nothing else is reported.
#[test]
fn exhaustion_and_replenishment_are_noticed_when_they_happen() {
    use bulwark_core::{Notice, Notices};
    let reservation = Reservation::new(d(2), d(5));
    let mut policies: Vec<Box<dyn Policy>> = Vec::new();
    for rule in [ReplenishmentRule::Sporadic, ReplenishmentRule::Deferrable] {
        let mut spr = Spr::with_capacity(1, rule);
        spr.add_task(HI, Priority(1), reservation).unwrap();
        policies.push(Box::new(spr));
    }
    let mut ds = DeferrableServer::with_capacity(1);
    ds.add_task(HI, Priority(1), reservation).unwrap();
    policies.push(Box::new(ds));
    let mut ss = SporadicServer::with_capacity(1);
    ss.add_task(HI, Priority(1), reservation).unwrap();
    policies.push(Box::new(ss));
    for mut policy in policies {
        let name = policy.name();
        policy
            .activate(at(0), HI, JOB, &mut Work::default())
            .unwrap();
        let mut notices = Notices::with_capacity(policy.notice_capacity());
        let mut decide = |now: u64| {
            notices.clear();
            let decision = policy.schedule(at(now), &mut Work::default());
            policy.take_notices(&mut notices);
            (decision, notices.iter().collect::<Vec<Notice>>())
        };
        assert_eq!(decide(0), (decision(Some(0), Some(2)), vec![]), "{name}");
        let (at_2, exhausted) = decide(2);
        assert_eq!(at_2.next, None, "{name}");
        assert_eq!(exhausted, [Notice::BudgetExhausted { task: HI }], "{name}");
        let (at_5, replenished) = decide(5);
        assert_eq!(at_5.next, Some(HI), "{name}");
        assert_eq!(replenished, [Notice::Replenished { task: HI }], "{name}");
    }
}
