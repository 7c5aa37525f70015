//! How the analyses read a script: its work over a run, its jobs' longest, or the sporadic
//! task an endless job is. Only these readings let a script into a schedulability test; the
//! machine runs every script whatever its shape.

use bulwark_core::Duration;

use crate::model::{CostModel, Execution, Step};

/// What a script's steps take on its own scheduling context, as the analyses read them.
#[derive(Clone, Copy, Debug)]
pub struct StepTimes<'a> {
    /// The kernel's costs: an allocation's work.
    pub cost: &'a CostModel,
    /// Per server (`Scenario::servers`), the most one of its operations runs on its caller's
    /// context (a passive server runs on the context the call donates), where the analysis
    /// bounds what a call to it waits for; `None`, or a server past the end: a call to it
    /// leaves the script's work unknown. Empty: no call is read.
    pub operations: &'a [Option<Duration>],
    /// Each of `operations` bounds a whole call, whatever operation it asks for: what one
    /// request drains from its caller's budget (the gates' bounds count the longest operation
    /// any client asks for), not one operation's run.
    pub whole_calls: bool,
}

impl<'a> StepTimes<'a> {
    /// Steps read with `cost` and no server call.
    pub fn without_calls(cost: &'a CostModel) -> StepTimes<'a> {
        StepTimes::with_operations(cost, &[])
    }

    /// Steps read with `cost`, a call to a server running its operation (`operations`).
    pub fn with_operations(cost: &'a CostModel, operations: &'a [Option<Duration>]) -> Self {
        StepTimes {
            cost,
            operations,
            whole_calls: false,
        }
    }

    /// Steps read with `cost`, a call to a server taking at most what one request drains
    /// (`drains`), whatever operation it asks for.
    pub fn with_drains(cost: &'a CostModel, drains: &'a [Option<Duration>]) -> Self {
        StepTimes {
            cost,
            operations: drains,
            whole_calls: true,
        }
    }

    /// The most one operation of `server` asking for `operation` (`None`: the server's own)
    /// runs, when known.
    pub fn operation(&self, server: usize, operation: Option<&Execution>) -> Option<Duration> {
        let own = (*self.operations.get(server)?)?;
        if self.whole_calls {
            return Some(own);
        }
        Some(operation.map_or(own, Execution::worst_case))
    }

    /// The most a call takes on the caller's context, when known: the [`Self::operation`],
    /// and the step the caller takes at the reply, which needs the core again (after a
    /// release at that instant): 1 ns, as a step of no work.
    pub fn call(&self, server: usize, operation: Option<&Execution>) -> Option<Duration> {
        self.operation(server, operation)?
            .checked_add(Duration::from_nanos(1))
    }
}

/// The most of its own execution a script's `steps` can ask for over a whole run, when that
/// is bounded and known: runs at their longest, computations, VBS loads, allocations with
/// every object created ([`CostModel::allocation_time`]), and loop bodies times their counts.
/// `None` when a step's time belongs to another object (an `invoke` or a CPI call: the
/// server's), when an endless loop holds work, or past `u64` nanoseconds. Sleeps and cache flushes take none,
/// and neither does a `terminate`: its reclamation is kernel time with interrupts masked, the
/// core's mask, which the analyses count apart.
pub fn script_work(steps: &[Step], times: &StepTimes) -> Option<Duration> {
    steps.iter().try_fold(Duration::ZERO, |total, step| {
        let work = match step {
            Step::Run(execution) => execution.worst_case(),
            Step::Compute { count, each } => each.checked_mul(*count)?,
            Step::Action { load, .. } => *load,
            Step::SleepFor(_)
            | Step::SleepUntil(_)
            | Step::SleepUntilAligned(_)
            | Step::SleepUntilNextRelease(_)
            | Step::FlushCache
            | Step::Terminate { .. } => Duration::ZERO,
            Step::Allocate { count, .. } => times.cost.allocation_time(*count)?,
            Step::Invoke { server, operation } => times.call(*server, operation.as_ref())?,
            Step::Call(_) => return None,
            Step::Loop { count, body } => {
                let once = script_work(body, times)?;
                match count {
                    Some(count) => once.checked_mul(*count)?,
                    None if once.is_zero() => Duration::ZERO,
                    None => return None,
                }
            }
        };
        total.checked_add(work)
    })
}

/// A script's work cut into jobs at its sleeps ([`script_longest_job`]): the work before its
/// first sleep, the most of any job between two sleeps, and the work after its last sleep;
/// without a sleep, `first` and `last` are both the whole.
#[derive(Clone, Copy)]
struct Jobs {
    first: Duration,
    inner: Duration,
    last: Duration,
    slept: bool,
}

impl Jobs {
    fn work(time: Duration) -> Jobs {
        Jobs {
            first: time,
            inner: Duration::ZERO,
            last: time,
            slept: false,
        }
    }

