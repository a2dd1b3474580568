//! Which charts a run has and what they plot, from plain histories: the
//! web view and `report --plot` both build their charts here, and draw them
//! with [`charts`](crate::charts) on their own backends.
//!
//! * SPRT: the LLR against games, with the two bounds.
//! * SPRT and games runs: the Elo estimate with its 95 % interval against games.
//! * SPSA: every parameter's θ − start in % of its `c_end` on one chart
//!   (fishtest's relative view), then each parameter's absolute θ on its own
//!   chart (the parameters' scales differ too much to share one axis), all
//!   against iterations (game pairs applied).

use xq_coordinator::spsa::SpsaParamSpec;

use crate::charts::{Level, LineChart, Panel, Series};

/// A run's chart: a stable id (`llr`, `elo`, `theta-pct`, `theta-<param>`)
/// and the titled chart.
#[derive(Debug, Clone, PartialEq)]
pub struct RunChart {
    pub id: String,
    pub panel: Panel,
}

/// What the θ charts need of one tuned parameter.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThetaParam<'a> {
    pub name: &'a str,
    pub start: f64,
    /// Perturbation at the end of the run, in parameter units; the % chart
    /// draws 0 for a parameter whose `c_end` is 0.
    pub c_end: f64,
}

impl<'a> From<&'a SpsaParamSpec> for ThetaParam<'a> {
    fn from(p: &'a SpsaParamSpec) -> Self {
        ThetaParam {
            name: &p.name,
            start: p.start,
            c_end: p.c_end,
        }
    }
}

/// θ of every parameter (in the spec's order) after `iter` pairs were applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ThetaPoint<'a> {
    pub iter: u64,
    pub theta: &'a [f64],
}

fn run_chart(id: &str, title: &str, chart: LineChart) -> RunChart {
    RunChart {
        id: id.to_owned(),
        panel: Panel {
            title: title.to_owned(),
            chart,
        },
    }
}

/// The LLR against games from 0, given `(pairs, llr)` after each counted
/// result, with the SPRT's bounds.
pub fn llr(lower: f64, upper: f64, history: &[(u64, f64)]) -> RunChart {
    let points = std::iter::once((0.0, 0.0))
        .chain(
            history
                .iter()
                .map(|&(pairs, llr)| (2.0 * pairs as f64, llr)),
        )
        .collect();
    run_chart(
        "llr",
        "LLR against games",
        LineChart {
            x_label: "games".into(),
            y_label: "LLR".into(),
            series: vec![Series {
                name: "LLR".into(),
                points,
                secondary: false,
            }],
            levels: vec![
                Level {
                    name: format!("lower bound {lower:.2}"),
                    y: lower,
                },
                Level {
                    name: format!("upper bound {upper:.2}"),
                    y: upper,
                },
            ],
        },
    )
}

/// The Elo estimate and its 95 % interval, given `(games, elo, elo95)`.
pub fn elo(estimates: &[(f64, f64, f64)]) -> RunChart {
    let line = |f: fn(&(f64, f64, f64)) -> f64| -> Vec<(f64, f64)> {
        estimates.iter().map(|e| (e.0, f(e))).collect()
    };
    run_chart(
        "elo",
        "Elo ± 95 % interval against games",
        LineChart {
            x_label: "games".into(),
            y_label: "Elo".into(),
            series: vec![
                Series {
                    name: "Elo".into(),
                    points: line(|e| e.1),
                    secondary: false,
                },
                Series {
                    name: "lower".into(),
                    points: line(|e| e.1 - e.2),
                    secondary: true,
                },
                Series {
                    name: "upper".into(),
                    points: line(|e| e.1 + e.2),
                    secondary: true,
                },
            ],
            levels: vec![Level {
                name: "0".into(),
                y: 0.0,
            }],
        },
    )
}

/// The SPSA charts: θ in % of `c_end` for all parameters, then each
/// parameter's θ. Every series starts at iteration 0 with the start value
/// and has one more point per history row.
pub fn spsa(params: &[ThetaParam<'_>], history: &[ThetaPoint<'_>]) -> Vec<RunChart> {
    let theta = |i: usize, f: &dyn Fn(f64) -> f64| -> Vec<(f64, f64)> {
        std::iter::once((0.0, f(params[i].start)))
            .chain(
                history
                    .iter()
                    .filter_map(|r| r.theta.get(i).map(|&t| (r.iter as f64, f(t)))),
            )
            .collect()
    };
    let pct_series = params
        .iter()
        .enumerate()
        .map(|(i, p)| Series {
            name: p.name.to_owned(),
            points: theta(i, &|t| {
                if p.c_end != 0.0 {
                    100.0 * (t - p.start) / p.c_end
                } else {
                    0.0
                }
            }),
            secondary: false,
        })
        .collect();
    let mut out = vec![run_chart(
        "theta-pct",
        "θ − start in % of c_end, against iterations",
        LineChart {
            x_label: "iterations".into(),
            y_label: "% of c_end".into(),
            series: pct_series,
            levels: vec![Level {
                name: "start".into(),
                y: 0.0,
            }],
        },
    )];
    out.extend(params.iter().enumerate().map(|(i, p)| {
        run_chart(
            &format!("theta-{}", p.name),
            &format!("θ of {} against iterations", p.name),
            LineChart {
                x_label: "iterations".into(),
                y_label: p.name.to_owned(),
                series: vec![Series {
                    name: p.name.to_owned(),
                    points: theta(i, &|t| t),
                    secondary: false,
                }],
                levels: vec![Level {
                    name: format!("start {}", p.start),
                    y: p.start,
                }],
            },
        )
    }));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spsa_charts_have_one_point_per_row_plus_the_start() {
        let params = [
            ThetaParam {
                name: "a",
                start: 100.0,
                c_end: 10.0,
            },
            ThetaParam {
                name: "b",
                start: 5.0,
                c_end: 0.0,
            },
        ];
        let rows: Vec<[f64; 2]> = (1..=6).map(|i| [100.0 + i as f64, 5.0]).collect();
        let history: Vec<ThetaPoint<'_>> = rows
            .iter()
            .enumerate()
            .map(|(i, t)| ThetaPoint {
                iter: 4 * (i as u64 + 1),
                theta: t,
            })
            .collect();
        let charts = spsa(&params, &history);
        let ids: Vec<&str> = charts.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, ["theta-pct", "theta-a", "theta-b"]);
        let pct = &charts[0].panel.chart.series;
        assert_eq!(pct.len(), 2);
        assert_eq!(pct[0].points.len(), 7);
        assert_eq!(pct[0].points[6], (24.0, 60.0));
        assert_eq!(pct[1].points[3], (12.0, 0.0));
        assert_eq!(charts[1].panel.chart.series[0].points[0], (0.0, 100.0));
    }

    #[test]
    fn the_llr_chart_counts_games_and_draws_both_bounds() {
        let c = llr(-2.94, 2.94, &[(8, 0.5), (16, 1.25)]);
        assert_eq!(
            c.panel.chart.series[0].points,
            vec![(0.0, 0.0), (16.0, 0.5), (32.0, 1.25)]
        );
        let ys: Vec<f64> = c.panel.chart.levels.iter().map(|l| l.y).collect();
        assert_eq!(ys, [-2.94, 2.94]);
    }
}
