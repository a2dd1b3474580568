//! Compiles `xq/cluster/v1/cluster.proto` with `protox` (pure Rust, so no system
//! `protoc` is needed) and generates the prost messages and tonic services; the
//! encoded descriptor set goes to `OUT_DIR` for server reflection.

use prost::Message;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let proto = "xq/cluster/v1/cluster.proto";
    println!("cargo:rerun-if-changed={proto}");
    let fds = protox::compile([proto], ["."])?;
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR")?);
    std::fs::write(out.join("cluster_descriptor.bin"), fds.encode_to_vec())?;
    tonic_prost_build::configure().compile_fds(fds)?;
    Ok(())
}
