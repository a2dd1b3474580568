//! A run's stored games: the paged list with `pgn --filter`'s filters, the
//! PGN download of the filtered set, and the replay page of one game. The
//! filters arrive as repeated `filter=` query fields holding exactly what
//! `pgn --filter` takes, parsed by [`GameQuery::parse`]; the PGN is
//! [`xq_coordinator::game_export::Export::write_pgn`]'s.

use std::sync::Arc;

use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, header};
use axum::response::{Html, IntoResponse};
use minijinja::context;
use serde::Serialize;
use xq_engine::notation::Notation;
use xq_engine::rules::Reason;

use crate::Web;
use crate::pages::{Page, WebError, page};
use crate::replay::GameView;
use crate::session::Visitor;
use crate::view::RunRow;
use xq_coordinator::game_export::GameQuery;
use xq_coordinator::service::queries::{GameRow, GamesPage};

/// Games per page of the list.
pub const PAGE_SIZE: u64 = 50;

/// The query of the games list and the PGN download.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct GamesQuery {
    /// Each `filter=` value, as `pgn --filter` takes it.
    filters: Vec<String>,
    /// 1-based.
    page: u64,
    notation: Option<String>,
}

impl GamesQuery {
    fn parse(raw: Option<&str>) -> Result<Self, WebError> {
        let pairs: Vec<(String, String)> = serde_urlencoded::from_str(raw.unwrap_or(""))
            .map_err(|e| WebError::BadRequest(format!("bad query: {e}")))?;
        let mut q = GamesQuery {
            page: 1,
            ..GamesQuery::default()
        };
        for (k, v) in pairs {
            match k.as_str() {
                "filter" if !v.trim().is_empty() => q.filters.push(v.trim().to_owned()),
                "filter" => {}
                "page" => {
                    q.page = v
                        .parse()
                        .ok()
                        .filter(|&p| p >= 1)
                        .ok_or_else(|| WebError::BadRequest(format!("bad page {v:?}")))?;
                }
                "notation" => q.notation = Some(v),
                other => {
                    return Err(WebError::BadRequest(format!(
                        "unknown query field {other:?} (filter, page, notation)"
                    )));
                }
            }
        }
        Ok(q)
    }

    /// The query string of these filters, with `extra` fields after them.
    fn link(&self, extra: &[(&str, String)]) -> String {
        let mut pairs: Vec<(&str, String)> =
            self.filters.iter().map(|f| ("filter", f.clone())).collect();
        pairs.extend(extra.iter().cloned());
        serde_urlencoded::to_string(&pairs).unwrap_or_default()
    }
}

/// One line of the games list.
#[derive(Debug, Serialize)]
struct ListRow {
    /// 1-based place in the filtered list.
    n: u64,
    href: String,
    lease_id: u64,
    game_index: u32,
    worker: String,
    opening_index: u64,
    red: String,
    black: String,
    result: String,
    reason: String,
    /// `dev`/`base` (the player that lost), empty for a draw.
    lost_by: String,
    plies: u64,
}

/// What the filter form offers, with the current choices.
#[derive(Debug, Serialize)]
struct FilterForm {
    lost: bool,
    /// The chosen end-reason filter (`time-forfeit`, `crash`, `reason=R`, …).
    reason: String,
    reasons: Vec<(String, String)>,
    /// The chosen `worker=W` filter.
    worker: String,
    workers: Vec<(String, String)>,
}

impl FilterForm {
    fn new(filters: &[String], workers: Vec<(u64, String)>) -> Self {
        let mut reasons: Vec<(String, String)> = [
            ("time-forfeit", "time forfeit"),
            ("crash", "crash (resignation)"),
            ("illegal-move", "illegal move"),
        ]
        .iter()
        .map(|(v, l)| (v.to_string(), l.to_string()))
        .collect();
        reasons.extend(
            Reason::ALL
                .iter()
                .map(|r| (format!("reason={}", r.token()), r.token().to_owned())),
        );
        let reason = filters
            .iter()
            .rfind(|f| f.starts_with("reason=") || reasons.iter().any(|(v, _)| v == *f))
            .cloned()
            .unwrap_or_default();
        FilterForm {
            lost: filters.iter().any(|f| f == "lost"),
            reason,
            reasons,
            worker: filters
                .iter()
                .rfind(|f| f.starts_with("worker="))
                .cloned()
                .unwrap_or_default(),
            workers: workers
                .into_iter()
                .map(|(id, name)| (format!("worker={id}"), format!("{name} (#{id})")))
                .collect(),
        }
    }
}

/// The filters of `query`, checked.
fn game_query(query: &GamesQuery) -> Result<GameQuery, WebError> {
    GameQuery::parse(&query.filters).map_err(|e| WebError::BadRequest(e.to_string()))
}

fn player_label(player: Option<u8>) -> String {
    match player {
        Some(0) => "dev".to_owned(),
        Some(1) => "base".to_owned(),
        _ => String::new(),
    }
}

