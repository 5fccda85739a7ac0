//! A process's resident memory as Linux reports it (`VmRSS` in `/proc/<pid>/status`), in kB,
//! for the scenarios that bound it (S7, S11, P3, P4). It reads; it must not judge.

/// The resident memory of `pid` in kB (VmRSS).
pub fn resident_kb(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
