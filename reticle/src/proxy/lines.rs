//! Splits the agent's stdin into lines, bounded: a line longer than the limit is dropped whole
//! (never truncated and never forwarded) and reported by its size, and the rest of that line is
//! swallowed up to its newline, across chunks, in O(1) memory. Pure: no I/O.

/// What the splitter produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A complete line, without its newline (and without a trailing CR).
    Text(Vec<u8>),
    /// A line over the limit, dropped: how many bytes it had.
    Oversize(usize),
}

/// The bounded splitter.
#[derive(Debug)]
pub struct LineSplitter {
    max: usize,
    partial: Vec<u8>,
    /// `Some(bytes seen)` while swallowing an oversize line.
    discarding: Option<usize>,
}

impl LineSplitter {
    pub fn new(max: usize) -> Self {
        Self {
            max,
            partial: Vec::new(),
            discarding: None,
        }
    }

    /// Consumes a chunk; returns every line it completes.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<Line> {
        let mut out = Vec::new();
        let mut rest = chunk;
        while !rest.is_empty() {
            let newline = rest.iter().position(|b| *b == b'\n');
            let (piece, ended) = match newline {
                Some(at) => (&rest[..at], true),
                None => (rest, false),
            };
            rest = match newline {
                Some(at) => &rest[at + 1..],
                None => &[],
            };
            if let Some(seen) = &mut self.discarding {
                *seen += piece.len();
            } else if self.partial.len() + piece.len() > self.max {
                self.discarding = Some(self.partial.len() + piece.len());
                self.partial = Vec::new();
            } else {
                self.partial.extend_from_slice(piece);
            }
            if ended {
                if let Some(seen) = self.discarding.take() {
                    out.push(Line::Oversize(seen));
                } else {
                    let mut line = std::mem::take(&mut self.partial);
                    if line.last() == Some(&b'\r') {
                        line.pop();
                    }
                    out.push(Line::Text(line));
                }
            }
        }
        out
    }

    /// At end of input: the last line if it had no newline.
    pub fn finish(&mut self) -> Option<Line> {
        if let Some(seen) = self.discarding.take() {
            return Some(Line::Oversize(seen));
        }
        (!self.partial.is_empty()).then(|| Line::Text(std::mem::take(&mut self.partial)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_split_and_an_oversize_one_is_dropped_whole_between_good_neighbours() {
        let mut s = LineSplitter::new(8);
        let mut out = s.feed(b"ab\r\ncd\n0123456789");
        out.extend(s.feed(b"0123456789"));
        out.extend(s.feed(b"xx\nok\nlast"));
        out.extend(s.finish());
        assert_eq!(
            out,
            vec![
                Line::Text(b"ab".to_vec()),
                Line::Text(b"cd".to_vec()),
                Line::Oversize(22),
                Line::Text(b"ok".to_vec()),
                Line::Text(b"last".to_vec()),
            ]
        );
    }

    #[test]
    fn a_line_exactly_at_the_limit_passes() {
        let mut s = LineSplitter::new(4);
        assert_eq!(s.feed(b"abcd\n"), vec![Line::Text(b"abcd".to_vec())]);
        assert_eq!(s.feed(b"abcde\n"), vec![Line::Oversize(5)]);
    }
}
