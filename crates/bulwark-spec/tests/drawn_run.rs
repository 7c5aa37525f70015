//! A script's `run` step as one time (`{ run = "2ms" }`) or a `[min, max]` pair to draw from
//! (`{ run = ["1ms", "1500us"] }`); the pair's errors are in `tests/invalid/bad_drawn_run.toml`.

use bulwark_core::Duration;
use bulwark_spec::{parse, Behaviour, Execution, Step};

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// A fixed-priority scenario of one script task with `steps`, and `extra` tables after it.
fn with_steps(steps: &str, extra: &str) -> String {
    format!(
        "name = \"drawn\"\npolicy = \"fixed-priority\"\nduration = \"10ms\"\n\n[[task]]\n\
         name = \"t\"\npriority = 1\nscript = [{steps}]\n{extra}"
    )
}

fn steps_of(text: &str) -> Vec<Step> {
    let scenario = match parse(text, "drawn.toml") {
        Ok(scenario) => scenario,
        Err(diagnostics) => panic!("{}", diagnostics.plain()),
    };
    match &scenario.tasks[0].behaviour {
        Behaviour::Script { steps, .. } => steps.clone(),
        other => panic!("not a script: {other:?}"),
    }
}

fn errors_of(text: &str) -> Vec<String> {
    match parse(text, "drawn.toml") {
        Ok(_) => panic!("accepted: {text}"),
        Err(diagnostics) => diagnostics.errors().iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn a_pair_is_a_uniform_run_and_one_time_is_fixed() {
    let steps = steps_of(&with_steps(
        r#"{ run = ["1ms", "1500us"] }, { run = "2ms" }, { run = "0ms" }, { sleep-for = "1ms" }"#,
        "",
    ));
    assert_eq!(
        steps,
        vec![
            Step::Run(Execution::Uniform {
                min: us(1000),
                max: us(1500)
            }),
            Step::Run(Execution::Fixed(us(2000))),
            // Zero stays allowed for one time, as before the pair form.
            Step::Run(Execution::Fixed(Duration::ZERO)),
            Step::SleepFor(us(1000)),
        ]
    );
}

/// Equal ends are a fixed time (`Execution::between`): nothing is drawn for it.
#[test]
fn a_pair_whose_ends_meet_is_fixed() {
    let steps = steps_of(&with_steps(r#"{ run = ["2ms", "2000us"] }"#, ""));
    assert_eq!(steps, vec![Step::Run(Execution::Fixed(us(2000)))]);
}

/// A pair's min is above zero, so a loop of drawn runs lets time pass.
#[test]
fn a_forever_loop_of_a_drawn_run_lets_time_pass() {
    let steps = steps_of(&with_steps(
        r#"{ loop = "forever", body = [{ run = ["1us", "2us"] }] }"#,
        "",
    ));
    assert_eq!(
        steps,
        vec![Step::Loop {
            count: None,
            body: vec![Step::Run(Execution::Uniform {
                min: us(1),
                max: us(2)
            })],
        }]
    );
}

/// Neither a time nor a pair: serde's type error, at `true` (line 8, `script = [{ run = true
/// }]`, column 19), and a help that names both forms.
#[test]
fn a_wrong_type_says_both_forms() {
    let text = with_steps("{ run = true }", "");
    let Err(diagnostics) = parse(&text, "drawn.toml") else {
        panic!("accepted: {text}");
    };
    let errors = diagnostics.errors();
    assert_eq!(errors.len(), 1);
    assert_eq!(
        errors[0].to_string(),
        "drawn.toml:8:19: invalid type: boolean `true`"
    );
    assert!(
        errors[0]
            .help()
            .contains(r#"a time like "2ms", or [min, max] like ["1ms", "1500us"]"#),
        "{}",
        errors[0].help()
    );
}

/// A server's body runs one time: the pair is refused at its array, line 13 (after the task's 8 lines,
/// a blank one and three of the server) column 17 of
/// `body = [{ run = ["1ms", "2ms"] }]`.
#[test]
fn a_server_body_run_is_one_time() {
    let server =
        "\n[[server]]\nname = \"s\"\ngate = \"fifo-ipc\"\nbody = [{ run = [\"1ms\", \"2ms\"] }]\n";
    let errors = errors_of(&with_steps(r#"{ run = "1ms" }"#, server));
    assert_eq!(
        errors,
        vec![
            "drawn.toml:13:17: a server's run is one time: only a task's run is drawn in [min, \
             max]"
                .to_owned()
        ]
    );
}
