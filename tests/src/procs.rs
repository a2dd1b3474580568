//! The real binaries as child processes, for fault tests: a coordinator
//! that can be killed (`SIGKILL`), paused (`SIGSTOP`) and restarted on the
//! same database and port, workers that can be killed, and the token and
//! run commands of the CLI. Everything listens on 127.0.0.1 only.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::binary;

/// A running `xq-coordinator serve`.
#[derive(Debug)]
pub struct Coordinator {
    child: Child,
    pub addr: SocketAddr,
    /// The web view's address as `serve` printed it (`http://…/` or
    /// `https://…/`), when started with `--http`.
    pub web: Option<String>,
}

impl Coordinator {
    /// Serves `db` on `127.0.0.1:port` (0: any free port) with `extra` flags;
    /// waits for its "listening on" line (and with `--http`, its "web view
    /// on" line). Its log goes to `log`.
    pub fn start(db: &Path, port: u16, extra: &[&str], log: &Path) -> Self {
        let listen = format!("127.0.0.1:{port}");
        let mut child = Command::new(binary("xq-coordinator"))
            .args(["serve", "--db"])
            .arg(db)
            .args(["--listen", &listen])
            .args(extra)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(File::create(log).expect("log file"))
            .spawn()
            .expect("start xq-coordinator");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                for prefix in ["listening on ", "web view on "] {
                    if let Some(at) = line.strip_prefix(prefix) {
                        let _ = tx.send(at.to_owned());
                    }
                }
            }
        });
        let mut next = || match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!(
                    "the coordinator did not start: {}",
                    std::fs::read_to_string(log).unwrap_or_default()
                );
            }
        };
        let addr = next().parse::<SocketAddr>().expect("address");
        let web = extra.contains(&"--http").then(&mut next);
        Coordinator { child, addr, web }
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// The process id, e.g. to read `/proc/PID/status`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Ctrl-C (SIGINT): a graceful shutdown; waits for the exit.
    pub fn interrupt(&mut self) {
        signal(self.child.id(), "-INT");
        let _ = self.child.wait();
    }

    /// `kill -9`, and waits for the process to be gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// `SIGSTOP`: the process keeps its sockets but answers nothing.
    pub fn pause(&self) {
        signal(self.child.id(), "-STOP");
    }

    /// `SIGCONT`.
    pub fn resume(&self) {
        signal(self.child.id(), "-CONT");
    }
}

impl Drop for Coordinator {
    fn drop(&mut self) {
        signal(self.child.id(), "-CONT");
        self.kill();
    }
}

/// `kill -9` to `child` and every process below it, and waits for `child`.
/// The tree is read while it is stopped (`SIGSTOP`), so that nothing is
/// started after it was read.
pub fn kill_tree(child: &mut Child) {
    let mut stopped = vec![child.id()];
    let mut next = 0;
    while let Some(&pid) = stopped.get(next) {
        signal(pid, "-STOP");
        stopped.extend(children(pid));
        next += 1;
    }
    let _ = child.kill();
    let _ = child.wait();
    for &pid in &stopped[1..] {
        signal(pid, "-KILL");
    }
}

/// The processes started by any thread of `pid` (Linux: `/proc/PID/task/*/children`).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .filter_map(|p| p.parse().ok())
                .collect::<Vec<u32>>()
        })
        .collect()
}

