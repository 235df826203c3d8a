//! `atr record --http`: a Streamable HTTP MCP server's session, recorded by a proxy between
//! the client and the server. Each request is passed to the server as it came (on a
//! connection of its own), and each response back as it comes, an event stream event by
//! event; every JSON-RPC message either way (a request's body, a JSON response's body, an
//! event's `data`) is appended to the recording as one line, in the order it passed.
//!
//! Plain HTTP/1.1 only, as a test or a CI job runs a server: on loopback or a private network.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// The recording, shared by every exchange.
pub type Log = Arc<Mutex<BufWriter<File>>>;

/// The headers the recorder does not pass on: each hop's own, the framing it sets itself (a
/// request's body is read whole before it is passed on: nothing is left to `expect`), and
/// `accept-encoding`, so that the server answers with bodies the recorder can read as they
/// are (the client, which asked, reads those too).
const HOP_BY_HOP: [&str; 10] = [
    "accept-encoding",
    "connection",
    "expect",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "content-length",
];

/// Serves on `listen`, passing every exchange to `upstream` (the server's origin,
/// `http://host:port`) and recording its messages in `log`, until the process is stopped.
pub fn serve(listen: &str, upstream: &str, log: &Log) -> Result<(), String> {
    let authority = origin(upstream)?;
    let listener =
        TcpListener::bind(listen).map_err(|err| format!("cannot listen on {listen}: {err}"))?;
    let local = listener
        .local_addr()
        .map_err(|err| format!("cannot listen on {listen}: {err}"))?;
    eprintln!("atr: recording http://{local} for {upstream}");
    for client in listener.incoming() {
        let Ok(client) = client else { continue };
        let (authority, log) = (authority.clone(), Arc::clone(log));
        std::thread::spawn(move || {
            // A client or a server that leaves mid-exchange ends that exchange alone.
            let _ = exchange(client, &authority, &log);
        });
    }
    Ok(())
}

/// The `host:port` of an `http://host:port` origin (a trailing `/` allowed).
fn origin(upstream: &str) -> Result<String, String> {
    let rest = upstream.strip_prefix("http://").ok_or_else(|| {
        format!(
            "--http takes the server's origin over plain HTTP (http://host:port), not {upstream}"
        )
    })?;
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.is_empty() || authority.contains('/') {
        return Err(format!(
            "--http takes the server's origin (http://host:port): the client's paths are \
             passed on as they are, not {upstream}"
        ));
    }
    Ok(if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    })
}

/// A message's head: its first line and its headers.
struct Head {
    line: String,
    headers: Vec<(String, String)>,
}

impl Head {
    /// Reads a head; `None` at the end of the stream.
    fn read(from: &mut impl BufRead) -> io::Result<Option<Head>> {
        let mut line = String::new();
        if from.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if from.read_line(&mut header)? == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "a head cut short",
                ));
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
            }
        }
        Ok(Some(Head {
            line: line.trim_end().to_owned(),
            headers,
        }))
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header == name)
            .map(|(_, value)| value.as_str())
    }

    fn chunked(&self) -> bool {
        self.header("transfer-encoding")
            .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"))
    }

    /// Whether the body is JSON (`application/json`, the media type JSON-RPC is sent as).
    fn json(&self) -> bool {
        self.header("content-type").is_some_and(|kind| {
            kind.split(';')
                .next()
                .is_some_and(|kind| kind.trim().eq_ignore_ascii_case("application/json"))
        })
    }

    fn length(&self) -> Option<usize> {
        self.header("content-length")?.parse().ok()
    }

    /// The head as sent on: its line, its end-to-end headers, then `extra`.
    fn write(&self, to: &mut impl Write, extra: &[(&str, String)]) -> io::Result<()> {
        write!(to, "{}\r\n", self.line)?;
        for (name, value) in &self.headers {
            if !HOP_BY_HOP.contains(&name.as_str()) && name != "host" {
                write!(to, "{name}: {value}\r\n")?;
            }
        }
        for (name, value) in extra {
            write!(to, "{name}: {value}\r\n")?;
        }
        to.write_all(b"\r\n")
    }
}

