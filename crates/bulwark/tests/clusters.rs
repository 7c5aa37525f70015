//! Scenarios with `[[cluster]]` tables in the commands other than `simulate`: `analyze` keeps
//! the members out of the per-core analyses and tests each cluster on its own (Goossens,
//! Funk and Baruah under EDF order; Bertogna and Cirinei's response-time analysis under fixed
//! priority), `check` names the clusters, `run` refuses them. Expected numbers worked out by
//! hand.

mod common;

use std::path::Path;

use common::{assert_contains, assert_ends_with, output_of, temp_file, text};

/// Scenario `name` on three cores: cores 1 and 2 the cluster `cluster` under `order`, with
/// the further keys `cluster_keys` and the member tasks `members`; core 0 partitioned under
/// fixed priority, with task `p` (1 ms every 10 ms) alone on it.
fn three_cores(
    name: &str,
    cluster: &str,
    order: &str,
    cluster_keys: &str,
    members: &str,
) -> String {
    format!(
        "name = \"{name}\"\npolicy = \"fixed-priority\"\ncores = 3\nduration = \"100ms\"\n\n\
         [[cluster]]\nname = \"{cluster}\"\ncores = [1, 2]\norder = \"{order}\"\n{cluster_keys}\n\
         {members}[[task]]\nname = \"p\"\ncore = 0\npriority = 1\nperiod = \"10ms\"\n\
         execution = \"1ms\"\n"
    )
}

/// Core 0 partitioned under fixed priority (task `p`); cores 1 and 2 the cluster `g` under
/// `order`, with `a` in a (3 ms, 10 ms) reservation and `b` in a (`budget`, 10 ms) one.
/// `member_keys` go into both members (a priority under fixed-priority order).
fn scenario(order: &str, budget: &str, member_keys: &str) -> String {
    let members = format!(
        r#"[[task]]
name = "a"
cluster = "g"
period = "10ms"
execution = "2ms"
reservation = {{ budget = "3ms", period = "10ms" }}
{member_keys}

[[task]]
name = "b"
cluster = "g"
period = "10ms"
execution = "4ms"
reservation = {{ budget = "{budget}", period = "10ms" }}
{member_keys}

"#
    );
    three_cores("global", "g", order, "", &members)
}

/// `bulwark` with `args` and then `path`, which must exit with `code`: its standard output
/// and error.
fn outputs(args: &[&str], path: &Path, code: i32) -> (String, String) {
    let mut all = args.to_vec();
    all.push(path.to_str().expect("utf-8 path"));
    let out = output_of(&all, code);
    (text(&out.stdout), text(&out.stderr))
}

/// `partitioned` with `pinned` in a (4 ms, 20 ms) reservation instead of its time partition,
/// and so no cycle.
fn without_partition(order: &str, pinned: &str, critical: &str) -> String {
    partitioned(order, pinned, critical)
        .replace("cycle = \"20ms\"\n", "")
        .replace(
            "reservation = { core = 2, slots = [[\"0ms\", \"5ms\"], [\"10ms\", \"12ms\"]] }",
            "reservation = { budget = \"4ms\", period = \"20ms\" }",
        )
}

/// `analyze --json` of `path`, which must exit with `code`: the document it prints.
fn analyze_json(path: &Path, code: i32) -> serde_json::Value {
    let (stdout, _) = outputs(&["analyze", "--json"], path, code);
    serde_json::from_str(&stdout).expect("JSON")
}

/// U = 3/10 + 3/10 = 3/5 on m = 2; U_max = 3/10; bound 2 - 1 * 3/10 = 17/10 >= 3/5:
/// schedulable. `b`'s jobs need 4 ms of its 3 ms budget: it does not fit its reservation,
/// which is reported and changes no exit code. `p` alone on core 0: R = 1 ms. Exit 0.
#[test]
fn an_edf_cluster_within_the_gfb_bound_is_schedulable() {
    let (_dir, path) = temp_file("global.toml", scenario("edf", "3ms", ""));
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    // The per-core analysis sees only `p`.
    assert_contains(&stdout, "\ncore 0:\n");
    assert!(!stdout.contains("\ncore 1:\n"), "{stdout}");
    assert_contains(&stdout, "== cluster g (cores 1, 2): edf ==");
    assert_contains(&stdout, "U = 3/5 = 0.6000 <= 2 - 1 * 3/10 = 1.7000");
    assert_contains(&stdout, "b: a job needs up to 4ms > budget 3ms");
    assert_ends_with(&stdout, "\nclusters: g schedulable (GFB)\n");
}

/// The same as JSON: the classic document, unchanged for core 0, with `clusters` added.
#[test]
fn an_edf_cluster_in_json_is_a_new_top_level_field() {
    let (_dir, path) = temp_file("global.toml", scenario("edf", "3ms", ""));
    let doc = analyze_json(&path, 0);
    assert_eq!(doc["scenario"], "global");
    assert_eq!(doc["policy"], "fixed-priority");
    assert_eq!(doc["schedulable"], true);
    let cores = doc["cores"].as_array().expect("cores");
    assert_eq!(cores.len(), 1, "{doc:#}");
    assert_eq!(cores[0]["core"], 0);
    assert_eq!(cores[0]["tasks"][0]["name"], "p");
    assert_eq!(cores[0]["tasks"][0]["response_ns"], 1_000_000);
    let clusters = doc["clusters"].as_array().expect("clusters");
    assert_eq!(clusters.len(), 1);
    let g = &clusters[0];
    assert_eq!(g["name"], "g");
    assert_eq!(g["cores"], serde_json::json!([1, 2]));
    assert_eq!(g["order"], "edf");
    assert_eq!(g["bandwidth_numerator"], "3");
    assert_eq!(g["bandwidth_denominator"], "5");
    assert_eq!(g["test"], "gfb");
    assert_eq!(g["bound_numerator"], "17");
    assert_eq!(g["bound_denominator"], "10");
    assert_eq!(g["schedulable"], true);
    assert_eq!(g["verdict"], "schedulable");
    assert_eq!(g["gate_waits_not_in_bounds"], serde_json::json!([]));
    let members = g["members"].as_array().expect("members");
    assert_eq!(members[0]["name"], "a");
    assert_eq!(members[0]["fits_reservation"], true);
    assert_eq!(members[1]["name"], "b");
    assert_eq!(members[1]["fits_reservation"], false);
}

