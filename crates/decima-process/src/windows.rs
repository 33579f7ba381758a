//! Windows: the tree is a job object with kill-on-close. Every process the first one starts
//! joins its job, and all of them end when the job's handle closes: on [`Tree::kill`], on a
//! drop, and when Decima itself exits, however it exits.
//!
//! The first process is assigned to the job right after it was created. A process it starts
//! in between is not in the job; a shell does not start anything in the microseconds that
//! takes. (Creating the process inside the job would need `std`'s unstable process attributes.)

use std::io;
use std::os::windows::io::AsRawHandle as _;
use std::sync::{Arc, Mutex, PoisonError};

use win32job::{ExtendedLimitInfo, Job};

/// Processes started from Decima get no console window of their own.
const CREATE_NO_WINDOW: u32 = 0x0800_0000;

/// The job, shared with its killers, until one of them closes it.
#[derive(Debug, Clone)]
struct SharedJob(Arc<Mutex<Option<Job>>>);

impl SharedJob {
    /// Closes the job's handle, which ends every process in it.
    fn close(&self) {
        let job = self.0.lock().unwrap_or_else(PoisonError::into_inner).take();
        drop(job);
    }
}

/// A job object holding the tree.
#[derive(Debug)]
pub(crate) struct Tree {
    job: SharedJob,
}

/// The same job: closing it from anywhere ends the tree.
#[derive(Debug, Clone)]
pub(crate) struct Killer {
    job: SharedJob,
}

pub(crate) fn prepare(cmd: &mut tokio::process::Command) {
    cmd.creation_flags(CREATE_NO_WINDOW);
}

pub(crate) fn prepare_std(cmd: &mut std::process::Command) {
    use std::os::windows::process::CommandExt as _;
    cmd.creation_flags(CREATE_NO_WINDOW);
}

/// A new job with kill-on-close holding the process `handle`.
fn job_for(handle: isize) -> io::Result<Tree> {
    let mut limits = ExtendedLimitInfo::new();
    limits.limit_kill_on_job_close();
    let job = Job::create_with_limit_info(&limits).map_err(io::Error::other)?;
    job.assign_process(handle).map_err(io::Error::other)?;
    Ok(Tree {
        job: SharedJob(Arc::new(Mutex::new(Some(job)))),
    })
}

pub(crate) fn adopt(child: &tokio::process::Child) -> io::Result<Tree> {
    let handle = child
        .raw_handle()
        .ok_or_else(|| io::Error::other("the process has already been reaped"))?;
    job_for(handle as isize)
}

pub(crate) fn adopt_std(child: &std::process::Child) -> io::Result<Tree> {
    job_for(child.as_raw_handle() as isize)
}

impl Tree {
    pub(crate) fn kill(&mut self) {
        self.job.close();
    }

    pub(crate) fn release_reaped(&mut self) {
        self.job.close();
    }

    pub(crate) fn killer(&self) -> Killer {
        Killer {
            job: self.job.clone(),
        }
    }
}

impl Killer {
    pub(crate) fn kill(&self) {
        self.job.close();
    }
}

/// PowerShell, else `cmd.exe` (see `shell::choose_windows_shell`).
pub(crate) fn find_shell(
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> Result<crate::HostShell, String> {
    crate::shell::choose_windows_shell(var, &|path| path.is_file(), &powershell_answers)
}

/// Whether the PowerShell at `program` runs a command: it must print what it was asked to.
fn powershell_answers(program: &std::path::Path) -> bool {
    use std::os::windows::process::CommandExt as _;
    std::process::Command::new(program)
        .args([
            "-NoLogo",
            "-NoProfile",
            "-NonInteractive",
            "-Command",
            "Write-Output 4242",
        ])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .creation_flags(CREATE_NO_WINDOW)
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "4242")
}

/// Longest encoded PowerShell command passed on the command line (Windows allows 32,767
/// characters for all of it); a longer script goes through a file.
const MAX_ENCODED: usize = 30_000;

/// What PowerShell runs around the analyst's script: UTF-8 output (the pipe is read as UTF-8),
/// no progress bars, and the exit code of the last native program when the script failed.
fn wrap_powershell(script: &str) -> String {
    format!(
        "$ProgressPreference = 'SilentlyContinue'\r\n\
         [Console]::OutputEncoding = [System.Text.UTF8Encoding]::new($false)\r\n\
         {script}\r\n\
         if (-not $?) {{ if ($LASTEXITCODE) {{ exit $LASTEXITCODE }} else {{ exit 1 }} }}\r\n\
         if ($LASTEXITCODE) {{ exit $LASTEXITCODE }}\r\n"
    )
}

