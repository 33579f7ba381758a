//! The shell a host command runs in, chosen once per process.
//!
//! On Unix it is `/bin/sh`. On Windows it is PowerShell where it exists (Windows PowerShell,
//! which every Windows 10 and 11 has, else `pwsh` on the path), else `cmd.exe`. The choice is
//! made once so that every call of a session runs in the same shell and Settings can say which.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Which language a command is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellKind {
    /// `sh -c`.
    Posix,
    /// PowerShell's `-EncodedCommand`.
    PowerShell,
    /// `cmd.exe /C`, or a batch file for a command of several lines.
    Cmd,
}

/// The shell this system runs host commands in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostShell {
    kind: ShellKind,
    program: PathBuf,
}

/// A command ready to spawn, and the batch file it runs when it needed one (delete it after).
#[derive(Debug)]
pub struct ShellCommand {
    /// The command: the shell with the script as its argument.
    pub command: tokio::process::Command,
    /// A file written for the call, which the caller removes when the call ended.
    pub script_file: Option<PathBuf>,
}

static CHOSEN: OnceLock<Result<HostShell, String>> = OnceLock::new();

impl HostShell {
    /// The shell of this system, found on first use. The error says what was looked for.
    pub fn system() -> Result<&'static HostShell, String> {
        CHOSEN
            .get_or_init(|| crate::sys::find_shell(&|name| std::env::var_os(name)))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// A shell of the given kind at `program` (tests, and a shell the analyst named).
    pub fn new(kind: ShellKind, program: impl Into<PathBuf>) -> Self {
        Self {
            kind,
            program: program.into(),
        }
    }

    /// Which language commands are written in.
    pub fn kind(&self) -> ShellKind {
        self.kind
    }

    /// The shell's executable.
    pub fn program(&self) -> &Path {
        &self.program
    }

    /// How Settings and the model's tool description name it.
    pub fn describe(&self) -> String {
        let name = match self.kind {
            ShellKind::Posix => "sh",
            ShellKind::PowerShell => "PowerShell",
            ShellKind::Cmd => "cmd.exe",
        };
        format!("{name} ({})", self.program.display())
    }

    /// Why this shell cannot run a command in `dir`, in words that say what to do; `None` when
    /// it can. Windows starts no program in a folder whose path is 260 characters or longer,
    /// and `cmd.exe` none in a network folder named by its UNC path (it would run in the
    /// Windows folder instead, and the command would touch the wrong files).
    pub fn cannot_start_in(&self, dir: &Path) -> Option<String> {
        if cfg!(windows) {
            windows_folder_problem(self.kind, &dir.to_string_lossy())
        } else {
            None
        }
    }

    /// The command that runs `script`. `scratch` is a folder for a batch file, which `cmd.exe`
    /// needs for a script of several lines (`/C` runs one line).
    pub fn command(&self, script: &str, scratch: &Path) -> std::io::Result<ShellCommand> {
        crate::sys::shell_command(self, script, scratch)
    }
}

/// Windows' choice, written for any system so that it is tested everywhere: Windows PowerShell
/// under the system folder, else `pwsh.exe` on the path, else `cmd.exe` (`ComSpec`, else under
/// the system folder). `var` reads the environment, `is_file` the disk, and `answers` runs a
/// PowerShell once: a stand-in that exits without running anything (Wine ships one) is passed
/// over.
#[cfg_attr(not(windows), allow(dead_code))]
pub(crate) fn choose_windows_shell(
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
    is_file: &dyn Fn(&Path) -> bool,
    answers: &dyn Fn(&Path) -> bool,
) -> Result<HostShell, String> {
    let system_root = var("SystemRoot")
        .or_else(|| var("windir"))
        .map_or_else(|| PathBuf::from(r"C:\Windows"), PathBuf::from);
    let system32 = windows_join(&system_root, "System32");
    let powershell = windows_join(&system32, r"WindowsPowerShell\v1.0\powershell.exe");
    if is_file(&powershell) && answers(&powershell) {
        return Ok(HostShell::new(ShellKind::PowerShell, powershell));
    }
    let on_path = var("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| windows_join(&dir, "pwsh.exe"))
            .find(|candidate| is_file(candidate) && answers(candidate))
    });
    if let Some(pwsh) = on_path {
        return Ok(HostShell::new(ShellKind::PowerShell, pwsh));
    }
    let cmd = var("ComSpec")
        .map(PathBuf::from)
        .filter(|p| is_file(p))
        .or_else(|| Some(windows_join(&system32, "cmd.exe")).filter(|p| is_file(p)));
    cmd.map(|cmd| HostShell::new(ShellKind::Cmd, cmd))
        .ok_or_else(|| {
            format!(
                "no shell found: neither {} nor pwsh.exe on PATH answered, and no cmd.exe (ComSpec, \
                 or {}) exists; repair Windows or install PowerShell",
                powershell.display(),
                windows_join(&system32, "cmd.exe").display()
            )
        })
}

