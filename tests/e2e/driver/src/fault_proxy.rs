//! The chaos scenarios' fault proxy, between vc-scheduler and the API server. It terminates TLS
//! with the API server's own certificate (vc-scheduler's kubeconfig changes only its address),
//! forwards each request through a connection pool of its own, and injects the faults a
//! scenario sets while it runs: a share of requests answered 429 or 500, or whose connection is
//! dropped before the request goes on or after its answer came back (a write that landed
//! though its client saw it fail); open watches cut, and the next watch of each resource
//! answered 410 Gone as the API server answers a watch from a compacted resourceVersion (the
//! API server's own answer to an old version cannot be relied on: it serves some resources'
//! old versions from etcd until etcd compacts them, every five minutes); bindings held until
//! released; someone else's
//! binding of a pod landing just before vc-scheduler's. A request goes on from a task of its
//! own, so one its client gave up on still lands, as it does on a real server. Every binding's
//! answer is recorded (no pod may be bound twice) and every injected fault counted (a scenario
//! asserts its faults happened).

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use anyhow::{Context, Result};
use bytes::Bytes;
use futures::StreamExt;
use futures::future::BoxFuture;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, BodyStream, Full, StreamBody};
use hyper::body::Incoming;
use hyper::http::request::Parts;
use hyper::{Method, Request, Response, StatusCode};
use hyper_rustls::HttpsConnector;
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::env::Env;

type BoxError = Box<dyn std::error::Error + Send + Sync>;
type ProxyBody = BoxBody<Bytes, BoxError>;

/// Shares of requests that meet each fault, each in 0..=1, their sum at most 1.
#[derive(Debug, Clone, Copy, Default)]
pub struct Shares {
    /// Answered 429 Too Many Requests with `Retry-After: 1`, as the API server's priority and
    /// fairness answers.
    pub too_many_requests: f64,
    /// Answered 500 Internal Server Error.
    pub server_error: f64,
    /// The connection dropped before the request goes on.
    pub dropped: f64,
    /// The request goes on, then the connection dropped before its answer.
    pub answer_lost: f64,
}

/// A binding the proxy sent on, and the API server's answer (None: none came).
#[derive(Debug, Clone)]
pub struct BindAnswer {
    pub namespace: String,
    pub pod: String,
    pub status: Option<u16>,
    pub at: Instant,
}

/// Someone else binding a pod: called with the steal's number (from 0), the pod's namespace and
/// its name.
pub type Steal = Arc<dyn Fn(usize, String, String) -> BoxFuture<'static, Result<()>> + Send + Sync>;

/// What a request is, for the faults that target a kind.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Watch,
    Binding { namespace: String, pod: String },
    Other,
}

