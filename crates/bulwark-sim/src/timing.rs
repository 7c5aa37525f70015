//! Who ends a stretch of work: the simulator's model, or a platform whose real threads did it.

/// How a stretch of work (a thread's `Execute` or `compute`, a server's operation) ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timing {
    /// Time runs it down: the simulator's model, with the configuration's costs.
    Simulated,
    /// The platform reports it: a real thread did the work, on the real clock. Kernel steps
    /// that the model would cost take the platform's own real time instead (measured there).
    Reported,
}
