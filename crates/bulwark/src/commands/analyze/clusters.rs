//! Scenarios with clusters (`[[cluster]]`): the partitioned cores analysed as without
//! clusters, and each cluster by [`bulwark_analysis::cluster`].

use std::process::ExitCode;

use bulwark_analysis::bandwidth::{Admission, Bandwidth};
use bulwark_analysis::cluster::{
    self, ClusterAnalysis, ClusterVerdict, Criticality, FixedPriorityRta, MemberReservation,
    SupplyTest,
};
use bulwark_analysis::fit::Fit;
use bulwark_analysis::global_edf::Gfb;
use bulwark_analysis::global_fp::Response;
use bulwark_analysis::slot_supply::EdfOnSupply;
use bulwark_core::Duration;
use bulwark_spec::{Replenishment, Scenario, SporadicOrder};
use serde_json::{json, Value};

use super::super::uncounted::kernel_costs;
use crate::cli::AnalyzeArgs;
use crate::output::{capture, out, outln};
use crate::table;

/// Text: the partitioned cores' analysis as without clusters, then a section per
/// cluster. JSON: the same document with a `clusters` array added (a document of just
/// `scenario`, `policy` and `clusters` when no task is partitioned). Exit: 2 if a part
/// could not be analysed (as for mixed scenarios), else 1 if a part admits not
/// everything, Goossens, Funk and Baruah's test does not show an EDF cluster schedulable or
/// Bertogna and Cirinei's response-time analysis (AMC-rtb on one core with high-criticality
/// reservations, or a test against the slots' supply on one core with time partitions)
/// does not show a fixed-priority one, else 2 if a cluster is not analysed (a time partition
/// on more cores, a high-criticality reservation under EDF order or on more cores or,
/// under fixed priority, an SPR server: no verdict, as the classic analysis gives for a task
/// it cannot analyse), else 0.
pub(super) fn clustered(scenario: &Scenario, args: &AnalyzeArgs) -> Result<ExitCode, String> {
    let analyses = cluster::analyse(scenario);
    let parts = scenario.parts_by_policy();
    let per_core = || -> Result<Option<ExitCode>, String> {
        match parts.as_slice() {
            [] => Ok(None),
            [part] if part.tasks.is_empty() => Ok(None),
            [part] => super::analyse_scenario(part, args).map(Some),
            _ => super::mixed(scenario, &parts, args).map(Some),
        }
    };
    let per_core = if args.json {
        let (text, code) = capture(per_core);
        let code = code?;
        let mut document = serde_json::from_str::<Value>(&text)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(
                || json!({ "scenario": scenario.name, "policy": scenario.policy_label() }),
            );
        document["clusters"] = analyses
            .iter()
            .map(|analysis| {
                let mut value = to_json(analysis);
                value["costs_not_in_bounds"] = json!(kernel_costs(&scenario.cost));
                value["gate_waits_not_in_bounds"] = json!(gate_waits(scenario, analysis));
                value
            })
            .collect();
        outln!("{document:#}");
        code
    } else {
        let code = per_core()?;
        if code.is_none() {
            outln!(
                "{} ({}): no task is partitioned outside the clusters",
                scenario.name,
                scenario.policy_label()
            );
        }
        for analysis in &analyses {
            out!("\n{}", to_text(analysis));
            out!("{}", notes(scenario, analysis));
        }
        // The per-core summary above speaks of the partitioned cores only.
        let each: Vec<String> = analyses
            .iter()
            .map(|a| format!("{} {}", a.name, verdict_text(&a.verdict)))
            .collect();
        outln!("\nclusters: {}", each.join("; "));
        code
    };
    for analysis in &analyses {
        if let Some(reason) = analysis.verdict.reason() {
            eprintln!("cluster `{}`: not analysed: {reason}", analysis.name);
        }
    }
    let verdicts: Vec<Option<bool>> = analyses.iter().map(|a| a.verdict.schedulable()).collect();
    Ok(match per_core {
        Some(code) if code == crate::exit::bad_input() => code,
        Some(code) if code == ExitCode::FAILURE => code,
        _ if verdicts.contains(&Some(false)) => ExitCode::FAILURE,
        _ if verdicts.contains(&None) => crate::exit::bad_input(),
        _ => ExitCode::SUCCESS,
    })
}

/// The cluster's members that invoke servers and whose fit is not carried: the test has no
/// term for their waits at a gate (see [`super::super::uncounted::gate_waits`]); a carried
/// fit counts what their calls drain from the budget.
fn gate_waits<'s>(scenario: &'s Scenario, analysis: &ClusterAnalysis) -> Vec<&'s str> {
    super::super::uncounted::gate_waits(scenario)
        .into_iter()
        .filter(|name| (analysis.members.iter()).any(|m| m.name == *name && m.fit != Fit::Carried))
        .collect()
}

/// The kernel costs and gate waits the cluster's figures leave out, as notes.
fn notes(scenario: &Scenario, analysis: &ClusterAnalysis) -> String {
    let costs = kernel_costs(&scenario.cost);
    super::super::uncounted::note(&costs)
        + &super::super::uncounted::gate_note(&gate_waits(scenario, analysis))
}

fn order_name(order: SporadicOrder) -> &'static str {
    match order {
        SporadicOrder::EarliestDeadlineFirst => "edf",
        SporadicOrder::FixedPriority => "fixed-priority",
    }
}