    const SLEEP: Jobs = Jobs {
        first: Duration::ZERO,
        inner: Duration::ZERO,
        last: Duration::ZERO,
        slept: true,
    };

    /// `self` then `next`: the job that spans the two is `self.last + next.first`.
    fn then(self, next: Jobs) -> Option<Jobs> {
        let joined = self.last.checked_add(next.first)?;
        Some(match (self.slept, next.slept) {
            (false, false) => Jobs::work(joined),
            (false, true) => Jobs {
                first: joined,
                ..next
            },
            (true, false) => Jobs {
                last: joined,
                ..self
            },
            (true, true) => Jobs {
                first: self.first,
                inner: self.inner.max(next.inner).max(joined),
                last: next.last,
                slept: true,
            },
        })
    }

    /// `count` times in a row (`count > 0`): each job between two rounds is a round's last
    /// and the next one's first.
    fn repeated(self, count: u64) -> Option<Jobs> {
        if !self.slept {
            return Some(Jobs::work(self.first.checked_mul(count)?));
        }
        if count == 1 {
            return Some(self);
        }
        Some(Jobs {
            inner: self.inner.max(self.last.checked_add(self.first)?),
            ..self
        })
    }

    fn longest(self) -> Duration {
        self.first.max(self.inner).max(self.last)
    }
}

fn jobs(steps: &[Step], times: &StepTimes) -> Option<Jobs> {
    steps
        .iter()
        .try_fold(Jobs::work(Duration::ZERO), |before, step| {
            let here = match step {
                Step::Run(execution) => Jobs::work(execution.worst_case()),
                Step::Compute { count, each } => Jobs::work(each.checked_mul(*count)?),
                Step::Action { load, .. } => Jobs::work(*load),
                Step::FlushCache | Step::Terminate { .. } => Jobs::work(Duration::ZERO),
                Step::SleepFor(_) | Step::SleepUntil(_) | Step::SleepUntilAligned(_) => Jobs::SLEEP,
                Step::Allocate { count, .. } => Jobs::work(times.cost.allocation_time(*count)?),
                Step::Invoke { server, operation } => {
                    Jobs::work(times.call(*server, operation.as_ref())?)
                }
                Step::SleepUntilNextRelease(_) | Step::Call(_) => return None,
                Step::Loop { count: Some(0), .. } => Jobs::work(Duration::ZERO),
                Step::Loop {
                    count: Some(count),
                    body,
                } => jobs(body, times)?.repeated(*count)?,
                Step::Loop { count: None, body } => {
                    // Nothing after an endless loop runs; one of sleeps alone is jobs of no work.
                    let round = jobs(body, times)?;
                    (round.slept && round.longest().is_zero()).then_some(Jobs::SLEEP)?
                }
            };
            before.then(here)
        })
}

/// The most work of any one job of a script run once through, its jobs cut at its sleeps
/// (`sleep-for`, `sleep-until`, `sleep-until-aligned`: each wake-up releases a job, which
/// starts then, as its predecessor has ended): a job's own work, which never waits for its
/// script's other jobs. `None` where [`script_work`] is, and for `sleep-until-next-release`,
/// whose jobs may be due before their predecessor ends. A `terminate` adds none here (its
/// mask is the core's); an endless loop of sleeps and no work adds jobs of none.
pub fn script_longest_job(steps: &[Step], times: &StepTimes) -> Option<Duration> {
    jobs(steps, times).map(Jobs::longest)
}

/// A script that is one job repeated for ever, read as a sporadic task ([`script_task`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScriptTask {
    /// `C`: the most a job's work takes.
    pub wcet: Duration,
    /// `T`: the least time between two releases after the first.
    pub spacing: Duration,
    /// `J`: how much later than `T` before the second release the first may come.
    pub jitter: Duration,
    /// The sleep that ends each job.
    pub sleep: JobSleep,
}

