//! The kernel's ephemeral port range: where every outgoing connection on the machine draws its
//! source port from, so a port inside it can be taken by any connection at any moment, and a
//! port outside it never is (unless a process asks for it by number). Read-only.

use std::ops::RangeInclusive;

/// Linux's default range, used when `/proc/sys/net/ipv4/ip_local_port_range` cannot be read.
pub const DEFAULT_EPHEMERAL: RangeInclusive<u16> = 32768..=60999;

/// The kernel's ephemeral range, from `/proc/sys/net/ipv4/ip_local_port_range`.
pub fn ephemeral_range() -> RangeInclusive<u16> {
    std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|text| parse(&text))
        .unwrap_or(DEFAULT_EPHEMERAL)
}

/// The range as people write it: `32768–60999`.
pub fn describe(range: &RangeInclusive<u16>) -> String {
    format!("{}–{}", range.start(), range.end())
}

fn parse(text: &str) -> Option<RangeInclusive<u16>> {
    let mut bounds = text.split_whitespace().map(str::parse::<u16>);
    Some(bounds.next()?.ok()?..=bounds.next()?.ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_kernels_two_numbers() {
        assert_eq!(parse("32768\t60999\n"), Some(32768..=60999));
        assert_eq!(parse("garbage"), None);
        assert_eq!(describe(&(1024..=2048)), "1024–2048");
        let range = ephemeral_range();
        assert!(range.start() <= range.end());
    }
}
