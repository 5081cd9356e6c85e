//! Start-up's first request, `GET /version`: is the API server there, and is it one? A server
//! that cannot be reached, or is not ready (it refuses the credentials while its
//! authentication or RBAC is still starting, or answers 429 or 5xx), is retried for
//! `API_SERVER_WAIT`, each failure logged with the server's address; an endpoint that answers
//! as no Kubernetes API server does stops start-up at once. Without this check the first
//! symptom was a minute of anonymous connect errors and then `cannot create queue root`.

use std::future::Future;
use std::time::Duration;

use kube::Client;
use tokio::time::Instant;

/// How long start-up waits for an unreachable API server.
pub const API_SERVER_WAIT: Duration = Duration::from_secs(30);
/// The longest one attempt may take.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);
/// The pause between two attempts.
const RETRY_PAUSE: Duration = Duration::from_secs(2);

/// What one attempt found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Worth another try: no connection, no answer in time, or a server not ready yet.
    Retry(String),
    /// Trying again will not help.
    Fatal(String),
}

/// The error and its causes on one line (`client error (Connect): tcp connect error: ...`),
/// each cause once: layers of the HTTP stack repeat their inner error's text.
fn with_causes(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.contains(&said) {
            text.push_str(&format!(": {said}"));
        }
        cause = c.source();
    }
    text
}

/// Sorts a failed `GET /version` into a problem that says what is wrong.
fn classify(e: &kube::Error) -> Problem {
    match e {
        kube::Error::Api(status) if status.code == 401 || status.code == 403 => {
            Problem::Retry(format!(
                "refuses the scheduler's credentials (GET /version: {} {})",
                status.code, status.message
            ))
        }
        kube::Error::Api(status) if status.code == 429 || status.code >= 500 => {
            Problem::Retry(format!(
                "is not ready (GET /version: {} {})",
                status.code, status.message
            ))
        }
        kube::Error::Api(status) => Problem::Fatal(format!(
            "answers, but not as a Kubernetes API server (GET /version: {} {})",
            status.code, status.message
        )),
        kube::Error::SerdeError(_) => Problem::Fatal(format!(
            "answers, but not as a Kubernetes API server (GET /version: {})",
            with_causes(e)
        )),
        kube::Error::Auth(_) | kube::Error::RustlsTls(_) => Problem::Fatal(with_causes(e)),
        _ => Problem::Retry(format!("cannot connect: {}", with_causes(e))),
    }
}

/// Waits until `client`'s API server at `host` answers `GET /version`, for at most `bound`.
pub async fn wait_for_api_server(
    client: &Client,
    host: &str,
    bound: Duration,
) -> Result<(), String> {
    retry_within(host, bound, |limit| async move {
        match tokio::time::timeout(limit, client.apiserver_version()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(classify(&e)),
            Err(_) => Err(Problem::Retry(format!(
                "no answer within {}s",
                limit.as_secs_f32()
            ))),
        }
    })
    .await
}

/// Runs `attempt` (given how long it may take) until it succeeds, fails for good, or `bound`
/// has passed; every failure is logged naming `host`.
async fn retry_within<F, Fut>(host: &str, bound: Duration, mut attempt: F) -> Result<(), String>
where
    F: FnMut(Duration) -> Fut,
    Fut: Future<Output = Result<(), Problem>>,
{
    let deadline = Instant::now() + bound;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let why = match attempt(left.min(ATTEMPT_TIMEOUT).max(Duration::from_millis(100))).await {
            Ok(()) => return Ok(()),
            Err(Problem::Fatal(why)) => return Err(format!("API server {host} {why}")),
            Err(Problem::Retry(why)) => why,
        };
        if Instant::now() + RETRY_PAUSE >= deadline {
            return Err(format!(
                "API server {host} did not answer GET /version for {}s, giving up: {why}",
                bound.as_secs()
            ));
        }
        tracing::warn!(
            "API server {host}: {why}; retrying for up to {}s",
            bound.as_secs()
        );
        tokio::time::sleep(RETRY_PAUSE).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn client_for(addr: std::net::SocketAddr) -> Client {
        let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        Client::try_from(config).unwrap()
    }

    #[derive(Debug)]
    struct Layer(&'static str, Option<Box<Layer>>);

    impl std::fmt::Display for Layer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Layer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|l| l as _)
        }
    }

    #[test]
    fn causes_are_chained_each_once() {
        let e = Layer(
            "ServiceError: client error (Connect)",
            Some(Box::new(Layer(
                "client error (Connect)",
                Some(Box::new(Layer(
                    "tcp connect error: Connection refused",
                    None,
                ))),
            ))),
        );
        assert_eq!(
            with_causes(&e),
            "ServiceError: client error (Connect): tcp connect error: Connection refused"
        );
    }

    #[tokio::test]
    async fn a_closed_port_is_named_and_given_up_on_within_the_bound() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let started = std::time::Instant::now();
        let e = wait_for_api_server(&client_for(addr), &addr.to_string(), Duration::from_secs(3))
            .await
            .unwrap_err();
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );
        assert!(
            e.starts_with(&format!(
                "API server {addr} did not answer GET /version for 3s, giving up: cannot connect: "
            )),
            "{e}"
        );
    }

    #[tokio::test]
    async fn an_endpoint_that_is_no_api_server_is_refused_at_once() {
        let addr = serving(
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello".into(),
        )
        .await;
        let e = wait_for_api_server(&client_for(addr), "web", Duration::from_secs(30))
            .await
            .unwrap_err();
        assert!(
            e.starts_with(
                "API server web answers, but not as a Kubernetes API server (GET /version: "
            ),
            "{e}"
        );
    }

    /// A server that answers every request with `answer`, a whole HTTP response.
    async fn serving(answer: String) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = listener.accept().await {
                let mut request = [0u8; 4096];
                let _ = s.read(&mut request).await;
                let _ = s.write_all(answer.as_bytes()).await;
            }
        });
        addr
    }

    /// A server that answers every request with `status` and a Kubernetes `Status` body.
    async fn answering(status: u16) -> std::net::SocketAddr {
        let body = format!(
            r#"{{"kind":"Status","apiVersion":"v1","status":"Failure","message":"not yet","code":{status}}}"#
        );
        serving(format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ))
        .await
    }

    #[tokio::test]
    async fn refused_credentials_are_retried_as_a_starting_server_may_refuse_them() {
        let addr = answering(403).await;
        let started = std::time::Instant::now();
        let e = wait_for_api_server(&client_for(addr), "rbac", Duration::from_secs(3))
            .await
            .unwrap_err();
        assert!(
            started.elapsed() >= Duration::from_secs(2),
            "retried, not given up at once"
        );
        assert!(
            e.starts_with("API server rbac did not answer GET /version for 3s, giving up: refuses the scheduler's credentials (GET /version: 403"),
            "{e}"
        );
    }

    #[tokio::test]
    async fn an_endpoint_that_never_answers_is_given_up_on_within_the_bound() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((s, _)) = listener.accept().await {
                open.push(s);
            }
        });
        let started = std::time::Instant::now();
        let e = wait_for_api_server(&client_for(addr), "silent", Duration::from_secs(3))
            .await
            .unwrap_err();
        held.abort();
        assert!(
            started.elapsed() < Duration::from_secs(6),
            "{:?}",
            started.elapsed()
        );
        assert!(e.contains("no answer within"), "{e}");
    }
}
