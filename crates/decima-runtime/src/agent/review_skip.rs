//! Skipping a run's final review. The final review of a run can take longer than the answer
//! itself on a small local model; the analyst may let the answer stand unreviewed without
//! stopping the run. The window's Skip names the execution, which this process may be running;
//! the runner registers its final review here while it runs.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, OnceLock};

use decima_core::ExecutionId;
use tokio_util::sync::CancellationToken;

fn reviews() -> MutexGuard<'static, HashMap<ExecutionId, CancellationToken>> {
    static REVIEWS: OnceLock<Mutex<HashMap<ExecutionId, CancellationToken>>> = OnceLock::new();
    REVIEWS
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Skips the final review of `execution` if this process is running it. `false` when no final
/// review of it runs here (it ended, or never started).
pub fn skip_final_review(execution: ExecutionId) -> bool {
    match reviews().get(&execution) {
        Some(token) => {
            token.cancel();
            true
        }
        None => false,
    }
}

/// A final review that may be skipped, for as long as it is held.
pub(crate) struct Skippable {
    execution: ExecutionId,
    token: CancellationToken,
}

impl Skippable {
    /// Registers the final review of `execution`.
    pub(crate) fn register(execution: ExecutionId) -> Self {
        let token = CancellationToken::new();
        reviews().insert(execution, token.clone());
        Self { execution, token }
    }

    /// Resolves when the analyst skips it.
    pub(crate) async fn skipped(&self) {
        self.token.cancelled().await
    }
}

impl Drop for Skippable {
    fn drop(&mut self) {
        reviews().remove(&self.execution);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_registered_review_is_skipped_and_an_ended_one_is_not_found() {
        let id = ExecutionId::new();
        assert!(!skip_final_review(id));
        let review = Skippable::register(id);
        assert!(skip_final_review(id));
        tokio::time::timeout(std::time::Duration::from_secs(1), review.skipped())
            .await
            .expect("skipped");
        drop(review);
        assert!(!skip_final_review(id));
    }
}
