//! AMC-rtb's bounds (`bulwark_analysis::amc`, what `bulwark analyze` gives a fixed-priority
//! cluster with high-criticality reservations: on one core AMC-rtb, on more its argument on
//! Bertogna and Cirinei's analysis) against the machine running Vestal's mode switch: random
//! clusters of one to three cores whose tasks each release a job per period
//! of their reservation, with the job's work drawn up to the budget (`e^H` for a
//! high-criticality task, so some jobs overrun `e^L` and switch the cluster to high mode).
//! Each job is one reservation job, released with its replenishment, so it completes within
//! its reservation's bound: a high-criticality job within `R^*` always, a low-criticality one
//! within `R^L` when the cluster stayed in low mode from its release to its completion. Some
//! clusters also hold a time partition on core 0, busy for ever, whose slot of every 50 ms
//! the reservations work around (on one core AMC-rtb on the supply the slot leaves, on more
//! the partition one more interfering entity). A low-criticality task sits in an SPR server
//! in half the draws: on more cores its workload reaches `R + e` back; on one core AMC-rtb
//! takes no server, so such a draw is left out.

use bulwark_analysis::cluster::{self, ClusterVerdict};
use bulwark_core::reservation::clustered::Mode;
use bulwark_core::Instant;
use bulwark_sim::{Kept, Options};
use proptest::prelude::*;

/// One task: `(priority, period ms, low budget us, extra high budget us or none, offset ms,
/// an SPR server when of low criticality)`.
type Shape = (u8, u64, u64, Option<u64>, u64, bool);

/// A partition's slot `[start, start + length)` ms of a 50 ms cycle.
type Slot = (u64, u64);

fn scenario_text(cores: u16, shapes: &[Shape], slot: Option<Slot>) -> String {
    let cycle = match slot {
        Some(_) => "cycle = \"50ms\"\n",
        None => "",
    };
    let ids: Vec<String> = (0..cores).map(|core| core.to_string()).collect();
    let mut text = format!(
        "name = \"amc\"\npolicy = \"fixed-priority\"\ncores = {cores}\nduration = \"2s\"\n\n\
         [[cluster]]\nname = \"k\"\ncores = [{}]\norder = \"fixed-priority\"\n{cycle}",
        ids.join(", ")
    );
    for (index, &(priority, period, low, extra, offset, server)) in shapes.iter().enumerate() {
        let budget = low + extra.unwrap_or(0);
        let criticality = match (extra, server) {
            (Some(_), _) => format!(", criticality = \"high\", low-budget = \"{low}us\""),
            (None, true) => ", replenishment = \"spr\", replenishments = 2".to_owned(),
            (None, false) => String::new(),
        };
        // Work drawn from a quarter of e^L up to the whole budget.
        let least = (low / 4).max(1);
        text.push_str(&format!(
            "\n[[task]]\nname = \"t{index}\"\ncluster = \"k\"\npriority = {priority}\n\
             offset = \"{offset}ms\"\n\
             reservation = {{ budget = \"{budget}us\", period = \"{period}ms\"{criticality} }}\n\
             script = [{{ loop = \"forever\", body = [{{ run = [\"{least}us\", \"{budget}us\"] }}, \
             {{ sleep-until-next-release = \"{period}ms\" }}] }}]\n"
        ));
    }
    // The partition last, so the reservations' tasks keep their indices.
    if let Some((start, length)) = slot {
        text.push_str(&format!(
            "\n[[task]]\nname = \"partition\"\ncluster = \"k\"\npriority = 200\n\
             reservation = {{ core = 0, slots = [[\"{start}ms\", \"{}ms\"]] }}\n\
             script = [{{ loop = \"forever\", body = [{{ run = \"1s\" }}] }}]\n",
            start + length
        ));
    }
    text
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        1u8..5,
        prop::sample::select(vec![5u64, 10, 20, 25, 40, 50]),
        0u64..1000,
        prop::option::of(0u64..1000),
        0u64..20,
        any::<bool>(),
    )
        .prop_map(|(priority, period, low, extra, offset, server)| {
            // Budgets up to about a third of the period each.
            let scale = period * 1000 / 3000;
            let low = 1 + low * scale / 1000;
            (
                priority,
                period,
                low,
                extra.map(|e| e * scale / 1000),
                offset,
                server,
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_job_outlasts_its_reservations_bound(
        cores in 1u16..4,
        shapes in prop::collection::vec(shape(), 2..6),
        slot in prop::option::of((0u64..40, 1u64..10)),
        seed in any::<u64>(),
    ) {
        prop_assume!(shapes.iter().any(|s| s.3.is_some()));
        let text = scenario_text(cores, &shapes, slot);
        let scenario = bulwark_spec::parse(&text, "amc.toml")
            .unwrap_or_else(|e| panic!("{}\n{text}", e.plain()));
        let analysis = &cluster::analyse(&scenario)[0];
        prop_assume!(matches!(analysis.verdict, ClusterVerdict::AmcSchedulable(_)));
        let options = Options { seed: Some(seed), ..Options::default() };
        let mut kept = Kept::default();
        bulwark_sim::run_recorded(&scenario, &options, &mut kept, &mut |_| {}).expect("runs");
        // The cluster's high-mode intervals, [switch, return).
        let mut high: Vec<(Instant, Instant)> = Vec::new();
        for record in &kept.modes {
            match record.mode {
                Mode::High => high.push((record.at, Instant::NEVER)),
                Mode::Low => {
                    if let Some(last) = high.last_mut() {
                        last.1 = record.at;
                    }
                }
            }
        }
        let mut checked = 0;
        for job in kept.jobs.iter().filter(|j| j.task.index() < shapes.len()) {
            let Some(completion) = job.completion else { continue };
            let member = &analysis.members[job.task.index()];
            let critical = member.low_mode_response.is_some();
            let overlaps_high = high
                .iter()
                .any(|&(start, end)| start < completion && job.release < end);
            if !critical && overlaps_high {
                continue;
            }
            let bound = member.response.and_then(|r| r.bound()).expect("schedulable");
            let response = completion.saturating_duration_since(job.release);
            prop_assert!(
                response <= bound,
                "{} job {} released at {}: response {response} > {bound}\n{text}",
                member.name, job.job, job.release
            );
            checked += 1;
        }
        prop_assert!(checked > 0);
        if std::env::var_os("AMC_STATS").is_some() {
            eprintln!("cores {cores} switches {} jobs checked {checked}", high.len());
        }
    }
}