/// How a member's reservation is replenished; a partition's is its table.
fn rule_name(reservation: &MemberReservation) -> String {
    match reservation {
        MemberReservation::Sporadic { replenishment, .. } => replenishment_name(*replenishment),
        MemberReservation::Partition { .. } => "time partition".to_owned(),
        MemberReservation::BestEffort => "best-effort".to_owned(),
        MemberReservation::Shared { .. } => "shared".to_owned(),
    }
}

fn replenishment_name(rule: Replenishment) -> String {
    match rule {
        Replenishment::Sporadic => "sporadic".to_owned(),
        Replenishment::ConstantBandwidth => "cbs".to_owned(),
        Replenishment::Spr { slots } => format!("spr ({slots} slots)"),
    }
}

fn fraction(value: Bandwidth) -> String {
    format!("{}/{}", value.numerator, value.denominator)
}

/// `U` as `n/d = x`, `at most` when the exact sum did not fit (see [`Admission`]).
fn total_text(total: &Admission) -> String {
    format!(
        "{}{} = {:.4}",
        if total.exact { "" } else { "at most " },
        fraction(total.total),
        total.total.as_f64()
    )
}

/// The verdict and why, in a sentence; with worst-case reservations, what that means for
/// each criticality after it.
fn why(analysis: &ClusterAnalysis) -> String {
    let verdict = verdict_sentence(analysis);
    if analysis.criticality() == Some(Criticality::WorstCaseReservations) {
        format!("{verdict}. {WORST_CASE_RESERVATIONS}")
    } else {
        verdict
    }
}

/// How a test that gives the mode switch no credit reads a cluster with high-criticality
/// reservations.
const WORST_CASE_RESERVATIONS: &str = "Vestal's mode switch is given no credit (worst-case \
     reservations): every high-criticality reservation counts at its e^H in both modes. The \
     switch only demotes low-criticality reservations below every other one, so the verdict \
     holds for a high-criticality reservation in either mode and for a low-criticality one in \
     low mode only";

fn verdict_sentence(analysis: &ClusterAnalysis) -> String {
    let cores = analysis.cores.len();
    let total = total_text(&analysis.bandwidth);
    match &analysis.verdict {
        ClusterVerdict::Schedulable(test) => format!(
            "{}: U = {total} <= {}: every reservation gets its budget e within p of each \
             replenishment",
            gfb_intro(cores),
            bound_text(test, cores)
        ),
        ClusterVerdict::NotShownSchedulable(test) => format!(
            "{}: U = {total} > {}: NOT shown schedulable (the test is sufficient only)",
            gfb_intro(cores),
            bound_text(test, cores)
        ),
        ClusterVerdict::BclSchedulable(_) => format!(
            "{}{}{}, U = {total}: the condition holds for every reservation: every reservation \
             gets its budget e within p of each replenishment",
            bcl_intro(cores),
            masks_text(&analysis.masks),
            partitions_text(analysis)
        ),
        ClusterVerdict::BclNotShownSchedulable(test) => format!(
            "{}{}{}, U = {total}: {}: NOT shown schedulable (the test is sufficient only)",
            bcl_intro(cores),
            masks_text(&analysis.masks),
            partitions_text(analysis),
            match test.failing.and_then(|k| bcl_member(analysis, k)) {
                Some(name) => format!("the condition fails for `{name}`"),
                None => "the condition fails".to_owned(),
            }
        ),
        ClusterVerdict::RtaSchedulable(_) => format!(
            "{}{}, U = {total}: every R <= p: every reservation gets its budget e within p of \
             each replenishment",
            rta_intro(analysis),
            partitions_text(analysis),
        ),
        ClusterVerdict::RtaNotShownSchedulable(rta) => format!(
            "{}{}, U = {total}: {}: NOT shown schedulable (the test is sufficient only)",
            rta_intro(analysis),
            partitions_text(analysis),
            failure_text(analysis, rta)
        ),
        ClusterVerdict::AmcSchedulable(_) => format!(
            "{}, U = {total}: every R^L <= p and every high-criticality R^* <= p: while every \
             job stays within e^L every reservation gets its budget within p of each \
             replenishment, and a high-criticality one always does",
            amc_intro(analysis)
        ),
        ClusterVerdict::SupplySchedulable(test) => format!(
            "{}, U = {total}: {}: every reservation gets its budget e within p of each \
             replenishment (a partition runs in its slots)",
            supply_intro(test, has_spr_server(analysis)),
            match test.rta {
                Some(_) => "every R <= p",
                None => "every deadline's demand within the supply",
            }
        ),
        ClusterVerdict::SupplyNotShownSchedulable(test) => format!(
            "{}, U = {total}: {}: NOT shown schedulable (the test is sufficient only)",
            supply_intro(test, has_spr_server(analysis)),
            match (&test.rta, test.edf) {
                (Some(rta), _) => failure_text(analysis, rta),
                (None, Some(EdfOnSupply::DemandExceeds { at, demand, supply })) => format!(
                    "the demand with deadlines up to {at} is {demand} > sbf({at}) = {supply}"
                ),
                (None, _) => format!(
                    "U > (H - B) / H = {} / {}: the demand passes the supply in the long run",
                    test.free_per_cycle, test.cycle
                ),
            }
        ),
        ClusterVerdict::AmcNotShownSchedulable(rta) => format!(
            "{}, U = {total}: {}: NOT shown schedulable (the test is sufficient only)",
            amc_intro(analysis),
            failure_text(analysis, rta)
        ),
        ClusterVerdict::NotAnalysed(reason) => format!(
            "global {} over {cores} core(s), U = {total}: not analysed: {reason}",
            match analysis.order {
                SporadicOrder::FixedPriority => "fixed priority",
                SporadicOrder::EarliestDeadlineFirst => "EDF",
            }
        ),
    }
}

