//! Task behaviours as programs: what a task asks of the machine next.
//!
//! A periodic or sporadic task alternates "execute one job" and "sleep until the next
//! release". A script walks its steps with a stack of loop frames. Either way the machine asks
//! [`Program::next_action`] whenever the task has nothing left to execute.

use bulwark_core::{Duration, Instant};
use bulwark_spec::{Behaviour, Execution, ObjectKind, Step};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The most steps one `next_action` call may walk without producing an action; a script
/// that needs more is looping without letting time pass.
const MAX_STEPS_PER_ACTION: u32 = 1_000_000;

/// What a task does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action<'a> {
    /// Execute for `time`; when `each` is set, every `each` of it is one unit of useful work.
    Execute {
        /// Execution time.
        time: Duration,
        /// Length of one unit of useful work, for `compute` steps.
        each: Option<Duration>,
    },
    /// End the current job and sleep until `until`; the next job is released at `release`.
    Sleep {
        /// The planned wake-up, handed to the policy.
        until: Instant,
        /// The next job's release: the planned period boundary for periodic and sporadic jobs
        /// and a script's `sleep-until-next-release` (an overrunning job's successor is
        /// already due), and never before the call for a script's other sleeps (a sleep into
        /// the past returns at once and releases the next job then).
        release: Instant,
    },
    /// Evict the cache of the task's core (a `flush-cache` step): every other task on the core
    /// pays the flush refill when it next runs. Takes no time; the task then goes on.
    FlushCache,
    /// Mark a switch to a VBS action of `load` on `(limit, period)`, then execute the load.
    Switch {
        /// The work.
        load: Duration,
        /// `lambda`.
        limit: Duration,
        /// `pi`.
        period: Duration,
    },
    /// Create `count` kernel objects of `object` in the task's process.
    Allocate {
        /// How many.
        count: u64,
        /// Of which kind.
        object: ObjectKind,
    },
    /// Terminate the process of the task called `task` (its group, if it has one).
    Terminate {
        /// The target's name (validated: another task on this core).
        task: &'a str,
        /// Reclamation in steps of at most this much kernel time.
        step: Option<Duration>,
    },
    /// Call the server at this index of the scenario's servers and wait for its reply.
    Invoke {
        /// The server.
        server: usize,
        /// The operation asked for, instead of the server's one run.
        operation: Option<&'a Execution>,
    },
    /// Request the CPI at this index of the scenario's CPIs and wait for its reply.
    Call {
        /// The CPI.
        cpi: usize,
    },
    /// The task is finished for good.
    Exit,
}

/// A behaviour's progress.
#[derive(Clone, Debug)]
pub enum Program<'a> {
    /// Periodic or sporadic jobs.
    Jobs {
        /// Minimum (or exact) time between releases.
        separation: Duration,
        /// Largest extra random separation (zero for periodic tasks).
        jitter: Duration,
        /// Each job's execution time.
        execution: Execution,
        /// The current job's release.
        release: Instant,
        /// True once the current job's execution has been handed out.
        executed: bool,
    },
    /// A script with its loop frames.
    Script {
        /// Innermost frame last.
        frames: Vec<Frame<'a>>,
        /// The current job's planned release (`sleep-until-next-release` plans the next one
        /// a period later): the offset, then each sleep's.
        planned: Instant,
    },
}

/// A position in a list of steps.
#[derive(Clone, Debug)]
pub struct Frame<'a> {
    steps: &'a [Step],
    next: usize,
    /// Repetitions left after the current one; `None` repeats for ever.
    repeats: Option<u64>,
}

/// The script ran too many steps without an action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spinning;