/// The sleep that ends each job of a [`ScriptTask`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobSleep {
    /// `sleep-until-next-release`: a periodic task's releases.
    NextRelease,
    /// `sleep-until-aligned`: releases on a grid, each after the last job ended.
    Aligned,
    /// `sleep-for`: each release a pause after the last job ended.
    For,
}

impl JobSleep {
    /// The step's name, as a file writes it.
    pub fn name(self) -> &'static str {
        match self {
            JobSleep::NextRelease => "sleep-until-next-release",
            JobSleep::Aligned => "sleep-until-aligned",
            JobSleep::For => "sleep-for",
        }
    }

    /// Whether its releases are exactly a periodic task's, so that the sporadic model's
    /// worst case can happen; the others' releases follow their jobs' ends, which that model
    /// only bounds.
    pub fn periodic(self) -> bool {
        self == JobSleep::NextRelease
    }
}

/// `(least, most)` a job's `steps` take when they hold only runs, computations, allocations,
/// cache flushes and counted loops of them (no sleep: it would end the job); `None` otherwise.
fn job_work(steps: &[Step], times: &StepTimes) -> Option<(Duration, Duration)> {
    steps
        .iter()
        .try_fold((Duration::ZERO, Duration::ZERO), |(least, most), step| {
            let (low, high) = match step {
                Step::Run(execution) => (execution.best_case(), execution.worst_case()),
                Step::Compute { count, each } => {
                    let time = each.checked_mul(*count)?;
                    (time, time)
                }
                Step::FlushCache => (Duration::ZERO, Duration::ZERO),
                // At least nothing: a bound on the call's own operation is all that is read.
                Step::Invoke { server, operation } => {
                    (Duration::ZERO, times.call(*server, operation.as_ref())?)
                }
                // Refused once the group's quota is used up, so at least nothing.
                Step::Allocate { count, .. } => {
                    (Duration::ZERO, times.cost.allocation_time(*count)?)
                }
                Step::Loop {
                    count: Some(count),
                    body,
                } => {
                    let (low, high) = job_work(body, times)?;
                    (low.checked_mul(*count)?, high.checked_mul(*count)?)
                }
                _ => return None,
            };
            Some((least.checked_add(low)?, most.checked_add(high)?))
        })
}