fn gfb_intro(cores: usize) -> String {
    format!(
        "global EDF over {cores} core(s), the reservations taken as implicit-deadline \
         sporadic tasks (e, p); Goossens, Funk and Baruah's test U <= m - (m - 1) U_max"
    )
}

fn bcl_intro(cores: usize) -> String {
    format!(
        "global EDF over {cores} core(s), the reservations taken as implicit-deadline \
         sporadic tasks (e, p); Bertogna, Cirinei and Lipari's test sum_i min(W_i(p_k), p_k - \
         e_k + 1) < m (p_k - e_k + 1) (GFB has no term for a masked core or a partition's slots)"
    )
}

/// The name of the `k`-th reservation the test took (the sporadic members, in order).
fn bcl_member(analysis: &ClusterAnalysis, k: usize) -> Option<&str> {
    analysis
        .members
        .iter()
        .filter(|m| m.reservation.is_sporadic())
        .nth(k)
        .map(|m| m.name.as_str())
}

/// The slot-supply test's description in the cluster's sentence.
fn supply_intro(test: &SupplyTest, servers: bool) -> String {
    let masks = if test.masked.is_zero() {
        String::new()
    } else if test.masked == Duration::MAX {
        ", with an unbounded termination's mask added to every window".to_owned()
    } else {
        format!(
            ", with the terminations' masks ({}) added to every window",
            test.masked
        )
    };
    let test_text = match test.rta {
        Some(_) => {
            "fixed priority: R = sbf^-1(e + sum_{hp} ceil(R / p_j) e_j), equal priorities in \
             member order"
        }
        None => "EDF: sum floor(t / p_i) e_i <= sbf(t) at every deadline t",
    };
    format!(
        "one core with time partitions, which leave {} of every {} cycle: the sporadic \
         reservations taken as tasks (e, p) with deadline p against the least supply sbf(t) \
         the slots leave in any window of length t{}; {test_text}{masks}",
        test.free_per_cycle,
        test.cycle,
        if servers { SPR_AS_SPORADIC } else { "" }
    )
}

/// Why an SPR server counts as a sporadic task, as a clause.
const SPR_AS_SPORADIC: &str = " (an SPR server as one too: a sporadic server interferes no \
     more than a sporadic task (e, p), Sprunt, Sha and Lehoczky's theorem)";

/// How an SPR server enters Bertogna and Cirinei's analysis, as a clause.
const SPR_ON_MORE_CORES: &str = " (an SPR server as one whose workload reaches R + e back: \
     its chunks of budget come back p after they became available, so they may start up to \
     its R apart)";

/// Whether a member of the cluster is an SPR server.
fn has_spr_server(analysis: &ClusterAnalysis) -> bool {
    (analysis.members.iter()).any(|m| m.reservation.is_spr_server())
}

/// AMC-rtb's description in the cluster's sentence.
const AMC_INTRO: &str = "fixed priority on one core with Vestal's mode switch, the \
     reservations taken as sporadic tasks (e^L, e^H, p) with deadline p at their tasks' \
     priorities (a low-criticality one's e^L is e; equal priorities in member order); \
     Baruah, Burns and Davis's AMC-rtb: R^L over every e^L, and for a high-criticality \
     reservation R^* over the e^H above it and the low-criticality releases within its R^L \
     (a low-criticality reservation's R is its R^L, a guarantee in low mode only)";

/// AMC-rtb's description with what it counts: on one core the partitions' supply and the
/// masks added to every window, on more its argument on Bertogna and Cirinei's analysis.
fn amc_intro(analysis: &ClusterAnalysis) -> String {
    let cores = analysis.cores.len();
    if cores == 1 {
        return format!(
            "{AMC_INTRO}{}{}",
            amc_supply_text(analysis),
            amc_masks_text(&analysis.masks)
        );
    }
    format!(
        "global fixed priority over {cores} core(s) with Vestal's mode switch, the \
         reservations taken as sporadic tasks (e^L, e^H, p) with deadline p at their tasks' \
         priorities (a low-criticality one's e^L is e; equal priorities in member order){}; \
         AMC-rtb's argument on Bertogna and Cirinei's response-time analysis: R^L over every \
         e^L, and for a high-criticality reservation R^* over the e^H above it and the \
         low-criticality workload within its R^L, the switch coming within R^L (a \
         low-criticality reservation's R is its R^L, a guarantee in low mode only){}{}",
        if has_spr_server(analysis) {
            SPR_ON_MORE_CORES
        } else {
            ""
        },
        partitions_text(analysis),
        masks_text(&analysis.masks)
    )
}

/// The time partitions a test on more cores counts (Bertogna, Cirinei and Lipari's, or
/// Bertogna and Cirinei's response-time analysis), as a clause.
fn partitions_text(analysis: &ClusterAnalysis) -> &'static str {
    if has_partition(analysis) {
        ", with each time partition one more interfering entity, at most its most slot time \
         in a window of the job's length"
    } else {
        ""
    }
}

