//! Limits and encodings: names longer than [`MAX_NAME_CHARS`] in every file kind, bytes that
//! are not UTF-8, MC-IPC phases that add more than [`MAX_ADDED_TASKS`] tasks, and MC-IPC
//! clusters past the scheduler's 4096 reservations or threads, each rejected with a located
//! error that states what is allowed.

use bulwark_spec::mc_ipc_toml::MAX_ADDED_TASKS;
use bulwark_spec::{parse, parse_camkes, parse_components, parse_mc_ipc, text_of, MAX_NAME_CHARS};

/// The one error of a rejected file, as `file:line:column: message (help)`.
fn only_error(result: Result<impl std::fmt::Debug, bulwark_spec::Diagnostics>) -> String {
    let diagnostics = result.expect_err("rejected");
    assert_eq!(diagnostics.len(), 1, "{}", diagnostics.plain());
    diagnostics.errors()[0].plain()
}

#[test]
fn a_task_name_over_the_limit_is_located_in_a_scenario() {
    let long = "x".repeat(MAX_NAME_CHARS + 1);
    let at_limit = "y".repeat(MAX_NAME_CHARS);
    let text = format!(
        "name = \"n\"\npolicy = \"edf\"\nduration = \"10ms\"\n\n[[task]]\nname = \"{at_limit}\"\n\
         period = \"5ms\"\nexecution = \"1ms\"\n\n[[task]]\nname = \"{long}\"\n\
         period = \"5ms\"\nexecution = \"1ms\"\n"
    );
    // Line 11 is the second task's name; its string starts at column 8 (after `name = `).
    assert_eq!(
        only_error(parse(&text, "s.toml")),
        "s.toml:11:8: a task name is 257 characters long \
         (allowed: names of at most 256 characters)"
    );
}

#[test]
fn long_names_are_located_in_component_files() {
    let long = "c".repeat(300);
    let text = format!(
        "[[component]]\nname = \"{long}\"\nkind = \"active\"\n\
         task = [{{ name = \"t\", priority = 1, period = \"10ms\" }}]\n"
    );
    assert_eq!(
        only_error(parse_components(&text, "c.toml")),
        "c.toml:2:8: a component name is 300 characters long \
         (allowed: names of at most 256 characters)"
    );
    let camkes = format!("component {long} {{ control; }}\nassembly {{ composition {{ }} }}\n");
    // The type name starts after `component ` (10 characters).
    assert_eq!(
        only_error(parse_camkes(&camkes, "c.camkes")),
        "c.camkes:1:11: a component type name is 300 characters long \
         (allowed: names of at most 256 characters)"
    );
}

#[test]
fn long_names_are_located_in_mc_ipc_files() {
    let long = "k".repeat(1_000);
    let text = format!("[[cluster]]\nname = \"{long}\"\ncores = 1\n");
    let diagnostics = parse_mc_ipc(&text, "m.toml").expect_err("rejected");
    // The file also lacks reservations (reported at 1:1); the name's error follows.
    let lines: Vec<String> = diagnostics.errors().iter().map(|e| e.plain()).collect();
    assert!(
        lines.contains(
            &"m.toml:2:8: a cluster name is 1000 characters long \
              (allowed: names of at most 256 characters)"
                .to_owned()
        ),
        "{lines:?}"
    );
}

#[test]
fn a_latin_1_byte_is_located_at_its_line_and_column() {
    // `# caf` then 0xE9 (Latin-1 e-acute): line 2, column 6.
    let bytes = b"name = \"l\"\n# caf\xe9\npolicy = \"edf\"\n".to_vec();
    let error = only_error(text_of(bytes, "l.toml"));
    assert_eq!(
        error,
        "l.toml:2:6: the file is not UTF-8: byte 0xE9 is not valid UTF-8 here \
         (allowed: UTF-8 text only; re-save the file as UTF-8, re-encoding any Latin-1 or \
         Windows-1252 letter such as \u{e9})"
    );
}

#[test]
fn columns_before_a_bad_byte_count_characters() {
    // Two two-byte characters, then a lone continuation byte: column 3, not 5.
    let bytes = "\u{b5}\u{b5}".bytes().chain([0x80, b'\n']).collect();
    let error = only_error(text_of(bytes, "u.camkes"));
    assert!(
        error.starts_with("u.camkes:1:3: the file is not UTF-8: byte 0x80 "),
        "{error}"
    );
    // A file cut inside a three-byte character.
    let cut = b"a\n\xe2\x82".to_vec();
    let error = only_error(text_of(cut, "cut.toml"));
    assert!(
        error.starts_with("cut.toml:2:1: the file is not UTF-8: it ends inside"),
        "{error}"
    );
    assert_eq!(text_of(b"ok \xc3\xa9".to_vec(), "f").unwrap(), "ok \u{e9}");
}