/// The sporadic task a script started at `offset` is when its `steps` are one endless loop
/// whose body is a job's work ([`job_work`], more than nothing) and then the one sleep that
/// ends the job, after a start of sleeps alone (`sleep-until`, `sleep-for`: a first job of no
/// work); `None` for any other script. Each job is released at a wake-up, so:
///
/// - `sleep-until-next-release = P`: jobs planned `s + j P` from the loop's first release `s`
///   (every sleep plans the next job at its release), a late one's successor due at once but
///   still planned then, as a periodic task's: `T = P`, `J = 0`;
/// - `sleep-until-aligned = A`: each release a multiple of `A` strictly after the last job
///   ended, so two releases after the first are `A` apart at least; the second is a multiple
///   of `A` after the first at `s`, at least `A - s mod A` after it, so the first is released
///   at most `s mod A` after the multiple `A` before the second: `T = A`, `J = s mod A` with
///   `s = offset`; after a start of sleeps `s` is not known (the start's last step waits for
///   the core), only that the second release comes after the first job's least work `b`:
///   `J = A - b - 1 ns` (at least 0);
/// - `sleep-for = d`: each release `d` after the last job ended, which ran at least the
///   work's best case after its release: `T = d + best`, `J = 0`.
///
/// A start of sleeps adds a job of no work before the loop's first: it delays nobody, and it
/// ends (its wake-up, the loop's first release) before the loop's first job begins.
pub fn script_task(offset: Duration, steps: &[Step], times: &StepTimes) -> Option<ScriptTask> {
    let (Step::Loop { count: None, body }, start) = steps.split_last()? else {
        return None;
    };
    let sleeps_only = start
        .iter()
        .all(|step| matches!(step, Step::SleepUntil(_) | Step::SleepFor(_)));
    if !sleeps_only {
        return None;
    }
    let (sleep, work) = body.split_last()?;
    let (least, most) = job_work(work, times)?;
    if most.is_zero() {
        return None;
    }
    let (spacing, jitter, sleep) = match *sleep {
        Step::SleepUntilNextRelease(period) => (period, Duration::ZERO, JobSleep::NextRelease),
        Step::SleepUntilAligned(grid) if !grid.is_zero() => {
            let jitter = if start.is_empty() {
                offset.as_nanos() % grid.as_nanos()
            } else {
                (grid.as_nanos()).saturating_sub(least.as_nanos().saturating_add(1))
            };
            (grid, Duration::from_nanos(jitter), JobSleep::Aligned)
        }
        Step::SleepFor(pause) => (pause.checked_add(least)?, Duration::ZERO, JobSleep::For),
        _ => return None,
    };
    (!spacing.is_zero()).then_some(ScriptTask {
        wcet: most,
        spacing,
        jitter,
        sleep,
    })
}

/// How the analyses read one script: the one reading that bounds it best.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScriptReading {
    /// One endless loop of a job's work and one sleep: a sporadic task ([`script_task`]).
    Sporadic(ScriptTask),
    /// Its work over the whole run is bounded ([`script_work`]), and so is each of its
    /// jobs when `longest` is known ([`script_longest_job`]).
    Bounded {
        /// `W`: all its work over the run.
        work: Duration,
        /// The most work of any one of its jobs, when its jobs never wait for one another.
        longest: Option<Duration>,
    },
    /// A server call or an endless loop with work: nothing bounds what it runs.
    Unbounded,
}

impl ScriptReading {
    /// The reading of a script started at `offset`: a sporadic task when it is one, else
    /// its bounded work, else unbounded.
    pub fn of(offset: Duration, steps: &[Step], times: &StepTimes) -> ScriptReading {
        if let Some(job) = script_task(offset, steps, times) {
            return ScriptReading::Sporadic(job);
        }
        match script_work(steps, times) {
            Some(work) => ScriptReading::Bounded {
                work,
                longest: script_longest_job(steps, times),
            },
            None => ScriptReading::Unbounded,
        }
    }

    /// `W`, when the script is read as a lump of bounded work.
    pub fn work(self) -> Option<Duration> {
        match self {
            ScriptReading::Bounded { work, .. } => Some(work),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Execution, ObjectKind};
    use bulwark_core::Instant;

    const FREE: StepTimes<'static> = StepTimes {
        cost: &CostModel::FREE,
        operations: &[],
        whole_calls: false,
    };