impl Kind {
    fn of(parts: &Parts) -> Kind {
        let path = parts.uri.path();
        let query = parts.uri.query().unwrap_or("");
        if parts.method == Method::GET
            && query
                .split('&')
                .any(|p| p == "watch=true" || p == "watch=1")
        {
            return Kind::Watch;
        }
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        match segments[..] {
            ["api", "v1", "namespaces", namespace, "pods", pod, "binding"]
                if parts.method == Method::POST =>
            {
                Kind::Binding {
                    namespace: namespace.to_string(),
                    pod: pod.to_string(),
                }
            }
            _ => Kind::Other,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    TooManyRequests,
    ServerError,
    Dropped,
    AnswerLost,
}

impl Fault {
    fn name(self) -> &'static str {
        match self {
            Fault::TooManyRequests => "429",
            Fault::ServerError => "500",
            Fault::Dropped => "dropped",
            Fault::AnswerLost => "answer lost",
        }
    }
}

/// Someone else's bindings: every how many bindings, at most how many, and who.
struct Stealing {
    every: u64,
    max: usize,
    steal: Steal,
}

struct Shared {
    upstream: String,
    client: Client<HttpsConnector<HttpConnector>, Full<Bytes>>,
    shares: Mutex<Shares>,
    stealing: Mutex<Option<Stealing>>,
    requests: AtomicU64,
    bindings: AtomicU64,
    steals: AtomicU64,
    stolen: Mutex<Vec<String>>,
    /// Answers of 500 and above, and requests that got none, whatever the proxy injected.
    upstream_errors: AtomicU64,
    injected: Mutex<BTreeMap<&'static str, u64>>,
    answers: Mutex<Vec<BindAnswer>>,
    /// Non-watch GETs by path.
    reads: Mutex<BTreeMap<String, u64>>,
    /// Bumped to cut every open watch.
    cut: watch::Sender<u64>,
    /// True while bindings wait.
    bindings_held: watch::Sender<bool>,
    waiting_bindings: AtomicU64,
    /// True while the watches to be expired wait.
    watches_held: watch::Sender<bool>,
    /// While armed, the resource paths whose watch was expired already.
    expired: Mutex<Option<HashSet<String>>>,
}

/// splitmix64: a well-spread number from a request's sequence number, so the faults fall the
/// same way on every run that sends the same requests.
fn spread(n: u64) -> u64 {
    let mut z = n.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A number in [0, 1) for request `n`.
fn unit(n: u64) -> f64 {
    (spread(n) >> 11) as f64 / (1u64 << 53) as f64
}

impl Shared {
    fn count(&self, what: &'static str) {
        *self
            .injected
            .lock()
            .expect("fault counts")
            .entry(what)
            .or_default() += 1;
    }

    fn pick(&self, n: u64) -> Option<Fault> {
        let s = *self.shares.lock().expect("fault shares");
        let u = unit(n);
        let mut edge = 0.0;
        for (share, fault) in [
            (s.too_many_requests, Fault::TooManyRequests),
            (s.server_error, Fault::ServerError),
            (s.dropped, Fault::Dropped),
            (s.answer_lost, Fault::AnswerLost),
        ] {
            edge += share;
            if u < edge {
                return Some(fault);
            }
        }
        None
    }

    /// True when this watch of `path` is the one to expire: the first since `expire_watches`.
    fn expires(&self, path: &str) -> bool {
        let mut expired = self.expired.lock().expect("expired watches");
        expired
            .as_mut()
            .is_some_and(|done| done.insert(path.to_string()))
    }

    /// The steal's number when this binding is to be preceded by someone else's.
    fn steal_number(&self) -> Option<(usize, Steal)> {
        let stealing = self.stealing.lock().expect("stealing");
        let s = stealing.as_ref()?;
        let n = self.bindings.fetch_add(1, Ordering::SeqCst);
        if n % s.every != s.every - 1 {
            return None;
        }
        let k = self.steals.fetch_add(1, Ordering::SeqCst) as usize;
        (k < s.max).then(|| (k, s.steal.clone()))
    }
}

/// A running fault proxy.
pub struct FaultProxy {
    pub port: u16,
    shared: Arc<Shared>,
    accept: JoinHandle<()>,
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

fn server_config(env: &Env) -> Result<Arc<rustls::ServerConfig>> {
    let cert = env.certs.join("apiserver.crt");
    let key = env.certs.join("apiserver.key");
    let certs = CertificateDer::pem_file_iter(&cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .with_context(|| cert.display().to_string())?;
    let key = PrivateKeyDer::from_pem_file(&key).with_context(|| key.display().to_string())?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

fn upstream_client(env: &Env) -> Result<Client<HttpsConnector<HttpConnector>, Full<Bytes>>> {
    let ca = env.certs.join("ca.crt");
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&ca).with_context(|| ca.display().to_string())? {
        roots.add(c.with_context(|| ca.display().to_string())?)?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_root_certificates(roots)
        .with_no_client_auth();
    let https = hyper_rustls::HttpsConnectorBuilder::new()
        .with_tls_config(tls)
        .https_only()
        .enable_http1()
        .build();
    Ok(Client::builder(TokioExecutor::new()).build(https))
}

impl FaultProxy {
    /// Starts a proxy to the API server on a free loopback port, injecting nothing yet.
    pub async fn start(env: &Env) -> Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let acceptor = tokio_rustls::TlsAcceptor::from(server_config(env)?);
        let shared = Arc::new(Shared {
            upstream: env.server.trim_end_matches('/').to_string(),
            client: upstream_client(env)?,
            shares: Mutex::new(Shares::default()),
            stealing: Mutex::new(None),
            requests: AtomicU64::new(0),
            bindings: AtomicU64::new(0),
            steals: AtomicU64::new(0),
            stolen: Mutex::new(Vec::new()),
            upstream_errors: AtomicU64::new(0),
            injected: Mutex::new(BTreeMap::new()),
            answers: Mutex::new(Vec::new()),
            reads: Mutex::new(BTreeMap::new()),
            cut: watch::channel(0).0,
            bindings_held: watch::channel(false).0,
            waiting_bindings: AtomicU64::new(0),
            watches_held: watch::channel(false).0,
            expired: Mutex::new(None),
        });
        let serving = shared.clone();
        let accept = tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, shared) = (acceptor.clone(), serving.clone());
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service =
                        hyper::service::service_fn(move |req| handle(shared.clone(), req));
                    // A connection ends in an error whenever a fault drops it: nothing to report.
                    hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await
                        .ok();
                });
            }
        });
        Ok(FaultProxy {
            port,
            shared,
            accept,
        })
    }

    /// Writes a kubeconfig for the proxy with `token` as `<work>/<name>.kubeconfig`.
    pub fn kubeconfig(&self, env: &Env, name: &str, token: &str) -> Result<PathBuf> {
        let path = env.work.join(format!("{name}.kubeconfig"));
        let server = format!("https://127.0.0.1:{}", self.port);
        std::fs::write(&path, env.token_kubeconfig_at(&server, token))?;
        Ok(path)
    }

    /// Sets the shares of requests that meet each fault from now on.
    pub fn set_shares(&self, shares: Shares) {
        *self.shared.shares.lock().expect("fault shares") = shares;
    }

    /// From now on every `every`-th binding, `max` at most, is preceded by `steal`'s.
    pub fn steal_bindings(&self, every: u64, max: usize, steal: Steal) {
        *self.shared.stealing.lock().expect("stealing") = Some(Stealing {
            every: every.max(1),
            max,
            steal,
        });
    }

    /// Cuts the open watches (their streams end in an error, as when a connection drops) and
    /// holds the next watch of each resource until `release_watches`, then answers it 410 Gone.
    /// Returns how many watches were cut.
    pub fn expire_watches(&self) -> usize {
        *self.shared.expired.lock().expect("expired watches") = Some(HashSet::new());
        self.shared.watches_held.send_replace(true);
        let open = self.shared.cut.receiver_count();
        self.shared.cut.send_modify(|n| *n += 1);
        for _ in 0..open {
            self.shared.count("watch cut");
        }
        open
    }

    /// Lets the held watches have their 410.
    pub fn release_watches(&self) {
        self.shared.watches_held.send_replace(false);
    }

    /// Holds bindings (true) until released (false); held bindings still land when their
    /// client is gone meanwhile.
    pub fn hold_bindings(&self, hold: bool) {
        self.shared.bindings_held.send_replace(hold);
    }

    /// Bindings waiting now.
    pub fn waiting_bindings(&self) -> u64 {
        self.shared.waiting_bindings.load(Ordering::SeqCst)
    }

    /// Faults injected so far, by kind.
    pub fn injected(&self) -> BTreeMap<&'static str, u64> {
        self.shared.injected.lock().expect("fault counts").clone()
    }

    /// Faults of one kind injected so far.
    pub fn injected_of(&self, what: &str) -> u64 {
        self.injected().get(what).copied().unwrap_or(0)
    }

    /// The answers to every binding sent on so far.
    pub fn bind_answers(&self) -> Vec<BindAnswer> {
        self.shared.answers.lock().expect("bind answers").clone()
    }

    /// The pods whose binding someone else made first.
    pub fn stolen_pods(&self) -> Vec<String> {
        self.shared.stolen.lock().expect("stolen").clone()
    }

    /// Requests the API server answered 500 or above, or not at all.
    pub fn upstream_errors(&self) -> u64 {
        self.shared.upstream_errors.load(Ordering::SeqCst)
    }

    /// Non-watch GETs of `path` so far (a list, for a collection's path).
    pub fn reads_of(&self, path: &str) -> u64 {
        let reads = self.shared.reads.lock().expect("reads");
        reads.get(path).copied().unwrap_or(0)
    }
}