/// A file name no other call of this process uses.
fn scratch_name(scratch: &std::path::Path, extension: &str) -> std::path::PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    scratch.join(format!("call-{}-{n}.{extension}", std::process::id()))
}

/// Writes a script file for a call, creating its folder.
fn write_script(path: &std::path::Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, bytes)
}

pub(crate) fn shell_command(
    shell: &crate::HostShell,
    script: &str,
    scratch: &std::path::Path,
) -> io::Result<crate::shell::ShellCommand> {
    use base64::Engine as _;
    let mut command = tokio::process::Command::new(shell.program());
    let mut script_file = None;
    match shell.kind() {
        crate::ShellKind::PowerShell => {
            command.args([
                "-NoLogo",
                "-NoProfile",
                "-NonInteractive",
                "-ExecutionPolicy",
                "Bypass",
            ]);
            let wrapped = wrap_powershell(script);
            let utf16: Vec<u8> = wrapped.encode_utf16().flat_map(u16::to_le_bytes).collect();
            let encoded = base64::engine::general_purpose::STANDARD.encode(utf16);
            if encoded.len() <= MAX_ENCODED {
                command.arg("-EncodedCommand").arg(encoded);
            } else {
                // Windows PowerShell reads a script file without a byte order mark as ANSI.
                let path = scratch_name(scratch, "ps1");
                let mut bytes = b"\xEF\xBB\xBF".to_vec();
                bytes.extend_from_slice(wrapped.as_bytes());
                write_script(&path, &bytes)?;
                command.arg("-File").arg(&path);
                script_file = Some(path);
            }
        }
        crate::ShellKind::Cmd if script.contains(['\n', '\r']) => {
            // `/C` runs one line: a script of several goes through a batch file.
            let path = scratch_name(scratch, "cmd");
            let body = script.lines().collect::<Vec<_>>().join("\r\n");
            write_script(&path, format!("@echo off\r\n{body}\r\n").as_bytes())?;
            command.raw_arg(format!("/D /S /C \"\"{}\"\"", path.display()));
            script_file = Some(path);
        }
        crate::ShellKind::Cmd | crate::ShellKind::Posix => {
            // `/S` takes the text between the first and the last quote as it is, so the
            // script needs no escaping of its own.
            command.raw_arg(format!("/D /S /C \"{script}\""));
        }
    }
    Ok(crate::shell::ShellCommand {
        command,
        script_file,
    })
}

/// An anonymous pipe cannot be read overlapped, so a thread of its own reads it and hands the
/// chunks over. The thread ends with the pipe; a process that escaped the job and keeps the
/// pipe open keeps the thread until it exits, while the caller has long stopped waiting.
#[derive(Debug)]
pub(crate) struct PipeRx {
    chunks: tokio::sync::mpsc::Receiver<io::Result<Vec<u8>>>,
    pending: Vec<u8>,
}

impl PipeRx {
    pub(crate) fn new(mut reader: std::io::PipeReader) -> io::Result<Self> {
        use std::io::Read as _;
        let (tx, chunks) = tokio::sync::mpsc::channel(16);
        std::thread::Builder::new()
            .name("decima-pipe".to_owned())
            .spawn(move || {
                let mut buf = vec![0u8; 64 * 1024];
                loop {
                    let chunk = match reader.read(&mut buf) {
                        Ok(0) => return,
                        Ok(n) => Ok(buf[..n].to_vec()),
                        // The last writer closed: Windows says so as a broken pipe.
                        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => return,
                        Err(e) => Err(e),
                    };
                    let failed = chunk.is_err();
                    if tx.blocking_send(chunk).is_err() || failed {
                        return;
                    }
                }
            })?;
        Ok(Self {
            chunks,
            pending: Vec::new(),
        })
    }

    pub(crate) async fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.pending.is_empty() {
            match self.chunks.recv().await {
                Some(chunk) => self.pending = chunk?,
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.pending.len());
        buf[..n].copy_from_slice(&self.pending[..n]);
        self.pending.drain(..n);
        Ok(n)
    }
}

pub(crate) fn exit_signal(_status: &std::process::ExitStatus) -> Option<i32> {
    None
}

pub(crate) fn resolve_program(name: &str, path: Option<&std::ffi::OsStr>) -> std::path::PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    which::which_in(name, path, cwd).unwrap_or_else(|_| std::path::PathBuf::from(name))
}
