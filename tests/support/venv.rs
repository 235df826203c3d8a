//! A Python virtual environment of the tests' own, with the packages a requirements file pins
//! installed from the package index the first time: for the outside tools a test checks
//! against (an SDK, a parser).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// The Python of an environment holding what `requirements` pins, made under `root` (one
/// environment per pin list: a new pin gets a new one).
///
/// # Panics
///
/// When Python, `venv` or the package index is missing, saying what to install.
pub fn python_with(requirements: &Path, root: &Path) -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _once = INSTALL
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let pinned = std::fs::read_to_string(requirements).unwrap();
    let digest = pinned.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    let venv = root.join(format!("python-{digest:016x}"));
    let python = venv.join("bin/python");
    if python.exists() {
        return python;
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status();
    assert!(
        made.is_ok_and(|status| status.success()),
        "this test checks against a Python package: install Python 3.10 or newer with venv \
         and pip (on Debian: apt-get install python3 python3-venv)"
    );
    let installed = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(requirements)
        .status()
        .expect("pip runs");
    if !installed.success() {
        let _ = std::fs::remove_dir_all(&venv);
        panic!(
            "pip could not install {}: the package index must be reachable the first time",
            requirements.display()
        );
    }
    python
}