#[test]
fn a_phase_adding_a_million_tasks_is_rejected_where_it_says_so() {
    let case_study = include_str!("../../../scenarios/mcipc/case-study.toml");
    let count_line = "clusters = [\"C1\", \"C2\", \"C3\", \"C4\"]\ncount = 16";
    assert!(case_study.contains(count_line));
    let text = case_study.replacen(
        count_line,
        "clusters = [\"C1\", \"C2\", \"C3\", \"C4\"]\ncount = 250000",
        1,
    );
    // The count's line: the first `count = 16` line of the case study file.
    let line = case_study
        .lines()
        .position(|l| l == "count = 16")
        .expect("count line")
        + 1;
    let error = only_error(parse_mc_ipc(&text, "m.toml"));
    assert_eq!(
        error,
        format!(
            "m.toml:{line}:9: this phase adds 1000000 tasks, counting 250000 on each of 4 \
             clusters here (allowed: at most {MAX_ADDED_TASKS} added tasks per phase)"
        )
    );
    // 2,500 on each of 4 clusters is exactly the limit, and accepted.
    let at_limit = case_study.replacen(
        count_line,
        "clusters = [\"C1\", \"C2\", \"C3\", \"C4\"]\ncount = 2500",
        1,
    );
    assert!(parse_mc_ipc(&at_limit, "m.toml").is_ok());
}

/// An MC-IPC system of one cluster with `reservations` sporadic reservations, one task in
/// each, and a phase adding `added` copies in `into` (a new sporadic reservation each, or
/// `"best-effort"`).
fn cluster_of(reservations: usize, added: usize, into: &str) -> String {
    let mut text = String::from(
        "protocol = \"mc-ipc\"\n[[cluster]]\nname = \"C1\"\ncores = 1\n\
         [[server]]\nname = \"key\"\noperation = \"1us\"\n",
    );
    for i in 0..reservations {
        text.push_str(&format!(
            "[[reservation]]\nname = \"R{i}\"\ncluster = \"C1\"\npriority = 0\n\
             budget = \"1us\"\nperiod = \"1s\"\nexecution = \"1us\"\n"
        ));
    }
    for i in 0..reservations {
        text.push_str(&format!(
            "[[task]]\nname = \"T{i}\"\nreservation = \"R{i}\"\nperiod = \"1s\"\n\
             script = [{{ compute = \"1us\" }}, \"sleep\"]\n"
        ));
    }
    if added > 0 {
        text.push_str(&format!(
            "[[phase]]\nname = \"more\"\n[[phase.add]]\nclusters = [\"C1\"]\n\
             count = {added}\nreservation = {into}\n\
             task = {{ period = \"1s\", script = [{{ compute = \"1us\" }}, \"sleep\"] }}\n"
        ));
    }
    text
}

/// The scheduler names a cluster's reservations and threads in 12 bits: 4096 of each is
/// accepted, and the 4097th reservation and task are refused where they are (before, the file
/// passed `check` and its run failed setting the cluster up).
#[test]
fn a_cluster_holds_at_most_4096_reservations_and_tasks() {
    assert!(parse_mc_ipc(&cluster_of(4096, 0, ""), "m.toml").is_ok());
    let text = cluster_of(4097, 0, "");
    let errors = parse_mc_ipc(&text, "m.toml").expect_err("rejected");
    let errors: Vec<String> = errors.errors().iter().map(|e| e.plain()).collect();
    // 4 lines of protocol and cluster, 3 of server, then 7 lines per reservation (its
    // cluster on its third), then 5 per task (its reservation on its third).
    let reservation_line = 7 + 7 * 4096 + 3;
    let task_line = 7 + 7 * 4097 + 5 * 4096 + 3;
    assert_eq!(
        errors,
        [
            format!(
                "m.toml:{reservation_line}:11: this takes cluster `C1` past 4096 reservations \
                 (allowed: at most 4096 reservations in one cluster, the file's own and one \
                 phase's added ones together)"
            ),
            format!(
                "m.toml:{task_line}:15: this takes cluster `C1` past 4096 tasks (allowed: at \
                 most 4096 tasks in one cluster, the file's own and one phase's added ones \
                 together)"
            ),
        ]
    );
}

/// A phase's copies count with the file's own: 1 + 4095 is accepted, 1 + 4096 refused at the
/// count. Copies in a best-effort reservation share one, so only their tasks can go over.
#[test]
fn a_phase_cannot_take_a_cluster_past_4096() {
    let sporadic = "{ budget = \"1us\", period = \"1s\", priority = 0 }";
    assert!(parse_mc_ipc(&cluster_of(1, 4095, sporadic), "m.toml").is_ok());
    // The count is on line 7 + 7 + 5 + 5 = 24 (the phase's fifth), after `count = `.
    let errors = parse_mc_ipc(&cluster_of(1, 4096, sporadic), "m.toml").expect_err("rejected");
    let errors: Vec<String> = errors.errors().iter().map(|e| e.plain()).collect();
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("m.toml:24:9: this takes cluster `C1` past 4096 reservations"));
    assert!(errors[1].starts_with("m.toml:24:9: this takes cluster `C1` past 4096 tasks"));
    assert!(parse_mc_ipc(&cluster_of(1, 4095, "\"best-effort\""), "m.toml").is_ok());
    assert!(only_error(parse_mc_ipc(
        &cluster_of(1, 4096, "\"best-effort\""),
        "m.toml"
    ))
    .starts_with("m.toml:24:9: this takes cluster `C1` past 4096 tasks"));
}