impl<'a> Program<'a> {
    /// The program of `behaviour`, whose first job is released at its offset.
    pub fn new(behaviour: &'a Behaviour) -> Self {
        match behaviour {
            Behaviour::Periodic {
                period,
                offset,
                execution,
            } => Program::Jobs {
                separation: *period,
                jitter: Duration::ZERO,
                execution: *execution,
                release: Instant::ZERO.saturating_add(*offset),
                executed: false,
            },
            Behaviour::Sporadic {
                min_interarrival,
                jitter,
                offset,
                execution,
            } => Program::Jobs {
                separation: *min_interarrival,
                jitter: *jitter,
                execution: *execution,
                release: Instant::ZERO.saturating_add(*offset),
                executed: false,
            },
            Behaviour::Script { steps, offset } => Program::Script {
                frames: vec![Frame {
                    steps,
                    next: 0,
                    repeats: Some(0),
                }],
                planned: Instant::ZERO.saturating_add(*offset),
            },
        }
    }

    /// The first job's release.
    pub fn first_release(behaviour: &Behaviour) -> Instant {
        let offset = match behaviour {
            Behaviour::Periodic { offset, .. }
            | Behaviour::Sporadic { offset, .. }
            | Behaviour::Script { offset, .. } => *offset,
        };
        Instant::ZERO.saturating_add(offset)
    }

    /// What the task does next, asked at `now` when it has nothing left to execute.
    pub fn next_action(
        &mut self,
        now: Instant,
        rng: &mut ChaCha8Rng,
    ) -> Result<Action<'a>, Spinning> {
        match self {
            Program::Jobs {
                separation,
                jitter,
                execution,
                release,
                executed,
            } => {
                if !*executed {
                    *executed = true;
                    return Ok(Action::Execute {
                        time: draw(execution, rng),
                        each: None,
                    });
                }
                let extra = if jitter.is_zero() {
                    Duration::ZERO
                } else {
                    uniform(Duration::ZERO, *jitter, rng)
                };
                // Releases follow the plan even when a job overruns: the next job is then
                // already due and waits behind this one.
                *release = release.saturating_add(separation.saturating_add(extra));
                *executed = false;
                Ok(Action::Sleep {
                    until: *release,
                    release: *release,
                })
            }
            Program::Script { frames, planned } => next_step(frames, now, planned, rng),
        }
    }
    /// The release of the next job already due behind the current one, at or before `until`,
    /// or `None`. A periodic or sporadic job that overruns leaves its successors released on
    /// plan but not started; at the end of a run they still count as released (and missed
    /// when their deadline is within the run). So does a script's job behind an unfinished
    /// one, when the script reaches a `sleep-until-next-release` planned by then: the
    /// unfinished job completes after `until`, and any other sleep releases the next job no
    /// sooner than that completion.
    pub fn next_queued_release(&mut self, until: Instant, rng: &mut ChaCha8Rng) -> Option<Instant> {
        if let Program::Script { frames, planned } = self {
            // The rest of the job's steps take no part: only where its sleep plans the next.
            return match next_sleep(frames)? {
                Step::SleepUntilNextRelease(period) => {
                    let release = planned.saturating_add(*period);
                    *planned = release;
                    (release <= until).then_some(release)
                }
                // Releases the next job no sooner than the unfinished one's completion.
                _ => None,
            };
        }
        let Program::Jobs {
            separation,
            jitter,
            release,
            executed,
            ..
        } = self
        else {
            return None;
        };
        if separation.is_zero() {
            return None;
        }
        // The same draw `next_action` would have made for the next separation.
        let extra = if jitter.is_zero() {
            Duration::ZERO
        } else {
            Duration::from_nanos(rng.random_range(0..=jitter.as_nanos()))
        };
        let next = release.saturating_add(separation.saturating_add(extra));
        if next > until || next == *release {
            return None;
        }
        *release = next;
        *executed = false;
        Some(next)
    }
}

/// One execution time drawn from `execution` with `rng` (nothing drawn for a fixed one):
/// every machine's scripts draw their times here.
pub(crate) fn draw(execution: &Execution, rng: &mut ChaCha8Rng) -> Duration {
    match *execution {
        Execution::Fixed(d) => d,
        Execution::Uniform { min, max } => uniform(min, max, rng),
    }
}