/// `b` in (9 ms, 10 ms): U = 3/10 + 9/10 = 6/5 < m = 2, but U_max = 9/10 and the bound is
/// 2 - 9/10 = 11/10 < 6/5: not shown schedulable, exit 1 like other failed tests.
#[test]
fn an_edf_cluster_over_the_gfb_bound_exits_1() {
    let (_dir, path) = temp_file("global.toml", scenario("edf", "9ms", ""));
    let (stdout, _) = outputs(&["analyze"], &path, 1);
    assert_contains(
        &stdout,
        "U = 6/5 = 1.2000 > 2 - 1 * 9/10 = 1.1000: NOT shown schedulable",
    );
    let doc = analyze_json(&path, 1);
    assert_eq!(doc["clusters"][0]["verdict"], "not-shown-schedulable");
    assert_eq!(doc["clusters"][0]["schedulable"], false);
}

/// Fixed priority, `a` and `b` both at priority 2 on m = 2 cores: each has fewer than m
/// reservations above it, so Bertogna and Cirinei's analysis gives R = C: 3 ms for both,
/// within 10 ms: schedulable, exit 0 (it exited 2, "not analysed", before the analysis).
#[test]
fn a_fixed_priority_cluster_gets_the_response_time_analysis() {
    let source = scenario("fixed-priority", "3ms", "priority = 2");
    let (_dir, path) = temp_file("global.toml", &source);
    let (stdout, stderr) = outputs(&["analyze"], &path, 0);
    assert_contains(&stdout, "== cluster g (cores 1, 2): fixed-priority ==");
    assert_contains(
        &stdout,
        "Bertogna and Cirinei's response-time analysis, U = 3/5 = 0.6000: every R <= p",
    );
    assert!(!stderr.contains("not analysed"), "{stderr}");
    assert_ends_with(&stdout, "\nclusters: g schedulable (global FP RTA)\n");
    let doc = analyze_json(&path, 0);
    let g = &doc["clusters"][0];
    assert_eq!(g["verdict"], "schedulable");
    assert_eq!(g["schedulable"], true);
    assert_eq!(g["test"], "global-fp-rta");
    assert_eq!(g["reason"], serde_json::Value::Null);
    assert_eq!(g["bandwidth"], 0.6);
    for member in g["members"].as_array().expect("members") {
        assert_eq!(member["response_ns"], 3_000_000);
        assert_eq!(member["response_verdict"], "bounded");
    }
}

/// The same cluster with a rogue (1 ms, 10 ms) in a group of 2 ms quota and a watchdog that
/// terminates it, both at priority 1: the termination masks a core of `g` for up to 2 ms,
/// which the response-time analysis counts as one more interfering entity, min(M, R - C + 1).
/// By hand, in ns: `a` has one reservation-less entity above it (the mask), fewer than m = 2:
/// R = C = 3 ms. `b` has `a` and the mask: x = 0, both capped at 1, the least capped 2 ms
/// (the mask's min(2 ms, 3 ms)), so R = 5 ms; then `a`'s W = 3 ms is capped at 2 ms + 1 and
/// the mask's 2 ms is not: floor((2 ms + 1 + 2 ms) / 2) = 2 ms, fixed: R = 5 ms (3 ms
/// without the termination). Under EDF order GFB has no term for the mask, so Bertogna,
/// Cirinei and Lipari's test runs with it: for `a`, slack p - e + 1 = 7 ms + 1, the others'
/// EDF workloads in 10 ms 3 + 1 + 1 ms and the mask 2 ms: 7 ms < 2 (7 ms + 1); for the rogue,
/// slack 9 ms + 1, 3 + 3 + 1 + 2 = 9 ms < 2 (9 ms + 1): schedulable. With two cores masked
/// for 8 ms each (a second rogue and watchdog), `a`'s sum 3 + 1 + 1 + 1 + 1 + 2 (7 ms + 1)
/// >= 2 (7 ms + 1): not shown, exit 1.
#[test]
fn a_fixed_priority_cluster_counts_the_masks_of_its_terminations() {
    let with_rogue = |order: &str, keys: &str| {
        format!(
            "{}\n[[group]]\nname = \"rogue\"\nquota = \"2ms\"\n\n[[task]]\nname = \"rogue\"\n\
             cluster = \"g\"\ngroup = \"rogue\"\n{keys}\n\
             reservation = {{ budget = \"1ms\", period = \"10ms\" }}\n\
             script = [{{ allocate = 1000000, object = \"semaphore\" }}, {{ run = \"1s\" }}]\n\n\
             [[task]]\nname = \"watchdog\"\ncluster = \"g\"\n{keys}\n\
             reservation = {{ budget = \"1ms\", period = \"10ms\" }}\n\
             script = [{{ sleep-until = \"50ms\" }}, {{ terminate = \"rogue\" }}, \
             {{ sleep-until = \"1s\" }}]\n\n[cost]\nreclaim-per-unit = 13\n",
            scenario(
                order,
                "3ms",
                if keys.is_empty() { "" } else { "priority = 2" }
            )
        )
    };
    let (_dir, path) = temp_file("masked.toml", with_rogue("fixed-priority", "priority = 1"));
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(
        &stdout,
        "with the terminations' masks (2ms) each as interference on one core, min(M, R - C + 1)",
    );
    assert_contains(
        &stdout,
        "note: g: the cluster's test above counts this mask (at most 2ms) in every \
         reservation's interference, one core at a time",
    );
    let doc = analyze_json(&path, 0);
    let g = &doc["clusters"][0];
    assert_eq!(g["masks_counted_ns"], serde_json::json!([2_000_000]));
    assert_eq!(g["members"][0]["response_ns"], 3_000_000);
    assert_eq!(g["members"][1]["response_ns"], 5_000_000);

    let (_dir, path) = temp_file("masked-edf.toml", with_rogue("edf", ""));
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(&stdout, "Bertogna, Cirinei and Lipari's test");
    assert_contains(
        &stdout,
        "note: g: the cluster's test above counts this mask",
    );
    let doc = analyze_json(&path, 0);
    let g = &doc["clusters"][0];
    assert_eq!(g["test"], "global-edf-bcl");
    assert_eq!(g["verdict"], "schedulable");
    assert_eq!(g["masks_counted_ns"], serde_json::json!([2_000_000]));

    // Reclamation at no cost masks nothing: GFB stays the test.
    let free = with_rogue("edf", "")
        .replace("[[group]]\nname = \"rogue\"\nquota = \"2ms\"\n", "")
        .replace("group = \"rogue\"\n", "")
        .replace("reclaim-per-unit = 13", "reclaim-per-unit = 0");
    let (_dir, path) = temp_file("masked-free.toml", free);
    let doc = analyze_json(&path, 0);
    assert_eq!(doc["clusters"][0]["test"], "gfb");
    assert_eq!(
        doc["clusters"][0]["masks_counted_ns"],
        serde_json::json!([])
    );

    // A second rogue and watchdog, each group's quota 8 ms: both cores may be masked at once.
    let twice = with_rogue("edf", "").replace("quota = \"2ms\"", "quota = \"8ms\"")
        + "\n[[group]]\nname = \"rogue2\"\nquota = \"8ms\"\n\n[[task]]\nname = \"rogue2\"\n\
           cluster = \"g\"\ngroup = \"rogue2\"\n\
           reservation = { budget = \"1ms\", period = \"10ms\" }\n\
           script = [{ allocate = 1000000, object = \"semaphore\" }, { run = \"1s\" }]\n\n\
           [[task]]\nname = \"watchdog2\"\ncluster = \"g\"\n\
           reservation = { budget = \"1ms\", period = \"10ms\" }\n\
           script = [{ sleep-until = \"50ms\" }, { terminate = \"rogue2\" }, \
           { sleep-until = \"1s\" }]\n";
    let (_dir, path) = temp_file("masked-twice.toml", twice);
    let (stdout, _) = outputs(&["analyze"], &path, 1);
    assert_contains(
        &stdout,
        "the condition fails for `a`: NOT shown schedulable",
    );
    let doc = analyze_json(&path, 1);
    assert_eq!(
        doc["clusters"][0]["masks_counted_ns"],
        serde_json::json!([8_000_000, 8_000_000])
    );
}

