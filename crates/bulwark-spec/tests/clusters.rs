//! `[[cluster]]` tables and the tasks that run in them: valid files read into exactly the
//! model written here by hand, and each wrong file is refused with the error and the place
//! worked out by hand (lines and columns count from 1).

mod common;

use std::fs;
use std::path::Path;

use bulwark_core::{Duration, Priority};
use bulwark_spec::system::{kind_of, FileKind};
use bulwark_spec::{
    parse, parse_checked, Behaviour, ClusterMember, ClusterSpec, CostModel, Execution, MemberKind,
    PolicyKind, Replenishment, Reservation, Scenario, SporadicOrder, Step, TaskSpec,
};
use common::ms;

fn valid(text: &str) -> Scenario {
    match parse(text, "c.toml") {
        Ok(scenario) => scenario,
        Err(diagnostics) => panic!("{}", diagnostics.plain()),
    }
}

/// Every error of a wrong file, as `file:line:column: message`.
fn errors(text: &str) -> Vec<String> {
    match parse(text, "c.toml") {
        Ok(scenario) => panic!("accepted: {scenario:#?}"),
        Err(diagnostics) => diagnostics.errors().iter().map(|e| e.to_string()).collect(),
    }
}

/// The help of the only error of a wrong file.
fn only_help(text: &str) -> String {
    let diagnostics = parse(text, "c.toml").expect_err("refused");
    assert_eq!(diagnostics.errors().len(), 1, "{}", diagnostics.plain());
    diagnostics.errors()[0].help().to_owned()
}

/// A wrong file is refused with exactly `error`, whose help is `help`.
#[track_caller]
fn assert_refused(text: &str, error: &str, help: &str) {
    assert_eq!(errors(text), [error]);
    assert_eq!(only_help(text), help);
}

/// The warnings of a valid file, as `file:line:column: message`.
fn warnings(text: &str) -> Vec<String> {
    let (_, warnings) = parse_checked(text, "c.toml").expect("valid");
    warnings.iter().map(|w| w.to_string()).collect()
}

/// The steps of task `task`, which runs a script.
fn script_of(scenario: &Scenario, task: usize) -> &[Step] {
    match &scenario.tasks[task].behaviour {
        Behaviour::Script { steps, .. } => steps,
        other => panic!("not a script: {other:?}"),
    }
}

/// Task `t` alone on core 0 under SPR, in `reservation` (line 10, which starts with
/// `reservation = `).
fn on_a_core(reservation: &str) -> String {
    format!(
        "name = \"c\"\npolicy = \"spr\"\nduration = \"1s\"\n\n[[task]]\nname = \"t\"\n\
         priority = 1\nperiod = \"10ms\"\nexecution = \"1ms\"\nreservation = {reservation}\n"
    )
}

/// Fifteen lines: a cluster of cores 1 and 2 under `order`, and task `a` in it, whose
/// remaining keys (`extra`) start on line 16.
fn with_order(order: &str, extra: &str) -> String {
    format!(
        "name = \"c\"\n\
         policy = \"fixed-priority\"\n\
         cores = 3\n\
         duration = \"100ms\"\n\
         \n\
         [[cluster]]\n\
         name = \"global\"\n\
         cores = [1, 2]\n\
         order = \"{order}\"\n\
         \n\
         [[task]]\n\
         name = \"a\"\n\
         cluster = \"global\"\n\
         period = \"10ms\"\n\
         execution = \"2ms\"\n\
         {extra}"
    )
}

fn edf(extra: &str) -> String {
    with_order("edf", extra)
}

fn fixed(extra: &str) -> String {
    with_order("fixed-priority", extra)
}

const RESERVATION: &str = "reservation = { budget = \"3ms\", period = \"10ms\" }\n";

/// A sporadic reservation of low criticality, replenished by `replenishment`.
fn sporadic(replenishment: Replenishment) -> MemberKind {
    MemberKind::Sporadic {
        replenishment,
        low_budget: None,
    }
}

/// Task `task` in a sporadic reservation of low criticality, replenished by `replenishment`.
fn sporadic_member(task: usize, replenishment: Replenishment) -> ClusterMember {
    ClusterMember {
        task,
        kind: sporadic(replenishment),
    }
}

fn periodic(name: &str, core: u16, reservation: Reservation, priority: Option<u8>) -> TaskSpec {
    TaskSpec {
        name: name.into(),
        core,
        priority: priority.map(Priority),
        reservation: Some(reservation),
        deadline: Some(ms(10)),
        behaviour: Behaviour::Periodic {
            period: ms(10),
            offset: Duration::ZERO,
            execution: Execution::Fixed(ms(2)),
        },
    }
}

#[test]
fn an_edf_cluster_reads_into_the_exact_scenario() {
    let text = "name = \"global-edf\"\n\
                policy = \"fixed-priority\"\n\
                cores = 3\n\
                duration = \"100ms\"\n\
                \n\
                [[cluster]]\n\
                name = \"global\"\n\
                cores = [2, 1]\n\
                order = \"edf\"\n\
                \n\
                [[task]]\n\
                name = \"solo\"\n\
                priority = 1\n\
                period = \"10ms\"\n\
                execution = \"1ms\"\n\
                \n\
                [[task]]\n\
                name = \"a\"\n\
                cluster = \"global\"\n\
                period = \"10ms\"\n\
                execution = \"2ms\"\n\
                reservation = { budget = \"3ms\", period = \"10ms\", replenishment = \"sporadic\" }\n\
                \n\
                [[task]]\n\
                name = \"b\"\n\
                cluster = \"global\"\n\
                min-interarrival = \"20ms\"\n\
                jitter = \"1ms\"\n\
                deadline = \"15ms\"\n\
                offset = \"5ms\"\n\
                execution = { uniform = [\"1ms\", \"2ms\"] }\n\
                reservation = { budget = \"4ms\", period = \"20ms\", replenishment = \"cbs\" }\n";
    let expected = Scenario {
        name: "global-edf".into(),
        description: String::new(),
        seed: 0,
        duration: ms(100),
        cores: 3,
        policy: PolicyKind::FixedPriority,
        core_policies: Vec::new(),
        clusters: vec![ClusterSpec {
            slack_reclamation: false,
            name: "global".into(),
            cores: vec![2, 1],
            order: SporadicOrder::EarliestDeadlineFirst,
            cycle: Duration::ZERO,
            members: vec![
                sporadic_member(1, Replenishment::Sporadic),
                sporadic_member(2, Replenishment::ConstantBandwidth),
            ],
        }],
        cost: CostModel::default(),
        tasks: vec![
            TaskSpec {
                name: "solo".into(),
                core: 0,
                priority: Some(Priority(1)),
                reservation: None,
                deadline: Some(ms(10)),
                behaviour: Behaviour::Periodic {
                    period: ms(10),
                    offset: Duration::ZERO,
                    execution: Execution::Fixed(ms(1)),
                },
            },
            // A cluster task's core is the cluster's first.
            periodic("a", 2, Reservation::new(ms(3), ms(10)), None),
            TaskSpec {
                name: "b".into(),
                core: 2,
                priority: None,
                reservation: Some(Reservation::new(ms(4), ms(20))),
                deadline: Some(ms(15)),
                behaviour: Behaviour::Sporadic {
                    min_interarrival: ms(20),
                    jitter: ms(1),
                    offset: ms(5),
                    execution: Execution::Uniform {
                        min: ms(1),
                        max: ms(2),
                    },
                },
            },
        ],
        groups: Vec::new(),
        servers: Vec::new(),
        vbs: None,
        cpis: Vec::new(),
        components: Vec::new(),
    };
    let scenario = valid(text);
    assert_eq!(scenario, expected);
    assert_eq!(scenario.cluster_of(0), None);
    assert_eq!(scenario.cluster_of(1), Some(0));
    assert_eq!(scenario.cluster_of_task(0), None);
    assert_eq!(
        scenario.cluster_of_task(2),
        Some((0, &sporadic(Replenishment::ConstantBandwidth)))
    );
}

