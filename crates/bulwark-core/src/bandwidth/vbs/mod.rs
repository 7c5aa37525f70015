//! Variable-bandwidth servers (VBS): processes as sequences of actions, each on its own virtual periodic resource under one bandwidth cap, scheduled by EDF.
//!
//! From "Programmable Temporal Isolation through Variable-Bandwidth Servers" (Craciunas,
//! Kirsch, Payer, Röck, Sokolova), sections III-V.
//!
//! # Model (section III)
//!
//! A [`Resource`] `R = (λ, π)` grants `λ` of processor time per period `π`, periods aligned to
//! time zero. A VBS process with [`BandwidthCap`] `u` is a sequence of [`Action`]s `(l, R)`
//! with `λ/π <= u`. Admission (Eq. 2) is constant time: the caps sum to at most one
//! ([`Vbs::add_process`]). An action is served as a sequence of period instances (the
//! paper's "tasks" of Fig. 1); it *terminates* at the end of the period in which it
//! completed, and its response time `s = f - a` is then at most Eq. (1),
//! `ceil(l/λ) π + π - 1`.
//!
//! # The scheduler (section IV) as a kernel policy
//!
//! [`Vbs`] implements [`Policy`](crate::Policy); tasks are VBS processes. Each process holds
//! the paper's tuple `(i, j, d_i, r_i, l^c_i, λ^c_i)`; Blocked (by release time) and Ready (by
//! deadline) live in a [`queue::VbsQueue`] plugin; `t_s` is the last invocation. Every entry
//! point first brings the scheduler to `now`:
//!
//! 1. **step 1**, the running process's preemption cause, first applicable of:
//!    - *completion*: its known load is done (at `t_s + l^c`). It becomes idle; its action
//!      terminates at `mπ_j` with `c ∈ ((m-1)π_j, mπ_j]`;
//!    - *limit*: `λ^c <= t - t_s`: `l^c -= t - t_s`, `λ^c = λ`, `r = kπ`, `d = (k+1)π` with
//!      `t ∈ ((k-1)π, kπ]`, into Blocked;
//!    - *release* (or any other event): `l^c` and `λ^c` less `t - t_s`, `d` unchanged, back
//!      into Ready ahead of its equals;
//! 2. **step 2**, every process of Blocked with `r_i <= t` moves to Ready.
//!
//! [`schedule`](crate::Policy::schedule) then wakes due sleepers and does **step 3**: the
//! earliest deadline runs (ties: the earlier queued release, which is `r_i` except for a
//! process going on within its period, with a new action or after a suspension, queued at
//! that instant; then first in; a preempted process goes back ahead of its equals, so equal
//! deadlines never preempt each other), and the timer is
//! `min(t_c, t_l, t_r)` with `t_c = t + l^c` (known loads only), `t_l = t + λ^c`, `t_r` the
//! next release (and the next sleeper's timeout).
//!
//! The next action arrives by [`Vbs::switch_action`]: the process marks the switch (the
//! paper's way around unknown loads, which "forces a scheduler invocation"); the current
//! action, if any, completes there. Then, as in the completion case:
//! - same resource, inside the current period: `d_i`, `r_i` unchanged, the limit left goes on;
//! - otherwise, from the termination `mπ_j` (or from the switch, if later), `k` with
//!   `mπ_j ∈ ((k-1)π', kπ']`: **late** `r = kπ'`, `d = (k+1)π'`, `λ^c = λ'`; **early**
//!   `r = mπ_j`, `d = kπ'`, `λ^c = floor((d - r) λ'/π')` ([`ReleaseStrategy`]).
//!
//! [`Vbs::complete_action`] marks a completion with no next action yet. `block`/`sleep`
//! suspend a process within its action and `activate` resumes it (or, for an idle process,
//! starts a new action like its last). Readings chosen where the paper is silent or garbled
//! are written at the code that implements them: the early strategy's zero limit, the release
//! case's deadline at a zero-length run, switches after a gap, and self-suspension.
//!
//! A process set runs to completion as a kernel runs it on Bulwark's scenario machine
//! (`bulwark-sim`: `VbsSystem`, `run_vbs`), which records each action's arrival, completion
//! and termination; the Fig. 1 example and the process-set properties run there.
//!
//! # Time
//!
//! The paper's timeline is discrete. One instant is [`VbsConfig::quantum`] (default 1 µs);
//! limits, periods and known loads must be whole instants, and the scheduler reads `now` in
//! whole instants (rounded down) and sets timers on instant boundaries. The queues use the
//! circular time representation with `t = 2^horizon_bits` instants (default `2^14`); see
//! [`queue`] for the horizon requirement. The scheduler meets it by accepting only periods of
//! at most `t/4` instants, which bounds every pending release below `now + 2t/4` and every
//! deadline below `now + 3t/4`, and by keeping ready deadlines at most `t/4` overdue: after
//! a late invocation that left one further behind, overdue processes are re-keyed (see
//! `keep_horizon`). Wrap-around of `instant mod t` is thus never ambiguous.
//!
//! # Invariants (checked by [`Policy::check_invariants`](crate::Policy::check_invariants))
//!
//! - a process is in the queues exactly when it competes (queued), and is the running
//!   process exactly when the last invocation chose it; it sleeps exactly when the policy
//!   holds a timeout for it; only processes the kernel deems ready compete;
//! - a competing process has a limit `0 < λ^c <= λ`, a load left if known, and a key with
//!   `r <= d <= r + π` within the horizon window of the last invocation;
//! - every resource of every process is within its cap and its period within `t/4`; the
//!   admitted caps sum to at most one;
//! - a lower bound (`floor`) of every ready deadline and pending release is kept, so a late
//!   invocation is detected in `O(1)`.
//!
//! # Work
//!
//! Queue work is reported as [`queue`] describes; `reservations_touched` counts process
//! records whose budget or deadline changed; sleepers' timers count heap operations.

pub mod process;
pub mod queue;
mod scheduler;

pub use process::{Action, BandwidthCap, ReleaseStrategy, Resource};
pub use queue::{ArrayQueue, Key, ListQueue, MatrixQueue, TreeQueue, VbsQueue};
pub use scheduler::{ProcessPhase, ProcessState, Vbs, VbsConfig};
