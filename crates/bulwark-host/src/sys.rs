//! The Linux system calls the runtime needs, each wrapped in a safe function.
//!
//! This is the one module of the crate allowed to use `unsafe`: every block is a single libc
//! call whose arguments are plain values or pointers to locals and atomics that outlive it.
#![allow(unsafe_code)]

use std::cell::Cell;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Once;

/// `FUTEX_WAIT_BITSET` (linux/futex.h): a wait whose timeout is absolute on CLOCK_MONOTONIC.
const FUTEX_WAIT_BITSET: libc::c_int = 9;
/// `FUTEX_WAKE` (linux/futex.h).
const FUTEX_WAKE: libc::c_int = 1;
/// `FUTEX_BITSET_MATCH_ANY` (linux/futex.h).
const FUTEX_BITSET_MATCH_ANY: u32 = u32::MAX;
/// `CAP_SYS_NICE` (linux/capability.h).
pub const CAP_SYS_NICE: u32 = 23;

/// The calling thread's kernel thread id.
pub fn gettid() -> i32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    let tid = unsafe { libc::syscall(libc::SYS_gettid) };
    tid as i32
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
    let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
    if rc != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

/// CLOCK_MONOTONIC in nanoseconds: the clock every timer and measurement of the runtime uses.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// The CPU time the calling thread has consumed, in nanoseconds.
pub fn thread_cputime_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Puts thread `tid` under SCHED_FIFO at `priority`.
pub fn set_fifo(tid: i32, priority: i32) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a valid sched_param that outlives the call.
    check(unsafe { libc::sched_setscheduler(tid, libc::SCHED_FIFO, &param) })
}

/// Puts thread `tid` back under SCHED_OTHER (the default time-sharing policy).
pub fn set_other(tid: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a valid sched_param that outlives the call.
    check(unsafe { libc::sched_setscheduler(tid, libc::SCHED_OTHER, &param) })
}

/// The scheduling policy of thread `tid` (`libc::SCHED_FIFO`, `libc::SCHED_OTHER`, ...).
pub fn policy_of(tid: i32) -> io::Result<i32> {
    // SAFETY: sched_getscheduler takes a plain id.
    let rc = unsafe { libc::sched_getscheduler(tid) };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

/// Sets the calling thread's timer slack to 1 ns (the least), so that its absolute timeouts
/// are not deferred by the default 50 us slack that lets the kernel batch timers.
pub fn least_timer_slack() -> io::Result<()> {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain value.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) })
}

/// The highest SCHED_FIFO priority.
pub fn fifo_max() -> i32 {
    // SAFETY: takes a plain policy constant.
    unsafe { libc::sched_get_priority_max(libc::SCHED_FIFO) }
}

/// Pins thread `tid` to `core` alone.
pub fn pin(tid: i32, core: usize) -> io::Result<()> {
    if core >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    // SAFETY: cpu_set_t is plain data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `core` is below CPU_SETSIZE, checked above.
    unsafe { libc::CPU_SET(core, &mut set) };
    // SAFETY: `set` is a valid cpu_set_t of the size passed.
    check(unsafe { libc::sched_setaffinity(tid, std::mem::size_of::<libc::cpu_set_t>(), &set) })
}

/// The cores the calling thread may run on.
pub fn allowed_cores() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable cpu_set_t of the size passed.
    check(unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) })?;
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: every index is below CPU_SETSIZE.
        .filter(|&core| unsafe { libc::CPU_ISSET(core, &set) })
        .collect())
}

/// Sleeps until the absolute CLOCK_MONOTONIC time `deadline_ns` with the thread's own kernel
/// timer (`clock_nanosleep(TIMER_ABSTIME)`). Only the Linux baseline uses it: under the
/// runtime, task threads never arm a timer.
pub fn sleep_until(deadline_ns: u64) {
    let ts = libc::timespec {
        tv_sec: (deadline_ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (deadline_ns % 1_000_000_000) as libc::c_long,
    };
    loop {
        // SAFETY: `ts` is a valid timespec for the call; the remainder is not asked for.
        let rc = unsafe {
            libc::clock_nanosleep(
                libc::CLOCK_MONOTONIC,
                libc::TIMER_ABSTIME,
                &ts,
                std::ptr::null_mut(),
            )
        };
        if rc != libc::EINTR {
            return;
        }
    }
}

/// How a futex wait ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Woken {
    /// Woken, interrupted by a signal, or the word no longer held the expected value.
    Woken,
    /// The absolute deadline passed.
    TimedOut,
}