/// Windows' limits on the folder a program starts in (see [`HostShell::cannot_start_in`]),
/// written for any system so that they are tested everywhere. `dir` as Windows spells it.
fn windows_folder_problem(kind: ShellKind, dir: &str) -> Option<String> {
    /// `MAX_PATH` less the backslash Windows ends a current folder with and the terminating
    /// NUL: the longest folder a program that is not long-path aware starts in.
    const LONGEST: usize = 258;
    let plain = dir.strip_prefix(r"\\?\").unwrap_or(dir);
    let network =
        dir.starts_with(r"\\?\UNC\") || (dir.starts_with(r"\\") && !dir.starts_with(r"\\?\"));
    let length = plain.encode_utf16().count();
    if length > LONGEST {
        return Some(format!(
            "Windows cannot start a command in {dir}: its path is {length} characters, and \
             programs start only in folders of at most {LONGEST}; move the workspace closer to \
             the drive's root"
        ));
    }
    if network && kind == ShellKind::Cmd {
        return Some(format!(
            "cmd.exe cannot run a command in the network folder {dir}; map it to a drive \
             letter (net use Z: \\\\server\\share) and open the workspace there, or install \
             PowerShell"
        ));
    }
    None
}

/// `base\\rest` with Windows' separator whatever the system compiling it (`Path::join` would
/// put a `/` on Unix, where the choice is tested).
fn windows_join(base: &Path, rest: &str) -> PathBuf {
    let mut joined = base.as_os_str().to_owned();
    if !base.as_os_str().is_empty() && !joined.to_string_lossy().ends_with('\\') {
        joined.push("\\");
    }
    joined.push(rest);
    PathBuf::from(joined)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_names_the_shell_and_where_it_is() {
        let shell = HostShell::new(ShellKind::Cmd, "C:\\Windows\\System32\\cmd.exe");
        assert_eq!(shell.describe(), "cmd.exe (C:\\Windows\\System32\\cmd.exe)");
        assert_eq!(shell.kind(), ShellKind::Cmd);
    }

    fn windows(
        files: &'static [&'static str],
        vars: &'static [(&'static str, &'static str)],
    ) -> Result<HostShell, String> {
        choose_windows_shell(
            &|name| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            },
            &|path| files.iter().any(|f| Path::new(f) == path),
            &|path| !path.to_string_lossy().contains("Stub"),
        )
    }

    #[test]
    fn windows_prefers_windows_powershell_then_pwsh_then_cmd() {
        let ps = r"D:\Win\System32\WindowsPowerShell\v1.0\powershell.exe";
        let shell = windows(
            &[
                r"D:\Win\System32\WindowsPowerShell\v1.0\powershell.exe",
                r"D:\Win\System32\cmd.exe",
            ],
            &[("SystemRoot", r"D:\Win")],
        )
        .unwrap();
        assert_eq!(
            (shell.kind(), shell.program()),
            (ShellKind::PowerShell, Path::new(ps))
        );

        let shell = windows(&[r"C:\Windows\System32\cmd.exe"], &[]).unwrap();
        assert_eq!(
            shell.kind(),
            ShellKind::Cmd,
            "the default system folder when none is set"
        );

        let shell = windows(&[r"E:\cmd.exe"], &[("ComSpec", r"E:\cmd.exe")]).unwrap();
        assert_eq!(shell.program(), Path::new(r"E:\cmd.exe"));
    }

    #[test]
    fn a_powershell_that_does_not_answer_is_passed_over() {
        let shell = windows(
            &[
                r"C:\Stub\System32\WindowsPowerShell\v1.0\powershell.exe",
                r"C:\Stub\System32\cmd.exe",
            ],
            &[("SystemRoot", r"C:\Stub")],
        )
        .unwrap();
        assert_eq!(shell.kind(), ShellKind::Cmd);
    }

    #[test]
    fn windows_without_any_shell_says_what_it_looked_for() {
        let err = windows(&[], &[("SystemRoot", r"C:\Windows")]).unwrap_err();
        assert!(
            err.contains("powershell.exe") && err.contains("cmd.exe"),
            "{err}"
        );
    }

    #[test]
    fn windows_refuses_long_folders_and_cmd_network_ones_with_what_to_do() {
        let long = format!(r"C:\{}", "a".repeat(300));
        let why = windows_folder_problem(ShellKind::PowerShell, &long).unwrap();
        assert!(
            why.contains("303 characters") && why.contains("closer to"),
            "{why}"
        );
        let verbatim = format!(r"\\?\C:\{}", "a".repeat(300));
        assert!(windows_folder_problem(ShellKind::Cmd, &verbatim).is_some());
        assert_eq!(
            windows_folder_problem(ShellKind::Cmd, r"C:\Users\Zoë\Q3"),
            None
        );

        for unc in [r"\\fs01\team\q3", r"\\?\UNC\fs01\team\q3"] {
            let why = windows_folder_problem(ShellKind::Cmd, unc).unwrap();
            assert!(
                why.contains("network folder") && why.contains("net use"),
                "{why}"
            );
            assert_eq!(windows_folder_problem(ShellKind::PowerShell, unc), None);
        }
        assert_eq!(
            windows_folder_problem(ShellKind::Cmd, r"\\?\C:\work"),
            None,
            "a verbatim drive path is no network folder"
        );
    }

    #[test]
    fn this_system_has_a_shell() {
        let shell = HostShell::system().unwrap();
        #[cfg(unix)]
        assert_eq!(shell.kind(), ShellKind::Posix);
        assert!(shell.program().is_file(), "{}", shell.describe());
    }
}
