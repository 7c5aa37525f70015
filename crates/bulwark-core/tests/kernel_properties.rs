//! The syscall layer under any sequence of calls: no panic, every object's invariants after
//! every call, the reclamation paper's bound on every group's termination (each step within
//! its budget plus one scrub entry's overshoot, the whole within the quota), and donation
//! handing over exactly the context the donor holds.

use bulwark_core::ipc::mc_ipc::Client;
use bulwark_core::ipc::{Cpi, CpiId, CpiProtocol, Gate, GateProtocol, Request};
use bulwark_core::kernel::{
    Abort, Allocate, ContextId, Contexts, Donate, Ended, GateId, InvokeCpi, InvokeGate, Kernel,
    Nest, NestedReply, ObjectStore, Reissue, ReplyCpi, ReplyGate, Return, SendNested, Terminate,
    TransferToBackground, Wait,
};
use bulwark_core::reclaim::{ObjectKind, STEP_OVERSHOOT_UNITS};
use bulwark_core::reservation::{Reservation, SchedContext};
use bulwark_core::Duration;
use bulwark_core::{Priority, TaskId, Work};
use proptest::prelude::*;

/// Threads 0..THREADS; ids up to THREADS + 1 are drawn, so some name nothing.
const THREADS: u32 = 4;
/// Group 0's quota, in work units.
const QUOTA: u64 = 60;

/// One system call, with ids drawn beyond the kernel's objects too.
#[derive(Clone, Debug)]
enum Call {
    InvokeCpi {
        cpi: u32,
        idle: Option<u32>,
        priority: u8,
        task: u32,
    },
    SendNested {
        cpi: u32,
        thread: u32,
        downstream: u32,
    },
    NestedReply {
        cpi: u32,
        thread: u32,
    },
    ReplyCpi {
        cpi: u32,
        thread: u32,
    },
    Nest {
        cpi: u32,
        priority: u8,
        task: u32,
    },
    InvokeGate {
        gate: u32,
        task: u32,
        urgency: Option<u64>,
    },
    Wait {
        gate: u32,
    },
    ReplyGate {
        gate: u32,
    },
    Abort {
        gate: u32,
        task: u32,
    },
    Transfer {
        gate: u32,
        task: u32,
    },
    Reissue {
        gate: u32,
        task: u32,
    },
    Allocate {
        thread: u32,
        count: u64,
    },
    Terminate {
        thread: u32,
        budget: Option<u64>,
    },
    Donate {
        from: u32,
        to: u32,
    },
    Return {
        thread: u32,
    },
}

fn call() -> impl Strategy<Value = Call> {
    let cpi = 0..4u32;
    let gate = 0..3u32;
    let task = 0..THREADS + 2;
    let thread = 0..3u32;
    prop_oneof![
        (
            cpi.clone(),
            proptest::option::of(thread.clone()),
            0..10u8,
            task.clone()
        )
            .prop_map(|(cpi, idle, priority, task)| Call::InvokeCpi {
                cpi,
                idle,
                priority,
                task
            }),
        (cpi.clone(), thread.clone(), cpi.clone()).prop_map(|(cpi, thread, downstream)| {
            Call::SendNested {
                cpi,
                thread,
                downstream,
            }
        }),
        (cpi.clone(), thread.clone()).prop_map(|(cpi, thread)| Call::NestedReply { cpi, thread }),
        (cpi.clone(), thread.clone()).prop_map(|(cpi, thread)| Call::ReplyCpi { cpi, thread }),
        (cpi, 0..10u8, task.clone()).prop_map(|(cpi, priority, task)| Call::Nest {
            cpi,
            priority,
            task
        }),
        (gate.clone(), task.clone(), proptest::option::of(0..5u64)).prop_map(
            |(gate, task, urgency)| Call::InvokeGate {
                gate,
                task,
                urgency
            }
        ),
        gate.clone().prop_map(|gate| Call::Wait { gate }),
        gate.clone().prop_map(|gate| Call::ReplyGate { gate }),
        (gate.clone(), task.clone()).prop_map(|(gate, task)| Call::Abort { gate, task }),
        (gate.clone(), task.clone()).prop_map(|(gate, task)| Call::Transfer { gate, task }),
        (gate, task.clone()).prop_map(|(gate, task)| Call::Reissue { gate, task }),
        (task.clone(), 0..20u64).prop_map(|(thread, count)| Call::Allocate { thread, count }),
        (task.clone(), proptest::option::of(0..8u64))
            .prop_map(|(thread, budget)| Call::Terminate { thread, budget }),
        (task.clone(), task.clone()).prop_map(|(from, to)| Call::Donate { from, to }),
        task.prop_map(|thread| Call::Return { thread }),
    ]
}

