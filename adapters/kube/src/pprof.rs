//! `/debug/pprof` on `--listen-address` with `--enable-pprof` (Volcano serves Go's
//! net/http/pprof there: cmd/scheduler/app/server.go, startMetricsServer). tephra has no Go runtime, so its
//! paths are its own where Go's would make no sense: `profile` (a CPU profile `go tool pprof`
//! reads), `flamegraph` (the same as SVG), `cycle` (phase timings and a flamegraph per phase of
//! the next cycles), `heap` (the allocator's counters; no heap profile exists) and `cmdline`.
//! Only one profile runs at a time; a second request gets 409.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use tephra_adapters::profiling::{
    CPU_PROFILE_HZ, CpuProfile, CycleTimings, ProfilerClaim, RenderedPhase, claim_profiler,
    heap_stats_text, record_cpu_profile,
};
use tokio::sync::oneshot;

use crate::cycle_profile::{CycleProfileRequest, CycleProfileRequests};

/// `seconds` when a profile request names none (Go's default).
pub const DEFAULT_PROFILE_SECONDS: u64 = 30;
/// The longest CPU profile served: Volcano's server has a 60-second write timeout
/// (cmd/scheduler/app/server.go, startMetricsServer), and Go's profile handler refuses a
/// profile that would outlast it.
pub const MAX_PROFILE_SECONDS: u64 = 59;
/// The most cycles one `/debug/pprof/cycle` request profiles.
pub const MAX_PROFILED_CYCLES: usize = 100;

const INDEX: &str = "tephra /debug/pprof:\n\
    profile?seconds=N     CPU profile, pprof protobuf (go tool pprof), N 1..59, default 30\n\
    flamegraph?seconds=N  CPU profile as an SVG flamegraph\n\
    cycle?n=K             phase timings and a flamegraph per phase of the next K cycles (JSON), K 1..100, default 1\n\
    heap?debug=1          the allocator's (mimalloc's) counters as text; no heap profile exists\n\
    cmdline               the command line, NUL-separated\n";

/// What the endpoints need: the loop's mailbox for cycle profiles and its period (how long a
/// cycle request may wait).
#[derive(Clone)]
pub struct PprofState {
    pub cycle_requests: Arc<CycleProfileRequests>,
    pub schedule_period: Duration,
}

/// Adds the `/debug/pprof` routes to `router`.
pub fn routes(router: Router, state: PprofState) -> Router {
    router
        .route("/debug/pprof/", get(|| async { INDEX }))
        .route(
            "/debug/pprof/cmdline",
            get(|| async { std::env::args().collect::<Vec<_>>().join("\0") }),
        )
        .route("/debug/pprof/profile", get(profile))
        .route("/debug/pprof/flamegraph", get(flamegraph))
        .route("/debug/pprof/heap", get(heap))
        .route(
            "/debug/pprof/cycle",
            get(move |uri: Uri| cycle(uri, state.clone())),
        )
        .route(
            "/debug/pprof/{*profile}",
            get(|| async {
                let message = format!("Go runtime profiles do not exist in tephra.\n{INDEX}");
                (StatusCode::NOT_IMPLEMENTED, message)
            }),
        )
}

/// The value of query parameter `name`.
fn query_param<'a>(uri: &'a Uri, name: &str) -> Option<&'a str> {
    uri.query()?
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
        .find_map(|(k, v)| (k == name).then_some(v))
}

/// `name` as a whole number from 1 to `max`, `default` when absent.
fn bounded_param(uri: &Uri, name: &str, default: u64, max: u64) -> Result<u64, String> {
    let Some(text) = query_param(uri, name) else {
        return Ok(default);
    };
    match text.parse::<u64>() {
        Ok(v) if (1..=max).contains(&v) => Ok(v),
        _ => Err(format!(
            "{name}={text}: expected a whole number from 1 to {max}\n"
        )),
    }
}

/// A refused or failed request: its status and why.
struct Failure(StatusCode, String);

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        (self.0, format!("{}\n", self.1.trim_end())).into_response()
    }
}

fn internal(e: impl std::fmt::Display) -> Failure {
    Failure(StatusCode::INTERNAL_SERVER_ERROR, e.to_string())
}

fn claim(purpose: &'static str) -> Result<ProfilerClaim, Failure> {
    claim_profiler(purpose).map_err(|busy| Failure(StatusCode::CONFLICT, busy.to_string()))
}

/// Takes a CPU profile of `seconds` (from the query) off the async runtime.
async fn cpu_profile(uri: &Uri, purpose: &'static str) -> Result<CpuProfile, Failure> {
    let seconds = bounded_param(uri, "seconds", DEFAULT_PROFILE_SECONDS, MAX_PROFILE_SECONDS)
        .map_err(|e| Failure(StatusCode::BAD_REQUEST, e))?;
    let claim = claim(purpose)?;
    let duration = Duration::from_secs(seconds);
    tokio::task::spawn_blocking(move || record_cpu_profile(&claim, duration, CPU_PROFILE_HZ))
        .await
        .map_err(internal)?
        .map_err(internal)
}

