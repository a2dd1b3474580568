//! `xq-coordinator asset add|list`: network files and opening books in the
//! registry, on the database file (like `engine`).
//!
//! A file is hashed, then stored a chunk at a time (see
//! `xq_coordinator::store::blobs`), so files of hundreds of MiB never sit in
//! memory. Engine options (`--option EvalFile=asset:NAME`) and `--book
//! asset:SHA256` name what is added here. A PGN file (`.pgn`) is stored as the
//! opening book `book make` makes of it.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::book::DEFAULT_BOOK_PLIES;
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
    /// name; prints the name, SHA-256 and size. A PGN file (`.pgn`) is turned
    /// into the opening book `book make` writes, and that is stored.
    Add {
        /// The file.
        file: PathBuf,
        /// Registry name (1 to 128 characters, no whitespace); default: the
        /// file's name, for a PGN file its stem with `.epd`.
        #[arg(long)]
        name: Option<String>,
        /// For a PGN file: plies each opening is cut after (default 16).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
        plies: Option<u32>,
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

/// The opening book to store for a PGN file (see `book make`), or `None` for
/// any other file, which is stored as it is.
fn pgn_book(file: &std::path::Path, plies: Option<u32>) -> anyhow::Result<Option<String>> {
    if !crate::book::is_pgn(file) {
        if plies.is_some() {
            bail!(
                "--plies is for a PGN file (.pgn); {} is stored as it is",
                file.display()
            );
        }
        return Ok(None);
    }
    let plies = plies.unwrap_or(DEFAULT_BOOK_PLIES) as usize;
    let book = crate::book::from_pgn_file(file, plies, &xq_engine::rules::RuleSet::STANDARD)?;
    Ok(Some(book.text()))
}

impl AssetArgs {
    pub fn run(self) -> anyhow::Result<()> {
        let runtime = tokio::runtime::Runtime::new()?;
        match self.command {
            AssetCommand::Add {
                file,
                name,
                db,
                plies,
            } => {
                let book = pgn_book(&file, plies)?;
                let name = match name {
                    Some(n) => n,
                    None if book.is_some() => file
                        .file_stem()
                        .map(|n| format!("{}.epd", n.to_string_lossy()))
                        .with_context(|| {
                            format!("{} has no file name; give --name", file.display())
                        })?,
                    None => file
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .with_context(|| {
                            format!("{} has no file name; give --name", file.display())
                        })?,
                };
                assets::check_name(&name)?;
                let open = || -> anyhow::Result<Box<dyn Read + Send>> {
                    if let Some(text) = &book {
                        return Ok(Box::new(std::io::Cursor::new(text.clone().into_bytes())));
                    }
                    let f = std::fs::File::open(&file)
                        .with_context(|| format!("cannot read asset {}", file.display()))?;
                    Ok(Box::new(std::io::BufReader::new(f)))
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