/// One request and its response.
fn exchange(client: TcpStream, authority: &str, log: &Log) -> io::Result<()> {
    let mut from_client = BufReader::new(client.try_clone()?);
    let mut to_client = client;
    let Some(request) = Head::read(&mut from_client)? else {
        return Ok(());
    };
    let mut body = Vec::new();
    if request.chunked() {
        Body::Chunked.each(&mut from_client, |piece| {
            body.extend_from_slice(piece);
            Ok(())
        })?;
    } else if let Some(length) = request.length() {
        body.resize(length, 0);
        from_client.read_exact(&mut body)?;
    }
    if request.json() {
        record(log, &body)?;
    }
    let mut upstream = match TcpStream::connect(authority) {
        Ok(upstream) => upstream,
        Err(err) => {
            // The server is not there: the client is told so, as a gateway tells it.
            let said = format!("atr record: cannot reach {authority}: {err}\n");
            write!(
                to_client,
                "HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\ncontent-length: {}\r\n\
                 connection: close\r\n\r\n{said}",
                said.len()
            )?;
            return to_client.flush();
        }
    };
    request.write(
        &mut upstream,
        &[
            ("host", authority.to_owned()),
            ("content-length", body.len().to_string()),
            ("connection", "close".to_owned()),
        ],
    )?;
    upstream.write_all(&body)?;
    upstream.flush()?;

    let mut from_server = BufReader::new(upstream);
    let Some(response) = Head::read(&mut from_server)? else {
        return Ok(());
    };
    let status = response.line.split(' ').nth(1).unwrap_or_default();
    let framing = if request.line.starts_with("HEAD ") || matches!(status, "204" | "304") {
        Body::Length(0)
    } else if response.chunked() {
        Body::Chunked
    } else if let Some(length) = response.length() {
        Body::Length(length)
    } else {
        Body::ToTheEnd
    };
    let mut extra = vec![("connection", "close".to_owned())];
    match framing {
        Body::Chunked => extra.push(("transfer-encoding", "chunked".to_owned())),
        Body::Length(length) => extra.push(("content-length", length.to_string())),
        Body::ToTheEnd => {}
    }
    response.write(&mut to_client, &extra)?;
    to_client.flush()?;
    // JSON-RPC comes as JSON or as an event stream; anything else (a problem the HTTP layer
    // answered, say) holds no message.
    let events = response
        .header("content-type")
        .is_some_and(|kind| kind.starts_with("text/event-stream"));
    let mut messages = Messages::new(events, events || response.json());
    framing.each(&mut from_server, |piece| {
        if matches!(framing, Body::Chunked) {
            write!(to_client, "{:x}\r\n", piece.len())?;
            to_client.write_all(piece)?;
            to_client.write_all(b"\r\n")?;
        } else {
            to_client.write_all(piece)?;
        }
        to_client.flush()?;
        messages.feed(piece, log)
    })?;
    if matches!(framing, Body::Chunked) {
        to_client.write_all(b"0\r\n\r\n")?;
        to_client.flush()?;
    }
    messages.finish(log)
}

/// How a body is framed.
#[derive(Clone, Copy)]
enum Body {
    /// In chunks.
    Chunked,
    /// So many bytes.
    Length(usize),
    /// Until the connection closes.
    ToTheEnd,
}

