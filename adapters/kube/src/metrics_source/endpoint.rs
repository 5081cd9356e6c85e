//! HTTP to a monitoring system (Prometheus, Elasticsearch) with the client the API already uses
//! (kube's hyper and rustls stack): no proxy, no retry, certificate checks unless
//! `tls.insecureSkipVerify`, basic authentication when a user name is set.

use bytes::Bytes;
use http::{Request, StatusCode};
use kube::client::Body;
use kube::config::AuthInfo;
use kube::{Client, Config};

/// A client for `address` (a URL; a path in it prefixes every request's).
pub fn client_for(
    address: &str,
    insecure_skip_verify: bool,
    basic_auth: Option<(&str, &str)>,
) -> Result<Client, String> {
    let url = address
        .parse()
        .map_err(|e| format!("metrics address {address:?}: {e}"))?;
    let mut config = Config::new(url);
    config.accept_invalid_certs = insecure_skip_verify;
    config.default_retry = false;
    if let Some((user, password)) = basic_auth {
        config.auth_info = AuthInfo {
            username: Some(user.to_string()),
            password: Some(password.to_string().into()),
            ..AuthInfo::default()
        };
    }
    Client::try_from(config).map_err(|e| format!("metrics address {address:?}: {e}"))
}

/// Sends `request`; the answer's status and body, whatever the status.
pub async fn fetch(
    client: &Client,
    request: Request<Vec<u8>>,
) -> Result<(StatusCode, Bytes), String> {
    let response = client
        .send(request.map(Body::from))
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status();
    let body = response
        .into_body()
        .collect_bytes()
        .await
        .map_err(|e| e.to_string())?;
    Ok((status, body))
}

/// `text` with every byte but RFC 3986's unreserved ones percent-encoded, for a query value.
pub fn encode_query_value(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 3);
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(
            encode_query_value(r#"up{instance="n1"}[5m] / 2"#),
            "up%7Binstance%3D%22n1%22%7D%5B5m%5D%20%2F%202"
        );
    }

    #[test]
    fn an_address_that_is_no_url_is_named() {
        let Err(e) = client_for("http://exa mple:9090", false, None) else {
            panic!("an address with a space was taken");
        };
        assert!(e.contains("exa mple"), "{e}");
    }
}
