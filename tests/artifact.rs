//! Session artifacts: directory naming, refused session ids, atomic concurrent writes, write
//! failures that become `artifactError`, and captures summarized from PNG bytes.
#![cfg(feature = "blank-check")]

use crate::support;

use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use agent_tool_result::Observation;
use agent_tool_result::artifact::{CaptureError, SessionArtifacts};
use agent_tool_result::frame::FrameErrorKind;
use agent_tool_result::observation::WindowInfo;
use base64::Engine;
use serde_json::json;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "atr-test-{name}-{}-{}",
            std::process::id(),
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = set_writable(&self.0);
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn set_writable(path: &Path) -> std::io::Result<()> {
    let mut permissions = fs::metadata(path)?.permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    permissions.set_readonly(false);
    fs::set_permissions(path, permissions)
}

fn started() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_782_900_900) // 2026-07-01 10:15:00 UTC
}

fn tiny_png() -> Vec<u8> {
    support::rgba(4, 3, [0, 0, 0, 255], 0)
}

#[test]
fn the_directory_is_named_from_start_time_and_session() {
    let root = TempDir::new("naming");
    let artifacts = SessionArtifacts::new(&root.0, "s-4f2a", started()).unwrap();
    assert_eq!(artifacts.dir(), root.0.join("20260701-101500-s-4f2a"));
    assert!(
        !artifacts.dir().exists(),
        "nothing is created before the first write"
    );
    let first = artifacts.write_png(&tiny_png()).unwrap();
    let second = artifacts.write_png(&tiny_png()).unwrap();
    for (path, n) in [(&first, 1), (&second, 2)] {
        let name = path.file_name().unwrap().to_str().unwrap();
        // capture-yyyyMMdd-HHmmssfff-n.png
        let parts: Vec<&str> = name.trim_end_matches(".png").split('-').collect();
        assert_eq!(parts[0], "capture", "{name}");
        assert_eq!(parts[1].len(), 8, "{name}");
        assert_eq!(parts[2].len(), 9, "{name}");
        assert!(
            parts[1]
                .chars()
                .chain(parts[2].chars())
                .all(|c| c.is_ascii_digit())
        );
        assert_eq!(parts[3], n.to_string());
        assert_eq!(path.parent().unwrap(), artifacts.dir());
        assert_eq!(fs::read(path).unwrap(), tiny_png());
    }
}

#[test]
fn session_ids_that_could_escape_the_root_are_refused_before_touching_disk() {
    let root = TempDir::new("escape");
    let inside = root.0.join("root");
    let escaping = [
        "",
        ".",
        "..",
        "../x",
        "../../etc",
        "a/../..",
        "/etc/passwd",
        "/",
        "a/b",
        "..\\..\\Windows",
        "a\\b",
        "C:\\Windows\\System32",
        "C:",
        "c:evil",
        "\\\\server\\share",
        "\\\\?\\C:\\x",
        "a\0b",
        "\0",
        "s-1/../../x",
        "~/x",
        "s 1",
        "s\n1",
        "ünï",
        "$(rm)",
    ];
    let too_long = "a".repeat(129);
    for id in escaping.iter().copied().chain([too_long.as_str()]) {
        let err = SessionArtifacts::new(&inside, id, started()).unwrap_err();
        assert!(
            err.to_string().starts_with("invalid session id"),
            "{id:?}: {err}"
        );
    }
    assert!(SessionArtifacts::new(&inside, &"a".repeat(128), started()).is_ok());
    assert!(!inside.exists(), "a refused id created something");
}