/// A `v1.Status` answer, as the API server writes one.
fn status_answer(code: StatusCode, reason: &str) -> Result<Response<ProxyBody>, BoxError> {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": format!("{reason} (injected by the e2e fault proxy)"), "reason": reason,
        "code": code.as_u16()});
    let mut answer = Response::builder()
        .status(code)
        .header("content-type", "application/json");
    if code == StatusCode::TOO_MANY_REQUESTS {
        answer = answer.header("retry-after", "1");
    }
    Ok(answer.body(
        Full::new(Bytes::from(body.to_string()))
            .map_err(|never| match never {})
            .boxed(),
    )?)
}

/// The answer the API server gives a watch from a resourceVersion it no longer holds (its
/// watch cache's `too old resource version`): 200, then one ERROR event with a 410 Status.
fn expired_answer(parts: &Parts) -> Result<Response<ProxyBody>, BoxError> {
    let version = parts
        .uri
        .query()
        .unwrap_or("")
        .split('&')
        .find_map(|p| p.strip_prefix("resourceVersion="))
        .unwrap_or("0");
    let event = json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1",
        "metadata": {}, "status": "Failure", "reason": "Expired", "code": 410,
        "message": format!("too old resource version: {version} (compacted by the e2e fault proxy)")}});
    Ok(Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .body(
            Full::new(Bytes::from(format!("{event}\n")))
                .map_err(|never| match never {})
                .boxed(),
        )?)
}

