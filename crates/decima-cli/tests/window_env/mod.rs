//! The harness the context and compression tests share: a temp data dir and the `decima`
//! binary run with a given context window.
#![allow(dead_code)]

use std::process::{Command, Output};

pub struct Env {
    pub dir: tempfile::TempDir,
}

impl Env {
    pub fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    pub fn run(&self, window: &str, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_decima"))
            .arg("--data-dir")
            .arg(self.dir.path().join("data"))
            .args(args)
            .env_remove("DECIMA_DATA_DIR")
            .env("DECIMA_CONTEXT_WINDOW", window)
            .output()
            .unwrap()
    }

    pub fn ok(&self, window: &str, args: &[&str]) -> String {
        let out = self.run(window, args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub fn json(&self, window: &str, args: &[&str]) -> serde_json::Value {
        serde_json::from_str(&self.ok(window, args)).unwrap()
    }

    pub fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> String {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path.to_string_lossy().into_owned()
    }
}
