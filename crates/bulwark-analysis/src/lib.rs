//! Bulwark's analysis side: admission tests, bounds and task-set generators.
//!
//! The foundation holds the generators used by experiments, benchmarks and property tests;
//! the papers' admission tests and bounds build on them.

pub mod admission;
pub mod amc;
pub mod bandwidth;
pub mod blocking;
pub mod classic;
pub mod cluster;
pub mod component_graph;
pub mod component_lowering;
pub mod component_sets;
pub mod fit;
pub mod gates;
pub mod generate;
pub mod global_edf;
pub mod global_fp;
pub mod job_bound;
pub mod levels;
pub mod mc_ipc;
pub mod mc_ipc_phases;
pub mod overhead;
pub mod rbf;
pub mod reclamation;
pub mod scenario;
pub mod shared_reservation;
pub mod slot_supply;
pub mod sweep;
pub mod text_table;
pub mod utilisation;
pub mod vbs;

#[cfg(test)]
mod test_support {
    /// `n` milliseconds, the unit of most hand-worked examples.
    pub(crate) fn ms(n: u64) -> bulwark_core::Duration {
        bulwark_core::Duration::from_millis(n)
    }

    /// A periodic task of `execution` ms every `period` ms, released at 0.
    pub(crate) fn periodic(period: u64, execution: u64) -> bulwark_spec::Behaviour {
        bulwark_spec::Behaviour::Periodic {
            period: ms(period),
            offset: bulwark_core::Duration::ZERO,
            execution: bulwark_spec::Execution::Fixed(ms(execution)),
        }
    }
}
