//! client-go's request metrics, which a Volcano scheduler serves from the k8s legacy registry
//! (k8s.io/component-base metrics/prometheus/restclient/metrics.go at v0.36): every API
//! request counted by code, method and host, timed, and sized, and the client-side rate
//! limiter's wait. The k8s registry prefixes alpha metrics' help with `[ALPHA] `.
//!
//! A tower layer on the API client sees each request; it sits outside kube's stack, so it
//! sees a request as kube sends it (retries inside kube's stack count once). A response's size
//! is its `Content-Length` when it has one (client-go counts the bytes it read; watches, whose
//! body streams, it does not count).

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http::{Request, Response};
use http_body::Body;
use prometheus::{CounterVec, HistogramOpts, HistogramVec, Opts};

use super::Registrar;

/// client-go's latency buckets, in seconds.
const LATENCY: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];
/// client-go's size buckets, in bytes.
const SIZE: [f64; 11] = [
    64.0, 256.0, 512.0, 1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0,
    16777216.0,
];

/// The request metrics.
#[derive(Debug, Clone)]
pub struct RestClientMetrics {
    requests: CounterVec,
    duration: HistogramVec,
    request_size: HistogramVec,
    response_size: HistogramVec,
    rate_limiter: HistogramVec,
}

impl RestClientMetrics {
    pub(super) fn register(r: &Registrar) -> Result<RestClientMetrics, prometheus::Error> {
        let histogram = |name: &str, help: &str, buckets: &[f64]| {
            r.histograms(
                HistogramOpts::new(name, format!("[ALPHA] {help}")).buckets(buckets.to_vec()),
                &["verb", "host"],
            )
        };
        Ok(RestClientMetrics {
            requests: r.counters(
                Opts::new(
                    "rest_client_requests_total",
                    "[ALPHA] Number of HTTP requests, partitioned by status code, method, and host.",
                ),
                &["code", "method", "host"],
            )?,
            duration: histogram(
                "rest_client_request_duration_seconds",
                "Request latency in seconds. Broken down by verb, and host.",
                &LATENCY,
            )?,
            request_size: histogram(
                "rest_client_request_size_bytes",
                "Request size in bytes. Broken down by verb and host.",
                &SIZE,
            )?,
            response_size: histogram(
                "rest_client_response_size_bytes",
                "Response size in bytes. Broken down by verb and host.",
                &SIZE,
            )?,
            rate_limiter: histogram(
                "rest_client_rate_limiter_duration_seconds",
                "Client side rate limiter latency in seconds. Broken down by verb, and host.",
                &LATENCY,
            )?,
        })
    }

    /// The layer that measures the requests sent to `host` (`host:port`).
    pub fn layer(&self, host: &str) -> RequestMetricsLayer {
        RequestMetricsLayer {
            metrics: self.clone(),
            host: host.to_string(),
        }
    }

    /// A request of `verb` to `host` waited `waited` for the client's rate limiter.
    pub fn rate_limited(&self, verb: &str, host: &str, waited: Duration) {
        self.rate_limiter
            .with_label_values(&[verb, host])
            .observe(waited.as_secs_f64());
    }

    /// One request answered `code` (`None`: it failed before an answer).
    fn answered(
        &self,
        method: &str,
        host: &str,
        code: Option<u16>,
        took: Duration,
        sizes: (u64, Option<u64>),
    ) {
        let code = code.map_or_else(|| "<error>".to_string(), |c| c.to_string());
        self.requests
            .with_label_values(&[&code, method, host])
            .inc();
        let labels = [method, host];
        self.duration
            .with_label_values(&labels)
            .observe(took.as_secs_f64());
        self.request_size
            .with_label_values(&labels)
            .observe(sizes.0 as f64);
        if let Some(size) = sizes.1 {
            self.response_size
                .with_label_values(&labels)
                .observe(size as f64);
        }
    }
}

/// Wraps the API client's service in `RequestMetrics`.
#[derive(Debug, Clone)]
pub struct RequestMetricsLayer {
    metrics: RestClientMetrics,
    host: String,
}

impl<S> tower_layer::Layer<S> for RequestMetricsLayer {
    type Service = RequestMetrics<S>;

