//! Windows: owner-only by ACL, the counterpart of unix's 0600 and 0700. A file or folder is
//! private when its DACL is protected (it inherits nothing from the folder above) and every
//! entry in it allows the current user, as `D:P(A;;FA;;;<user's SID>)` writes it: no group,
//! not Administrators, not SYSTEM. The file gets that DACL before anything is written to it,
//! a folder Decima creates gets it with inheritance to what is created inside, and a file whose
//! DACL lets anyone else in is given it again before its keys are used.
//!
//! The user is the process token's, not the file's owner: an elevated process's files may be
//! owned by the Administrators group, and granting that would let every administrator in.
//!
//! The calls into the Windows security API are the only unsafe code of the crate; each says
//! why it holds.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;
use std::ptr;

use windows_sys::Win32::Foundation::{CloseHandle, GENERIC_READ, GENERIC_WRITE, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSecurityDescriptorToStringSecurityDescriptorW, ConvertSidToStringSidW,
    ConvertStringSecurityDescriptorToSecurityDescriptorW, GetSecurityInfo, SDDL_REVISION_1,
    SE_FILE_OBJECT,
};
use windows_sys::Win32::Security::{
    DACL_SECURITY_INFORMATION, GetTokenInformation, PSECURITY_DESCRIPTOR, SetKernelObjectSecurity,
    TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::Storage::FileSystem::{
    FILE_FLAG_BACKUP_SEMANTICS, READ_CONTROL, WRITE_DAC,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// Creates `path`, which must not exist, for writing, private before anything is written: it
/// is opened with no sharing, so nobody else can open it until the DACL is set.
pub(in crate::secrets) fn create_new(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .access_mode(GENERIC_WRITE | READ_CONTROL | WRITE_DAC)
        .share_mode(0)
        .open(path)?;
    restrict(&file, Kind::File)?;
    Ok(file)
}

/// Opens the lock file for reading and writing, made private when this call creates it. Other
/// processes open it too, so it is shared, and it holds nothing.
pub(in crate::secrets) fn open_lock(path: &Path) -> io::Result<File> {
    let created = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .access_mode(GENERIC_READ | GENERIC_WRITE | READ_CONTROL | WRITE_DAC)
        .open(path);
    match created {
        Ok(file) => {
            restrict(&file, Kind::File)?;
            Ok(file)
        }
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
            OpenOptions::new().read(true).write(true).open(path)
        }
        Err(e) => Err(e),
    }
}

/// Creates `dir` (and the folders above it) when it is missing, `dir` itself private with an
/// entry its files and folders inherit; an existing one is left as it is.
pub(in crate::secrets) fn create_private_dir(dir: &Path) -> io::Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        fs::create_dir_all(parent)?;
    }
    match fs::create_dir(dir) {
        Ok(()) => {}
        // Another process made it meanwhile: it is that process's to make private.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => return Ok(()),
        Err(e) => return Err(e),
    }
    let handle = OpenOptions::new()
        .access_mode(READ_CONTROL | WRITE_DAC)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(dir)?;
    restrict(&handle, Kind::Folder)
}

/// Gives a file whose DACL lets anyone but the current user in (copied from elsewhere, or
/// opened up by hand) the private DACL again; a failure names what it was doing.
pub(in crate::secrets) fn tighten(path: &Path) -> Result<(), (&'static str, io::Error)> {
    let inspect = OpenOptions::new()
        .access_mode(READ_CONTROL)
        .open(path)
        .map_err(|e| ("inspect", e))?;
    let sid = user_sid().map_err(|e| ("inspect", e))?;
    if only_user(&dacl_sddl(&inspect).map_err(|e| ("inspect", e))?, &sid) {
        return Ok(());
    }
    let restricting = |e| ("restrict the permissions of", e);
    let file = OpenOptions::new()
        .access_mode(READ_CONTROL | WRITE_DAC)
        .open(path)
        .map_err(restricting)?;
    restrict(&file, Kind::File).map_err(restricting)
}

/// A rename is durable on NTFS once it returns (its journal), and std cannot open a folder to
/// flush it: nothing to do.
pub(in crate::secrets) fn sync_dir(_dir: &Path) {}

