//! The variables a child process keeps from Decima's environment when everything else is
//! cleared: what programs need to run at all on this system, nothing that names a credential.

/// Unix: the search path, the user, the locale, the time zone and the temporary folder.
#[cfg(unix)]
pub const ESSENTIAL_VARIABLES: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR",
];

/// Windows: programs fail to start without `SystemRoot`, and `npx`, Python and most tools need
/// the profile folders, `PATHEXT` and `ComSpec` as well.
#[cfg(windows)]
pub const ESSENTIAL_VARIABLES: &[&str] = &[
    "PATH",
    "PATHEXT",
    "SystemRoot",
    "SystemDrive",
    "windir",
    "ComSpec",
    "TEMP",
    "TMP",
    "USERPROFILE",
    "USERNAME",
    "HOMEDRIVE",
    "HOMEPATH",
    "APPDATA",
    "LOCALAPPDATA",
    "ProgramData",
    "ProgramFiles",
    "ProgramFiles(x86)",
    "CommonProgramFiles",
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "OS",
    "TZ",
];

/// The whole environment of a host shell call: nothing of Decima's own but what programs need
/// (so no key in Decima's environment reaches a command), `PATH` as given, `HOME` the
/// workspace, and on Unix a UTF-8 locale and a terminal that draws nothing.
pub fn shell_environment(
    home: &std::path::Path,
    path: &str,
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    let mut vars: Vec<(std::ffi::OsString, std::ffi::OsString)> = Vec::new();
    #[cfg(windows)]
    for name in ESSENTIAL_VARIABLES {
        if let Some(value) = std::env::var_os(name) {
            vars.push(((*name).into(), value));
        }
    }
    vars.retain(|(name, _)| name != "PATH");
    vars.push(("PATH".into(), path.into()));
    vars.push(("HOME".into(), home.as_os_str().to_owned()));
    #[cfg(unix)]
    for (name, value) in [("LANG", "C.UTF-8"), ("LC_ALL", "C.UTF-8"), ("TERM", "dumb")] {
        vars.push((name.into(), value.into()));
    }
    vars
}