/// A watch's answer that ends in an error when the watches are cut.
fn cuttable(body: Incoming, cut: watch::Receiver<u64>) -> ProxyBody {
    let frames = BodyStream::new(body);
    let stream = futures::stream::unfold(Some((frames, cut)), |state| async move {
        let (mut frames, mut cut) = state?;
        tokio::select! {
            frame = frames.next() => {
                frame.map(|f| (f.map_err(BoxError::from), Some((frames, cut))))
            }
            _ = cut.changed() => Some((Err(BoxError::from("watch cut by the e2e fault proxy")), None)),
        }
    });
    BodyExt::boxed(StreamBody::new(stream))
}

/// Sends one request on, after the waits and steals its kind meets; its answer or why none.
async fn send_on(
    shared: Arc<Shared>,
    parts: Parts,
    body: Bytes,
    kind: Kind,
) -> Result<Response<Incoming>, BoxError> {
    let path_and_query = parts.uri.path_and_query().map_or("/", |p| p.as_str());
    if let Kind::Binding { namespace, pod } = &kind {
        let mut held = shared.bindings_held.subscribe();
        if *held.borrow() {
            shared.waiting_bindings.fetch_add(1, Ordering::SeqCst);
            shared.count("binding held");
            let released = held.wait_for(|held| !held).await.map(|_| ());
            shared.waiting_bindings.fetch_sub(1, Ordering::SeqCst);
            released?;
        }
        if let Some((k, steal)) = shared.steal_number() {
            steal(k, namespace.clone(), pod.clone())
                .await
                .map_err(|e| BoxError::from(format!("{e:#}")))?;
            shared.count("binding stolen");
            shared.stolen.lock().expect("stolen").push(pod.clone());
        }
    }
    let mut upstream = Request::builder()
        .method(parts.method)
        .uri(format!("{}{path_and_query}", shared.upstream));
    for (name, value) in &parts.headers {
        if name != hyper::header::HOST {
            upstream = upstream.header(name, value);
        }
    }
    let answer = shared.client.request(upstream.body(Full::new(body))?).await;
    if answer
        .as_ref()
        .map_or(true, |a| a.status().is_server_error())
    {
        shared.upstream_errors.fetch_add(1, Ordering::SeqCst);
    }
    if let Kind::Binding { namespace, pod } = kind {
        shared
            .answers
            .lock()
            .expect("bind answers")
            .push(BindAnswer {
                namespace,
                pod,
                status: answer.as_ref().ok().map(|a| a.status().as_u16()),
                at: Instant::now(),
            });
    }
    Ok(answer?)
}

