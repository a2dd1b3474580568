//! Compiles `xq/cluster/v1/cluster.proto` with `protox` (pure Rust, so no system
//! `protoc` is needed) and generates the prost messages and tonic services.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "xq/cluster/v1/cluster.proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile([proto], ["."])?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
