//! TLS for the HTTP endpoints, from Volcano's certificate flags: `--tls-cert-file` and
//! `--tls-private-key-file` (PEM) identify the server, and `--ca-cert-file`, when given, is the
//! CA a client certificate must chain to when a client presents one (Volcano:
//! staging/src/volcano.sh/apis/pkg/apis/helpers/helpers.go, StartHealthz, which asks for a
//! client certificate the same way: verified if given).

use std::sync::Arc;

use rustls::RootCertStore;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ServerConfig, WebPkiClientVerifier};

/// The PEM files of a TLS server, as flag values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsFiles {
    pub cert: String,
    pub key: String,
    /// CA bundle for client certificates; empty when clients are not asked for one.
    pub client_ca: String,
}

fn certificates(flag: &str, path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_file_iter(path)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("--{flag}={path}: {e}"))?;
    if certs.is_empty() {
        return Err(format!("--{flag}={path}: no PEM certificate in it"));
    }
    Ok(certs)
}

/// The server's TLS configuration (TLS 1.2 and 1.3, HTTP/1.1); the error names the flag and
/// file at fault.
pub fn server_config(files: &TlsFiles) -> Result<Arc<ServerConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let certs = certificates("tls-cert-file", &files.cert)?;
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| format!("--tls-private-key-file={}: {e}", files.key))?;
    let builder = ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?;
    let builder = if files.client_ca.is_empty() {
        builder.with_no_client_auth()
    } else {
        let mut roots = RootCertStore::empty();
        for ca in certificates("ca-cert-file", &files.client_ca)? {
            roots
                .add(ca)
                .map_err(|e| format!("--ca-cert-file={}: {e}", files.client_ca))?;
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
            .allow_unauthenticated()
            .build()
            .map_err(|e| format!("--ca-cert-file={}: {e}", files.client_ca))?;
        builder.with_client_cert_verifier(verifier)
    };
    let mut config = builder
        .with_single_cert(certs, key)
        .map_err(|e| format!("--tls-cert-file/--tls-private-key-file: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(cert: &str, key: &str) -> TlsFiles {
        TlsFiles {
            cert: cert.into(),
            key: key.into(),
            client_ca: String::new(),
        }
    }

    #[test]
    fn a_missing_certificate_file_is_named_with_its_flag() {
        let e = server_config(&files("/nonexistent/c.pem", "/nonexistent/k.pem")).unwrap_err();
        assert!(e.starts_with("--tls-cert-file=/nonexistent/c.pem: "), "{e}");
    }

    #[test]
    fn a_file_without_a_certificate_is_refused_by_flag() {
        let path = std::env::temp_dir().join(format!("tephra-tls-{}.pem", std::process::id()));
        std::fs::write(&path, "not PEM\n").unwrap();
        let p = path.display().to_string();
        let e = server_config(&files(&p, &p)).unwrap_err();
        let _ = std::fs::remove_file(&path);
        assert_eq!(e, format!("--tls-cert-file={p}: no PEM certificate in it"));
    }
}
