//! Real work for script steps: spinning on the thread's CPU clock, a small matrix multiply as
//! the unit of `compute`, and a buffer larger than the last-level cache for `flush-cache`.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::sys;

/// Side of the square matrices of one multiply (24 x 24 f64: 4.5 KiB each, three fit in L1).
const SIDE: usize = 24;
/// Multiplies timed to calibrate one unit of `compute`.
const CALIBRATION_RUNS: usize = 64;
/// The cache size assumed when sysfs does not say (bytes).
const DEFAULT_LLC: usize = 32 << 20;
/// The largest flush buffer the runtime allocates (bytes).
const MAX_FLUSH: usize = 256 << 20;

/// Spins until the calling thread has consumed `nanos` of CPU time (time it was preempted or
/// parked does not count), or until `stop` is set. Returns false when stopped.
pub fn spin_cpu(nanos: u64, stop: &AtomicBool) -> bool {
    let start = sys::thread_cputime_ns();
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        if sys::thread_cputime_ns().saturating_sub(start) >= nanos {
            return true;
        }
    }
}

/// Three matrices and the product kernel.
pub struct Matmul {
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

impl Default for Matmul {
    fn default() -> Self {
        Self::new()
    }
}

impl Matmul {
    /// Matrices filled with small distinct values.
    pub fn new() -> Self {
        let fill = |k: usize| {
            (0..SIDE * SIDE)
                .map(|i| ((i * k) % 17) as f64 * 0.25)
                .collect()
        };
        Matmul {
            a: fill(3),
            b: fill(7),
            c: vec![0.0; SIDE * SIDE],
        }
    }

    /// One product `c = a * b` (the textbook triple loop, i-k-j order for unit stride).
    pub fn multiply(&mut self) {
        let a = black_box(&self.a);
        let b = black_box(&self.b);
        self.c.iter_mut().for_each(|x| *x = 0.0);
        for i in 0..SIDE {
            for k in 0..SIDE {
                let aik = a[i * SIDE + k];
                let row = &b[k * SIDE..(k + 1) * SIDE];
                let out = &mut self.c[i * SIDE..(i + 1) * SIDE];
                for (o, bkj) in out.iter_mut().zip(row) {
                    *o += aik * bkj;
                }
            }
        }
        black_box(&self.c);
    }

    /// CPU time of one product on this machine with a warm cache: the least of several runs,
    /// so that preemption during calibration does not inflate it.
    pub fn calibrate(&mut self) -> u64 {
        self.multiply();
        (0..CALIBRATION_RUNS)
            .map(|_| {
                let start = sys::thread_cputime_ns();
                self.multiply();
                sys::thread_cputime_ns().saturating_sub(start)
            })
            .min()
            .unwrap_or(1)
            .max(1)
    }
}

/// The size of the largest cache of `core` per sysfs, or a default.
pub fn last_level_cache(core: usize) -> usize {
    let base = format!("/sys/devices/system/cpu/cpu{core}/cache");
    let Ok(entries) = std::fs::read_dir(&base) else {
        return DEFAULT_LLC;
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read_to_string(e.path().join("size")).ok())
        .filter_map(|s| parse_size(s.trim()))
        .max()
        .unwrap_or(DEFAULT_LLC)
}

fn parse_size(text: &str) -> Option<usize> {
    let (digits, scale) = match text.chars().last()? {
        'K' => (&text[..text.len() - 1], 1 << 10),
        'M' => (&text[..text.len() - 1], 1 << 20),
        'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    digits.parse::<usize>().ok()?.checked_mul(scale)
}

/// A buffer twice the last-level cache, written through to evict every other task's lines.
pub struct FlushBuffer {
    bytes: Vec<u8>,
    round: u8,
}

impl FlushBuffer {
    /// A buffer for `core`, touched once so that flushing takes no page faults.
    pub fn new(core: usize) -> Self {
        let size = last_level_cache(core).saturating_mul(2).min(MAX_FLUSH);
        FlushBuffer {
            bytes: vec![1; size],
            round: 1,
        }
    }

    /// Writes one byte in every 64-byte line of the buffer.
    pub fn flush(&mut self) {
        self.round = self.round.wrapping_add(1);
        for line in self.bytes.iter_mut().step_by(64) {
            *line = self.round;
        }
        black_box(&self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_their_suffix() {
        assert_eq!(parse_size("32K"), Some(32 * 1024));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn multiply_computes_the_product() {
        // Identity times b is b: set a to the identity by hand.
        let mut m = Matmul::new();
        m.a = (0..SIDE * SIDE)
            .map(|i| if i / SIDE == i % SIDE { 1.0 } else { 0.0 })
            .collect();
        m.multiply();
        assert_eq!(m.c, m.b);
    }

    #[test]
    fn spinning_consumes_the_cpu_time_asked() {
        let stop = AtomicBool::new(false);
        let start = sys::thread_cputime_ns();
        assert!(spin_cpu(2_000_000, &stop));
        assert!(sys::thread_cputime_ns() - start >= 2_000_000);
        stop.store(true, Ordering::Relaxed);
        assert!(!spin_cpu(u64::MAX, &stop));
    }
}
