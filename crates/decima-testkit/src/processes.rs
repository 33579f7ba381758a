//! Which processes are alive, read from `/proc`: the tests that check that a stopped run or a
//! closed server left nothing behind ask the kernel, not the code under test.

use std::path::Path;

/// The fields of `/proc/PID/stat` after the command's closing parenthesis (the command may
/// hold spaces and parentheses itself): state, ppid, pgrp, ...
fn stat_fields(pid: i32) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().map(str::to_owned).collect())
}

/// Every live process's pid, zombies left out (they hold no resource but their entry).
fn live() -> impl Iterator<Item = (i32, Vec<String>)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter_map(|pid| stat_fields(pid).map(|f| (pid, f)))
        .filter(|(_, fields)| fields.first().is_some_and(|s| s != "Z"))
}

/// The live members of process group `pgid`.
pub fn group_members(pgid: i32) -> Vec<i32> {
    let wanted = pgid.to_string();
    live()
        .filter(|(_, f)| f.get(2) == Some(&wanted))
        .map(|(pid, _)| pid)
        .collect()
}

/// Waits up to `limit` for process group `pgid` to have no live member, and returns what is
/// left. A SIGKILL takes effect when the kernel next schedules each process, so a group killed
/// a moment ago may still be listed; a group nobody killed is still listed after `limit`.
pub async fn group_gone(pgid: i32, limit: std::time::Duration) -> Vec<i32> {
    let started = std::time::Instant::now();
    loop {
        let members = group_members(pgid);
        if members.is_empty() || started.elapsed() > limit {
            return members;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// The live processes whose command line holds `needle`.
pub fn with_cmdline(needle: &str) -> Vec<i32> {
    live()
        .map(|(pid, _)| pid)
        .filter(|pid| {
            let cmd = std::fs::read(Path::new("/proc").join(pid.to_string()).join("cmdline"))
                .unwrap_or_default();
            String::from_utf8_lossy(&cmd).contains(needle)
        })
        .collect()
}

/// A test's full name as the harness knows it, from its module's `module_path!()` and its
/// function's name: the module's path without the test binary's own name. A test that runs
/// itself again as a child process (`--exact <name>`) passes this, so it finds itself whatever
/// module of the binary it is in.
pub fn test_name(module_path: &str, name: &str) -> String {
    match module_path.split_once("::") {
        Some((_, module)) => format!("{module}::{name}"),
        None => name.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_child_is_found_by_its_command_line_and_group_until_it_is_reaped() {
        let mark = format!("decima-processes-{}", std::process::id());
        // The mark is the process's own name, so no other process shows it: a shell would fork
        // its command, and the forked copy carries the shell's command line until it execs.
        use std::os::unix::process::CommandExt as _;
        let mut child = std::process::Command::new("sleep")
            .arg0(&mark)
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        assert_eq!(with_cmdline(&mark), [pid]);
        assert!(group_members(pid).contains(&pid));
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(with_cmdline(&mark).is_empty());
        assert!(!group_members(pid).contains(&pid));
    }

    #[test]
    fn a_test_is_named_by_its_module_without_the_binary() {
        assert_eq!(test_name("all::crash", "sigkill"), "crash::sigkill");
        assert_eq!(test_name("all::a::b", "t"), "a::b::t");
        assert_eq!(test_name("crash", "sigkill"), "sigkill");
    }
}