#[test]
fn sixteen_threads_write_eight_hundred_distinct_complete_files() {
    let root = TempDir::new("threads");
    let artifacts = Arc::new(SessionArtifacts::new(&root.0, "s-many", started()).unwrap());
    let handles: Vec<_> = (0..16u8)
        .map(|t| {
            let artifacts = Arc::clone(&artifacts);
            std::thread::spawn(move || {
                (0..50u8)
                    .map(|i| {
                        let png = support::rgba(8, 8, [t, i, 7, 255], usize::from(i));
                        let path = artifacts.write_png(&png).unwrap();
                        (path, png)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let written: Vec<(PathBuf, Vec<u8>)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(written.len(), 800);
    let names: HashSet<&PathBuf> = written.iter().map(|(p, _)| p).collect();
    assert_eq!(names.len(), 800, "a name was reused");
    for (path, png) in &written {
        assert_eq!(&fs::read(path).unwrap(), png, "{}", path.display());
    }
    let entries: Vec<String> = fs::read_dir(artifacts.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(entries.len(), 800, "temporary files were left behind");
    let is_capture = |n: &String| {
        n.starts_with("capture-") && Path::new(n).extension().is_some_and(|e| e == "png")
    };
    assert!(entries.iter().all(is_capture));
}

/// Sixteen instances for one session in one process, each on its own thread, and four
/// processes more on the same directory: every write lands, complete, under its own name, and
/// no temporary file is left.
#[test]
fn many_instances_and_processes_share_one_session_directory() {
    let root = TempDir::new("instances");
    let children: Vec<std::process::Child> = (0..4)
        .map(|_| {
            std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "--test-threads=1"])
                .arg(support::test_path(
                    module_path!(),
                    "child_writes_fifty_captures",
                ))
                .env("ATR_ARTIFACT_ROOT", &root.0)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    let handles: Vec<_> = (0..16u8)
        .map(|t| {
            let root = root.0.clone();
            std::thread::spawn(move || {
                let artifacts = SessionArtifacts::new(&root, "s-shared", started()).unwrap();
                (0..50u8)
                    .map(|i| {
                        let png = support::rgba(8, 8, [t, i, 9, 255], usize::from(i));
                        (artifacts.write_png(&png).unwrap(), png)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let written: Vec<(PathBuf, Vec<u8>)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a writing process failed");
    }
    assert_eq!(written.len(), 800);
    for (path, png) in &written {
        assert_eq!(&fs::read(path).unwrap(), png, "{}", path.display());
    }
    let dir = SessionArtifacts::new(&root.0, "s-shared", started()).unwrap();
    let entries: Vec<String> = fs::read_dir(dir.dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        entries.len(),
        800 + 4 * 50,
        "lost or left-over files: {}",
        entries.len()
    );
    assert!(
        entries
            .iter()
            .all(|n| n.starts_with("capture-")
                && Path::new(n).extension().is_some_and(|e| e == "png"))
    );
}

/// The child of the test above: writes fifty captures into the shared session directory.
#[test]
fn child_writes_fifty_captures() {
    let Ok(root) = std::env::var("ATR_ARTIFACT_ROOT") else {
        return;
    };
    let artifacts = SessionArtifacts::new(&root, "s-shared", started()).unwrap();
    for i in 0..50u8 {
        let png = support::rgba(8, 8, [255, i, 3, 255], usize::from(i));
        let path = artifacts.write_png(&png).unwrap();
        assert_eq!(fs::read(path).unwrap(), png);
    }
}

/// A location where writing fails even for root: a read-only directory where permissions are
/// enforced, otherwise a path under /proc.
fn unwritable_root(tmp: &TempDir) -> PathBuf {
    let dir = tmp.0.join("readonly");
    fs::create_dir(&dir).unwrap();
    let mut permissions = fs::metadata(&dir).unwrap().permissions();
    permissions.set_readonly(true);
    fs::set_permissions(&dir, permissions).unwrap();
    if fs::write(dir.join("probe"), b"x").is_err() {
        return dir;
    }
    PathBuf::from("/proc/self/atr-artifacts")
}

#[test]
fn write_failures_become_artifact_error_and_the_summary_survives() {
    let tmp = TempDir::new("failures");
    let blocked_by_file = tmp.0.join("file");
    fs::write(&blocked_by_file, b"not a directory").unwrap();
    for root in [unwritable_root(&tmp), blocked_by_file.clone()] {
        let artifacts = SessionArtifacts::new(&root, "s-ro", started()).unwrap();
        assert!(
            artifacts.write_png(&tiny_png()).is_err(),
            "{}",
            root.display()
        );
        let summary = artifacts.summarize_png(&tiny_png(), None).unwrap();
        let Some(reason) = summary.artifact().error() else {
            panic!("written under {}", root.display())
        };
        assert!(
            reason.starts_with("could not write the capture under"),
            "{reason}"
        );
        assert_eq!((summary.width(), summary.height()), (4, 3));
        assert!(summary.blank_check().blank());
    }
    assert_eq!(fs::read(&blocked_by_file).unwrap(), b"not a directory");
}

#[test]
fn a_summary_of_a_real_png() {
    let root = TempDir::new("summary");
    let artifacts = SessionArtifacts::new(&root.0, "s-4f2a", started()).unwrap();
    let png = support::rgba(40, 25, [0, 0, 0, 255], 10);
    let window = WindowInfo::new(1_312_674, "Untitled - Notepad", "Notepad", "notepad", 8124)
        .at(120, 80, 40, 25);
    let summary = artifacts.summarize_png(&png, Some(window)).unwrap();
    let Some(path) = summary.artifact().path() else {
        panic!("not written")
    };
    assert_eq!(fs::read(path).unwrap(), png);
    assert_eq!(summary.bytes(), png.len() as u64);
    insta::assert_json_snapshot!("capture-summary-40x25", summary, {
        ".artifact" => "[artifact path]",
        ".bytes" => "[png size]",
    });
}

#[test]
fn a_capture_result_becomes_a_summary_without_its_base64() {
    let root = TempDir::new("observe");
    let artifacts = SessionArtifacts::new(&root.0, "s-obs", started()).unwrap();
    let png = support::rgba(6, 6, [250, 250, 250, 255], 0);
    let result = json!({
        "width": 6, "height": 6, "encoding": "png", "handle": 77, "file": "C:\\shots\\6x6.png",
        "base64": base64::engine::general_purpose::STANDARD.encode(&png),
    });
    let observation = artifacts.observe(result.as_object().unwrap()).unwrap();
    let Observation::Capture(summary) = &observation else {
        panic!("{observation:?}")
    };
    assert_eq!(summary.handle(), Some(77));
    assert_eq!(summary.file(), Some("C:\\shots\\6x6.png"));
    assert!(summary.blank_check().blank());
    assert!(!summary.blank_check().dominant_is_dark());
    let text = serde_json::to_string(&observation).unwrap();
    assert!(!text.contains("base64"), "{text}");
    let Some(path) = summary.artifact().path() else {
        panic!("not written")
    };
    assert_eq!(fs::read(path).unwrap(), png);

    let query = json!({ "kind": "query", "nodes": 3 });
    let kept = artifacts.observe(query.as_object().unwrap()).unwrap();
    assert_eq!(serde_json::to_value(&kept).unwrap(), query);

    for bad in [
        json!({ "base64": "not base64!" }),
        json!({ "base64": 42 }),
        json!({ "base64": "QUJD" }),
    ] {
        let err = artifacts.observe(bad.as_object().unwrap()).unwrap_err();
        assert!(matches!(err, CaptureError::Frame(_)), "{bad}: {err}");
    }
    let nested = json!({ "kind": "query", "shot": { "base64": "QUJD" } });
    let err = artifacts.observe(nested.as_object().unwrap()).unwrap_err();
    assert!(matches!(err, CaptureError::Observation(_)), "{err}");
}

#[test]
fn truncated_corrupt_and_oversized_pngs_are_errors() {
    let root = TempDir::new("badpng");
    let artifacts = SessionArtifacts::new(&root.0, "s-bad", started()).unwrap();
    let png = support::screenshot(64, 48);
    let mut corrupt = png.clone();
    let middle = corrupt.len() / 2;
    for byte in &mut corrupt[middle..middle + 16] {
        *byte ^= 0xA5;
    }
    let mut huge = support::rgba(1, 1, [0, 0, 0, 255], 0);
    huge[16..24].copy_from_slice(&[0, 1, 0x86, 0xA0, 0, 1, 0x86, 0xA0]); // 100000 x 100000
    let cases: Vec<(&str, Vec<u8>, FrameErrorKind)> = vec![
        ("empty", Vec::new(), FrameErrorKind::NotPng),
        ("text", b"hello, world".to_vec(), FrameErrorKind::NotPng),
        ("signature only", png[..8].to_vec(), FrameErrorKind::NotPng),
        ("header cut", png[..20].to_vec(), FrameErrorKind::NotPng),
        (
            "truncated",
            png[..png.len() / 3].to_vec(),
            FrameErrorKind::Corrupt,
        ),
        (
            "no end",
            png[..png.len() - 12].to_vec(),
            FrameErrorKind::Corrupt,
        ),
        ("corrupt", corrupt, FrameErrorKind::Corrupt),
        ("100000x100000", huge, FrameErrorKind::TooLarge),
    ];
    for (label, bytes, kind) in cases {
        let err = artifacts.summarize_png(&bytes, None).unwrap_err();
        assert_eq!(err.kind(), kind, "{label}: {err}");
    }
    let left: Vec<_> = fs::read_dir(root.0.join("20260701-101500-s-bad"))
        .map(Iterator::collect)
        .unwrap_or_default();
    assert!(left.is_empty(), "a rejected PNG was written");
}
