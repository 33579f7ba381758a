//! Unix: the tree is a process group whose id is the first process's pid.
//!
//! While any member lives the group's id cannot be reused; once all are gone and the leader is
//! reaped it could be in theory, but a kill follows the reap by microseconds, long before the
//! kernel's sequential pids wrap around.

use std::io;
use std::os::unix::process::CommandExt as _;

use rustix::process::{Pid, Signal, kill_process_group};

/// A process group, until it is killed.
#[derive(Debug)]
pub(crate) struct Tree {
    group: Option<Pid>,
}

/// The group's id: a group is killed by its number, from anywhere.
#[derive(Debug, Clone)]
pub(crate) struct Killer {
    group: Option<Pid>,
}

/// Every process the command starts joins a new group led by the command.
pub(crate) fn prepare(cmd: &mut tokio::process::Command) {
    cmd.process_group(0);
}

pub(crate) fn prepare_std(cmd: &mut std::process::Command) {
    cmd.process_group(0);
}

fn group_of(pid: Option<u32>) -> io::Result<Tree> {
    let group = pid
        .and_then(|id| i32::try_from(id).ok())
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::other("the process has already been reaped"))?;
    Ok(Tree { group: Some(group) })
}

pub(crate) fn adopt(child: &tokio::process::Child) -> io::Result<Tree> {
    group_of(child.id())
}

pub(crate) fn adopt_std(child: &std::process::Child) -> io::Result<Tree> {
    group_of(Some(child.id()))
}

/// SIGKILL to the whole group; "no such group" is fine.
fn kill_group(group: Option<Pid>) {
    if let Some(group) = group {
        let _ = kill_process_group(group, Signal::KILL);
    }
}

impl Tree {
    pub(crate) fn kill(&mut self) {
        kill_group(self.group.take());
    }

    pub(crate) fn release_reaped(&mut self) {
        self.group = None;
    }

    pub(crate) fn killer(&self) -> Killer {
        Killer { group: self.group }
    }
}

impl Killer {
    pub(crate) fn kill(&self) {
        kill_group(self.group);
    }
}

/// `/bin/sh`, which POSIX systems have.
pub(crate) fn find_shell(
    _var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<crate::HostShell, String> {
    let sh = std::path::Path::new("/bin/sh");
    if sh.exists() {
        Ok(crate::HostShell::new(crate::ShellKind::Posix, sh))
    } else {
        Err("no shell found: /bin/sh does not exist".to_owned())
    }
}

/// `sh -c SCRIPT`, by the shell's absolute path: with `PATH` set for the child and a bare
/// program name, std cannot use `posix_spawn` and forks instead, copying the page tables of
/// this whole process (in a long session, tens of milliseconds per call).
pub(crate) fn shell_command(
    shell: &crate::HostShell,
    script: &str,
    _scratch: &std::path::Path,
) -> io::Result<crate::shell::ShellCommand> {
    let mut command = tokio::process::Command::new(shell.program());
    command.arg("-c").arg(script);
    Ok(crate::shell::ShellCommand {
        command,
        script_file: None,
    })
}

/// Unix pipes are polled by tokio's reactor.
#[derive(Debug)]
pub(crate) struct PipeRx(tokio::net::unix::pipe::Receiver);

impl PipeRx {
    pub(crate) fn new(reader: std::io::PipeReader) -> io::Result<Self> {
        let fd = std::os::fd::OwnedFd::from(reader);
        tokio::net::unix::pipe::Receiver::from_owned_fd(fd).map(Self)
    }

    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use tokio::io::AsyncReadExt as _;
        self.0.read(buf).await
    }
}

pub(crate) fn exit_signal(status: &std::process::ExitStatus) -> Option<i32> {
    std::os::unix::process::ExitStatusExt::signal(status)
}

pub(crate) fn resolve_program(name: &str, _path: Option<&std::ffi::OsStr>) -> std::path::PathBuf {
    std::path::PathBuf::from(name)
}
