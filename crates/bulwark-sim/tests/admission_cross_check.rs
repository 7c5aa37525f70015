//! Eq. 1 against the machine: for random server sets, every server the admission test admits
//! consumes its whole budget in every period when all servers are continuously active (the
//! paper's definition of schedulable, section III-G), under SPR with both replenishment rules
//! and with non-preemptive regions. Costs are zero, as Eq. 1 assumes overheads charged to
//! budgets.

mod common;

use bulwark_analysis::admission::{response_times, Server};
use bulwark_analysis::rbf::ServerKind;
use bulwark_core::reservation::Reservation;
use bulwark_core::{Priority, TaskId};
use bulwark_sim::SliceKind;
use bulwark_spec::{Execution, PolicyKind, Step};
use common::{ms, run_jobs, scenario, script};
use proptest::prelude::*;

/// (priority, budget ms, period ms, eta ms)
fn server() -> impl Strategy<Value = (u8, u64, u64, u64)> {
    (0u8..5, 1u64..8, 0u64..30, 0u64..4).prop_map(|(pr, b, extra, eta)| (pr, b, b + extra, eta))
}

fn check(policy: PolicyKind, servers: &[(u8, u64, u64, u64)]) -> Result<(), TestCaseError> {
    let kind = match policy {
        PolicyKind::SprDeferrable => ServerKind::Deferrable,
        _ => ServerKind::Sporadic,
    };
    let reservations: Vec<Reservation> = servers
        .iter()
        .map(|&(_, b, p, eta)| Reservation::new(ms(b), ms(p)).with_non_preemptive(ms(eta)))
        .collect();
    let analysed: Vec<Server> = servers
        .iter()
        .zip(&reservations)
        .enumerate()
        .map(|(i, (s, r))| Server::new(format!("s{i}"), Priority(s.0), *r, kind))
        .collect();
    let verdicts = response_times(&analysed);
    let horizon = 4 * servers.iter().map(|s| s.2).max().unwrap_or(1);
    let tasks = servers
        .iter()
        .zip(&reservations)
        .enumerate()
        .map(|(i, (s, r))| {
            // Continuously active: one job that never ends within the run.
            let mut t = script(
                &format!("s{i}"),
                0,
                Some(s.0),
                None,
                vec![Step::Run(Execution::Fixed(ms(10 * horizon)))],
            );
            t.reservation = Some(*r);
            t
        })
        .collect();
    let o = run_jobs(&scenario(policy, 1, ms(horizon), tasks));
    let trace = o.trace.as_ref().unwrap();
    for (i, v) in verdicts.iter().enumerate() {
        if !v.admitted() {
            continue;
        }
        let p = servers[i].2 * 1_000_000;
        let b = servers[i].1 * 1_000_000;
        for k in 0..horizon * 1_000_000 / p {
            let (from, to) = (k * p, k * p + p);
            let used: u64 = trace
                .slices
                .iter()
                .filter(|s| s.task == Some(TaskId(i as u32)) && s.kind == SliceKind::Task)
                .map(|s| {
                    s.end
                        .as_nanos()
                        .min(to)
                        .saturating_sub(s.start.as_nanos().max(from))
                })
                .sum();
            prop_assert_eq!(
                used,
                b,
                "{:?}: server {} (R = {}) used {} ns of {} in period {}",
                policy,
                i,
                v.response,
                used,
                b,
                k
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn admitted_sporadic_rule_servers_get_their_budget_every_period(
        servers in proptest::collection::vec(server(), 1..6)
    ) {
        check(PolicyKind::Spr, &servers)?;
    }

    #[test]
    fn admitted_deferrable_rule_servers_get_their_budget_every_period(
        servers in proptest::collection::vec(server(), 1..6)
    ) {
        check(PolicyKind::SprDeferrable, &servers)?;
    }
}
