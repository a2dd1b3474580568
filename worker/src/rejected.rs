//! Results the coordinator refused, kept on disk: a refused result is never
//! retried (resending it would be refused again), but its games are the
//! evidence of what went wrong, so the worker writes them to a directory
//! and logs the path with the coordinator's message.
//!
//! Each refusal is two files named for the lease and the time:
//! `lease-<ID>-<UNIX_MS>.pb`, the `SubmitResultRequest` exactly as it was
//! sent (protobuf; [`load`] reads it back), and `lease-<ID>-<UNIX_MS>.txt`,
//! the coordinator's address, the status code and message.

use std::io;
use std::path::{Path, PathBuf};

use prost::Message;
use xq_proto::{atomic_file, pb};

/// `rejected` in the worker's state directory
/// ([`crate::identity::state_dir`]).
pub fn default_dir() -> PathBuf {
    crate::identity::state_dir().join("rejected")
}

/// Writes the refused `request` and why (`coordinator` answered `status`)
/// into `dir` (created if missing); returns the path of the result's file.
pub fn keep(
    dir: &Path,
    request: &pb::SubmitResultRequest,
    coordinator: &str,
    status: &tonic::Status,
) -> io::Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    let ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let stem = format!("lease-{}-{ms}", request.lease_id);
    let result = dir.join(format!("{stem}.pb"));
    let note = dir.join(format!("{stem}.txt"));
    let games = request.results.as_ref().map_or(0, |r| r.games.len());
    atomic_file::write(&result, &request.encode_to_vec())?;
    atomic_file::write(
        &note,
        format!(
            "coordinator: {coordinator}\nworker: {}\nlease: {}\ngames: {games}\ncode: {:?}\nmessage: {}\n",
            request.worker_id,
            request.lease_id,
            status.code(),
            status.message()
        )
        .as_bytes(),
    )?;
    Ok(result)
}

/// A result [`keep`] wrote.
pub fn load(path: &Path) -> io::Result<pb::SubmitResultRequest> {
    let bytes = std::fs::read(path)?;
    pb::SubmitResultRequest::decode(bytes.as_slice())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_result_reads_back_whole_with_its_reason_beside_it() {
        let dir = std::env::temp_dir().join(format!("xq-rejected-test-{}", std::process::id()));
        let request = pb::SubmitResultRequest {
            worker_id: 3,
            lease_id: 17,
            results: Some(pb::GameResults {
                games: vec![pb::GameRecord {
                    reason: "checkmate".to_owned(),
                    moves: vec![1, 2, 3, 4],
                    ..Default::default()
                }],
                ..Default::default()
            }),
        };
        let status = tonic::Status::invalid_argument("invalid results.games[0].moves: ply 1");
        let path = keep(&dir, &request, "http://127.0.0.1:1", &status).unwrap();
        assert_eq!(load(&path).unwrap(), request);
        let note = std::fs::read_to_string(path.with_extension("txt")).unwrap();
        assert!(note.contains("lease: 17\n"), "{note}");
        assert!(note.contains("games: 1\n"), "{note}");
        assert!(note.contains("code: InvalidArgument\n"), "{note}");
        assert!(
            note.contains("message: invalid results.games[0].moves: ply 1\n"),
            "{note}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(default_dir().ends_with("xq-worker/rejected"));
    }
}
