//! Shared by the Docker sandbox tests: a real engine and the `decima-test:busybox` image are
//! required. Missing ones FAIL the tests with a message naming `scripts/test.sh`, which
//! installs and starts the engine and builds the image.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use decima_sandbox::docker::{DockerConfig, DockerEngine, DockerSandbox};

/// The image the tests run in (built by `ensure_test_image` in scripts/lib.sh).
pub const TEST_IMAGE: &str = "decima-test:busybox";
/// The instance id the tests' sandboxes are created under.
pub const TEST_INSTANCE: &str = "decimatest";

/// Connects to the engine, or panics saying how to get one.
pub async fn engine() -> DockerEngine {
    match DockerEngine::connect(TEST_INSTANCE).await {
        Ok(engine) => {
            let image = engine.client().inspect_image(TEST_IMAGE).await;
            assert!(
                image.is_ok(),
                "the Docker test image {TEST_IMAGE} is missing: run scripts/test.sh (it builds it with ensure_test_image), or `source scripts/lib.sh && ensure_docker && ensure_test_image`"
            );
            engine
        }
        Err(e) => panic!(
            "the Docker sandbox tests need a running Docker engine: run scripts/test.sh (it installs and starts dockerd), or `source scripts/lib.sh && ensure_docker && ensure_test_image`. Error: {e}"
        ),
    }
}

/// A conversation key no other test uses.
pub fn unique_key(what: &str) -> String {
    format!("t-{what}-{}", uuid::Uuid::now_v7().simple())
}

/// A sandbox on the test image for a fresh conversation key.
pub async fn sandbox(what: &str) -> DockerSandbox {
    sandbox_with(what, DockerConfig::with_image(TEST_IMAGE)).await
}

/// A sandbox with the given config for a fresh conversation key.
pub async fn sandbox_with(what: &str, config: DockerConfig) -> DockerSandbox {
    DockerSandbox::new(engine().await, config, &unique_key(what)).unwrap()
}

/// Removes the container and the volume when dropped (also when a test panics).
pub struct Cleanup(pub DockerEngine, pub String);

impl Drop for Cleanup {
    fn drop(&mut self) {
        let engine = self.0.clone();
        let key = self.1.clone();
        // A fresh runtime on another thread: Drop may run inside the test's runtime.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async { engine.remove_conversation(&key, true).await })
        })
        .join();
    }
}

/// The cleanup guard for a sandbox.
pub fn cleanup(sb: &DockerSandbox) -> Cleanup {
    Cleanup(sb.engine().clone(), sb.key().to_owned())
}