impl Body {
    /// Reads the body from `from`, giving each piece to `each` as it arrives.
    fn each(
        self,
        from: &mut impl BufRead,
        mut each: impl FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        let mut buffer = vec![0; 16 << 10];
        match self {
            Body::Chunked => loop {
                let mut size = String::new();
                from.read_line(&mut size)?;
                let size = size.split(';').next().unwrap_or_default().trim();
                let size = usize::from_str_radix(size, 16)
                    .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "a chunk's size"))?;
                if size == 0 {
                    // Trailers, to the empty line.
                    let mut line = String::new();
                    while from.read_line(&mut line)? > 0 && !line.trim_end().is_empty() {
                        line.clear();
                    }
                    return Ok(());
                }
                exactly(from, size, &mut buffer, &mut each)?;
                let mut end = String::new();
                from.read_line(&mut end)?;
            },
            Body::Length(length) => exactly(from, length, &mut buffer, &mut each),
            Body::ToTheEnd => loop {
                let read = from.read(&mut buffer)?;
                if read == 0 {
                    return Ok(());
                }
                each(&buffer[..read])?;
            },
        }
    }
}

/// Reads `length` bytes from `from` through `buffer`, giving each piece to `each`.
fn exactly(
    from: &mut impl BufRead,
    mut length: usize,
    buffer: &mut [u8],
    each: &mut impl FnMut(&[u8]) -> io::Result<()>,
) -> io::Result<()> {
    while length > 0 {
        let take = length.min(buffer.len());
        let read = from.read(&mut buffer[..take])?;
        if read == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        each(&buffer[..read])?;
        length -= read;
    }
    Ok(())
}

/// The messages of a response body: the whole body (JSON), or each event's data (an event
/// stream), recorded as each is complete.
struct Messages {
    events: bool,
    /// Whether the body holds messages at all.
    recorded: bool,
    /// The body so far, or the event stream's line not yet ended.
    pending: Vec<u8>,
    /// The current event's data lines.
    data: Vec<u8>,
}

impl Messages {
    fn new(events: bool, recorded: bool) -> Self {
        Messages {
            events,
            recorded,
            pending: Vec::new(),
            data: Vec::new(),
        }
    }

    fn feed(&mut self, piece: &[u8], log: &Log) -> io::Result<()> {
        if !self.recorded {
            return Ok(());
        }
        self.pending.extend_from_slice(piece);
        if !self.events {
            return Ok(());
        }
        while let Some(end) = memchr::memchr(b'\n', &self.pending) {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            let line = line.strip_suffix(b"\n").unwrap_or(&line);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() {
                // The event is complete: its data is one message.
                record(log, &std::mem::take(&mut self.data))?;
            } else if let Some(data) = crate::jsonrpc::event_data(line) {
                if !self.data.is_empty() {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(data);
            }
        }
        Ok(())
    }

    fn finish(self, log: &Log) -> io::Result<()> {
        if self.events {
            record(log, &self.data)
        } else {
            record(log, &self.pending)
        }
    }
}

/// Appends `message` to the recording as one line (a message's line breaks, which JSON has
/// only between tokens, made spaces), and writes it out at once: what a stopped recorder
/// leaves is whole.
fn record(log: &Log, message: &[u8]) -> io::Result<()> {
    let message: Vec<u8> = message
        .iter()
        .map(|&byte| {
            if byte == b'\n' || byte == b'\r' {
                b' '
            } else {
                byte
            }
        })
        .collect();
    let message = message.trim_ascii();
    if message.is_empty() {
        return Ok(());
    }
    let mut log = log.lock().map_err(|_| io::Error::other("the log's lock"))?;
    log.write_all(message)?;
    log.write_all(b"\n")?;
    log.flush()
}

#[cfg(test)]
mod tests {
    use super::origin;

    #[test]
    fn the_upstream_is_an_origin() {
        assert_eq!(origin("http://127.0.0.1:8080").unwrap(), "127.0.0.1:8080");
        assert_eq!(origin("http://localhost/").unwrap(), "localhost:80");
        for refused in ["https://a:1", "http://a:1/mcp", "a:1", "http://"] {
            assert!(origin(refused).is_err(), "{refused}");
        }
    }
}