    /// By hand: 2 ms, then 3 x (4 x 1 ms + a 5 ms sleep), then a termination and a VBS load of
    /// 6 ms: 2 + 3 x 4 + 6 = 20 ms. A server call or an endless loop with work leave it
    /// unknown; an endless loop of sleeps adds nothing; an allocation adds its objects' units.
    #[test]
    fn script_work_by_hand() {
        let ms = Duration::from_millis;
        let steps = [
            Step::Run(Execution::between(ms(1), ms(2))),
            Step::Loop {
                count: Some(3),
                body: vec![
                    Step::Compute {
                        count: 4,
                        each: ms(1),
                    },
                    Step::SleepFor(ms(5)),
                ],
            },
            Step::Terminate {
                task: "rogue".to_owned(),
                step: None,
            },
            Step::Action {
                load: ms(6),
                limit: ms(1),
                period: ms(2),
            },
        ];
        assert_eq!(script_work(&steps, &FREE), Some(ms(20)));
        let idle = Step::Loop {
            count: None,
            body: vec![Step::SleepFor(ms(1)), Step::FlushCache],
        };
        assert_eq!(script_work(&[idle], &FREE), Some(Duration::ZERO));
        let endless = Step::Loop {
            count: None,
            body: vec![Step::Run(Execution::exact(ms(1)))],
        };
        assert_eq!(script_work(&[endless], &FREE), None);
        let call = Step::Invoke {
            server: 0,
            operation: None,
        };
        assert_eq!(
            script_work(&[Step::Run(Execution::exact(ms(1))), call], &FREE),
            None
        );
        // 1,000 objects of 3 units at 13 cycles and 1 GHz: 39 us; free, nothing; past u64
        // cycles, unknown.
        let allocate = |count| Step::Allocate {
            count,
            object: ObjectKind::Semaphore,
        };
        let measured = CostModel {
            clock_hz: 1_000_000_000,
            reclaim_per_unit: 13,
            ..CostModel::FREE
        };
        assert_eq!(
            script_work(&[allocate(1000)], &StepTimes::without_calls(&measured)),
            Some(Duration::from_micros(39))
        );
        assert_eq!(script_work(&[allocate(1000)], &FREE), Some(Duration::ZERO));
        assert_eq!(
            script_work(
                &[allocate(u64::MAX / 3)],
                &StepTimes::without_calls(&measured)
            ),
            None
        );
    }

    /// By hand: 2 ms | (2 ms | 1 ms) x 3 then 4 ms, `|` a sleep: the jobs are 2, 2, 1 + 2,
    /// 1 + 2, 1 + 4 ms, so 5 ms; without the last run 3 ms (a round's end and the next one's
    /// start); one round, 1 + 4 ms; no sleep at all, the whole. A periodic sleep, a call or an
    /// endless loop with work leave it unknown; an endless loop of sleeps adds jobs of none.
    #[test]
    fn script_longest_job_by_hand() {
        let ms = Duration::from_millis;
        let run = |time| Step::Run(Execution::exact(ms(time)));
        let script = |rounds, tail: Option<u64>| {
            let mut steps = vec![
                run(2),
                Step::SleepFor(ms(1)),
                Step::Loop {
                    count: Some(rounds),
                    body: vec![
                        Step::Compute {
                            count: 2,
                            each: ms(1),
                        },
                        Step::SleepUntilAligned(ms(5)),
                        run(1),
                    ],
                },
            ];
            steps.extend(tail.map(run));
            steps
        };
        assert_eq!(script_longest_job(&script(3, Some(4)), &FREE), Some(ms(5)));
        assert_eq!(script_longest_job(&script(3, None), &FREE), Some(ms(3)));
        assert_eq!(script_longest_job(&script(1, Some(4)), &FREE), Some(ms(5)));
        assert_eq!(script_longest_job(&script(1, None), &FREE), Some(ms(2)));
        let whole = [
            run(1),
            Step::Loop {
                count: Some(2),
                body: vec![run(2)],
            },
        ];
        assert_eq!(script_longest_job(&whole, &FREE), Some(ms(5)));
        let idle = Step::Loop {
            count: None,
            body: vec![Step::SleepFor(ms(1))],
        };
        assert_eq!(script_longest_job(&[run(3), idle], &FREE), Some(ms(3)));
        let busy = Step::Loop {
            count: None,
            body: vec![run(1), Step::SleepFor(ms(1))],
        };
        for steps in [
            vec![run(1), Step::SleepUntilNextRelease(ms(5))],
            vec![Step::Call(0)],
            vec![busy],
        ] {
            assert_eq!(script_longest_job(&steps, &FREE), None, "{steps:?}");
        }
    }

