//! The HTTP endpoints: `/metrics` (and `/debug/pprof`, see `pprof`) on `--listen-address`,
//! `/healthz` on `--healthz-address`, each in plain HTTP or over TLS (`tls`). Go-style
//! addresses (`:8080`) listen on every interface.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::routing::get;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use crate::metrics::Metrics;
use crate::pprof::{self, PprofState};

/// A Go listen address (`:8080`, `127.0.0.1:8080`, `[::1]:8080`) as a socket address.
pub fn listen_addr(flag: &str, value: &str) -> Result<SocketAddr, String> {
    let full = if value.starts_with(':') {
        format!("0.0.0.0{value}")
    } else {
        value.to_string()
    };
    full.parse()
        .map_err(|_| format!("--{flag}={value}: not host:port"))
}

/// The router of `--listen-address`.
pub fn metrics_router(metrics: Option<Metrics>, pprof: Option<PprofState>) -> Router {
    let mut r = Router::new();
    if let Some(m) = metrics {
        r = r.route(
            "/metrics",
            get(move || {
                let m = m.clone();
                async move {
                    (
                        [("content-type", "text/plain; version=0.0.4; charset=utf-8")],
                        m.scrape(),
                    )
                }
            }),
        );
    }
    match pprof {
        Some(state) => pprof::routes(r, state),
        None => r,
    }
}

/// The router of `--healthz-address`.
pub fn healthz_router() -> Router {
    Router::new().route("/healthz", get(|| async { "ok" }))
}

/// Serves `router` on `addr` until the process ends, over TLS when `tls` is given; a bind
/// failure is returned, else the address bound.
pub async fn serve(
    addr: SocketAddr,
    router: Router,
    tls: Option<Arc<ServerConfig>>,
) -> std::io::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let bound = listener.local_addr()?;
    match tls {
        None => {
            tokio::spawn(async move {
                if let Err(e) = axum::serve(listener, router).await {
                    tracing::error!("HTTP server on {addr}: {e}");
                }
            });
        }
        Some(config) => {
            tokio::spawn(serve_tls(listener, router, TlsAcceptor::from(config)));
        }
    }
    Ok(bound)
}

/// Accepts connections, each handshaken and served on its own task; a failed handshake is
/// logged and drops only that connection.
async fn serve_tls(listener: tokio::net::TcpListener, router: Router, acceptor: TlsAcceptor) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!("HTTPS server: accept: {e}");
                continue;
            }
        };
        let acceptor = acceptor.clone();
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            let tls = match acceptor.accept(stream).await {
                Ok(tls) => tls,
                Err(e) => {
                    tracing::debug!("HTTPS server: TLS handshake with {peer}: {e}");
                    return;
                }
            };
            let served = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(tls), service)
                .await;
            if let Err(e) = served {
                tracing::debug!("HTTPS server: connection from {peer}: {e}");
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tls::{TlsFiles, server_config};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A CA and a `localhost` certificate it signs, made with the `openssl` tool in `dir`.
    fn certificates(dir: &std::path::Path) {
        let script = "set -e
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.pem -days 1 -subj /CN=test-ca 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout key.pem -out leaf.csr -subj /CN=localhost 2>/dev/null
printf 'subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n' > ext
openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out cert.pem -days 1 -extfile ext 2>/dev/null";
        let status = std::process::Command::new("sh")
            .args(["-c", script])
            .current_dir(dir)
            .status()
            .expect("sh runs");
        assert!(status.success(), "openssl makes the test certificates");
    }

    #[tokio::test]
    async fn healthz_is_served_over_tls_with_the_certificate_flags_files() {
        let dir = std::env::temp_dir().join(format!("tephra-https-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        certificates(&dir);
        let file = |name: &str| dir.join(name).display().to_string();
        let config = server_config(&TlsFiles {
            cert: file("cert.pem"),
            key: file("key.pem"),
            client_ca: file("ca.pem"),
        })
        .unwrap();
        let addr = serve(
            "127.0.0.1:0".parse().unwrap(),
            healthz_router(),
            Some(config),
        )
        .await
        .unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots
            .add(CertificateDer::from_pem_file(file("ca.pem")).unwrap())
            .unwrap();
        let client = rustls::ClientConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let mut tls = tokio_rustls::TlsConnector::from(Arc::new(client))
            .connect(ServerName::try_from("localhost").unwrap(), tcp)
            .await
            .unwrap();
        tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            .await
            .unwrap();
        let mut answer = String::new();
        tls.read_to_string(&mut answer).await.unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        assert!(answer.starts_with("HTTP/1.1 200 OK"), "{answer}");
        assert!(answer.ends_with("ok"), "{answer}");
    }

    #[test]
    fn go_addresses_are_understood() {
        assert_eq!(
            listen_addr("listen-address", ":8080").unwrap(),
            "0.0.0.0:8080".parse().unwrap()
        );
        assert_eq!(listen_addr("x", "127.0.0.1:9").unwrap().port(), 9);
        let e = listen_addr("healthz-address", "nope").unwrap_err();
        assert!(e.contains("--healthz-address=nope"), "{e}");
    }
}
