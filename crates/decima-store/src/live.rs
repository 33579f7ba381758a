//! Live updates from a shared store: what another desktop wrote, as it lands.
//!
//! PostgreSQL's triggers `NOTIFY` on the channel `decima_changes` when a message, a run event
//! or a review is stored (see `migrations/postgres`). A notification says only where to read
//! again; the reader re-reads by seq, so a missed or merged notification costs nothing but a
//! little latency. Notifications sent while the listening connection was down are lost: the
//! feed says so with [`Change::Reconnected`], and the reader re-reads everything it shows.

use decima_core::ConversationId;
use sqlx::postgres::PgListener;

use crate::{Backend, Result, Store};

/// The channel the triggers notify on.
const CHANNEL: &str = "decima_changes";

/// What changed in the shared store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A message was stored or changed (pinned, rolled back): read the conversation again from
    /// this seq.
    Message {
        /// Its conversation.
        conversation: ConversationId,
        /// Its seq.
        seq: i64,
    },
    /// A run event was stored.
    Event {
        /// The conversation it concerns, when it concerns one.
        conversation: Option<ConversationId>,
        /// The event's id: read the events after the last one seen.
        id: i64,
    },
    /// A tenth-man review was stored.
    Review {
        /// Its conversation.
        conversation: ConversationId,
    },
    /// The connection was lost and is back: changes in between were not seen. Read everything
    /// shown again, by seq.
    Reconnected,
}

impl Change {
    /// Reads a notification's payload; `None` for one this build does not know.
    fn parse(payload: &str) -> Option<Self> {
        let (kind, rest) = payload.split_once(':')?;
        match kind {
            "m" => {
                let (conversation, seq) = rest.rsplit_once(':')?;
                Some(Self::Message {
                    conversation: conversation.parse().ok()?,
                    seq: seq.parse().ok()?,
                })
            }
            "e" => {
                let (conversation, id) = rest.rsplit_once(':')?;
                Some(Self::Event {
                    conversation: if conversation.is_empty() {
                        None
                    } else {
                        Some(conversation.parse().ok()?)
                    },
                    id: id.parse().ok()?,
                })
            }
            "r" => Some(Self::Review {
                conversation: rest.parse().ok()?,
            }),
            _ => None,
        }
    }
}

/// A listening connection to the shared store; see [`Store::changes`].
pub struct ChangeFeed {
    listener: PgListener,
}

impl ChangeFeed {
    /// Waits for the next change. Reconnects by itself after a lost connection, and then
    /// returns [`Change::Reconnected`] first.
    ///
    /// # Errors
    /// When the server cannot be reached again.
    pub async fn next(&mut self) -> Result<Change> {
        loop {
            match self.listener.try_recv().await? {
                None => return Ok(Change::Reconnected),
                Some(notification) => {
                    if let Some(change) = Change::parse(notification.payload()) {
                        return Ok(change);
                    }
                    tracing::debug!(
                        channel = notification.channel(),
                        "a change notification this build does not know; ignored"
                    );
                }
            }
        }
    }
}

impl ChangeFeed {
    /// The id of the server process that serves this feed, as `pg_stat_activity` shows it:
    /// what an operator (or a test) names to end its connection.
    ///
    /// # Errors
    /// When the connection is lost.
    pub async fn server_pid(&mut self) -> Result<i32> {
        Ok(sqlx::query_scalar("SELECT pg_backend_pid()")
            .fetch_one(&mut self.listener)
            .await?)
    }
}

impl Store {
    /// Listens for what other processes write to the shared store. `None` on SQLite, where one
    /// machine's window learns of its own writes from its own events.
    ///
    /// # Errors
    /// When the listening connection cannot be opened.
    pub async fn changes(&self) -> Result<Option<ChangeFeed>> {
        let Backend::Postgres(pool) = self.backend() else {
            return Ok(None);
        };
        let mut listener = PgListener::connect_with(pool).await?;
        // The feed outlives a closing pool only as long as its owner keeps it.
        listener.ignore_pool_close_event(false);
        listener.listen(CHANNEL).await?;
        Ok(Some(ChangeFeed { listener }))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn payloads_parse_and_unknown_ones_are_skipped() {
        let id: ConversationId = "01a21bec-ed8f-739d-a221-121d15dae261".parse().unwrap();
        assert_eq!(
            Change::parse(&format!("m:{id}:42")),
            Some(Change::Message {
                conversation: id,
                seq: 42
            })
        );
        assert_eq!(
            Change::parse(":7").or(Change::parse("e::7")),
            Some(Change::Event {
                conversation: None,
                id: 7
            })
        );
        assert_eq!(
            Change::parse(&format!("r:{id}")),
            Some(Change::Review { conversation: id })
        );
        assert_eq!(Change::parse("x:whatever"), None);
        assert_eq!(Change::parse(&format!("m:{id}:notanumber")), None);
        assert_eq!(Change::parse("m:not-an-id:1"), None);
    }
}
