//! A component task's SPR reservation in both front ends: `_budget`/`_eta` in CAmkES,
//! `budget`/`eta` in TOML, with the same checks (budget within the period, eta within the
//! budget, eta only with a budget), each located at the value it is about.

mod common;

use bulwark_core::Duration;
use bulwark_spec::component::{ComponentSystem, TaskReservation};
use bulwark_spec::{parse_camkes, parse_components};
use common::{client_server_components, first_error, ms};

fn camkes(extra: &str) -> String {
    format!(
        r#"
procedure P {{ void run(); }};
component Client {{ control; uses P out; }}
component Server {{ provides P work; }}
assembly {{
    composition {{
        component Client c;
        component Server s;
        connection seL4RPCCallPrioritized conn(from c.out, to s.work);
    }}
    configuration {{
        c._priority = 10;
        c._period = "10ms";
        s.work_priority_protocol = "inherited";
{extra}
    }}
}}
"#
    )
}

/// The component system with `extra` in its task, from line 9.
fn toml(extra: &str) -> String {
    client_server_components(&format!("{extra}\n"), "")
}

fn reservation_of(system: &ComponentSystem) -> Option<TaskReservation> {
    system.tasks().first().expect("one task").1.reservation
}

#[test]
fn both_front_ends_read_the_same_reservation() {
    let expected = Some(TaskReservation {
        budget: ms(3),
        non_preemptive: ms(1),
    });
    let from_camkes = parse_camkes(
        &camkes("        c._budget = \"3ms\";\n        c._eta = \"1ms\";"),
        "r.camkes",
    )
    .unwrap();
    assert_eq!(reservation_of(&from_camkes), expected);
    let from_toml = parse_components(&toml("budget = \"3ms\"\neta = \"1ms\""), "r.toml").unwrap();
    assert_eq!(reservation_of(&from_toml), expected);
    // Without either key, no reservation; a budget alone has eta = 0.
    assert_eq!(
        reservation_of(&parse_camkes(&camkes(""), "r.camkes").unwrap()),
        None
    );
    let budget_only = parse_components(&toml("budget = \"10ms\""), "r.toml").unwrap();
    assert_eq!(
        reservation_of(&budget_only),
        Some(TaskReservation {
            budget: ms(10),
            non_preemptive: Duration::ZERO,
        })
    );
}

#[test]
fn a_budget_beyond_the_period_is_refused_at_its_value() {
    // TOML: line 9 is `budget = "11ms"`, the value at column 10.
    let (error, _) = first_error(parse_components(&toml("budget = \"11ms\""), "r.toml"));
    assert_eq!(
        error,
        "r.toml:9:10: budget 11ms is not within the task's period 10ms"
    );
    let (error, _) = first_error(parse_camkes(
        &camkes("        c._budget = \"0ms\";"),
        "r.camkes",
    ));
    assert!(
        error.starts_with("r.camkes:15:21: budget 0ns is not within the task's period 10ms"),
        "{error}"
    );
}

#[test]
fn eta_beyond_the_budget_or_without_one_is_refused() {
    let (error, _) = first_error(parse_components(
        &toml("budget = \"2ms\"\neta = \"3ms\""),
        "r.toml",
    ));
    assert_eq!(error, "r.toml:10:7: eta 3ms is longer than the budget 2ms");
    let (error, _) = first_error(parse_components(&toml("eta = \"1ms\""), "r.toml"));
    assert_eq!(error, "r.toml:9:7: eta without a budget");
    let (error, _) = first_error(parse_camkes(
        &camkes("        c._eta = \"1ms\";"),
        "r.camkes",
    ));
    assert!(
        error.starts_with("r.camkes:15:11: `c._eta` without `c._budget`"),
        "{error}"
    );
}
