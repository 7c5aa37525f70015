//! The cluster analysis's job bounds with SPR servers (`bulwark_analysis::cluster`: on one
//! fixed-priority core a server as a sporadic task, on more its workload reaching `R + e`
//! back) against the machine: random fixed-priority clusters of one to three cores, each
//! member an SPR server or a section III sporadic reservation holding one periodic task. A
//! task needs up to `k` budgets a job (its work drawn from a quarter of that up to all of
//! it) and is released every `k p` or later, so the analysis gives it the bound `(k - 1) p +
//! R`; when it shows the cluster schedulable, no job of a bounded member may take longer.

use bulwark_analysis::cluster;
use bulwark_analysis::global_fp::Response;
use bulwark_sim::{Kept, Options};
use proptest::prelude::*;

/// One member: `(priority, reservation period ms, budget us, budgets a job k, extra spacing
/// ms, offset ms, SPR server with this queue capacity or none)`.
type Shape = (u8, u64, u64, u64, u64, u64, Option<u16>);

fn scenario_text(cores: u16, shapes: &[Shape]) -> String {
    let ids: Vec<String> = (0..cores).map(|core| core.to_string()).collect();
    let mut text = format!(
        "name = \"spr-clusters\"\npolicy = \"fixed-priority\"\ncores = {cores}\n\
         duration = \"2s\"\n\n[[cluster]]\nname = \"k\"\ncores = [{}]\n\
         order = \"fixed-priority\"\n",
        ids.join(", ")
    );
    for (index, &(priority, period, budget, rounds, extra, offset, server)) in
        shapes.iter().enumerate()
    {
        let rule = match server {
            Some(slots) => format!(", replenishment = \"spr\", replenishments = {slots}"),
            None => String::new(),
        };
        let most = budget * rounds;
        let least = (most / 4).max(1);
        let spacing = period * rounds + extra;
        text.push_str(&format!(
            "\n[[task]]\nname = \"t{index}\"\ncluster = \"k\"\npriority = {priority}\n\
             period = \"{spacing}ms\"\noffset = \"{offset}ms\"\n\
             execution = {{ uniform = [\"{least}us\", \"{most}us\"] }}\n\
             reservation = {{ budget = \"{budget}us\", period = \"{period}ms\"{rule} }}\n"
        ));
    }
    text
}

fn shape() -> impl Strategy<Value = Shape> {
    (
        1u8..6,
        prop::sample::select(vec![5u64, 10, 20, 25, 40]),
        1u64..1000,
        1u64..4,
        prop::sample::select(vec![0u64, 0, 3, 10]),
        0u64..20,
        prop::option::of(1u16..5),
    )
        .prop_map(
            |(priority, period, budget, rounds, extra, offset, server)| {
                // Budgets up to about a quarter of the period each.
                let budget = 1 + budget * period / 4;
                (priority, period, budget, rounds, extra, offset, server)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn no_job_outlasts_its_bound(
        cores in 1u16..4,
        shapes in prop::collection::vec(shape(), 2..7),
        seed in any::<u64>(),
    ) {
        prop_assume!(shapes.iter().any(|s| s.6.is_some()));
        let text = scenario_text(cores, &shapes);
        let scenario = bulwark_spec::parse(&text, "spr.toml")
            .unwrap_or_else(|e| panic!("{}\n{text}", e.plain()));
        let analysis = &cluster::analyse(&scenario)[0];
        prop_assume!(analysis.verdict.schedulable() == Some(true));
        let options = Options { seed: Some(seed), ..Options::default() };
        let mut kept = Kept::default();
        bulwark_sim::run_recorded(&scenario, &options, &mut kept, &mut |_| {}).expect("runs");
        let mut checked = 0;
        for job in &kept.jobs {
            let member = &analysis.members[job.task.index()];
            let Some(Response::Bounded(bound)) = member.job_response else { continue };
            let Some(completion) = job.completion else { continue };
            let response = completion.saturating_duration_since(job.release);
            prop_assert!(
                response <= bound,
                "{} job {} released at {}: response {response} > {bound}\n{text}",
                member.name, job.job, job.release
            );
            checked += 1;
        }
        prop_assert!(checked > 0, "no job checked\n{text}");
    }
}

/// The property sees servers' clients bounded on more than one core and with more than one
/// budget a job: a two-core cluster drawn by hand, `s` an SPR server (2 ms per 10 ms, its
/// task 5 ms per 30 ms: k = 3) beside two sporadic reservations, is shown schedulable and
/// bounds `s`'s jobs by 2 p + R.
#[test]
fn a_two_core_server_needing_three_budgets_is_bounded() {
    let shapes = [
        (9, 10, 2000, 3, 0, 0, Some(2)),
        (5, 10, 3000, 1, 0, 0, None),
        (1, 20, 4000, 1, 0, 0, None),
    ];
    let scenario = bulwark_spec::parse(&scenario_text(2, &shapes), "spr.toml").expect("valid");
    let analysis = &cluster::analyse(&scenario)[0];
    assert_eq!(analysis.verdict.schedulable(), Some(true));
    // s is alone above on two cores: R = e = 2 ms, so 2 * 10 + 2 = 22 ms.
    assert_eq!(
        analysis.members[0].job_response,
        Some(Response::Bounded(bulwark_core::Duration::from_millis(22)))
    );
}
