//! One writer per conversation. A chat turn or a compression claims its conversation for as
//! long as it runs (an execution holds it through its status, see `decima_store::Claims`), and
//! anything else that would write into it is refused before it stores a byte. The claim is
//! renewed in the background, so a long answer keeps it, and lapses on its own when the
//! process dies.

use std::time::Duration;

use decima_core::ConversationId;
use decima_store::{Claim, ClaimKind, Store};
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use crate::error::Result;

/// How long a claim lives unless renewed: a process that died frees the conversation after
/// at most this long.
pub const CLAIM_TTL: Duration = Duration::from_secs(60);
/// How often a held claim is renewed: several times per lifetime, so a stalled renewal or two
/// does not let it lapse.
const RENEW_EVERY: Duration = Duration::from_secs(15);

/// Who this process is, for the message another process shows when it is refused.
pub fn owner() -> String {
    let host = rustix::system::uname();
    format!(
        "process {} on {}",
        std::process::id(),
        host.nodename().to_string_lossy()
    )
}

/// A conversation claimed by this process; released by [`ClaimGuard::release`], or when
/// dropped (in the background), or by lapsing if the process dies.
pub struct ClaimGuard {
    store: Store,
    claim: Option<Claim>,
    renewal: JoinHandle<()>,
}

impl ClaimGuard {
    /// Claims `conversation` for `kind`, or fails with the store's `Busy` error naming what
    /// holds it.
    pub async fn take(
        store: &Store,
        conversation: ConversationId,
        kind: ClaimKind,
    ) -> Result<Self> {
        let claim = store
            .claims()
            .claim(conversation, kind, &owner(), CLAIM_TTL)
            .await?;
        let renewal = tokio::spawn(renew(store.clone(), claim.clone()));
        Ok(Self {
            store: store.clone(),
            claim: Some(claim),
            renewal,
        })
    }

    /// Gives the conversation back now.
    pub async fn release(mut self) {
        self.renewal.abort();
        if let Some(claim) = self.claim.take()
            && let Err(e) = self.store.claims().release(&claim).await
        {
            warn!(error = %e, "cannot release the conversation's claim; it lapses on its own");
        }
    }
}

impl Drop for ClaimGuard {
    fn drop(&mut self) {
        self.renewal.abort();
        // An early return or a panic: give the claim back in the background if a runtime is
        // there to do it; otherwise it lapses.
        if let Some(claim) = self.claim.take()
            && let Ok(handle) = tokio::runtime::Handle::try_current()
        {
            let store = self.store.clone();
            handle.spawn(async move {
                if let Err(e) = store.claims().release(&claim).await {
                    debug!(error = %e, "claim left to lapse");
                }
            });
        }
    }
}

async fn renew(store: Store, claim: Claim) {
    loop {
        tokio::time::sleep(RENEW_EVERY).await;
        match store.claims().renew(&claim, CLAIM_TTL).await {
            Ok(true) => {}
            Ok(false) => {
                warn!(conversation = %claim.conversation, "the conversation's claim was lost");
                return;
            }
            Err(e) => warn!(error = %e, "cannot renew the conversation's claim"),
        }
    }
}
