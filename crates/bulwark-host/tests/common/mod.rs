//! What the hosted runtime's test files share: the managed core, one run at a time.

use std::sync::{Mutex, MutexGuard};

/// One host run at a time: they all manage the same core.
static SERIAL: Mutex<()> = Mutex::new(());

/// The managed core to this test alone, or `None`, saying why, when this process may not run
/// the runtime (the test is then skipped).
pub fn managed_core() -> Option<MutexGuard<'static, ()>> {
    let serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    match bulwark_host::check_privileges(&bulwark_host::HostConfig::default()) {
        Ok(()) => Some(serial),
        Err(e) => {
            eprintln!("skipped: {e}");
            None
        }
    }
}
