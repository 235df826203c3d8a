//! Blank-frame detection over every PNG colour type and bit depth.
#![cfg(feature = "blank-check")]
#![allow(clippy::cast_possible_truncation)] // packing test samples into bytes

use crate::support;

use agent_tool_result::frame::blank_check;
use agent_tool_result::observation::BlankCheck;
use png::{BitDepth, ColorType};

fn check(png: &[u8]) -> BlankCheck {
    blank_check(png).unwrap()
}

fn assert_verdict(png: &[u8], fraction: f64, blank: bool, dark: bool, label: &str) {
    let verdict = check(png);
    assert!(
        (verdict.dominant_fraction() - fraction).abs() < 1e-9,
        "{label}: {verdict:?}"
    );
    assert_eq!(verdict.blank(), blank, "{label}: {verdict:?}");
    assert_eq!(verdict.dominant_is_dark(), dark, "{label}: {verdict:?}");
}

/// `pixels` samples per row of `bits`-bit values, packed MSB first.
fn packed(values: &[u16], width: usize, bits: u8) -> Vec<u8> {
    let mut out = Vec::new();
    for row in values.chunks(width) {
        match bits {
            16 => row
                .iter()
                .for_each(|v| out.extend_from_slice(&v.to_be_bytes())),
            8 => row.iter().for_each(|&v| out.push(v as u8)),
            _ => {
                let per_byte = 8 / bits as usize;
                for chunk in row.chunks(per_byte) {
                    let mut byte = 0u8;
                    for (i, &v) in chunk.iter().enumerate() {
                        byte |= (v as u8) << (8 - bits as usize * (i + 1));
                    }
                    out.push(byte);
                }
            }
        }
    }
    out
}

#[test]
fn greyscale_at_every_bit_depth() {
    let (width, height) = (20usize, 10usize);
    for (depth, bits, max) in [
        (BitDepth::One, 1u8, 1u16),
        (BitDepth::Two, 2, 3),
        (BitDepth::Four, 4, 15),
        (BitDepth::Eight, 8, 255),
        (BitDepth::Sixteen, 16, 65_535),
    ] {
        let grey = |values: &[u16]| {
            let data = packed(values, width, bits);
            support::encode(20, 10, ColorType::Grayscale, depth, None, &data)
        };
        let png = grey(&vec![0u16; width * height]);
        assert_verdict(&png, 1.0, true, true, &format!("grey {bits}-bit black"));

        // Three quarters white, one quarter black.
        let mixed: Vec<u16> = (0..width * height)
            .map(|i| if i % 4 == 0 { 0 } else { max })
            .collect();
        let png = grey(&mixed);
        assert_verdict(&png, 0.75, false, false, &format!("grey {bits}-bit mixed"));
    }
}

#[test]
fn grey_with_alpha_rgb_and_rgba_at_8_and_16_bits() {
    let pixels = 16 * 16;
    let mut grey_alpha = Vec::new();
    let mut wide_rgb = Vec::new();
    let mut wide_rgba = Vec::new();
    let mut narrow_rgb = Vec::new();
    for i in 0..pixels {
        let dark = i % 10 != 0; // 90% dark
        grey_alpha.extend_from_slice(if dark { &[10, 255] } else { &[200, 128] });
        let c16: [u16; 3] = if dark { [0, 0, 0x1000] } else { [0xFFFF, 0, 0] };
        for v in c16 {
            wide_rgb.extend_from_slice(&v.to_be_bytes());
        }
        for v in c16.iter().chain(&[0xFFFF]) {
            wide_rgba.extend_from_slice(&v.to_be_bytes());
        }
        narrow_rgb.extend_from_slice(if dark { &[5, 5, 5] } else { &[0, 200, 0] });
    }
    let cases = [
        (
            ColorType::GrayscaleAlpha,
            BitDepth::Eight,
            grey_alpha,
            "grey+alpha 8",
        ),
        (ColorType::Rgb, BitDepth::Sixteen, wide_rgb, "rgb 16"),
        (ColorType::Rgba, BitDepth::Sixteen, wide_rgba, "rgba 16"),
        (ColorType::Rgb, BitDepth::Eight, narrow_rgb, "rgb 8"),
    ];
    for (color, depth, data, label) in cases {
        let png = support::encode(16, 16, color, depth, None, &data);
        let verdict = check(&png);
        assert!(
            (verdict.dominant_fraction() - 0.898_437_5).abs() < 1e-9,
            "{label}: {verdict:?}"
        );
        assert!(!verdict.blank(), "{label}");
        assert!(verdict.dominant_is_dark(), "{label}");
    }
}

