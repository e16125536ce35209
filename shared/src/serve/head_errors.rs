//! Problem-details bodies for the answers hyper writes on its own.
//!
//! A request head hyper cannot parse (a malformed request line or header, a head over
//! [`MAX_HEAD_BYTES`](super::MAX_HEAD_BYTES) or over 100 fields, an over-long URI) never reaches
//! the router: hyper writes `400`, `431` or `414` with an empty body and closes the connection,
//! and offers no hook to change that answer. So the connection's writer recognises exactly that
//! answer, a head-only response with no `Content-Type` whose only fields are the ones hyper puts
//! there (`content-length: 0`, `date`, `connection: close`), and writes a problem-details answer in its place.
//! Every response the router makes has a `Content-Type`, so none of them can match.

use crate::problem::Problem;
use axum::http::StatusCode;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// A connection whose writer swaps hyper's empty automatic answers for problem details.
pub(super) struct ProblemAnswers<T> {
    inner: T,
    /// The replacement being written, how much of it is out, and how many of hyper's bytes it
    /// stands for (reported to hyper once all of it is written).
    pending: Option<(Vec<u8>, usize, usize)>,
}

impl<T> ProblemAnswers<T> {
    pub(super) fn new(inner: T) -> Self {
        Self {
            inner,
            pending: None,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for ProblemAnswers<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for ProblemAnswers<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        let (bytes, written, stands_for) = match this.pending.as_mut() {
            Some(pending) => pending,
            None => {
                let Some((head_len, status)) = automatic_answer(buf) else {
                    return Pin::new(&mut this.inner).poll_write(cx, buf);
                };
                let answer = problem_answer(status, &buf[..head_len]);
                this.pending.insert((answer, 0, head_len))
            }
        };
        while *written < bytes.len() {
            let n = ready!(Pin::new(&mut this.inner).poll_write(cx, &bytes[*written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            *written += n;
        }
        let stands_for = (*stands_for).min(buf.len());
        this.pending = None;
        Poll::Ready(Ok(stands_for))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        // hyper's queued writes put a response head in a slice of its own.
        let first = bufs.iter().find(|b| !b.is_empty());
        match first {
            Some(first) if self.pending.is_some() || automatic_answer(first).is_some() => {
                self.poll_write(cx, first)
            }
            _ => Pin::new(&mut self.inner).poll_write_vectored(cx, bufs),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The length of hyper's automatic answer at the start of `buf`, and its status, if that is
/// what `buf` starts with.
fn automatic_answer(buf: &[u8]) -> Option<(usize, StatusCode)> {
    let rest = buf
        .strip_prefix(b"HTTP/1.1 ")
        .or_else(|| buf.strip_prefix(b"HTTP/1.0 "))?;
    let status = match rest.get(..3)? {
        b"400" => StatusCode::BAD_REQUEST,
        b"414" => StatusCode::URI_TOO_LONG,
        b"431" => StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        _ => return None,
    };
    let head_len = buf.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = std::str::from_utf8(&buf[..head_len]).ok()?;
    let mut empty = false;
    for field in head.trim_end().split("\r\n").skip(1) {
        let (name, value) = field.split_once(':')?;
        match (name.to_ascii_lowercase().as_str(), value.trim()) {
            ("content-length", "0") => empty = true,
            ("date", _) | ("connection", "close") => {}
            _ => return None,
        }
    }
    empty.then_some((head_len, status))
}

/// The problem-details answer for `status`, keeping the `date` of hyper's own `head`.
fn problem_answer(status: StatusCode, head: &[u8]) -> Vec<u8> {
    let problem = match status {
        StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE => Problem::new(
            status,
            "header_fields_too_large",
            "Request header fields too large",
            format!(
                "the request head is over {} KiB or has over 100 fields; send fewer or smaller headers",
                super::MAX_HEAD_BYTES / 1024
            ),
        ),
        StatusCode::URI_TOO_LONG => Problem::new(
            status,
            "uri_too_long",
            "URI too long",
            "the request target is too long; send large input in a body",
        ),
        _ => Problem::new(
            status,
            "malformed_request",
            "Malformed request",
            "the request line or a header is not valid HTTP/1.1",
        ),
    };
    metrics::counter!("http_unparsable_requests_total", "status" => status.as_str().to_owned())
        .increment(1);
    let body = serde_json::to_vec(&problem).unwrap_or_default();
    let date = std::str::from_utf8(head)
        .ok()
        .and_then(|head| {
            head.split("\r\n")
                .find(|field| field.to_ascii_lowercase().starts_with("date:"))
        })
        .map(|field| format!("{field}\r\n"))
        .unwrap_or_default();
    let mut answer = format!(
        "HTTP/1.1 {} {}\r\ncontent-type: application/problem+json\r\ncontent-length: {}\r\n\
         x-content-type-options: nosniff\r\nconnection: close\r\n{date}\r\n",
        status.as_str(),
        status.canonical_reason().unwrap_or(""),
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(&body);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYPER_431: &[u8] =
        b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n\
        content-length: 0\r\ndate: Tue, 01 Jul 2025 10:00:00 GMT\r\n\r\n";

    #[test]
    fn recognises_only_hypers_own_empty_answers() {
        assert_eq!(
            automatic_answer(HYPER_431),
            Some((HYPER_431.len(), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE))
        );
        let bad = b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n";
        assert_eq!(
            automatic_answer(bad).map(|a| a.1),
            Some(StatusCode::BAD_REQUEST)
        );
        // The router's own answers carry a Content-Type (and a body).
        let ours = b"HTTP/1.1 400 Bad Request\r\ncontent-type: application/problem+json\r\n\
            content-length: 0\r\n\r\n";
        assert_eq!(automatic_answer(ours), None);
        assert_eq!(
            automatic_answer(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"),
            None
        );
        assert_eq!(
            automatic_answer(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n"),
            None
        );
        assert_eq!(automatic_answer(b"{\"HTTP/1.1 400\"}"), None);
    }

    #[test]
    fn the_replacement_is_a_problem_with_hypers_date() {
        let answer = String::from_utf8(problem_answer(
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            HYPER_431,
        ))
        .expect("text");
        let (head, body) = answer.split_once("\r\n\r\n").expect("head and body");
        assert!(head.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        assert!(head.contains("content-type: application/problem+json"));
        assert!(head.contains("date: Tue, 01 Jul 2025 10:00:00 GMT"));
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let json: serde_json::Value = serde_json::from_str(body).expect("json");
        assert_eq!(json["status"], 431);
        assert_eq!(json["code"], "header_fields_too_large");
    }
}
