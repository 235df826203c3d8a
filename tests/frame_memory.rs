//! The blank check's memory is bounded by bytes, not rows: a frame as wide as the pixel cap
//! allows, and one as tall, each decode within a stated bound. Each case runs in a child
//! process (this test binary again) that reports its own peak resident memory.
#![cfg(all(feature = "blank-check", target_os = "linux"))]

use std::path::PathBuf;
use std::process::Command;

/// The stated bound on the blank check's own peak memory for any frame within the pixel cap,
/// beyond the PNG bytes: the decoder's rows plus three batches of at most 1 MiB.
const BOUND_BYTES: u64 = 64 << 20;

/// A 1-bit greyscale PNG of `width` x `height`, all black (it compresses to almost nothing,
/// and decodes to a full 8-bit row per line).
fn black_png(width: u32, height: u32) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Grayscale);
        encoder.set_depth(png::BitDepth::One);
        encoder.set_compression(png::Compression::Fastest);
        let mut writer = encoder.write_header().unwrap();
        let mut stream = writer.stream_writer().unwrap();
        let row = vec![0u8; (width as usize).div_ceil(8)];
        for _ in 0..height {
            std::io::Write::write_all(&mut stream, &row).unwrap();
        }
        stream.finish().unwrap();
    }
    out
}

fn status_kb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap()
}

/// The child: checks the PNG named by the environment and prints its peak memory growth.
#[test]
fn child_measures_one_blank_check() {
    let Ok(path) = std::env::var("ATR_FRAME_MEMORY_PNG") else {
        return;
    };
    let png = std::fs::read(path).unwrap();
    let before = status_kb("VmRSS:");
    let check = agent_tool_result::frame::blank_check(&png).unwrap();
    assert!(check.blank());
    let peak = status_kb("VmHWM:");
    println!("peak-growth-kb={}", peak.saturating_sub(before));
}

fn peak_growth(name: &str, width: u32, height: u32) -> u64 {
    let path: PathBuf = std::env::temp_dir().join(format!(
        "atr-frame-memory-{}-{name}.png",
        std::process::id()
    ));
    std::fs::write(&path, black_png(width, height)).unwrap();
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "--nocapture", "--test-threads=1"])
        .arg(crate::support::test_path(
            module_path!(),
            "child_measures_one_blank_check",
        ))
        .env("ATR_FRAME_MEMORY_PNG", &path)
        .output()
        .unwrap();
    std::fs::remove_file(&path).unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{name}: {stdout}");
    stdout
        .lines()
        .find_map(|l| l.split("peak-growth-kb=").nth(1))
        .and_then(|n| n.trim().parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{name}: no measurement in {stdout}"))
        * 1024
}

#[test]
fn wide_and_tall_frames_stay_within_the_bound() {
    // 2,000,000 x 130: rows of 2 MB, 260 million pixels (the cap is 268 million). Batches of
    // 128 such rows would take 256 MB at once.
    let wide = peak_growth("wide", 1_000_000, 130);
    // 1,000 x 260,000: the same pixels as thin rows, counted on a second thread.
    let tall = peak_growth("tall", 1_000, 130_000);
    for (name, bytes) in [("wide", wide), ("tall", tall)] {
        assert!(bytes <= BOUND_BYTES, "{name}: {} MiB", bytes >> 20);
    }
}