    fn layer(&self, inner: S) -> RequestMetrics<S> {
        RequestMetrics {
            inner,
            metrics: self.metrics.clone(),
            host: self.host.clone(),
        }
    }
}

/// The API client's service, each request measured.
#[derive(Debug, Clone)]
pub struct RequestMetrics<S> {
    inner: S,
    metrics: RestClientMetrics,
    host: String,
}

impl<S, ReqBody, ResBody> tower_service::Service<Request<ReqBody>> for RequestMetrics<S>
where
    S: tower_service::Service<Request<ReqBody>, Response = Response<ResBody>>,
    S::Future: Send + 'static,
    ReqBody: Body,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<ReqBody>) -> Self::Future {
        let method = req.method().as_str().to_string();
        let hint = req.body().size_hint();
        let sent = hint.exact().unwrap_or(hint.lower());
        let answer = self.inner.call(req);
        let (metrics, host) = (self.metrics.clone(), self.host.clone());
        let started = Instant::now();
        Box::pin(async move {
            let result = answer.await;
            let (code, received) = match &result {
                Ok(r) => (Some(r.status().as_u16()), content_length(r)),
                Err(_) => (None, None),
            };
            metrics.answered(&method, &host, code, started.elapsed(), (sent, received));
            result
        })
    }
}

fn content_length<B>(r: &Response<B>) -> Option<u64> {
    r.headers()
        .get(http::header::CONTENT_LENGTH)?
        .to_str()
        .ok()?
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use tower_layer::Layer;
    use tower_service::Service;

    use super::super::Metrics;

    /// An API server that answers every request with `status` and a 14-byte body.
    #[derive(Clone)]
    struct Answering(u16);

    impl Service<http::Request<String>> for Answering {
        type Response = http::Response<String>;
        type Error = Infallible;
        type Future = std::future::Ready<Result<http::Response<String>, Infallible>>;

        fn poll_ready(
            &mut self,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Result<(), Infallible>> {
            std::task::Poll::Ready(Ok(()))
        }

        fn call(&mut self, _: http::Request<String>) -> Self::Future {
            let body = "{\"kind\":\"Pod\"}".to_string();
            std::future::ready(Ok(http::Response::builder()
                .status(self.0)
                .header("content-length", body.len())
                .body(body)
                .unwrap()))
        }
    }

    #[tokio::test]
    async fn each_request_is_counted_timed_and_sized_as_client_go_does() {
        let m = Metrics::new().unwrap();
        let mut svc = m.rest_client.layer("10.0.0.1:6443").layer(Answering(201));
        let req = http::Request::post("/api/v1/namespaces/ns/pods/p/binding")
            .body("x".repeat(100))
            .unwrap();
        svc.call(req).await.unwrap();
        m.rest_client.rate_limited(
            "POST",
            "10.0.0.1:6443",
            std::time::Duration::from_millis(30),
        );
        let t = m.render();
        for line in [
            "rest_client_requests_total{code=\"201\",host=\"10.0.0.1:6443\",method=\"POST\"} 1",
            "rest_client_request_duration_seconds_count{host=\"10.0.0.1:6443\",verb=\"POST\"} 1",
            "rest_client_request_size_bytes_bucket{host=\"10.0.0.1:6443\",verb=\"POST\",le=\"256\"} 1",
            "rest_client_request_size_bytes_bucket{host=\"10.0.0.1:6443\",verb=\"POST\",le=\"64\"} 0",
            "rest_client_response_size_bytes_sum{host=\"10.0.0.1:6443\",verb=\"POST\"} 14",
            "rest_client_rate_limiter_duration_seconds_bucket{host=\"10.0.0.1:6443\",verb=\"POST\",le=\"0.025\"} 0",
            "rest_client_rate_limiter_duration_seconds_bucket{host=\"10.0.0.1:6443\",verb=\"POST\",le=\"0.1\"} 1",
            "# HELP rest_client_requests_total [ALPHA] Number of HTTP requests, partitioned by status code, method, and host.",
        ] {
            assert!(t.contains(line), "no {line} in\n{t}");
        }
    }
}
