//! The result of a fit as a parameter file: `name = value` lines, the format
//! `xq-engine --params`, `xq-worker play` and the `--dev`/`--base` options of
//! runs read, for every chosen parameter (changed or not, so that the file
//! pins the whole fitted set), preceded by `#` comment lines that give the
//! losses, `K` and the counts, so the whole text still reads as a parameter
//! file.

use std::fmt::Write as _;

use xq_engine::Params;

use super::fit::{Fit, Losses};
use super::load::Data;
use super::selection::Selection;

fn losses(l: &Losses) -> String {
    match l.holdout {
        Some(h) => format!("train {:.6}, held out {:.6}", l.train, h),
        None => format!("train {:.6}, held out - (none held out)", l.train),
    }
}

/// The parameter file of `fit`, whose start set was `start`.
pub fn parameter_file(fit: &Fit, data: &Data, start: &Params, selection: &Selection) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Texel tuning of {} parameters", selection.len());
    let _ = writeln!(
        s,
        "# positions: {} training, {} held out, {} left out in check",
        data.train.len(),
        data.holdout.len(),
        data.in_check
    );
    let _ = writeln!(
        s,
        "# read, resolved and modelled {} samples in {:.1} s",
        data.samples, data.seconds
    );
    let _ = writeln!(s, "# K = {}", fit.k);
    let _ = writeln!(s, "# loss before: {}", losses(&fit.before));
    let _ = writeln!(s, "# loss after:  {}", losses(&fit.after));
    let _ = writeln!(
        s,
        "# {} passes, {:.0} positions/s per pass",
        fit.passes,
        fit.positions_per_second(data.train.len())
    );
    for (spec, real) in selection.specs().iter().zip(&fit.real) {
        let old = start.get(spec.name).unwrap_or(spec.default);
        let new = fit.params.get(spec.name).unwrap_or(old);
        let _ = writeln!(s, "{} = {new}  # was {old}, fitted {real:.2}", spec.name);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::texel::logistic::Scale;

    #[test]
    fn the_report_reads_back_as_a_parameter_file() {
        let selection = Selection::parse("horse_value,tempo").unwrap();
        let start = Params {
            horse_value: 379,
            tempo: 10,
            ..Params::default()
        };
        let mut params = start.clone();
        params.set("horse_value", 401).unwrap();
        let fit = Fit {
            k: Scale::new(1.1).unwrap(),
            before: Losses {
                train: 0.1,
                holdout: Some(0.11),
            },
            after: Losses {
                train: 0.09,
                holdout: None,
            },
            params: params.clone(),
            real: vec![400.7, 10.2],
            passes: 10,
            pass_seconds: 0.5,
        };
        let text = parameter_file(&fit, &Data::default(), &start, &selection);
        assert_eq!(Params::from_toml(&text).unwrap(), params);
        assert!(
            text.contains("horse_value = 401  # was 379, fitted 400.70"),
            "{text}"
        );
        assert!(text.contains("tempo = 10"), "{text}");
        assert!(text.contains("# K = 1.1000"), "{text}");
    }
}
