//! A small HTTP/1.1 GET client over one [`TcpStream`], for the proxy's daemon stream and the
//! `/status` probe (so neither maps a general HTTP client's code); [`read_response`] reads any
//! HTTP/1.1 response off a borrowed connection too. Garbage is refused with an error sentence,
//! never a panic. It owns no timeout: every read is bounded by its caller. A leaf: it imports no
//! other room, and it must not know what it fetches (MCP, `/status`).

use std::net::SocketAddr;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The longest response head read before the answer is called garbled.
const MAX_HEAD: usize = 16 * 1024;
/// The longest chunk-size line (with its extensions) or trailer section taken.
const MAX_CHUNK_META: usize = 4 * 1024;
/// How much is read from the connection at a time.
const READ_SIZE: usize = 8 * 1024;

/// What the connection is for after the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Connection {
    /// A one-shot request: `connection: close` is sent.
    Close,
    /// A long response (a stream): nothing is said, HTTP/1.1 keeps it open.
    Open,
}

/// A response whose head has been read off `S` (the connection, owned or borrowed); its body is
/// read with [`Response::chunk`], [`Response::body`] or [`Response::finish`].
/// The body is framed by `content-length`, by `transfer-encoding: chunked` (decoded
/// incrementally: the daemon's SSE stream is chunked) or by the connection's end.
pub struct Response<S = TcpStream> {
    /// The status code.
    pub status: u16,
    /// Whether the head said `connection: close`.
    closes: bool,
    stream: S,
    /// Bytes read from the connection, not yet decoded.
    pending: Vec<u8>,
    decoder: BodyDecoder,
}

