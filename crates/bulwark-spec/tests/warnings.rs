//! Warnings of valid scenarios: the utilisation warning holds exactly when a core's
//! utilisation U = sum C_i / T_i (Liu and Layland) is above 1, once per overloaded core,
//! located at the task that takes the sum over 1.

use bulwark_spec::parse_checked;
use proptest::prelude::*;

/// Periods (ms) whose least common multiple is 200, so that U is computed exactly in whole
/// two-hundredths: U > 1 exactly when sum C_i x (200 / T_i) > 200.
const PERIODS_MS: [u64; 11] = [1, 2, 4, 5, 8, 10, 20, 25, 40, 50, 100];

fn scenario(tasks: &[(u64, u64)]) -> String {
    let mut text = String::from("name = \"u\"\npolicy = \"edf\"\nduration = \"1s\"\n");
    for (i, (period, execution)) in tasks.iter().enumerate() {
        text.push_str(&format!(
            "\n[[task]]\nname = \"t{i}\"\nperiod = \"{period}ms\"\nexecution = \"{execution}ms\"\n"
        ));
    }
    text
}

proptest! {
    #[test]
    fn the_utilisation_warning_is_exactly_u_above_one(
        picks in prop::collection::vec((0..PERIODS_MS.len(), 1u64..=100), 1..12)
    ) {
        // Execution at most the period, so no execution-over-period warning mixes in.
        let tasks: Vec<(u64, u64)> = picks
            .iter()
            .map(|&(p, c)| {
                let period = PERIODS_MS[p];
                (period, 1 + (c - 1) % period)
            })
            .collect();
        let text = scenario(&tasks);
        let (_, warnings) = parse_checked(&text, "u.toml").expect("valid");
        let hundredths: Vec<u64> = tasks.iter().map(|(t, c)| c * (200 / t)).collect();
        let total: u64 = hundredths.iter().sum();
        let utilisation: Vec<_> = warnings
            .iter()
            .filter(|w| w.message().contains("utilisation"))
            .collect();
        prop_assert_eq!(warnings.len(), utilisation.len(), "{:?}", warnings);
        if total > 200 {
            prop_assert_eq!(utilisation.len(), 1);
            // The task whose running sum first passes 200: task k's execution line is
            // 3 + 5 (k + 1) (three header lines, then per task a blank line, [[task]], name,
            // period and execution).
            let mut running = 0;
            let k = hundredths
                .iter()
                .position(|h| { running += h; running > 200 })
                .expect("the sum passes 200");
            prop_assert_eq!(utilisation[0].line(), Some(3 + 5 * (k + 1)));
            let named = format!("task `t{k}`");
            prop_assert!(utilisation[0].message().contains(&named));
        } else {
            prop_assert!(utilisation.is_empty(), "U = {}/200: {:?}", total, warnings);
        }
    }
}

#[test]
fn exactly_one_is_no_warning_and_just_above_is() {
    // 1/2 + 1/4 + 1/4 = 1: no warning; 1/2 + 1/4 + 2/8 + 1/100 = 1.01: one, at the last task.
    let (_, none) = parse_checked(&scenario(&[(2, 1), (4, 1), (4, 1)]), "u.toml").unwrap();
    assert!(none.is_empty(), "{none:?}");
    let over = scenario(&[(2, 1), (4, 1), (8, 2), (100, 1)]);
    let (_, one) = parse_checked(&over, "u.toml").unwrap();
    assert_eq!(one.len(), 1, "{one:?}");
    // Task t3's execution is on line 3 + 5 x 4 = 23, its string after `execution = `.
    assert_eq!(
        one[0].to_string(),
        "u.toml:23:13: core 0's utilisation reaches 1.010 with task `t3` (sum of worst-case \
         execution over period): the core is overloaded"
    );
}

/// A server that nothing invokes is declared for nothing: one warning at its name (line 6,
/// after `name = `); the one a task invokes gets none, nor does one only a body invokes.
#[test]
fn a_server_nobody_invokes_is_a_warning() {
    let text = r#"name = "servers"
policy = "fixed-priority"
duration = "10ms"

[[server]]
name = "idle"
gate = "fifo-ipc"
operation = "1ms"

[[server]]
name = "used"
gate = "prio-ipc"
operation = "1ms"

[[server]]
name = "nested"
gate = "fifo-ipc"
operation = "1ms"

[[server]]
name = "front"
gate = "fifo-ipc"
body = [{ invoke = "nested" }]

[[task]]
name = "caller"
priority = 1
script = [{ invoke = "used" }, { invoke = "front" }]
"#;
    let (scenario, warnings) = parse_checked(text, "s.toml").expect("valid");
    assert_eq!(scenario.servers[1].clients, vec![0]);
    let lines: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert_eq!(lines, vec!["s.toml:6:8: nothing invokes server `idle`"]);
}
