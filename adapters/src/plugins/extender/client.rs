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
        serde_json::from_slice(&bytes).map_err(|e| format!("{verb}: decoding the answer: {e}"))
    }

    /// Sends `body` to `verb`, ignoring the answer's body.
    pub fn notify(&self, verb: &str, body: &impl Serialize) -> Result<(), String> {
        self.post(verb, body).map(drop)
    }
}