fn has_partition(analysis: &ClusterAnalysis) -> bool {
    (analysis.members.iter()).any(|m| m.reservation.is_partition())
}

/// Where AMC-rtb's windows get their supply, when time partitions share the core.
fn amc_supply_text(analysis: &ClusterAnalysis) -> &'static str {
    if has_partition(analysis) {
        ", each window served by the least supply sbf(t) the time partitions' slots leave \
         (R = sbf^-1 of its workload; the partitions are neither monitored nor demoted)"
    } else {
        ""
    }
}

/// The masks AMC-rtb counts, as a clause after its name.
fn amc_masks_text(masks: &[Duration]) -> String {
    match masks_list(masks) {
        None => String::new(),
        Some(list) => format!(", with the terminations' masks ({list}) added to every window"),
    }
}

/// The response-time analysis's description, with the masks it counts: on one core the
/// exact uniprocessor analysis, on more Bertogna and Cirinei's.
fn rta_intro(analysis: &ClusterAnalysis) -> String {
    let (cores, masks) = (analysis.cores.len(), &analysis.masks);
    if cores == 1 {
        return format!(
            "fixed priority on one core, the reservations taken as sporadic tasks (e, p) with \
             deadline p at their tasks' priorities (equal priorities in member order, as the \
             scheduler breaks ties){}; the exact response-time analysis R = e + sum_hp \
             ceil(R / p_j) e_j from the critical instant{}",
            if has_spr_server(analysis) {
                SPR_AS_SPORADIC
            } else {
                ""
            },
            amc_masks_text(masks)
        );
    }
    format!(
        "global fixed priority over {cores} core(s), the reservations taken as sporadic tasks \
         (e, p) with deadline p at their tasks' priorities (equal priorities in member order, \
         as the scheduler breaks ties){}; Bertogna and Cirinei's response-time analysis{}",
        if has_spr_server(analysis) {
            SPR_ON_MORE_CORES
        } else {
            ""
        },
        masks_text(masks)
    )
}

/// The masks the response-time analysis counts, as a clause after its name.
fn masks_text(masks: &[Duration]) -> String {
    match masks_list(masks) {
        None => String::new(),
        Some(list) => format!(
            ", with the terminations' masks ({list}) each as interference on one core, \
             min(M, R - C + 1)"
        ),
    }
}

/// The masks as a list, `None` when there are none.
fn masks_list(masks: &[Duration]) -> Option<String> {
    if masks.is_empty() {
        return None;
    }
    let list: Vec<String> = masks
        .iter()
        .map(|&mask| {
            if mask == Duration::MAX {
                "unbounded".to_owned()
            } else {
                mask.to_string()
            }
        })
        .collect();
    Some(list.join(", "))
}

/// Which reservation the response-time analysis could not bound within its period.
fn failure_text(analysis: &ClusterAnalysis, rta: &FixedPriorityRta) -> String {
    match rta.not_shown.map(|i| &analysis.members[i]) {
        Some(member) => match (member.low_mode_response, member.reservation.share()) {
            // AMC-rtb: the high-criticality reservation's low-mode bound failed first.
            (Some(Response::Exceeds(at_least)), (_, period)) => {
                format!("`{}`'s R^L >= {at_least} > p = {period}", member.name)
            }
            _ => response_failure(analysis, member),
        },
        None => "no reservation is bounded (no cores)".to_owned(),
    }
}

/// Which bound of `member` passed its period.
fn response_failure(analysis: &ClusterAnalysis, member: &cluster::Member) -> String {
    match (member.response, member.reservation.share()) {
        (Some(Response::Exceeds(at_least)), (_, period)) => {
            let below = analysis
                .members
                .iter()
                .filter(|m| m.response == Some(Response::NotComputed))
                .count();
            format!(
                "`{}`'s R >= {at_least} > p = {period}{}",
                member.name,
                match below {
                    0 => String::new(),
                    n => format!(" ({n} member(s) below it not computed)"),
                }
            )
        }
        _ => format!("`{}`'s R > p", member.name),
    }
}

/// A member's response-time bound in the table, when the analysis ran.
fn response_cell(response: Option<Response>) -> String {
    match response {
        Some(Response::Bounded(r)) => r.to_string(),
        Some(Response::Exceeds(at_least)) => format!(">= {at_least} > p"),
        Some(Response::NotComputed) => "not computed".to_owned(),
        None => "-".to_owned(),
    }
}

/// A member's response in JSON: `(response_ns, response_verdict)`, both null when the
/// analysis did not run; `response_ns` is the bound, or when it exceeds the period a value
/// the bound is at least.
fn response_json(response: Option<Response>) -> (Value, Value) {
    match response {
        Some(Response::Bounded(r)) => (json!(r.as_nanos()), json!("bounded")),
        Some(Response::Exceeds(at_least)) => (json!(at_least.as_nanos()), json!("exceeds-period")),
        Some(Response::NotComputed) => (Value::Null, json!("not-computed")),
        None => (Value::Null, Value::Null),
    }
}

/// A shared reservation's job bound in JSON: `(job_response_ns, job_response_verdict)`, both
/// null for a task alone in its reservation; `job_response_ns` is the bound, or when it
/// exceeds the deadline (or period, if shorter) a value the bound is at least.
fn job_response_json(response: Option<Response>) -> (Value, Value) {
    match response {
        Some(Response::Exceeds(at_least)) => {
            (json!(at_least.as_nanos()), json!("exceeds-deadline"))
        }
        other => response_json(other),
    }
}

