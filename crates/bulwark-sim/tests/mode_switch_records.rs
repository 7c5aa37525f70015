//! A cluster's changes of criticality mode as a recorder hears them (Vestal's model, the
//! MC-IPC paper's section VII): the switch to high mode when a high-criticality job has
//! consumed its low budget `e^L` and is still pending, and the return to low mode at the
//! cluster's next idle instant, which the scheduler gives no notice of.

use bulwark_core::reservation::clustered::Mode;
use bulwark_core::{Duration, Instant};
use bulwark_sim::{Machine, ModeSwitchRecord, Options, Recorder};
use bulwark_spec::Scenario;

/// Keeps the mode switches, or wants none.
#[derive(Default)]
struct Switches {
    wanted: bool,
    heard: Vec<ModeSwitchRecord>,
}

impl Recorder for Switches {
    fn wants_mode_switches(&self) -> bool {
        self.wanted
    }

    fn mode_switch(&mut self, record: &ModeSwitchRecord) {
        self.heard.push(*record);
    }
}

/// One cluster (core 0) and one high-criticality sporadic reservation, `e^H = 10 ms`,
/// `e^L = 4 ms` per 50 ms. Its task's first job, released at 1 ms, computes 6 ms: past
/// `e^L`, within `e^H`. Every later job computes 2 ms. No kernel costs.
fn overrun_once() -> Scenario {
    let text = r#"
name = "overrun-once"
policy = "fixed-priority"
cores = 1
duration = "100ms"

[[cluster]]
name = "solo"
cores = [0]
order = "fixed-priority"

[[task]]
name = "critical"
cluster = "solo"
priority = 1
offset = "1ms"
reservation = { budget = "10ms", period = "50ms", criticality = "high", low-budget = "4ms" }
script = [
  { run = "6ms" }, { sleep-until-next-release = "50ms" },
  { loop = "forever", body = [{ run = "2ms" }, { sleep-until-next-release = "50ms" }] },
]
"#;
    bulwark_spec::parse(text, "overrun-once.toml").unwrap_or_else(|e| panic!("{}", e.plain()))
}

fn run(scenario: &Scenario, recorder: &mut Switches) {
    let machine = Machine::with_recorder(scenario, &Options::default(), recorder).expect("valid");
    machine.run(&mut |_| {}).expect("runs");
}

/// By hand: the job released at 1 ms runs alone, draining its reservation from 1 ms; it has
/// consumed `e^L = 4 ms` at 1 + 4 = 5 ms and is still pending (2 ms left), so the cluster
/// switches to high mode at 5 ms. The job completes at 1 + 6 = 7 ms, the cluster's only
/// reservation goes inactive: an idle instant, so the cluster returns to low mode at 7 ms.
/// The job released at 51 ms computes 2 ms, within `e^L`: no switch; the next release, at
/// 101 ms, is after the end.
#[test]
fn one_overrun_switches_to_high_when_e_l_is_consumed_and_back_at_the_idle_instant() {
    let mut recorder = Switches {
        wanted: true,
        ..Switches::default()
    };
    run(&overrun_once(), &mut recorder);
    let switch = |ms, mode| ModeSwitchRecord {
        cluster: 0,
        at: Instant::ZERO.saturating_add(Duration::from_millis(ms)),
        mode,
    };
    assert_eq!(
        recorder.heard,
        [switch(5, Mode::High), switch(7, Mode::Low)]
    );
}

/// A recorder that does not ask for mode switches hears of none.
#[test]
fn mode_switches_are_recorded_only_when_wanted() {
    let mut recorder = Switches::default();
    run(&overrun_once(), &mut recorder);
    assert!(recorder.heard.is_empty());
}