#[test]
fn palette_images_at_every_index_depth() {
    let palette = [255, 0, 0, 0, 0, 255, 255, 255, 255]; // red, blue, white
    for (depth, bits) in [
        (BitDepth::One, 1u8),
        (BitDepth::Two, 2),
        (BitDepth::Four, 4),
        (BitDepth::Eight, 8),
    ] {
        let indices: Vec<u16> = (0..32 * 8).map(|i| u16::from(i % 4 != 0)).collect(); // 75% blue
        let png = support::encode(
            32,
            8,
            ColorType::Indexed,
            depth,
            Some(&palette),
            &packed(&indices, 32, bits),
        );
        assert_verdict(&png, 0.75, false, true, &format!("palette {bits}-bit"));
        let white = vec![if bits == 1 { 1 } else { 2 }; 32 * 8];
        let png = support::encode(
            32,
            8,
            ColorType::Indexed,
            depth,
            Some(&palette),
            &packed(&white, 32, bits),
        );
        let expected_dark = bits == 1; // index 1 is blue with 1-bit indices
        assert_verdict(
            &png,
            1.0,
            true,
            expected_dark,
            &format!("palette {bits}-bit uniform"),
        );
    }
}

#[test]
fn the_threshold_and_quantization() {
    // 99 of 100 pixels black: blank at exactly the threshold.
    assert_verdict(
        &support::rgba(10, 10, [0, 0, 0, 255], 1),
        0.99,
        true,
        true,
        "99%",
    );
    // 98 of 100: not blank.
    assert_verdict(
        &support::rgba(10, 10, [0, 0, 0, 255], 2),
        0.98,
        false,
        true,
        "98%",
    );
    // Near-black noise (values 0..=7) is one colour at 5 bits per channel.
    let noisy: Vec<u8> = (0..100u32)
        .flat_map(|i| [(i % 8) as u8, (i % 5) as u8, (i % 3) as u8, 255])
        .collect();
    let png = support::encode(10, 10, ColorType::Rgba, BitDepth::Eight, None, &noisy);
    assert_verdict(&png, 1.0, true, true, "noise");
    // A mid-grey fill is not dark; a dark blue is.
    assert!(!check(&support::rgba(4, 4, [128, 128, 128, 255], 0)).dominant_is_dark());
    assert!(check(&support::rgba(4, 4, [0, 0, 120, 255], 0)).dominant_is_dark());
}

#[test]
fn a_screenshot_is_not_blank() {
    let verdict = check(&support::screenshot(320, 240));
    assert!(!verdict.blank(), "{verdict:?}");
    assert!(verdict.dominant_fraction() < 0.9, "{verdict:?}");
}

#[test]
fn large_frames_are_counted_alongside_decoding_with_the_same_result() {
    // 640 x 480 is above the size from which rows are counted on a second thread.
    let png = support::rgba(640, 480, [0, 0, 0, 255], 640 * 480 / 100);
    assert_verdict(&png, 0.99, true, true, "large, 1% white");
    let png = support::rgba(640, 480, [30, 90, 200, 255], 640 * 480 / 4);
    assert_verdict(&png, 0.75, false, false, "large, 25% white");
    let verdict = check(&support::screenshot(1280, 720));
    assert!(!verdict.blank(), "{verdict:?}");
}

#[test]
fn a_large_frame_that_breaks_midway_is_an_error() {
    let png = support::screenshot(640, 480);
    for cut in [png.len() / 2, png.len() - 20] {
        let err = blank_check(&png[..cut]).unwrap_err();
        assert_eq!(
            err.kind(),
            agent_tool_result::frame::FrameErrorKind::Corrupt,
            "{err}"
        );
    }
    let mut corrupt = png.clone();
    let at = corrupt.len() * 2 / 3;
    corrupt[at..at + 32].iter_mut().for_each(|b| *b ^= 0x5A);
    assert!(blank_check(&corrupt).is_err());
}
