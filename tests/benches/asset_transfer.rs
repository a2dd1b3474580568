//! Transfer of a large asset (a network file's size) from a coordinator to a
//! worker over loopback, and the memory both sides use meanwhile.
//!
//! ```sh
//! cargo bench -p xq-tests --bench asset_transfer                  # 100 MiB
//! XQ_ASSET_MIB=400 cargo bench -p xq-tests --bench asset_transfer
//! ```
//!
//! 1. Writes an incompressible file of `XQ_ASSET_MIB` MiB (default 100).
//! 2. `xq-coordinator asset add` stores it (under `/usr/bin/time`, which
//!    gives that process's peak RSS).
//! 3. `xq-coordinator serve` serves the database in its own process.
//! 4. This process, as the worker, downloads it into an empty blob cache with
//!    the worker's own [`xq_worker::client::download_blob`] (verified as it is
//!    written) and checks the copy.
//!
//! Prints the times, MiB/s, and the peak RSS (`VmHWM`) of the coordinator
//! (before and after the download) and of this process. A side that held the
//! whole file would peak above its size.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use rand::{RngCore, SeedableRng};
use xq_proto::blob::BLOB_CHUNK_BYTES;
use xq_tests::cluster::worker_client;
use xq_worker::blob_cache;

fn env<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// `VmHWM` (peak resident set) of process `pid` (`self` for this one), in KiB.
fn peak_rss_kib(pid: &str) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM line")
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Kills the server when the bench ends, however it ends.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn main() -> anyhow::Result<()> {
    let size_mib: u64 = env("XQ_ASSET_MIB", 100);
    let dir = std::env::temp_dir().join(format!("xq-asset-transfer-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let result = bench(&dir, size_mib);
    let _ = std::fs::remove_dir_all(&dir);
    result
}

fn bench(dir: &std::path::Path, size_mib: u64) -> anyhow::Result<()> {
    let coordinator = xq_tests::binary("xq-coordinator");
    let db = dir.join("xq.db");
    let dbs = db.to_str().context("temp path")?;

    let file = dir.join("network.bin");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&file)?);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
    let mut chunk = vec![0u8; BLOB_CHUNK_BYTES];
    for _ in 0..size_mib {
        rng.fill_bytes(&mut chunk);
        out.write_all(&chunk)?;
    }
    out.flush()?;
    drop(out);
    let size = size_mib << 20;

    let started = Instant::now();
    let added = Command::new("/usr/bin/time")
        .args(["-f", "peak-rss-kib %M"])
        .arg(&coordinator)
        .args([
            "asset",
            "add",
            file.to_str().context("temp path")?,
            "--db",
            dbs,
        ])
        .output()
        .context("run /usr/bin/time xq-coordinator asset add")?;
    let add_secs = started.elapsed().as_secs_f64();
    let stderr = String::from_utf8_lossy(&added.stderr);
    ensure!(added.status.success(), "asset add failed: {stderr}");
    let stdout = String::from_utf8_lossy(&added.stdout);
    let sha256 = stdout
        .split_whitespace()
        .skip_while(|w| *w != "sha256")
        .nth(1)
        .context("asset add printed no sha256")?
        .to_owned();
    let add_rss: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("peak-rss-kib "))
        .and_then(|v| v.trim().parse().ok())
        .context("no peak RSS from /usr/bin/time")?;

    let token = Command::new(&coordinator)
        .args(["token", "add", "--db", dbs, "--role", "worker", "bench"])
        .output()?;
    ensure!(token.status.success(), "token add failed");
    let token = String::from_utf8(token.stdout)?.trim().to_owned();

    let port = std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port();
    let listen = format!("127.0.0.1:{port}");
    let server = Child(
        Command::new(&coordinator)
            .args(["serve", "--db", dbs, "--listen", &listen])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?,
    );
    let pid = server.0.id().to_string();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(&listen).is_err() {
        if Instant::now() > deadline {
            bail!("the coordinator did not listen on {listen}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let cache = dir.join("cache");
    let url = format!("http://{listen}");
    let server_before = peak_rss_kib(&pid)?;
    let self_before = peak_rss_kib("self")?;
    let started = Instant::now();
    let path = runtime.block_on(async {
        let mut rpc = worker_client(&url, Some(&token));
        xq_worker::client::download_blob(&mut rpc, &cache, &sha256, "the bench asset", false).await
    });
    let transfer = started.elapsed().as_secs_f64();
    let path = path.map_err(anyhow::Error::msg)?;
    let server_after = peak_rss_kib(&pid)?;
    let self_after = peak_rss_kib("self")?;
    ensure!(std::fs::metadata(&path)?.len() == size, "the copy's size");
    ensure!(blob_cache::has(&cache, &sha256), "the copy is verified");

    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!("asset: {size_mib} MiB ({size} bytes), sha256 {sha256}");
    println!(
        "asset add: {add_secs:.2} s, peak RSS {:.1} MiB",
        mib(add_rss)
    );
    println!(
        "transfer to the worker's cache (downloaded, hashed, synced, renamed): {transfer:.2} s, {:.0} MiB/s",
        size_mib as f64 / transfer
    );
    println!(
        "coordinator peak RSS: {:.1} MiB before the download, {:.1} MiB after",
        mib(server_before),
        mib(server_after)
    );
    println!(
        "worker (this process) peak RSS: {:.1} MiB before the download, {:.1} MiB after",
        mib(self_before),
        mib(self_after)
    );
    println!("load average: {}", load.trim());
    drop(server);
    Ok(())
}
