//! The agent's gRPC service, described by hand (no .proto: its messages are
//! the run protocol's serde types, carried by `codec::JsonCodec`).

fn main() {
    let run = tonic_build::manual::Method::builder()
        .name("run")
        .route_name("Run")
        .input_type("storbench_model::protocol::ToAgent")
        .output_type("storbench_model::protocol::FromAgent")
        .codec_path("crate::codec::JsonCodec")
        .client_streaming()
        .server_streaming()
        .build();
    let agent = tonic_build::manual::Service::builder().name("Agent").package("storbench.fleet").method(run).build();
    tonic_build::manual::Builder::new().compile(&[agent]);
}