/// Waits while `word` holds `expected`, until woken or until the absolute CLOCK_MONOTONIC
/// time `deadline_ns` (no deadline when `None`). The deadline is the kernel's one-shot
/// hrtimer, as `clock_nanosleep(TIMER_ABSTIME)` arms it.
///
/// The futexes are not marked private (`FUTEX_PRIVATE_FLAG`): recent kernels give each process
/// a small private futex hash, and with a thousand task threads parked on their gates a wake
/// walked a bucket chain that grew with the number of threads; shared futexes live in the
/// global hash, sized by the number of processors, whose chains stay short.
pub fn futex_wait(word: &AtomicU32, expected: u32, deadline_ns: Option<u64>) -> Woken {
    let ts = deadline_ns.map(|ns| libc::timespec {
        tv_sec: (ns / 1_000_000_000) as libc::time_t,
        tv_nsec: (ns % 1_000_000_000) as libc::c_long,
    });
    let ts_ptr = ts
        .as_ref()
        .map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned u32 for the call; `ts_ptr` is null or points to `ts`,
    // which outlives the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            FUTEX_WAIT_BITSET,
            expected,
            ts_ptr,
            std::ptr::null::<u32>(),
            FUTEX_BITSET_MATCH_ANY,
        )
    };
    if rc != 0 && io::Error::last_os_error().raw_os_error() == Some(libc::ETIMEDOUT) {
        Woken::TimedOut
    } else {
        Woken::Woken
    }
}

/// Wakes up to `count` threads waiting on `word`.
pub fn futex_wake(word: &AtomicU32, count: i32) {
    // SAFETY: `word` is a live, aligned u32 for the call.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), FUTEX_WAKE, count);
    }
}

/// The signal that stops a preempted task thread: SIGURG, a standard signal (one pending bit
/// per thread, never refused), ignored by default, so a stray one is harmless. A real-time
/// signal would queue one entry per send and be refused (EAGAIN) past RLIMIT_SIGPENDING when
/// a thousand preempted threads each have one pending.
pub fn preempt_signal() -> libc::c_int {
    libc::SIGURG
}

/// Sends the preemption signal to thread `tid` of this process.
pub fn send_preempt(tid: i32) -> io::Result<()> {
    // SAFETY: getpid and tgkill take plain values; the signal has a handler installed by
    // `install_park_handler` before any task thread exists.
    check(unsafe { libc::tgkill(libc::getpid(), tid, preempt_signal()) })
}

/// While alive, the preemption signal is held back from the calling thread (blocked, left
/// pending), so that the thread cannot park in the middle of a critical section: a thread
/// parked while holding a lock the dispatcher needs would wait for the dispatcher forever.
/// Dropping it unblocks the signal, and a preemption that came meanwhile parks the thread
/// then.
pub struct PreemptionHeld {
    /// The signal set to unblock; the guard is not `Send` (the mask is per thread).
    set: libc::sigset_t,
    _thread: std::marker::PhantomData<*const ()>,
}

/// Holds the preemption signal back from the calling thread until the guard drops.
pub fn hold_preemption() -> io::Result<PreemptionHeld> {
    // SAFETY: sigset_t is plain data; sigemptyset initialises it before use.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is a valid, writable sigset_t.
    check(unsafe { libc::sigemptyset(&mut set) })?;
    // SAFETY: as above; the signal number is valid.
    check(unsafe { libc::sigaddset(&mut set, preempt_signal()) })?;
    // SAFETY: `set` is valid for the call; the old mask is not needed.
    let rc = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) };
    if rc != 0 {
        return Err(io::Error::from_raw_os_error(rc));
    }
    Ok(PreemptionHeld {
        set,
        _thread: std::marker::PhantomData,
    })
}

impl Drop for PreemptionHeld {
    fn drop(&mut self) {
        // SAFETY: `self.set` was initialised by `hold_preemption`; the old mask is not needed.
        unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &self.set, std::ptr::null_mut()) };
    }
}

thread_local! {
    /// The address of the calling task thread's gate word (0 for other threads). Constant
    /// initialised and without destructor, so reading it in a signal handler allocates nothing.
    static GATE: Cell<usize> = const { Cell::new(0) };
}

/// Gate values: the thread may run its own code only when its gate is not `GATE_CLOSED`.
pub const GATE_CLOSED: u32 = 0;

/// Registers `gate` as the calling thread's gate, or clears it (`None`) before the gate dies.
pub fn set_thread_gate(gate: Option<&AtomicU32>) {
    GATE.with(|g| g.set(gate.map_or(0, |w| w.as_ptr() as usize)));
}