#[test]
fn fixed_priority_clusters_keep_priorities_spr_queues_and_file_order() {
    let text = "name = \"two\"\n\
                policy = \"edf\"\n\
                cores = 4\n\
                duration = \"1s\"\n\
                \n\
                [[cluster]]\n\
                name = \"left\"\n\
                cores = [0, 1]\n\
                order = \"fixed-priority\"\n\
                \n\
                [[cluster]]\n\
                name = \"right\"\n\
                cores = [3]\n\
                order = \"edf\"\n\
                \n\
                [[task]]\n\
                name = \"x\"\n\
                cluster = \"left\"\n\
                priority = 3\n\
                period = \"10ms\"\n\
                execution = \"2ms\"\n\
                reservation = { budget = \"3ms\", period = \"10ms\", replenishment = \"spr\", replenishments = 16 }\n\
                \n\
                [[task]]\n\
                name = \"y\"\n\
                cluster = \"right\"\n\
                period = \"10ms\"\n\
                execution = \"2ms\"\n\
                reservation = { budget = \"5ms\", period = \"10ms\" }\n\
                \n\
                [[task]]\n\
                name = \"w\"\n\
                core = 2\n\
                period = \"10ms\"\n\
                execution = \"2ms\"\n\
                \n\
                [[task]]\n\
                name = \"z\"\n\
                cluster = \"left\"\n\
                priority = 5\n\
                period = \"10ms\"\n\
                execution = \"2ms\"\n\
                reservation = { budget = \"2ms\", period = \"10ms\", replenishment = \"spr\" }\n";
    let scenario = valid(text);
    assert_eq!(
        scenario.clusters,
        vec![
            ClusterSpec {
                slack_reclamation: false,
                name: "left".into(),
                cores: vec![0, 1],
                order: SporadicOrder::FixedPriority,
                cycle: Duration::ZERO,
                members: vec![
                    sporadic_member(0, Replenishment::Spr { slots: 16 }),
                    sporadic_member(3, Replenishment::Spr { slots: 8 }),
                ],
            },
            ClusterSpec {
                slack_reclamation: false,
                name: "right".into(),
                cores: vec![3],
                order: SporadicOrder::EarliestDeadlineFirst,
                cycle: Duration::ZERO,
                members: vec![sporadic_member(1, Replenishment::Sporadic)],
            },
        ]
    );
    assert_eq!(
        scenario.tasks,
        vec![
            periodic(
                "x",
                0,
                Reservation::new(ms(3), ms(10)).with_replenishments(16),
                Some(3)
            ),
            periodic("y", 3, Reservation::new(ms(5), ms(10)), None),
            TaskSpec {
                reservation: None,
                ..periodic("w", 2, Reservation::new(ms(1), ms(10)), None)
            },
            periodic("z", 0, Reservation::new(ms(2), ms(10)), Some(5)),
        ]
    );
}

#[test]
fn cluster_tasks_count_for_no_core_s_utilisation() {
    // Two tasks of utilisation 0.9 in a cluster of two cores: no core is overloaded, and
    // the reservations' bandwidth 1.6 fits two cores.
    let text = edf("reservation = { budget = \"8ms\", period = \"10ms\" }\n\
         \n\
         [[task]]\n\
         name = \"b\"\n\
         cluster = \"global\"\n\
         period = \"10ms\"\n\
         execution = \"9ms\"\n\
         reservation = { budget = \"8ms\", period = \"10ms\" }\n")
    .replace("execution = \"2ms\"", "execution = \"9ms\"");
    assert_eq!(warnings(&text), Vec::<String>::new());
}

#[test]
fn a_cluster_s_bandwidth_above_its_cores_is_a_warning_at_the_reservation_that_passes_it() {
    let task = |name: &str| {
        format!(
            "\n[[task]]\nname = \"{name}\"\ncluster = \"global\"\nperiod = \"10ms\"\n\
             execution = \"2ms\"\nreservation = {{ budget = \"9ms\", period = \"10ms\" }}\n"
        )
    };
    // 0.3 + 0.9 = 1.2, then 2.1 with `c` (line 30): above 2 cores.
    let text = edf(&format!("{RESERVATION}{}{}", task("b"), task("c")));
    let (_, warnings) = parse_checked(&text, "c.toml").expect("valid");
    let shown: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(
        shown,
        ["c.toml:30:15: cluster `global`'s bandwidth reaches 2.100 with task `c` (sum of budget \
          over period), above its 2 cores: the cluster is overloaded"]
    );
    assert_eq!(
        warnings[0].help(),
        "allowed: a bandwidth of at most the cluster's number of cores; shorten budgets, \
         lengthen periods or give the cluster more cores"
    );
}

#[test]
fn a_cluster_s_bandwidth_is_compared_exactly() {
    let task = |name: &str, period: &str, budget: &str| {
        format!(
            "\n[[task]]\nname = \"{name}\"\ncluster = \"global\"\nperiod = \"{period}\"\n\
             execution = \"1ms\"\nreservation = {{ budget = \"{budget}\", period = \"{period}\" }}\n"
        )
    };
    // Five thirds and a last share just above or just below a third: a sum 2 + 6.7e-13 or
    // 2 - 3.3e-13, too close to 2 for a tolerance in floating point to tell.
    let with_last = |budget: &str| {
        let mut text = "name = \"c\"\npolicy = \"edf\"\ncores = 2\nduration = \"1s\"\n\n\
                        [[cluster]]\nname = \"global\"\ncores = [0, 1]\norder = \"edf\"\n"
            .to_owned();
        for n in 0..5 {
            text += &task(&format!("t{n}"), "3ms", "1ms");
        }
        text + &task("last", "1000s", budget)
    };
    assert_eq!(warnings(&with_last("333333333333ns")), Vec::<String>::new());
    let shown = warnings(&with_last("333333333334ns"));
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(
        shown[0].contains("reaches 2.000 with task `last`"),
        "{shown:?}"
    );
}

#[test]
fn a_cluster_task_has_no_core() {
    assert_refused(
        &edf(&format!("core = 1\n{RESERVATION}")),
        "c.toml:16:8: task `a` runs in cluster `global`, so it has no core of its own",
        "a task in a cluster runs on whichever of its cores the cluster's scheduler selects; \
         remove core",
    );
}

#[test]
fn a_cluster_must_exist() {
    let text = edf(RESERVATION).replace("cluster = \"global\"", "cluster = \"nope\"");
    assert_refused(
        &text,
        "c.toml:13:11: no [[cluster]] is called `nope`",
        "allowed: global",
    );
}

#[test]
fn a_cluster_s_core_has_no_core_table() {
    let text = edf(RESERVATION).replace(
        "[[cluster]]",
        "[[core]]\nid = 2\npolicy = \"edf\"\n\n[[cluster]]",
    );
    assert_eq!(
        errors(&text),
        ["c.toml:7:6: core 2 is in cluster `global`, whose scheduler runs it"]
    );
}

#[test]
fn a_task_outside_clusters_runs_on_a_core_in_none() {
    let given = format!("{}\n[[task]]\nname = \"b\"\ncore = 1\npriority = 1\nperiod = \"10ms\"\nexecution = \"1ms\"\n", edf(RESERVATION));
    assert_refused(
        &given,
        "c.toml:20:8: task `b` is on core 1, which cluster `global` schedules",
        "allowed: cluster = \"global\" (the task then runs in a reservation of its own in that \
         cluster), or a core in no cluster",
    );
    // Core 0, the default, in a cluster: the task's table is the place.
    let default = given
        .replace("cores = [1, 2]", "cores = [0, 2]")
        .replace("core = 1\n", "");
    assert_eq!(
        errors(&default),
        ["c.toml:18:1: task `b` is on core 0, which cluster `global` schedules"]
    );
}

#[test]
fn replenishment_is_for_cluster_tasks_only() {
    let text = on_a_core("{ budget = \"3ms\", period = \"10ms\", replenishment = \"cbs\" }");
    assert_eq!(
        errors(&text),
        [
            "c.toml:10:66: replenishment chooses how the reservation of a task in a [[cluster]] \
          comes back; on a core in no cluster the core's policy decides"
        ]
    );
}

