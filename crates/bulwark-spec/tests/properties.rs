//! Property tests: no input makes the parser panic, what it accepts keeps the model's
//! promises, and times read back what `Duration` prints.

use bulwark_core::Duration;
use bulwark_spec::{
    parse, parse_duration, Behaviour, Execution, PolicyKind, Reservation, Scenario, Step,
};
use proptest::prelude::*;

const COMPLETE: &str = include_str!("valid/complete.toml");
const EDF: &str = include_str!("valid/edf.toml");
const SPR: &str = include_str!("valid/spr.toml");

/// What a `Scenario` promises to the simulator, checked on anything `parse` accepts.
fn assert_model_promises(scenario: &Scenario) {
    assert!((1..=1024).contains(&scenario.cores));
    assert!(!scenario.duration.is_zero());
    assert!(scenario.cost.clock_hz > 0);
    assert!(!scenario.tasks.is_empty());
    for (i, task) in scenario.tasks.iter().enumerate() {
        assert!(task.core < scenario.cores);
        let policy = scenario.policy;
        assert_eq!(task.priority.is_some(), policy.has_priorities());
        assert_eq!(task.reservation.is_some(), policy.has_reservations());
        if let Some(r) = task.reservation {
            assert!(!r.budget.is_zero() && r.budget <= r.period);
            assert!((1..=1024).contains(&r.replenishments));
            if !policy.has_replenishment_queue() {
                assert_eq!(r.replenishments, Reservation::DEFAULT_REPLENISHMENTS);
            }
            if !policy.has_non_preemptive_regions() {
                assert!(r.non_preemptive.is_zero());
            }
        }
        assert!(task.deadline.is_none_or(|d| !d.is_zero()));
        assert!(scenario.tasks[..i].iter().all(|t| t.name != task.name));
        match &task.behaviour {
            Behaviour::Periodic {
                period, execution, ..
            } => {
                assert!(!period.is_zero());
                assert!(!execution.worst_case().is_zero());
            }
            Behaviour::Sporadic {
                min_interarrival,
                execution,
                ..
            } => {
                assert!(!min_interarrival.is_zero());
                assert!(!execution.worst_case().is_zero());
            }
            Behaviour::Script { steps, .. } => {
                if scenario.policy == PolicyKind::Edf {
                    assert!(task.deadline.is_some());
                }
                assert_steps(steps, scenario.servers.len());
            }
        }
    }
}

fn assert_steps(steps: &[Step], servers: usize) {
    assert!(!steps.is_empty());
    for step in steps {
        match step {
            Step::Compute { count, each } => assert!(*count >= 1 && !each.is_zero()),
            Step::SleepUntilAligned(period) | Step::SleepUntilNextRelease(period) => {
                assert!(!period.is_zero())
            }
            Step::Loop { count, body } => {
                assert!(count.is_none_or(|c| c >= 1));
                assert_steps(body, servers);
            }
            Step::Allocate { count, .. } => assert!(*count >= 1),
            Step::Action {
                load,
                limit,
                period,
            } => {
                assert!(!load.is_zero() && !limit.is_zero() && limit <= period)
            }
            Step::Terminate { step, .. } => assert!(step.is_none_or(|s| !s.is_zero())),
            Step::Invoke { server, operation } => {
                assert!(*server < servers);
                if let Some(Execution::Uniform { min, .. }) = operation {
                    assert!(!min.is_zero());
                }
            }
            Step::Run(_) | Step::SleepFor(_) | Step::SleepUntil(_) | Step::FlushCache => {}
            Step::Call(cpi) => panic!(
                "a scenario file made a call to CPI #{cpi}: only component systems lower to calls"
            ),
        }
    }
}

/// Parses and checks the result either way: a scenario keeps its promises, and every error
/// is located with something to say.
fn check(source: &str) {
    match parse(source, "fuzzed.toml") {
        Ok(scenario) => assert_model_promises(&scenario),
        Err(diagnostics) => {
            assert!(!diagnostics.is_empty());
            for error in &diagnostics {
                assert!(error.line().is_some() && error.column().is_some());
                assert!(!error.message().is_empty() && !error.help().is_empty());
                let span = error.span().expect("located");
                assert!(span.start <= span.end && span.end <= source.len());
                assert!(source.is_char_boundary(span.start));
            }
        }
    }
}

