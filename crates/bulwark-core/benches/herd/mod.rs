//! The Thundering Herd set-up shared by `benches/reservations.rs` and
//! `examples/spr_herd_once.rs`: N attackers depleted with their replenishments due at T, a
//! victim asleep until T, the core idle (prepared untimed).

use bulwark_core::reservation::{DeferrableServer, Reservation, SporadicServer, Spr};
use bulwark_core::{CoreError, Duration, Instant, Policy, Priority, TaskId, Wake, Work};

/// Everyone's budget: attackers run it back to back from 0, so the last one depletes at
/// `4096 * BUDGET`, well before T.
pub const BUDGET: u64 = 10;
/// The period, which is also T: every attacker's replenishment and the victim's wake-up.
pub const T: u64 = 100_000;
/// The replenishment-queue capacity S of the sporadic-rule policies.
pub const S: u16 = 8;

pub const JOB: Wake = Wake::NextJob {
    deadline: Instant::NEVER,
};

/// The policies' (inherent) configuration call, so one driver serves all of them.
pub trait AddTask: Policy + Clone {
    fn add(&mut self, task: TaskId, priority: Priority, r: Reservation) -> Result<(), CoreError>;
}

impl AddTask for DeferrableServer {
    fn add(&mut self, task: TaskId, priority: Priority, r: Reservation) -> Result<(), CoreError> {
        self.add_task(task, priority, r)
    }
}

impl AddTask for SporadicServer {
    fn add(&mut self, task: TaskId, priority: Priority, r: Reservation) -> Result<(), CoreError> {
        self.add_task(task, priority, r)
    }
}

impl AddTask for Spr {
    fn add(&mut self, task: TaskId, priority: Priority, r: Reservation) -> Result<(), CoreError> {
        self.add_task(task, priority, r)
    }
}

/// The Thundering Herd just before T: attackers `0..n` (priority 1) depleted with their
/// replenishments due at T, the victim `n` (priority 9) asleep until T, the core idle.
pub fn herd<P: AddTask>(n: u32, with_capacity: impl FnOnce(usize) -> P) -> P {
    let victim = TaskId(n);
    let r = Reservation::new(Duration::from_nanos(BUDGET), Duration::from_nanos(T))
        .with_replenishments(S);
    let mut policy = with_capacity(n as usize + 1);
    for t in 0..n {
        policy.add(TaskId(t), Priority(1), r).expect("attacker");
    }
    policy.add(victim, Priority(9), r).expect("victim");
    let mut w = Work::default();
    policy
        .sleep(Instant::ZERO, victim, Instant::from_nanos(T), JOB, &mut w)
        .expect("victim sleeps");
    for t in 0..n {
        policy
            .activate(Instant::ZERO, TaskId(t), JOB, &mut w)
            .expect("attacker activates");
    }
    // Each attacker runs its whole budget in turn and depletes; the last leaves the core idle.
    let mut now = 0;
    let mut next = policy.schedule(Instant::ZERO, &mut w).next;
    while next.is_some() {
        now += BUDGET;
        assert!(now < T, "the attackers deplete before T");
        next = policy.schedule(Instant::from_nanos(now), &mut w).next;
    }
    policy.check_invariants().expect("invariants before T");
    policy
}