#[test]
fn replenishment_rules_follow_the_cluster_s_order() {
    let cbs = "reservation = { budget = \"3ms\", period = \"10ms\", replenishment = \"cbs\" }\n";
    assert_refused(
        &fixed(&format!("priority = 1\n{cbs}")),
        "c.toml:17:66: replenishment `cbs` needs order = \"edf\", but cluster `global` orders \
          its reservations by fixed priority",
        "allowed under order = \"fixed-priority\": sporadic, spr",
    );
    let spr = cbs.replace("cbs", "spr");
    assert_refused(
        &edf(&spr),
        "c.toml:16:66: replenishment `spr` needs order = \"fixed-priority\", but cluster \
          `global` orders its reservations by deadline (edf)",
        "allowed under order = \"edf\": sporadic, cbs",
    );
    assert_eq!(
        errors(&edf(&cbs.replace("cbs", "deferrable"))),
        ["c.toml:16:66: unknown replenishment `deferrable`"]
    );
}

#[test]
fn replenishments_are_an_spr_server_s_and_at_most_256() {
    let sporadic = "reservation = { budget = \"3ms\", period = \"10ms\", replenishments = 4 }\n";
    assert_eq!(
        errors(&fixed(&format!("priority = 1\n{sporadic}"))),
        [
            "c.toml:17:67: replenishments is the queue capacity of an SPR server, but this \
          reservation has no queue"
        ]
    );
    let spr = |s: i64| {
        format!(
            "priority = 1\nreservation = {{ budget = \"3ms\", period = \"10ms\", \
             replenishment = \"spr\", replenishments = {s} }}\n"
        )
    };
    assert_eq!(
        errors(&fixed(&spr(257))),
        ["c.toml:17:90: replenishments 257 is outside 1..=256"]
    );
    assert_eq!(
        errors(&fixed(&spr(0))),
        ["c.toml:17:90: replenishments 0 is outside 1..=256"]
    );
    assert_eq!(
        valid(&fixed(&spr(256))).clusters[0].members[0],
        sporadic_member(0, Replenishment::Spr { slots: 256 })
    );
}

#[test]
fn a_cluster_reservation_has_no_non_preemptive_region() {
    let text =
        edf("reservation = { budget = \"3ms\", period = \"10ms\", non-preemptive = \"1ms\" }\n");
    assert_eq!(
        errors(&text),
        ["c.toml:16:67: the clustered scheduler has no non-preemptive regions"]
    );
}

#[test]
fn a_cluster_reservation_is_required_and_checked_as_any() {
    assert_eq!(
        errors(&edf("")),
        [
            "c.toml:11:1: task `a` runs in cluster `global`, but has no reservation: each task \
          of a cluster runs in a sporadic reservation of its own"
        ]
    );
    assert_eq!(
        errors(&edf(
            "reservation = { budget = \"11ms\", period = \"10ms\" }\n"
        )),
        ["c.toml:16:26: budget 11ms is larger than its period 10ms"]
    );
}

#[test]
fn priorities_follow_the_cluster_s_order() {
    assert_refused(
        &fixed(RESERVATION),
        "c.toml:11:1: task `a` has no priority",
        "cluster `global` orders its reservations by fixed priority: allowed: priority = \
         0..=255, larger is more important",
    );
    assert_eq!(
        errors(&fixed(&format!("priority = 300\n{RESERVATION}"))),
        ["c.toml:16:12: priority 300 is outside 0..=255"]
    );
    assert_eq!(
        errors(&edf(&format!("priority = 3\n{RESERVATION}"))),
        [
            "c.toml:16:12: cluster `global` orders its reservations by deadline (edf); priority \
          is only used under order = \"fixed-priority\""
        ]
    );
}

