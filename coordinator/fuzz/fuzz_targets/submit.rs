//! Any bytes as a SubmitResult request, as the server handles it: decode,
//! convert to the domain outcome, check the counts against a lease. None of
//! it may panic, and an outcome that passes the check is consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use prost::Message;
use xq_proto::{BatchOutcome, pb};

fuzz_target!(|data: &[u8]| {
    let Ok(request) = pb::SubmitResultRequest::decode(data) else {
        return;
    };
    let Some(results) = request.results else {
        return;
    };
    let lease_pairs = results.totals.as_ref().map_or(0, |t| t.pairs as u32);
    let Ok(outcome) = BatchOutcome::try_from(results) else {
        return;
    };
    if outcome.check(lease_pairs).is_ok() {
        let t = &outcome.totals;
        let games = 2 * u64::from(lease_pairs);
        assert_eq!(t.pentanomial.0.iter().sum::<u64>(), u64::from(lease_pairs));
        assert_eq!(t.wdl.wins + t.wdl.draws + t.wdl.losses, games);
        assert!(t.total_plies <= games * 10_000);
        assert_eq!(outcome.games.len() as u64, games, "a result carries every game");
    }
});