/// A best-effort member beside the same two: no share, no bound, and the reservations'
/// analysis as without it (U = 3/5, each R = 3 ms on its own core).
#[test]
fn a_best_effort_member_is_listed_and_left_out_of_the_test() {
    let source = format!(
        "{}\n[[task]]\nname = \"be\"\ncluster = \"g\"\nreservation = \"best-effort\"\n\
         script = [{{ run = \"1s\" }}]\n",
        scenario("fixed-priority", "3ms", "priority = 2")
    );
    let (_dir, path) = temp_file("global.toml", &source);
    let doc = analyze_json(&path, 0);
    let g = &doc["clusters"][0];
    assert_eq!(g["verdict"], "schedulable");
    assert_eq!(g["bandwidth"], 0.6);
    let members = g["members"].as_array().expect("members");
    assert_eq!(members.len(), 3);
    for member in &members[..2] {
        assert_eq!(member["response_ns"], 3_000_000);
    }
    let be = &members[2];
    assert_eq!(be["name"], "be");
    assert_eq!(be["replenishment"], "best-effort");
    assert_eq!(be["priority"], serde_json::Value::Null);
    assert_eq!(be["budget_ns"], serde_json::Value::Null);
    assert_eq!(be["period_ns"], serde_json::Value::Null);
    assert_eq!(be["response_ns"], serde_json::Value::Null);
    assert_eq!(be["fits_reservation"], serde_json::Value::Null);
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(
        &stdout,
        "be: not checked: a best-effort reservation has no budget",
    );
}

/// Cluster `g` by fixed priority: `a` (2 ms every 40 ms) in R (3 ms, 10 ms) shared with `s`
/// (2 ms every `s_period`), and `b` (3 ms every 10 ms) in its own (3 ms, 10 ms), both
/// reservations at priority 2 on two cores, so each is served within R = 3 ms.
fn shared(s_period: &str) -> String {
    let members = format!(
        r#"[[task]]
name = "a"
cluster = "g"
priority = 2
period = "40ms"
execution = "2ms"
reservation = {{ name = "R", budget = "3ms", period = "10ms" }}

[[task]]
name = "s"
cluster = "g"
reservation = "R"
period = "{s_period}"
execution = "2ms"

[[task]]
name = "b"
cluster = "g"
priority = 2
period = "10ms"
execution = "3ms"
reservation = {{ budget = "3ms", period = "10ms" }}

"#
    );
    three_cores("shared", "g", "fixed-priority", "", &members)
}

/// R's least supply waits 10 + 3 - 3 = 10 ms, then gives 3 ms every 10. `a` is first in R:
/// 10 + 2 = 12 ms. `s` waits behind one job of `a`: 4 ms of demand, one whole chunk and 1 ms
/// of the next, 10 + 10 + 1 = 21 ms, in which `a` has one job. Within 40 ms both fit; with
/// jobs of `s` every 20 ms, 21 ms is past its deadline: it does not fit, which changes no
/// exit code. `b` is alone in its reservation, its jobs 10 ms apart: each release finds it
/// replenished, so its jobs complete within the reservation's R = 3 ms.
#[test]
fn tasks_sharing_a_reservation_are_bounded_on_their_joint_demand() {
    let (_dir, path) = temp_file("shared.toml", shared("40ms"));
    let doc = analyze_json(&path, 0);
    let members = doc["clusters"][0]["members"].as_array().expect("members");
    let bounds: Vec<(&serde_json::Value, &serde_json::Value, &serde_json::Value)> = members
        .iter()
        .map(|m| {
            (
                &m["job_response_ns"],
                &m["job_response_verdict"],
                &m["fits_reservation"],
            )
        })
        .collect();
    assert_eq!(
        bounds,
        vec![
            (
                &serde_json::json!(12_000_000),
                &serde_json::json!("bounded"),
                &serde_json::json!(true)
            ),
            (
                &serde_json::json!(21_000_000),
                &serde_json::json!("bounded"),
                &serde_json::json!(true)
            ),
            (
                &serde_json::json!(3_000_000),
                &serde_json::json!("bounded"),
                &serde_json::json!(true)
            ),
        ]
    );
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(&stdout, "s: each job completes within 21ms of its release");
    assert_contains(
        &stdout,
        "b: each job completes within 3ms of its release, alone in its reservation",
    );
    let (_dir, path) = temp_file("shared.toml", shared("20ms"));
    let doc = analyze_json(&path, 0);
    let s = &doc["clusters"][0]["members"][1];
    assert_eq!(s["job_response_verdict"], "exceeds-deadline");
    assert_eq!(s["job_response_ns"], 21_000_000);
    assert_eq!(s["fits_reservation"], false);
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(
        &stdout,
        "s: with the 2 tasks bound to the reservation, a job may take 21ms > 20ms",
    );
}

