//! Property tests of the CPI kernel object over any sequence of calls, for every protocol:
//! no call panics, the protocol's invariants hold after every call, a refused call changes
//! nothing (validate, then commit), and every effect names a thread of the pool.

use bulwark_core::ipc::{Cpi, CpiId, CpiProtocol, Effect, Effects, Invoked, Request};
use bulwark_core::{Priority, TaskId, Work};
use proptest::prelude::*;

const THREADS: u32 = 3;

#[derive(Clone, Debug)]
enum Call {
    Invoke {
        idle: Option<u32>,
        priority: u8,
        task: u32,
    },
    SendNested {
        thread: u32,
    },
    NestedReply {
        thread: u32,
    },
    Reply {
        thread: u32,
    },
    Nest {
        priority: u8,
        task: u32,
    },
}

fn call() -> impl Strategy<Value = Call> {
    // Thread indices reach one past the pool, so unknown threads are tried too.
    let thread = 0..THREADS + 1;
    prop_oneof![
        (proptest::option::of(0..THREADS + 1), any::<u8>(), 0u32..4).prop_map(
            |(idle, priority, task)| Call::Invoke {
                idle,
                priority,
                task
            }
        ),
        thread
            .clone()
            .prop_map(|thread| Call::SendNested { thread }),
        thread
            .clone()
            .prop_map(|thread| Call::NestedReply { thread }),
        thread.prop_map(|thread| Call::Reply { thread }),
        (any::<u8>(), 0u32..4).prop_map(|(priority, task)| Call::Nest { priority, task }),
    ]
}

fn protocol() -> impl Strategy<Value = CpiProtocol> {
    proptest::sample::select(CpiProtocol::ALL.to_vec())
}

/// Every thread an effect names is in the pool (one thread for a fixed CPI).
fn effects_in_pool(effects: &Effects, pool: u32) -> bool {
    effects.iter().all(|effect| match effect {
        Effect::SetPriority { thread, .. } | Effect::Wake { thread } => thread < pool,
        Effect::Nest { .. } => true,
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_call_sequence_keeps_the_invariants_and_refusals_change_nothing(
        protocol in protocol(),
        calls in proptest::collection::vec(call(), 1..60),
    ) {
        let mut cpi = Cpi::new(protocol, Priority(200), THREADS, 4);
        let pool = if protocol.is_fixed() { 1 } else { THREADS };
        let mut work = Work::default();
        for call in calls {
            let before = format!("{cpi:?}");
            let (refused, effects) = match call {
                Call::Invoke { idle, priority, task } => {
                    let request = Request { priority: Priority(priority), requestor: TaskId(task) };
                    match cpi.invoke(idle, request, &mut work) {
                        Ok(Invoked::Served { thread, effects, .. }) => {
                            prop_assert!(thread < pool);
                            (false, effects)
                        }
                        Ok(Invoked::Queued) => {
                            prop_assert!(protocol.is_fixed());
                            (false, Effects::none())
                        }
                        Err(_) => (true, Effects::none()),
                    }
                }
                Call::SendNested { thread } => match cpi.send_nested(thread, CpiId(1)) {
                    Ok((_, effects)) => (false, effects),
                    Err(_) => (true, Effects::none()),
                },
                Call::NestedReply { thread } => match cpi.nested_reply(thread) {
                    Ok(effects) => (false, effects),
                    Err(_) => (true, Effects::none()),
                },
                Call::Reply { thread } => match cpi.reply(thread, &mut work) {
                    Ok(replied) => {
                        prop_assert!(replied.next.is_none() || protocol.is_fixed());
                        (false, replied.effects)
                    }
                    Err(_) => (true, Effects::none()),
                },
                Call::Nest { priority, task } => {
                    let nested = cpi.nest(Priority(priority), TaskId(task), &mut work);
                    prop_assert_eq!(nested.is_none(), protocol.is_fixed());
                    (false, nested.unwrap_or_default())
                }
            };
            if refused {
                prop_assert_eq!(format!("{cpi:?}"), before, "a refused call changed the CPI");
            }
            prop_assert!(effects_in_pool(&effects, pool), "an effect outside the pool");
            prop_assert_eq!(cpi.check(), Ok(()));
            prop_assert_eq!(cpi.protocol(), protocol);
        }
    }
}
