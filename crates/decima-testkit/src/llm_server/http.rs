//! Just enough HTTP/1.1 over a raw socket: request parsing, response heads, chunked writing, and
//! writes and pauses that notice a client going away.

use std::future::Future;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};

use super::error::LlmServerError;

/// Largest request head accepted, so a confused client cannot grow the buffer forever.
const MAX_HEAD: usize = 64 * 1024;
/// Largest request body accepted.
const MAX_BODY: usize = 64 * 1024 * 1024;
/// Most headers in one request.
const MAX_HEADERS: usize = 96;

/// A request as read off the wire.
#[derive(Debug)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    /// Names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// The client asked to close after this exchange (`connection: close`, or HTTP/1.0).
    pub(crate) wants_close: bool,
}

/// The client went away (EOF or reset on the read half, or a failed write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Gone;

/// One accepted connection, split so that writes can be watched by a concurrent read.
pub(crate) struct Conn {
    rd: OwnedReadHalf,
    wr: OwnedWriteHalf,
    /// Bytes read but not yet consumed (the start of the next request, on keep-alive).
    buf: Vec<u8>,
}

impl Conn {
    pub(crate) fn new(stream: TcpStream) -> Conn {
        // Small SSE chunks must leave at once, or split_every would not produce separate reads.
        let _ = stream.set_nodelay(true);
        let (rd, wr) = stream.into_split();
        Conn {
            rd,
            wr,
            buf: Vec::new(),
        }
    }

    /// Reads once more into the buffer; Ok(0) on EOF.
    async fn fill(&mut self) -> std::io::Result<usize> {
        let mut tmp = [0u8; 8192];
        let n = self.rd.read(&mut tmp).await?;
        self.buf.extend_from_slice(&tmp[..n]);
        Ok(n)
    }

    /// Reads the next request. Ok(None) when the client closed cleanly between requests.
    pub(crate) async fn read_request(&mut self) -> Result<Option<Request>, LlmServerError> {
        let (head_len, mut request, content_length, expects_continue) = loop {
            if !self.buf.is_empty()
                && let Some(parsed) = parse_head(&self.buf)?
            {
                break parsed;
            }
            if self.buf.len() > MAX_HEAD {
                return Err(LlmServerError::BadRequest("request head too large".into()));
            }
            if self.fill().await? == 0 {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(LlmServerError::Truncated)
                };
            }
        };
        self.buf.drain(..head_len);
        if content_length > MAX_BODY {
            return Err(LlmServerError::BadRequest("request body too large".into()));
        }
        if expects_continue && content_length > 0 && self.buf.len() < content_length {
            self.wr.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        }
        while self.buf.len() < content_length {
            if self.fill().await? == 0 {
                return Err(LlmServerError::Truncated);
            }
        }
        request.body = self.buf.drain(..content_length).collect();
        Ok(Some(request))
    }

    /// Writes bytes without watching the read half (for plain, short responses).
    pub(crate) async fn write_plain(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.wr.write_all(bytes).await
    }

    /// Writes bytes while watching the read half for the client going away.
    pub(crate) async fn write_watching(&mut self, bytes: &[u8]) -> Result<(), Gone> {
        let Conn { rd, wr, buf } = self;
        match watch(rd, buf, wr.write_all(bytes)).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) | Err(Gone) => Err(Gone),
        }
    }

    /// Writes one HTTP chunk (skipping empty data, which would end the body).
    pub(crate) async fn write_chunk(&mut self, data: &[u8]) -> Result<(), Gone> {
        if data.is_empty() {
            return Ok(());
        }
        let mut framed = format!("{:x}\r\n", data.len()).into_bytes();
        framed.extend_from_slice(data);
        framed.extend_from_slice(b"\r\n");
        self.write_watching(&framed).await
    }

    /// Sleeps while watching the read half for the client going away.
    pub(crate) async fn sleep_watching(&mut self, d: Duration) -> Result<(), Gone> {
        let Conn { rd, buf, .. } = self;
        watch(rd, buf, tokio::time::sleep(d)).await
    }

    /// Waits, sending nothing, until the client goes away.
    pub(crate) async fn wait_until_gone(&mut self) {
        let Conn { rd, buf, .. } = self;
        let _ = watch(rd, buf, std::future::pending::<()>()).await;
    }

    /// Closes the write half (a FIN), then drops the socket.
    pub(crate) async fn close(mut self) {
        let _ = self.wr.shutdown().await;
    }
}

/// Runs `fut` while reading the socket: bytes read are kept for the next request, EOF or an
/// error means the client is gone and `fut` is dropped.
async fn watch<F: Future>(
    rd: &mut OwnedReadHalf,
    buf: &mut Vec<u8>,
    fut: F,
) -> Result<F::Output, Gone> {
    tokio::pin!(fut);
    let mut tmp = [0u8; 4096];
    loop {
        tokio::select! {
            biased;
            read = rd.read(&mut tmp) => match read {
                Ok(0) | Err(_) => return Err(Gone),
                Ok(n) => buf.extend_from_slice(&tmp[..n]),
            },
            out = &mut fut => return Ok(out),
        }
    }
}

/// Parses a complete request head, or None if more bytes are needed. Returns the head length,
/// the request without body, the content length and whether the client expects 100-continue.
fn parse_head(buf: &[u8]) -> Result<Option<(usize, Request, usize, bool)>, LlmServerError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let head_len = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(LlmServerError::BadRequest(e.to_string())),
    };
    let method = req.method.unwrap_or_default().to_owned();
    let path = req.path.unwrap_or_default().to_owned();
    let http10 = req.version == Some(0);
    let headers: Vec<(String, String)> = req
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_ascii_lowercase(),
                String::from_utf8_lossy(h.value).trim().to_owned(),
            )
        })
        .collect();
    let get = |name: &str| {
        headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    };
    if get("transfer-encoding").is_some() {
        return Err(LlmServerError::BadRequest(
            "chunked request bodies are not supported; send content-length".into(),
        ));
    }
    let content_length = match get("content-length") {
        None => 0,
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| LlmServerError::BadRequest(format!("bad content-length {v:?}")))?,
    };
    let connection = get("connection").map(str::to_ascii_lowercase);
    let wants_close = match connection.as_deref() {
        Some(c) if c.split(',').any(|t| t.trim() == "close") => true,
        Some(c) if c.split(',').any(|t| t.trim() == "keep-alive") => false,
        _ => http10,
    };
    let expects_continue = get("expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue"));
    let request = Request {
        method,
        path,
        headers,
        body: Vec::new(),
        wants_close,
    };
    Ok(Some((head_len, request, content_length, expects_continue)))
}

/// The reason phrase for a status line.
fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Unknown",
    }
}

/// A response head: status line, `date`, then the given headers in order, then the blank line.
pub(crate) fn head(status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
    out.push_str(&format!(
        "date: {}\r\n",
        httpdate::fmt_http_date(std::time::SystemTime::now())
    ));
    for (name, value) in headers {
        out.push_str(name);
        out.push_str(": ");
        out.push_str(value);
        out.push_str("\r\n");
    }
    out.push_str("\r\n");
    out.into_bytes()
}

/// The `connection` header value for a response.
pub(crate) fn connection_value(close: bool) -> String {
    if close { "close" } else { "keep-alive" }.to_owned()
}
