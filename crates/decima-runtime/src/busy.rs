//! One writer per conversation. A chat turn or a compression claims its conversation for as
//! long as it runs (an execution holds it through its status, see `decima_store::Claims`), and
//! anything else that would write into it is refused before it stores a byte. The claim is
//! renewed in the background, so a long answer keeps it, and lapses on its own when the
//! process dies. The claim also names this process, so a process on the same machine that
//! finds it dead takes the conversation over at once; [`noting_take_overs`] tells the person.

use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use decima_core::ConversationId;
use decima_store::{Claim, ClaimKind, GoneHolder, Store};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::error::Result;

/// How long a claim lives unless renewed: a process that died frees the conversation after
/// at most this long.
pub const CLAIM_TTL: Duration = Duration::from_secs(60);
/// How often a held claim is renewed: several times per lifetime, so a stalled renewal or two
/// does not let it lapse.
const RENEW_EVERY: Duration = Duration::from_secs(15);

/// Who this process is, for the message another process shows when it is refused: its id and
/// the host name (`uname -n` on unix, the computer's DNS host name on Windows).
pub fn owner() -> String {
    format!(
        "process {} on {}",
        std::process::id(),
        gethostname::gethostname().to_string_lossy()
    )
}

/// Told one line when a claim is taken over from a process that is gone.
pub type TakeOverNote = Arc<dyn Fn(&str) + Send + Sync>;

tokio::task_local! {
    /// Who hears of take-overs in the current task (see [`noting_take_overs`]).
    static TAKE_OVER_NOTES: TakeOverNote;
}

/// Runs `work` with `note` told, in one line, of every conversation claim it takes over from a
/// process gone from this machine ("took over the conversation from process 4242, which is no
/// longer running"). The claim is taken deep inside a chat turn or a compression, whose callers
/// see only the outcome; the CLI prints the line and the window can show it.
pub async fn noting_take_overs<F: Future>(note: TakeOverNote, work: F) -> F::Output {
    TAKE_OVER_NOTES.scope(note, work).await
}

/// Claims given back in the background by guards that were dropped (see [`finish_releases`]).
static RELEASING: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());

/// Waits until every claim a dropped guard gives back in the background is released. A process
/// that stops a turn by dropping it (a cancelled `decima chat`) calls this before it exits, so
/// its conversation is free the moment it is gone, not when the claim lapses.
pub async fn finish_releases() {
    let pending = std::mem::take(&mut *RELEASING.lock().unwrap_or_else(PoisonError::into_inner));
    for task in pending {
        if let Err(e) = task.await {
            debug!(error = %e, "a claim's release did not finish");
        }
    }
}

/// A conversation claimed by this process; released by [`ClaimGuard::release`], or when
/// dropped (in the background, see [`finish_releases`]), or by lapsing if the process dies.
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
        if let Some(note) = claim.take_over_note() {
            info!(%conversation, "the conversation was taken over from a process that is gone");
            // Outside `noting_take_overs` nobody asked to hear it; the log has it.
            let _ = TAKE_OVER_NOTES.try_with(|tell| tell(&note));
        }
        let renewal = tokio::spawn(renew(store.clone(), claim.clone()));
        Ok(Self {
            store: store.clone(),
            claim: Some(claim),
            renewal,
        })
    }

    /// The holder this claim replaced because its process was gone, if it did.
    pub fn taken_over(&self) -> Option<&GoneHolder> {
        self.claim.as_ref().and_then(|c| c.took_over.as_ref())
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
            let task = handle.spawn(async move {
                if let Err(e) = store.claims().release(&claim).await {
                    debug!(error = %e, "claim left to lapse");
                }
            });
            let mut releasing = RELEASING.lock().unwrap_or_else(PoisonError::into_inner);
            releasing.retain(|t| !t.is_finished());
            releasing.push(task);
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