/// Cores 1 and 2 a fixed-priority cluster `g` of `h1` and `h2` (9 ms, 10 ms) at priority 5
/// and `light` (`budget`, 10 ms) at priority 1; core 0 partitioned (`p`).
fn dhall(budget: &str) -> String {
    let member = |name: &str, priority: u8, budget: &str| {
        format!(
            "[[task]]\nname = \"{name}\"\ncluster = \"g\"\npriority = {priority}\n\
             period = \"10ms\"\nexecution = \"{budget}\"\n\
             reservation = {{ budget = \"{budget}\", period = \"10ms\" }}\n\n"
        )
    };
    let members = [("h1", 5, "9ms"), ("h2", 5, "9ms"), ("light", 1, budget)]
        .map(|(name, priority, budget)| member(name, priority, budget))
        .concat();
    three_cores("dhall", "g", "fixed-priority", "", &members)
}

/// Dhall's set under fixed priority, the light reservation lowest: R_h1 = R_h2 = 9 ms (fewer
/// than m = 2 above). `light` (C = 1 ms): R = 1 ms + x with both terms capped at x + 1 ns
/// (W = min(9 ms, 1 ms + x)) up to x = 9 ms; at R = 10 ms, N = floor(10 / 10) = 1 and
/// W = 9 ms + min(9 ms, 0) = 9 ms < 9 ms + 1 ns, so R = 1 ms + floor(18 ms / 2) = 10 ms:
/// converged, <= 10 ms. Schedulable, exit 0, though U = 19/10 (GFB would fail it under EDF:
/// 19/10 > 2 - 9/10).
#[test]
fn a_fixed_priority_cluster_shown_schedulable_exits_0() {
    let (_dir, path) = temp_file("dhall.toml", dhall("1ms"));
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(&stdout, "U = 19/10 = 1.9000: every R <= p");
    assert_ends_with(&stdout, "\nclusters: g schedulable (global FP RTA)\n");
    let doc = analyze_json(&path, 0);
    let g = &doc["clusters"][0];
    assert_eq!(g["test"], "global-fp-rta");
    assert_eq!(g["verdict"], "schedulable");
    let responses: Vec<(&str, &serde_json::Value)> = g["members"]
        .as_array()
        .expect("members")
        .iter()
        .map(|m| (m["name"].as_str().expect("name"), &m["response_ns"]))
        .collect();
    assert_eq!(
        responses,
        [
            ("h1", &serde_json::json!(9_000_000)),
            ("h2", &serde_json::json!(9_000_000)),
            ("light", &serde_json::json!(10_000_000)),
        ]
    );
}

/// `light` (2 ms, 10 ms): both terms stay capped up to x = 8 ms; at R = 10 ms they are
/// W = 9 ms >= 8 ms + 1 ns, still capped, so R >= 2 ms + 9 ms = 11 ms > 10 ms: not shown
/// schedulable, exit 1. (Released together, h1 and h2 hold both cores over [0, 9) and
/// `light` gets 1 ms by 10: it really misses.)
#[test]
fn a_fixed_priority_cluster_not_shown_schedulable_exits_1() {
    let (_dir, path) = temp_file("dhall.toml", dhall("2ms"));
    let (stdout, _) = outputs(&["analyze"], &path, 1);
    assert_contains(
        &stdout,
        "U = 2/1 = 2.0000: `light`'s R >= 11ms > p = 10ms: NOT shown schedulable (the \
             test is sufficient only)",
    );
    assert_contains(&stdout, ">= 11ms > p");
    assert_ends_with(
        &stdout,
        "\nclusters: g NOT shown schedulable (global FP RTA)\n",
    );
    let doc = analyze_json(&path, 1);
    let g = &doc["clusters"][0];
    assert_eq!(g["verdict"], "not-shown-schedulable");
    assert_eq!(g["schedulable"], false);
    assert_eq!(g["test"], "global-fp-rta");
    let light = &g["members"][2];
    assert_eq!(light["name"], "light");
    assert_eq!(light["response_verdict"], "exceeds-period");
    assert_eq!(light["response_ns"], 11_000_000);
    assert_eq!(g["members"][0]["response_verdict"], "bounded");
}

/// An SPR server on two fixed-priority cores (`h1` of Dhall's set, 9 ms per 10 ms) enters
/// Bertogna and Cirinei's analysis with its workload reaching R + e back, and the report says
/// so (before, "not analysed", exit 2). By hand: R_h1 = R_h2 = 9 ms; for `light` (1 ms) both
/// terms stay capped up to x = 9 ms, where W_h2(10) = 9 ms is not (9 ms < 9 ms + 1 ns) but
/// W_h1(10) = floor(19 / 10) 9 + min(9, 9) = 18 ms is: R = 1 + floor((9 ms + 1 ns + 9 ms) / 2)
/// = 10 ms, still within p. With h1 a sporadic task it is 10 ms as well (both terms 9 ms).
#[test]
fn a_fixed_priority_cluster_with_an_spr_server_is_analysed() {
    let source = dhall("1ms").replacen(
        "reservation = { budget = \"9ms\", period = \"10ms\" }",
        "reservation = { budget = \"9ms\", period = \"10ms\", replenishment = \"spr\" }",
        1,
    );
    let (_dir, path) = temp_file("dhall.toml", &source);
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(
        &stdout,
        "(an SPR server as one whose workload reaches R + e back: its chunks of budget come \
         back p after they became available, so they may start up to its R apart)",
    );
    assert_ends_with(&stdout, "\nclusters: g schedulable (global FP RTA)\n");
    let doc = analyze_json(&path, 0);
    let g = &doc["clusters"][0];
    assert_eq!(g["verdict"], "schedulable");
    assert_eq!(g["test"], "global-fp-rta");
    let responses: Vec<&serde_json::Value> =
        (0..3).map(|i| &g["members"][i]["response_ns"]).collect();
    assert_eq!(responses, [9_000_000, 9_000_000, 10_000_000]);
    assert_eq!(g["members"][0]["replenishment"], "spr (8 slots)");
}