async fn handle(
    shared: Arc<Shared>,
    request: Request<Incoming>,
) -> Result<Response<ProxyBody>, BoxError> {
    let (parts, body) = request.into_parts();
    let body = body.collect().await?.to_bytes();
    let kind = Kind::of(&parts);
    if parts.method == Method::GET && kind == Kind::Other {
        *shared
            .reads
            .lock()
            .expect("reads")
            .entry(parts.uri.path().to_string())
            .or_default() += 1;
    }
    let fault = shared.pick(shared.requests.fetch_add(1, Ordering::SeqCst));
    if let Some(f) = fault {
        shared.count(f.name());
        if matches!(kind, Kind::Binding { .. }) {
            shared.count("binding fault");
        }
    }
    match fault {
        Some(Fault::TooManyRequests) => {
            return status_answer(StatusCode::TOO_MANY_REQUESTS, "TooManyRequests");
        }
        Some(Fault::ServerError) => {
            return status_answer(StatusCode::INTERNAL_SERVER_ERROR, "InternalError");
        }
        Some(Fault::Dropped) => return Err("connection dropped by the e2e fault proxy".into()),
        Some(Fault::AnswerLost) | None => {}
    }
    if kind == Kind::Watch && shared.expires(parts.uri.path()) {
        shared
            .watches_held
            .subscribe()
            .wait_for(|held| !held)
            .await?;
        shared.count("watch expired");
        return expired_answer(&parts);
    }
    let cut = (kind == Kind::Watch).then(|| shared.cut.subscribe());
    let answer = tokio::spawn(send_on(shared, parts, body, kind)).await??;
    if fault == Some(Fault::AnswerLost) {
        return Err("answer dropped by the e2e fault proxy".into());
    }
    Ok(match cut {
        Some(cut) => answer.map(|b| cuttable(b, cut)),
        None => answer.map(|b| b.map_err(BoxError::from).boxed()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(method: Method, uri: &str) -> Parts {
        Request::builder()
            .method(method)
            .uri(uri)
            .body(())
            .unwrap()
            .into_parts()
            .0
    }

    #[test]
    fn requests_are_told_apart_by_method_path_and_watch_parameter() {
        assert_eq!(
            Kind::of(&parts(
                Method::GET,
                "/api/v1/pods?watch=true&resourceVersion=5"
            )),
            Kind::Watch
        );
        assert_eq!(
            Kind::of(&parts(Method::GET, "/api/v1/pods?limit=500")),
            Kind::Other
        );
        assert_eq!(
            Kind::of(&parts(
                Method::POST,
                "/api/v1/namespaces/ns/pods/p-1/binding"
            )),
            Kind::Binding {
                namespace: "ns".into(),
                pod: "p-1".into()
            }
        );
        assert_eq!(
            Kind::of(&parts(
                Method::GET,
                "/api/v1/namespaces/ns/pods/p-1/binding"
            )),
            Kind::Other
        );
    }

    #[test]
    fn an_expired_watch_is_answered_as_the_api_server_does() {
        let p = parts(
            Method::GET,
            "/api/v1/pods?allowWatchBookmarks=true&resourceVersion=4242&watch=true",
        );
        let answer = expired_answer(&p).unwrap();
        assert_eq!(answer.status(), StatusCode::OK);
        let body = futures::executor::block_on(answer.into_body().collect())
            .unwrap()
            .to_bytes();
        let event: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(event["type"], "ERROR");
        assert_eq!(event["object"]["code"], 410);
        assert!(
            event["object"]["message"]
                .as_str()
                .unwrap()
                .starts_with("too old resource version: 4242 ")
        );
    }

    #[test]
    fn faults_fall_on_about_their_share_of_requests() {
        let hits = (0..10_000u64).filter(|&n| unit(n) < 0.1).count();
        assert!((900..1100).contains(&hits), "{hits} of 10000 under 0.1");
    }
}