/// `GET /runs/{id}/games?filter=…&page=N`.
pub async fn list(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Path(id): Path<u64>,
    RawQuery(raw): RawQuery,
) -> Page {
    let query = GamesQuery::parse(raw.as_deref())?;
    let wanted = game_query(&query)?;
    let offset = (query.page - 1).saturating_mul(PAGE_SIZE);
    let GamesPage {
        run: status,
        total,
        rows,
        players,
        workers,
    } = web
        .core
        .queries()
        .games_page(id, wanted, offset, PAGE_SIZE)
        .await?;
    let row = RunRow::new(&status);
    let games: Vec<ListRow> = rows
        .iter()
        .enumerate()
        .map(|(i, g): (usize, &GameRow)| {
            let red = usize::from(g.red_player.min(1));
            ListRow {
                n: offset + i as u64 + 1,
                href: format!("/runs/{id}/games/{}/{}", g.lease_id, g.game_index),
                lease_id: g.lease_id,
                game_index: g.game_index,
                worker: format!("{} (#{})", g.worker_name, g.worker_id),
                opening_index: g.opening_index,
                red: players[red].clone(),
                black: players[1 - red].clone(),
                result: g.result.clone(),
                reason: g.reason.token().to_owned(),
                lost_by: player_label(g.loser),
                plies: g.plies,
            }
        })
        .collect();
    let pages = total.div_ceil(PAGE_SIZE).max(1);
    let page_link = |p: u64| {
        format!(
            "/runs/{id}/games?{}",
            query.link(&[("page", p.to_string())])
        )
    };
    let prev = (query.page > 1).then(|| page_link(query.page - 1));
    let next = (query.page < pages).then(|| page_link(query.page + 1));
    let pgn_link = |notation: &str| {
        format!(
            "/runs/{id}/games.pgn?{}",
            query.link(&[("notation", notation.to_owned())])
        )
    };
    let downloads: Vec<(&str, String)> = [
        ("ICCS", "iccs"),
        ("WXF", "wxf"),
        ("Chinese", "chinese"),
        ("一字三码", "yizisanma"),
    ]
    .iter()
    .map(|(label, n)| (*label, pgn_link(n)))
    .collect();
    let form = FilterForm::new(&query.filters, workers);
    let html = page(
        &web,
        &visitor,
        "games.html",
        context! {
            row,
            games,
            total,
            page => query.page,
            pages,
            prev,
            next,
            downloads,
            form,
            filters => query.filters,
        },
    )?;
    Ok(Html(html).into_response())
}

/// `GET /runs/{id}/games.pgn?filter=…&notation=N`: the filtered games as a
/// PGN file.
pub async fn download(
    State(web): State<Arc<Web>>,
    Path(id): Path<u64>,
    RawQuery(raw): RawQuery,
) -> Page {
    let query = GamesQuery::parse(raw.as_deref())?;
    let notation: Notation = query
        .notation
        .as_deref()
        .unwrap_or("iccs")
        .parse()
        .map_err(WebError::BadRequest)?;
    let wanted = game_query(&query)?;
    let export = web.core.queries().export(id, wanted).await?;
    let text = export
        .write_pgn(notation)
        .map_err(|e| WebError::Render(e.to_string()))?;
    let disposition = format!("attachment; filename=\"run-{id}.pgn\"");
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-chess-pgn; charset=utf-8"),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&disposition).map_err(|e| WebError::Render(e.to_string()))?,
            ),
        ],
        text,
    )
        .into_response())
}

/// `GET /runs/{id}/games/{lease}/{index}`: one game with its replay board.
pub async fn game(
    State(web): State<Arc<Web>>,
    visitor: Visitor,
    Path((id, lease, index)): Path<(u64, u64, u32)>,
) -> Page {
    let (status, players, stored) = web.core.queries().game(id, lease, index).await?;
    let stored = stored.ok_or_else(|| {
        WebError::NotFound(format!("run {id} stores no game {index} of lease {lease}"))
    })?;
    let game = GameView::new(id, &players, &stored).map_err(|e| WebError::Render(e.to_string()))?;
    let data = game.script_data();
    let row = RunRow::new(&status);
    let html = page(&web, &visitor, "game.html", context! { row, game, data })?;
    Ok(Html(html).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_keeps_every_filter_and_refuses_what_it_does_not_know() {
        let q = GamesQuery::parse(Some("filter=lost&filter=reason%3Dcheckmate&filter=&page=3"))
            .unwrap();
        assert_eq!(q.filters, ["lost", "reason=checkmate"]);
        assert_eq!(q.page, 3);
        assert_eq!(
            q.link(&[("page", "4".to_owned())]),
            "filter=lost&filter=reason%3Dcheckmate&page=4"
        );
        assert_eq!(GamesQuery::parse(None).unwrap().page, 1);
        for bad in ["page=0", "page=x", "colour=red"] {
            assert!(GamesQuery::parse(Some(bad)).is_err(), "{bad}");
        }
    }
}
