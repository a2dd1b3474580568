//! Bracketing root finder (Brent's method, as in `scipy.optimize.brentq`).

use super::StatsError;

/// Absolute tolerance on the root, as scipy's default `xtol`.
pub const XTOL: f64 = 2e-12;
/// Relative tolerance on the root, as scipy's default `rtol` (4 ε).
pub const RTOL: f64 = 4.0 * f64::EPSILON;
const MAX_ITER: usize = 200;

/// Finds `x` in `[a, b]` with `f(x) = 0`, given that `f(a)` and `f(b)`
/// have opposite signs (or one is zero). Combines bisection with secant
/// and inverse quadratic steps, so it always converges for a continuous
/// `f`, in at most about `log2((b − a)/XTOL)` bisections.
pub fn brent(f: impl Fn(f64) -> f64, a: f64, b: f64) -> Result<f64, StatsError> {
    let (mut xpre, mut xcur) = (a, b);
    let (mut fpre, mut fcur) = (f(xpre), f(xcur));
    if fpre.is_nan() || fcur.is_nan() || fpre * fcur > 0.0 {
        return Err(StatsError::NoSolution {
            what: format!("a sign change in [{a}, {b}]"),
        });
    }
    if fpre == 0.0 {
        return Ok(xpre);
    }
    if fcur == 0.0 {
        return Ok(xcur);
    }
    let (mut xblk, mut fblk) = (0.0, 0.0);
    let (mut spre, mut scur) = (0.0, 0.0);
    for _ in 0..MAX_ITER {
        if fpre != 0.0 && fcur != 0.0 && (fpre < 0.0) != (fcur < 0.0) {
            xblk = xpre;
            fblk = fpre;
            spre = xcur - xpre;
            scur = spre;
        }
        if fblk.abs() < fcur.abs() {
            xpre = xcur;
            xcur = xblk;
            xblk = xpre;
            fpre = fcur;
            fcur = fblk;
            fblk = fpre;
        }
        let delta = (XTOL + RTOL * xcur.abs()) / 2.0;
        let sbis = (xblk - xcur) / 2.0;
        if fcur == 0.0 || sbis.abs() < delta {
            return Ok(xcur);
        }
        if spre.abs() > delta && fcur.abs() < fpre.abs() {
            let stry = if xpre == xblk {
                -fcur * (xcur - xpre) / (fcur - fpre)
            } else {
                let dpre = (fpre - fcur) / (xpre - xcur);
                let dblk = (fblk - fcur) / (xblk - xcur);
                -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            };
            if 2.0 * stry.abs() < spre.abs().min(3.0 * sbis.abs() - delta) {
                spre = scur;
                scur = stry;
            } else {
                spre = sbis;
                scur = sbis;
            }
        } else {
            spre = sbis;
            scur = sbis;
        }
        xpre = xcur;
        fpre = fcur;
        xcur += if scur.abs() > delta {
            scur
        } else if sbis > 0.0 {
            delta
        } else {
            -delta
        };
        fcur = f(xcur);
    }
    Err(StatsError::NoSolution {
        what: format!("convergence in [{a}, {b}] after {MAX_ITER} iterations"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_roots_and_rejects_unbracketed_intervals() {
        let r = brent(|x| x * x - 2.0, 0.0, 2.0).unwrap();
        assert!((r - 2f64.sqrt()).abs() < 1e-11);
        let r = brent(|x| x.cos() - x, 0.0, 1.0).unwrap();
        assert!((r - 0.739_085_133_215_160_7).abs() < 1e-11);
        let r = brent(|x| (x - 1e-3).powi(3), -1.0, 5.0).unwrap();
        assert!((r - 1e-3).abs() < 1e-4);
        assert!(brent(|x| x * x + 1.0, -1.0, 1.0).is_err());
    }
}