    /// By hand: a job of a 1-2 ms run and 2 x 500 us is 2-3 ms; `T` is the period, the grid
    /// (3 ms into a 2 ms grid: the first release up to 1 ms late), or 5 ms plus the 2 ms best
    /// case. Any other shape is no sporadic task.
    #[test]
    fn script_task_by_hand() {
        let ms = Duration::from_millis;
        let endless = |sleep: Step| {
            vec![Step::Loop {
                count: None,
                body: vec![
                    Step::Run(Execution::between(ms(1), ms(2))),
                    Step::Loop {
                        count: Some(2),
                        body: vec![Step::Compute {
                            count: 1,
                            each: Duration::from_micros(500),
                        }],
                    },
                    Step::FlushCache,
                    sleep,
                ],
            }]
        };
        let task = |wcet, spacing, jitter, sleep| ScriptTask {
            wcet: ms(wcet),
            spacing: ms(spacing),
            jitter: ms(jitter),
            sleep,
        };
        let periodic = endless(Step::SleepUntilNextRelease(ms(10)));
        assert_eq!(
            script_task(ms(4), &periodic, &FREE),
            Some(task(3, 10, 0, JobSleep::NextRelease))
        );
        let aligned = endless(Step::SleepUntilAligned(ms(2)));
        assert_eq!(
            script_task(ms(3), &aligned, &FREE),
            Some(task(3, 2, 1, JobSleep::Aligned))
        );
        assert_eq!(
            script_task(ms(4), &aligned, &FREE),
            Some(task(3, 2, 0, JobSleep::Aligned))
        );
        let paused = endless(Step::SleepFor(ms(5)));
        assert_eq!(
            script_task(ms(0), &paused, &FREE),
            Some(task(3, 7, 0, JobSleep::For))
        );
        // A start of sleeps: a periodic plan from the loop's first release, the same task;
        // an aligned grid from an unknown first release, whose successor comes after the
        // least work (2 ms) at the soonest: J = 10 - 2 ms - 1 ns; no jitter past 0.
        let start = |mut steps: Vec<Step>| {
            steps.insert(0, Step::SleepUntil(Instant::from_nanos(ms(5).as_nanos())));
            steps.insert(1, Step::SleepFor(ms(1)));
            steps
        };
        assert_eq!(
            script_task(ms(4), &start(periodic.clone()), &FREE),
            Some(task(3, 10, 0, JobSleep::NextRelease))
        );
        let ten = start(endless(Step::SleepUntilAligned(ms(10))));
        let jitter = Duration::from_nanos(ms(8).as_nanos() - 1);
        assert_eq!(
            script_task(ms(4), &ten, &FREE),
            Some(ScriptTask {
                jitter,
                ..task(3, 10, 0, JobSleep::Aligned)
            })
        );
        assert_eq!(
            script_task(ms(3), &start(aligned.clone()), &FREE),
            Some(task(3, 2, 0, JobSleep::Aligned))
        );
        // Not one endless job: a start with work, a counted loop, an absolute sleep, two
        // sleeps, a call, no work, or no time between releases.
        let mut prefixed = periodic.clone();
        prefixed.insert(0, Step::Run(Execution::exact(ms(1))));
        let counted = vec![Step::Loop {
            count: Some(5),
            body: vec![Step::Run(Execution::exact(ms(1))), Step::SleepFor(ms(1))],
        }];
        let body = |steps: Vec<Step>| {
            vec![Step::Loop {
                count: None,
                body: steps,
            }]
        };
        let run = || Step::Run(Execution::exact(ms(1)));
        let others = [
            prefixed,
            counted,
            endless(Step::SleepUntil(Instant::from_nanos(ms(9).as_nanos()))),
            body(vec![
                run(),
                Step::SleepFor(ms(1)),
                run(),
                Step::SleepFor(ms(1)),
            ]),
            body(vec![
                Step::Invoke {
                    server: 0,
                    operation: None,
                },
                Step::SleepFor(ms(1)),
            ]),
            body(vec![Step::FlushCache, Step::SleepFor(ms(1))]),
            body(vec![run(), Step::SleepUntilNextRelease(Duration::ZERO)]),
            body(vec![run()]),
        ];
        for steps in &others {
            assert_eq!(script_task(Duration::ZERO, steps, &FREE), None, "{steps:?}");
        }
    }

