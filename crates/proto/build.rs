//! Compiles `proto/*.proto` with protox (a protobuf compiler in Rust), so building needs no
//! system `protoc`.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files = ["proto/kv.proto", "proto/pd.proto", "proto/raft.proto"];
    for file in files {
        println!("cargo:rerun-if-changed={file}");
    }
    let descriptors = protox::compile(files, ["proto"])?;
    tonic_prost_build::configure().compile_fds(descriptors)?;
    Ok(())
}
