//! Unix other than Linux: no boot id this crate can read, so nothing is judged from elsewhere;
//! a pid is probed with a null signal, without a start time.

use super::Probe;

/// No boot id: a holder on a machine like this is never judged, only its time to live counts.
pub(super) fn boot_id() -> Option<String> {
    None
}

/// Whether the pid exists, by a null signal.
pub(super) fn probe(pid: u32) -> Probe {
    super::signal::probe(pid)
}