    /// Each shape gets its one reading: an endless job is sporadic (even with its work
    /// bounded nowhere), a run-once script bounded with its longest job, a job due at the
    /// next release bounded without one, and a server call unbounded.
    #[test]
    fn each_script_gets_one_reading() {
        let ms = Duration::from_millis;
        let read = |steps: &[Step]| ScriptReading::of(Duration::ZERO, steps, &FREE);
        let endless = [Step::Loop {
            count: None,
            body: vec![Step::Run(Execution::Fixed(ms(2))), Step::SleepFor(ms(8))],
        }];
        let ScriptReading::Sporadic(job) = read(&endless) else {
            panic!("{:?}", read(&endless));
        };
        assert_eq!((job.wcet, job.spacing), (ms(2), ms(10)));
        assert_eq!(read(&endless).work(), None);
        let once = [
            Step::Run(Execution::Fixed(ms(3))),
            Step::SleepFor(ms(5)),
            Step::Run(Execution::Fixed(ms(1))),
        ];
        let bounded = ScriptReading::Bounded {
            work: ms(4),
            longest: Some(ms(3)),
        };
        assert_eq!(read(&once), bounded);
        assert_eq!(bounded.work(), Some(ms(4)));
        let due = [
            Step::Run(Execution::Fixed(ms(3))),
            Step::SleepUntilNextRelease(ms(5)),
            Step::Run(Execution::Fixed(ms(1))),
        ];
        assert_eq!(
            read(&due),
            ScriptReading::Bounded {
                work: ms(4),
                longest: None
            }
        );
        let call = [Step::Invoke {
            server: 0,
            operation: None,
        }];
        assert_eq!(read(&call), ScriptReading::Unbounded);
    }

    /// A call to a server whose operation is known runs it on the caller's context: 2 ms of
    /// the server's own, or the 3 ms the call asks for, each and its reply's step (1 ns); a
    /// call to a server left unknown (or past the table) leaves the work unknown, as before.
    #[test]
    fn a_call_counts_its_operation_when_the_server_is_bounded() {
        let ms = Duration::from_millis;
        let operations = [Some(ms(2)), None];
        let times = StepTimes::with_operations(&CostModel::FREE, &operations);
        let call = |server, operation| Step::Invoke { server, operation };
        let job = [Step::Loop {
            count: None,
            body: vec![
                call(0, None),
                Step::Run(Execution::Fixed(ms(1))),
                call(0, Some(Execution::Fixed(ms(3)))),
                Step::SleepUntilNextRelease(ms(20)),
            ],
        }];
        let ScriptReading::Sporadic(task) = ScriptReading::of(Duration::ZERO, &job, &times) else {
            panic!("{:?}", ScriptReading::of(Duration::ZERO, &job, &times));
        };
        let ns = Duration::from_nanos;
        let plus = |a: Duration, b: Duration| a.checked_add(b).unwrap();
        assert_eq!((task.wcet, task.spacing), (plus(ms(6), ns(2)), ms(20)));
        assert_eq!(
            script_work(&[call(0, None)], &times),
            Some(plus(ms(2), ns(1)))
        );
        assert_eq!(
            script_longest_job(
                &[call(0, None), Step::SleepFor(ms(1)), call(0, None)],
                &times
            ),
            Some(plus(ms(2), ns(1)))
        );
        assert_eq!(times.operation(0, None), Some(ms(2)));
        assert_eq!(script_work(&[call(1, None)], &times), None);
        assert_eq!(script_work(&[call(2, None)], &times), None);
        assert_eq!(
            ScriptReading::of(Duration::ZERO, &job, &FREE),
            ScriptReading::Unbounded
        );
    }
}
