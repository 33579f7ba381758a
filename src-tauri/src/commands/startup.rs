//! How long the window took to start, in the log: the process's launch, the store, the window,
//! and the page's first paint, each in milliseconds since the process was launched. An analyst
//! whose Decima starts slowly can send the log's first lines, and the figures test reads the
//! same line from an app launched as an analyst launches it (no WebDriver session in between).

use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::AppError;

/// When this process was launched, fixed on the first call (which `run` makes first thing).
static LAUNCHED: OnceLock<SystemTime> = OnceLock::new();

/// When the process was launched: on Linux the kernel's record of its start (so the time the
/// loader spent before `main` counts), elsewhere the first call.
pub fn launched_at() -> SystemTime {
    *LAUNCHED.get_or_init(|| process_start().unwrap_or_else(SystemTime::now))
}

/// Milliseconds from the launch to now.
pub fn since_launch_ms() -> u128 {
    SystemTime::now()
        .duration_since(launched_at())
        .unwrap_or_default()
        .as_millis()
}

/// The process's start from `/proc/self/stat` (clock ticks after boot) and `/proc/uptime`
/// (boot in 10 ms steps; `btime` in `/proc/stat` is whole seconds, up to a second off).
#[cfg(target_os = "linux")]
fn process_start() -> Option<SystemTime> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The fields after the command, which is in parentheses and may hold spaces.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let ticks: f64 = rest.split(' ').nth(19)?.parse().ok()?;
    let uptime: f64 = std::fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // The kernel reports these ticks in USER_HZ, which is 100 on every Linux architecture.
    let age = uptime - ticks / 100.0;
    SystemTime::now().checked_sub(std::time::Duration::try_from_secs_f64(age.max(0.0)).ok()?)
}

#[cfg(not(target_os = "linux"))]
fn process_start() -> Option<SystemTime> {
    None
}

/// Milliseconds from the launch to a moment the page gives as milliseconds since the epoch.
fn after_launch(epoch_ms: f64) -> Result<u64, AppError> {
    if !epoch_ms.is_finite() || epoch_ms < 0.0 {
        return Err(AppError::invalid(format!(
            "a paint time must be milliseconds since 1970, not {epoch_ms}"
        )));
    }
    let launched = launched_at()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
        * 1000.0;
    // Saturating: a moment before the launch (a clock step) reads as 0.
    Ok((epoch_ms - launched).max(0.0) as u64)
}

/// The page's first paint and the workbench's first frame, as milliseconds since the epoch
/// (`performance.timeOrigin` plus the paint entry): logged once per page load as milliseconds
/// since the launch. `first_paint` is null where WebKit has no paint entry.
#[tauri::command]
#[specta::specta]
#[tracing::instrument(name = "command", skip_all, fields(name = "app_painted"))]
pub fn app_painted(first_paint: Option<f64>, first_frame: f64) -> Result<(), AppError> {
    let first_frame_ms = after_launch(first_frame)?;
    let first_paint_ms = first_paint.map(after_launch).transpose()?;
    tracing::info!(first_paint_ms, first_frame_ms, "window painted");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_launch_is_before_now_and_not_long_ago() {
        let age = SystemTime::now().duration_since(launched_at()).unwrap();
        // A test binary started moments ago; a btime-based clock could be a second off.
        assert!(age < std::time::Duration::from_secs(600), "{age:?}");
        assert_eq!(launched_at(), launched_at(), "fixed once");
    }

    #[test]
    fn a_paint_is_counted_from_the_launch() {
        let launched = launched_at().duration_since(UNIX_EPOCH).unwrap();
        let at = launched.as_secs_f64() * 1000.0 + 640.0;
        let ms = after_launch(at).unwrap();
        assert!((639..=641).contains(&ms), "{ms}");
        assert_eq!(after_launch(1.0).unwrap(), 0, "before the launch reads 0");
    }

    #[test]
    fn a_time_that_is_not_one_is_refused() {
        for bad in [f64::NAN, f64::INFINITY, -5.0] {
            let err = app_painted(None, bad).unwrap_err();
            assert!(err.to_string().contains("milliseconds since 1970"), "{err}");
        }
    }
}
