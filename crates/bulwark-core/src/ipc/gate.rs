//! A resource server's gate as a kernel object (MC-IPC paper), built from its
//! [`GateProtocol`] as a [`Cpi`](super::Cpi) is from its CPI protocol: every gate takes the
//! same calls ([`IpcGate`]: invoke, wait, reply, abort), and the MC-IPC gate alone also keeps
//! the background queue of section V, reached through [`Gate::mc_ipc`].

use alloc::boxed::Box;

use super::mc_ipc::{Aborted, Client, GateError};
use super::{FifoGate, GateProtocol, IpcGate, McIpcGate, PrioGate};
use crate::{TaskId, Work};

/// One server's gate.
pub enum Gate {
    /// MC-IPC (Fig. 1), with its background queue.
    McIpc(McIpcGate),
    /// FIFO-IPC, PRIO-IPC, or a gate a platform supplies (`Send`, so that a platform may
    /// hand its kernel objects to the thread that runs them).
    Other(Box<dyn IpcGate + Send>),
}

impl Gate {
    /// The gate of `protocol` for `capacity` clients, over clusters of `cores` cores each.
    pub fn new(protocol: GateProtocol, capacity: usize, cores: &[usize]) -> Gate {
        match protocol {
            GateProtocol::McIpc => Gate::McIpc(McIpcGate::new(capacity, cores)),
            GateProtocol::FifoIpc => Gate::Other(Box::new(FifoGate::new(capacity))),
            GateProtocol::PrioIpc => Gate::Other(Box::new(PrioGate::new(capacity))),
        }
    }

    /// The MC-IPC gate, for its background transfer and reissue (section V); `None` for a
    /// gate without a background queue.
    pub fn mc_ipc(&mut self) -> Option<&mut McIpcGate> {
        match self {
            Gate::McIpc(gate) => Some(gate),
            Gate::Other(_) => None,
        }
    }

    fn inner(&self) -> &dyn IpcGate {
        match self {
            Gate::McIpc(gate) => gate,
            Gate::Other(gate) => gate.as_ref(),
        }
    }

    fn inner_mut(&mut self) -> &mut dyn IpcGate {
        match self {
            Gate::McIpc(gate) => gate,
            Gate::Other(gate) => gate.as_mut(),
        }
    }
}

impl IpcGate for Gate {
    fn name(&self) -> &'static str {
        self.inner().name()
    }

    fn invoke(&mut self, task: TaskId, client: Client, work: &mut Work) -> Result<(), GateError> {
        self.inner_mut().invoke(task, client, work)
    }

    fn wait(&mut self, work: &mut Work) -> Result<Option<TaskId>, GateError> {
        self.inner_mut().wait(work)
    }

    fn reply(&mut self, work: &mut Work) -> Result<TaskId, GateError> {
        self.inner_mut().reply(work)
    }

    fn abort(&mut self, task: TaskId, work: &mut Work) -> Result<Aborted, GateError> {
        self.inner_mut().abort(task, work)
    }

    fn served(&self) -> Option<TaskId> {
        self.inner().served()
    }

    fn check(&self) -> Result<(), &'static str> {
        self.inner().check()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_protocol_builds_its_gate_and_only_mc_ipc_has_a_background_queue() {
        for protocol in GateProtocol::ALL {
            let mut gate = Gate::new(protocol, 4, &[1, 2]);
            let expected = match protocol {
                GateProtocol::McIpc => McIpcGate::new(4, &[1, 2]).name(),
                GateProtocol::FifoIpc => FifoGate::new(4).name(),
                GateProtocol::PrioIpc => PrioGate::new(4).name(),
            };
            assert_eq!(gate.name(), expected);
            assert_eq!(gate.mc_ipc().is_some(), protocol == GateProtocol::McIpc);
            assert_eq!(gate.served(), None);
            gate.check().unwrap();
        }
    }
}