/// A duration drawn uniformly from `min..=max`. Out of line: the generator's code would
/// otherwise make every call of a fixed-time job save and restore registers it never uses.
#[inline(never)]
fn uniform(min: Duration, max: Duration, rng: &mut ChaCha8Rng) -> Duration {
    Duration::from_nanos(rng.random_range(min.as_nanos()..=max.as_nanos()))
}

/// The next action of a script at `now`, whose current job was planned at `planned`: a
/// sleep plans the next job at its release (for `sleep-until-next-release`, a period after
/// this one's plan even when that has passed). A `run` drawn in `[min, max]` is drawn
/// here from `rng`, the task's stream, as an invocation's operation is (with [`draw`]); a
/// fixed one draws nothing. Out of line, as [`uniform`] is.
#[inline(never)]
fn next_step<'a>(
    frames: &mut Vec<Frame<'a>>,
    now: Instant,
    planned: &mut Instant,
    rng: &mut ChaCha8Rng,
) -> Result<Action<'a>, Spinning> {
    for _ in 0..MAX_STEPS_PER_ACTION {
        let Some(frame) = frames.last_mut() else {
            return Ok(Action::Exit);
        };
        let steps: &'a [Step] = frame.steps;
        let Some(step) = steps.get(frame.next) else {
            match frame.repeats {
                Some(0) => {
                    frames.pop();
                }
                Some(ref mut n) => {
                    *n -= 1;
                    frame.next = 0;
                }
                None => frame.next = 0,
            }
            continue;
        };
        frame.next += 1;
        let sleep = |until: Instant| Action::Sleep {
            until,
            release: until.max(now),
        };
        let action = match step {
            Step::Run(time) => Action::Execute {
                time: draw(time, rng),
                each: None,
            },
            Step::Compute { count, each } => Action::Execute {
                time: each.saturating_mul(*count),
                each: Some(*each),
            },
            Step::SleepFor(d) => sleep(now.saturating_add(*d)),
            Step::SleepUntil(at) => sleep(*at),
            Step::SleepUntilAligned(period) => sleep(next_multiple(now, *period)),
            // Planned a period after this job's plan; due already, it is released at its
            // plan (it waited behind its late predecessor), as a periodic task's job is.
            Step::SleepUntilNextRelease(period) => {
                let until = planned.saturating_add(*period);
                Action::Sleep {
                    until,
                    release: until,
                }
            }
            Step::FlushCache => Action::FlushCache,
            Step::Action {
                load,
                limit,
                period,
            } => Action::Switch {
                load: *load,
                limit: *limit,
                period: *period,
            },
            Step::Allocate { count, object } => Action::Allocate {
                count: *count,
                object: *object,
            },
            Step::Terminate { task, step } => Action::Terminate {
                task: task.as_str(),
                step: *step,
            },
            Step::Call(cpi) => Action::Call { cpi: *cpi },
            Step::Invoke { server, operation } => Action::Invoke {
                server: *server,
                operation: operation.as_ref(),
            },
            Step::Loop { count, body } => {
                frames.push(Frame {
                    steps: body,
                    next: 0,
                    repeats: count.map(|n| n.saturating_sub(1)),
                });
                continue;
            }
        };
        if let Action::Sleep { release, .. } = action {
            // Every sleep plans the next job at its release; a periodic plan keeps its phase
            // when a job is late, since its release is the plan itself.
            *planned = release;
        }
        return Ok(action);
    }
    Err(Spinning)
}

