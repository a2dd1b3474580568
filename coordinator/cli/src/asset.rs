//! `xq-coordinator asset add|list`: network files and opening books in the
//! registry, on the database file or at a served coordinator (like
//! `engine`; the rule: [`Place::choose`]).
//!
//! A file is hashed, then stored (on the file) or uploaded (to a
//! coordinator) a chunk at a time, so files of hundreds of MiB never sit in
//! memory. Engine options (`--option EvalFile=asset:NAME`) and `--book
//! asset:SHA256` name what is added here. A PGN file (`.pgn`) is stored as the
//! opening book `book make` makes of it.

use std::path::PathBuf;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use xq_coordinator::book::DEFAULT_BOOK_PLIES;
use xq_coordinator::events::Actor;
use xq_coordinator::store::assets::{self, Asset, NewAsset};
use xq_coordinator::store::{Store, now_ms, users};
use xq_proto::blob::{MAX_BLOB_BYTES, MAX_UPLOAD_BYTES};
use xq_proto::{outln, pb};

use super::registry::Place;
use super::registry::PlaceArgs;

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
            } => {
                let book = PgnBook::make(&file, plies)?;
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
                let place = Place::choose(place.db, &place.remote)?;
                if user.is_some() && matches!(place, Place::Remote(_)) {
                    bail!(
                        "--user works only on the database file; at a coordinator the asset is yours"
                    );
                }
                let file = book.as_ref().map_or(file.clone(), |b| b.0.clone());
                let open = || {
                    std::fs::File::open(&file)
                        .map(std::io::BufReader::new)
                        .with_context(|| format!("cannot read asset {}", file.display()))
                };
                let (sha256, size) = xq_proto::blob::sha256_of_reader(open()?)
                    .with_context(|| format!("cannot read asset {}", file.display()))?;
                let most = match place {
                    Place::File(_) => MAX_BLOB_BYTES,
                    Place::Remote(_) => MAX_UPLOAD_BYTES,
                };
                if size > most {
                    bail!(
                        "asset {} is {size} bytes; the registry takes at most {most}",
                        file.display()
                    );
                }
                let new = NewAsset { name, sha256, size };
                let asset = match place {
                    Place::File(db) => {
                        let source = open()?;
                        let store = Store::open(&db)
                            .with_context(|| format!("cannot open {}", db.display()))?;
                        tokio::runtime::Runtime::new()?
                            .block_on(store.call(move |conn| {
                                let tx = conn.savepoint()?;
                                let owner = users::named_or_admin(&tx, user.as_deref(), now_ms())?;
                                let asset =
                                    assets::add(&tx, &new, source, owner, &Actor::cli(), now_ms())?;
                                tx.commit()?;
                                Ok(asset)
                            }))
                            .with_context(|| format!("cannot add asset {}", file.display()))?
                    }
                    Place::Remote(mut coordinator) => {
                        let what = format!("asset '{}'", new.name);
                        // A name is never overwritten: no upload for one
                        // that names other bytes (the coordinator decides
                        // on the same bytes: they may be yours already).
                        let url = coordinator.url.clone();
                        let taken =
                            coordinator
                                .call(|mut c| async move {
                                    c.list_assets(pb::ListAssetsRequest {}).await
                                })
                                .with_context(|| format!("cannot list the assets of {url}"))?
                                .assets
                                .into_iter()
                                .find(|a| a.name == new.name && a.sha256 != new.sha256);
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
                        if coordinator.upload(&file, &new.sha256, new.size, &what)? {
                            eprintln!("{what}: {} had its bytes already", coordinator.url);
                        }
                        let url = coordinator.url.clone();
                        let request = pb::AddAssetRequest {
                            name: new.name,
                            sha256: new.sha256,
                            size: new.size,
                        };
                        let answer = coordinator
                            .call(|mut c| async move { c.add_asset(request).await })
                            .with_context(|| format!("cannot register {what} at {url}"))?;
                        let asset = answer
                            .asset
                            .context("the coordinator answered without the asset")?;
                        Asset::try_from(asset)?
                    }
                };
                outln!("{} sha256 {} size {}", asset.name, asset.sha256, asset.size)?;
            }
            AssetCommand::List { place } => {
                let found = match Place::choose(place.db, &place.remote)? {
                    Place::File(db) => {
                        let store = Store::open(&db)
                            .with_context(|| format!("cannot open {}", db.display()))?;
                        tokio::runtime::Runtime::new()?
                            .block_on(store.call(|conn| assets::list(conn)))?
                    }
                    Place::Remote(mut coordinator) => {
                        let url = coordinator.url.clone();
                        coordinator
                            .call(|mut c| async move { c.list_assets(pb::ListAssetsRequest {}).await })
                            .with_context(|| format!("cannot list the assets of {url}"))?
                            .assets
                            .into_iter()
                            .map(Asset::try_from)
                            .collect::<Result<_, _>>()?
                    }
                };
                for a in found {
                    outln!(
                        "{}\t{}\t{} bytes\towner {}",
                        a.name,
                        a.sha256,
                        a.size,
                        a.owner.as_deref().unwrap_or("-")
                    )?;
                }
            }
        }
        Ok(())
    }
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
