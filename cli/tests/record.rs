//! `atr record`: what passes through it is passed on unchanged and written down, one message a
//! line, in the order it passed; over stdio (a server that echoes) and over HTTP (a server
//! that answers JSON with a length, an event stream in chunks whose event spans two `data:`
//! lines, and a problem the HTTP layer answered, which holds no message).

use crate::common;
#[path = "../../tests/support/recorder.rs"]
mod recorder;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Child;
use std::thread;

#[test]
fn a_stdio_session_is_passed_through_and_written_a_message_a_line() {
    let dir = common::scratch("record-stdio");
    let out = dir.join("session.ndjson");
    let input = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"x\"}";
    let run = common::run(
        &["record", "--out", out.to_str().unwrap(), "--", "cat"],
        Some(input.as_bytes()),
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, input);
    // Each line once each way: the client's, then the server's echo.
    let written = std::fs::read_to_string(&out).unwrap();
    assert_eq!(written.lines().count(), 4, "{written}");
    assert!(
        written.lines().all(|line| input.contains(line)),
        "{written}"
    );
}

/// A server answering three requests, one a connection: the bodies it was sent.
fn server(listener: TcpListener) -> thread::JoinHandle<Vec<(String, String)>> {
    thread::spawn(move || {
        let mut seen = Vec::new();
        for _ in 0..3 {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            let mut length = 0;
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                    length = value.trim().parse().unwrap();
                }
                if line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let mut body = vec![0; length];
            reader.read_exact(&mut body).unwrap();
            let body = String::from_utf8(body).unwrap();
            let mut stream = stream;
            let reply: &[u8] = if head.starts_with("GET") {
                b"HTTP/1.1 405 Method Not Allowed\r\ncontent-type: application/problem+json\r\n\
                  content-length: 17\r\n\r\n{\"status\":405.0}\n"
            } else if body.contains("tools/list") {
                b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 46\r\n\r\n\
                  {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"tools\":[]}}"
            } else {
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                  transfer-encoding: chunked\r\n\r\n\
                  43\r\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/x\"}\n\n\r\n\
                  17\r\ndata: {\"jsonrpc\":\"2.0\",\r\n\
                  28\r\n\ndata: \"id\":2,\"result\":{\"content\":[]}}\n\n\r\n0\r\n\r\n"
            };
            stream.write_all(reply).unwrap();
            seen.push((head, body));
        }
        seen
    })
}

/// `atr record --http origin`, started in scratch directory `name`: the process, the address
/// it said it listens on, and the recording's path.
fn recorder(name: &str, origin: &str) -> (Child, String, PathBuf) {
    let out = common::scratch(name).join("session.ndjson");
    let (recorder, address) = recorder::start(&common::atr_path(), &out, origin);
    let address = address.trim_start_matches("http://").to_owned();
    (recorder, address, out)
}

/// Sends `request` to the proxy at `address`; the response's body as the client read it.
fn ask(address: &str, request: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response.split_once("\r\n\r\n").unwrap().1.to_owned()
}

#[test]
fn an_http_session_is_passed_through_and_written_a_message_a_line() {
    let upstream = TcpListener::bind("127.0.0.1:0").unwrap();
    let origin = format!("http://{}", upstream.local_addr().unwrap());
    let seen = server(upstream);
    let (mut recorder, address, out) = recorder("record-http", &origin);

    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let listed = ask(
        &address,
        &format!(
            "POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n\
             accept-encoding: gzip, br\r\ncontent-length: {}\r\n\r\n{list}",
            list.len()
        ),
    );
    assert_eq!(listed, r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#);
    // A body sent in chunks, answered by an event stream in chunks.
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"t"}}"#;
    let (first, second) = call.split_at(20);
    let streamed = ask(
        &address,
        &format!(
            "POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json; charset=utf-8\r\n\
             transfer-encoding: chunked\r\n\r\n{:x}\r\n{first}\r\n{:x}\r\n{second}\r\n0\r\n\r\n",
            first.len(),
            second.len()
        ),
    );
    assert!(streamed.contains("notifications/x"), "{streamed}");
    let refused = ask(&address, "GET /mcp HTTP/1.1\r\nhost: x\r\n\r\n");
    assert_eq!(refused, "{\"status\":405.0}\n");
    recorder.kill().unwrap();
    recorder.wait().unwrap();

    // The server was sent each request as it came, addressed to itself.
    let seen = seen.join().unwrap();
    assert_eq!(seen[0].1, list);
    assert_eq!(seen[1].1, call);
    for (head, _) in &seen {
        assert!(head.contains(&format!("host: {}", &origin[7..])), "{head}");
        assert!(head.contains(" /mcp HTTP/1.1"), "{head}");
        // Bodies come as they are, for the recording to read.
        assert!(
            !head.to_ascii_lowercase().contains("accept-encoding"),
            "{head}"
        );
    }
    // Every message, in the order it passed; the event on two `data:` lines is one message.
    let written = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = written.lines().collect();
    assert_eq!(
        lines,
        [
            list,
            r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
            call,
            r#"{"jsonrpc":"2.0","method":"notifications/x"}"#,
            r#"{"jsonrpc":"2.0", "id":2,"result":{"content":[]}}"#,
        ]
    );
}

#[test]
fn a_server_that_is_not_there_is_a_bad_gateway() {
    // A port nothing listens on: bound, then let go.
    let gone = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let (mut recorder, address, _) = recorder("record-gone", &format!("http://{gone}"));
    let mut stream = TcpStream::connect(&address).unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\n{}")
        .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    recorder.kill().unwrap();
    recorder.wait().unwrap();
    assert!(response.starts_with("HTTP/1.1 502 "), "{response}");
    assert!(response.contains("cannot reach"), "{response}");
}
