//! How WebKitGTK paints on a Linux machine without a GPU.
//!
//! With no render node under `/dev/dri`, every OpenGL user ends up in Mesa's software rasterizer,
//! and loading it maps libLLVM: about 9 MB of relocated data per process, plus its share of
//! 36 MB of code. Measured on such a machine (docs/PERFORMANCE.md, the desktop figures):
//! - WebKit's own CPU path beats compositing through llvmpipe on every count: about 75 MiB less
//!   in the web process and 5 MiB less in the app, scrolling frames of 19 ms instead of 31, token
//!   deltas on screen in 11 ms instead of 29;
//! - the app process then needs no OpenGL at all (the web process sends it finished bitmaps), and
//!   keeping Mesa out of it saves another 17 MiB.
//!
//! With a GPU, WebKit and GTK keep their own choices. A variable the user set is left alone.

use std::ffi::OsStr;

/// Whether the machine has a GPU render node (`/dev/dri/renderD*`): then WebKit and GTK keep
/// their own choices.
pub fn has_render_node() -> bool {
    std::fs::read_dir("/dev/dri").is_ok_and(|nodes| {
        nodes
            .flatten()
            .any(|node| node.file_name().to_string_lossy().starts_with("renderD"))
    })
}

/// Makes the choices above. Must run first thing in `main`, while the process has one thread.
pub fn paint_on_the_cpu_without_a_gpu() {
    if has_render_node() {
        return;
    }
    set_unless_set("WEBKIT_DISABLE_COMPOSITING_MODE", "1");
    set_unless_set("WEBKIT_DISABLE_DMABUF_RENDERER", "1");
    keep_mesa_out_of_the_app_process();
}

/// GTK probes GLX when it opens the display, and WebKit's UI side opens an EGL display before
/// it starts the web process; both load Mesa, and neither uses it when WebKit composites on the
/// CPU. GTK's probe is off with `GDK_GL=disable`. EGL goes through libglvnd, which reads its
/// vendor list once per process, on the first EGL call: that call is made here with an empty
/// vendor path, and the variable is gone again before WebKit starts the web process, which does
/// need EGL and so inherits the normal list. WebKit's UI side copes with no EGL display.
fn keep_mesa_out_of_the_app_process() {
    const VENDOR_DIRS: &str = "__EGL_VENDOR_LIBRARY_DIRS";
    const VENDOR_FILES: &str = "__EGL_VENDOR_LIBRARY_FILENAMES";
    if std::env::var_os(VENDOR_DIRS).is_some() || std::env::var_os(VENDOR_FILES).is_some() {
        return;
    }
    set_unless_set("GDK_GL", "disable");
    set(VENDOR_DIRS, "");
    load_the_egl_vendors();
    remove(VENDOR_DIRS);
}

/// The first EGL call of the process: `eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS)`, which
/// makes libglvnd load its vendors. libEGL is already mapped (WebKit links it); if it is not,
/// nothing is called and nothing changes.
#[allow(unsafe_code)]
fn load_the_egl_vendors() {
    const EGL_EXTENSIONS: i32 = 0x3055;
    type QueryString = unsafe extern "C" fn(*mut libc::c_void, i32) -> *const libc::c_char;
    // SAFETY: RTLD_NOLOAD only looks up a library that is already loaded; the handle is kept
    // (never closed), so the symbol stays valid for the call.
    let symbol = unsafe {
        let egl = libc::dlopen(c"libEGL.so.1".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD);
        if egl.is_null() {
            return;
        }
        libc::dlsym(egl, c"eglQueryString".as_ptr())
    };
    if symbol.is_null() {
        return;
    }
    // SAFETY: eglQueryString has this signature in the EGL 1.5 specification; EGL_NO_DISPLAY
    // (null) with EGL_EXTENSIONS is a defined query that returns a static string or null, and
    // the result is not read.
    unsafe {
        let query: QueryString = std::mem::transmute::<*mut libc::c_void, QueryString>(symbol);
        query(std::ptr::null_mut(), EGL_EXTENSIONS);
    }
}

fn set_unless_set(variable: &str, value: &str) {
    if std::env::var_os(variable).is_none() {
        set(variable, value);
    }
}

#[allow(unsafe_code)]
fn set(variable: &str, value: impl AsRef<OsStr>) {
    // SAFETY: called only from the start of main, before anything could start a thread, so no
    // other thread can be reading the environment while it changes.
    unsafe { std::env::set_var(variable, value) };
}

#[allow(unsafe_code)]
fn remove(variable: &str) {
    // SAFETY: as in `set`.
    unsafe { std::env::remove_var(variable) };
}