/// What a private DACL is put on: a folder's entry is inherited by what is made inside it.
#[derive(Clone, Copy)]
enum Kind {
    File,
    Folder,
}

/// Whether a DACL, in SDDL, lets only `sid` in: protected, and every entry an allow entry for
/// `sid` (with whatever rights; none for anyone else). Anything it cannot read is not private.
fn only_user(sddl: &str, sid: &str) -> bool {
    let Some(dacl) = sddl.strip_prefix("D:") else {
        return false;
    };
    let (flags, entries) = dacl.split_at(dacl.find('(').unwrap_or(dacl.len()));
    if !flags.contains('P') || flags.contains("NO_ACCESS_CONTROL") {
        return false;
    }
    if entries.is_empty() {
        return true;
    }
    let Some(inner) = entries
        .strip_prefix('(')
        .and_then(|rest| rest.strip_suffix(')'))
    else {
        return false;
    };
    inner.split(")(").all(|entry| {
        let fields: Vec<&str> = entry.split(';').collect();
        fields.len() == 6 && fields[0] == "A" && fields[5] == sid
    })
}

/// Gives the open file or folder the private DACL: protected, one entry granting the current
/// user full access (inherited by files and folders made inside a folder).
fn restrict(file: &File, kind: Kind) -> io::Result<()> {
    let sid = user_sid()?;
    let inherit = match kind {
        Kind::File => "",
        Kind::Folder => "OICI",
    };
    let sddl = wide(&format!("D:P(A;{inherit};FA;;;{sid})"));
    let mut descriptor: PSECURITY_DESCRIPTOR = ptr::null_mut();
    // SAFETY: `sddl` is a NUL-terminated UTF-16 string that outlives the call; the function
    // writes a descriptor it allocated with LocalAlloc into `descriptor`, freed by `Local`.
    let made = unsafe {
        ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl.as_ptr(),
            SDDL_REVISION_1,
            &mut descriptor,
            ptr::null_mut(),
        )
    };
    if made == 0 {
        return Err(io::Error::last_os_error());
    }
    let descriptor = Local(descriptor);
    // SAFETY: the handle is `file`'s, open with WRITE_DAC for as long as the call, and
    // `descriptor` is the valid descriptor made above. Its control has SE_DACL_PROTECTED (the
    // `P`), which the system keeps with the DACL: what SetSecurityInfo's
    // PROTECTED_DACL_SECURITY_INFORMATION sets, given here in the descriptor itself.
    let set = unsafe {
        SetKernelObjectSecurity(
            file.as_raw_handle(),
            DACL_SECURITY_INFORMATION,
            descriptor.0,
        )
    };
    if set == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The open file's DACL in SDDL (`D:P(A;;FA;;;S-1-5-21-...)`).