/// A task that needs several budgets of its reservation (`s`: 5 ms of an SPR server's 2 ms
/// per 10 ms, released every 30 ms) gets one period more for each budget past the first:
/// 2 p + R = 22 ms (R = 2 ms, nothing above it), in the report and in JSON; its fit still
/// says it exceeds the reservation. The run's worst is 21 ms (bulwark-analysis's cluster
/// tests work the rest of the file).
#[test]
fn a_task_that_needs_several_budgets_gets_a_job_bound() {
    let text = "name = \"spr\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"1s\"\n\n\
                [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"fixed-priority\"\n\n\
                [[task]]\nname = \"s\"\ncluster = \"k\"\npriority = 9\nperiod = \"30ms\"\n\
                execution = \"5ms\"\nreservation = { budget = \"2ms\", period = \"10ms\", \
                replenishment = \"spr\", replenishments = 2 }\n";
    let (_dir, path) = temp_file("several.toml", text);
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(
        &stdout,
        "s: a job needs up to 5ms > budget 2ms: the task's jobs need more than its reservation \
         gives, and a job may take several periods of the reservation; each job completes \
         within 22ms of its release all the same, one period more for each budget it needs \
         past the first",
    );
    let doc = analyze_json(&path, 0);
    let s = &doc["clusters"][0]["members"][0];
    assert_eq!(s["job_response_ns"], 22_000_000);
    assert_eq!(s["job_response_verdict"], "bounded");
    let (stdout, _) = outputs(&["simulate", "--json"], &path, 0);
    let run: serde_json::Value = serde_json::from_str(&stdout).expect("JSON");
    let worst = run["tasks"][0]["response"]["max_ns"]
        .as_u64()
        .expect("jobs ran");
    assert!(worst <= 22_000_000, "{worst}");
}

#[test]
fn check_names_the_clusters() {
    let (_dir, path) = temp_file("global.toml", scenario("edf", "3ms", ""));
    let (stdout, _) = outputs(&["check"], &path, 0);
    assert_contains(
        &stdout,
        "ok (3 tasks on 3 cores, fixed-priority, 100ms; cluster: g (cores 1, 2, edf, 2 tasks))",
    );
}

/// The host runtime manages one core: a cluster of two is refused before anything runs,
/// exit 2 as its other refusals.
#[test]
fn run_refuses_a_cluster_of_several_cores() {
    let (_dir, path) = temp_file("global.toml", scenario("edf", "3ms", ""));
    let (_, stderr) = outputs(&["run"], &path, 2);
    assert_contains(
        &stderr,
        "global.toml: cluster `g` schedules 2 cores, but the runtime manages one core",
    );
    assert_contains(&stderr, "`bulwark simulate` runs it");
}

/// The README's cluster with a time partition and a high-criticality reservation, under
/// `order`: `pinned` on core 2 in [0, 5) and [10, 12) of a 20 ms cycle (share 7/20),
/// `critical` (3 ms, 10 ms) with e^L = 2 ms; `pinned` and `critical` are extra keys of each
/// (a priority under fixed-priority order).
fn partitioned(order: &str, pinned: &str, critical: &str) -> String {
    let members = format!(
        r#"[[task]]
name = "pinned"
cluster = "global"
{pinned}
period = "20ms"
execution = "4ms"
reservation = {{ core = 2, slots = [["0ms", "5ms"], ["10ms", "12ms"]] }}

[[task]]
name = "critical"
cluster = "global"
{critical}
period = "10ms"
execution = "2ms"
reservation = {{ budget = "3ms", period = "10ms", criticality = "high", low-budget = "2ms" }}

"#
    );
    three_cores("mixed", "global", order, "cycle = \"20ms\"\n", &members)
}

/// The README's cluster on two cores: a time partition beside a high-criticality member.
/// The mode switch gets no credit (worst-case reservations): `critical` counts at e^H = 3 ms
/// in Bertogna, Cirinei and Lipari's test with the partition as an entity. By hand, the
/// partition's most slot time in a 10 ms window is 5 ms ([0, 5)), so `critical`'s
/// interference is at most min(5, 10 - 3 + 1) = 5 < 2 * 8: schedulable, exit 0.
#[test]
fn a_cluster_with_a_partition_and_high_criticality_counts_e_h() {
    let (_dir, path) = temp_file("mixed.toml", partitioned("edf", "", ""));
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(&stdout, "core 2: [0ns, 5ms) [10ms, 12ms)");
    assert_contains(&stdout, "cycle 20ms");
    assert_contains(&stdout, "0.3500");
    assert_contains(
        &stdout,
        "U = 13/20 = 0.6500: the condition holds for every reservation: every reservation gets \
         its budget e within p of each replenishment. Vestal's mode switch is given no credit \
         (worst-case reservations): every high-criticality reservation counts at its e^H in \
         both modes.",
    );
    assert_ends_with(&stdout, "\nclusters: global schedulable (global EDF BCL)\n");
    let doc = analyze_json(&path, 0);
    let g = &doc["clusters"][0];
    assert_eq!(g["verdict"], "schedulable");
    assert_eq!(g["test"], "global-edf-bcl");
    assert_eq!(g["mode_switch"], "worst-case-reservations");
    assert_eq!(g["reason"], serde_json::Value::Null);
    assert_eq!(
        (&g["bandwidth_numerator"], &g["bandwidth_denominator"]),
        (&serde_json::json!("13"), &serde_json::json!("20"))
    );
    let pinned = &g["members"][0];
    assert_eq!(pinned["core"], 2);
    assert_eq!(
        pinned["slots_ns"],
        serde_json::json!([[0, 5_000_000], [10_000_000, 12_000_000]])
    );
    assert_eq!(pinned["cycle_ns"], 20_000_000);
    assert_eq!(pinned["budget_ns"], serde_json::Value::Null);
    assert_eq!(pinned["replenishment"], "time partition");
    let critical = &g["members"][1];
    assert_eq!(critical["criticality"], "high");
    assert_eq!(critical["low_budget_ns"], 2_000_000);
    assert_eq!(critical["budget_ns"], 3_000_000);
}

