//! Volcano's `send`: `POST <urlPrefix>/<verb>` with a JSON body; anything but 200 is an error,
//! and a response body over 10 MiB is refused. An `https://` prefix is verified against the CA
//! bundle of `extender.caFile`, or the system's trust store without one.

use std::sync::Arc;
use std::time::Duration;

use ureq::tls::{Certificate, PemItem, RootCerts, TlsConfig};

use serde::Serialize;
use serde::de::DeserializeOwned;

/// Volcano's `maxBodySize`.
const MAX_BODY: u64 = 10 << 20;

/// An HTTP client for one extender, keeping connections alive between calls.
#[derive(Debug)]
pub struct Client {
    agent: ureq::Agent,
    url_prefix: String,
}

/// The certificates (DER) of a PEM bundle; the error says what is wrong with the file.
pub fn ca_bundle(path: &str) -> Result<Vec<Vec<u8>>, String> {
    let pem = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let mut certs = Vec::new();
    for item in ureq::tls::parse_pem(&pem) {
        if let PemItem::Certificate(c) = item.map_err(|e| format!("not PEM: {e}"))? {
            certs.push(c.der().to_vec());
        }
    }
    if certs.is_empty() {
        return Err("no PEM certificate in it".into());
    }
    Ok(certs)
}

/// The roots an `https` extender's certificate must chain to: `ca` (DER), else the system's.
fn tls_config(ca: &[Vec<u8>]) -> TlsConfig {
    let roots: Vec<Certificate<'static>> = if ca.is_empty() {
        rustls_native_certs::load_native_certs()
            .certs
            .iter()
            .map(|der| Certificate::from_der(der).to_owned())
            .collect()
    } else {
        ca.iter()
            .map(|der| Certificate::from_der(der).to_owned())
            .collect()
    };
    TlsConfig::builder()
        .root_certs(RootCerts::new_with_certs(&roots))
        .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .build()
}

impl Client {
    /// A client for the extender at `url_prefix`, each call bounded by `timeout`; `ca` are the
    /// roots of an `https` extender (empty: the system's).
    pub fn new(url_prefix: &str, timeout: Duration, ca: &[Vec<u8>]) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .tls_config(tls_config(ca))
            .build()
            .into();
        Client {
            agent,
            url_prefix: url_prefix.trim_end_matches('/').to_string(),
        }
    }

    fn post(
        &self,
        verb: &str,
        body: &impl Serialize,
    ) -> Result<ureq::http::Response<ureq::Body>, String> {
        let url = format!("{}/{verb}", self.url_prefix);
        let json = serde_json::to_vec(body).map_err(|e| e.to_string())?;
        let resp = self
            .agent
            .post(&url)
            .header("Content-Type", "application/json")
            .send(&json[..])
            .map_err(|e| format!("{verb} with extender at URL {url}: {e}"))?;
        if resp.status() != 200 {
            return Err(format!(
                "failed {verb} with extender at URL {url}, code {}",
                resp.status().as_u16()
            ));
        }
        Ok(resp)
    }

    /// Sends `body` to `verb` and decodes the answer.
    pub fn call<R: DeserializeOwned>(
        &self,
        verb: &str,
        body: &impl Serialize,
    ) -> Result<R, String> {
        let mut resp = self.post(verb, body)?;
        let bytes = resp
            .body_mut()
            .with_config()
            .limit(MAX_BODY)
            .read_to_vec()
            .map_err(|e| format!("{verb}: reading the answer: {e}"))?;
        super::wire::decode(verb, &bytes)
    }

    /// Sends `body` to `verb`, ignoring the answer's body.
    pub fn notify(&self, verb: &str, body: &impl Serialize) -> Result<(), String> {
        self.post(verb, body).map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_dir::TestDir;
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    use std::io::{Read, Write};

    /// A CA and a `localhost` certificate it signs, made with the `openssl` tool in `dir`.
    fn certificates(dir: &TestDir) {
        let script = "set -e
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=test-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout key.pem -out leaf.csr -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost\\nbasicConstraints=CA:FALSE\\n' > ext
openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cert.pem -days 1 -extfile ext 2>/dev/null";
        let status = std::process::Command::new("sh")
            .args(["-c", script])
            .current_dir(dir.path())
            .status()
            .expect("sh runs");
        assert!(status.success(), "openssl makes the test certificates");
    }

    /// Serves HTTPS on a free port: every request is answered `200 {"ok":true}`.
    fn https_extender(dir: &TestDir) -> u16 {
        let cert = CertificateDer::pem_file_iter(dir.join("cert.pem"))
            .unwrap()
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let key = PrivateKeyDer::from_pem_file(dir.join("key.pem")).unwrap();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(cert, key)
        .unwrap();
        let config = Arc::new(config);
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for tcp in listener.incoming().flatten() {
                let conn = rustls::ServerConnection::new(config.clone()).unwrap();
                let mut tls = rustls::StreamOwned::new(conn, tcp);
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                let complete = |r: &[u8]| {
                    let text = String::from_utf8_lossy(r);
                    let Some(end) = text.find("\r\n\r\n") else {
                        return false;
                    };
                    let length = text
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    r.len() >= end + 4 + length
                };
                while !complete(&request) {
                    match tls.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => request.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tls.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nConnection: close\r\n\r\n{\"ok\":true}",
                );
                let _ = tls.flush();
            }
        });
        port
    }

    #[test]
    fn an_https_extender_is_verified_against_the_ca_bundle() {
        let dir = TestDir::new(&[]);
        certificates(&dir);
        let port = https_extender(&dir);
        let url = format!("https://localhost:{port}");
        let ca = ca_bundle(dir.join("ca.pem").to_str().unwrap()).unwrap();
        let answer: serde_json::Value = Client::new(&url, Duration::from_secs(5), &ca)
            .call("predicate", &serde_json::json!({}))
            .unwrap();
        assert_eq!(answer, serde_json::json!({"ok": true}));
        let e = Client::new(&url, Duration::from_secs(5), &[])
            .call::<serde_json::Value>("predicate", &serde_json::json!({}))
            .unwrap_err();
        assert!(
            e.contains("certificate"),
            "the system's roots do not know the test CA: {e}"
        );
    }

    #[test]
    fn a_ca_file_without_certificates_is_refused() {
        let dir = TestDir::new(&[("ca.pem", "not a certificate\n")]);
        assert_eq!(
            ca_bundle(dir.join("ca.pem").to_str().unwrap()),
            Err("no PEM certificate in it".to_string())
        );
    }
}
