//! Which way bytes flow through a proxy: `upstream` (client to server) or `downstream` (server
//! to client).
//!
//! It owns the enum, its wire spelling and its parse error. The same two words name the
//! directions of a stdio link (agent to server is upstream). It must not know about sockets.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The direction a toxic applies to. Toxiproxy's default for a new toxic is `Downstream`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Direction {
    /// Client to server: the request side.
    Upstream,
    /// Server to client: the response side.
    #[default]
    Downstream,
}

impl Direction {
    /// Both directions, in index order.
    pub const ALL: [Direction; 2] = [Direction::Upstream, Direction::Downstream];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Upstream => "upstream",
            Direction::Downstream => "downstream",
        }
    }

    /// A dense index (upstream 0, downstream 1) for per-direction arrays.
    pub fn index(self) -> usize {
        match self {
            Direction::Upstream => 0,
            Direction::Downstream => 1,
        }
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A stream name that is neither `upstream` nor `downstream`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid direction `{0}`: can be either upstream or downstream")]
pub struct ParseDirectionError(pub String);

impl FromStr for Direction {
    type Err = ParseDirectionError;

    /// Case-insensitive, as Toxiproxy's parser is.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.eq_ignore_ascii_case("upstream") {
            Ok(Direction::Upstream)
        } else if s.eq_ignore_ascii_case("downstream") {
            Ok(Direction::Downstream)
        } else {
            Err(ParseDirectionError(s.to_owned()))
        }
    }
}

impl Serialize for Direction {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Direction {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_spellings_in_any_case_and_refuses_the_rest() {
        assert_eq!("upstream".parse(), Ok(Direction::Upstream));
        assert_eq!("DownStream".parse(), Ok(Direction::Downstream));
        assert!("".parse::<Direction>().is_err());
        assert!("sideways".parse::<Direction>().is_err());
    }

    #[test]
    fn display_round_trips() {
        for d in Direction::ALL {
            assert_eq!(d.to_string().parse(), Ok(d));
        }
        assert_eq!(Direction::default(), Direction::Downstream);
    }
}
