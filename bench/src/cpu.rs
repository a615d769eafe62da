//! What a stretch of the benchmark cost the machine: the CPU time of the
//! whole process (gateway, load generators and receiver alike) and the
//! bytes it wrote to storage, read from `/proc/self` on Linux. Divided by
//! the work done, they give a cost per event that does not move with the
//! VM's speed the way a rate does: on the 2-core benchmark machine the raw
//! signed POST ceiling switches between about 80k/s and 110k/s from one
//! measurement to the next, while the CPU each POST costs (17.6 or 24 µs)
//! and each pipeline event costs move together.

use std::time::Duration;

/// The process's CPU time and storage writes at one moment; `None` where
/// `/proc/self` does not tell them.
#[derive(Debug, Clone, Copy)]
pub struct Usage {
    cpu: Duration,
    written: u64,
}

impl Usage {
    /// The process's usage now.
    pub fn now() -> Option<Usage> {
        Some(Usage {
            cpu: process_cpu()?,
            written: written_bytes()?,
        })
    }

    /// What was used from `start` (taken with [`Usage::now`]) until now,
    /// per unit of `work` done: CPU time and bytes written.
    pub fn since(start: Option<Usage>, work: u64) -> Option<(Duration, f64)> {
        let (start, now) = (start?, Usage::now()?);
        let work = work.max(1);
        Some((
            now.cpu.checked_sub(start.cpu)? / u32::try_from(work).ok()?,
            now.written.saturating_sub(start.written) as f64 / work as f64,
        ))
    }
}

/// User plus system CPU time of every thread of the process, from fields
/// 14 and 15 of `/proc/self/stat` (in clock ticks, which Linux always
/// reports at 100 per second there).
fn process_cpu() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces; fields count from after it.
    let rest = stat.get(stat.rfind(')')? + 2..)?;
    let mut fields = rest.split(' ').skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some(Duration::from_millis((utime + stime) * 10))
}

/// Bytes the process caused to be written to storage (`write_bytes` of
/// `/proc/self/io`).
fn written_bytes() -> Option<u64> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("write_bytes:"))?
        .trim()
        .parse()
        .ok()
}
