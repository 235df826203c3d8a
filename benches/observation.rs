//! Blank detection against plain decoding, and summarizing a capture against writing its bytes.
//!
//! Run with `cargo bench -p agent-tool-result-tests --bench observation`. Compare `blank_check` with `png_decode_only`
//! (the cost of counting colours on top of decoding), and `observe_capture` with
//! `std_fs_write` (the cost of decoding base64, checking and summarizing on top of the write).

#[path = "../tests/support/mod.rs"]
mod support;

use std::time::{Duration, UNIX_EPOCH};

use agent_tool_result::artifact::SessionArtifacts;
use agent_tool_result::frame::blank_check;
use base64::Engine;
use divan::{Bencher, black_box};
use serde_json::json;

fn main() {
    divan::main();
}

fn screenshot() -> Vec<u8> {
    support::screenshot(1920, 1080)
}

#[divan::bench]
fn png_decode_only(bencher: Bencher) {
    let png = screenshot();
    bencher.bench_local(|| {
        let decoder = png::Decoder::new(std::io::Cursor::new(black_box(&png[..])));
        let mut reader = decoder.read_info().unwrap();
        let mut buffer = vec![0; reader.output_buffer_size().unwrap()];
        reader.next_frame(&mut buffer).unwrap();
        buffer
    });
}

#[divan::bench]
fn blank_check_1920x1080(bencher: Bencher) {
    let png = screenshot();
    bencher.bench_local(|| blank_check(black_box(&png)).unwrap());
}

/// A capture of about 1 MB.
fn one_megabyte_capture() -> Vec<u8> {
    support::noisy(1024, 1024)
}

#[divan::bench]
fn std_fs_write(bencher: Bencher) {
    let png = one_megabyte_capture();
    let dir = std::env::temp_dir().join(format!("atr-bench-write-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut n = 0u64;
    bencher.bench_local(|| {
        n += 1;
        std::fs::write(dir.join(format!("capture-{n}.png")), black_box(&png)).unwrap();
    });
    std::fs::remove_dir_all(&dir).unwrap();
}

#[divan::bench]
fn observe_capture(bencher: Bencher) {
    let png = one_megabyte_capture();
    eprintln!("capture: {} bytes", png.len());
    let result = json!({
        "width": 1024, "height": 1024, "encoding": "png",
        "base64": base64::engine::general_purpose::STANDARD.encode(&png),
    });
    let result = result.as_object().unwrap().clone();
    let root = std::env::temp_dir().join(format!("atr-bench-observe-{}", std::process::id()));
    let started = UNIX_EPOCH + Duration::from_secs(1_782_900_900);
    let artifacts = SessionArtifacts::new(&root, "s-bench", started).unwrap();
    bencher.bench_local(|| artifacts.observe(black_box(&result)).unwrap());
    std::fs::remove_dir_all(&root).unwrap();
}
