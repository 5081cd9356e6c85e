//! `myplugin` as an out-of-process extender: Volcano's extender protocol (`POST /<verb>` with
//! JSON) answered by a small HTTP/1.1 server on loopback. `predicate` keeps nodes that carry
//! the server's label (`my-label` in the guide); `prioritize` scores used / allocatable cpu × weight; every other verb answers `{}`
//! (or Permit for `jobEnqueueable`); `fail` answers 500 so callers can test their error paths.
//! Requests are logged by verb, so tests can check what the scheduler sent.

use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};

/// A running extender.
#[derive(Debug)]
pub struct Server {
    addr: SocketAddr,
    calls: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Serves on `addr` (port 0 picks a free one) from background threads, requiring `label`
    /// and scaling scores by `weight`.
    pub fn start(addr: &str, label: &str, weight: f64) -> io::Result<Server> {
        let plugin = Arc::new(MyPlugin {
            label: label.to_string(),
            weight,
        });
        let listener = TcpListener::bind(addr)?;
        let server = Server {
            addr: listener.local_addr()?,
            calls: Arc::default(),
        };
        let calls = Arc::clone(&server.calls);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let calls = Arc::clone(&calls);
                let plugin = Arc::clone(&plugin);
                thread::spawn(move || serve_connection(stream, &plugin, &calls));
            }
        });
        Ok(server)
    }

    /// `http://<addr>`, the `extender.urlPrefix` to configure.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The verbs received so far, in order.
    pub fn calls(&self) -> Vec<String> {
        self.calls.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Answers requests on one kept-alive connection until the client closes it.
fn serve_connection(stream: TcpStream, plugin: &MyPlugin, calls: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut writer = stream;
    while let Ok(Some((verb, body))) = read_request(&mut reader) {
        calls
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(verb.clone());
        let response = match plugin.answer(&verb, &body) {
            Some(v) => {
                let text = v.to_string();
                format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{text}",
                    text.len()
                )
            }
            None => "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n".to_string(),
        };
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

/// One request: its path without the leading `/`, and its JSON body (`null` if unparsable).
fn read_request(reader: &mut impl BufRead) -> io::Result<Option<(String, Value)>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let verb = line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .trim_start_matches('/')
        .to_string();
    let mut length = 0;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 || line == "\r\n" {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Some((
        verb,
        serde_json::from_slice(&body).unwrap_or(Value::Null),
    )))
}

/// myplugin's arguments.
#[derive(Debug)]
struct MyPlugin {
    label: String,
    weight: f64,
}

impl MyPlugin {
    /// The answer to `verb`; `None` for `fail`.
    fn answer(&self, verb: &str, body: &Value) -> Option<Value> {
        Some(match verb {
            "predicate" => {
                let labels = &body["node"]["Node"]["metadata"]["labels"];
                if labels.get(&self.label).is_some() {
                    json!({"status": "", "code": 0})
                } else {
                    let message = format!("node(s) didn't have label {}", self.label);
                    json!({"status": message, "code": 3})
                }
            }
            "prioritize" => {
                let nodes = body["nodes"].as_array().cloned().unwrap_or_default();
                let scores: serde_json::Map<String, Value> = nodes
                    .iter()
                    .map(|n| {
                        let alloc = n["Allocatable"]["MilliCPU"].as_f64().unwrap_or(0.0);
                        let used = n["Used"]["MilliCPU"].as_f64().unwrap_or(0.0);
                        let usage = if alloc > 0.0 { used / alloc } else { 0.0 };
                        (
                            n["Name"].as_str().unwrap_or_default().to_string(),
                            json!(usage * self.weight),
                        )
                    })
                    .collect();
                json!({"nodeScore": scores, "errorMessage": ""})
            }
            "jobEnqueueable" => json!({"status": 1}),
            "fail" => return None,
            _ => json!({}),
        })
    }
}
