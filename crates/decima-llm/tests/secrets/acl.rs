//! Windows: a file's or folder's DACL read back through the security API by name, apart from
//! the crate's own code, to check what it set; and a DACL opened up, as a person might.
//!
//! Under Wine a file keeps no DACL of its own: Wine turns the one it is given into a unix mode
//! and shows one made from that mode (SYSTEM, the owner, and Everyone when others may read),
//! never protected. There the check is what Wine can show: nobody but the user and SYSTEM.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::path::Path;
use std::ptr;

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    ConvertSecurityDescriptorToStringSecurityDescriptorW, ConvertSidToStringSidW,
    ConvertStringSecurityDescriptorToSecurityDescriptorW, GetNamedSecurityInfoW, SDDL_REVISION_1,
    SE_FILE_OBJECT, SetNamedSecurityInfoW,
};
use windows_sys::Win32::Security::{
    ACL, DACL_SECURITY_INFORMATION, GetSecurityDescriptorDacl, GetTokenInformation,
    PSECURITY_DESCRIPTOR, TOKEN_QUERY, TOKEN_USER, TokenUser,
};
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// Checks that `path` is the user's alone: a protected DACL whose one entry gives the user full
/// access, with the inheritance flags `inherit` (`OICI` for a folder); under Wine, no entry
/// for anyone but the user and SYSTEM, and full access for the user.
pub fn assert_private(path: &Path, inherit: &str) {
    let user = user();
    if !under_wine() {
        assert_eq!(
            protected_entries(path),
            format!("(A;{inherit};FA;;;{user})"),
            "{}",
            path.display()
        );
        return;
    }
    let sddl = dacl(path);
    let entries = &sddl[sddl.find('(').unwrap_or(sddl.len())..];
    assert!(
        entries.contains(&format!("(A;{inherit};FA;;;{user})")),
        "{}: {sddl}",
        path.display()
    );
    for entry in entries.trim_matches(['(', ')']).split(")(") {
        let sid = entry.rsplit(';').next().unwrap_or_default();
        assert!(
            sid == user || sid == "SY",
            "{} lets {sid} in: {sddl}",
            path.display()
        );
    }
}

/// Whether this runs under Wine (its ntdll has `wine_get_version`).
pub fn under_wine() -> bool {
    let ntdll = wide("ntdll.dll");
    // SAFETY: ntdll is loaded in every process and its handle needs no freeing; both names are
    // NUL-terminated and outlive the calls.
    unsafe {
        let module = GetModuleHandleW(ntdll.as_ptr());
        !module.is_null() && GetProcAddress(module, c"wine_get_version".as_ptr().cast()).is_some()
    }
}

/// The DACL of `path`, in SDDL (`D:PAI(A;;FA;;;S-1-5-21-...)`).
pub fn dacl(path: &Path) -> String {
    let name = wide(&path.display().to_string());
    let mut descriptor: PSECURITY_DESCRIPTOR = ptr::null_mut();
    // SAFETY: `name` is NUL-terminated and outlives the call; only the descriptor is asked
    // for, allocated by the system and freed below.
    let status = unsafe {
        GetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            ptr::null_mut(),
            &mut descriptor,
        )
    };
    assert_eq!(status, 0, "reading the DACL of {}", path.display());
    let mut text: *mut u16 = ptr::null_mut();
    // SAFETY: `descriptor` is the one just read; the string is freed below.
    let converted = unsafe {
        ConvertSecurityDescriptorToStringSecurityDescriptorW(
            descriptor,
            SDDL_REVISION_1,
            DACL_SECURITY_INFORMATION,
            &mut text,
            ptr::null_mut(),
        )
    };
    assert_ne!(
        converted,
        0,
        "writing the DACL of {} as SDDL",
        path.display()
    );
    let sddl = from_wide(text);
    // SAFETY: both were allocated by the system with LocalAlloc and are freed once.
    unsafe {
        LocalFree(text.cast());
        LocalFree(descriptor);
    }
    sddl
}