/// The preemption signal's handler: the thread parks on its gate until the dispatcher opens
/// it. Only futex calls and atomics, which are async-signal-safe; errno is preserved.
extern "C" fn park_handler(_signal: libc::c_int) {
    let address = GATE.with(|g| g.get());
    if address == 0 {
        return;
    }
    // SAFETY: __errno_location returns the calling thread's errno slot.
    let errno = unsafe { *libc::__errno_location() };
    // SAFETY: the address was registered by this very thread from a gate its shared state
    // keeps alive until it clears the registration.
    let gate = unsafe { AtomicU32::from_ptr(address as *mut u32) };
    while gate.load(Ordering::Acquire) == GATE_CLOSED {
        futex_wait(gate, GATE_CLOSED, None);
    }
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// Installs the preemption signal's handler once for the process.
pub fn install_park_handler() -> io::Result<()> {
    static ONCE: Once = Once::new();
    static RESULT: AtomicBool = AtomicBool::new(true);
    ONCE.call_once(|| {
        // SAFETY: sigaction is plain data; all-zero is an empty mask and no flags.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = park_handler as *const () as usize;
        action.sa_flags = libc::SA_RESTART;
        // SAFETY: `action` is valid for the call; the old action is not needed.
        let rc = unsafe { libc::sigaction(preempt_signal(), &action, std::ptr::null_mut()) };
        RESULT.store(rc == 0, Ordering::Relaxed);
    });
    if RESULT.load(Ordering::Relaxed) {
        Ok(())
    } else {
        Err(io::Error::other(
            "cannot install the preemption signal handler",
        ))
    }
}

static INTERRUPTS: AtomicUsize = AtomicUsize::new(0);

extern "C" fn interrupt_handler(_signal: libc::c_int) {
    INTERRUPTS.fetch_add(1, Ordering::Relaxed);
}

/// How many Ctrl-C (SIGINT) the process has received while a runtime was listening.
pub fn interrupts() -> usize {
    INTERRUPTS.load(Ordering::Relaxed)
}

/// The previous SIGINT action, restored by [`restore_interrupt`].
pub struct SavedAction(libc::sigaction);

/// Counts SIGINT instead of dying, so a run can restore its threads first.
pub fn catch_interrupt() -> Option<SavedAction> {
    // SAFETY: sigaction is plain data; all-zero is an empty mask and no flags.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = interrupt_handler as *const () as usize;
    action.sa_flags = libc::SA_RESTART;
    // SAFETY: as above.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: both structures are valid for the call.
    let rc = unsafe { libc::sigaction(libc::SIGINT, &action, &mut old) };
    (rc == 0).then_some(SavedAction(old))
}

/// Sends SIGINT to this process, as Ctrl-C in its terminal would (for tests).
pub fn interrupt_self() -> io::Result<()> {
    // SAFETY: getpid and kill take plain values.
    check(unsafe { libc::kill(libc::getpid(), libc::SIGINT) })
}

/// Puts back the SIGINT action saved by [`catch_interrupt`].
pub fn restore_interrupt(saved: SavedAction) {
    // SAFETY: the saved action came from sigaction and is valid.
    unsafe { libc::sigaction(libc::SIGINT, &saved.0, std::ptr::null_mut()) };
}

/// The soft RLIMIT_RTPRIO of the process.
pub fn rtprio_limit() -> u64 {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid, writable rlimit.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_RTPRIO, &mut limit) };
    if rc == 0 {
        limit.rlim_cur
    } else {
        0
    }
}

/// Sets RLIMIT_RTPRIO (both limits) to `value`; lowering needs no privilege.
pub fn set_rtprio_limit(value: u64) -> io::Result<()> {
    let limit = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: `limit` is a valid rlimit.
    check(unsafe { libc::setrlimit(libc::RLIMIT_RTPRIO, &limit) })
}

/// True when CAP_SYS_NICE is in the calling thread's effective set (capabilities are per
/// thread, and the threads the runtime creates inherit the caller's).
pub fn has_cap_sys_nice() -> bool {
    let Ok(status) = std::fs::read_to_string("/proc/thread-self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << CAP_SYS_NICE) != 0)
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// `_LINUX_CAPABILITY_VERSION_3` (linux/capability.h): 64-bit sets in two words.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

/// Removes CAP_SYS_NICE from every thread-set of the calling thread (effective, permitted,
/// inheritable), for good. Meant for a child process that must run without the privilege.
pub fn drop_cap_sys_nice() -> io::Result<()> {
    let mut header = CapHeader {
        version: CAPABILITY_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: header and two data words, as version 3 requires, valid for the call.
    let rc = unsafe { libc::syscall(libc::SYS_capget, &mut header, data.as_mut_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let bit = !(1u32 << CAP_SYS_NICE);
    data[0].effective &= bit;
    data[0].permitted &= bit;
    data[0].inheritable &= bit;
    // SAFETY: as above.
    let rc = unsafe { libc::syscall(libc::SYS_capset, &mut header, data.as_ptr()) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