/// Connects to `addr` and sends `GET path`; returns once the response's head is read.
pub async fn get(addr: SocketAddr, path: &str, connection: Connection) -> Result<Response, String> {
    let mut stream = TcpStream::connect(addr)
        .await
        .map_err(|err| format!("no connection could be made: {err}"))?;
    let _ = stream.set_nodelay(true);
    let close = match connection {
        Connection::Close => "connection: close\r\n",
        Connection::Open => "",
    };
    let request = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\naccept: */*\r\n{close}\r\n");
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|err| format!("sending the request failed: {err}"))?;
    read_response(stream).await
}

/// Reads a response's head off `stream`, whose request has been written.
pub async fn read_response<S: AsyncRead + Unpin>(mut stream: S) -> Result<Response<S>, String> {
    let mut buffer = Vec::with_capacity(1024);
    let head_end = loop {
        if let Some(at) = find(&buffer, b"\r\n\r\n") {
            break at;
        }
        if buffer.len() > MAX_HEAD {
            return Err("the answer's head was too long".into());
        }
        if read_more(&mut stream, &mut buffer).await? == 0 {
            return Err("the connection closed before an answer came".into());
        }
    };
    if head_end > MAX_HEAD {
        return Err("the answer's head was too long".into());
    }
    let (status, decoder) = read_head(&buffer[..head_end])?;
    let closes = says_close(&buffer[..head_end]);
    let pending = buffer.split_off(head_end + 4);
    Ok(Response {
        status,
        closes,
        stream,
        pending,
        decoder,
    })
}

/// A whole body, and whether its connection may carry another request.
pub struct Finished {
    pub body: Vec<u8>,
    pub reusable: bool,
}

impl<S: AsyncRead + Unpin> Response<S> {
    /// The body's next bytes as they come; `None` once the body is whole. A connection that
    /// ends before its framing says the body is whole is an error.
    pub async fn chunk(&mut self) -> Result<Option<Vec<u8>>, String> {
        loop {
            let mut out = Vec::new();
            let used = self.decoder.decode(&self.pending, &mut out)?;
            self.pending.drain(..used);
            if !out.is_empty() {
                return Ok(Some(out));
            }
            if self.decoder.is_done() {
                return Ok(None);
            }
            if read_more(&mut self.stream, &mut self.pending).await? == 0 {
                self.decoder.finish()?;
                return Ok(None);
            }
        }
    }

    /// The whole body, refused when it grows past `limit` bytes.
    pub async fn body(self, limit: usize) -> Result<Vec<u8>, String> {
        Ok(self.finish(limit).await?.body)
    }

    /// The whole body (refused past `limit` bytes), and whether the connection may carry another
    /// request: not when the head said `connection: close`, the body ran to the connection's
    /// end, or bytes came after it.
    pub async fn finish(mut self, limit: usize) -> Result<Finished, String> {
        let to_end = matches!(self.decoder.framing, Framing::ToEnd);
        let mut body = Vec::new();
        while let Some(bytes) = self.chunk().await? {
            body.extend_from_slice(&bytes);
            if body.len() > limit {
                return Err(format!("the answer's body was longer than {limit} bytes"));
            }
        }
        let reusable = !self.closes && !to_end && self.pending.is_empty();
        Ok(Finished { body, reusable })
    }
}

/// Whether a head (without its final blank line) says `connection: close`.
fn says_close(head: &[u8]) -> bool {
    String::from_utf8_lossy(head)
        .split("\r\n")
        .skip(1)
        .any(|line| {
            line.split_once(':').is_some_and(|(name, value)| {
                name.eq_ignore_ascii_case("connection")
                    && value
                        .split(',')
                        .any(|v| v.trim().eq_ignore_ascii_case("close"))
            })
        })
}

/// Appends what the connection has next; how many bytes (0 at its end).
async fn read_more<S: AsyncRead + Unpin>(
    stream: &mut S,
    into: &mut Vec<u8>,
) -> Result<usize, String> {
    let mut chunk = [0u8; READ_SIZE];
    let n = stream
        .read(&mut chunk)
        .await
        .map_err(|err| format!("reading the answer failed: {err}"))?;
    into.extend_from_slice(&chunk[..n]);
    Ok(n)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The status and the body's framing named by a head (without its final blank line).
fn read_head(head: &[u8]) -> Result<(u16, BodyDecoder), String> {
    let head = std::str::from_utf8(head).map_err(|_| "the answer's head was not text")?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let status = status_line
        .strip_prefix("HTTP/1.")
        .and_then(|rest| rest.split_once(' '))
        .filter(|(minor, _)| minor.len() == 1 && minor.bytes().all(|b| b.is_ascii_digit()))
        .map(|(_, rest)| rest.split(' ').next().unwrap_or_default())
        .filter(|code| code.len() == 3 && code.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|code| code.parse::<u16>().ok())
        .filter(|code| *code >= 100)
        .ok_or_else(|| format!("the answer's status line was garbled: {status_line:?}"))?;
    let mut length: Option<u64> = None;
    let mut chunked = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("the answer's head held a garbled line: {line:?}"));
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            let parsed = value
                .parse::<u64>()
                .map_err(|_| format!("the answer's content-length was garbled: {value:?}"))?;
            if length.is_some_and(|seen| seen != parsed) {
                return Err("the answer named two content-lengths".into());
            }
            length = Some(parsed);
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            let last = value.rsplit(',').next().unwrap_or_default().trim();
            chunked = Some(last.eq_ignore_ascii_case("chunked"));
        }
    }
    let framing = if matches!(status, 100..=199 | 204 | 304) {
        Framing::Length(0)
    } else {
        match (chunked, length) {
            (Some(true), _) => Framing::Chunked(Chunk::Size {
                value: 0,
                digits: 0,
                line: 0,
                extension: false,
            }),
            // A coding that is not chunked runs to the connection's end.
            (Some(false), _) | (None, None) => Framing::ToEnd,
            (None, Some(length)) => Framing::Length(length),
        }
    };
    Ok((status, BodyDecoder { framing }))
}

/// How a body is framed, and how far through it the decoder is.
#[derive(Debug)]
struct BodyDecoder {
    framing: Framing,
}

#[derive(Debug)]
enum Framing {
    /// This many bytes are left.
    Length(u64),
    /// Chunked, in this state.
    Chunked(Chunk),
    /// Everything until the connection's end.
    ToEnd,
}

/// Where a chunked decoder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Chunk {
    /// In a chunk-size line: the size so far, its digits, the line's length, and whether an
    /// extension (`;name=value`, ignored) or trailing whitespace has begun.
    Size {
        value: u64,
        digits: usize,
        line: usize,
        extension: bool,
    },
    /// The size line's CR came; its LF is next. `value` is the chunk's size.
    SizeLf {
        value: u64,
    },
    /// Inside a chunk's data: this many bytes left.
    Data {
        left: u64,
    },
    /// After a chunk's data: its CR, then its LF.
    DataCr,
    DataLf,
    /// After the last chunk: trailer lines until a blank one. `line` is the current line's
    /// length, `total` the section's.
    Trailer {
        line: usize,
        total: usize,
    },
    /// A trailer line's CR came (`blank`: the line was empty, so the body ends at its LF).
    TrailerLf {
        blank: bool,
        total: usize,
    },
    /// The body is whole.
    Done,
}

impl BodyDecoder {
    /// Decodes what it can of `input` into `out`; how many bytes of `input` it used (bytes after
    /// a whole body are left unused).
    fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, String> {
        match &mut self.framing {
            Framing::ToEnd => {
                out.extend_from_slice(input);
                Ok(input.len())
            }
            Framing::Length(left) => {
                let take = input
                    .len()
                    .min(usize::try_from(*left).unwrap_or(usize::MAX));
                out.extend_from_slice(&input[..take]);
                *left -= take as u64;
                Ok(take)
            }
            Framing::Chunked(state) => decode_chunked(state, input, out),
        }
    }

    /// Whether the body is whole.
    fn is_done(&self) -> bool {
        matches!(
            self.framing,
            Framing::Length(0) | Framing::Chunked(Chunk::Done)
        )
    }

    /// The connection ended: fine only when the body runs to its end or is whole.
    fn finish(&self) -> Result<(), String> {
        match self.framing {
            Framing::ToEnd => Ok(()),
            _ if self.is_done() => Ok(()),
            Framing::Length(left) => Err(format!(
                "the connection closed inside the answer's body ({left} bytes short)"
            )),
            Framing::Chunked(_) => {
                Err("the connection closed inside the answer's chunked body".into())
            }
        }
    }
}

/// One step of chunked decoding over `input`; how many bytes it used.
fn decode_chunked(state: &mut Chunk, input: &[u8], out: &mut Vec<u8>) -> Result<usize, String> {
    let garbled = |what: &str| Err(format!("the answer's chunked body was garbled: {what}"));
    let mut at = 0;
    while at < input.len() {
        let byte = input[at];
        match state {
            Chunk::Done => break,
            Chunk::Data { left } => {
                let take = (input.len() - at).min(usize::try_from(*left).unwrap_or(usize::MAX));
                out.extend_from_slice(&input[at..at + take]);
                at += take;
                *left -= take as u64;
                if *left == 0 {
                    *state = Chunk::DataCr;
                }
                continue;
            }
            Chunk::Size {
                value,
                digits,
                line,
                extension,
            } => {
                *line += 1;
                if *line > MAX_CHUNK_META {
                    return garbled("a chunk-size line too long");
                }
                match byte {
                    b'\r' if *digits > 0 => *state = Chunk::SizeLf { value: *value },
                    b'\r' => return garbled("a chunk-size line without a size"),
                    _ if *extension => {}
                    b';' | b' ' | b'\t' if *digits > 0 => *extension = true,
                    _ => {
                        let Some(digit) = (byte as char).to_digit(16) else {
                            return garbled("a chunk size that is not hex");
                        };
                        if *digits >= 15 {
                            return garbled("a chunk size too large");
                        }
                        *value = *value * 16 + u64::from(digit);
                        *digits += 1;
                    }
                }
            }
            Chunk::SizeLf { value } => {
                if byte != b'\n' {
                    return garbled("a chunk-size line not ended by CRLF");
                }
                *state = if *value == 0 {
                    Chunk::Trailer { line: 0, total: 0 }
                } else {
                    Chunk::Data { left: *value }
                };
            }
            Chunk::DataCr => {
                if byte != b'\r' {
                    return garbled("a chunk longer than its size");
                }
                *state = Chunk::DataLf;
            }
            Chunk::DataLf => {
                if byte != b'\n' {
                    return garbled("a chunk not ended by CRLF");
                }
                *state = Chunk::Size {
                    value: 0,
                    digits: 0,
                    line: 0,
                    extension: false,
                };
            }
            Chunk::Trailer { line, total } => {
                *total += 1;
                if *total > MAX_CHUNK_META {
                    return garbled("a trailer too long");
                }
                if byte == b'\r' {
                    *state = Chunk::TrailerLf {
                        blank: *line == 0,
                        total: *total,
                    };
                } else {
                    *line += 1;
                }
            }
            Chunk::TrailerLf { blank, total } => {
                if byte != b'\n' {
                    return garbled("a trailer line not ended by CRLF");
                }
                *state = if *blank {
                    Chunk::Done
                } else {
                    Chunk::Trailer {
                        line: 0,
                        total: *total,
                    }
                };
            }
        }
        at += 1;
    }
    Ok(at)
}

#[cfg(test)]
mod tests {
    use tokio::net::TcpListener;

    use super::*;

    #[tokio::test]
    async fn a_finished_answer_says_whether_its_connection_may_carry_another() {
        async fn finished(raw: &'static [u8]) -> (String, bool) {
            let done = read_response(raw)
                .await
                .unwrap()
                .finish(1024)
                .await
                .unwrap();
            (String::from_utf8(done.body).unwrap(), done.reusable)
        }
        let cases: [(&[u8], &str, bool); 6] = [
            (
                b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n",
                "",
                true,
            ),
            (
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}",
                "{}",
                true,
            ),
            (
                b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
                "{}",
                true,
            ),
            // Controls: a close asked for, a body to the end, a stray byte after the body.
            (
                b"HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\ncontent-length: 2\r\n\r\n{}",
                "{}",
                false,
            ),
            (b"HTTP/1.0 200 OK\r\n\r\n{}", "{}", false),
            (
                b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}x",
                "{}",
                false,
            ),
        ];
        for (raw, body, reusable) in cases {
            assert_eq!(
                finished(raw).await,
                (body.to_string(), reusable),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    /// A chunked body with an extension and a trailer, and what it decodes to.
    const CHUNKED: &[u8] =
        b"5;name=value\r\nhello\r\n1\r\n \r\nA ; ext\r\n0123456789\r\n0\r\nx-trailer: yes\r\n\r\n";
    const DECODED: &[u8] = b"hello 0123456789";

    fn chunked() -> BodyDecoder {
        read_head(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked")
            .unwrap()
            .1
    }

    /// Feeds `parts` one by one, as a connection would hand them over.
    fn decode_parts(decoder: &mut BodyDecoder, parts: &[&[u8]]) -> Result<Vec<u8>, String> {
        let mut pending = Vec::new();
        let mut out = Vec::new();
        for part in parts {
            pending.extend_from_slice(part);
            let used = decoder.decode(&pending, &mut out)?;
            pending.drain(..used);
        }
        Ok(out)
    }

    #[test]
    fn a_chunked_body_decodes_split_at_every_byte_boundary() {
        for split in 0..=CHUNKED.len() {
            let (first, second) = CHUNKED.split_at(split);
            let mut decoder = chunked();
            let out = decode_parts(&mut decoder, &[first, second]).unwrap();
            assert_eq!(out, DECODED, "split at {split}");
            assert!(decoder.is_done(), "split at {split}");
            assert!(decoder.finish().is_ok());
        }
        // Byte by byte, too.
        let mut decoder = chunked();
        let bytes: Vec<&[u8]> = CHUNKED.chunks(1).collect();
        assert_eq!(decode_parts(&mut decoder, &bytes).unwrap(), DECODED);
        assert!(decoder.is_done());
    }

    #[test]
    fn a_chunked_body_cut_short_is_not_whole() {
        // Control for the test above: every strict prefix leaves the body unfinished.
        for cut in 0..CHUNKED.len() {
            let mut decoder = chunked();
            decode_parts(&mut decoder, &[&CHUNKED[..cut]]).unwrap();
            assert!(!decoder.is_done(), "cut at {cut}");
            assert!(decoder.finish().is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn garbled_chunks_are_refused() {
        for bad in [
            &b"zz\r\nhello\r\n"[..],
            b"\r\n",
            b"5\nhello\r\n",
            b"2\r\nhello\r\n",
            b"1\r\nh\n\n",
            b"fffffffffffffffff\r\n",
            b"0\r\nx-trailer: yes\rno",
        ] {
            let mut decoder = chunked();
            assert!(decode_parts(&mut decoder, &[bad]).is_err(), "{bad:?}");
        }
        let mut decoder = chunked();
        let long = vec![b';'; MAX_CHUNK_META + 1];
        assert!(decode_parts(&mut decoder, &[b"1", &long]).is_err());
    }

    #[test]
    fn heads_name_their_framing_and_garbled_ones_are_refused() {
        let (status, decoder) = read_head(b"HTTP/1.1 404 Not Found\r\ncontent-length: 3").unwrap();
        assert_eq!(status, 404);
        assert!(matches!(decoder.framing, Framing::Length(3)));
        let (_, decoder) = read_head(b"HTTP/1.0 200 OK").unwrap();
        assert!(matches!(decoder.framing, Framing::ToEnd));
        let (_, decoder) =
            read_head(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: gzip, chunked")
                .unwrap();
        assert!(matches!(decoder.framing, Framing::Chunked(_)));
        let (_, decoder) = read_head(b"HTTP/1.1 204 No Content").unwrap();
        assert!(decoder.is_done());
        for bad in [
            &b"SSH-2.0-OpenSSH_9.6"[..],
            b"HTTP/1.1 2000 OK",
            b"HTTP/1.1 OK",
            b"HTTP/2 200 OK",
            b"HTTP/1.1 099 Low",
            b"",
            b"HTTP/1.1 200 OK\r\nno colon here",
            b"HTTP/1.1 200 OK\r\ncontent-length: ten",
            b"HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2",
            b"HTTP/1.1 200 OK\r\n\xff: x",
        ] {
            assert!(
                read_head(bad).is_err(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    /// A stand-in server that reads one request, writes `answer` and closes; and the request it
    /// read comes back on the channel.
    async fn server(answer: Vec<u8>) -> (SocketAddr, tokio::sync::oneshot::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel();
        tokio::spawn(async move {
            let (mut stream, _) = listener.accept().await.unwrap();
            let mut seen = Vec::new();
            let mut chunk = [0u8; 1024];
            while !seen.ends_with(b"\r\n\r\n") {
                let n = stream.read(&mut chunk).await.unwrap();
                if n == 0 {
                    return;
                }
                seen.extend_from_slice(&chunk[..n]);
            }
            let _ = tx.send(String::from_utf8_lossy(&seen).into_owned());
            // The answer in two writes, so the body arrives apart from the head.
            let split = answer.len() / 2;
            let _ = stream.write_all(&answer[..split]).await;
            let _ = stream.flush().await;
            let _ = stream.write_all(&answer[split..]).await;
        });
        (addr, rx)
    }

    async fn fetch(answer: &[u8]) -> Result<(u16, Vec<u8>), String> {
        let (addr, _) = server(answer.to_vec()).await;
        let response = get(addr, "/status", Connection::Close).await?;
        let status = response.status;
        Ok((status, response.body(1024).await?))
    }

    #[tokio::test]
    async fn a_get_sends_its_request_and_reads_a_content_length_body() {
        let (addr, request) =
            server(b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nhelloEXTRA".to_vec()).await;
        let response = get(addr, "/status?x=1", Connection::Close).await.unwrap();
        assert_eq!(response.status, 200);
        assert_eq!(response.body(1024).await.unwrap(), b"hello");
        let request = request.await.unwrap();
        assert!(
            request.starts_with("GET /status?x=1 HTTP/1.1\r\n"),
            "{request}"
        );
        assert!(
            request.contains(&format!("\r\nhost: {addr}\r\n")),
            "{request}"
        );
        assert!(request.contains("\r\nconnection: close\r\n"), "{request}");
        // Control: a body shorter than its content-length is an error.
        assert!(
            fetch(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\nhello")
                .await
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_stream_get_says_nothing_about_closing() {
        let (addr, request) =
            server(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n".to_vec()).await;
        let response = get(addr, "/mcp/sse", Connection::Open).await.unwrap();
        assert_eq!(response.body(16).await.unwrap(), b"");
        assert!(!request.await.unwrap().contains("connection:"));
    }

    #[tokio::test]
    async fn a_body_without_framing_runs_to_the_connections_end() {
        let (status, body) = fetch(b"HTTP/1.1 200 OK\r\n\r\nall of it").await.unwrap();
        assert_eq!((status, body.as_slice()), (200, &b"all of it"[..]));
    }

    #[tokio::test]
    async fn a_chunked_body_comes_over_the_connection_and_one_closed_mid_chunk_is_an_error() {
        let mut answer = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n".to_vec();
        answer.extend_from_slice(CHUNKED);
        assert_eq!(fetch(&answer).await.unwrap().1, DECODED);
        let cut = b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nhel";
        let err = fetch(cut).await.unwrap_err();
        assert!(
            err.contains("closed inside the answer's chunked body"),
            "{err}"
        );
        // Chunks come out as they arrive, before the body is whole.
        let (addr, _) =
            server(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n".to_vec())
                .await;
        let mut response = get(addr, "/", Connection::Open).await.unwrap();
        let mut got = Vec::new();
        while got.len() < 3 {
            got.extend(response.chunk().await.unwrap().unwrap());
        }
        assert_eq!(got, b"abc");
        assert!(response.chunk().await.is_err());
    }

    #[tokio::test]
    async fn a_head_too_long_or_garbled_or_missing_is_an_error() {
        let mut long = b"HTTP/1.1 200 OK\r\nx-filler: ".to_vec();
        long.extend(std::iter::repeat_n(b'a', MAX_HEAD));
        long.extend_from_slice(b"\r\n\r\n");
        let err = fetch(&long).await.unwrap_err();
        assert!(err.contains("too long"), "{err}");
        // Control: the same head, short enough, is read.
        assert!(
            fetch(b"HTTP/1.1 200 OK\r\nx-filler: aaaa\r\n\r\n")
                .await
                .is_ok()
        );
        let err = fetch(b"not http at all\r\n\r\n").await.unwrap_err();
        assert!(err.contains("status line"), "{err}");
        let err = fetch(b"HTTP/1.1 200 O").await.unwrap_err();
        assert!(err.contains("before an answer came"), "{err}");
        // A body over the caller's limit is refused.
        let mut big = b"HTTP/1.1 200 OK\r\n\r\n".to_vec();
        big.extend(std::iter::repeat_n(b'a', 2000));
        let err = fetch(&big).await.unwrap_err();
        assert!(err.contains("longer than 1024 bytes"), "{err}");
    }
}
