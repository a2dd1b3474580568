//! Hands the target triple cargo builds the worker for to the code, as
//! `XQ_WORKER_TARGET` (read with `env!` in `src/version.rs`).

fn main() {
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_owned());
    println!("cargo:rustc-env=XQ_WORKER_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}