#[test]
fn a_clusters_scripts_may_not_flush_the_cache_or_switch_actions() {
    let with_script = |steps: &str| {
        edf(RESERVATION).replace(
            "period = \"10ms\"\nexecution = \"2ms\"\n",
            &format!("script = [{steps}]\n"),
        )
    };
    let plain = with_script(r#"{ run = "1ms" }, { sleep-for = "9ms" }"#);
    let scenario = valid(&plain);
    assert_eq!(
        script_of(&scenario, 0),
        [Step::Run(Execution::Fixed(ms(1))), Step::SleepFor(ms(9))]
    );
    assert_eq!(scenario.cluster_of_task(0).map(|(k, _)| k), Some(0));
    // Line 14 is the script; `true` starts at column 44 (10 for `script = [`, 15 for the
    // first step, 2 for `, `, 2 for `{ `, 14 for `flush-cache = `, then one more).
    let flush = with_script(r#"{ run = "1ms" }, { flush-cache = true }"#);
    assert_refused(
        &flush,
        "c.toml:14:44: task `a` runs in cluster `global`, where a script cannot flush-cache \
          yet",
        "allowed in a cluster's scripts: run, compute, sleep-for, sleep-until, \
         sleep-until-aligned, sleep-until-next-release, invoke, allocate, terminate and loop; \
         put the task on a core in no cluster for the others",
    );
    // Inside a loop's body too: `{ loop = 2, body = [` fills columns 11-30,
    // `{ flush-cache = ` 31-46, and `true` is at 47.
    let nested = with_script(r#"{ loop = 2, body = [{ flush-cache = true }, { run = "1ms" }] }"#);
    assert_eq!(
        errors(&nested),
        ["c.toml:14:47: task `a` runs in cluster `global`, where a script cannot flush-cache yet"]
    );
}

/// Task `b`, a second member of cluster `global` running `script`, after [`edf`]'s task `a`
/// with `a_extra`, and a `[[group]]` "g" of `a` with a 1 ms quota.
fn two_members(a_extra: &str, script: &str) -> String {
    let with_group = format!("{a_extra}{RESERVATION}");
    format!(
        "{}\n[[task]]\nname = \"b\"\ncluster = \"global\"\n{RESERVATION}script = [{script}]\n",
        edf(&with_group)
    )
    .replace(
        "[[cluster]]",
        "[cost]\nreclaim-per-unit = 10\n\n[[group]]\nname = \"g\"\nquota = \"1ms\"\n\n[[cluster]]",
    )
}

#[test]
fn members_allocate_in_groups_and_terminate_members_of_their_cluster() {
    let scenario = valid(&two_members(
        "group = \"g\"\n",
        r#"{ allocate = 10 }, { terminate = "a", step = "20us" }"#,
    ));
    assert_eq!(scenario.groups.len(), 1);
    assert_eq!(scenario.groups[0].members, [0]);
    let steps = script_of(&scenario, 1);
    assert!(
        matches!(steps[0], Step::Allocate { count: 10, .. }),
        "{steps:?}"
    );
    assert!(
        matches!(&steps[1], Step::Terminate { task, step: Some(step) } if task == "a" && *step == Duration::from_micros(20)),
        "{steps:?}"
    );
    // Without a group the target is reclaimed object by object, in one go.
    valid(&two_members("", r#"{ terminate = "a" }"#));
}

#[test]
fn terminations_stay_within_the_callers_core_or_cluster() {
    // A task on core 0 cannot terminate a member (line 21: the killer's script; `"a"` at
    // column 25 after `script = [{ terminate = `).
    let from_core = format!(
        "{}\n[[task]]\nname = \"killer\"\npriority = 1\nscript = [{{ terminate = \"a\" }}]\n",
        edf(RESERVATION)
    );
    assert_refused(
        &from_core,
        "c.toml:21:25: task `a` is in cluster `global`, but `killer` runs on core 0",
        "allowed: a task on the caller's core, or in the caller's cluster (reclamation runs on \
         the caller's core)",
    );
    // Nor a member a task on core 0: `a`'s script is line 16, `"k"` at column 25.
    let from_member = format!(
        "{}\n[[task]]\nname = \"k\"\npriority = 1\nperiod = \"10ms\"\nexecution = \"1ms\"\n",
        edf(RESERVATION).replace(
            "period = \"10ms\"\nexecution = \"2ms\"\n",
            "script = [{ terminate = \"k\" }]\n"
        )
    );
    assert_eq!(
        errors(&from_member),
        ["c.toml:14:25: task `k` is on core 0, but `a` runs in cluster `global`"]
    );
    // A member cannot terminate its own group: `b` in `g` too. `b`'s script is line 31: the
    // 15 lines of `edf`, `a`'s group and reservation (16-17), a blank line (18), `b`'s
    // [[task]], name, group, cluster and reservation (19-23) and script (24), plus the seven
    // lines of `[cost]` and `[[group]]` put before `[[cluster]]`.
    let own_group = two_members("group = \"g\"\n", r#"{ terminate = "a" }"#)
        .replace("name = \"b\"\n", "name = \"b\"\ngroup = \"g\"\n");
    assert_eq!(
        errors(&own_group),
        ["c.toml:31:25: `b` would terminate its own group with `a`"]
    );
}

#[test]
fn caps_are_not_supported_in_a_cluster() {
    assert_eq!(
        errors(&edf(&format!("cap = \"1/2\"\n{RESERVATION}"))),
        [
            "c.toml:16:7: a bandwidth cap is for vbs processes, but task `a` runs in cluster \
          `global`"
        ]
    );
}

#[test]
fn cluster_tables_are_checked() {
    let cluster = |body: &str| {
        format!(
            "name = \"c\"\npolicy = \"edf\"\ncores = 3\nduration = \"1s\"\n\n\
             [[task]]\nname = \"t\"\nperiod = \"10ms\"\nexecution = \"1ms\"\n\n{body}"
        )
    };
    let one = "[[cluster]]\nname = \"g\"\ncores = [1, 2]\norder = \"edf\"\n";
    assert_eq!(
        errors(&cluster(&one.replace("[1, 2]", "[]"))),
        ["c.toml:13:9: cluster `g` has no cores"]
    );
    assert_eq!(
        errors(&cluster(&one.replace("[1, 2]", "[1, 3, 1]"))),
        [
            "c.toml:13:13: core 3 is not a core of this scenario",
            "c.toml:13:16: core 1 is listed twice in cluster `g`"
        ]
    );
    assert_eq!(
        only_help(&cluster(&one.replace("[1, 2]", "[-1]"))),
        "allowed: 0..=2 (cores = 3)"
    );
    let two = format!("{one}\n{}", one.replace("[1, 2]", "[2]"));
    assert_eq!(
        errors(&cluster(&two)),
        [
            "c.toml:17:8: cluster name `g` is already used",
            "c.toml:18:10: core 2 is in cluster `g` already"
        ]
    );
    assert_eq!(
        errors(&cluster(&one.replace("\"edf\"", "\"rm\""))),
        ["c.toml:14:9: unknown order `rm`"]
    );
    assert_eq!(
        errors(&cluster(&one.replace("\"g\"", "\" \""))),
        ["c.toml:12:8: a cluster name is empty"]
    );
    assert_eq!(
        errors(&cluster(&one.replace("order = \"edf\"\n", ""))),
        ["c.toml:11:1: missing field `order`"]
    );
}

const CORES_HELP: &str = "allowed: cores = [0, 1] (distinct core ids, each in no other cluster)";

#[test]
fn a_scenario_cluster_s_cores_are_ids_not_a_count() {
    // `with_order`'s line 8 is `cores = [1, 2]`; its value starts after `cores = `, at
    // column 9.
    let text = edf(RESERVATION).replace("cores = [1, 2]", "cores = 2");
    assert_refused(
        &text,
        "c.toml:8:9: cluster `global` gives `cores = 2`, a count; in a scenario a cluster \
         lists its cores' ids",
        CORES_HELP,
    );
    // Other types than an integer or an array read as they did before.
    let text = edf(RESERVATION).replace("cores = [1, 2]", "cores = \"2\"");
    assert_refused(
        &text,
        "c.toml:8:9: invalid type: string \"2\"",
        "allowed: an array, like [ ... ]",
    );
    let text = edf(RESERVATION).replace("cores = [1, 2]", "cores = [1, \"2\"]");
    assert_eq!(errors(&text), ["c.toml:8:13: invalid type: string \"2\""]);
}

/// A scenario whose first cluster lists its cores' ids and whose second, `b`, counts them
/// (line 13, `cores = 2`), with a task in each.
const SECOND_CLUSTER_COUNTS: &str = "name = \"c\"\n\
                                     policy = \"fixed-priority\"\n\
                                     cores = 4\n\
                                     duration = \"100ms\"\n\
                                     \n\
                                     [[cluster]]\n\
                                     name = \"a\"\n\
                                     cores = [0, 1]\n\
                                     order = \"edf\"\n\
                                     \n\
                                     [[cluster]]\n\
                                     name = \"b\"\n\
                                     cores = 2\n\
                                     order = \"fixed-priority\"\n\
                                     \n\
                                     [[task]]\n\
                                     name = \"x\"\n\
                                     cluster = \"a\"\n\
                                     period = \"10ms\"\n\
                                     execution = \"2ms\"\n\
                                     reservation = { budget = \"3ms\", period = \"10ms\" }\n\
                                     \n\
                                     [[task]]\n\
                                     name = \"y\"\n\
                                     cluster = \"b\"\n\
                                     priority = 1\n\
                                     period = \"10ms\"\n\
                                     execution = \"2ms\"\n\
                                     reservation = { budget = \"3ms\", period = \"10ms\" }\n";

#[test]
fn a_later_cluster_that_counts_its_cores_is_refused_at_the_count() {
    // Line 13 is `cores = 2` in cluster `b`: the count starts after `cores = `, at column 9.
    // Nothing else is reported: `b` is known by its name, so task `y` finds it.
    assert_eq!(
        kind_of(SECOND_CLUSTER_COUNTS, "c.toml").ok(),
        Some(FileKind::Scenario)
    );
    assert_refused(
        SECOND_CLUSTER_COUNTS,
        "c.toml:13:9: cluster `b` gives `cores = 2`, a count; in a scenario a cluster lists \
         its cores' ids",
        CORES_HELP,
    );
    // Listing the ids instead makes the file valid.
    let fixed = valid(&SECOND_CLUSTER_COUNTS.replace("cores = 2\n", "cores = [2, 3]\n"));
    assert_eq!(fixed.clusters[1].cores, [2, 3]);
    // Without scenario keys, the first cluster's ids make the file a scenario; with the
    // clusters the other way round, the first one's count makes it an MC-IPC system.
    let ids_first = "[[cluster]]\nname = \"a\"\ncores = [0, 1]\n\n\
                     [[cluster]]\nname = \"b\"\ncores = 2\n";
    assert_eq!(kind_of(ids_first, "c.toml").ok(), Some(FileKind::Scenario));
    let count_first = "[[cluster]]\nname = \"b\"\ncores = 2\n\n\
                       [[cluster]]\nname = \"a\"\ncores = [0, 1]\n";
    assert_eq!(kind_of(count_first, "c.toml").ok(), Some(FileKind::McIpc));
}

#[test]
fn every_mc_ipc_file_is_still_an_mc_ipc_system() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/mcipc");
    let mut seen = 0;
    for entry in fs::read_dir(&dir).expect("scenarios/mcipc exists") {
        let path = entry.expect("a directory entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            let text = fs::read_to_string(&path).expect("readable");
            let kind = kind_of(&text, &path.display().to_string()).ok();
            assert_eq!(kind, Some(FileKind::McIpc), "{}", path.display());
            seen += 1;
        }
    }
    assert!(seen >= 4, "only {seen} MC-IPC files");
    // A scenario with clusters is a scenario, even without scenario keys but its clusters.
    assert_eq!(
        kind_of(&edf(RESERVATION), "c.toml").ok(),
        Some(FileKind::Scenario)
    );
}

/// Twenty-six lines: a fixed-priority cluster of cores 1 and 2 with a cycle of 20 ms, task
/// `pinned` a time partition on core 2 (line 18, its slots written out of order) and task
/// `critical` a high-criticality reservation (line 26).
const PARTITIONED: &str = "name = \"mixed\"\n\
                           policy = \"fixed-priority\"\n\
                           cores = 3\n\
                           duration = \"100ms\"\n\
                           \n\
                           [[cluster]]\n\
                           name = \"global\"\n\
                           cores = [1, 2]\n\
                           order = \"fixed-priority\"\n\
                           cycle = \"20ms\"\n\
                           \n\
                           [[task]]\n\
                           name = \"pinned\"\n\
                           cluster = \"global\"\n\
                           priority = 5\n\
                           period = \"20ms\"\n\
                           execution = \"4ms\"\n\
                           reservation = { core = 2, slots = [[\"10ms\", \"12ms\"], [\"0ms\", \"5ms\"]] }\n\
                           \n\
                           [[task]]\n\
                           name = \"critical\"\n\
                           cluster = \"global\"\n\
                           priority = 4\n\
                           period = \"10ms\"\n\
                           execution = \"2ms\"\n\
                           reservation = { budget = \"3ms\", period = \"10ms\", criticality = \"high\", low-budget = \"2ms\" }\n";

/// `PARTITIONED` under EDF order, without its priorities (lines 15 and 23 gone).
fn partitioned_under_edf() -> String {
    partitioned("order = \"fixed-priority\"", "order = \"edf\"")
        .replace("priority = 5\n", "")
        .replace("priority = 4\n", "")
}

/// `PARTITIONED` with `old` written as `new`.
fn partitioned(old: &str, new: &str) -> String {
    assert!(PARTITIONED.contains(old), "{old}");
    PARTITIONED.replacen(old, new, 1)
}

#[test]
fn partitions_and_high_criticality_read_into_the_exact_scenario() {
    let scenario = valid(PARTITIONED);
    assert_eq!(
        scenario.clusters,
        [ClusterSpec {
            slack_reclamation: false,
            name: "global".into(),
            cores: vec![1, 2],
            order: SporadicOrder::FixedPriority,
            cycle: ms(20),
            members: vec![
                ClusterMember {
                    task: 0,
                    kind: MemberKind::Partition {
                        core: 2,
                        // Sorted by start.
                        slots: vec![(ms(0), ms(5)), (ms(10), ms(12))],
                    },
                },
                ClusterMember {
                    task: 1,
                    kind: MemberKind::Sporadic {
                        replenishment: Replenishment::Sporadic,
                        low_budget: Some(ms(2)),
                    },
                },
            ],
        }]
    );
    assert_eq!(
        scenario.tasks,
        [
            // A partition has no (e, p): no reservation in the model.
            TaskSpec {
                name: "pinned".into(),
                core: 1,
                priority: Some(Priority(5)),
                reservation: None,
                deadline: Some(ms(20)),
                behaviour: Behaviour::Periodic {
                    period: ms(20),
                    offset: Duration::ZERO,
                    execution: Execution::Fixed(ms(4)),
                },
            },
            TaskSpec {
                name: "critical".into(),
                ..periodic("critical", 1, Reservation::new(ms(3), ms(10)), Some(4))
            },
        ]
    );
    // `criticality = "low"` is the default, written out.
    let low = partitioned(
        "criticality = \"high\", low-budget = \"2ms\"",
        "criticality = \"low\"",
    );
    assert_eq!(
        valid(&low).clusters[0].members[1].kind,
        sporadic(Replenishment::Sporadic)
    );
}

/// Partitions on different cores may share instants; on one core they may touch, and a
/// low budget may equal the budget; under EDF order a partition has no priority.
#[test]
fn partitions_on_one_core_may_touch_and_on_two_may_overlap() {
    let more = format!(
        "{PARTITIONED}\n[[task]]\nname = \"left\"\ncluster = \"global\"\npriority = 6\n\
         period = \"20ms\"\nexecution = \"1ms\"\n\
         reservation = {{ core = 1, slots = [[\"0ms\", \"20ms\"]] }}\n\
         \n[[task]]\nname = \"after\"\ncluster = \"global\"\npriority = 6\n\
         period = \"20ms\"\nexecution = \"1ms\"\n\
         reservation = {{ core = 2, slots = [[\"5ms\", \"10ms\"], [\"12ms\", \"20ms\"]] }}\n"
    )
    .replace("low-budget = \"2ms\"", "low-budget = \"3ms\"");
    let scenario = valid(&more);
    let kinds: Vec<&MemberKind> = scenario.clusters[0]
        .members
        .iter()
        .map(|m| &m.kind)
        .collect();
    assert_eq!(
        kinds[3],
        &MemberKind::Partition {
            core: 2,
            slots: vec![(ms(5), ms(10)), (ms(12), ms(20))]
        }
    );
    let edf = partitioned_under_edf();
    assert_eq!(valid(&edf).tasks[0].priority, None);
}

#[test]
fn a_cycle_is_required_exactly_with_a_partition() {
    assert_refused(
        &partitioned("cycle = \"20ms\"\n", ""),
        "c.toml:7:8: cluster `global` has no cycle, but task `pinned` in it is a time partition",
        "add cycle = \"20ms\" to the cluster: H, the cycle its partitions' slots repeat with \
         (every slot ends within it)",
    );
    let no_partition = partitioned(
        "reservation = { core = 2, slots = [[\"10ms\", \"12ms\"], [\"0ms\", \"5ms\"]] }",
        RESERVATION.trim_end(),
    );
    assert_eq!(
        errors(&no_partition),
        ["c.toml:10:9: cluster `global` has a cycle, but none of its tasks is a time partition"]
    );
    assert_eq!(
        errors(&partitioned("cycle = \"20ms\"", "cycle = \"0ms\"")),
        ["c.toml:10:9: cycle cannot be zero"]
    );
    assert_eq!(
        errors(&partitioned("cycle = \"20ms\"", "cycle = 20")),
        ["c.toml:10:9: 20 has no unit"]
    );
}

#[test]
fn a_partition_has_core_and_slots_and_nothing_else() {
    let slots = "slots = [[\"10ms\", \"12ms\"], [\"0ms\", \"5ms\"]]";
    for (extra, column) in [
        ("budget = \"3ms\"", 36),
        ("period = \"10ms\"", 36),
        ("replenishment = \"sporadic\"", 43),
        ("replenishments = 4", 44),
        ("non-preemptive = \"1ms\"", 44),
        ("criticality = \"high\"", 41),
        ("low-budget = \"1ms\"", 40),
    ] {
        let key = extra.split(' ').next().unwrap_or_default();
        assert_eq!(
            errors(&partitioned("core = 2, ", &format!("core = 2, {extra}, "))),
            [format!(
                "c.toml:18:{column}: a time partition (core and slots) has no {key}: it runs in \
                 its slots, with no budget"
            )],
            "{extra}"
        );
    }
    assert_eq!(
        only_help(&partitioned("core = 2, ", "core = 2, budget = \"3ms\", ")),
        "allowed in a time partition's reservation: core (one of its cluster's cores) and \
         slots; a sporadic reservation has budget and period instead"
    );
    assert_refused(
        &partitioned("core = 2, ", ""),
        "c.toml:18:15: this time partition has slots but no core",
        "add core = ..., the core of cluster `global` it runs on (allowed: 1, 2)",
    );
    assert_eq!(
        errors(&partitioned(&format!(", {slots}"), "")),
        ["c.toml:18:15: this time partition has a core but no slots"]
    );
    for core in ["0", "3", "-1"] {
        assert_eq!(
            errors(&partitioned("core = 2", &format!("core = {core}"))),
            [format!(
                "c.toml:18:24: core {core} is not a core of cluster `global`"
            )]
        );
    }
    assert_eq!(
        only_help(&partitioned("core = 2", "core = 0")),
        "allowed: one of the cluster's cores: 1, 2"
    );
}

#[test]
fn a_partition_s_slots_are_non_empty_within_the_cycle_and_apart() {
    let slots = "[[\"10ms\", \"12ms\"], [\"0ms\", \"5ms\"]]";
    let with = |new: &str| partitioned(slots, new);
    assert_eq!(
        errors(&with("[]")),
        ["c.toml:18:35: a time partition needs at least one slot"]
    );
    assert_eq!(
        errors(&with("[[\"5ms\", \"5ms\"]]")),
        ["c.toml:18:36: slot [5ms, 5ms) is empty: it must start before it ends"]
    );
    assert_eq!(
        errors(&with("[[\"6ms\", \"5ms\"]]")),
        ["c.toml:18:36: slot [6ms, 5ms) is empty: it must start before it ends"]
    );
    assert_refused(
        &with("[[\"15ms\", \"21ms\"]]"),
        "c.toml:18:36: slot [15ms, 21ms) ends after the cycle 20ms of cluster `global`",
        "allowed: slots within [0, 20ms), the cycle they repeat with",
    );
    // A slot may end at the cycle.
    assert!(parse(&with("[[\"15ms\", \"20ms\"]]"), "c.toml").is_ok());
    assert_eq!(
        errors(&with("[[\"1ms\"]]")),
        ["c.toml:18:36: a slot needs two times, [start, end), but has 1"]
    );
    assert_eq!(
        errors(&with("[[\"1ms\", 2]]")),
        ["c.toml:18:44: 2 has no unit"]
    );
    // Sorted first: the later slot is the one reported.
    assert_refused(
        &with("[[\"5ms\", \"8ms\"], [\"0ms\", \"5ms\"]]"),
        "c.toml:18:36: slots [0ns, 5ms) and [5ms, 8ms) of one partition touch",
        "allowed: one partition's slots apart from each other, with a gap between them; merge \
         slots that meet into one",
    );
    assert_eq!(
        errors(&with("[[\"0ms\", \"5ms\"], [\"4ms\", \"8ms\"]]")),
        ["c.toml:18:52: slots [0ns, 5ms) and [4ms, 8ms) of one partition overlap"]
    );
}

#[test]
fn partitions_on_one_core_do_not_overlap() {
    let second = |core: u16, slot: &str| {
        format!(
            "{PARTITIONED}\n[[task]]\nname = \"second\"\ncluster = \"global\"\npriority = 6\n\
             period = \"20ms\"\nexecution = \"1ms\"\n\
             reservation = {{ core = {core}, slots = [[\"15ms\", \"16ms\"], {slot}] }}\n"
        )
    };
    assert_refused(
        &second(2, "[\"4ms\", \"6ms\"]"),
        "c.toml:34:54: slot [4ms, 6ms) overlaps slot [0ns, 5ms) of task `pinned`'s partition \
          on core 2",
        "allowed: partitions on one core whose slots do not overlap (they may touch); move \
         one, or pin it to another core",
    );
    assert!(parse(&second(1, "[\"4ms\", \"6ms\"]"), "c.toml").is_ok());
}

#[test]
fn criticality_is_low_or_high_and_high_needs_a_low_budget_within_the_budget() {
    let high = "criticality = \"high\", low-budget = \"2ms\"";
    assert_refused(
        &partitioned(high, "criticality = \"medium\""),
        "c.toml:26:64: unknown criticality `medium`",
        "allowed: low (the default) or high (Vestal's model: budget is e^H and low-budget e^L, \
         0 < low-budget <= budget)",
    );
    assert_eq!(
        errors(&partitioned(high, "criticality = \"high\"")),
        ["c.toml:26:64: a high-criticality reservation needs a low-budget"]
    );
    assert_eq!(
        errors(&partitioned(high, "low-budget = \"2ms\"")),
        [
            "c.toml:26:63: low-budget is a high-criticality reservation's e^L, but this \
          reservation is of low criticality"
        ]
    );
    assert_eq!(
        errors(&partitioned(
            high,
            "criticality = \"low\", low-budget = \"2ms\""
        )),
        [
            "c.toml:26:84: low-budget is a high-criticality reservation's e^L, but this \
          reservation is of low criticality"
        ]
    );
    assert_eq!(
        errors(&partitioned("low-budget = \"2ms\"", "low-budget = \"4ms\"")),
        ["c.toml:26:85: low-budget 4ms is larger than the budget 3ms"]
    );
    assert_eq!(
        errors(&partitioned("low-budget = \"2ms\"", "low-budget = \"0ms\"")),
        ["c.toml:26:85: low-budget cannot be zero"]
    );
}

/// Vestal's monitor needs the sporadic rule's per-job budget: servers that keep their
/// budget across jobs are of low criticality only.
#[test]
fn high_criticality_needs_the_sporadic_rule() {
    let spr = partitioned(
        "criticality = \"high\"",
        "replenishment = \"spr\", criticality = \"high\"",
    );
    assert_eq!(
        errors(&spr),
        [
            "c.toml:26:66: an SPR server is of low criticality only, but this reservation is of \
          high criticality"
        ]
    );
    let cbs = partitioned_under_edf().replace(
        "criticality = \"high\"",
        "replenishment = \"cbs\", criticality = \"high\"",
    );
    assert_eq!(
        errors(&cbs),
        [
            "c.toml:24:66: a constant-bandwidth server is of low criticality only, but this \
          reservation is of high criticality"
        ]
    );
    assert!(parse(
        &partitioned(
            "criticality = \"high\"",
            "replenishment = \"sporadic\", criticality = \"high\""
        ),
        "c.toml"
    )
    .is_ok());
}

#[test]
fn partition_and_criticality_keys_are_refused_outside_clusters() {
    let on_core = |extra: &str| {
        on_a_core(&format!(
            "{{ budget = \"3ms\", period = \"10ms\", {extra} }}"
        ))
    };
    assert_eq!(
        errors(&on_core("criticality = \"high\", low-budget = \"1ms\"")),
        [
            "c.toml:10:64: criticality is a [[cluster]]'s (Vestal's mode switch in the clustered \
             scheduler); the policies of cores in no cluster have no use for it",
            "c.toml:10:85: low-budget is a high-criticality reservation's in a [[cluster]]; the \
             policies of cores in no cluster have no use for it"
        ]
    );
    assert_eq!(
        errors(&on_core("core = 0, slots = [[\"0ms\", \"1ms\"]]")),
        [
            "c.toml:10:57: core in a reservation pins a [[cluster]]'s time partition to one of \
             its cores; the policies of cores in no cluster have no use for it",
            "c.toml:10:68: slots make a [[cluster]]'s time partition; the policies of cores in \
             no cluster have no use for them"
        ]
    );
    // A partition's reservation on a core: the keys are refused, not a missing budget.
    let bare = on_core("x").replace("budget = \"3ms\", period = \"10ms\", x", "slots = []");
    assert_eq!(
        errors(&bare),
        [
            "c.toml:10:25: slots make a [[cluster]]'s time partition; the policies of cores in no \
          cluster have no use for them"
        ]
    );
    let no_budget = on_core("x")
        .replace("budget = \"3ms\", ", "")
        .replace(", x", "");
    assert_eq!(
        errors(&no_budget),
        ["c.toml:10:15: this reservation has no budget"]
    );
}

/// A partition's share of its cluster is its slots' time over the cycle: 7/20 with
/// `critical`'s 3/10 and two more reservations of 7/10 is 2.05 > 2 cores.
#[test]
fn a_partition_counts_its_slots_share_in_the_cluster_s_bandwidth() {
    let heavy = |name: &str| {
        format!(
            "\n[[task]]\nname = \"{name}\"\ncluster = \"global\"\npriority = 1\n\
             period = \"10ms\"\nexecution = \"2ms\"\n\
             reservation = {{ budget = \"7ms\", period = \"10ms\" }}\n"
        )
    };
    assert_eq!(
        warnings(&format!("{PARTITIONED}{}", heavy("h1"))),
        Vec::<String>::new(),
        "7/20 + 3/10 + 7/10 = 1.35"
    );
    assert_eq!(
        warnings(&format!("{PARTITIONED}{}{}", heavy("h1"), heavy("h2"))),
        [
            "c.toml:42:15: cluster `global`'s bandwidth reaches 2.050 with task `h2` (sum of \
          budget over period, and of slot time over cycle), above its 2 cores: the cluster is \
          overloaded"
        ]
    );
}

/// A scenario with server `S` (one run of 2 ms, or a body), and `task` after it.
fn with_server(server: &str, task: &str) -> String {
    format!(
        "name = \"s\"\npolicy = \"fixed-priority\"\ncores = 2\nduration = \"100ms\"\n\n\
         [[cluster]]\nname = \"pair\"\ncores = [0, 1]\norder = \"fixed-priority\"\n\n\
         [[server]]\nname = \"S\"\ngate = \"mc-ipc\"\n{server}\n\n[[task]]\nname = \"a\"\n{task}"
    )
}

#[test]
fn a_call_may_ask_a_one_run_server_for_its_operation() {
    let member = "cluster = \"pair\"\npriority = 1\n\
                  reservation = { budget = \"2ms\", period = \"10ms\" }\n\
                  script = [{ invoke = \"S\", operation = \"1ms\" }, \
                  { sleep-until-next-release = \"10ms\" }]\n";
    let scenario = valid(&with_server("operation = \"2ms\"", member));
    assert_eq!(
        script_of(&scenario, 0),
        [
            Step::Invoke {
                server: 0,
                operation: Some(Execution::Fixed(ms(1)))
            },
            Step::SleepUntilNextRelease(ms(10)),
        ]
    );
    // Line 21 is the script: `script = [{ invoke = "S", ` fills columns 1-26, `operation = `
    // 27-38, and its value starts at 39.
    let body = with_server("body = [{ run = \"2ms\" }]", member);
    assert_eq!(
        errors(&body),
        ["c.toml:21:39: server `S` has a body, so a call cannot ask it for an operation"]
    );
    // `{ run = "1ms", operation = "1ms" }`: the operation goes with invoke only; its value
    // starts at column 38.
    let lone = with_server(
        "operation = \"2ms\"",
        &member.replace(
            "{ invoke = \"S\", operation = \"1ms\" }",
            "{ run = \"1ms\", operation = \"1ms\" }",
        ),
    );
    assert_eq!(
        errors(&lone),
        ["c.toml:21:38: operation only goes with invoke"]
    );
    // A sleep to the next release needs a period above zero.
    let zero = with_server(
        "operation = \"2ms\"",
        &member.replace(
            "sleep-until-next-release = \"10ms\"",
            "sleep-until-next-release = \"0ms\"",
        ),
    );
    assert_eq!(errors(&zero).len(), 1, "{:?}", errors(&zero));
}

#[test]
fn a_clusters_member_calls_no_server_with_a_priority() {
    let member = "cluster = \"pair\"\npriority = 1\n\
                  reservation = { budget = \"2ms\", period = \"10ms\" }\n\
                  script = [{ invoke = \"S\" }]\n";
    let text = with_server("operation = \"2ms\"\npriority = 5", member)
        .replace("gate = \"mc-ipc\"", "gate = \"fifo-ipc\"");
    // Line 15 is `priority = 5`, its value at column 12.
    assert_eq!(
        errors(&text),
        [
            "c.toml:15:12: server `S` runs at priority 5, but its caller `a` runs in a cluster, \
             whose reservations keep their own priorities"
        ]
    );
}

#[test]
fn a_member_may_be_best_effort() {
    let scenario = valid(&edf("reservation = \"best-effort\"\n"));
    assert_eq!(scenario.clusters[0].members[0].kind, MemberKind::BestEffort);
    assert_eq!(scenario.tasks[0].reservation, None);
    assert_eq!(scenario.tasks[0].priority, None);
    // Under fixed priority too, and then without a priority: it runs below every level.
    let scenario = valid(&fixed("reservation = \"best-effort\"\n"));
    assert_eq!(scenario.clusters[0].members[0].kind, MemberKind::BestEffort);
    // Line 16 holds the extra keys; `3` is at column 12 after `priority = `.
    let with_priority = fixed("priority = 3\nreservation = \"best-effort\"\n");
    assert_eq!(
        errors(&with_priority),
        [
            "c.toml:16:12: task `a` is best-effort in cluster `global`, below every \
          reservation: it has no priority"
        ]
    );
    // `"gold"` starts at column 15 after `reservation = `.
    let unknown = edf("reservation = \"gold\"\n");
    assert_refused(
        &unknown,
        "c.toml:16:15: no reservation is called `gold`",
        "allowed: \"best-effort\", the names given so far in cluster `global` (a reservation \
         table named with name = ... before this task); or a table like { budget = \"2ms\", \
         period = \"10ms\" }",
    );
    // Outside a cluster a reservation is a table (line 10, column 15).
    let on_a_core = on_a_core("\"best-effort\"");
    assert_eq!(
        errors(&on_a_core),
        [
            "c.toml:10:15: reservation `best-effort` is a name, but this task runs on a core of \
          its own"
        ]
    );
}

#[test]
fn slack_reclamation_is_a_clusters_choice() {
    let off = valid(&edf(RESERVATION));
    assert!(!off.clusters[0].slack_reclamation);
    let on = edf(RESERVATION).replace(
        "order = \"edf\"\n",
        "order = \"edf\"\nslack-reclamation = true\n",
    );
    assert!(valid(&on).clusters[0].slack_reclamation);
    // Line 10 after `[[cluster]]`'s name, cores and order; the value at column 21.
    let wrong = on.replace("slack-reclamation = true", "slack-reclamation = \"yes\"");
    assert_refused(
        &wrong,
        "c.toml:10:21: invalid type: string \"yes\"",
        "allowed: true or false, without quotes",
    );
}

/// `with_order` plus task `b` in the same cluster (its keys, `extra`, from line 23 when
/// `owner` is one line) and task `o` in a second cluster `other` on core 0, in a reservation
/// named `O`.
fn with_sharer(order: &str, owner: &str, extra: &str) -> String {
    format!(
        "{}\n[[task]]\nname = \"b\"\ncluster = \"global\"\nperiod = \"20ms\"\nexecution = \"1ms\"\n\
         {extra}\n[[cluster]]\nname = \"other\"\ncores = [0]\norder = \"edf\"\n\n[[task]]\n\
         name = \"o\"\ncluster = \"other\"\nperiod = \"10ms\"\nexecution = \"1ms\"\n\
         reservation = {{ name = \"O\", budget = \"2ms\", period = \"10ms\" }}\n",
        with_order(order, owner)
    )
}

#[test]
fn members_may_share_a_named_reservation() {
    let owner =
        "priority = 4\nreservation = { name = \"R\", budget = \"3ms\", period = \"10ms\" }\n";
    let scenario = valid(&with_sharer(
        "fixed-priority",
        owner,
        "reservation = \"R\"\n",
    ));
    let members = &scenario.clusters[0].members;
    assert_eq!(members.len(), 2);
    assert_eq!(members[0].kind, sporadic(Replenishment::Sporadic));
    assert_eq!(members[1].kind, MemberKind::Shared { owner: 0 });
    // The owner keeps the reservation and the priority; the sharer has neither of its own.
    assert_eq!(
        scenario.tasks[0].reservation,
        Some(Reservation::new(ms(3), ms(10)))
    );
    assert_eq!(scenario.tasks[0].priority, Some(Priority(4)));
    assert_eq!(scenario.tasks[1].reservation, None);
    assert_eq!(scenario.tasks[1].priority, None);
    // A partition can be shared too.
    let partition = "reservation = { name = \"P\", core = 1, slots = [[\"0ms\", \"5ms\"]] }\n";
    let text = with_sharer("edf", partition, "reservation = \"P\"\n").replace(
        "order = \"edf\"\n\n[[task]]\nname = \"a\"",
        "order = \"edf\"\ncycle = \"10ms\"\n\n[[task]]\nname = \"a\"",
    );
    let scenario = valid(&text);
    assert_eq!(
        scenario.clusters[0].members[1].kind,
        MemberKind::Shared { owner: 0 }
    );
}

#[test]
fn a_shared_reservation_is_named_before_and_in_the_same_cluster() {
    let owner = "reservation = { name = \"R\", budget = \"3ms\", period = \"10ms\" }\n";
    // The sharer's `reservation` is on line 23, its value at column 15.
    let elsewhere = with_sharer("edf", owner, "reservation = \"O\"\n");
    let other_first = elsewhere.replace(
        "reservation = \"O\"",
        "reservation = { budget = \"1ms\", period = \"10ms\" }",
    );
    // `O` is named in a later cluster's task: unknown here, since names come before use.
    assert_eq!(
        errors(&elsewhere),
        ["c.toml:23:15: no reservation is called `O`"]
    );
    assert!(only_help(&elsewhere).starts_with("allowed: \"R\", \"best-effort\", the names"));
    valid(&other_first);
    // Named first, in another cluster: `O` is `o`'s, in `other`.
    let line = other_first.lines().count() + 7;
    let from_other = format!(
        "{other_first}\n[[task]]\nname = \"d\"\ncluster = \"global\"\nperiod = \"10ms\"\n\
         execution = \"1ms\"\nreservation = \"O\"\n"
    );
    assert_eq!(
        errors(&from_other),
        [format!(
            "c.toml:{line}:15: reservation `O` is task `o`'s in cluster `other`, but this task \
             runs in cluster `global`"
        )]
    );
    // A priority on a sharer is refused at the priority (line 24 after a two-line owner,
    // column 12).
    let with_priority = with_sharer(
        "fixed-priority",
        "priority = 4\nreservation = { name = \"R\", budget = \"3ms\", period = \"10ms\" }\n",
        "priority = 2\nreservation = \"R\"\n",
    );
    assert_eq!(
        errors(&with_priority),
        [
            "c.toml:24:12: task `b` shares reservation `R` in cluster `global`, and runs at that \
          reservation's priority"
        ]
    );
    // Names are unique and not `best-effort` (column 24 in the table).
    let twice = with_sharer(
        "edf",
        owner,
        "reservation = { name = \"R\", budget = \"1ms\", period = \"10ms\" }\n",
    );
    assert_eq!(
        errors(&twice),
        ["c.toml:23:24: reservation name `R` is task `a`'s already"]
    );
    let reserved =
        edf("reservation = { name = \"best-effort\", budget = \"1ms\", period = \"10ms\" }\n");
    assert_eq!(
        errors(&reserved),
        ["c.toml:16:24: `best-effort` names the cluster's lowest level, not a reservation"]
    );
    // Outside a cluster a reservation has no name (line 10, column 24).
    let on_a_core = on_a_core("{ name = \"R\", budget = \"1ms\", period = \"10ms\" }");
    assert_eq!(
        errors(&on_a_core),
        [
            "c.toml:10:24: a reservation's name lets later tasks of its [[cluster]] share it; a \
          task on a core of its own has its reservation to itself"
        ]
    );
}

/// `with_sharer` whose owner `a` names a best-effort reservation `bg`, shared by `b` and by a
/// last task `d` of the same cluster.
fn best_effort_shared(order: &str) -> String {
    let owner = "reservation = { name = \"bg\", best-effort = true }\n";
    format!(
        "{}\n[[task]]\nname = \"d\"\ncluster = \"global\"\nperiod = \"30ms\"\n\
         execution = \"1ms\"\nreservation = \"bg\"\n",
        with_sharer(order, owner, "reservation = \"bg\"\n")
    )
}

#[test]
fn members_may_share_a_named_best_effort_reservation() {
    for order in ["fixed-priority", "edf"] {
        let scenario = valid(&best_effort_shared(order));
        let members = &scenario.clusters[0].members;
        // `a` (task 0) owns the level; `b` (1) and `d` (3, after `o`) are its other threads.
        assert_eq!(
            members,
            &[
                ClusterMember {
                    task: 0,
                    kind: MemberKind::BestEffort
                },
                ClusterMember {
                    task: 1,
                    kind: MemberKind::Shared { owner: 0 }
                },
                ClusterMember {
                    task: 3,
                    kind: MemberKind::Shared { owner: 0 }
                },
            ]
        );
        for task in [0, 1, 3] {
            assert_eq!(scenario.tasks[task].reservation, None, "task {task}");
            assert_eq!(scenario.tasks[task].priority, None, "task {task}");
        }
    }
    // The string form is unchanged, and the table alone is the same level.
    let string = valid(&edf("reservation = \"best-effort\"\n"));
    let table = valid(&edf("reservation = { best-effort = true }\n"));
    assert_eq!(string.clusters, table.clusters);
    assert_eq!(table.clusters[0].members[0].kind, MemberKind::BestEffort);
}

#[test]
fn a_best_effort_table_has_no_budget_or_partition_keys() {
    // Line 16; after `reservation = { best-effort = true, ` the budget's value is at column
    // 46 and the period's at 62.
    let budget = edf("reservation = { best-effort = true, budget = \"2ms\", period = \"10ms\" }\n");
    assert_eq!(
        errors(&budget),
        [
            "c.toml:16:46: a best-effort reservation has no budget: it runs below every \
             reservation of its cluster, on no budget",
            "c.toml:16:62: a best-effort reservation has no period: it runs below every \
             reservation of its cluster, on no budget",
        ]
    );
    // Each sporadic key on its own, its value at column 50 after `..., <key> = `.
    for (key, value) in [
        ("replenishment", "\"cbs\""),
        ("replenishments", "4"),
        ("non-preemptive", "\"1ms\""),
        ("criticality", "\"high\""),
        ("low-budget", "\"1ms\""),
    ] {
        let text = edf(&format!(
            "reservation = {{ best-effort = true, {key} = {value} }}\n"
        ));
        let column = 37 + key.len() + 3;
        assert_refused(
            &text,
            &format!(
                "c.toml:16:{column}: a best-effort reservation has no {key}: it runs below \
                 every reservation of its cluster, on no budget"
            ),
            "allowed beside best-effort = true: name (for later members of the cluster to \
             share it); remove this key, or remove best-effort for a reservation with a budget \
             and a period",
        );
    }
    // A partition's core too, without asking the cluster for a cycle (`1` at column 44).
    let core = edf("reservation = { best-effort = true, core = 1 }\n");
    assert_eq!(
        errors(&core),
        [
            "c.toml:16:44: a best-effort reservation has no core: it runs below every reservation \
          of its cluster, on no budget"
        ]
    );
}

#[test]
fn best_effort_false_is_refused_not_ignored() {
    // `false` at column 31 after `reservation = { best-effort = `.
    let text = edf("reservation = { best-effort = false, budget = \"2ms\", period = \"10ms\" }\n");
    assert_refused(
        &text,
        "c.toml:16:31: best-effort = false says nothing: a reservation is sporadic by its \
          budget and period, or a time partition by its core and slots",
        "allowed: best-effort = true (with at most a name), or no best-effort key at all",
    );
}

#[test]
fn a_named_best_effort_reservation_follows_the_member_rules() {
    // A priority on the owner is refused as for "best-effort" (line 16, column 12).
    let with_priority =
        fixed("priority = 3\nreservation = { name = \"bg\", best-effort = true }\n");
    assert_eq!(
        errors(&with_priority),
        [
            "c.toml:16:12: task `a` is best-effort in cluster `global`, below every \
          reservation: it has no priority"
        ]
    );
    // So is one on a sharer, best-effort too (line 23 after a one-line owner, column 12).
    let sharer_priority = with_sharer(
        "fixed-priority",
        "reservation = { name = \"bg\", best-effort = true }\n",
        "priority = 2\nreservation = \"bg\"\n",
    );
    assert_eq!(
        errors(&sharer_priority),
        [
            "c.toml:23:12: task `b` is best-effort in cluster `global`, below every \
             reservation: it has no priority"
        ]
    );
    // Names: not `best-effort`, not empty, not another reservation's (column 24).
    let reserved = edf("reservation = { name = \"best-effort\", best-effort = true }\n");
    assert_eq!(
        errors(&reserved),
        ["c.toml:16:24: `best-effort` names the cluster's lowest level, not a reservation"]
    );
    let empty = edf("reservation = { name = \"\", best-effort = true }\n");
    assert_eq!(
        errors(&empty),
        ["c.toml:16:24: a reservation name cannot be empty"]
    );
    let twice = with_sharer(
        "edf",
        "reservation = { name = \"R\", budget = \"3ms\", period = \"10ms\" }\n",
        "reservation = { name = \"R\", best-effort = true }\n",
    );
    assert_eq!(
        errors(&twice),
        ["c.toml:23:24: reservation name `R` is task `a`'s already"]
    );
    // A name used before its best-effort table is unknown (line 16, column 15).
    let before = with_sharer(
        "edf",
        "reservation = \"bg\"\n",
        "reservation = { name = \"bg\", best-effort = true }\n",
    );
    assert_eq!(
        errors(&before),
        ["c.toml:16:15: no reservation is called `bg`"]
    );
    // Outside a cluster the key is refused, as "best-effort" is (line 10, `true` at column 31).
    let on_a_core = on_a_core("{ best-effort = true }");
    assert_refused(
        &on_a_core,
        "c.toml:10:31: best-effort is a [[cluster]]'s lowest level, below its reservations; \
             a task on a core of its own runs by its core's policy",
        "allowed: best-effort only in the reservation of a task with cluster = ...; on a core \
         of its own, give a table like { budget = \"2ms\", period = \"10ms\" }",
    );
}
