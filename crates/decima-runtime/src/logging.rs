//! Logging setup shared by the CLI and the desktop app: one daily-rotated file in the data
//! directory's `logs/`, so a user can attach what happened to a bug report without having
//! captured stderr.
//!
//! # Which level applies
//!
//! 1. An explicit level (`--log-level LEVEL`, or `DECIMA_LOG=LEVEL`) wins. It applies to
//!    Decima's own crates; other crates (HTTP, SQL, TLS) stay at `warn` at most, so turning
//!    Decima up to `debug` or `trace` never turns on third-party output that can quote headers
//!    or bodies.
//! 2. Otherwise `RUST_LOG`, with its full directive syntax (`decima_llm=trace,hyper=debug`),
//!    for whoever needs to see inside a dependency and accepts what that dependency prints.
//! 3. Otherwise [`DEFAULT_LEVEL`] (`info`), capped the same way as an explicit level.
//!
//! Nothing Decima logs carries an API key, a header or a message's text at any level: events
//! record names, counts, sizes, statuses, durations and failure classes only.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use thiserror::Error;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::util::SubscriberInitExt as _;

/// Re-exported so callers can name a level without depending on `tracing` themselves.
pub use tracing::level_filters::LevelFilter;

/// The level used when neither an explicit level nor `RUST_LOG` says otherwise.
pub const DEFAULT_LEVEL: LevelFilter = LevelFilter::INFO;
/// The folder inside the data directory that holds the log files.
pub const LOG_DIR: &str = "logs";
/// Log files are named `decima.log.YYYY-MM-DD`; a new one starts each day (UTC).
pub const FILE_PREFIX: &str = "decima.log";
/// The variable the desktop app (and the CLI, through clap) reads an explicit level from.
pub const LEVEL_ENV: &str = "DECIMA_LOG";
/// The standard variable for full filter directives, used when no explicit level is given.
pub const RUST_LOG_ENV: &str = "RUST_LOG";

/// Two weeks of daily files: enough to cover a bug noticed late, bounded on disk.
const MAX_FILES: usize = 14;
/// Third-party crates never log more than this unless `RUST_LOG` asks for it.
const DEPENDENCY_CAP: LevelFilter = LevelFilter::WARN;
/// Targets are module paths, so these prefixes cover every Decima crate (`decima` is the CLI
/// binary's crate name).
const DECIMA_TARGETS: &[&str] = &[
    "decima",
    "decima_cli",
    "decima_core",
    "decima_desktop",
    "decima_llm",
    "decima_runtime",
    "decima_store",
];

/// Keeps the background log writer alive. Hold it until the process exits: dropping it flushes
/// and stops the writer, and lines logged afterwards are lost.
#[must_use = "dropping the guard stops the log writer; hold it until the process exits"]
pub struct LogGuard {
    _worker: WorkerGuard,
    dir: PathBuf,
    source: FilterSource,
}

impl LogGuard {
    /// Where the log files are, for a "show logs" action or a message to the user.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Which setting decided the filter, so a surprised user can be told why.
    pub fn filter_source(&self) -> FilterSource {
        self.source
    }
}

impl fmt::Debug for LogGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LogGuard")
            .field("dir", &self.dir)
            .field("source", &self.source)
            .finish_non_exhaustive()
    }
}

/// Which setting the filter came from; see the module documentation for the precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
pub enum FilterSource {
    /// `--log-level` or `DECIMA_LOG`.
    #[strum(serialize = "explicit level")]
    Explicit,
    /// `RUST_LOG`.
    #[strum(serialize = "RUST_LOG")]
    RustLog,
    /// Neither was set: [`DEFAULT_LEVEL`].
    #[strum(serialize = "default")]
    Default,
}

impl FilterSource {
    /// A short name for the log's first line.
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Why logging could not be set up. None of these should stop the program: callers say so once
/// and carry on without a log file.
#[derive(Debug, Error)]
pub enum LoggingError {
    /// `logs/` (or the data directory above it) cannot be created.
    #[error("cannot create the log directory {}: {source}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// What the OS said.
        source: io::Error,
    },
    /// The directory exists but today's file cannot be opened.
    #[error("cannot open a log file in {}: {source}", path.display())]
    OpenFile {
        /// The directory.
        path: PathBuf,
        /// What the appender said.
        source: tracing_appender::rolling::InitError,
    },
    /// Another subscriber (or `log` logger) was installed first; the first one stays.
    #[error("logging was already set up in this process")]
    AlreadyInitialised,
}

/// A level name that is not one of `off`, `error`, `warn`, `info`, `debug`, `trace`.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("unknown log level {0:?} (use off, error, warn, info, debug or trace)")]
pub struct UnknownLevel(pub String);

