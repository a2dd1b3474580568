//! Texel tuning: fitting the static evaluation's parameters to training
//! positions by the logistic of the evaluation against the game's result.
//!
//! - [`logistic`]: the model `σ(e) = 1/(1 + 10^(−K·e/400))`, the target
//!   `λ·σ(score) + (1 − λ)·result`, the mean squared error and fitting `K`;
//! - [`selection`]: which parameters the static evaluation reads (the only ones
//!   fitted) and `--params` lists;
//! - [`quiet`]: each position resolved to the end of its capture sequence;
//! - [`linear`]: the evaluation as an exact linear function of the parameters,
//!   measured once per position;
//! - [`rows`]: the positions' models, and the loss and gradient over them in
//!   parallel;
//! - [`load`]: reading a data file into rows, with a deterministic hold-out;
//! - [`fit`]: `K`, then Adam, then rounding;
//! - [`report`]: the result as a parameter file with the losses as comments.
//!
//! TUNING.md beside this crate describes the method and its measured speed.

pub mod fit;
pub mod linear;
pub mod load;
pub mod logistic;
pub mod quiet;
pub mod report;
pub mod rows;
pub mod selection;

pub use fit::{Fit, FitError, FitOptions, Losses, Pass, fit};
pub use load::{Data, Holdout, HoldoutError, LoadError, load};
pub use logistic::{Lambda, LambdaError, Scale};
pub use selection::{Selection, SelectionError};