/// Two CPIs of the drawn protocols (ceiling 9, two threads), an MC-IPC and a FIFO gate over
/// two clusters; threads 0 and 1 in group 0, thread 2 in no group, thread 3 in group 1.
fn kernel(first: CpiProtocol, second: CpiProtocol) -> Kernel {
    let capacity = THREADS as usize;
    let cpis = vec![
        Cpi::new(first, Priority(9), 2, capacity),
        Cpi::new(second, Priority(9), 2, capacity),
    ];
    let gates = vec![
        Gate::new(GateProtocol::McIpc, capacity, &[1, 1]),
        Gate::new(GateProtocol::FifoIpc, capacity, &[1, 1]),
    ];
    let group_of = vec![Some(0), Some(0), None, Some(1)];
    let store = ObjectStore::new(&[QUOTA, QUOTA / 2], group_of).expect("quotas fit");
    Kernel::new(cpis, gates, store).with_contexts(contexts())
}

/// Threads 0 and 1 own contexts 0 and 1; threads 2 and 3 are passive (none of their own).
fn contexts() -> Contexts {
    let context = || {
        let reservation = Reservation::new(Duration::from_millis(2), Duration::from_millis(10));
        SchedContext::new(reservation).ok()
    };
    Contexts::new(
        vec![context(), context()],
        vec![Some(ContextId(0)), Some(ContextId(1)), None, None],
    )
}

/// Each thread's own context, as [`contexts`] binds them.
fn own(thread: u32) -> Option<ContextId> {
    (thread < 2).then_some(ContextId(thread))
}