/// One edit to a file: delete, insert, replace or duplicate some characters.
#[derive(Clone, Debug)]
enum Mutation {
    Delete { at: usize, len: usize },
    Insert { at: usize, text: String },
    Replace { at: usize, with: char },
    DuplicateLine { line: usize },
    SwapLines { a: usize, b: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    // Pieces that make a mutated file likely to stay TOML and reach validation.
    let pieces = prop_oneof![
        Just("-".to_owned()),
        Just("0".to_owned()),
        Just("\"".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just(",".to_owned()),
        Just("\n".to_owned()),
        Just(".5".to_owned()),
        Just("ms".to_owned()),
        Just("99999999999999999999".to_owned()),
        Just("µ".to_owned()),
        Just("\nperiod = \"0ms\"\n".to_owned()),
        Just("\n[[task]]\nname = \"tau1\"\n".to_owned()),
        Just("{ loop = \"forever\", body = [] }, ".to_owned()),
        Just("reservation = { budget = \"1ms\", period = \"2ms\" }\n".to_owned()),
        Just(", replenishments = 0".to_owned()),
        Just(", non-preemptive = \"1ms\"".to_owned()),
        Just("{ flush-cache = true }, ".to_owned()),
        Just("\npolicy = \"sporadic-server\"\n".to_owned()),
        "[ -~]{0,12}",
    ];
    prop_oneof![
        (any::<usize>(), 0usize..20).prop_map(|(at, len)| Mutation::Delete { at, len }),
        (any::<usize>(), pieces).prop_map(|(at, text)| Mutation::Insert { at, text }),
        (any::<usize>(), any::<char>()).prop_map(|(at, with)| Mutation::Replace { at, with }),
        any::<usize>().prop_map(|line| Mutation::DuplicateLine { line }),
        (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Mutation::SwapLines { a, b }),
    ]
}

/// Applies `m` to `text`, working on characters so the result stays valid UTF-8.
fn apply(text: &str, m: &Mutation) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    let n = chars.len().max(1);
    match m {
        Mutation::Delete { at, len } => {
            let start = at % n;
            let end = (start + len).min(chars.len());
            chars.drain(start.min(chars.len())..end);
            chars.into_iter().collect()
        }
        Mutation::Insert { at, text } => {
            let at = at % (chars.len() + 1);
            chars.splice(at..at, text.chars());
            chars.into_iter().collect()
        }
        Mutation::Replace { at, with } => {
            if let Some(c) = chars.get_mut(at % n) {
                *c = *with;
            }
            chars.into_iter().collect()
        }
        Mutation::DuplicateLine { line } => {
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let i = line % lines.len();
                lines.insert(i, lines[i]);
            }
            lines.join("\n")
        }
        Mutation::SwapLines { a, b } => {
            let mut lines: Vec<&str> = text.lines().collect();
            if !lines.is_empty() {
                let len = lines.len();
                lines.swap(a % len, b % len);
            }
            lines.join("\n")
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(source in any::<String>()) {
        check(&source);
    }

    #[test]
    fn toml_looking_text_never_panics(source in "[a-z=\"\\[\\]{}0-9 .,\n#-]{0,300}") {
        check(&source);
    }

    #[test]
    fn mutated_valid_files_never_panic(
        base in 0usize..3,
        mutations in prop::collection::vec(mutation(), 1..8),
    ) {
        let mut source = [COMPLETE, EDF, SPR][base].to_owned();
        for m in &mutations {
            source = apply(&source, m);
        }
        check(&source);
    }

    #[test]
    fn durations_read_back_what_display_prints(nanos in any::<u64>()) {
        let d = Duration::from_nanos(nanos);
        prop_assert_eq!(parse_duration(&d.to_string()), Ok(d));
    }

    #[test]
    fn round_durations_read_back_too(value in 0u64..1_000_000, scale in 0u32..4) {
        // Round values print in large units ("3s", "250us"), a different path from above.
        let d = Duration::from_nanos(value).saturating_mul(1000u64.pow(scale));
        prop_assert_eq!(parse_duration(&d.to_string()), Ok(d));
    }

    #[test]
    fn any_accepted_duration_text_reads_back_from_its_display(text in "[0-9.]{1,25}(ns|us|µs|ms|s|x)?") {
        if let Ok(d) = parse_duration(&text) {
            prop_assert_eq!(parse_duration(&d.to_string()), Ok(d));
        }
    }

    #[test]
    fn parse_duration_never_panics(text in any::<String>()) {
        let _ = parse_duration(&text);
    }
}

#[test]
fn the_mutation_bases_are_valid() {
    check(COMPLETE);
    check(EDF);
    check(SPR);
    assert!(parse(COMPLETE, "complete.toml").is_ok());
    assert!(parse(EDF, "edf.toml").is_ok());
    assert!(parse(SPR, "spr.toml").is_ok());
}

#[test]
fn deep_nesting_is_refused_without_overflowing_the_stack() {
    let arrays = format!(
        "name = \"x\"\npolicy = \"edf\"\nduration = \"1s\"\nz = {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let loops = format!(
        "name = \"x\"\npolicy = \"edf\"\nduration = \"1s\"\n[[task]]\nname = \"a\"\n\
         deadline = \"1ms\"\nscript = [{}{{ run = \"1ms\" }}{}]\n",
        "{ loop = 1, body = [".repeat(3_000),
        "] }".repeat(3_000)
    );
    for source in [arrays, loops] {
        let errors = parse(&source, "deep.toml").expect_err("too deep");
        assert_eq!(errors.len(), 1);
        assert_eq!(
            errors.errors()[0].message(),
            "cannot recurse further; max recursion depth met"
        );
    }
}