async fn profile(uri: Uri) -> Result<Response, Failure> {
    let profile = cpu_profile(&uri, "/debug/pprof/profile").await?;
    let bytes = profile.to_pprof().map_err(internal)?;
    let headers = [
        (header::CONTENT_TYPE, "application/octet-stream"),
        (
            header::CONTENT_DISPOSITION,
            "attachment; filename=\"profile\"",
        ),
    ];
    Ok((headers, bytes).into_response())
}

async fn flamegraph(uri: Uri) -> Result<Response, Failure> {
    let profile = cpu_profile(&uri, "/debug/pprof/flamegraph").await?;
    let title = format!("vc-scheduler CPU, {} samples", profile.samples());
    let svg = profile.to_flamegraph(&title);
    Ok(([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response())
}

async fn heap(uri: Uri) -> Response {
    if query_param(&uri, "debug").is_some_and(|v| v != "0") {
        return heap_stats_text().into_response();
    }
    (
        StatusCode::NOT_IMPLEMENTED,
        "tephra keeps no heap profile (it samples no allocations); \
         GET /debug/pprof/heap?debug=1 for the allocator's (mimalloc's) counters\n",
    )
        .into_response()
}

/// The answer of `/debug/pprof/cycle`.
#[derive(Serialize)]
struct CycleProfileBody {
    /// Each profiled cycle's phases and their durations.
    cycles: Vec<CycleTimings>,
    /// The sampling rate asked for (the kernel's timer tick may cap it).
    sample_hz: i32,
    /// Each phase's samples over all the cycles, with its flamegraph.
    phases: Vec<RenderedPhase>,
    /// Why samples are missing, if they are.
    problem: Option<String>,
}

/// Withdraws the request from the loop's mailbox when the handler ends (or its client goes)
/// before any cycle picked it up.
struct WithdrawUnanswered<'a> {
    requests: &'a CycleProfileRequests,
    answered: bool,
}

impl Drop for WithdrawUnanswered<'_> {
    fn drop(&mut self) {
        // While this request is unanswered its claim keeps any other out of the mailbox, so
        // what waits there is this one.
        if !self.answered {
            self.requests.withdraw();
        }
    }
}