/// Worst-case reservations without the partition under EDF, and AMC-rtb's argument on two
/// fixed-priority cores, by hand (`pinned` (4 ms, 20 ms) at priority 5 above `critical` (e^H =
/// 3 ms of 10 ms, e^L = 2 ms)):
/// - EDF: GFB, U = 1/5 + 3/10 = 1/2 <= 2 - 3/10: schedulable, the switch given no credit;
/// - fixed priority on two cores: `pinned` alone above, R = 4 ms; `critical` has one
///   interfering reservation on two cores, floor(min(W, 1) / 2) = 0 in either mode: R^L = 2 ms
///   and R^* = e^H = 3 ms. With the partition instead of `pinned`'s reservation, the same.
///
/// `pinned`'s job bound holds in low mode only, and the report says so.
#[test]
fn a_cluster_with_high_criticality_on_two_cores_gets_its_test() {
    let (_dir, path) = temp_file("mixed.toml", without_partition("edf", "", ""));
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(&stdout, "U = 1/2 = 0.5000 <= 2 - 1 * 3/10 = 1.7000");
    assert_ends_with(&stdout, "\nclusters: global schedulable (GFB)\n");
    let doc = analyze_json(&path, 0);
    assert_eq!(doc["clusters"][0]["mode_switch"], "worst-case-reservations");
    let (_dir, path) = temp_file(
        "mixed.toml",
        partitioned("fixed-priority", "priority = 5", "priority = 4"),
    );
    let doc = analyze_json(&path, 0);
    assert_eq!(doc["clusters"][0]["test"], "global-amc-rtb");
    assert_eq!(doc["clusters"][0]["mode_switch"], "amc-rtb");
    assert_eq!(doc["clusters"][0]["members"][1]["response_ns"], 3_000_000);
    let (_dir, path) = temp_file(
        "mixed.toml",
        without_partition("fixed-priority", "priority = 5", "priority = 4"),
    );
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(
        &stdout,
        "pinned: each job completes within 4ms of its release, alone in its reservation, which \
         its releases (at least p apart) find replenished and which gets its budget within that \
         (in low mode: a low-criticality reservation has no guarantee in high mode)",
    );
    assert_contains(
        &stdout,
        "AMC-rtb's argument on Bertogna and Cirinei's response-time analysis: R^L over every \
         e^L, and for a high-criticality reservation R^* over the e^H above it and the \
         low-criticality workload within its R^L, the switch coming within R^L",
    );
    assert_ends_with(&stdout, "\nclusters: global schedulable (global AMC-rtb)\n");
    let doc = analyze_json(&path, 0);
    let g = &doc["clusters"][0];
    assert_eq!(g["mode_switch"], "amc-rtb");
    assert_eq!(g["members"][0]["response_ns"], 4_000_000);
    assert_eq!(g["members"][1]["response_ns"], 3_000_000);
    assert_eq!(g["members"][1]["low_mode_response_ns"], 2_000_000);
}

