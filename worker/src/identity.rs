//! Who this worker is to the coordinator: the host name it registers under
//! unless told otherwise ([`host_name`]), and the machine id it keeps
//! across restarts and updates ([`MachineId`]).
//!
//! The machine id is 128 random bits, drawn once and kept as 32 lowercase
//! hex digits in a file of the worker's state directory ([`state_dir`]).
//! Sent at registration, it makes the coordinator give a restarted worker
//! (a reboot, an `--auto-update`, fleet mode started again) the row it had,
//! with its history, instead of a new one. The file is locked while the
//! worker runs (an advisory lock, released when the process ends or
//! re-executes itself): a second worker started on the same machine and
//! state directory finds it taken and uses the next file (`machine-id.2`,
//! `machine-id.3`, …), so each running worker is one row; a restarted
//! worker takes the first free file, which is the one it had.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use xq_proto::machine::{MACHINE_ID_DIGITS, is_machine_id};

/// The file of the first worker in a state directory; the next ones add
/// `.2`, `.3`, ….
const FILE: &str = "machine-id";

/// Workers one state directory holds at once.
const MAX_WORKERS: usize = 64;

/// `$XDG_STATE_HOME/xq-worker`, else `$HOME/.local/state/xq-worker`, else
/// a folder in the system's temporary directory.
pub fn state_dir() -> PathBuf {
    std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/state")))
        .unwrap_or_else(std::env::temp_dir)
        .join("xq-worker")
}

/// This machine's host name as the operating system has it (`uname`'s node
/// name: what `hostname` prints), not the `HOSTNAME` variable a shell may
/// or may not export; `None` when it is empty or not valid UTF-8.
pub fn host_name() -> Option<String> {
    #[cfg(unix)]
    let name = rustix::system::uname()
        .nodename()
        .to_str()
        .ok()
        .map(str::to_owned);
    #[cfg(not(unix))]
    let name = std::env::var("COMPUTERNAME").ok();
    name.map(|n| n.trim().to_owned()).filter(|n| !n.is_empty())
}

/// A machine id, claimed: its file stays locked while this value lives.
#[derive(Debug)]
pub struct MachineId {
    /// 32 lowercase hex digits.
    pub id: String,
    /// The file that keeps it.
    pub path: PathBuf,
    /// Holds the lock.
    _file: File,
}

impl MachineId {
    /// Claims the first machine-id file of `dir` (created if missing) that
    /// no running worker holds: its id, or a new one written to it when it
    /// has none (a new file, or one that is not an id).
    pub fn claim(dir: &Path) -> io::Result<MachineId> {
        std::fs::create_dir_all(dir)?;
        for n in 1..=MAX_WORKERS {
            let path = match n {
                1 => dir.join(FILE),
                n => dir.join(format!("{FILE}.{n}")),
            };
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => continue,
                Err(std::fs::TryLockError::Error(e)) => return Err(e),
            }
            let mut text = String::new();
            file.read_to_string(&mut text)?;
            let id = match text.trim() {
                id if is_machine_id(id) => id.to_owned(),
                _ => {
                    let id = new_id();
                    file.set_len(0)?;
                    file.rewind()?;
                    file.write_all(format!("{id}\n").as_bytes())?;
                    file.sync_all()?;
                    id
                }
            };
            return Ok(MachineId {
                id,
                path,
                _file: file,
            });
        }
        Err(io::Error::other(format!(
            "{MAX_WORKERS} workers hold the machine ids of {} already",
            dir.display()
        )))
    }
}

/// 128 random bits as 32 lowercase hex digits: from the system's random
/// source, else a hash of the time, process and host.
fn new_id() -> String {
    let mut bytes = [0u8; MACHINE_ID_DIGITS / 2];
    let random = File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        use sha2::{Digest, Sha256};
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let seed = format!(
            "{} {} {:?} {:?}",
            now.as_nanos(),
            std::process::id(),
            host_name(),
            std::thread::current().id()
        );
        bytes.copy_from_slice(&Sha256::digest(seed.as_bytes())[..MACHINE_ID_DIGITS / 2]);
    }
    xq_proto::blob::lower_hex(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xq-identity-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn an_id_is_kept_and_a_second_worker_takes_the_next_file() {
        let dir = scratch("keep");
        let first = MachineId::claim(&dir).unwrap();
        assert!(is_machine_id(&first.id), "{}", first.id);
        let second = MachineId::claim(&dir).unwrap();
        assert_ne!(first.id, second.id);
        assert_eq!(second.path, dir.join("machine-id.2"));
        let id = first.id.clone();
        drop(first);
        let again = MachineId::claim(&dir).unwrap();
        assert_eq!(
            (again.id.as_str(), again.path.as_path()),
            (id.as_str(), dir.join(FILE).as_path())
        );
        drop((again, second));
        std::fs::write(dir.join(FILE), "not an id").unwrap();
        let fresh = MachineId::claim(&dir).unwrap();
        assert!(is_machine_id(&fresh.id) && fresh.id != id);
        assert_eq!(
            std::fs::read_to_string(dir.join(FILE)).unwrap().trim(),
            fresh.id
        );
        drop(fresh);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_host_name_is_the_systems() {
        let name = host_name().expect("a host name");
        assert!(!name.is_empty() && name != "xq-worker", "{name}");
        #[cfg(target_os = "linux")]
        if let Ok(proc) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
            assert_eq!(name, proc.trim());
        }
    }
}
