//! Newline-delimited JSON framing (Ollama's native streams): a body split into its lines, each
//! carried as the `data` of an SSE [`Event`], so the transport's timeouts, error mapping and
//! decoders work on one item type whichever framing a protocol uses.

use std::collections::VecDeque;
use std::pin::Pin;

use bytes::Bytes;
use eventsource_stream::{Event, EventStreamError};
use futures_util::{Stream, StreamExt, stream};

/// The lines of `body`, without their `\n` (or `\r\n`). A line may span any number of chunks
/// and a chunk hold any number of lines; blank lines are skipped; a last line without its
/// newline is still a line. A line that is not UTF-8 is an error, as is a failed read, and
/// either ends the lines.
pub(crate) fn lines<S, E>(body: S) -> impl Stream<Item = Result<Event, EventStreamError<E>>>
where
    S: Stream<Item = Result<Bytes, E>>,
{
    let state = Lines {
        body: Box::pin(body),
        buf: Vec::new(),
        scanned: 0,
        ready: VecDeque::new(),
        ended: false,
    };
    stream::unfold(state, |mut state| async move {
        loop {
            if let Some(line) = state.ready.pop_front() {
                let item = String::from_utf8(line)
                    .map(|data| Event {
                        data,
                        ..Event::default()
                    })
                    .map_err(EventStreamError::Utf8);
                if item.is_err() {
                    state.ended = true;
                    state.ready.clear();
                }
                return Some((item, state));
            }
            if state.ended {
                return None;
            }
            match state.body.next().await {
                Some(Ok(chunk)) => state.push(&chunk),
                Some(Err(e)) => {
                    state.ended = true;
                    return Some((Err(EventStreamError::Transport(e)), state));
                }
                None => {
                    state.ended = true;
                    let rest = std::mem::take(&mut state.buf);
                    state.keep(rest);
                }
            }
        }
    })
}

/// The splitter's state between reads.
struct Lines<S> {
    body: Pin<Box<S>>,
    /// Bytes of the line not yet complete.
    buf: Vec<u8>,
    /// How much of `buf` is known to hold no newline, so each byte is searched once.
    scanned: usize,
    /// Complete lines not yet handed out.
    ready: VecDeque<Vec<u8>>,
    ended: bool,
}

impl<S> Lines<S> {
    fn push(&mut self, chunk: &[u8]) {
        self.buf.extend_from_slice(chunk);
        while let Some(at) = self.buf[self.scanned..].iter().position(|b| *b == b'\n') {
            let end = self.scanned + at;
            let rest = self.buf.split_off(end + 1);
            let mut line = std::mem::replace(&mut self.buf, rest);
            line.truncate(end);
            self.scanned = 0;
            self.keep(line);
        }
        self.scanned = self.buf.len();
    }

    /// Queues a line unless it is blank.
    fn keep(&mut self, mut line: Vec<u8>) {
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        if !line.iter().all(u8::is_ascii_whitespace) {
            self.ready.push_back(line);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn split(chunks: &[&[u8]]) -> Vec<Result<String, String>> {
        let body = stream::iter(
            chunks
                .iter()
                .map(|c| Ok::<_, std::io::Error>(Bytes::copy_from_slice(c)))
                .collect::<Vec<_>>(),
        );
        lines(body)
            .map(|item| item.map(|e| e.data).map_err(|e| e.to_string()))
            .collect()
            .await
    }

    #[tokio::test]
    async fn lines_split_anywhere_come_out_whole() {
        let body = "{\"a\":\"é\"}\r\n\n  \n{\"b\":2}\n{\"c\":3}".as_bytes();
        let want = vec![
            Ok("{\"a\":\"é\"}".to_owned()),
            Ok("{\"b\":2}".to_owned()),
            Ok("{\"c\":3}".to_owned()),
        ];
        assert_eq!(split(&[body]).await, want);
        // Every split into two chunks, including inside the two-byte é.
        for at in 0..=body.len() {
            assert_eq!(
                split(&[&body[..at], &body[at..]]).await,
                want,
                "split at {at}"
            );
        }
        // One byte per chunk.
        let bytes: Vec<&[u8]> = body.chunks(1).collect();
        assert_eq!(split(&bytes).await, want);
    }

    #[tokio::test]
    async fn a_line_that_is_not_utf8_is_an_error_and_the_last() {
        let out = split(&[b"{\"a\":1}\n\xff\xfe\n{\"b\":2}\n"]).await;
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[1].as_ref().is_err_and(|e| e.contains("UTF")), "{out:?}");
    }

    #[tokio::test]
    async fn an_empty_body_has_no_lines() {
        assert!(split(&[]).await.is_empty());
        assert!(split(&[b"\n\n"]).await.is_empty());
    }
}
