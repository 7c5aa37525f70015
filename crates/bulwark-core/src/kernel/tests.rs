use alloc::vec;
use alloc::vec::Vec;

use super::*;
use crate::ipc::mc_ipc::{Aborted, Client};
use crate::ipc::{CpiProtocol, Effect, Effects, GateProtocol, Invoked};
use crate::reclaim::{ObjectKind, STEP_OVERSHOOT_UNITS};
use crate::test_support::req;
use crate::{Priority, TaskId};

fn realtime(urgency: u64) -> Client {
    Client::RealTime {
        cluster: 0,
        urgency,
    }
}

/// CPI 0 under PIP (ceiling 9, two threads) calling CPI 1 under propagation; gate 0 FIFO;
/// threads 0 and 1 in group 0 (quota 40 units), thread 2 on its own.
fn kernel() -> Kernel {
    let cpis = vec![
        Cpi::new(CpiProtocol::Inherited, Priority(9), 2, 4),
        Cpi::new(CpiProtocol::Propagated, Priority(9), 2, 4),
    ];
    let gates = vec![Gate::new(GateProtocol::FifoIpc, 4, &[1])];
    let store = ObjectStore::new(&[40], vec![Some(0), Some(0), None]).unwrap();
    Kernel::new(cpis, gates, store)
}

/// A call naming an object the kernel does not have is refused, and nothing changes.
#[test]
fn an_unknown_object_is_refused_before_anything_changes() {
    let mut kernel = kernel();
    let mut work = Work::default();
    let unknown = SyscallError::UnknownObject;
    let no_cpi = CpiId(2);
    let no_gate = GateId(1);
    let invoke = InvokeCpi {
        cpi: no_cpi,
        idle: Some(0),
        request: req(3, 0),
    };
    assert_eq!(kernel.call(invoke, &mut work), Err(unknown));
    // A nested call to a CPI that does not exist leaves the sender's state alone.
    let served = kernel.call(
        InvokeCpi {
            cpi: CpiId(0),
            ..invoke
        },
        &mut work,
    );
    assert!(matches!(served, Ok(Invoked::Served { thread: 0, .. })));
    let nested = SendNested {
        cpi: CpiId(0),
        thread: 0,
        downstream: no_cpi,
    };
    assert_eq!(kernel.call(nested, &mut work), Err(unknown));
    let nested = SendNested {
        downstream: CpiId(1),
        ..nested
    };
    assert!(kernel.call(nested, &mut work).is_ok());
    let gate_invoke = InvokeGate {
        gate: no_gate,
        task: TaskId(0),
        client: realtime(1),
    };
    assert_eq!(kernel.call(gate_invoke, &mut work), Err(unknown));
    assert_eq!(kernel.call(Wait { gate: no_gate }, &mut work), Err(unknown));
    let allocate = Allocate {
        thread: TaskId(3),
        kind: ObjectKind::Semaphore,
        count: 1,
    };
    assert_eq!(kernel.call(allocate, &mut work), Err(unknown));
    let terminate = Terminate {
        thread: TaskId(3),
        budget: None,
    };
    assert_eq!(kernel.call(terminate, &mut work), Err(unknown));
    kernel.check().unwrap();
}