/// Walks a script to its next sleep step, passing over the loops that hold none (a counted
/// one is skipped whole; a repeating one never reaches a sleep, so the walk ends there): the
/// walk is linear in the script's size, however many times its loops repeat. `None` when no
/// sleep is reached. Only the end of a run walks so, so nothing is drawn.
fn next_sleep<'a>(frames: &mut Vec<Frame<'a>>) -> Option<&'a Step> {
    loop {
        let frame = frames.last_mut()?;
        let steps: &'a [Step] = frame.steps;
        let Some(step) = steps.get(frame.next) else {
            // A body's next pass reaches a sleep only if the body holds one.
            match frame.repeats {
                Some(left) if left > 0 && holds_sleep(steps) => {
                    frame.repeats = Some(left - 1);
                    frame.next = 0;
                }
                None if holds_sleep(steps) => frame.next = 0,
                None => return None,
                Some(_) => {
                    frames.pop();
                }
            }
            continue;
        };
        frame.next += 1;
        match step {
            _ if is_sleep(step) => return Some(step),
            Step::Loop { count, body } if holds_sleep(body) => frames.push(Frame {
                steps: body,
                next: 0,
                repeats: count.map(|n| n.saturating_sub(1)),
            }),
            Step::Loop { count: None, .. } => return None,
            // Without a sleep, yet with an endless loop that its first pass enters.
            Step::Loop { count, body } if *count != Some(0) && never_ends(body) => return None,
            _ => {}
        }
    }
}

/// Whether running `steps` enters an endless loop (one holding no sleep, as [`next_sleep`]
/// reaches it, never ends).
fn never_ends(steps: &[Step]) -> bool {
    steps.iter().any(|step| match step {
        Step::Loop { count: None, .. } => true,
        Step::Loop { count, body } => *count != Some(0) && never_ends(body),
        _ => false,
    })
}

/// Whether `steps`, or a loop among them, hold a sleep step.
fn holds_sleep(steps: &[Step]) -> bool {
    steps.iter().any(|step| match step {
        Step::Loop { body, .. } => holds_sleep(body),
        _ => is_sleep(step),
    })
}

/// Whether `step` ends a script's job.
fn is_sleep(step: &Step) -> bool {
    matches!(
        step,
        Step::SleepFor(_)
            | Step::SleepUntil(_)
            | Step::SleepUntilAligned(_)
            | Step::SleepUntilNextRelease(_)
    )
}