/// The entries of the DACL of `path`, checked to be protected (`D:P`, or `D:PAI` where the
/// system marks it auto-inherited): what it lets in, and nothing it inherits.
pub fn protected_entries(path: &Path) -> String {
    let sddl = dacl(path);
    let (flags, entries) = sddl.split_at(sddl.find('(').unwrap_or(sddl.len()));
    assert!(
        flags.starts_with("D:P") && !flags.contains("NO_ACCESS_CONTROL"),
        "{} inherits or has no DACL: {sddl}",
        path.display()
    );
    entries.to_owned()
}

/// The SID of the user this test runs as.
pub fn user() -> String {
    let mut token: HANDLE = ptr::null_mut();
    // SAFETY: the pseudo-handle of this process needs no closing; the token is closed below.
    assert_ne!(
        unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) },
        0
    );
    let mut buffer = vec![0u64; 128];
    let mut size = 0u32;
    // SAFETY: `buffer` is 1 KiB, aligned for TOKEN_USER, and writable.
    let read = unsafe {
        GetTokenInformation(
            token,
            TokenUser,
            buffer.as_mut_ptr().cast::<c_void>(),
            1024,
            &mut size,
        )
    };
    assert_ne!(read, 0);
    // SAFETY: the call succeeded, so the buffer holds a TOKEN_USER whose SID is inside it.
    let sid = unsafe { (*buffer.as_ptr().cast::<TOKEN_USER>()).User.Sid };
    let mut text: *mut u16 = ptr::null_mut();
    // SAFETY: `sid` is valid while `buffer` lives; the string is freed below.
    assert_ne!(unsafe { ConvertSidToStringSidW(sid, &mut text) }, 0);
    let user = from_wide(text);
    // SAFETY: allocated by the system with LocalAlloc, and the token opened above; each is
    // given back once.
    unsafe {
        LocalFree(text.cast());
        CloseHandle(token);
    }
    user
}

/// Gives `path` a DACL that inherits from its folder and lets everyone in.
pub fn open_to_everyone(path: &Path) {
    let sddl = wide("D:(A;;FA;;;WD)");
    let mut descriptor: PSECURITY_DESCRIPTOR = ptr::null_mut();
    // SAFETY: `sddl` is NUL-terminated; the descriptor is freed below.
    let made = unsafe {
        ConvertStringSecurityDescriptorToSecurityDescriptorW(
            sddl.as_ptr(),
            SDDL_REVISION_1,
            &mut descriptor,
            ptr::null_mut(),
        )
    };
    assert_ne!(made, 0);
    let (mut present, mut defaulted) = (0, 0);
    let mut dacl: *mut ACL = ptr::null_mut();
    // SAFETY: `descriptor` is valid and outlives `dacl`, which points into it.
    assert_ne!(
        unsafe { GetSecurityDescriptorDacl(descriptor, &mut present, &mut dacl, &mut defaulted) },
        0
    );
    let name = wide(&path.display().to_string());
    // SAFETY: `name` is NUL-terminated, `dacl` valid; nothing else is set (null).
    let status = unsafe {
        SetNamedSecurityInfoW(
            name.as_ptr(),
            SE_FILE_OBJECT,
            DACL_SECURITY_INFORMATION,
            ptr::null_mut(),
            ptr::null_mut(),
            dacl,
            ptr::null(),
        )
    };
    // SAFETY: allocated by the system with LocalAlloc, given back once.
    unsafe { LocalFree(descriptor) };
    assert_eq!(status, 0, "opening up {}", path.display());
}

fn wide(text: &str) -> Vec<u16> {
    text.encode_utf16().chain(std::iter::once(0)).collect()
}

fn from_wide(text: *const u16) -> String {
    // SAFETY: a NUL-terminated string from the system: nothing past its NUL is read.
    let length = (0..).take_while(|&i| unsafe { *text.add(i) } != 0).count();
    // SAFETY: the `length` units before the NUL were just read.
    String::from_utf16_lossy(unsafe { std::slice::from_raw_parts(text, length) })
}
