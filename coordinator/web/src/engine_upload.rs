//! `POST /engines/upload`: a signed-in user uploads an engine executable
//! from the engines page and registers it under a name that is then theirs.
//!
//! The form is `multipart/form-data`: its text fields (`csrf`, `name`,
//! `protocol`, `signature`, `coords`, `options`) come first and the `file`
//! last, so the CSRF token and the user's right to register the name
//! (`Registry::check_upload`) are checked before a byte of the file is
//! read. A browser does not send a file's SHA-256, and the store
//! keys a blob by it from its first chunk, so the file is first written to
//! a temporary file (hashed as it arrives, at most
//! [`MAX_UPLOAD_BYTES`], never whole in memory), then fed a chunk at a time
//! to the same incremental writer as `UploadBlob`
//! ([`xq_coordinator::registry::uploads`]), and registered as `AddEngine`
//! registers. The coordinator never runs it: the stated bench signature is
//! what workers check on first use. This route alone takes a body of up to
//! [`MAX_UPLOAD_BYTES`] (plus the form's other fields).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::extract::{Multipart, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use xq_coordinator::events::Actor;
use xq_coordinator::service::registry::{Begun, NewEngine, UploadError};
use xq_proto::blob::{BLOB_CHUNK_BYTES, BlobHeader, MAX_UPLOAD_BYTES, UploadPurpose, lower_hex};
use xq_proto::{Coords, EngineRef, Protocol};

use crate::Web;
use crate::error::{Page, WebError};
use crate::pages::show_engines;
use crate::session::Visitor;

/// The largest body `POST /engines/upload` takes: the file and the form's
/// text fields.
pub const MAX_BODY_BYTES: usize = MAX_UPLOAD_BYTES as usize + (64 << 10);

/// Longest text field of the form, in bytes.
const MAX_FIELD_BYTES: usize = 16 << 10;

/// `POST /engines/upload`: stores and registers the engine; back to the
/// engines page (303), or the page again with why it was refused.
pub async fn upload(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    headers: HeaderMap,
    form: Multipart,
) -> Page {
    let user = visitor.signed_in()?.clone();
    match receive(&web, &visitor, &headers, form, user.id, &user.name).await {
        Ok(name) => {
            tracing::info!(engine = %name, user = %user.name, "engine uploaded from the web view");
            Ok(Redirect::to("/engines").into_response())
        }
        // A form from another site gets no page; a refused upload, the
        // page again with why.
        Err(e) if e.status() == StatusCode::FORBIDDEN || e.status().is_server_error() => Err(e),
        Err(e) => show_engines(&web, &visitor, e.status(), Some(e.to_string())).await,
    }
}

impl From<UploadError> for WebError {
    fn from(e: UploadError) -> Self {
        match e {
            UploadError::InProgress(_) => WebError::Refused(tonic::Status::aborted(e.to_string())),
            UploadError::OverQuota { .. } => {
                WebError::Refused(tonic::Status::resource_exhausted(e.to_string()))
            }
            UploadError::Refused(invalid) => WebError::BadRequest(invalid.to_string()),
            UploadError::Store(e) => e.into(),
        }
    }
}

fn broken(e: axum::extract::multipart::MultipartError) -> WebError {
    WebError::BadRequest(format!("the upload broke off: {}", e.body_text()))
}

/// Reads the form, stores the file and registers the engine for the user
/// `owner` named `who`; the engine's name.
async fn receive(
    web: &Web,
    visitor: &Visitor,
    headers: &HeaderMap,
    mut form: Multipart,
    owner: u64,
    who: &str,
) -> Result<String, WebError> {
    let mut fields = BTreeMap::<String, String>::new();
    let spooled = loop {
        let Some(mut field) = form.next_field().await.map_err(broken)? else {
            visitor.check_form(headers, fields.get("csrf").map(String::as_str))?;
            return Err(WebError::BadRequest("the form has no file".to_owned()));
        };
        let name = field.name().unwrap_or_default().to_owned();
        if name == "file" {
            visitor.check_form(headers, fields.get("csrf").map(String::as_str))?;
            let engine = stated(&fields)?;
            let purpose = UploadPurpose::Engine(engine.name.clone());
            web.registry()
                .check_upload(&Actor::user(owner, who), purpose)
                .await?;
            break (engine, spool(&mut field).await?);
        }
        let mut text = Vec::new();
        while let Some(chunk) = field.chunk().await.map_err(broken)? {
            if text.len() + chunk.len() > MAX_FIELD_BYTES {
                return Err(WebError::BadRequest(format!(
                    "the field {} is longer than {MAX_FIELD_BYTES} bytes",
                    xq_proto::quote(&name)
                )));
            }
            text.extend_from_slice(&chunk);
        }
        let text = String::from_utf8(text).map_err(|_| {
            WebError::BadRequest(format!("the field {} is not UTF-8", xq_proto::quote(&name)))
        })?;
        fields.insert(name, text);
    };
    if form.next_field().await.map_err(broken)?.is_some() {
        return Err(WebError::BadRequest(
            "the file must be the form's last field".to_owned(),
        ));
    }
    let (mut engine, file) = spooled;
    engine.sha256 = file.sha256.clone();
    engine.size = file.size;
    engine
        .validate()
        .map_err(|e| WebError::BadRequest(e.to_string()))?;
    let actor = Actor::user(owner, who);
    store(web, &file, &engine.name, &actor).await?;
    let name = engine.name.clone();
    web.registry()
        .add_engine(
            actor,
            NewEngine {
                engine,
                spins: Vec::new(),
                variants: None,
            },
        )
        .await?;
    Ok(name)
}