/// The first multiple of `period` strictly after `now`.
fn next_multiple(now: Instant, period: Duration) -> Instant {
    let p = period.as_nanos().max(1);
    let k = now.as_nanos() / p + 1;
    Instant::from_nanos(k.saturating_mul(p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    /// Offset 2 ms, period 10 ms: releases planned at 2, 12, 22, ... A job done early sleeps
    /// to the next plan; a late one's successor is due at once and released at its plan (22
    /// ms, not the 25 ms its predecessor ended: it waited behind it, as a periodic task's job
    /// does), and the plan keeps its phase (the one after is at 32 ms, not a period after the
    /// late completion). Another sleep plans the next job at its own release.
    #[test]
    fn a_sleep_until_the_next_release_keeps_the_periodic_plan() {
        let behaviour = Behaviour::Script {
            offset: ms(2),
            steps: vec![
                Step::Loop {
                    count: Some(3),
                    body: vec![Step::SleepUntilNextRelease(ms(10))],
                },
                Step::SleepFor(ms(1)),
                Step::SleepUntilNextRelease(ms(10)),
            ],
        };
        let mut program = Program::new(&behaviour);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let at = |n: u64| Instant::from_nanos(n * 1_000_000);
        let mut next = |now: u64| program.next_action(at(now), &mut rng).unwrap();
        // Job released at 2, done at 5: the next at 12.
        assert_eq!(
            next(5),
            Action::Sleep {
                until: at(12),
                release: at(12)
            }
        );
        // Job released at 12, done late at 25: the next is due, released at its plan, 22.
        assert_eq!(
            next(25),
            Action::Sleep {
                until: at(22),
                release: at(22)
            }
        );
        // That one done at 26: the next planned at 32, not 35.
        assert_eq!(
            next(26),
            Action::Sleep {
                until: at(32),
                release: at(32)
            }
        );
        // A sleep of 1 ms at 33 plans the next job at 34, so the next release is 44.
        assert_eq!(
            next(33),
            Action::Sleep {
                until: at(34),
                release: at(34)
            }
        );
        assert_eq!(
            next(34),
            Action::Sleep {
                until: at(44),
                release: at(44)
            }
        );
    }

    #[test]
    fn a_script_walks_nested_loops_in_order() {
        let behaviour = Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![
                Step::Run(Execution::Fixed(ms(1))),
                Step::Loop {
                    count: Some(2),
                    body: vec![
                        Step::SleepFor(ms(2)),
                        Step::Loop {
                            count: Some(1),
                            body: vec![Step::SleepUntilAligned(ms(5))],
                        },
                    ],
                },
                Step::Compute {
                    count: 3,
                    each: ms(1),
                },
            ],
        };
        let mut program = Program::new(&behaviour);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let now = Instant::from_nanos(7_000_000);
        let mut actions = Vec::new();
        loop {
            let a = program.next_action(now, &mut rng).unwrap();
            actions.push(a);
            if a == Action::Exit {
                break;
            }
        }
        let at = |n: u64| Instant::from_nanos(n * 1_000_000);
        assert_eq!(
            actions,
            vec![
                Action::Execute {
                    time: ms(1),
                    each: None
                },
                Action::Sleep {
                    until: at(9),
                    release: at(9)
                },
                Action::Sleep {
                    until: at(10),
                    release: at(10)
                },
                Action::Sleep {
                    until: at(9),
                    release: at(9)
                },
                Action::Sleep {
                    until: at(10),
                    release: at(10)
                },
                Action::Execute {
                    time: ms(3),
                    each: Some(ms(1))
                },
                Action::Exit,
            ]
        );
    }

    /// At the end of a run, behind an unfinished job of a script: a `sleep-until-next-release`
    /// plans the jobs due by the horizon (offset 0, period 10 ms, horizon 25 ms: 10 and 20,
    /// not 30), and any other sleep releases nothing (the unfinished job ends after the
    /// horizon); a script without a sleep ends the search, it does not spin.
    #[test]
    fn a_scripts_jobs_due_behind_an_unfinished_one_are_its_planned_releases() {
        let at = |n: u64| Instant::from_nanos(n * 1_000_000);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let periodic = Behaviour::Script {
            offset: ms(0),
            steps: vec![Step::Loop {
                count: None,
                body: vec![
                    Step::Run(Execution::Fixed(ms(30))),
                    Step::SleepUntilNextRelease(ms(10)),
                ],
            }],
        };
        let mut program = Program::new(&periodic);
        let first = program.next_action(at(0), &mut rng).unwrap();
        assert!(matches!(first, Action::Execute { .. }));
        let queued: Vec<_> =
            core::iter::from_fn(|| program.next_queued_release(at(25), &mut rng)).collect();
        assert_eq!(queued, [at(10), at(20)]);

        let relative = Behaviour::Script {
            offset: ms(0),
            steps: vec![Step::Loop {
                count: None,
                body: vec![Step::Run(Execution::Fixed(ms(30))), Step::SleepFor(ms(1))],
            }],
        };
        let mut program = Program::new(&relative);
        program.next_action(at(0), &mut rng).unwrap();
        assert_eq!(program.next_queued_release(at(25), &mut rng), None);

        let endless = Behaviour::Script {
            offset: ms(0),
            steps: vec![Step::Loop {
                count: None,
                body: vec![Step::Run(Execution::Fixed(ms(1)))],
            }],
        };
        let mut program = Program::new(&endless);
        program.next_action(at(0), &mut rng).unwrap();
        assert_eq!(program.next_queued_release(at(25), &mut rng), None);

        // An endless loop inside a counted one, before a periodic sleep: the sleep is never
        // reached, so nothing is due (proptest found the walk skipping the counted loop whole).
        let nested = Behaviour::Script {
            offset: ms(0),
            steps: vec![
                Step::Loop {
                    count: Some(1),
                    body: vec![Step::Loop {
                        count: None,
                        body: vec![Step::Run(Execution::Fixed(ms(1)))],
                    }],
                },
                Step::SleepUntilNextRelease(ms(1)),
            ],
        };
        let mut program = Program::new(&nested);
        assert_eq!(program.next_queued_release(at(25), &mut rng), None);
    }

    /// Behind an unfinished job, a script's next `sleep-until-next-release` comes after a
    /// loop of two million steps that never sleep: the walk passes the loop over and still
    /// plans the job due by the horizon (10 ms), and a loop of them that repeats for ever
    /// ends the search at once.
    #[test]
    fn a_long_loop_without_a_sleep_does_not_hide_the_next_release() {
        let at = |n: u64| Instant::from_nanos(n * 1_000_000);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let behaviour = Behaviour::Script {
            offset: ms(0),
            steps: vec![Step::Loop {
                count: None,
                body: vec![
                    Step::Run(Execution::Fixed(ms(30))),
                    Step::Loop {
                        count: Some(2_000_000),
                        body: vec![Step::FlushCache],
                    },
                    Step::SleepUntilNextRelease(ms(10)),
                ],
            }],
        };
        let mut program = Program::new(&behaviour);
        program.next_action(at(0), &mut rng).unwrap();
        let queued: Vec<_> =
            core::iter::from_fn(|| program.next_queued_release(at(25), &mut rng)).collect();
        assert_eq!(queued, [at(10), at(20)]);
    }

    /// A script of runs, flushes, sleeps and loops (two levels, counted or for ever).
    fn script() -> impl proptest::strategy::Strategy<Value = Vec<Step>> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            (1u64..40).prop_map(|n| Step::Run(Execution::Fixed(ms(n)))),
            Just(Step::FlushCache),
            (1u64..20).prop_map(|n| Step::SleepFor(ms(n))),
            (1u64..20).prop_map(|n| Step::SleepUntilNextRelease(ms(n))),
        ];
        let repeats = prop_oneof![Just(None), (1u64..4).prop_map(Some)];
        let inner = prop_oneof![
            3 => leaf.clone(),
            1 => (repeats.clone(), proptest::collection::vec(leaf.clone(), 1..4))
                .prop_map(|(count, body)| Step::Loop { count, body }),
        ];
        let outer = prop_oneof![
            3 => leaf,
            1 => (repeats, proptest::collection::vec(inner, 1..4))
                .prop_map(|(count, body)| Step::Loop { count, body }),
        ];
        proptest::collection::vec(outer, 1..5)
    }

    proptest::proptest! {
        /// The linear walk plans the same queued jobs as walking the script's steps one
        /// action at a time (short loops, so that stepping never spins), from any point of a
        /// run.
        #[test]
        fn the_queued_releases_are_those_of_stepping_the_script(
            steps in script(),
            offset in 0u64..10,
            actions in 0usize..6,
            horizon in 0u64..120,
        ) {
            let behaviour = Behaviour::Script { offset: ms(offset), steps };
            let mut rng = ChaCha8Rng::seed_from_u64(1);
            let mut program = Program::new(&behaviour);
            let mut now = Instant::ZERO.saturating_add(ms(offset));
            for _ in 0..actions {
                match program.next_action(now, &mut rng) {
                    Ok(Action::Execute { time, .. }) => now = now.saturating_add(time),
                    Ok(Action::Exit) | Err(Spinning) => break,
                    Ok(_) => {}
                }
            }
            let until = Instant::ZERO.saturating_add(ms(horizon));
            let mut stepped = program.clone();
            let after = until.saturating_add(Duration::from_nanos(1));
            let mut expected = Vec::new();
            // The reference: step the script action by action to each next sleep.
            'jobs: while expected.len() < 50 {
                let Program::Script { frames, planned } = &mut stepped else { break };
                for _ in 0..1_000 {
                    match next_step(frames, after, planned, &mut rng) {
                        Ok(Action::Sleep { release, .. }) if release <= until => {
                            expected.push(release);
                            continue 'jobs;
                        }
                        Ok(Action::Sleep { .. } | Action::Exit) | Err(Spinning) => break 'jobs,
                        Ok(_) => {}
                    }
                }
                break;
            }
            let walked: Vec<_> = core::iter::from_fn(|| program.next_queued_release(until, &mut rng))
                .take(50)
                .collect();
            proptest::prop_assert_eq!(walked, expected);
        }
    }

    #[test]
    fn periodic_jobs_alternate_execution_and_sleep_to_the_next_release() {
        let behaviour = Behaviour::Periodic {
            period: ms(5),
            offset: ms(1),
            execution: Execution::Fixed(ms(2)),
        };
        let mut program = Program::new(&behaviour);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let now = Instant::ZERO;
        assert_eq!(
            Program::first_release(&behaviour),
            Instant::from_nanos(1_000_000)
        );
        for k in 1..4u64 {
            assert_eq!(
                program.next_action(now, &mut rng),
                Ok(Action::Execute {
                    time: ms(2),
                    each: None
                })
            );
            assert_eq!(
                program.next_action(now, &mut rng),
                Ok(Action::Sleep {
                    until: Instant::from_nanos((1 + 5 * k) * 1_000_000),
                    release: Instant::from_nanos((1 + 5 * k) * 1_000_000),
                })
            );
        }
    }

    #[test]
    fn a_flush_step_is_an_action_of_its_own_in_script_order() {
        let behaviour = Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![
                Step::Run(Execution::Fixed(ms(1))),
                Step::FlushCache,
                Step::Loop {
                    count: Some(2),
                    body: vec![Step::FlushCache],
                },
                Step::SleepFor(ms(2)),
            ],
        };
        let mut program = Program::new(&behaviour);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        let now = Instant::from_nanos(1_000_000);
        let mut next = || program.next_action(now, &mut rng).unwrap();
        assert_eq!(
            next(),
            Action::Execute {
                time: ms(1),
                each: None
            }
        );
        assert_eq!(next(), Action::FlushCache);
        assert_eq!(next(), Action::FlushCache);
        assert_eq!(next(), Action::FlushCache);
        assert_eq!(
            next(),
            Action::Sleep {
                until: Instant::from_nanos(3_000_000),
                release: Instant::from_nanos(3_000_000)
            }
        );
        assert_eq!(next(), Action::Exit);
    }

    #[test]
    fn a_loop_that_never_lets_time_pass_is_reported() {
        let behaviour = Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![Step::Loop {
                count: None,
                body: vec![Step::Loop {
                    count: Some(1),
                    body: vec![Step::Loop {
                        count: Some(1),
                        body: vec![],
                    }],
                }],
            }],
        };
        let mut program = Program::new(&behaviour);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert_eq!(program.next_action(Instant::ZERO, &mut rng), Err(Spinning));
    }

    #[test]
    fn a_script_sleep_into_the_past_releases_its_next_job_now() {
        let behaviour = Behaviour::Script {
            offset: Duration::ZERO,
            steps: vec![Step::SleepUntil(Instant::from_nanos(3))],
        };
        let mut program = Program::new(&behaviour);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert_eq!(
            program.next_action(Instant::from_nanos(8), &mut rng),
            Ok(Action::Sleep {
                until: Instant::from_nanos(3),
                release: Instant::from_nanos(8),
            })
        );
    }

    #[test]
    fn aligned_sleep_is_strictly_after_now() {
        assert_eq!(
            next_multiple(Instant::from_nanos(10), Duration::from_nanos(5)),
            Instant::from_nanos(15)
        );
        assert_eq!(
            next_multiple(Instant::from_nanos(11), Duration::from_nanos(5)),
            Instant::from_nanos(15)
        );
        assert_eq!(
            next_multiple(Instant::ZERO, Duration::from_nanos(5)),
            Instant::from_nanos(5)
        );
    }
}
