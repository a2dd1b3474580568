//! `make-test-release --version V --out FILE`: this worker as another
//! version, for trying the self-update (`worker-release add FILE --require`,
//! then a worker started with `--auto-update`) without a rebuild.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};
use clap::Args;
use xq_proto::atomic_file::AtomicFile;
use xq_proto::outln;

use crate::version::{TARGET, patched, version};

/// Arguments of `xq-worker make-test-release`.
#[derive(Debug, Args)]
pub struct TestReleaseArgs {
    /// The version the copy reports, dot-separated numbers (e.g. 0.1.1);
    /// the coordinator requires the newest release it was given with
    /// `--require`.
    #[arg(long, value_name = "V")]
    version: String,
    /// Where to write the copy (replaced whole; mode 0755).
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
}

impl TestReleaseArgs {
    /// Writes a copy of this executable whose version slot says
    /// `--version`, checks that the copy reports it, and prints its
    /// version, target and SHA-256.
    pub fn run(self) -> anyhow::Result<()> {
        let exe = std::env::current_exe().context("cannot find this executable")?;
        let bytes =
            std::fs::read(&exe).with_context(|| format!("cannot read {}", exe.display()))?;
        let copy = patched(&bytes, version(), &self.version)?;
        let out = &self.out;
        let write = || -> std::io::Result<()> {
            let mut file = AtomicFile::create(out)?;
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(0o755))?;
            }
            std::io::Write::write_all(&mut file, &copy)?;
            file.commit()
        };
        write().with_context(|| format!("cannot write {}", out.display()))?;
        let runnable =
            std::path::absolute(out).with_context(|| format!("cannot find {}", out.display()))?;
        let said = Command::new(&runnable)
            .arg("--version")
            .output()
            .with_context(|| format!("cannot run {} --version", out.display()))?;
        let text = String::from_utf8_lossy(&said.stdout);
        let expected = format!("{} {}", xq_proto::worker_version::PROGRAM, self.version);
        if text.lines().next().map(str::trim) != Some(expected.as_str()) {
            bail!(
                "{} --version printed {:?}, not {expected:?}",
                out.display(),
                text.trim()
            );
        }
        outln!(
            "{}: xq-worker {} (from {}), target {TARGET}, sha256 {}",
            out.display(),
            self.version,
            version(),
            xq_proto::blob::sha256_hex(&copy)
        )?;
        Ok(())
    }
}
