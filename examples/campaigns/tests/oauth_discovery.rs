//! OAuth discovery as the official TypeScript MCP SDK runs it against the campaign service
//! (`tests/typescript/auth.mjs`): the `WWW-Authenticate` challenge names the protected
//! resource metadata (RFC 9728), whose authorization server's metadata (RFC 8414) the SDK
//! reads, for a resource at the root and one under a path; without an authorization server,
//! no metadata is published.

use crate::support;

use std::io::Write;
use std::process::Command;
use std::sync::Mutex;

use serde_json::{Value, json};
use support::typescript::client_dir;
use support::{Scratch, Service};

/// A stand-in authorization server on loopback: it serves its metadata (RFC 8414) and
/// nothing else, and records every path asked of it.
struct AuthorizationServer {
    issuer: String,
    asked: std::sync::Arc<Mutex<Vec<String>>>,
}

impl AuthorizationServer {
    fn start() -> Self {
        use std::io::{BufRead, BufReader};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let issuer = format!("http://{}", listener.local_addr().unwrap());
        let asked = std::sync::Arc::new(Mutex::new(Vec::new()));
        let (metadata, log) = (
            json!({
                "issuer": issuer,
                "authorization_endpoint": format!("{issuer}/authorize"),
                "token_endpoint": format!("{issuer}/token"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code"],
                "code_challenge_methods_supported": ["S256"],
            })
            .to_string(),
            std::sync::Arc::clone(&asked),
        );
        // Serves until the test process ends; one request per connection.
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let mut reader = BufReader::new(&stream);
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split(' ').nth(1).unwrap_or_default().to_owned();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).unwrap_or(0) <= 2 {
                        break;
                    }
                }
                let (status, body) = if path == "/.well-known/oauth-authorization-server" {
                    ("200 OK", metadata.as_str())
                } else {
                    ("404 Not Found", "{}")
                };
                log.lock().unwrap().push(path);
                let _ = write!(
                    &stream,
                    "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
            }
        });
        AuthorizationServer { issuer, asked }
    }
}

/// OAuth discovery as the TypeScript SDK runs it, with nothing configured but the service's
/// `--authorization-server`: the 401 names the service's own protected resource metadata
/// (RFC 9728), which answers without a token and names the authorization server, whose
/// metadata the SDK reads, and the authorization starts with the metadata's resource. Four
/// steps of four.
#[test]
fn the_typescript_sdk_discovers_the_authorization_server_from_the_challenge() {
    discovers(None);
}

/// The same with the usual MCP resource identifier, a URL with a path
/// (`--public-url http://127.0.0.1:PORT/mcp`): the metadata is published where the
/// challenge names it, with the path after the well-known one (RFC 9728 section 3.1).
#[test]
fn the_typescript_sdk_discovers_the_authorization_server_of_a_resource_with_a_path() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    discovers(Some((addr, "/mcp")));
}

/// OAuth discovery, four steps of four, of a service with `--authorization-server` and, when
/// given, its address and the path of its `--public-url`.
fn discovers(public: Option<(std::net::SocketAddr, &str)>) {
    let issuer = AuthorizationServer::start();
    let scratch = Scratch::new("ts-oauth");
    let mut flags = vec!["--authorization-server".to_owned(), issuer.issuer.clone()];
    if let Some((addr, path)) = public {
        flags.extend([
            "--addr".to_owned(),
            addr.to_string(),
            "--public-url".to_owned(),
            format!("http://{addr}{path}"),
        ]);
    }
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let service = Service::start(scratch.db(), &flags);
    let path = public.map_or("", |(_, path)| path);
    let resource = format!("{}{path}", service.base);
    let dir = client_dir();
    let out = Command::new("node")
        .arg(dir.join("auth.mjs"))
        .arg(format!("{}/mcp", service.base))
        .current_dir(&dir)
        .output()
        .expect("node starts");
    assert!(
        out.status.success(),
        "the TypeScript client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let requests = report["requests"].as_array().unwrap();
    let metadata_url = format!(
        "{}/.well-known/oauth-protected-resource{path}",
        service.base
    );
    // 1. The MCP endpoint answers 401 and names the metadata.
    let challenged = requests
        .iter()
        .find(|r| r["url"] == format!("{}/mcp", service.base) && r["status"] == 401)
        .unwrap_or_else(|| panic!("no 401 from the MCP endpoint: {report}"));
    let challenge = challenged["wwwAuthenticate"].as_str().unwrap();
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    // 2. The metadata answers 200 without a token and names the authorization server.
    let metadata = requests
        .iter()
        .find(|r| r["url"] == metadata_url)
        .unwrap_or_else(|| panic!("the metadata was never read: {report}"));
    assert_eq!(metadata["status"], 200, "{report}");
    assert_eq!(metadata["sentAuthorization"], false);
    assert_eq!(metadata["body"]["resource"], resource);
    assert_eq!(
        metadata["body"]["authorization_servers"],
        json!([issuer.issuer])
    );
    assert_eq!(
        metadata["body"]["bearer_methods_supported"],
        json!(["header"])
    );
    // 3. The authorization server's metadata is read.
    assert!(
        issuer
            .asked
            .lock()
            .unwrap()
            .iter()
            .any(|path| path == "/.well-known/oauth-authorization-server"),
        "{report}"
    );
    // 4. The authorization starts at the server's endpoint, for the metadata's resource,
    //    with PKCE.
    let authorization = report["authorizationUrl"]
        .as_str()
        .unwrap_or_else(|| panic!("the authorization never started: {report}"));
    assert!(
        authorization.starts_with(&format!("{}/authorize?", issuer.issuer)),
        "{authorization}"
    );
    let query = query_of(authorization);
    let param = |name: &str| {
        query
            .iter()
            .find(|(each, _)| each == name)
            .map(|(_, value)| value.as_str())
    };
    assert_eq!(
        param("resource"),
        Some(resource.as_str()),
        "{authorization}"
    );
    assert_eq!(
        param("code_challenge_method"),
        Some("S256"),
        "{authorization}"
    );
    assert_eq!(param("client_id"), Some("campaigns-auth-test"));
}

/// Without `--authorization-server` there is nothing public at the well-known path, and no
/// challenge names it.
#[test]
fn without_an_authorization_server_no_metadata_is_published() {
    let scratch = Scratch::new("ts-oauth-plain");
    let plain = Service::start(scratch.db(), &[]);
    let hidden = support::send(
        http::Request::get(format!(
            "{}/.well-known/oauth-protected-resource",
            plain.base
        ))
        .body(Vec::new())
        .unwrap(),
    );
    assert_eq!(hidden.status(), 401);
    assert!(
        !hidden.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("resource_metadata")
    );
}

/// The query parameters of `url`, decoded.
fn query_of(url: &str) -> Vec<(String, String)> {
    url.split_once('?')
        .map_or("", |(_, query)| query)
        .split('&')
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (name.to_owned(), percent_decoded(value))
        })
        .collect()
}

fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap();
                out.push(u8::from_str_radix(hex, 16).unwrap());
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8(out).unwrap()
}
