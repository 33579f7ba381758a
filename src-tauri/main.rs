// Prevents an extra console window on Windows in release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

/// mimalloc instead of the system allocator: a step copies its whole context window (thousands
/// of small strings), and glibc's allocator made that copy about ten times slower (see
/// docs/PERFORMANCE.md, the agent step).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    #[cfg(target_os = "linux")]
    composite_on_the_cpu_without_a_gpu();
    decima_desktop::run()
}

/// Without a GPU render node, WebKitGTK composites through Mesa's software rasterizer
/// (llvmpipe). Measured on such a machine (docs/PERFORMANCE.md, the desktop figures), WebKit's
/// own CPU path is better on every count: about 80 MiB less in the web process, scrolling
/// frames of 20 ms instead of 31, token deltas on screen in 13 ms instead of 29. With a GPU,
/// or when the user set the variable either way, WebKit keeps its own choice.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn composite_on_the_cpu_without_a_gpu() {
    const VARIABLE: &str = "WEBKIT_DISABLE_COMPOSITING_MODE";
    if std::env::var_os(VARIABLE).is_some() {
        return;
    }
    let has_render_node = std::fs::read_dir("/dev/dri").is_ok_and(|nodes| {
        nodes
            .flatten()
            .any(|node| node.file_name().to_string_lossy().starts_with("renderD"))
    });
    if !has_render_node {
        // SAFETY: the first thing main does, before anything could start a thread, so no other
        // thread can be reading the environment while it changes.
        unsafe { std::env::set_var(VARIABLE, "1") };
    }
}