/// vestal-mode-switch's low-criticality members call `S` (mc-ipc, L = 1 ms: every call asks
/// for 0.5 to 1 ms) once a job; each call counts what a request drains, Theorem 1's
/// (1 + 2 m K) L with m = 1 and K = 2 (C0 and C1): 5 ms, whatever operation it asks for. So
/// a job needs at most 200 us + 5 ms + 1 ns + 1 ms (L1, e = 10 ms per 25 ms), 2 + 5 + 1 ms and
/// 1 ns (L2, 10 per 20 ms) or 3 + 5 + 1 ms and 1 ns (L3, 10 per 40 ms): all three fit. H runs
/// four jobs of a counted loop and then a long one: its shape is not checked. C0 (one core,
/// H of high criticality) gets AMC-rtb, by hand: H alone at the top, R^L = e^L = 12 ms and
/// R^* = e^H = 30 ms; L1's R^L = 10 + ceil(R / 50) 12 = 22 ms. Both clusters are shown
/// schedulable: exit 0.
#[test]
fn members_that_call_a_server_fit_with_what_their_calls_drain() {
    let stdout = common::stdout_of(&["analyze", "scenarios/vestal-mode-switch.toml"], 0);
    let fits = |name: &str| -> String {
        let line = stdout
            .lines()
            .find(|line| line.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row `{name}` in\n{stdout}"));
        let cells: Vec<&str> = line.split_whitespace().collect();
        // After the replenishment rule (`sporadic`), the fit.
        let rule = cells.iter().position(|&cell| cell == "sporadic").unwrap();
        cells[rule + 1..].join(" ")
    };
    // In C0, the fit then R^L (high-criticality only) and R (AMC-rtb).
    assert_eq!(fits("L1"), "yes - 22ms");
    assert_eq!(fits("L2"), "yes 10ms");
    assert_eq!(fits("L3"), "yes 20ms");
    assert_eq!(fits("H"), "not checked 12ms 30ms");
    common::assert_contains(&stdout, "note: `H` invokes servers");
    common::assert_contains(
        &stdout,
        "\nclusters: C0 schedulable (AMC-rtb); C1 schedulable (FP RTA)\n",
    );
    let doc = common::json_of(
        &["analyze", "--json", "scenarios/vestal-mode-switch.toml"],
        0,
    );
    let c0 = &doc["clusters"][0];
    assert_eq!(c0["test"], "amc-rtb");
    assert_eq!(c0["verdict"], "schedulable");
    let member = |index: usize, field: &str| c0["members"][index][field].clone();
    assert_eq!(member(0, "response_ns"), 30_000_000);
    assert_eq!(member(0, "low_mode_response_ns"), 12_000_000);
    assert_eq!(member(0, "low_mode_response_verdict"), "bounded");
    assert_eq!(member(1, "response_ns"), 22_000_000);
    assert_eq!(member(1, "low_mode_response_ns"), serde_json::Value::Null);
    assert_eq!(
        doc["clusters"][1]["members"][0]["low_mode_response_ns"],
        serde_json::Value::Null
    );
    // C1, one core and no high-criticality member: the exact uniprocessor analysis.
    assert_eq!(doc["clusters"][1]["test"], "fp-rta");
}

/// AMC-rtb's failures, by hand on one core: `L` (low, 10 ms per 20 ms, priority 5) above `H`
/// (high, e^L 4 ms, e^H 12 ms per 20 ms). H's R^L = 4 + 10 = 14 ms, R^* = 12 + ceil(14/20) 10
/// = 22 ms > 20 ms: not shown (exit 1), the report naming H's R. With e^L = 11 ms, R^L =
/// 11 + 10 = 21 ms > 20 ms already: the report names H's R^L.
#[test]
fn a_one_core_cluster_with_high_criticality_gets_amc_rtb() {
    let file = |low: &str| {
        format!(
            "name = \"amc\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"1s\"\n\n\
             [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"fixed-priority\"\n\n\
             [[task]]\nname = \"L\"\ncluster = \"k\"\npriority = 5\n\
             reservation = {{ budget = \"10ms\", period = \"20ms\" }}\n\
             period = \"20ms\"\nexecution = \"5ms\"\n\n\
             [[task]]\nname = \"H\"\ncluster = \"k\"\npriority = 4\n\
             reservation = {{ budget = \"12ms\", period = \"20ms\", criticality = \"high\", \
             low-budget = \"{low}\" }}\nperiod = \"20ms\"\nexecution = \"3ms\"\n"
        )
    };
    let (_dir, path) = temp_file("amc.toml", file("4ms"));
    let (stdout, _) = outputs(&["analyze"], &path, 1);
    assert_contains(&stdout, "`H`'s R >= 22ms > p = 20ms: NOT shown schedulable");
    assert_ends_with(&stdout, "\nclusters: k NOT shown schedulable (AMC-rtb)\n");
    let doc = analyze_json(&path, 1);
    let k = &doc["clusters"][0];
    assert_eq!(k["test"], "amc-rtb");
    assert_eq!(k["mode_switch"], "amc-rtb");
    assert_eq!(k["members"][1]["response_verdict"], "exceeds-period");
    assert_eq!(k["members"][1]["low_mode_response_ns"], 14_000_000);
    let (_dir, path) = temp_file("amc.toml", file("11ms"));
    let (stdout, _) = outputs(&["analyze"], &path, 1);
    assert_contains(&stdout, "`H`'s R^L >= 21ms > p = 20ms");
}

/// A one-core cluster with a time partition: the sporadic reservations are tested against
/// what the slots leave. By hand, the partition `P` holds [0, 40 ms) of a 100 ms cycle.
/// - Fixed priority, `a` (10 ms per 50 ms, priority 5) above `b` (15 ms per 100 ms, 4): the
///   worst window starts at the slot, so a's R = 40 + 10 = 50 ms <= 50; b needs 15 + 10 =
///   25 ms: 65 ms, where a's second release (at 50) adds 10: 35 ms of supply by 75 ms, so
///   R = 75 ms <= 100 ms. Schedulable, exit 0.
/// - EDF order, the same budgets: deadlines 50 (10 ms of demand, sbf = 10) and 100 (35 ms,
///   sbf = 60): schedulable. With a's budget 11 ms: 11 > 10 at 50, NOT shown, exit 1.
#[test]
fn a_one_core_cluster_with_a_partition_is_tested_on_the_slots_supply() {
    let file = |order: &str, budget: &str| {
        format!(
            "name = \"slots\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"1s\"\n\n\
             [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"{order}\"\ncycle = \"100ms\"\n\n\
             [[task]]\nname = \"P\"\ncluster = \"k\"\npriority = 9\n\
             reservation = {{ core = 0, slots = [[\"0ms\", \"40ms\"]] }}\n\
             period = \"100ms\"\nexecution = \"1ms\"\n\n\
             [[task]]\nname = \"a\"\ncluster = \"k\"\npriority = 5\n\
             reservation = {{ budget = \"{budget}\", period = \"50ms\" }}\n\
             period = \"50ms\"\nexecution = \"1ms\"\n\n\
             [[task]]\nname = \"b\"\ncluster = \"k\"\npriority = 4\n\
             reservation = {{ budget = \"15ms\", period = \"100ms\" }}\n\
             period = \"100ms\"\nexecution = \"1ms\"\n"
        )
        // Priorities only under fixed-priority order.
        .lines()
        .filter(|line| order == "fixed-priority" || !line.starts_with("priority"))
        .collect::<Vec<_>>()
        .join("\n")
    };
    let (_dir, path) = temp_file("slots.toml", file("fixed-priority", "10ms"));
    let doc = analyze_json(&path, 0);
    let k = &doc["clusters"][0];
    assert_eq!(k["test"], "fp-rta-slot-supply");
    assert_eq!(k["mode_switch"], serde_json::Value::Null);
    assert_eq!(k["verdict"], "schedulable");
    assert_eq!(k["members"][0]["response_ns"], serde_json::Value::Null);
    assert_eq!(k["members"][1]["response_ns"], 50_000_000);
    assert_eq!(k["members"][2]["response_ns"], 75_000_000);
    // P's own job (1 ms per 100 ms) against its slot: at worst released as the slot closes,
    // 60 ms without it and 1 ms in the next: 61 ms.
    assert_eq!(k["members"][0]["fits_reservation"], true);
    assert_eq!(k["members"][0]["job_response_ns"], 61_000_000);
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_ends_with(
        &stdout,
        "\nclusters: k schedulable (on the slots' supply)\n",
    );

    let (_dir, path) = temp_file("slots.toml", file("edf", "10ms"));
    let doc = analyze_json(&path, 0);
    assert_eq!(doc["clusters"][0]["test"], "edf-slot-supply");
    let (_dir, path) = temp_file("slots.toml", file("edf", "11ms"));
    let (stdout, _) = outputs(&["analyze"], &path, 1);
    assert_contains(
        &stdout,
        "the demand with deadlines up to 50ms is 11ms > sbf(50ms) = 10ms: NOT shown schedulable",
    );
    let doc = analyze_json(&path, 1);
    assert_eq!(doc["clusters"][0]["failing_deadline_ns"], 50_000_000);
}

/// Under AMC-rtb, the job bounds of tasks sharing a low-criticality reservation hold in low
/// mode only, and the report says so: `a` and `b` share R (10 ms per 25 ms) below `H`
/// (high, e^L 6 ms, e^H 12 ms per 50 ms), R's R^L = 10 + 6 = 16 ms.
#[test]
fn shared_job_bounds_under_amc_rtb_are_for_low_mode() {
    let text =
        "name = \"amc-shared\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"1s\"\n\n\
                [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"fixed-priority\"\n\n\
                [[task]]\nname = \"H\"\ncluster = \"k\"\npriority = 5\n\
                reservation = { budget = \"12ms\", period = \"50ms\", criticality = \"high\", \
                low-budget = \"6ms\" }\nperiod = \"50ms\"\nexecution = \"5ms\"\n\n\
                [[task]]\nname = \"a\"\ncluster = \"k\"\npriority = 4\n\
                reservation = { name = \"R\", budget = \"10ms\", period = \"25ms\" }\n\
                period = \"100ms\"\nexecution = \"2ms\"\n\n\
                [[task]]\nname = \"b\"\ncluster = \"k\"\nreservation = \"R\"\n\
                period = \"100ms\"\nexecution = \"3ms\"\n";
    let (_dir, path) = temp_file("amc-shared.toml", text);
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    for task in ["a", "b"] {
        let line = stdout
            .lines()
            .find(|line| line.starts_with(&format!("  {task}: each job completes within")))
            .unwrap_or_else(|| panic!("no job bound of {task} in\n{stdout}"));
        assert!(
            line.ends_with(
                "(in low mode: a low-criticality reservation has no guarantee in high mode)"
            ),
            "{line}"
        );
    }
    let doc = analyze_json(&path, 0);
    assert_eq!(doc["clusters"][0]["members"][1]["response_ns"], 16_000_000);
}

/// AMC-rtb beside a time partition on one core, by hand: `P` holds [0, 40 ms) of every
/// 100 ms; `l` (low, 10 ms per 50 ms, priority 2) gets sbf^-1(10 ms) = 50 ms; `h` (high,
/// e^L 5 ms, e^H 15 ms per 100 ms, priority 1) has R^L = 65 ms (5 + 2 * 10 ms of work by then)
/// and R^* = sbf^-1(15 + ceil(65/50) 10) = sbf^-1(35 ms) = 75 ms.
#[test]
fn amc_rtb_beside_a_partition_runs_on_the_slots_supply() {
    let text =
        "name = \"amc-slots\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"1s\"\n\n\
                [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"fixed-priority\"\n\
                cycle = \"100ms\"\n\n\
                [[task]]\nname = \"P\"\ncluster = \"k\"\npriority = 9\n\
                reservation = { core = 0, slots = [[\"0ms\", \"40ms\"]] }\n\
                period = \"100ms\"\nexecution = \"1ms\"\n\n\
                [[task]]\nname = \"l\"\ncluster = \"k\"\npriority = 2\n\
                reservation = { budget = \"10ms\", period = \"50ms\" }\n\
                period = \"50ms\"\nexecution = \"1ms\"\n\n\
                [[task]]\nname = \"h\"\ncluster = \"k\"\npriority = 1\n\
                reservation = { budget = \"15ms\", period = \"100ms\", criticality = \"high\", \
                low-budget = \"5ms\" }\nperiod = \"100ms\"\nexecution = \"1ms\"\n";
    let (_dir, path) = temp_file("amc-slots.toml", text);
    let doc = analyze_json(&path, 0);
    let k = &doc["clusters"][0];
    assert_eq!(k["test"], "amc-rtb");
    assert_eq!(k["members"][0]["response_ns"], serde_json::Value::Null);
    assert_eq!(k["members"][1]["response_ns"], 50_000_000);
    assert_eq!(k["members"][2]["low_mode_response_ns"], 65_000_000);
    assert_eq!(k["members"][2]["response_ns"], 75_000_000);
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(
        &stdout,
        "the least supply sbf(t) the time partitions' slots leave",
    );
}

/// An SPR server on one fixed-priority core (`s`, 2 ms per 10 ms, S = 2, above `a` (3, 10)
/// and `b` (4, 20)) enters the exact analysis as a sporadic task, and the report says why:
/// R = 2, 5 and 9 ms by hand, exit 0 (before, "not analysed", exit 2).
#[test]
fn an_spr_server_on_one_core_is_analysed_as_a_sporadic_task() {
    let text = "name = \"spr\"\npolicy = \"fixed-priority\"\ncores = 1\nduration = \"1s\"\n\n\
                [[cluster]]\nname = \"k\"\ncores = [0]\norder = \"fixed-priority\"\n\n\
                [[task]]\nname = \"s\"\ncluster = \"k\"\npriority = 9\nperiod = \"5ms\"\n\
                execution = \"1ms\"\nreservation = { budget = \"2ms\", period = \"10ms\", \
                replenishment = \"spr\", replenishments = 2 }\n\n\
                [[task]]\nname = \"a\"\ncluster = \"k\"\npriority = 5\nperiod = \"10ms\"\n\
                execution = \"3ms\"\nreservation = { budget = \"3ms\", period = \"10ms\" }\n\n\
                [[task]]\nname = \"b\"\ncluster = \"k\"\npriority = 1\nperiod = \"20ms\"\n\
                execution = \"4ms\"\nreservation = { budget = \"4ms\", period = \"20ms\" }\n";
    let (_dir, path) = temp_file("spr.toml", text);
    let (stdout, _) = outputs(&["analyze"], &path, 0);
    assert_contains(
        &stdout,
        "(an SPR server as one too: a sporadic server interferes no more than a sporadic task \
         (e, p), Sprunt, Sha and Lehoczky's theorem)",
    );
    assert_ends_with(&stdout, "\nclusters: k schedulable (FP RTA)\n");
    let doc = analyze_json(&path, 0);
    let k = &doc["clusters"][0];
    assert_eq!(k["test"], "fp-rta");
    let responses: Vec<&serde_json::Value> =
        (0..3).map(|i| &k["members"][i]["response_ns"]).collect();
    assert_eq!(responses, [2_000_000, 5_000_000, 9_000_000]);
    assert_eq!(k["members"][0]["replenishment"], "spr (2 slots)");
}
