//! Windows: the boot is named by the kernel's boot time (and the computer's name), a process by
//! its creation time. A pid no process has, or one whose process has exited (someone still holds
//! a handle to it), is gone; a pid whose process was created at another time was reused.
#![allow(unsafe_code)]

use windows_sys::Wdk::System::SystemInformation::{
    NtQuerySystemInformation, SystemTimeOfDayInformation,
};
use windows_sys::Win32::Foundation::{
    CloseHandle, ERROR_ACCESS_DENIED, FILETIME, GetLastError, HANDLE, STILL_ACTIVE,
};
use windows_sys::Win32::System::Threading::{
    GetExitCodeProcess, GetProcessTimes, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
};
use windows_sys::Win32::System::WindowsProgramming::SYSTEM_TIMEOFDAY_INFORMATION;

use super::Probe;

/// `windows <computer> boot:<boot time>`: the boot time is the kernel's, in 100 ns since 1601,
/// the same for every process of this boot; `None` when the kernel does not say.
pub(super) fn boot_id() -> Option<String> {
    let mut info = SYSTEM_TIMEOFDAY_INFORMATION::default();
    let size = u32::try_from(std::mem::size_of::<SYSTEM_TIMEOFDAY_INFORMATION>()).ok()?;
    // SAFETY: `info` is a writable buffer of `size` bytes, as the call requires; the returned
    // length is optional.
    let status = unsafe {
        NtQuerySystemInformation(
            SystemTimeOfDayInformation,
            (&raw mut info).cast(),
            size,
            std::ptr::null_mut(),
        )
    };
    if status < 0 {
        return None;
    }
    // The structure starts with the boot time, a LARGE_INTEGER.
    let boot = i64::from_le_bytes(info.Reserved1[..8].try_into().ok()?);
    if boot <= 0 {
        return None;
    }
    let computer = std::env::var("COMPUTERNAME").unwrap_or_default();
    Some(format!("windows {computer} boot:{boot}"))
}

/// Closes a process handle when dropped.
struct Process(HANDLE);

impl Drop for Process {
    fn drop(&mut self) {
        // SAFETY: the handle came from OpenProcess and is closed once.
        unsafe { CloseHandle(self.0) };
    }
}

/// The process with `pid`: gone when none has it or it has exited; its creation time else.
pub(super) fn probe(pid: u32) -> Probe {
    // SAFETY: a plain call; a null handle is checked below.
    let handle = unsafe { OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid) };
    if handle.is_null() {
        // SAFETY: reads this thread's last error, set by OpenProcess.
        let error = unsafe { GetLastError() };
        // Another user's protected process exists but cannot be opened.
        return if error == ERROR_ACCESS_DENIED {
            Probe::Running { start_time: None }
        } else {
            Probe::Gone
        };
    }
    let process = Process(handle);
    let mut code = 0u32;
    // SAFETY: `process.0` is an open process handle and `code` is writable.
    if unsafe { GetExitCodeProcess(process.0, &raw mut code) } == 0 {
        return Probe::Unknown;
    }
    if code != STILL_ACTIVE.cast_unsigned() {
        return Probe::Gone;
    }
    let zero = FILETIME {
        dwLowDateTime: 0,
        dwHighDateTime: 0,
    };
    let (mut created, mut exited, mut kernel, mut user) = (zero, zero, zero, zero);
    // SAFETY: an open process handle and four writable FILETIMEs.
    let ok = unsafe {
        GetProcessTimes(
            process.0,
            &raw mut created,
            &raw mut exited,
            &raw mut kernel,
            &raw mut user,
        )
    };
    let start_time = (ok != 0)
        .then(|| (u64::from(created.dwHighDateTime) << 32) | u64::from(created.dwLowDateTime));
    Probe::Running { start_time }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_boot_is_named_the_same_by_every_call() {
        let first = boot_id().expect("the kernel's boot time");
        assert!(first.starts_with("windows "), "{first}");
        assert_eq!(boot_id(), Some(first));
    }

    #[test]
    fn this_process_runs_with_its_creation_time_and_an_ended_child_is_gone() {
        let Probe::Running {
            start_time: Some(mine),
        } = probe(std::process::id())
        else {
            panic!("{:?}", probe(std::process::id()));
        };
        assert_eq!(
            probe(std::process::id()),
            Probe::Running {
                start_time: Some(mine)
            }
        );
        let mut child = std::process::Command::new("cmd.exe")
            .args(["/d", "/c", "exit 0"])
            .spawn()
            .unwrap();
        let pid = child.id();
        child.wait().unwrap();
        // The handle `child` holds keeps the pid from being reused: the process has exited.
        assert_eq!(probe(pid), Probe::Gone);
        drop(child);
        assert_eq!(probe(pid), Probe::Gone);
    }
}