fn signal(pid: u32, sig: &str) {
    let _ = Command::new("kill")
        .args([sig, &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// A running `xq-worker work` with the real engine.
#[derive(Debug)]
pub struct Worker {
    child: Child,
    pub log: PathBuf,
}

impl Worker {
    /// Plays for the coordinator at `url` with `token`; logs to `log`.
    pub fn start(url: &str, token: &str, name: &str, log: &Path) -> Self {
        Self::start_with(url, token, name, log, &[], &[])
    }

    /// [`Worker::start`] with `extra` arguments of `xq-worker work` (one
    /// thread unless they say `--threads`; the state directory `LOG.state`,
    /// beside the log, unless they say `--state-dir`) and `env` variables
    /// (e.g. `XDG_CACHE_HOME` for a cache of its own).
    pub fn start_with(
        url: &str,
        token: &str,
        name: &str,
        log: &Path,
        extra: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Self {
        Self::start_exe(&binary("xq-worker"), url, token, name, log, extra, env)
    }

    /// [`Worker::start_with`] running the executable `exe` (e.g. a copy of
    /// the build's worker that may replace itself).
    pub fn start_exe(
        exe: &Path,
        url: &str,
        token: &str,
        name: &str,
        log: &Path,
        extra: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Self {
        let threads: &[&str] = if extra.contains(&"--threads") {
            &[]
        } else {
            &["--threads", "1"]
        };
        let state = log.with_extension("state");
        let state_dir: Vec<&std::ffi::OsStr> = if extra.contains(&"--state-dir") {
            Vec::new()
        } else {
            vec!["--state-dir".as_ref(), state.as_os_str()]
        };
        let child = Command::new(exe)
            .envs(env.iter().copied())
            .args(["work", "--coordinator", url, "--name", name])
            .args(threads)
            .args(state_dir)
            .args(extra)
            .envs(env.iter().copied())
            .env("XQ_TOKEN", token)
            .env("RUST_LOG", "info")
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(File::create(log).expect("log file"))
            .spawn()
            .expect("start xq-worker");
        Worker {
            child,
            log: log.to_owned(),
        }
    }

    /// The worker's log so far.
    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until the log contains `needle` (panics after `limit`).
    pub fn wait_for_log(&self, needle: &str, limit: Duration) {
        let end = std::time::Instant::now() + limit;
        while std::time::Instant::now() < end {
            if self.log_text().contains(needle) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("worker log never showed {needle:?}:\n{}", self.log_text());
    }

    /// Waits until the worker exits, at most `limit`: its exit status, or
    /// `None` while it still runs.
    pub fn exit_within(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let end = std::time::Instant::now() + limit;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            if std::time::Instant::now() >= end {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Waits for the worker to exit by itself; panics with its log after
    /// `limit` (a worker that retries forever).
    pub fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        match self.exit_within(limit) {
            Some(status) => status,
            None => panic!(
                "the worker did not exit within {limit:?}:\n{}",
                self.log_text()
            ),
        }
    }

    /// `kill -9`, and the same to the engines it started: a killed worker
    /// cannot stop them, and some (ElephantEye) never quit at the end of
    /// their input.
    pub fn kill(&mut self) {
        kill_tree(&mut self.child);
    }

    /// `SIGSTOP`: the process keeps its connections but does nothing.
    pub fn pause(&self) {
        signal(self.child.id(), "-STOP");
    }

    /// `SIGCONT`.
    pub fn resume(&self) {
        signal(self.child.id(), "-CONT");
    }

    /// Ctrl-C (SIGINT): hands back the lease in play and exits.
    pub fn interrupt(&mut self) {
        signal(self.child.id(), "-INT");
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        signal(self.child.id(), "-CONT");
        self.kill();
    }
}

/// `xq-coordinator token add --role ROLE NAME --db DB`: the printed token.
pub fn token_add(db: &Path, role: &str, name: &str) -> String {
    let db = db.as_os_str();
    crate::coordinator_cli([
        "token".as_ref(),
        "add".as_ref(),
        "--role".as_ref(),
        role.as_ref(),
        name.as_ref(),
        "--db".as_ref(),
        db,
    ])
    .trim()
    .to_owned()
}

/// `xq-coordinator games …` with the real engine at `nodes` per move and
/// games capped at 120 plies: the new run's id.
pub fn create_games_run(url: &str, token: &str, pairs: u64, batch: u32, nodes: u64) -> u64 {
    create_games_run_keeping(url, token, pairs, batch, nodes, "all")
}

/// [`create_games_run`] with `--keep-games keep`.
pub fn create_games_run_keeping(
    url: &str,
    token: &str,
    pairs: u64,
    batch: u32,
    nodes: u64,
    keep: &str,
) -> u64 {
    let (pairs, batch, nodes) = (pairs.to_string(), batch.to_string(), nodes.to_string());
    crate::coordinator_cli([
        "games",
        "--coordinator",
        url,
        "--token",
        token,
        "--keep-games",
        keep,
        "--pairs",
        &pairs,
        "--batch-pairs",
        &batch,
        "--nodes",
        &nodes,
        "--hash",
        "1",
        "--max-plies",
        "120",
    ])
    .trim()
    .parse()
    .expect("run id")
}

/// A served coordinator (`xq-coordinator serve` with `flags`) on a fresh
/// database in its own folder, with an admin's personal token and a worker
/// token.
#[derive(Debug)]
pub struct Served {
    pub dir: TempDir,
    pub admin: String,
    pub worker: String,
    pub coordinator: Coordinator,
}

impl Served {
    pub fn start(tag: &str, flags: &[&str]) -> Served {
        let dir = TempDir::new(tag);
        let db = dir.join("xq.db");
        let admin = token_add(&db, "personal", "ops");
        let worker = token_add(&db, "worker", "hosts");
        let coordinator = Coordinator::start(&db, 0, flags, &dir.join("coordinator.log"));
        Served {
            dir,
            admin,
            worker,
            coordinator,
        }
    }

    /// An `xq-worker` with a cache of its own (`NAME-cache`), `extra` flags
    /// and `env`, logging to `NAME.log`.
    pub fn worker_with(
        &self,
        name: &str,
        extra: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Worker {
        let cache = self.dir.join(&format!("{name}-cache"));
        let mut env = env.to_vec();
        env.push(("XDG_CACHE_HOME", cache.as_os_str()));
        Worker::start_with(
            &self.coordinator.url(),
            &self.worker,
            name,
            &self.dir.join(&format!("{name}.log")),
            extra,
            &env,
        )
    }

    /// [`Served::worker_with`] without extra variables.
    pub fn worker(&self, name: &str, extra: &[&str]) -> Worker {
        self.worker_with(name, extra, &[])
    }

    /// A run-service client with the admin's token.
    pub fn client(&self) -> crate::cluster::AdminClient {
        crate::cluster::run_client(&self.coordinator.url(), Some(&self.admin))
    }

    /// `xq-coordinator ARGS… --coordinator URL --token ADMIN`: its stdout.
    pub fn cli(&self, args: &[&str]) -> String {
        let url = self.coordinator.url();
        let mut all: Vec<&str> = args.to_vec();
        all.extend(["--coordinator", &url, "--token", &self.admin]);
        crate::coordinator_cli(all)
    }

    /// Registers the executable at `path` as `name` on the database file, as
    /// an operator does (`engine add`, which benches it).
    pub fn engine_add(&self, name: &str, path: &Path) {
        let db = self.dir.join("xq.db");
        crate::coordinator_cli([
            "engine".as_ref(),
            "add".as_ref(),
            name.as_ref(),
            path.as_os_str(),
            "--db".as_ref(),
            db.as_os_str(),
        ]);
    }

    /// The first column of the first row of `sql` on the database file.
    pub fn query(&self, sql: &str) -> i64 {
        let conn = rusqlite::Connection::open_with_flags(
            self.dir.join("xq.db"),
            rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
        )
        .expect("open the database");
        conn.query_row(sql, [], |r| r.get(0)).expect("query")
    }
}

/// A fresh folder under the system temp dir, removed on drop.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("xq-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    pub fn join(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alive(pid: u32) -> bool {
        // A killed process is a zombie until its parent (here init) reaps it.
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
            stat.rsplit(')')
                .next()
                .is_some_and(|rest| !rest.trim_start().starts_with('Z'))
        })
    }

    #[test]
    fn killing_a_tree_kills_the_grandchildren_too() {
        // The shell starts a sleep that would outlive it, and says its pid.
        let mut child = Command::new("sh")
            .args(["-c", "sleep 300 & echo $!; wait"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let grandchild: u32 = line.trim().parse().unwrap();
        assert!(alive(grandchild));
        kill_tree(&mut child);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while alive(grandchild) {
            assert!(
                std::time::Instant::now() < deadline,
                "sleep {grandchild} outlived its shell"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