/// Fig. 4 through the syscall layer: the lock holder inherits the waiter's priority, and
/// its reply hands the lock over (the three effects of PIP's finish).
#[test]
fn pip_through_the_syscall_layer() {
    let mut kernel = kernel();
    let mut work = Work::default();
    let cpi = CpiId(0);
    let first = InvokeCpi {
        cpi,
        idle: Some(0),
        request: req(3, 0),
    };
    kernel.call(first, &mut work).unwrap();
    let second = InvokeCpi {
        cpi,
        idle: Some(1),
        request: req(7, 1),
    };
    let Invoked::Served { effects, waits, .. } = kernel.call(second, &mut work).unwrap() else {
        panic!("a pooled CPI serves every request on a thread");
    };
    assert!(waits);
    assert_eq!(
        effects,
        Effects::one(Effect::SetPriority {
            thread: 0,
            priority: Priority(7)
        })
    );
    let replied = kernel.call(ReplyCpi { cpi, thread: 0 }, &mut work).unwrap();
    let effects: Vec<Effect> = replied.effects.iter().collect();
    assert_eq!(effects.len(), 3);
    assert_eq!(effects[1], Effect::Wake { thread: 1 });
    // `nest` into a PIP CPI whose holder serves task 1 raises it.
    let nest = Nest {
        cpi,
        priority: Priority(8),
        requestor: TaskId(1),
    };
    let raised = kernel.call(nest, &mut work).unwrap().unwrap();
    assert!(raised.iter().any(|e| e
        == Effect::SetPriority {
            thread: 1,
            priority: Priority(8)
        }));
    kernel.check().unwrap();
}

/// FIFO-IPC through the syscall layer: served in arrival order, a queued request is pruned
/// by an abort, one being served is not.
#[test]
fn a_gate_through_the_syscall_layer() {
    let mut kernel = kernel();
    let mut work = Work::default();
    let gate = GateId(0);
    for task in [2, 0, 1] {
        let invoke = InvokeGate {
            gate,
            task: TaskId(task),
            client: realtime(task as u64),
        };
        kernel.call(invoke, &mut work).unwrap();
    }
    assert_eq!(kernel.call(Wait { gate }, &mut work), Ok(Some(TaskId(2))));
    let abort = |task| Abort {
        gate,
        task: TaskId(task),
    };
    assert_eq!(kernel.call(abort(2), &mut work), Ok(Aborted::InService));
    assert_eq!(kernel.call(abort(0), &mut work), Ok(Aborted::Pruned));
    assert_eq!(kernel.call(ReplyGate { gate }, &mut work), Ok(TaskId(2)));
    assert_eq!(kernel.call(Wait { gate }, &mut work), Ok(Some(TaskId(1))));
    // FIFO-IPC has no background queue.
    let transfer = TransferToBackground {
        gate,
        task: TaskId(0),
        cluster: 0,
    };
    assert_eq!(kernel.call(transfer, &mut work), Ok(false));
    kernel.check().unwrap();
}

/// The reclamation paper's guarantee through the syscall layer: a group member's
/// allocations stop at the quota, and terminating it ends the whole group in steps of at
/// most the budget plus one scrub entry's overshoot, in all no more than the quota.
#[test]
fn a_group_is_terminated_within_its_quota() {
    let mut kernel = kernel();
    let mut work = Work::default();
    let allocate = |thread, count| Allocate {
        thread: TaskId(thread),
        kind: ObjectKind::Semaphore,
        count,
    };
    let allocation = kernel.call(allocate(1, 1_000), &mut work).unwrap();
    assert!(allocation.created > 0 && allocation.refused > 0);
    assert_eq!(allocation.created + allocation.refused, 1_000);
    // Thread 2 has no group: nothing refuses it.
    let free = kernel.call(allocate(2, 100), &mut work).unwrap();
    assert_eq!((free.created, free.refused), (100, 0));

    let step = Terminate {
        thread: TaskId(0),
        budget: Some(3),
    };
    let first = kernel.call(step, &mut work).unwrap();
    assert_eq!(first.ended, Ended::Group(0));
    assert_eq!(kernel.store().members(0), [TaskId(0), TaskId(1)]);
    assert!(!kernel.store().is_alive(TaskId(0)) && !kernel.store().is_alive(TaskId(1)));
    let mut total = first.units;
    let mut done = first.done;
    let mut steps = 1;
    while !done {
        let next = kernel.call(step, &mut work).unwrap();
        assert!(next.units <= 3 + STEP_OVERSHOOT_UNITS);
        assert_eq!(next.ended, Ended::Nothing);
        total += next.units;
        done = next.done;
        steps += 1;
        assert!(steps < 100, "a stepwise termination ends");
    }
    assert!(total <= 40, "termination work {total} within the quota");
    // A terminated thread allocates nothing.
    assert_eq!(
        kernel.call(allocate(1, 5), &mut work),
        Ok(Allocation::default())
    );
    // The lone thread's process goes one object at a time: its 100 objects and itself.
    let alone = Terminate {
        thread: TaskId(2),
        budget: None,
    };
    let ended = kernel.call(alone, &mut work).unwrap();
    assert_eq!(ended.ended, Ended::Thread(TaskId(2)));
    assert!(ended.units > 100);
    assert_eq!(kernel.call(alone, &mut work).unwrap().ended, Ended::Nothing);
    kernel.check().unwrap();
}