fn client(task: u32, urgency: Option<u64>) -> Client {
    let cluster = (task % 2) as usize;
    match urgency {
        Some(urgency) => Client::RealTime { cluster, urgency },
        None => Client::Background { cluster },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn any_call_sequence_keeps_every_object_sound(
        first in prop::sample::select(CpiProtocol::ALL.to_vec()),
        second in prop::sample::select(CpiProtocol::ALL.to_vec()),
        calls in proptest::collection::vec(call(), 1..80),
    ) {
        let mut kernel = kernel(first, second);
        let mut work = Work::default();
        // Per group: the termination work so far.
        let mut terminated = [0u64; 2];
        for call in calls {
            match call {
                Call::InvokeCpi { cpi, idle, priority, task } => {
                    let request = Request { priority: Priority(priority), requestor: TaskId(task) };
                    let _ = kernel.call(InvokeCpi { cpi: CpiId(cpi), idle, request }, &mut work);
                }
                Call::SendNested { cpi, thread, downstream } => {
                    let call = SendNested { cpi: CpiId(cpi), thread, downstream: CpiId(downstream) };
                    let _ = kernel.call(call, &mut work);
                }
                Call::NestedReply { cpi, thread } => {
                    let _ = kernel.call(NestedReply { cpi: CpiId(cpi), thread }, &mut work);
                }
                Call::ReplyCpi { cpi, thread } => {
                    let _ = kernel.call(ReplyCpi { cpi: CpiId(cpi), thread }, &mut work);
                }
                Call::Nest { cpi, priority, task } => {
                    let call = Nest { cpi: CpiId(cpi), priority: Priority(priority), requestor: TaskId(task) };
                    let _ = kernel.call(call, &mut work);
                }
                Call::InvokeGate { gate, task, urgency } => {
                    let call = InvokeGate { gate: GateId(gate), task: TaskId(task), client: client(task, urgency) };
                    let _ = kernel.call(call, &mut work);
                }
                Call::Wait { gate } => {
                    let _ = kernel.call(Wait { gate: GateId(gate) }, &mut work);
                }
                Call::ReplyGate { gate } => {
                    let _ = kernel.call(ReplyGate { gate: GateId(gate) }, &mut work);
                }
                Call::Abort { gate, task } => {
                    let _ = kernel.call(Abort { gate: GateId(gate), task: TaskId(task) }, &mut work);
                }
                Call::Transfer { gate, task } => {
                    let call = TransferToBackground { gate: GateId(gate), task: TaskId(task), cluster: (task % 2) as usize };
                    let _ = kernel.call(call, &mut work);
                }
                Call::Reissue { gate, task } => {
                    let call = Reissue { gate: GateId(gate), task: TaskId(task), client: client(task, Some(1)) };
                    let _ = kernel.call(call, &mut work);
                }
                Call::Allocate { thread, count } => {
                    let call = Allocate { thread: TaskId(thread), kind: ObjectKind::Semaphore, count };
                    match kernel.call(call, &mut work) {
                        Ok(made) => {
                            prop_assert_eq!(made.created + made.refused,
                                if kernel.store().is_alive(TaskId(thread)) { count } else { 0 });
                        }
                        Err(_) => prop_assert!(thread >= THREADS),
                    }
                }
                Call::Terminate { thread, budget } => {
                    let group = match thread { 0 | 1 => Some(0), 3 => Some(1), _ => None };
                    match kernel.call(Terminate { thread: TaskId(thread), budget }, &mut work) {
                        Ok(step) => {
                            if let (Some(budget), Some(_)) = (budget, group) {
                                prop_assert!(step.units <= budget.max(1) + STEP_OVERSHOOT_UNITS,
                                    "a step of {} units over its budget {}", step.units, budget);
                            }
                            if let Some(g) = group {
                                terminated[g] += step.units;
                            }
                            if let Ended::Group(g) = step.ended {
                                for member in kernel.store().members(g) {
                                    prop_assert!(!kernel.store().is_alive(*member));
                                }
                            }
                        }
                        Err(_) => prop_assert!(thread >= THREADS),
                    }
                }
                // A donation hands over exactly the context the donor holds; a return gives
                // back the thread's own; a thread that does not exist changes nothing.
                Call::Donate { from, to } => {
                    let held = kernel.context_of(TaskId(from));
                    let before = kernel.context_of(TaskId(to));
                    match kernel.call(Donate { from: TaskId(from), to: TaskId(to) }, &mut work) {
                        Ok(now) => {
                            prop_assert_eq!(now, held);
                            prop_assert_eq!(kernel.context_of(TaskId(to)), held);
                        }
                        Err(_) => {
                            prop_assert!(from >= THREADS || to >= THREADS);
                            prop_assert_eq!(kernel.context_of(TaskId(to)), before);
                        }
                    }
                }
                Call::Return { thread } => {
                    match kernel.call(Return { thread: TaskId(thread) }, &mut work) {
                        Ok(now) => prop_assert_eq!(now, own(thread)),
                        Err(_) => prop_assert!(thread >= THREADS),
                    }
                }
            }
            // Whatever the calls, a thread holds its own context, one of the others, or none.
            for thread in 0..THREADS {
                let held = kernel.context_of(TaskId(thread));
                prop_assert!(held.is_none_or(|id| kernel.context(id).is_some()));
            }
            prop_assert_eq!(kernel.check(), Ok(()));
        }
        prop_assert!(terminated[0] <= QUOTA, "group 0 took {} units", terminated[0]);
        prop_assert!(terminated[1] <= QUOTA / 2, "group 1 took {} units", terminated[1]);
    }
}
