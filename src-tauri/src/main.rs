// Unit tests read as the story they check: the line limit is for production code.
#![cfg_attr(test, allow(clippy::too_many_lines))]
// Prevents an extra console window on Windows in release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

/// mimalloc instead of the system allocator: a step copies its whole context window (thousands
/// of small strings), and glibc's allocator made that copy about ten times slower (see
/// docs/PERFORMANCE.md, the agent step).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    #[cfg(target_os = "linux")]
    decima_desktop::graphics::paint_on_the_cpu_without_a_gpu();
    decima_desktop::run()
}
