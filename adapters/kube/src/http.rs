//! The HTTP endpoints: `/metrics` (and `/debug/pprof`, see `pprof`) on `--listen-address`,
//! `/healthz` on `--healthz-address`. Go-style addresses (`:8080`) listen on every interface.

use std::net::SocketAddr;

use axum::Router;
use axum::routing::get;

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

/// Serves `router` on `addr` until the process ends; a bind failure is returned.
pub async fn serve(addr: SocketAddr, router: Router) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tokio::spawn(async move {
        if let Err(e) = axum::serve(listener, router).await {
            tracing::error!("HTTP server on {addr}: {e}");
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