fn bound_text(test: &Gfb, cores: usize) -> String {
    format!(
        "{cores} - {} * {} = {:.4}",
        cores.saturating_sub(1),
        fraction(test.largest),
        test.bound_as_f64()
    )
}

fn verdict_text(verdict: &ClusterVerdict) -> &'static str {
    match verdict {
        ClusterVerdict::Schedulable(_) => "schedulable (GFB)",
        ClusterVerdict::NotShownSchedulable(_) => "NOT shown schedulable (GFB)",
        ClusterVerdict::BclSchedulable(_) => "schedulable (global EDF BCL)",
        ClusterVerdict::BclNotShownSchedulable(_) => "NOT shown schedulable (global EDF BCL)",
        ClusterVerdict::RtaSchedulable(rta) if rta.cores == 1 => "schedulable (FP RTA)",
        ClusterVerdict::RtaNotShownSchedulable(rta) if rta.cores == 1 => {
            "NOT shown schedulable (FP RTA)"
        }
        ClusterVerdict::RtaSchedulable(_) => "schedulable (global FP RTA)",
        ClusterVerdict::RtaNotShownSchedulable(_) => "NOT shown schedulable (global FP RTA)",
        ClusterVerdict::AmcSchedulable(rta) if rta.cores == 1 => "schedulable (AMC-rtb)",
        ClusterVerdict::AmcSchedulable(_) => "schedulable (global AMC-rtb)",
        ClusterVerdict::SupplySchedulable(_) => "schedulable (on the slots' supply)",
        ClusterVerdict::SupplyNotShownSchedulable(_) => {
            "NOT shown schedulable (on the slots' supply)"
        }
        ClusterVerdict::AmcNotShownSchedulable(rta) if rta.cores == 1 => {
            "NOT shown schedulable (AMC-rtb)"
        }
        ClusterVerdict::AmcNotShownSchedulable(_) => "NOT shown schedulable (global AMC-rtb)",
        ClusterVerdict::NotAnalysed(reason) if *reason == cluster::PARTITIONS_NOT_IN_GFB => {
            "not analysed (time partitions)"
        }
        ClusterVerdict::NotAnalysed(reason)
            if *reason == cluster::CONSTANT_BANDWIDTH_UNDER_FIXED_PRIORITY =>
        {
            "not analysed (constant-bandwidth server)"
        }
        ClusterVerdict::NotAnalysed(_) => "not analysed",
    }
}

fn verdict_key(verdict: &ClusterVerdict) -> &'static str {
    match verdict {
        ClusterVerdict::Schedulable(_)
        | ClusterVerdict::BclSchedulable(_)
        | ClusterVerdict::RtaSchedulable(_)
        | ClusterVerdict::AmcSchedulable(_)
        | ClusterVerdict::SupplySchedulable(_) => "schedulable",
        ClusterVerdict::NotShownSchedulable(_)
        | ClusterVerdict::BclNotShownSchedulable(_)
        | ClusterVerdict::RtaNotShownSchedulable(_)
        | ClusterVerdict::AmcNotShownSchedulable(_)
        | ClusterVerdict::SupplyNotShownSchedulable(_) => "not-shown-schedulable",
        ClusterVerdict::NotAnalysed(_) => "not-analysed",
    }
}

fn fit_cell(fit: &Fit) -> &'static str {
    match fit {
        Fit::Carried => "yes",
        Fit::Exceeds(_) => "NO",
        Fit::Unchecked(_) => "not checked",
    }
}