/// Reads a level as `--log-level` and `DECIMA_LOG` spell it, in any case. Blank means "not
/// given" (`Ok(None)`), so an emptied variable does not count as a choice.
pub fn parse_level(value: &str) -> Result<Option<LevelFilter>, UnknownLevel> {
    let value = value.trim();
    let levels = [
        ("off", LevelFilter::OFF),
        ("error", LevelFilter::ERROR),
        ("warn", LevelFilter::WARN),
        ("info", LevelFilter::INFO),
        ("debug", LevelFilter::DEBUG),
        ("trace", LevelFilter::TRACE),
    ];
    if value.is_empty() {
        return Ok(None);
    }
    levels
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(value))
        .map(|(_, level)| Some(*level))
        .ok_or_else(|| UnknownLevel(value.to_string()))
}

/// The explicit level from `DECIMA_LOG`, for callers without their own flag or whose flag was
/// not given. Unset or blank is `Ok(None)`.
pub fn level_from_env() -> Result<Option<LevelFilter>, UnknownLevel> {
    match std::env::var_os(LEVEL_ENV) {
        None => Ok(None),
        Some(value) => parse_level(&value.to_string_lossy()),
    }
}

/// Starts logging to `data_dir/logs/decima.log.YYYY-MM-DD` through a background writer, so a
/// slow disk never stalls an async worker. `level` is the explicit level (`--log-level` or
/// `DECIMA_LOG`), which wins over `RUST_LOG`, which wins over [`DEFAULT_LEVEL`]. Nothing is
/// written to stderr or stdout: for the CLI those are the user's output.
///
/// Call it once, early, and keep the returned guard until the process exits.
pub fn init(data_dir: &Path, level: Option<LevelFilter>) -> Result<LogGuard, LoggingError> {
    let dir = data_dir.join(LOG_DIR);
    create_private_dir(&dir).map_err(|source| LoggingError::CreateDir {
        path: dir.clone(),
        source,
    })?;
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::DAILY)
        .filename_prefix(FILE_PREFIX)
        .max_log_files(MAX_FILES)
        .build(&dir)
        .map_err(|source| LoggingError::OpenFile {
            path: dir.clone(),
            source,
        })?;
    let (writer, worker) = tracing_appender::non_blocking::NonBlockingBuilder::default()
        .thread_name("decima-log-writer")
        .finish(appender);
    let rust_log = std::env::var(RUST_LOG_ENV).ok();
    let (filter, source) = filter(level, rust_log.as_deref());
    subscriber(writer, filter)
        .try_init()
        .map_err(|_| LoggingError::AlreadyInitialised)?;
    tracing::info!(
        version = env!("CARGO_PKG_VERSION"),
        filter = source.as_str(),
        "logging started"
    );
    Ok(LogGuard {
        _worker: worker,
        dir,
        source,
    })
}

/// The filter for the given explicit level and `RUST_LOG` value, following the precedence in
/// the module documentation. An empty `RUST_LOG` counts as unset; invalid directives in it are
/// skipped with a one-line note on stderr (tracing-subscriber's own).
fn filter(level: Option<LevelFilter>, rust_log: Option<&str>) -> (EnvFilter, FilterSource) {
    let rust_log = rust_log.map(str::trim).filter(|v| !v.is_empty());
    let (directives, source) = match (level, rust_log) {
        (Some(level), _) => (capped_directives(level), FilterSource::Explicit),
        (None, Some(rust_log)) => (rust_log.to_string(), FilterSource::RustLog),
        (None, None) => (capped_directives(DEFAULT_LEVEL), FilterSource::Default),
    };
    // Targets no directive names are off, so `RUST_LOG=decima_llm=debug` means only that.
    let filter = EnvFilter::builder().parse_lossy(directives);
    (filter, source)
}

/// `level` for Decima's crates and at most [`DEPENDENCY_CAP`] for everything else.
fn capped_directives(level: LevelFilter) -> String {
    let mut directives = level.min(DEPENDENCY_CAP).to_string();
    for target in DECIMA_TARGETS {
        directives.push_str(&format!(",{target}={level}"));
    }
    directives
}

/// The one subscriber layout, shared by [`init`] and the tests: plain text without colours, each
/// event prefixed by its spans (command, attempt, request) and their fields. Spans get no lines of
/// their own: a span can close late (sqlx keeps the current span while a query runs on its worker
/// thread), even after the writer stopped, so durations are logged as events by whoever measures.
fn subscriber<W>(writer: W, filter: EnvFilter) -> impl tracing::Subscriber + Send + Sync + 'static
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .finish()
}

