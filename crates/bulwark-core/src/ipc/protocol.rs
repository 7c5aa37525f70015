//! The names of the IPC protocols, one vocabulary for every layer: the system file names a
//! protocol, the analysis bounds it, the platforms build its kernel object from it.
//!
//! - [`CpiProtocol`]: how a component procedure interface serves its requests (CAmkES
//!   paper, section 4): propagation, PIP, IPCP or NPCS.
//! - [`GateProtocol`]: how a resource server's gate orders its invocations (MC-IPC paper,
//!   sections IV and VI): MC-IPC, FIFO-IPC or PRIO-IPC.

use crate::Priority;

/// How a CPI schedules the requests it serves (CAmkES paper, section 4), with the priority
/// of a `fixed` CPI's thread settled: its ceiling (IPCP) or the maximum (NPCS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CpiProtocol {
    /// `"propagated"`: reentrant, each request runs at its requester's priority (Fig. 5).
    Propagated,
    /// `"inherited"`: one request at a time under the Priority Inheritance Protocol, with
    /// nesting (Fig. 4).
    Inherited,
    /// `"fixed"` below the maximum priority: one thread at the CPI's ceiling, the Immediate
    /// Priority Ceiling Protocol.
    Ipcp,
    /// `"fixed"` at priority 255: one thread at the maximum priority, Non-Preemptive
    /// Critical Sections.
    Npcs,
}

impl CpiProtocol {
    /// Every protocol, in the paper's order.
    pub const ALL: [CpiProtocol; 4] = [
        CpiProtocol::Propagated,
        CpiProtocol::Inherited,
        CpiProtocol::Ipcp,
        CpiProtocol::Npcs,
    ];

    /// The `_priority_protocol` values a file may use, in the paper's order.
    pub const NAMES: [&'static str; 3] = ["propagated", "inherited", "fixed"];

    /// The protocol an attribute value names; `fixed` is IPCP until its priority says NPCS
    /// ([`CpiProtocol::with_priority`]).
    pub fn from_name(name: &str) -> Option<CpiProtocol> {
        match name {
            "propagated" => Some(CpiProtocol::Propagated),
            "inherited" => Some(CpiProtocol::Inherited),
            "fixed" => Some(CpiProtocol::Ipcp),
            _ => None,
        }
    }

    /// The attribute value (`"fixed"` for both IPCP and NPCS).
    pub fn name(self) -> &'static str {
        match self {
            CpiProtocol::Propagated => "propagated",
            CpiProtocol::Inherited => "inherited",
            CpiProtocol::Ipcp | CpiProtocol::Npcs => "fixed",
        }
    }

    /// The protocol's usual name: propagation, PIP, IPCP or NPCS.
    pub fn label(self) -> &'static str {
        match self {
            CpiProtocol::Propagated => "propagation",
            CpiProtocol::Inherited => "PIP",
            CpiProtocol::Ipcp => "IPCP",
            CpiProtocol::Npcs => "NPCS",
        }
    }

    /// True for `fixed` (one thread, a fixed priority).
    pub fn is_fixed(self) -> bool {
        matches!(self, CpiProtocol::Ipcp | CpiProtocol::Npcs)
    }

    /// True when the CPI encapsulates a critical section (PIP, IPCP, NPCS): at most one
    /// request at a time runs its procedure, so it sends at most one nested request at a
    /// time.
    pub fn is_exclusive(self) -> bool {
        self != CpiProtocol::Propagated
    }

    /// `fixed` with its configured priority: NPCS at 255, IPCP otherwise.
    pub fn with_priority(self, priority: Option<Priority>) -> CpiProtocol {
        match self {
            CpiProtocol::Ipcp | CpiProtocol::Npcs if priority == Some(Priority::MAX) => {
                CpiProtocol::Npcs
            }
            CpiProtocol::Ipcp | CpiProtocol::Npcs => CpiProtocol::Ipcp,
            other => other,
        }
    }
}