fn to_text(analysis: &ClusterAnalysis) -> String {
    let cores: Vec<String> = analysis.cores.iter().map(u16::to_string).collect();
    let mut text = format!(
        "== cluster {} (cores {}): {} ==\n",
        analysis.name,
        cores.join(", "),
        order_name(analysis.order)
    );
    // The response-time bounds, as a last column, when the analysis ran; AMC-rtb's low-mode
    // bounds of high-criticality reservations before them.
    let responses = analysis.verdict.rta().is_some();
    let low_mode = analysis.verdict.test_name() == Some(cluster::AMC_RTB_TEST);
    // Whether a low-criticality reservation's bounds hold in low mode only.
    let low_mode_only = analysis.criticality().is_some();
    let rows: Vec<Vec<String>> = analysis
        .members
        .iter()
        .map(|m| {
            let (time, period) = m.reservation.share();
            let share = Bandwidth::of(time, period).map_or(0.0, Bandwidth::as_f64);
            // A partition has no (e, p): its core and slots, and the cycle, instead.
            let (e, low, p) = match &m.reservation {
                MemberReservation::Sporadic {
                    reservation,
                    low_budget,
                    ..
                } => (
                    reservation.budget.to_string(),
                    low_budget.map_or("-".to_owned(), |low| low.to_string()),
                    reservation.period.to_string(),
                ),
                MemberReservation::Partition { core, slots, cycle } => (
                    format!("core {core}: {}", slots_text(slots)),
                    "-".to_owned(),
                    format!("cycle {cycle}"),
                ),
                MemberReservation::BestEffort => ("-".to_owned(), "-".to_owned(), "-".to_owned()),
                MemberReservation::Shared { owner } => {
                    (format!("{owner}'s"), "-".to_owned(), format!("{owner}'s"))
                }
            };
            let mut row = vec![
                m.name.clone(),
                m.priority.map_or("-".to_owned(), |p| p.0.to_string()),
                e,
                low,
                p,
                format!("{share:.4}"),
                rule_name(&m.reservation),
                fit_cell(&m.fit).to_owned(),
            ];
            if low_mode {
                row.push(response_cell(m.low_mode_response));
            }
            if responses {
                row.push(response_cell(m.response));
            }
            row
        })
        .collect();
    let mut headers = vec![
        "task",
        "priority",
        "e",
        "e^L",
        "p",
        "e/p",
        "replenishment",
        "fits reservation",
    ];
    if low_mode {
        headers.extend(["R^L (high)", "R (AMC-rtb)"]);
    } else if responses {
        headers.push("R (RTA)");
    }
    text.push_str(&table::render(&headers, &rows));
    for member in &analysis.members {
        if let (Fit::Exceeds(why), Some(Response::Bounded(bound))) =
            (&member.fit, member.job_response)
        {
            text.push_str(&format!(
                "  {}: {why}; each job completes within {bound} of its release all the same, \
                 one period more for each budget it needs past the first (each comes p after \
                 the one before), its releases that many periods apart finding the reservation \
                 replenished{}\n",
                member.name,
                low_mode_text(analysis, member, low_mode_only)
            ));
        } else if let Fit::Exceeds(why) | Fit::Unchecked(why) = &member.fit {
            text.push_str(&format!("  {}: {why}\n", member.name));
        } else if let (Some(Response::Bounded(bound)), MemberReservation::Partition { .. }) =
            (member.job_response, &member.reservation)
        {
            text.push_str(&format!(
                "  {}: each job completes within {bound} of its release, served in the \
                 partition's slots alone (the least slot time in any window)\n",
                member.name
            ));
        } else if let Some(Response::Bounded(bound)) = member.job_response {
            let shared = matches!(member.reservation, MemberReservation::Shared { .. })
                || analysis.members.iter().any(|m| {
                    matches!(&m.reservation, MemberReservation::Shared { owner } if *owner == member.name)
                });
            text.push_str(&format!(
                "  {}: each job completes within {bound} of its release, {}{}\n",
                member.name,
                if shared {
                    "on the joint demand of the tasks bound to its reservation"
                } else {
                    "alone in its reservation, which its releases (at least p apart) find \
                     replenished and which gets its budget within that"
                },
                low_mode_text(analysis, member, low_mode_only)
            ));
        }
    }
    text.push_str(&format!("  {}\n", why(analysis)));
    text
}

/// The low-mode label of a low-criticality member's job bound, when the verdict holds for
/// them in low mode only.
fn low_mode_text(
    analysis: &ClusterAnalysis,
    member: &cluster::Member,
    low_mode_only: bool,
) -> &'static str {
    if low_mode_only && !high_criticality(analysis, member) {
        " (in low mode: a low-criticality reservation has no guarantee in high mode)"
    } else {
        ""
    }
}

/// Whether `member`'s reservation (its owner's, when shared) is of high criticality.
fn high_criticality(analysis: &ClusterAnalysis, member: &cluster::Member) -> bool {
    let owner = match &member.reservation {
        MemberReservation::Shared { owner } => analysis.members.iter().find(|m| &m.name == owner),
        _ => Some(member),
    };
    owner.is_some_and(|m| m.reservation.is_high_criticality())
}

