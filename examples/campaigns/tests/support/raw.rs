//! HTTP as it goes over the wire: a request sent byte for byte over one TCP connection, and
//! the response read until the server closes, for requests an HTTP client would not send.

use std::time::Duration;

use super::hold_to_document;

/// A response read off the wire by [`raw`]: status, headers (names lowercase), body.
#[derive(Clone)]
pub struct Raw {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Raw {
    /// Every value of header `name`.
    pub fn header(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// Sends `head` (the request line and header fields, without the blank line) and `body` as
/// they are over one TCP connection to `base`, and reads the response until the server
/// closes: for requests an HTTP client would not send (two `Authorization` headers, a forged
/// `Host`, oversized heads).
pub fn raw(base: &str, head: &str, body: &[u8]) -> Raw {
    use std::fmt::Write as _;
    use std::io::{Read, Write};
    let addr = base.strip_prefix("http://").unwrap();
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut request = head.replace('\n', "\r\n");
    if !request.contains("\r\nHost:") && !request.contains("\r\nhost:") {
        let _ = write!(request, "\r\nHost: {addr}");
    }
    let _ = write!(
        request,
        "\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let split = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no response head: {:?}", String::from_utf8_lossy(&bytes)));
    let head = String::from_utf8_lossy(&bytes[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let mut body = bytes[split + 4..].to_vec();
    if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        body = dechunk(&body);
    }
    let raw = Raw {
        status,
        headers,
        body,
    };
    // Held to the document like every other response; the request line says what was asked.
    let mut request_line = request.split(' ');
    if let (Some(method), Some(path)) = (request_line.next(), request_line.next())
        && let Ok(status) = http::StatusCode::from_u16(raw.status)
    {
        let mut response = http::Response::new(raw.body.clone());
        *response.status_mut() = status;
        for (name, value) in &raw.headers {
            if let (Ok(name), Ok(value)) = (
                http::HeaderName::from_bytes(name.as_bytes()),
                http::HeaderValue::from_str(value),
            ) {
                response.headers_mut().append(name, value);
            }
        }
        hold_to_document(base, method, path, &response);
    }
    raw
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&body[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&body[end + 2..end + 2 + size]);
        body = &body[end + 2 + size + 2..];
    }
    out
}
