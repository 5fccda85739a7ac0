//! A server-sent-events frame parser for the daemon's stream: bytes in any chunking, frames out.
//! Lines end in LF, CRLF or CR; `event:` names a frame, `data:` lines accumulate (joined by LF);
//! a blank line ends the frame; comment lines (`:`) are keep-alives. Pure: no I/O.

/// One complete event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The event name (`message` when none was given).
    pub event: String,
    /// The data lines joined by LF.
    pub data: String,
}

/// Incremental parser; feed it chunks as they arrive.
#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of a line not yet ended.
    partial: Vec<u8>,
    /// The last byte fed was a CR, so a leading LF in the next chunk belongs to it.
    after_cr: bool,
    event: Option<String>,
    data: Option<String>,
}

impl SseParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Consumes a chunk; returns every frame it completes, in order.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Frame> {
        let mut frames = Vec::new();
        for &byte in chunk {
            if self.after_cr {
                self.after_cr = false;
                if byte == b'\n' {
                    continue;
                }
            }
            match byte {
                b'\n' => self.end_line(&mut frames),
                b'\r' => {
                    self.after_cr = true;
                    self.end_line(&mut frames);
                }
                other => self.partial.push(other),
            }
        }
        frames
    }

    fn end_line(&mut self, frames: &mut Vec<Frame>) {
        let line = String::from_utf8_lossy(&self.partial).into_owned();
        self.partial.clear();
        if line.is_empty() {
            let event = self.event.take();
            if let Some(data) = self.data.take() {
                frames.push(Frame {
                    event: event
                        .filter(|e| !e.is_empty())
                        .unwrap_or_else(|| "message".into()),
                    data,
                });
            }
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => match &mut self.data {
                Some(data) => {
                    data.push('\n');
                    data.push_str(value);
                }
                None => self.data = Some(value.to_string()),
            },
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const STREAM: &str = "event: endpoint\ndata: /mcp/message?sessionId=abc\n\n:\n\nevent: message\r\ndata: {\"a\":1}\r\n\r\ndata: one\ndata: two\n\nevent: empty\ndata:\n\n";

    fn expected() -> Vec<Frame> {
        vec![
            Frame {
                event: "endpoint".into(),
                data: "/mcp/message?sessionId=abc".into(),
            },
            Frame {
                event: "message".into(),
                data: "{\"a\":1}".into(),
            },
            Frame {
                event: "message".into(),
                data: "one\ntwo".into(),
            },
            Frame {
                event: "empty".into(),
                data: String::new(),
            },
        ]
    }

    #[test]
    fn frames_come_out_whole_with_keepalives_skipped() {
        assert_eq!(SseParser::new().feed(STREAM.as_bytes()), expected());
    }

    #[test]
    fn an_empty_data_frame_is_still_a_frame_so_it_can_be_refused() {
        let frames = SseParser::new().feed(b"event: endpoint\ndata:\n\n");
        assert_eq!(
            frames,
            vec![Frame {
                event: "endpoint".into(),
                data: String::new()
            }]
        );
    }

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_frames(cuts in proptest::collection::vec(0usize..STREAM.len(), 0..12)) {
            let bytes = STREAM.as_bytes();
            let mut cuts = cuts;
            cuts.sort_unstable();
            cuts.dedup();
            let mut parser = SseParser::new();
            let mut frames = Vec::new();
            let mut start = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                frames.extend(parser.feed(&bytes[start..cut]));
                start = cut;
            }
            prop_assert_eq!(frames, expected());
        }
    }
}
