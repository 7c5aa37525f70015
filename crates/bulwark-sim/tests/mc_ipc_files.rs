//! MC-IPC system files (`scenarios/mcipc/*.toml`) lowered to scenarios
//! (`McIpcSystem::scenario`) and run on the scenario machine.

use std::fs;
use std::path::{Path, PathBuf};

use bulwark_core::ipc::GateProtocol;
use bulwark_core::{Duration, Instant};
use bulwark_sim::Options;
use bulwark_spec::mc_ipc_toml::McIpcSystem;
use bulwark_spec::parse_mc_ipc;

const GATES: [GateProtocol; 3] = [
    GateProtocol::McIpc,
    GateProtocol::FifoIpc,
    GateProtocol::PrioIpc,
];

fn mcipc_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/mcipc")
}

fn read(path: &Path) -> McIpcSystem {
    let text = fs::read_to_string(path).expect("readable");
    parse_mc_ipc(&text, &path.display().to_string()).unwrap_or_else(|d| panic!("{}", d.plain()))
}

/// Every phase, and the system without one, of every file, under each gate (pruned requests
/// to the background queue, which only an mc-ipc gate has), runs for 1 s of simulated time.
#[test]
fn every_phase_of_every_file_runs_under_every_gate() {
    let mut paths: Vec<PathBuf> = fs::read_dir(mcipc_dir())
        .expect("scenarios/mcipc exists")
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 4, "{paths:?}");
    let mut runs = 0;
    for path in &paths {
        let system = read(path);
        let phases = std::iter::once(None).chain((0..system.phases.len()).map(Some));
        for phase in phases {
            for gate in GATES {
                let scenario = system.scenario(phase, gate, true, 1, Duration::from_secs(1));
                let outcome =
                    bulwark_sim::run(&scenario, &Options::default()).unwrap_or_else(|error| {
                        panic!("{}, phase {phase:?}, {gate:?}: {error}", path.display())
                    });
                assert_eq!(
                    outcome.until,
                    Instant::ZERO.saturating_add(Duration::from_secs(1))
                );
                // Every task first released within the run released a job.
                for (spec, metrics) in scenario.tasks.iter().zip(&outcome.tasks) {
                    let bulwark_spec::Behaviour::Script { offset, .. } = &spec.behaviour else {
                        panic!("{} is not a script", spec.name);
                    };
                    if *offset < Duration::from_secs(1) {
                        assert!(
                            metrics.jobs > 0,
                            "{}: {} released nothing",
                            path.display(),
                            spec.name
                        );
                    }
                }
                runs += 1;
            }
        }
    }
    assert!(runs >= 4 * 3, "{runs}");
}

/// The case study's normal operation under MC-IPC: T1, alone in the partition R1 on C1, open
/// in [0, 50 ms) of every 100 ms, is released at 0 and every 100 ms, so each job starts at its
/// release. It computes at most 1.5 ms, then invokes the key server; Theorem 1 bounds the
/// budget the request drains from its issue to the reply by (1 + 2 m K) L = (1 + 2 * 1 * 4) *
/// 2 ms = 18 ms (m = 1 core per cluster, K = 4 clusters invoke the server, L = 2 ms, the
/// longest operation drawn), and the partition drains its budget all through its slot,
/// waiting or not, so the reply comes at most 18 ms after the issue, within the slot. Then it
/// computes at most 0.5 ms: each job completes within 1.5 + 18 + 0.5 = 20 ms of its release,
/// inside its slot (the file has no kernel costs).
#[test]
fn t1_meets_theorem_one_in_the_case_studys_normal_operation() {
    let system = read(&mcipc_dir().join("case-study.toml"));
    assert_eq!(system.phases[0].name, "normal operation");
    let horizon = Duration::from_secs(1);
    let options = Options {
        record_jobs: true,
        ..Options::default()
    };
    for seed in [1, 2, 3] {
        let scenario = system.scenario(Some(0), GateProtocol::McIpc, true, seed, horizon);
        let t1 = scenario
            .tasks
            .iter()
            .position(|t| t.name == "T1")
            .expect("T1");
        let outcome = bulwark_sim::run(&scenario, &options).expect("the run completes");
        let jobs: Vec<_> = outcome
            .jobs
            .expect("recorded")
            .into_iter()
            .filter(|j| j.task.index() == t1 && j.release < Instant::ZERO.saturating_add(horizon))
            .collect();
        // Released at 0, 100, ..., 900 ms.
        assert_eq!(jobs.len(), 10, "seed {seed}");
        for job in &jobs {
            let completion = job.completion.unwrap_or_else(|| {
                panic!("seed {seed}: T1's job at {} did not complete", job.release)
            });
            let response = completion.saturating_duration_since(job.release);
            assert!(
                response <= Duration::from_millis(20),
                "seed {seed}: T1's job at {} took {response}",
                job.release
            );
        }
    }
}