/// Logs name conversations, providers and models, so `logs/` is private (0700). The folders
/// above it are created as the store would create them, with the default permissions.
fn create_private_dir(dir: &Path) -> io::Result<()> {
    if let Some(parent) = dir.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// Captures what the subscriber writes.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl io::Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl<'a> MakeWriter<'a> for Buffer {
        type Writer = Buffer;
        fn make_writer(&'a self) -> Self::Writer {
            self.clone()
        }
    }

    /// Emits one event per (target, level) pair under the given filter; returns the output.
    fn emit(level: Option<LevelFilter>, rust_log: Option<&str>) -> (String, FilterSource) {
        let buffer = Buffer::default();
        let (filter, source) = filter(level, rust_log);
        tracing::subscriber::with_default(subscriber(buffer.clone(), filter), || {
            tracing::debug!(target: "decima_llm::transport", "decima-debug");
            tracing::info!(target: "decima_llm::transport", "decima-info");
            tracing::warn!(target: "decima_store::pool", "decima-warn");
            tracing::info!(target: "decima::commands", "cli-info");
            tracing::debug!(target: "hyper::client", "dep-debug");
            tracing::info!(target: "sqlx::query", "dep-info");
            tracing::warn!(target: "reqwest::connect", "dep-warn");
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        (text, source)
    }

    fn has(text: &str, needle: &str) -> bool {
        text.lines().any(|l| l.ends_with(needle))
    }

    #[test]
    fn the_default_is_info_for_decima_and_warn_for_dependencies() {
        let (text, source) = emit(None, None);
        assert_eq!(source, FilterSource::Default);
        assert!(
            has(&text, "decima-info") && has(&text, "cli-info"),
            "{text}"
        );
        assert!(
            has(&text, "decima-warn") && has(&text, "dep-warn"),
            "{text}"
        );
        assert!(!has(&text, "decima-debug"), "{text}");
        assert!(
            !has(&text, "dep-info") && !has(&text, "dep-debug"),
            "{text}"
        );
    }

    #[test]
    fn an_explicit_level_wins_over_rust_log_and_never_opens_dependencies_up() {
        let (text, source) = emit(Some(LevelFilter::DEBUG), Some("trace"));
        assert_eq!(source, FilterSource::Explicit);
        assert!(has(&text, "decima-debug"), "{text}");
        assert!(
            !has(&text, "dep-debug") && !has(&text, "dep-info"),
            "{text}"
        );
        assert!(has(&text, "dep-warn"), "{text}");

        let (text, _) = emit(Some(LevelFilter::ERROR), Some("debug"));
        assert!(text.is_empty(), "error keeps everything here out: {text}");

        let (text, _) = emit(Some(LevelFilter::OFF), None);
        assert!(text.is_empty(), "{text}");
    }

    #[test]
    fn rust_log_applies_when_no_level_is_given() {
        let (text, source) = emit(None, Some("debug"));
        assert_eq!(source, FilterSource::RustLog);
        assert!(
            has(&text, "decima-debug") && has(&text, "dep-debug"),
            "{text}"
        );

        let (text, _) = emit(None, Some("warn,decima_llm=debug"));
        assert!(
            has(&text, "decima-debug") && !has(&text, "cli-info"),
            "{text}"
        );

        let (_, source) = emit(None, Some("  "));
        assert_eq!(source, FilterSource::Default, "an empty RUST_LOG is unset");
    }

    #[test]
    fn events_carry_their_spans_and_fields_on_one_plain_line() {
        let buffer = Buffer::default();
        let (filter, _) = filter(None, None);
        tracing::subscriber::with_default(subscriber(buffer.clone(), filter), || {
            let span = tracing::info_span!(target: "decima::commands", "command", name = "chat");
            span.in_scope(|| {
                tracing::info!(target: "decima::commands", duration_ms = 12, "command finished");
            });
        });
        let text = String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(
            text.contains(
                "command{name=\"chat\"}: decima::commands: command finished duration_ms=12"
            ),
            "{text}"
        );
        assert!(
            !text.contains('\u{1b}'),
            "no colour codes in a file: {text}"
        );
    }

    #[test]
    fn levels_parse_by_name_in_any_case_and_blank_is_unset() {
        assert_eq!(parse_level("debug"), Ok(Some(LevelFilter::DEBUG)));
        assert_eq!(parse_level(" WARN "), Ok(Some(LevelFilter::WARN)));
        assert_eq!(parse_level("Off"), Ok(Some(LevelFilter::OFF)));
        assert_eq!(parse_level(""), Ok(None));
        assert_eq!(parse_level("  "), Ok(None));
        let err = parse_level("loud").unwrap_err();
        assert!(err.to_string().contains("\"loud\""), "{err}");
        assert!(parse_level("3").is_err(), "names only");
    }

    #[test]
    fn an_unusable_log_directory_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(LOG_DIR),
            "a file where the folder should be",
        )
        .unwrap();
        let err = init(dir.path(), None).unwrap_err();
        assert!(matches!(err, LoggingError::CreateDir { .. }), "{err:?}");
        assert!(err.to_string().contains("logs"), "{err}");
    }
}
