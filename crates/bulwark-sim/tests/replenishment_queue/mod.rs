//! The SPR paper's replenishment queue (section IV-A, Algorithms 1 and 3) as the
//! millisecond-stepped references of these tests step it, written from the paper and sharing
//! no code with `bulwark-core`.

/// A reservation's replenishment queue `R` of `(t, b)` entries in milliseconds (capacity `S`,
/// head first) and its used budget `u`.
#[derive(Clone, Debug)]
pub struct Queue {
    entries: Vec<(u64, u64)>,
    capacity: usize,
    used: u64,
}

impl Queue {
    /// Fig. 8a: the whole budget `b` in one entry, restarted by the first activation.
    pub fn new(budget: u64, capacity: u16) -> Self {
        Queue {
            entries: vec![(0, budget)],
            capacity: usize::from(capacity),
            used: 0,
        }
    }

    /// `t_head`: when the budget in use is (or was) due.
    pub fn head_time(&self) -> u64 {
        self.entries[0].0
    }

    /// The task ran one more millisecond: Algorithm 1, lines 1-4 plan every head the used
    /// budget covers one period after its time. The head leaves before its replenishment is
    /// queued, so a full queue has room for it (the paper's order, enqueue first, would merge
    /// a one-entry queue into itself).
    pub fn run(&mut self, period: u64) {
        self.used += 1;
        self.consume(period);
    }

    fn consume(&mut self, period: u64) {
        while self.entries[0].1 <= self.used {
            let (at, amount) = self.entries.remove(0);
            self.used -= amount;
            self.enqueue(at + period, amount);
        }
    }

    /// Plans `b` at `t`; a full queue postpones its last entry to `t` and adds `b` to it
    /// (section IV-A, after Stanovich et al.).
    fn enqueue(&mut self, at: u64, amount: u64) {
        if self.entries.len() < self.capacity {
            self.entries.push((at, amount));
        } else {
            let last = self.entries.last_mut().expect("the head always exists");
            *last = (last.0.max(at), last.1 + amount);
        }
    }

    /// Algorithm 1, lines 10-13, for a task suspending at `now`: with the head due, the used
    /// budget is split off to `t_head + p` and the head keeps the rest.
    pub fn suspend(&mut self, now: u64, period: u64) {
        self.consume(period);
        if self.entries[0].0 <= now && self.used > 0 {
            let used = std::mem::take(&mut self.used);
            self.enqueue(self.entries[0].0 + period, used);
            self.entries[0].1 -= used;
        }
    }

    /// Algorithm 3 at `now` for a wake-up asked for at `wanted`: merge the entries expired by
    /// then into one head (lines 1-3); if it is due, restart it at `max(min(now, wanted),
    /// t_head)` (line 5). True when budget is due.
    pub fn activate(&mut self, now: u64, wanted: u64) -> bool {
        while self.entries.len() > 1 && self.entries[1].0 <= now.min(wanted) {
            let (_, amount) = self.entries.remove(0);
            self.entries[0].1 += amount;
        }
        if self.entries[0].0 > now {
            return false;
        }
        self.entries[0].0 = self.entries[0].0.max(now.min(wanted));
        true
    }
}