fn dacl_sddl(file: &File) -> io::Result<String> {
    let mut descriptor: PSECURITY_DESCRIPTOR = ptr::null_mut();
    // SAFETY: the handle is `file`'s, open with READ_CONTROL for as long as the call; only the
    // descriptor is asked for (the other out-pointers are null, which the API allows), and it
    // is allocated with LocalAlloc, freed by `Local`.
    let status = unsafe {
        GetSecurityInfo(
            file.as_raw_handle(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            &mut descriptor,
        )
    };
    win32(status)?;
    let descriptor = Local(descriptor);
    let mut text: *mut u16 = ptr::null_mut();
    // SAFETY: `descriptor` is the valid descriptor read above; the string is allocated with
    // LocalAlloc and freed by `Local`; its length is not asked for (null).
    let converted = unsafe {
        ConvertSecurityDescriptorToStringSecurityDescriptorW(
            descriptor.0,
            SDDL_REVISION_1,
            DACL_SECURITY_INFORMATION,
            &mut text,
            ptr::null_mut(),
        )
    };
    if converted == 0 {
        return Err(io::Error::last_os_error());
    }
    let text = Local(text.cast());
    Ok(from_wide(text.0.cast()))
}

/// The current user's SID as a string (`S-1-5-21-...`), from the process token.
fn user_sid() -> io::Result<String> {
    let mut token: HANDLE = ptr::null_mut();
    // SAFETY: GetCurrentProcess returns a pseudo-handle that needs no closing; the token handle
    // written into `token` is closed by `Token`.
    if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let token = Token(token);
    let mut size = 0u32;
    // SAFETY: a null buffer of length 0 only asks for the size needed, written into `size`.
    unsafe { GetTokenInformation(token.0, TokenUser, ptr::null_mut(), 0, &mut size) };
    // u64s, so the buffer is aligned for TOKEN_USER (pointers).
    let mut buffer = vec![0u64; (size as usize).div_ceil(8).max(1)];
    let length = u32::try_from(buffer.len() * 8).map_err(io::Error::other)?;
    // SAFETY: `buffer` is writable for `length` bytes and aligned for TOKEN_USER.
    let read = unsafe {
        GetTokenInformation(
            token.0,
            TokenUser,
            buffer.as_mut_ptr().cast::<c_void>(),
            length,
            &mut size,
        )
    };
    if read == 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: the call succeeded, so the buffer starts with a TOKEN_USER whose SID points into
    // the same buffer, which lives until the end of this function.
    let user = unsafe { &*buffer.as_ptr().cast::<TOKEN_USER>() };
    let mut text: *mut u16 = ptr::null_mut();
    // SAFETY: `user.User.Sid` is a valid SID (see above); the string is allocated with
    // LocalAlloc and freed by `Local`.
    if unsafe { ConvertSidToStringSidW(user.User.Sid, &mut text) } == 0 {
        return Err(io::Error::last_os_error());
    }
    let text = Local(text.cast());
    Ok(from_wide(text.0.cast()))
}

/// A NUL-terminated UTF-16 string read into a `String` (SDDL is ASCII).
fn from_wide(text: *const u16) -> String {
    if text.is_null() {
        return String::new();
    }
    // SAFETY: `text` is a NUL-terminated string the system allocated and that is still alive:
    // every index read is before or at its NUL.
    let length = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: the `length` units before the NUL were just read, so they are valid.
    String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, length) })
}

/// `text` as a NUL-terminated UTF-16 string.
fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}

/// A Win32 status (`ERROR_SUCCESS` is 0) as an I/O result.
fn win32(status: u32) -> io::Result<()> {
    match status {
        0 => Ok(()),
        code => Err(io::Error::from_raw_os_error(
            i32::try_from(code).unwrap_or(i32::MAX),
        )),
    }
}

/// Memory the security API allocated with LocalAlloc, freed on drop.
struct Local(*mut c_void);

impl Drop for Local {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the pointer came from the API that allocated it with LocalAlloc, and is
            // freed once, here.
            unsafe { LocalFree(self.0) };
        }
    }
}

/// An access token handle, closed on drop.
struct Token(HANDLE);

impl Drop for Token {
    fn drop(&mut self) {
        // SAFETY: the handle came from OpenProcessToken and is closed once, here.
        unsafe { CloseHandle(self.0) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_protected_dacl_of_the_user_alone_is_private() {
        let me = "S-1-5-21-1-2-3-1001";
        assert!(only_user("D:P(A;;FA;;;S-1-5-21-1-2-3-1001)", me));
        assert!(only_user("D:PAI(A;;FA;;;S-1-5-21-1-2-3-1001)", me));
        assert!(only_user("D:P(A;OICI;FR;;;S-1-5-21-1-2-3-1001)", me));
        assert!(only_user("D:P", me), "nobody at all");
        for open in [
            "D:(A;;FA;;;S-1-5-21-1-2-3-1001)",
            "D:AI(A;;FA;;;S-1-5-21-1-2-3-1001)(A;ID;FA;;;SY)",
            "D:P(A;;FA;;;S-1-5-21-1-2-3-1001)(A;;FA;;;BA)",
            "D:P(A;;FR;;;WD)",
            "D:P(D;;FA;;;WD)(A;;FA;;;S-1-5-21-1-2-3-1001)",
            "D:NO_ACCESS_CONTROL",
            "",
            "O:BA",
        ] {
            assert!(!only_user(open, me), "{open}");
        }
    }
}
