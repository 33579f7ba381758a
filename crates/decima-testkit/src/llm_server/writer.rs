//! Writing replies on the socket: whole JSON responses, scripted statuses, and streamed bodies
//! that follow a plan of writes and pauses while watching for the client going away.

use std::time::Duration;

use super::http::{self, Conn, Gone};
use super::sse::{Ending, Op, Plan};

/// How writing a response ended.
pub(super) enum Outcome {
    /// Fully written; the connection may be reused.
    Complete,
    /// The server closed the connection on purpose (a cut), or a plain write failed.
    Closed,
    /// The client went away while the reply was streaming or stalled.
    ClientGone,
}

pub(super) async fn write_plain(conn: &mut Conn, bytes: Vec<u8>) -> Outcome {
    match conn.write_plain(&bytes).await {
        Ok(()) => Outcome::Complete,
        Err(_) => Outcome::Closed,
    }
}

/// A complete JSON response with content-length.
pub(super) fn json_response(
    status: u16,
    body: &str,
    extra: &[(String, String)],
    close: bool,
    request_id: Option<&(String, String)>,
) -> Vec<u8> {
    let mut headers = vec![
        ("content-type".to_owned(), "application/json".to_owned()),
        ("content-length".to_owned(), body.len().to_string()),
        ("connection".to_owned(), http::connection_value(close)),
    ];
    headers.extend(request_id.cloned());
    headers.extend(extra.iter().cloned());
    let mut out = http::head(status, &headers);
    out.extend_from_slice(body.as_bytes());
    out
}

/// A scripted status response: the script's headers, plus defaults it did not set.
pub(super) fn status_response(
    status: u16,
    extra: &[(String, String)],
    body: &str,
    close: bool,
    request_id: &(String, String),
) -> Vec<u8> {
    let has = |name: &str| extra.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let mut headers = Vec::new();
    if !has("content-type") {
        headers.push(("content-type".to_owned(), "application/json".to_owned()));
    }
    if !has("content-length") {
        headers.push(("content-length".to_owned(), body.len().to_string()));
    }
    if !has("connection") {
        headers.push(("connection".to_owned(), http::connection_value(close)));
    }
    headers.push(request_id.clone());
    headers.extend(extra.iter().cloned());
    let mut out = http::head(status, &headers);
    out.extend_from_slice(body.as_bytes());
    out
}

/// Writes a 200 event-stream response following `plan`, watching for the client going away.
pub(super) async fn write_stream(
    conn: &mut Conn,
    content_type: &str,
    close: bool,
    request_id: &(String, String),
    plan: Plan,
) -> Outcome {
    let headers = vec![
        ("content-type".to_owned(), content_type.to_owned()),
        ("transfer-encoding".to_owned(), "chunked".to_owned()),
        ("connection".to_owned(), http::connection_value(close)),
        ("cache-control".to_owned(), "no-cache".to_owned()),
        request_id.clone(),
    ];
    write_stream_with(conn, &headers, plan).await
}

/// Writes a 200 chunked response with exactly `headers` (after `date`), following `plan`.
pub(super) async fn write_stream_with(
    conn: &mut Conn,
    headers: &[(String, String)],
    plan: Plan,
) -> Outcome {
    match write_body(conn, &http::head(200, headers), plan).await {
        Ok(outcome) => outcome,
        Err(Gone) => Outcome::ClientGone,
    }
}

async fn write_body(conn: &mut Conn, head: &[u8], plan: Plan) -> Result<Outcome, Gone> {
    conn.write_watching(head).await?;
    let mut pending = Vec::new();
    for op in plan.ops {
        match op {
            Op::Data(bytes) => match plan.split_every {
                Some(_) => pending.extend_from_slice(&bytes),
                None => conn.write_chunk(&bytes).await?,
            },
            Op::Pause(delay) => {
                flush_split(conn, &mut pending, plan.split_every).await?;
                conn.sleep_watching(delay).await?;
            }
        }
    }
    flush_split(conn, &mut pending, plan.split_every).await?;
    match plan.ending {
        Ending::Complete => {
            conn.write_watching(b"0\r\n\r\n").await?;
            Ok(Outcome::Complete)
        }
        Ending::Cut => Ok(Outcome::Closed),
        Ending::Stall => {
            conn.wait_until_gone().await;
            Err(Gone)
        }
    }
}

/// Writes the bytes gathered since the last pause in chunks of at most `split` bytes, pausing
/// ~1 ms between them so each arrives in its own read.
async fn flush_split(
    conn: &mut Conn,
    pending: &mut Vec<u8>,
    split: Option<usize>,
) -> Result<(), Gone> {
    let Some(n) = split else {
        return Ok(());
    };
    for (i, piece) in pending.chunks(n).enumerate() {
        if i > 0 {
            conn.sleep_watching(Duration::from_millis(1)).await?;
        }
        conn.write_chunk(piece).await?;
    }
    pending.clear();
    Ok(())
}