/// A quota too small for a group's arena is refused naming the group; a thread naming a
/// group that does not exist has none.
#[test]
fn a_store_configuration_names_what_it_refuses() {
    assert!(matches!(
        ObjectStore::new(&[0], vec![None]),
        Err(StoreError::Group(0, _))
    ));
    let store = ObjectStore::new(&[10], vec![Some(3), Some(0)]).unwrap();
    assert_eq!(store.members(0), [TaskId(1)]);
    store.check().unwrap();
}

/// Thread 0 owns context 0 (2 ms every 10 ms), thread 1 context 1; threads 2 and 3 are
/// passive servers with none. A request from thread 0 donates its context to server 2, and
/// a nested request from 2 on to server 3; each reply gives a server its own (none) back,
/// and the client keeps its context throughout.
#[test]
fn a_context_follows_a_request_chain_and_comes_back_with_the_replies() {
    use crate::reservation::{Reservation, SchedContext};
    use crate::Duration;
    let context = || {
        SchedContext::new(Reservation::new(
            Duration::from_millis(2),
            Duration::from_millis(10),
        ))
        .ok()
    };
    let contexts = Contexts::new(
        vec![context(), context()],
        // Thread 3's binding names a context that does not exist: it has none.
        vec![
            Some(ContextId(0)),
            Some(ContextId(1)),
            None,
            Some(ContextId(7)),
        ],
    );
    let mut kernel = Kernel::default().with_contexts(contexts);
    let mut work = Work::default();
    let thread = |t: u32| TaskId(t);
    assert_eq!(kernel.context_ids(), [ContextId(0), ContextId(1)]);
    assert_eq!(kernel.context_of(thread(3)), None);
    let donate = |from, to| Donate {
        from: thread(from),
        to: thread(to),
    };
    assert_eq!(kernel.call(donate(0, 2), &mut work), Ok(Some(ContextId(0))));
    assert_eq!(kernel.call(donate(2, 3), &mut work), Ok(Some(ContextId(0))));
    assert_eq!(kernel.context_of(thread(3)), Some(ContextId(0)));
    // A thread that does not exist neither gives nor takes: nothing changes.
    assert_eq!(
        kernel.call(donate(9, 2), &mut work),
        Err(SyscallError::UnknownObject)
    );
    assert_eq!(
        kernel.call(donate(1, 9), &mut work),
        Err(SyscallError::UnknownObject)
    );
    assert_eq!(kernel.context_of(thread(2)), Some(ContextId(0)));
    let back = |t| Return { thread: thread(t) };
    assert_eq!(kernel.call(back(3), &mut work), Ok(None));
    assert_eq!(kernel.call(back(2), &mut work), Ok(None));
    assert_eq!(kernel.context_of(thread(0)), Some(ContextId(0)));
    assert_eq!(kernel.context_of(thread(1)), Some(ContextId(1)));
    // A client that served someone else gets its own back, not none.
    assert_eq!(kernel.call(donate(1, 0), &mut work), Ok(Some(ContextId(1))));
    assert_eq!(kernel.call(back(0), &mut work), Ok(Some(ContextId(0))));
    assert_eq!(
        kernel.call(back(9), &mut work),
        Err(SyscallError::UnknownObject)
    );
    assert!(kernel.context(ContextId(1)).is_some() && kernel.context(ContextId(2)).is_none());
    kernel.check().unwrap();
}
