//! The workspace's binaries (`atr`, the examples) as the README's test command builds them.
//!
//! `cargo test --workspace --all-features` builds every binary and example with the
//! development dependencies' features unified in. A `cargo build` of a binary alone leaves
//! those out, so it resolves other features for the crates both share and rebuilds them, and
//! the next `cargo test` rebuilds them back: a minute of compiling each way on a small
//! machine. So a test asks for the bins and the examples together, which resolves exactly as
//! the test command does and, after it, builds nothing.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The path of the workspace's binary `name` (`atr`, or `examples/mcp_server`), built with
/// every bin and example of the workspace the first time a test of this process asks.
///
/// # Panics
///
/// When the build fails, or leaves no such binary.
pub fn binary(name: &str) -> PathBuf {
    static PROFILE: OnceLock<PathBuf> = OnceLock::new();
    let profile = PROFILE.get_or_init(|| {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
            .args([
                "build",
                "--quiet",
                "--workspace",
                "--all-features",
                "--bins",
                "--examples",
            ])
            .status()
            .expect("cargo runs");
        assert!(status.success(), "cargo build --bins --examples fails");
        // A test runs from `<target>/<profile>/deps`; binaries are built in `<target>/<profile>`.
        let exe = std::env::current_exe().unwrap();
        exe.parent().and_then(Path::parent).unwrap().to_owned()
    });
    let binary = profile.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(binary.exists(), "no {} after cargo build", binary.display());
    binary
}
