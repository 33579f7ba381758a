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
/// (llvmpipe) and sets up DMA-BUF sharing it has no GPU buffers for. Measured on such a machine
/// (docs/PERFORMANCE.md, the desktop figures), WebKit's own CPU path is better on every count:
/// about 75 MiB less in the web process and 5 MiB less in the app, scrolling frames of 19 ms
/// instead of 31, token deltas on screen in 11 ms instead of 29. With a GPU, WebKit keeps its
/// own choice, and a variable the user set either way is left alone.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn composite_on_the_cpu_without_a_gpu() {
    let has_render_node = std::fs::read_dir("/dev/dri").is_ok_and(|nodes| {
        nodes
            .flatten()
            .any(|node| node.file_name().to_string_lossy().starts_with("renderD"))
    });
    if has_render_node {
        return;
    }
    for variable in [
        "WEBKIT_DISABLE_COMPOSITING_MODE",
        "WEBKIT_DISABLE_DMABUF_RENDERER",
    ] {
        if std::env::var_os(variable).is_none() {
            // SAFETY: the first thing main does, before anything could start a thread, so no
            // other thread can be reading the environment while it changes.
            unsafe { std::env::set_var(variable, "1") };
        }
    }
}
