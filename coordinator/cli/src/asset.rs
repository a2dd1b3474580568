//! `xq-coordinator asset add|list`: network files and opening books in the
//! registry, on the database file (like `engine`).
//!
//! A file is hashed, then stored a chunk at a time (see
//! `xq_coordinator::store::blobs`), so files of hundreds of MiB never sit in
//! memory. Engine options (`--option EvalFile=asset:NAME`) and `--book
//! asset:SHA256` name what is added here.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::store::assets;
use xq_coordinator::store::{Store, now_ms};
use xq_proto::blob::MAX_BLOB_BYTES;
use xq_proto::outln;

/// `asset …`.
#[derive(Debug, Args)]
pub struct AssetArgs {
    #[command(subcommand)]
    command: AssetCommand,
}

#[derive(Debug, Subcommand)]
enum AssetCommand {
    /// Stores FILE (a network file, an opening book) by its SHA-256 under a
    /// name; prints the name, SHA-256 and size.
    Add {
        /// The file.
        file: PathBuf,
        /// Registry name (1 to 128 characters, no whitespace); default: the file's name.
        #[arg(long)]
        name: Option<String>,
        /// The coordinator's database.
        #[arg(long, default_value = "xq.db")]
        db: PathBuf,
    },
    /// Lists the registered assets.
    List {
        #[arg(long, default_value = "xq.db")]
        db: PathBuf,
    },
}

impl AssetArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let runtime = tokio::runtime::Runtime::new()?;
        match self.command {
            AssetCommand::Add { file, name, db } => {
                let name = match name {
                    Some(n) => n,
                    None => file
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .with_context(|| {
                            format!("{} has no file name; give --name", file.display())
                        })?,
                };
                assets::check_name(&name)?;
                let open = || {
                    std::fs::File::open(&file)
                        .map(std::io::BufReader::new)
                        .with_context(|| format!("cannot read asset {}", file.display()))
                };
                let (sha256, size) = xq_proto::blob::sha256_of_reader(open()?)
                    .with_context(|| format!("cannot read asset {}", file.display()))?;
                if size > MAX_BLOB_BYTES {
                    bail!(
                        "asset {} is {size} bytes; the registry takes at most {MAX_BLOB_BYTES}",
                        file.display()
                    );
                }
                let source = open()?;
                let store =
                    Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
                let asset = runtime
                    .block_on(store.call(move |conn| {
                        assets::add(conn, &name, &sha256, size, source, now_ms())
                    }))
                    .with_context(|| format!("cannot add asset {}", file.display()))?;
                outln!("{} sha256 {} size {}", asset.name, asset.sha256, asset.size)?;
            }
            AssetCommand::List { db } => {
                let store =
                    Store::open(&db).with_context(|| format!("cannot open {}", db.display()))?;
                for a in runtime.block_on(store.call(|conn| assets::list(conn)))? {
                    outln!("{}\t{}\t{} bytes", a.name, a.sha256, a.size)?;
                }
            }
        }
        Ok(())
    }
}
