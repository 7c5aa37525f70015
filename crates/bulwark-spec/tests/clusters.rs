//! `[[cluster]]` tables and the tasks that run in them: valid files read into exactly the
//! model written here by hand, and each wrong file is refused with the error and the place
//! worked out by hand (lines and columns count from 1).

use std::fs;
use std::path::Path;

use bulwark_core::{Duration, Priority};
use bulwark_spec::system::{kind_of, FileKind};
use bulwark_spec::{
    parse, parse_checked, Behaviour, ClusterSpec, CostModel, Execution, PolicyKind, Replenishment,
    Reservation, Scenario, SporadicOrder, TaskSpec,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

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
            name: "global".into(),
            cores: vec![2, 1],
            order: SporadicOrder::EarliestDeadlineFirst,
            members: vec![
                (1, Replenishment::Sporadic),
                (2, Replenishment::ConstantBandwidth),
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
    };
    let scenario = valid(text);
    assert_eq!(scenario, expected);
    assert_eq!(scenario.cluster_of(0), None);
    assert_eq!(scenario.cluster_of(1), Some(0));
    assert_eq!(scenario.cluster_of_task(0), None);
    assert_eq!(
        scenario.cluster_of_task(2),
        Some((0, Replenishment::ConstantBandwidth))
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
                name: "left".into(),
                cores: vec![0, 1],
                order: SporadicOrder::FixedPriority,
                members: vec![
                    (0, Replenishment::Spr { slots: 16 }),
                    (3, Replenishment::Spr { slots: 8 }),
                ],
            },
            ClusterSpec {
                name: "right".into(),
                cores: vec![3],
                order: SporadicOrder::EarliestDeadlineFirst,
                members: vec![(1, Replenishment::Sporadic)],
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
    let (_, warnings) = parse_checked(&text, "c.toml").expect("valid");
    assert!(warnings.is_empty(), "{warnings:?}");
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
    let (_, warnings) = parse_checked(&with_last("333333333333ns"), "c.toml").expect("valid");
    assert!(warnings.is_empty(), "{warnings:?}");
    let (_, warnings) = parse_checked(&with_last("333333333334ns"), "c.toml").expect("valid");
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0]
            .message()
            .contains("reaches 2.000 with task `last`"),
        "{warnings:?}"
    );
}

#[test]
fn a_cluster_task_has_no_core() {
    assert_eq!(
        errors(&edf(&format!("core = 1\n{RESERVATION}"))),
        ["c.toml:16:8: task `a` runs in cluster `global`, so it has no core of its own"]
    );
    assert_eq!(
        only_help(&edf(&format!("core = 1\n{RESERVATION}"))),
        "a task in a cluster runs on whichever of its cores the cluster's scheduler selects; \
         remove core"
    );
}

#[test]
fn a_cluster_must_exist() {
    let text = edf(RESERVATION).replace("cluster = \"global\"", "cluster = \"nope\"");
    assert_eq!(
        errors(&text),
        ["c.toml:13:11: no [[cluster]] is called `nope`"]
    );
    assert_eq!(only_help(&text), "allowed: global");
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
    assert_eq!(
        errors(&given),
        ["c.toml:20:8: task `b` is on core 1, which cluster `global` schedules"]
    );
    assert_eq!(
        only_help(&given),
        "allowed: cluster = \"global\" (the task then runs in a reservation of its own in that \
         cluster), or a core in no cluster"
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
    let text = "name = \"c\"\npolicy = \"spr\"\nduration = \"1s\"\n\n[[task]]\nname = \"a\"\n\
                priority = 1\nperiod = \"10ms\"\nexecution = \"2ms\"\n\
                reservation = { budget = \"3ms\", period = \"10ms\", replenishment = \"cbs\" }\n";
    assert_eq!(
        errors(text),
        [
            "c.toml:10:66: replenishment chooses how the reservation of a task in a [[cluster]] \
          comes back; on a core in no cluster the core's policy decides"
        ]
    );
}

#[test]
fn replenishment_rules_follow_the_cluster_s_order() {
    let cbs = "reservation = { budget = \"3ms\", period = \"10ms\", replenishment = \"cbs\" }\n";
    assert_eq!(
        errors(&fixed(&format!("priority = 1\n{cbs}"))),
        [
            "c.toml:17:66: replenishment `cbs` needs order = \"edf\", but cluster `global` orders \
          its reservations by fixed priority"
        ]
    );
    assert_eq!(
        only_help(&fixed(&format!("priority = 1\n{cbs}"))),
        "allowed under order = \"fixed-priority\": sporadic, spr"
    );
    let spr = cbs.replace("cbs", "spr");
    assert_eq!(
        errors(&edf(&spr)),
        [
            "c.toml:16:66: replenishment `spr` needs order = \"fixed-priority\", but cluster \
          `global` orders its reservations by deadline (edf)"
        ]
    );
    assert_eq!(
        only_help(&edf(&spr)),
        "allowed under order = \"edf\": sporadic, cbs"
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
        valid(&fixed(&spr(256))).clusters[0].members[0].1,
        Replenishment::Spr { slots: 256 }
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
    assert_eq!(
        errors(&fixed(RESERVATION)),
        ["c.toml:11:1: task `a` has no priority"]
    );
    assert_eq!(
        only_help(&fixed(RESERVATION)),
        "cluster `global` orders its reservations by fixed priority: allowed: priority = \
         0..=255, larger is more important"
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
fn scripts_groups_caps_and_terminations_are_not_supported_yet_in_a_cluster() {
    let script = edf(RESERVATION).replace(
        "period = \"10ms\"\nexecution = \"2ms\"\n",
        "script = [{ run = \"1ms\" }]\n",
    );
    assert_eq!(
        errors(&script),
        ["c.toml:14:10: scripts in a cluster are not supported yet"]
    );
    assert_eq!(
        only_help(&script),
        "allowed: a periodic (period) or sporadic (min-interarrival) task with an execution in \
         a cluster, or the script on a core in no cluster"
    );
    let group = edf(&format!("group = \"g\"\n{RESERVATION}")).replace(
        "[[cluster]]",
        "[cost]\nreclaim-per-unit = 10\n\n[[group]]\nname = \"g\"\nquota = \"1ms\"\n\n[[cluster]]",
    );
    assert_eq!(
        errors(&group),
        [
            "c.toml:23:9: task `a` runs in cluster `global`: reclamation groups are not supported \
          yet in a cluster"
        ]
    );
    assert_eq!(
        errors(&edf(&format!("cap = \"1/2\"\n{RESERVATION}"))),
        [
            "c.toml:16:7: a bandwidth cap is for vbs processes, but task `a` runs in cluster \
          `global`"
        ]
    );
    let terminate = format!(
        "{}\n[[task]]\nname = \"killer\"\npriority = 1\nscript = [{{ terminate = \"a\" }}]\n",
        edf(RESERVATION)
    );
    assert_eq!(
        errors(&terminate),
        [
            "c.toml:21:25: `a` runs in a cluster: terminating a task is not supported yet in a \
          cluster"
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

#[test]
fn a_scenario_cluster_s_cores_are_ids_not_a_count() {
    let text = edf(RESERVATION).replace("cores = [1, 2]", "cores = 2");
    assert_eq!(errors(&text), ["c.toml:8:9: invalid type: integer `2`"]);
    assert_eq!(only_help(&text), "allowed: an array, like [ ... ]");
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