/// The engine the text fields state (without its SHA-256 and size yet).
fn stated(fields: &BTreeMap<String, String>) -> Result<EngineRef, WebError> {
    let get = |k: &str| fields.get(k).map_or("", |v| v.trim());
    let bad = |m: String| WebError::BadRequest(m);
    let name = get("name").to_owned();
    if name.is_empty() || name.chars().count() > 64 {
        return Err(bad(format!(
            "the engine's name {} must be 1 to 64 characters",
            xq_proto::quote(&name)
        )));
    }
    let protocol = match get("protocol") {
        "" | "uci" => Protocol::Uci,
        "ucci" => Protocol::Ucci,
        other => {
            return Err(bad(format!(
                "the protocol is uci or ucci, not {}",
                xq_proto::quote(other)
            )));
        }
    };
    let signature = match get("signature") {
        "" => None,
        text => match text.parse::<u64>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                return Err(bad(format!(
                    "the bench signature is a node count of at least 1, not {}",
                    xq_proto::quote(text)
                )));
            }
        },
    };
    let coords = match get("coords") {
        "" => None,
        text => Some(text.parse::<Coords>().map_err(|e| bad(e.to_string()))?),
    };
    let mut options = BTreeMap::new();
    for line in get("options")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        let Some((k, v)) = line.split_once('=').filter(|(k, _)| !k.trim().is_empty()) else {
            return Err(bad(format!(
                "an option is NAME=VALUE, not {}",
                xq_proto::quote(line)
            )));
        };
        options.insert(k.trim().to_owned(), v.trim().to_owned());
    }
    Ok(EngineRef {
        name,
        sha256: String::new(),
        size: 0,
        signature: signature.map(xq_proto::Signature::Bench),
        protocol,
        options,
        coords,
        binaries: Vec::new(),
        source: None,
    })
}

/// The uploaded file, written to a temporary file (removed on drop).
struct Spooled {
    path: PathBuf,
    sha256: String,
    size: u64,
}

impl Drop for Spooled {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Writes the file field to a temporary file, hashing it; at most
/// [`MAX_UPLOAD_BYTES`].
async fn spool(field: &mut axum::extract::multipart::Field<'_>) -> Result<Spooled, WebError> {
    static SPOOLS: AtomicU64 = AtomicU64::new(0);
    let path = std::env::temp_dir().join(format!(
        "xq-web-upload-{}-{}",
        std::process::id(),
        SPOOLS.fetch_add(1, Ordering::Relaxed)
    ));
    let io = |e: std::io::Error| WebError::Render(format!("cannot spool the upload: {e}"));
    let mut file = tokio::fs::File::create(&path).await.map_err(io)?;
    let mut spooled = Spooled {
        path,
        sha256: String::new(),
        size: 0,
    };
    let mut hasher = Sha256::new();
    while let Some(chunk) = field.chunk().await.map_err(broken)? {
        spooled.size += chunk.len() as u64;
        if spooled.size > MAX_UPLOAD_BYTES {
            return Err(WebError::BadRequest(format!(
                "the file is more than an upload takes ({MAX_UPLOAD_BYTES} bytes)"
            )));
        }
        hasher.update(&chunk);
        file.write_all(&chunk).await.map_err(io)?;
    }
    file.flush().await.map_err(io)?;
    spooled.sha256 = lower_hex(&hasher.finalize());
    Ok(spooled)
}

/// Stores the spooled file, an executable of the engine `name`, through the
/// incremental blob writer, a chunk at a time, for `actor`'s user (nothing
/// to do if it is stored already).
async fn store(web: &Web, file: &Spooled, name: &str, actor: &Actor) -> Result<(), WebError> {
    let header = BlobHeader {
        sha256: file.sha256.clone(),
        size: file.size,
        purpose: UploadPurpose::Engine(name.to_owned()),
    };
    let mut writer = match web.registry().begin_upload(actor, header).await? {
        Begun::Stored { .. } => return Ok(()),
        Begun::Writing(writer) => writer,
    };
    let io = |e: std::io::Error| WebError::Render(format!("cannot read the spooled upload: {e}"));
    let mut source = match tokio::fs::File::open(&file.path).await {
        Ok(source) => source,
        Err(e) => {
            writer.discard().await;
            return Err(io(e));
        }
    };
    let mut buf = vec![0u8; BLOB_CHUNK_BYTES];
    loop {
        let n = match source.read(&mut buf).await {
            Ok(n) => n,
            Err(e) => {
                writer.discard().await;
                return Err(io(e));
            }
        };
        if n == 0 {
            break;
        }
        writer.write(&buf[..n]).await?;
    }
    writer.finish().await?;
    Ok(())
}