async fn cycle(uri: Uri, state: PprofState) -> Result<Response, Failure> {
    let cycles = bounded_param(&uri, "n", 1, MAX_PROFILED_CYCLES as u64)
        .map_err(|e| Failure(StatusCode::BAD_REQUEST, e))? as usize;
    let claim = claim("/debug/pprof/cycle")?;
    let (reply, answer) = oneshot::channel();
    state.cycle_requests.submit(CycleProfileRequest {
        cycles,
        claim,
        reply,
    });
    let mut pending = WithdrawUnanswered {
        requests: &state.cycle_requests,
        answered: false,
    };
    let patience =
        (state.schedule_period + Duration::from_secs(5)) * cycles as u32 + Duration::from_secs(60);
    let mut answer = std::pin::pin!(answer);
    let received = match tokio::time::timeout(patience, &mut answer).await {
        Ok(received) => received,
        Err(_) if state.cycle_requests.withdraw() => {
            pending.answered = true;
            return Err(Failure(
                StatusCode::SERVICE_UNAVAILABLE,
                format!(
                    "no scheduling cycle started in {patience:?} (is this scheduler the leader?)"
                ),
            ));
        }
        // The cycles are under way: they end.
        Err(_) => answer.await,
    };
    pending.answered = true;
    let profile = received
        .map_err(|_| internal("the scheduling loop dropped the request"))?
        .map_err(internal)?;
    let body = tokio::task::spawn_blocking(move || CycleProfileBody {
        cycles: profile.cycles.clone(),
        sample_hz: profile.hz,
        problem: profile.problem.clone(),
        phases: profile.render(),
    })
    .await
    .map_err(internal)?;
    let json = serde_json::to_vec(&body).map_err(internal)?;
    Ok(([(header::CONTENT_TYPE, "application/json")], json).into_response())
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;
    use crate::cycle_profile::{ActiveCycleProfile, PROFILER_TESTS};

    fn uri(text: &str) -> Uri {
        text.parse().unwrap()
    }

    /// Serves the pprof routes on a free loopback port.
    async fn serve(requests: Arc<CycleProfileRequests>) -> std::net::SocketAddr {
        let state = PprofState {
            cycle_requests: requests,
            schedule_period: Duration::from_millis(10),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(axum::serve(listener, routes(Router::new(), state)).into_future());
        addr
    }

    /// GET `path`: the status code and the body.
    async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, Vec<u8>) {
        let request = format!("GET {path} HTTP/1.0\r\n\r\n");
        let out = tokio::task::spawn_blocking(move || {
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.write_all(request.as_bytes()).unwrap();
            let mut out = Vec::new();
            s.read_to_end(&mut out).unwrap();
            out
        })
        .await
        .unwrap();
        let split = out.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&out[..split]).to_string();
        let code = head.split(' ').nth(1).unwrap().parse().unwrap();
        (code, out[split + 4..].to_vec())
    }

    fn text(body: &[u8]) -> String {
        String::from_utf8_lossy(body).into_owned()
    }

    #[tokio::test]
    async fn a_bad_seconds_value_is_refused_with_400() {
        let addr = serve(Arc::default()).await;
        let (code, body) = get(addr, "/debug/pprof/profile?seconds=lots").await;
        assert_eq!(code, 400);
        assert!(text(&body).contains("seconds=lots: expected a whole number from 1 to 59"));
        let (code, _) = get(addr, "/debug/pprof/cycle?n=101").await;
        assert_eq!(code, 400);
    }

    #[tokio::test]
    async fn a_profile_while_another_runs_gets_409() {
        let _serial = PROFILER_TESTS.lock().await;
        let addr = serve(Arc::default()).await;
        let held = claim_profiler("a test profile").unwrap();
        for path in ["/debug/pprof/profile?seconds=1", "/debug/pprof/cycle?n=1"] {
            let (code, body) = get(addr, path).await;
            assert_eq!(code, 409, "{path}");
            assert!(text(&body).contains("already being taken (a test profile)"));
        }
        drop(held);
    }

    #[tokio::test]
    async fn a_cpu_profile_and_a_flamegraph_are_served() {
        let _serial = PROFILER_TESTS.lock().await;
        let addr = serve(Arc::default()).await;
        let (code, body) = get(addr, "/debug/pprof/profile?seconds=1").await;
        assert_eq!(code, 200);
        assert!(!body.is_empty(), "an empty profile");
        let (code, body) = get(addr, "/debug/pprof/flamegraph?seconds=1").await;
        assert_eq!(code, 200);
        assert!(text(&body).contains("</svg>"));
    }

    #[tokio::test]
    async fn heap_says_there_is_no_heap_profile_and_gives_counters_on_debug_1() {
        let addr = serve(Arc::default()).await;
        let (code, body) = get(addr, "/debug/pprof/heap").await;
        assert_eq!(code, 501);
        assert!(text(&body).contains("no heap profile"));
        let (code, body) = get(addr, "/debug/pprof/heap?debug=1").await;
        assert_eq!(code, 200);
        assert!(text(&body).contains("current_rss_bytes "));
        let (code, _) = get(addr, "/debug/pprof/goroutine").await;
        assert_eq!(code, 501);
    }

    #[tokio::test]
    async fn a_cycle_profile_answers_with_each_phase_of_the_loops_next_cycles() {
        let _serial = PROFILER_TESTS.lock().await;
        let requests: Arc<CycleProfileRequests> = Arc::default();
        let addr = serve(requests.clone()).await;
        let scheduler_loop = tokio::task::spawn_blocking(move || {
            let mut active = None;
            while active.is_none() {
                std::thread::sleep(Duration::from_millis(5));
                active = ActiveCycleProfile::pick_up(&requests);
            }
            while let Some(mut a) = active {
                a.profiler.begin_cycle();
                for phase in ["snapshot", "open", "allocate", "close"] {
                    a.profiler.enter(phase);
                }
                a.profiler.leave();
                active = a.after_cycle();
            }
        });
        let (code, body) = get(addr, "/debug/pprof/cycle?n=2").await;
        scheduler_loop.await.unwrap();
        assert_eq!(code, 200, "{}", text(&body));
        let json: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(json["cycles"].as_array().unwrap().len(), 2);
        let phases: Vec<&str> = json["phases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["phase"].as_str().unwrap())
            .collect();
        assert_eq!(phases, ["snapshot", "open", "allocate", "close"]);
        assert!(json["phases"][2]["svg"].as_str().unwrap().contains("<svg"));
    }

    #[test]
    fn seconds_default_to_30_and_must_be_1_to_59() {
        let p = |u: &str| bounded_param(&uri(u), "seconds", 30, MAX_PROFILE_SECONDS);
        assert_eq!(p("/debug/pprof/profile"), Ok(30));
        assert_eq!(p("/debug/pprof/profile?seconds=5"), Ok(5));
        assert_eq!(p("/debug/pprof/profile?x=1&seconds=59"), Ok(59));
        for bad in ["0", "60", "-1", "5s", ""] {
            let e = p(&format!("/debug/pprof/profile?seconds={bad}")).unwrap_err();
            assert!(
                e.contains(&format!("seconds={bad}:")) && e.contains("1 to 59"),
                "{e}"
            );
        }
    }
}
