//! `xq-coordinator asset add|list`: network files and opening books in the
//! registry, on the database file or at a served coordinator (like
//! `engine`; the rule: [`super::registry::Place::choose`]), through the
//! registry service either way.
//!
//! A file is hashed, then uploaded a chunk at a time, so files of hundreds
//! of MiB never sit in memory. Engine options (`--option EvalFile=asset:NAME`) and `--book
//! asset:SHA256` name what is added here. A PGN file (`.pgn`) is stored as the
//! opening book `book make` makes of it.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::book::DEFAULT_BOOK_PLIES;
use xq_coordinator::in_process::Acting;
use xq_coordinator::service::now_ms;
use xq_coordinator::service::registry::{Asset, check_asset_name};
use xq_proto::{outln, pb};

use super::registry::PlaceArgs;
use xq_proto::blob::UploadPurpose;

/// `asset …`.
#[derive(Debug, Args)]
pub struct AssetArgs {
    #[command(subcommand)]
    command: AssetCommand,
}

#[derive(Debug, Subcommand)]
enum AssetCommand {
    /// Stores FILE (a network file, an opening book) by its SHA-256 under a
    /// name; prints the name, SHA-256 and size. At a coordinator the file
    /// is uploaded and the name is yours: nobody registers it again. A PGN
    /// file (`.pgn`) is turned into the opening book `book make` writes, and
    /// that is stored (default name `STEM.epd`).
    Add {
        /// The file.
        file: PathBuf,
        /// Registry name (1 to 128 characters, no whitespace); default: the file's name.
        #[arg(long)]
        name: Option<String>,
        /// For a PGN file: plies each opening is cut after (default 16).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
        plies: Option<u32>,
        #[command(flatten)]
        place: PlaceArgs,
        /// On the database file: the user the asset belongs to (default:
        /// `admin`, made if there is none). At a coordinator it is yours.
        #[arg(long)]
        user: Option<String>,
    },
    /// Lists the registered assets: name, SHA-256, size, owner.
    List {
        #[command(flatten)]
        place: PlaceArgs,
    },
}

impl AssetArgs {
    pub fn run(self) -> anyhow::Result<()> {
        match self.command {
            AssetCommand::Add {
                file,
                name,
                plies,
                place,
                user,
            } => add(&file, name, plies, place, user),
            AssetCommand::List { place } => {
                let coordinator = place.place()?.connect(Acting::Administrator)?;
                let found = coordinator
                    .block_on(coordinator.registry().list_assets(pb::ListAssetsRequest {}))
                    .with_context(|| format!("cannot list the assets of {}", coordinator.url))?
                    .into_inner()
                    .assets;
                for a in found.into_iter().map(Asset::try_from) {
                    let a = a?;
                    outln!(
                        "{}\t{}\t{} bytes\towner {}",
                        a.name,
                        a.sha256,
                        a.size,
                        a.owner.as_deref().unwrap_or("-")
                    )?;
                }
                Ok(())
            }
        }
    }
}

/// `asset add`: hashes the file (or the book made of a PGN file), uploads
/// it unless the name is taken by other bytes, and registers it.
fn add(
    file: &Path,
    name: Option<String>,
    plies: Option<u32>,
    place: PlaceArgs,
    user: Option<String>,
) -> anyhow::Result<()> {
    let book = PgnBook::make(file, plies)?;
    let name = match name {
        Some(n) => n,
        None => default_name(file, book.is_some())?,
    };
    check_asset_name(&name)?;
    let mut coordinator = place.place()?.connect(Acting::For(user))?;
    let file = book.as_ref().map_or(file, |b| b.0.as_path());
    let (sha256, size) = std::fs::File::open(file)
        .map(std::io::BufReader::new)
        .and_then(xq_proto::blob::sha256_of_reader)
        .with_context(|| format!("cannot read asset {}", file.display()))?;
    let what = format!("asset '{name}'");
    // A name is never overwritten: no upload for one that names other
    // bytes (the coordinator decides on the same bytes: they may be yours
    // already).
    let taken = coordinator
        .block_on(coordinator.registry().list_assets(pb::ListAssetsRequest {}))
        .with_context(|| format!("cannot list the assets of {}", coordinator.url))?
        .into_inner()
        .assets
        .into_iter()
        .find(|a| a.name == name && a.sha256 != sha256);
    if let Some(taken) = taken {
        bail!(
            "an asset named '{}' exists already, registered by {} (sha256 {}); \
             names are never overwritten: pick another",
            taken.name,
            if taken.owner.is_empty() {
                "nobody"
            } else {
                &taken.owner
            },
            taken.sha256
        );
    }
    if coordinator.upload(
        file,
        &sha256,
        size,
        UploadPurpose::Asset(name.clone()),
        &what,
    )? {
        eprintln!("{what}: {} had its bytes already", coordinator.url);
    }
    let request = pb::AddAssetRequest { name, sha256, size };
    let asset = coordinator
        .block_on(coordinator.registry().add_asset(request))
        .with_context(|| format!("cannot register {what} in {}", coordinator.url))?
        .into_inner()
        .asset
        .context("the coordinator answered without the asset")?;
    let asset = Asset::try_from(asset)?;
    outln!("{} sha256 {} size {}", asset.name, asset.sha256, asset.size)?;
    Ok(())
}

/// The name an asset gets without `--name`: the file's, or for the book of
/// a PGN file `STEM.epd`.
fn default_name(file: &Path, book: bool) -> anyhow::Result<String> {
    let name = if book {
        file.file_stem()
            .map(|n| format!("{}.epd", n.to_string_lossy()))
    } else {
        file.file_name().map(|n| n.to_string_lossy().into_owned())
    };
    name.with_context(|| format!("{} has no file name; give --name", file.display()))
}

/// The opening book `book make` makes of a PGN file, written to a temporary
/// file (removed when dropped) so that it is stored or uploaded as any file.
struct PgnBook(PathBuf);

impl PgnBook {
    /// The book of `file` cut after `plies` (default [`DEFAULT_BOOK_PLIES`])
    /// when it is a PGN file; `None` for any other file (which takes no
    /// `--plies`).
    fn make(file: &std::path::Path, plies: Option<u32>) -> anyhow::Result<Option<PgnBook>> {
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
        let path =
            std::env::temp_dir().join(format!("xq-book-{}-{}.epd", std::process::id(), now_ms()));
        std::fs::write(&path, book.text())
            .with_context(|| format!("cannot write the book to {}", path.display()))?;
        Ok(Some(PgnBook(path)))
    }
}

impl Drop for PgnBook {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
