//! Systems neither Unix nor Windows: nothing is known, so nothing is ever taken over;
//! claims and leases lapse by their time to live.

use super::Probe;

/// No boot id: nothing recorded here is judged from elsewhere.
pub(super) fn boot_id() -> Option<String> {
    None
}

/// The process cannot be asked about.
pub(super) fn probe(_pid: u32) -> Probe {
    Probe::Unknown
}
