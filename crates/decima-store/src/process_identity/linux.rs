//! Linux: the boot id from `/proc/sys/kernel/random/boot_id` with the pid namespace beside it,
//! and a pid's state and start time from `/proc/PID/stat`.

use super::Probe;

/// The boot id and this process's pid namespace (`<uuid> pid:[<inode>]`); `None` when either
/// cannot be read, and then nothing is ever judged.
pub(super) fn boot_id() -> Option<String> {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    let boot = boot.trim();
    if boot.is_empty() {
        return None;
    }
    let namespace = std::fs::read_link("/proc/self/ns/pid").ok()?;
    Some(format!("{boot} {}", namespace.to_string_lossy()))
}

/// The process with `pid`: its state and start time from `/proc`; when `/proc` hides it
/// (mounted with `hidepid`, another user's process), the kernel is asked with a null signal.
pub(super) fn probe(pid: u32) -> Probe {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => match parse_stat(&stat) {
            // A zombie (or one being reaped) holds nothing.
            Some(('Z' | 'X' | 'x', _)) => Probe::Gone,
            Some((_, start_time)) => Probe::Running {
                start_time: Some(start_time),
            },
            None => Probe::Running { start_time: None },
        },
        Err(_) => super::signal::probe(pid),
    }
}

/// The state (field 3) and start time (field 22, clock ticks since boot) of a `/proc/PID/stat`
/// line. The command name (field 2) is in parentheses and may hold spaces and parentheses of
/// its own, so the fields are counted from the last `)`.
fn parse_stat(stat: &str) -> Option<(char, u64)> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    // Fields 4 to 21 lie between the state and the start time.
    let start_time = fields.nth(18)?.parse().ok()?;
    Some((state, start_time))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_are_counted_from_the_last_parenthesis() {
        let line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 \
                    987654 1000 10 18446744073709551615";
        assert_eq!(parse_stat(line), Some(('S', 987_654)));
        let zombie = "7 (sh) Z 1 7 7 0 -1 4194564 0 0 0 0 0 0 0 0 20 0 1 0 55 0 0";
        assert_eq!(parse_stat(zombie), Some(('Z', 55)));
        assert_eq!(parse_stat("7 (sh) S 1 2"), None);
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn this_process_runs_and_has_a_start_time() {
        assert!(matches!(
            probe(std::process::id()),
            Probe::Running {
                start_time: Some(_)
            }
        ));
        assert!(boot_id().is_some_and(|b| b.contains(" pid:[")));
    }
}
