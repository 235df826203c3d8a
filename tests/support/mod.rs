//! PNG builders shared by the tests and benchmarks.
#![allow(dead_code, clippy::cast_possible_truncation)]

/// Encodes raw samples as a PNG of the given colour type and bit depth.
pub fn encode(
    width: u32,
    height: u32,
    color: png::ColorType,
    depth: png::BitDepth,
    palette: Option<&[u8]>,
    data: &[u8],
) -> Vec<u8> {
    let mut out = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(color);
        encoder.set_depth(depth);
        if let Some(palette) = palette {
            encoder.set_palette(palette.to_vec());
        }
        let mut writer = encoder.write_header().expect("header");
        writer.write_image_data(data).expect("image data");
    }
    out
}

/// Encodes 8-bit RGBA samples.
pub fn encode_rgba(width: u32, height: u32, data: &[u8]) -> Vec<u8> {
    encode(
        width,
        height,
        png::ColorType::Rgba,
        png::BitDepth::Eight,
        None,
        data,
    )
}

/// An RGBA image where `fill` covers all but `odd` pixels, which are white.
pub fn rgba(width: u32, height: u32, fill: [u8; 4], odd: usize) -> Vec<u8> {
    let pixels = (width * height) as usize;
    let mut data = Vec::with_capacity(pixels * 4);
    for i in 0..pixels {
        data.extend_from_slice(if i < odd {
            &[255, 255, 255, 255]
        } else {
            &fill
        });
    }
    encode_rgba(width, height, &data)
}

/// A deterministic xorshift generator.
fn noise(mut state: u32) -> impl FnMut() -> u32 {
    move || {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        state
    }
}

/// A screenshot-like RGBA image: flat panels, text-like noise and gradients.
pub fn screenshot(width: u32, height: u32) -> Vec<u8> {
    let mut data = Vec::with_capacity((width * height * 4) as usize);
    let mut next = noise(0x1234_5678);
    for y in 0..height {
        for x in 0..width {
            let state = next();
            let pixel: [u8; 4] = if y < 32 {
                [32, 32, 48, 255] // title bar
            } else if x < width / 5 {
                [240, 240, 240, 255] // side panel
            } else if (y / 18) % 3 == 1 && (x / 7) % 9 != 0 && state.is_multiple_of(5) {
                [20, 20, 20, 255] // "text"
            } else if y > height.saturating_sub(200) {
                [(x % 256) as u8, (y % 256) as u8, 160, 255] // gradient
            } else {
                [255, 255, 255, 255]
            };
            data.extend_from_slice(&pixel);
        }
    }
    encode_rgba(width, height, &data)
}

/// An RGBA image with noise in a third of its pixels, so it compresses poorly: 1024 x 1024 of
/// it is a PNG of about 1 MB.
pub fn noisy(width: u32, height: u32) -> Vec<u8> {
    let mut next = noise(0x2545_F491);
    let data: Vec<u8> = (0..width * height)
        .flat_map(|i| {
            let value = next();
            let level = if i % 3 == 0 {
                (value & 0xFF) as u8
            } else {
                255
            };
            [level, level, 255, 255]
        })
        .collect();
    encode_rgba(width, height, &data)
}

/// Test `name` of the module at `module` (its `module_path!()`), as the test binary lists it:
/// for a test that runs one of its own in a child process (this binary again, `--exact`).
pub fn test_path(module: &str, name: &str) -> String {
    let within = module.split_once("::").map_or("", |(_, path)| path);
    format!("{within}::{name}")
}