/// How a resource server's gate orders the invocations it serves (MC-IPC paper), which also
/// decides how the clients' budgets are sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GateProtocol {
    /// MC-IPC (`"mc-ipc"`, section IV): one queue per cluster, budgets from Theorem 1.
    McIpc,
    /// FIFO-IPC (`"fifo-ipc"`, section VI): one FIFO queue, as in the MBWI protocol.
    FifoIpc,
    /// PRIO-IPC (`"prio-ipc"`, section VI): one priority queue, as in Fiasco.OC.
    PrioIpc,
}

impl GateProtocol {
    /// Every protocol, in the paper's order.
    pub const ALL: [GateProtocol; 3] = [
        GateProtocol::McIpc,
        GateProtocol::FifoIpc,
        GateProtocol::PrioIpc,
    ];

    /// The values a file may use.
    pub const NAMES: [&'static str; 3] = ["mc-ipc", "fifo-ipc", "prio-ipc"];

    /// The protocol a value names.
    pub fn from_name(name: &str) -> Option<GateProtocol> {
        match name {
            "mc-ipc" => Some(GateProtocol::McIpc),
            "fifo-ipc" => Some(GateProtocol::FifoIpc),
            "prio-ipc" => Some(GateProtocol::PrioIpc),
            _ => None,
        }
    }

    /// The value a file writes.
    pub fn name(self) -> &'static str {
        match self {
            GateProtocol::McIpc => "mc-ipc",
            GateProtocol::FifoIpc => "fifo-ipc",
            GateProtocol::PrioIpc => "prio-ipc",
        }
    }

    /// The protocol's name in the paper: MC-IPC, FIFO-IPC or PRIO-IPC.
    pub fn label(self) -> &'static str {
        match self {
            GateProtocol::McIpc => "MC-IPC",
            GateProtocol::FifoIpc => "FIFO-IPC",
            GateProtocol::PrioIpc => "PRIO-IPC",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cpi_attribute_value_reads_back_as_itself() {
        for name in CpiProtocol::NAMES {
            assert_eq!(
                CpiProtocol::from_name(name).map(CpiProtocol::name),
                Some(name)
            );
        }
        assert_eq!(CpiProtocol::from_name("pip"), None);
    }

    #[test]
    fn fixed_is_npcs_exactly_at_the_maximum_priority() {
        let fixed = CpiProtocol::from_name("fixed").unwrap();
        assert_eq!(fixed, CpiProtocol::Ipcp);
        assert_eq!(fixed.with_priority(Some(Priority::MAX)), CpiProtocol::Npcs);
        assert_eq!(
            CpiProtocol::Npcs.with_priority(Some(Priority(3))),
            CpiProtocol::Ipcp
        );
        assert_eq!(CpiProtocol::Npcs.with_priority(None), CpiProtocol::Ipcp);
        assert_eq!(
            CpiProtocol::Inherited.with_priority(Some(Priority::MAX)),
            CpiProtocol::Inherited
        );
    }

    #[test]
    fn only_propagation_is_reentrant_and_only_ipcp_and_npcs_are_fixed() {
        assert!(!CpiProtocol::Propagated.is_exclusive());
        for exclusive in [CpiProtocol::Inherited, CpiProtocol::Ipcp, CpiProtocol::Npcs] {
            assert!(exclusive.is_exclusive());
        }
        assert!(CpiProtocol::Ipcp.is_fixed() && CpiProtocol::Npcs.is_fixed());
        assert!(!CpiProtocol::Inherited.is_fixed() && !CpiProtocol::Propagated.is_fixed());
    }

    #[test]
    fn every_gate_value_reads_back_as_itself() {
        for name in GateProtocol::NAMES {
            assert_eq!(
                GateProtocol::from_name(name).map(GateProtocol::name),
                Some(name)
            );
        }
        assert_eq!(GateProtocol::from_name("mcipc"), None);
    }
}
