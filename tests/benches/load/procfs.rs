//! What the bench reads of a process from /proc (Linux), and the one limit
//! it raises on itself.

use std::time::Duration;

use anyhow::{Context, bail};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};

/// CPU time (user + system) process `pid` has used so far: fields 14 and 15
/// of `/proc/PID/stat`, in clock ticks.
pub fn cpu_time(pid: u32) -> anyhow::Result<Duration> {
    cpu_time_at(&format!("/proc/{pid}/stat"))
}

/// Fields 14 and 15 of the `stat` file at `path` (a process's or a thread's).
fn cpu_time_at(path: &str) -> anyhow::Result<Duration> {
    let stat = std::fs::read_to_string(path).with_context(|| format!("cannot read {path}"))?;
    // The command name (field 2) is parenthesised and may hold spaces: the
    // fields counted here start after its closing parenthesis, at field 3.
    let after = stat
        .rfind(')')
        .map(|i| &stat[i + 1..])
        .with_context(|| format!("{path} has no command name"))?;
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize| -> anyhow::Result<u64> {
        fields
            .get(n - 3)
            .and_then(|f| f.parse().ok())
            .with_context(|| format!("{path} has no field {n}"))
    };
    let ticks = field(14)? + field(15)?;
    let per_second = rustix::param::clock_ticks_per_second();
    Ok(Duration::from_secs_f64(ticks as f64 / per_second as f64))
}

/// A process's resident memory, in KiB.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// Resident now (`VmRSS`).
    pub rss_kib: u64,
    /// The most it was ever resident (`VmHWM`).
    pub peak_kib: u64,
}

/// `VmRSS` and `VmHWM` of process `pid`, from `/proc/PID/status`.
pub fn memory(pid: u32) -> anyhow::Result<Memory> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).with_context(|| format!("cannot read {path}"))?;
    let kib = |key: &str| -> anyhow::Result<u64> {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .with_context(|| format!("{path} has no {key} line in kB"))
    };
    Ok(Memory {
        rss_kib: kib("VmRSS:")?,
        peak_kib: kib("VmHWM:")?,
    })
}

/// Raises this process's soft limit on open files to at least `needed`, up
/// to the hard limit; the limit now in force.
pub fn raise_open_file_limit(needed: u64) -> anyhow::Result<u64> {
    let limit = getrlimit(Resource::Nofile);
    let current = limit.current.unwrap_or(u64::MAX);
    if current >= needed {
        return Ok(current);
    }
    let hard = limit.maximum.unwrap_or(u64::MAX);
    if hard < needed {
        bail!(
            "{needed} open files are needed and the hard limit is {hard}: \
             raise it (`ulimit -Hn {needed}` as root) or share connections (XQ_LOAD_CONNECTIONS)"
        );
    }
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(needed),
            maximum: limit.maximum,
        },
    )
    .with_context(|| format!("cannot raise the open-file limit from {current} to {needed}"))?;
    Ok(needed)
}

/// One thread's CPU time and the time it waited for a CPU while runnable.
#[derive(Debug, Clone)]
pub struct ThreadTimes {
    pub tid: u32,
    /// The thread's name (`comm`).
    pub name: String,
    /// User + system time (`/proc/PID/task/TID/stat`, fields 14 and 15).
    pub cpu: Duration,
    /// Time runnable but waiting on a run queue (`schedstat`'s second field).
    pub waited: Duration,
}

/// [`ThreadTimes`] of every thread of process `pid`; threads that end while
/// they are read are left out.
pub fn threads(pid: u32) -> anyhow::Result<Vec<ThreadTimes>> {
    let dir = format!("/proc/{pid}/task");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&dir).with_context(|| format!("cannot list {dir}"))? {
        let Ok(tid) = entry?.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let task = format!("{dir}/{tid}");
        let (Ok(name), Ok(cpu), Ok(sched)) = (
            std::fs::read_to_string(format!("{task}/comm")),
            cpu_time_at(&format!("{task}/stat")),
            std::fs::read_to_string(format!("{task}/schedstat")),
        ) else {
            continue;
        };
        let waited_ns: u64 = sched
            .split_whitespace()
            .nth(1)
            .and_then(|f| f.parse().ok())
            .with_context(|| format!("{task}/schedstat has no run-queue time"))?;
        found.push(ThreadTimes {
            tid,
            name: name.trim().to_owned(),
            cpu,
            waited: Duration::from_nanos(waited_ns),
        });
    }
    Ok(found)
}