/// A partition's slots: `[0ns, 5ms) [10ms, 12ms)`.
fn slots_text(slots: &[(bulwark_core::Duration, bulwark_core::Duration)]) -> String {
    slots
        .iter()
        .map(|(start, end)| format!("[{start}, {end})"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn to_json(analysis: &ClusterAnalysis) -> Value {
    let members: Vec<Value> = analysis
        .members
        .iter()
        .map(|m| {
            let (fits, why) = match &m.fit {
                Fit::Carried => (Some(true), None),
                Fit::Exceeds(why) => (Some(false), Some(why)),
                Fit::Unchecked(why) => (None, Some(why)),
            };
            let (response_ns, response_verdict) = response_json(m.response);
            let (low_mode_response_ns, low_mode_response_verdict) =
                response_json(m.low_mode_response);
            let (job_response_ns, job_response_verdict) = job_response_json(m.job_response);
            let mut value = json!({
                "name": m.name,
                "priority": m.priority.map(|p| p.0),
                "replenishment": rule_name(&m.reservation),
                "fits_reservation": fits,
                "fit_why": why,
                "response_ns": response_ns,
                "response_verdict": response_verdict,
                "low_mode_response_ns": low_mode_response_ns,
                "low_mode_response_verdict": low_mode_response_verdict,
                "job_response_ns": job_response_ns,
                "job_response_verdict": job_response_verdict,
            });
            match &m.reservation {
                MemberReservation::Sporadic {
                    reservation,
                    low_budget,
                    ..
                } => {
                    value["budget_ns"] = json!(reservation.budget.as_nanos());
                    value["period_ns"] = json!(reservation.period.as_nanos());
                    value["criticality"] = json!(if low_budget.is_some() { "high" } else { "low" });
                    value["low_budget_ns"] = json!(low_budget.map(|low| low.as_nanos()));
                }
                // No (e, p), no criticality: null.
                MemberReservation::BestEffort => {
                    value["budget_ns"] = Value::Null;
                    value["period_ns"] = Value::Null;
                }
                // Its owner's (e, p), given in the owner's entry.
                MemberReservation::Shared { owner } => {
                    value["budget_ns"] = Value::Null;
                    value["period_ns"] = Value::Null;
                    value["shares"] = json!(owner);
                }
                // No (e, p): null there, and the core, slots and cycle instead.
                MemberReservation::Partition { core, slots, cycle } => {
                    value["budget_ns"] = Value::Null;
                    value["period_ns"] = Value::Null;
                    value["core"] = json!(core);
                    value["slots_ns"] = slots
                        .iter()
                        .map(|(start, end)| json!([start.as_nanos(), end.as_nanos()]))
                        .collect();
                    value["cycle_ns"] = json!(cycle.as_nanos());
                }
            }
            value
        })
        .collect();
    let total = &analysis.bandwidth;
    let masks: Vec<Option<u64>> = analysis
        .masks
        .iter()
        .map(|&mask| (mask != Duration::MAX).then(|| mask.as_nanos()))
        .collect();
    let mut value = json!({
        "name": analysis.name,
        "cores": analysis.cores,
        "order": order_name(analysis.order),
        "masks_counted_ns": masks,
        "bandwidth_numerator": total.total.numerator.to_string(),
        "bandwidth_denominator": total.total.denominator.to_string(),
        "bandwidth": total.total.as_f64(),
        "bandwidth_exact": total.exact,
        "test": analysis.verdict.test_name(),
        "mode_switch": analysis.criticality().map(Criticality::name),
        "schedulable": analysis.verdict.schedulable(),
        "verdict": verdict_key(&analysis.verdict),
        "reason": analysis.verdict.reason(),
        "why": why(analysis),
        "members": members,
    });
    if let Some(test) = analysis.verdict.supply() {
        value["supply_cycle_ns"] = json!(test.cycle.as_nanos());
        value["supply_free_per_cycle_ns"] = json!(test.free_per_cycle.as_nanos());
        if let Some(EdfOnSupply::DemandExceeds { at, demand, supply }) = test.edf {
            value["failing_deadline_ns"] = json!(at.as_nanos());
            value["failing_demand_ns"] = json!(demand.as_nanos());
            value["failing_supply_ns"] = json!(supply.as_nanos());
        }
    }
    if let Some(test) = analysis.verdict.test() {
        value["largest_bandwidth_numerator"] = json!(test.largest.numerator.to_string());
        value["largest_bandwidth_denominator"] = json!(test.largest.denominator.to_string());
        value["bound_numerator"] = json!(test.bound_numerator.to_string());
        value["bound_denominator"] = json!(test.largest.denominator.to_string());
        value["bound"] = json!(test.bound_as_f64());
    }
    value
}

/// The module's own checks, on scenarios built here (the CLI tests read the same from
/// TOML files).
#[cfg(test)]
mod tests {
    use super::*;
    use bulwark_spec::{ClusterMember, ClusterSpec, MemberKind};

    /// Core 0 partitioned under fixed priority (`p`), cores 1 and 2 a cluster of `a`
    /// and `b`, reservations (3, 10) and (`budget`, 10).
    fn scenario(order: SporadicOrder, budget: &str) -> Scenario {
        let text = "name = \"global\"\npolicy = \"fixed-priority\"\ncores = 3\n\
                    duration = \"100ms\"\n\n\
                    [[task]]\nname = \"a\"\ncore = 1\npriority = 2\nperiod = \"10ms\"\n\
                    execution = \"2ms\"\n\n\
                    [[task]]\nname = \"b\"\ncore = 1\npriority = 3\nperiod = \"10ms\"\n\
                    execution = \"2ms\"\n\n\
                    [[task]]\nname = \"p\"\ncore = 0\npriority = 1\nperiod = \"10ms\"\n\
                    execution = \"1ms\"\n";
        let mut scenario = bulwark_spec::parse(text, "global.toml").expect("valid");
        let ms = bulwark_core::Duration::from_millis;
        let budget = bulwark_spec::parse_duration(budget).expect("a duration");
        for (task, budget) in [(0, ms(3)), (1, budget)] {
            scenario.tasks[task].reservation = Some(bulwark_spec::Reservation::new(budget, ms(10)));
        }
        scenario.clusters.push(ClusterSpec {
            slack_reclamation: false,
            name: "g".to_owned(),
            cores: vec![1, 2],
            order,
            cycle: bulwark_core::Duration::ZERO,
            members: [0, 1]
                .map(|task| ClusterMember {
                    task,
                    kind: MemberKind::Sporadic {
                        replenishment: Replenishment::Sporadic,
                        low_budget: None,
                    },
                })
                .to_vec(),
        });
        scenario
    }

    fn args(json: bool) -> AnalyzeArgs {
        AnalyzeArgs {
            file: "global.toml".into(),
            json,
            camkes: false,
            overheads: None,
            deny_warnings: false,
        }
    }

    #[test]
    fn the_parts_leave_the_cluster_out() {
        let scenario = scenario(SporadicOrder::EarliestDeadlineFirst, "3ms");
        assert_eq!(scenario.partitioned_cores().collect::<Vec<_>>(), [0]);
        let parts = scenario.parts_by_policy();
        assert_eq!(parts.len(), 1);
        let names: Vec<&str> = parts[0].tasks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["p"]);
        assert!(parts[0].clusters.is_empty());
    }

    /// U = 3/10 + 3/10 = 3/5 <= 2 - 3/10 = 17/10: exit 0; JSON: the classic document
    /// with `clusters` added.
    #[test]
    fn an_edf_cluster_within_the_bound_passes() {
        let scenario = scenario(SporadicOrder::EarliestDeadlineFirst, "3ms");
        let (text, code) = capture(|| clustered(&scenario, &args(true)));
        assert_eq!(code, Ok(ExitCode::SUCCESS), "{text}");
        let doc: Value = serde_json::from_str(&text).expect("JSON");
        assert_eq!(doc["policy"], "fixed-priority");
        assert_eq!(doc["cores"].as_array().map(Vec::len), Some(1), "{doc:#}");
        assert_eq!(doc["cores"][0]["tasks"][0]["name"], "p");
        let g = &doc["clusters"][0];
        assert_eq!(g["name"], "g");
        assert_eq!(g["cores"], json!([1, 2]));
        assert_eq!(g["order"], "edf");
        assert_eq!(
            (&g["bandwidth_numerator"], &g["bandwidth_denominator"]),
            (&json!("3"), &json!("5"))
        );
        assert_eq!(
            (&g["bound_numerator"], &g["bound_denominator"]),
            (&json!("17"), &json!("10"))
        );
        assert_eq!(g["verdict"], "schedulable");
        assert_eq!(g["members"][1]["fits_reservation"], true);
        let (text, code) = capture(|| clustered(&scenario, &args(false)));
        assert_eq!(code, Ok(ExitCode::SUCCESS));
        assert!(text.contains("== cluster g (cores 1, 2): edf =="), "{text}");
        assert!(
            text.contains("U = 3/5 = 0.6000 <= 2 - 1 * 3/10 = 1.7000"),
            "{text}"
        );
    }

    /// (3, 10) and (9, 10): U = 6/5 > 2 - 9/10 = 11/10: exit 1.
    #[test]
    fn an_edf_cluster_over_the_bound_fails() {
        let scenario = scenario(SporadicOrder::EarliestDeadlineFirst, "9ms");
        let (text, code) = capture(|| clustered(&scenario, &args(false)));
        assert_eq!(code, Ok(ExitCode::FAILURE), "{text}");
        assert!(
            text.contains("U = 6/5 = 1.2000 > 2 - 1 * 9/10 = 1.1000: NOT shown schedulable"),
            "{text}"
        );
    }

    /// Fixed priority: `b` (priority 3) above `a` (2), each with fewer than m = 2 above it,
    /// so R = C = 3 ms <= 10 ms for both: schedulable by the response-time analysis, exit 0.
    #[test]
    fn a_fixed_priority_cluster_gets_the_response_time_analysis() {
        let scenario = scenario(SporadicOrder::FixedPriority, "3ms");
        let (text, code) = capture(|| clustered(&scenario, &args(true)));
        assert_eq!(code, Ok(ExitCode::SUCCESS), "{text}");
        let doc: Value = serde_json::from_str(&text).expect("JSON");
        let g = &doc["clusters"][0];
        assert_eq!(g["verdict"], "schedulable");
        assert_eq!(g["schedulable"], true);
        assert_eq!(g["test"], cluster::GLOBAL_FP_RTA_TEST);
        assert_eq!(g["reason"], Value::Null);
        assert_eq!(g.get("bound"), None);
        assert_eq!(g["members"][0]["response_ns"], 3_000_000);
        assert_eq!(g["members"][0]["response_verdict"], "bounded");
        let (text, code) = capture(|| clustered(&scenario, &args(false)));
        assert_eq!(code, Ok(ExitCode::SUCCESS), "{text}");
        assert!(text.contains("R (RTA)"), "{text}");
        assert!(
            text.ends_with("clusters: g schedulable (global FP RTA)\n"),
            "{text}"
        );
    }

    /// Member `b` a time partition on core 2: its row shows the core, slots and cycle, and
    /// its share is slot time over cycle (3/10). `a` (3, 10) on two cores beside it: slack
    /// 10 - 3 ms + 1 ns, the partition at most 3 ms of any 10 ms, 3 ms < 2 * slack: shown
    /// schedulable by Bertogna, Cirinei and Lipari's test, exit 0.
    #[test]
    fn a_partition_s_row_shows_its_slots_and_share() {
        let mut scenario = scenario(SporadicOrder::EarliestDeadlineFirst, "3ms");
        let ms = bulwark_core::Duration::from_millis;
        scenario.tasks[1].reservation = None;
        scenario.clusters[0].cycle = ms(10);
        scenario.clusters[0].members[1].kind = MemberKind::Partition {
            core: 2,
            slots: vec![(ms(1), ms(2)), (ms(4), ms(6))],
        };
        let (text, code) = capture(|| clustered(&scenario, &args(false)));
        assert_eq!(code, Ok(ExitCode::SUCCESS), "{text}");
        assert!(text.contains("core 2: [1ms, 2ms) [4ms, 6ms)"), "{text}");
        assert!(text.contains("cycle 10ms"), "{text}");
        assert!(text.contains("time partition"), "{text}");
        assert!(
            text.contains("each time partition one more interfering entity"),
            "{text}"
        );
        assert!(
            text.contains("U = 3/5 = 0.6000: the condition holds"),
            "{text}"
        );
        assert!(
            text.ends_with("clusters: g schedulable (global EDF BCL)\n"),
            "{text}"
        );
    }
}
