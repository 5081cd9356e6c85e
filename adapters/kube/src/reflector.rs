//! One kind's list-then-watch loop, as client-go's reflector runs Volcano's informers
//! (k8s.io/client-go/tools/cache/reflector.go, ListAndWatch): list, watch from the list's
//! resource version, resume the watch where it stopped, and list again only when it cannot
//! resume: the server expired that version (410 Gone), or an event came without one.
//!
//! The list is read as it arrives ([`ListItems`]): each object is decoded and handed to the
//! cache while the server is still sending the rest, which on a large cluster is most of
//! start-up.

use std::pin::pin;
use std::time::{Duration, Instant};

use futures::StreamExt;
use futures::io::{AsyncBufRead, AsyncBufReadExt};
use kube::Client;
use kube::api::{Api, ListParams, VersionMatch, WatchEvent, WatchParams};
use kube::core::Resource;
use tephra_cache::ObjectKind;
use tokio::sync::mpsc;

use crate::list_items::ListItems;
use crate::objects::Responsibility;
use crate::watch::{Event, Feed, KindFeed, api_resource};
use crate::watched_object::WatchedObject;

/// The page size of a quorum re-list, as client-go's pager.
const RELIST_PAGE: u32 = 500;
/// How long the server keeps one watch open before it ends it and the loop resumes it.
const WATCH_TIMEOUT_S: u32 = 290;
/// A watch that has said nothing for its timeout and this much longer is taken for dead.
const WATCH_IDLE_GRACE: Duration = Duration::from_secs(5);
/// A watch closed sooner than this without an event counts as failed.
const SHORT_WATCH: Duration = Duration::from_secs(1);
/// The first and the longest wait after a failure (the waits double in between).
const BACKOFF_FIRST: Duration = Duration::from_millis(800);
const BACKOFF_MAX: Duration = Duration::from_secs(30);

/// Where a list reads from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ListFrom {
    /// The API server's watch cache (`resourceVersion=0`), whole in one answer: the first list,
    /// as the reflector's. The watch cache answers a limited list at `resourceVersion=0` whole
    /// anyway, and more slowly.
    WatchCache,
    /// etcd, in pages: a re-list after an expired watch, so it never returns a state older than
    /// one already seen.
    Quorum,
}

/// Why a list or a watch stopped.
#[derive(Debug)]
enum Failure {
    /// The request failed or the server answered with an error status.
    Request(kube::Error),
    /// The answer could not be read or was not a list.
    Answer(String),
    /// The watch cannot resume from a version it knows (the server expired it: 410 Gone; or an
    /// event came without one): list again.
    Relist(String),
    /// The scheduler loop has gone away.
    Closed,
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Request(e) => write!(f, "{e}"),
            Failure::Answer(e) => write!(f, "unreadable list answer: {e}"),
            Failure::Relist(e) => write!(f, "cannot resume the watch: {e}"),
            Failure::Closed => write!(f, "the scheduler loop stopped"),
        }
    }
}

impl From<kube::Error> for Failure {
    fn from(e: kube::Error) -> Self {
        match e {
            kube::Error::Api(status) if status.code == 410 => Failure::Relist(status.message),
            e => Failure::Request(e),
        }
    }
}

/// Whether a failure says the resource does not exist on the server (404 on the list).
fn is_not_served(e: &Failure) -> bool {
    matches!(e, Failure::Request(kube::Error::Api(status)) if status.code == 404)
}

/// Doubling waits after failures, back to the first after a success.
#[derive(Debug)]
struct Backoff {
    next: Duration,
}

impl Backoff {
    fn new() -> Self {
        Backoff {
            next: BACKOFF_FIRST,
        }
    }

    /// The wait due now; the next one is twice as long, up to the ceiling.
    fn advance(&mut self) -> Duration {
        let now = self.next;
        self.next = (self.next * 2).min(BACKOFF_MAX);
        now
    }

    async fn wait(&mut self) {
        tokio::time::sleep(self.advance()).await;
    }

    fn reset(&mut self) {
        self.next = BACKOFF_FIRST;
    }
}

/// Watches `kind` until the receiver goes away, listing again after an expired watch and
/// retrying with back-off after errors.
pub async fn run_watch(
    client: Client,
    kind: ObjectKind,
    keep: Responsibility,
    tx: mpsc::Sender<Feed>,
) {
    let resource = api_resource(kind);
    let path = WatchedObject::url_path(&resource, None);
    let api: Api<WatchedObject> = Api::all_with(client.clone(), &resource);
    let mut feed = KindFeed::new(kind, keep);
    let mut backoff = Backoff::new();
    let started = Instant::now();
    let mut from = ListFrom::WatchCache;
    loop {
        let was_synced = feed.is_synced();
        let version = match list(&client, &path, from, &mut feed, &tx).await {
            Ok(version) => version,
            Err(Failure::Closed) => return,
            Err(e) => {
                if is_not_served(&e) {
                    if let Some(synced) = feed.on_not_served() {
                        tracing::warn!(
                            "watch of {kind}: the API server does not serve {} ({e}); \
                             scheduling as if there were none until it does",
                            resource.plural
                        );
                        if tx.send(synced).await.is_err() {
                            return;
                        }
                    }
                } else {
                    tracing::warn!("watch of {kind}: list failed: {e}");
                }
                backoff.wait().await;
                continue;
            }
        };
        if !was_synced && feed.is_synced() {
            // Start-up is the slowest list's time: say which one that is.
            tracing::info!(
                "watch of {kind}: first list of {} objects in {:.2?}",
                feed.known_objects(),
                started.elapsed()
            );
        }
        backoff.reset();
        match watch(&api, version, &mut feed, &tx, &mut backoff).await {
            Failure::Closed => return,
            e => {
                tracing::warn!("watch of {kind}: {e}; re-listing with a quorum read");
                from = ListFrom::Quorum;
            }
        }
    }
}

/// Hands `event`'s feed items to the scheduler loop.
async fn forward(
    feed: &mut KindFeed,
    event: Event,
    tx: &mpsc::Sender<Feed>,
) -> Result<(), Failure> {
    for f in feed.on_event(event) {
        tx.send(f).await.map_err(|_| Failure::Closed)?;
    }
    Ok(())
}

/// Lists the kind completely (every page), feeding each object as it is read; returns the
/// list's resource version, from which the watch starts.
async fn list(
    client: &Client,
    path: &str,
    from: ListFrom,
    feed: &mut KindFeed,
    tx: &mpsc::Sender<Feed>,
) -> Result<String, Failure> {
    let mut params = match from {
        ListFrom::WatchCache => ListParams::default()
            .matching(VersionMatch::NotOlderThan)
            .at("0"),
        ListFrom::Quorum => ListParams::default().limit(RELIST_PAGE),
    };
    forward(feed, Event::Init, tx).await?;
    loop {
        let request = kube::core::Request::new(path)
            .list(&params)
            .map_err(|e| Failure::Request(kube::Error::BuildRequest(e)))?;
        let mut body = pin!(client.request_stream(request).await?);
        let mut items = ListItems::new();
        let mut decoded = Vec::new();
        loop {
            let chunk = body
                .fill_buf()
                .await
                .map_err(|e| Failure::Answer(e.to_string()))?;
            if chunk.is_empty() {
                break;
            }
            let read = chunk.len();
            items
                .push(chunk, |item| decoded.push(WatchedObject::from_json(item)))
                .map_err(Failure::Answer)?;
            AsyncBufRead::consume(body.as_mut(), read);
            for object in decoded.drain(..) {
                match object {
                    Ok(o) => forward(feed, Event::InitApply(o), tx).await?,
                    Err(e) => tracing::warn!("ignoring a malformed object: {e}"),
                }
            }
        }
        let metadata = items.finish().map_err(Failure::Answer)?;
        let metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta =
            serde_json::from_slice(&metadata).map_err(|e| Failure::Answer(e.to_string()))?;
        let version = metadata.resource_version.filter(|v| !v.is_empty());
        match metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params.continue_token = Some(token),
            None => {
                let version = version.ok_or_else(|| {
                    Failure::Answer("the list has no resource version".to_string())
                })?;
                forward(feed, Event::InitDone, tx).await?;
                return Ok(version);
            }
        }
    }
}

/// Watches from `version`, resuming where a watch ended, until the version expires or the
/// receiver goes away; returns why it stopped.
async fn watch(
    api: &Api<WatchedObject>,
    mut version: String,
    feed: &mut KindFeed,
    tx: &mpsc::Sender<Feed>,
    backoff: &mut Backoff,
) -> Failure {
    loop {
        let started = Instant::now();
        match watch_once(api, &mut version, feed, tx, backoff).await {
            // A watch the server closed at once, having said nothing, is a failure (as the
            // reflector's "very short watch"): resuming at once would spin.
            Ok(0) if started.elapsed() < SHORT_WATCH => {
                tracing::warn!(
                    "watch of {}: closed after {:.2?} without an event",
                    api.resource_url(),
                    started.elapsed()
                );
                backoff.wait().await;
            }
            // The server ended the watch (its timeout), or it went quiet for longer than that:
            // resume from the last version seen.
            Ok(_) => {}
            Err(stop @ (Failure::Relist(_) | Failure::Closed)) => return stop,
            Err(e) => {
                tracing::warn!("watch of {}: {e}", api.resource_url());
                backoff.wait().await;
            }
        }
    }
}

/// One watch request from `version`, feeding its events and keeping `version` at the last one
/// seen, until the server ends it; returns how many events it read.
async fn watch_once(
    api: &Api<WatchedObject>,
    version: &mut String,
    feed: &mut KindFeed,
    tx: &mpsc::Sender<Feed>,
    backoff: &mut Backoff,
) -> Result<usize, Failure> {
    let params = WatchParams::default().timeout(WATCH_TIMEOUT_S);
    let idle = Duration::from_secs(WATCH_TIMEOUT_S.into()) + WATCH_IDLE_GRACE;
    let mut stream = pin!(api.watch(&params, version).await?);
    let mut read = 0;
    while let Ok(Some(event)) = tokio::time::timeout(idle, stream.next()).await {
        read += 1;
        let (event, seen) = match event? {
            WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                let seen = o.metadata.resource_version.clone();
                (Event::Apply(o), seen)
            }
            WatchEvent::Deleted(o) => {
                let seen = o.metadata.resource_version.clone();
                (Event::Delete(o), seen)
            }
            WatchEvent::Bookmark(mark) => {
                *version = mark.metadata.resource_version;
                continue;
            }
            WatchEvent::Error(status) => return Err(kube::Error::Api(status).into()),
        };
        *version = seen
            .filter(|v| !v.is_empty())
            .ok_or_else(|| Failure::Relist("a watch event without a resource version".into()))?;
        backoff.reset();
        forward(feed, event, tx).await?;
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tephra_cache::ClusterEvent;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn queue(name: &str) -> String {
        format!(
            r#"{{"apiVersion":"scheduling.volcano.sh/v1beta1","kind":"Queue","metadata":{{"name":"{name}","resourceVersion":"3"}},"spec":{{"weight":1}}}}"#
        )
    }

    fn queue_list(names: &[&str], version: &str, next: &str) -> String {
        let items: Vec<String> = names.iter().map(|n| queue(n)).collect();
        format!(
            r#"{{"kind":"QueueList","apiVersion":"scheduling.volcano.sh/v1beta1","metadata":{{"resourceVersion":"{version}","continue":"{next}"}},"items":[{}]}}"#,
            items.join(",")
        )
    }

    /// An HTTP server that answers each request with the body of the first `(query part,
    /// body)` whose part its request line contains, sent in chunks of 7 bytes; the request lines
    /// it saw come back through the handle.
    async fn serve(
        answers: Vec<(&'static str, String)>,
    ) -> (Client, tokio::task::JoinHandle<Vec<String>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(async move {
            let mut seen = Vec::new();
            for _ in 0..answers.len() {
                let (mut conn, _) = listener.accept().await.unwrap();
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    conn.read_exact(&mut byte).await.unwrap();
                    head.push(byte[0]);
                }
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap()
                    .to_string();
                let body = &answers
                    .iter()
                    .find(|(part, _)| line.contains(part))
                    .unwrap()
                    .1;
                let mut out = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                for chunk in body.as_bytes().chunks(7) {
                    out.extend(format!("{:x}\r\n", chunk.len()).bytes());
                    out.extend(chunk);
                    out.extend(b"\r\n");
                }
                out.extend(b"0\r\n\r\n");
                conn.write_all(&out).await.unwrap();
                seen.push(line);
            }
            seen
        });
        let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        (Client::try_from(config).unwrap(), server)
    }

    fn upserted(feeds: &[Feed]) -> Vec<String> {
        feeds
            .iter()
            .map(|f| match f {
                Feed::Event(ClusterEvent::Upsert(o), _) => tephra_cache::meta_of(o).name.clone(),
                Feed::Event(ClusterEvent::Delete { name, .. }, _) => format!("-{name}"),
                Feed::Synced(kind) => format!("synced {kind:?}"),
            })
            .collect()
    }

    async fn list_queues(
        answers: Vec<(&'static str, String)>,
        from: ListFrom,
        feed: &mut KindFeed,
    ) -> (Result<String, Failure>, Vec<String>, Vec<String>) {
        let (client, server) = serve(answers).await;
        let (tx, mut rx) = mpsc::channel(64);
        let path = WatchedObject::url_path(&api_resource(ObjectKind::Queue), None);
        let version = list(&client, &path, from, feed, &tx).await;
        drop(tx);
        let mut feeds = Vec::new();
        while let Some(f) = rx.recv().await {
            feeds.push(f);
        }
        (version, upserted(&feeds), server.await.unwrap())
    }

    #[tokio::test]
    async fn the_first_list_reads_the_watch_cache_whole_and_feeds_every_object() {
        let mut feed = KindFeed::new(ObjectKind::Queue, Responsibility::default());
        let answers = vec![("resourceVersion=0", queue_list(&["a", "b", "c"], "10", ""))];
        let (version, fed, requests) = list_queues(answers, ListFrom::WatchCache, &mut feed).await;
        assert_eq!(version.unwrap(), "10");
        assert_eq!(fed, ["a", "b", "c", "synced Queue"]);
        assert!(
            requests[0].contains("resourceVersionMatch=NotOlderThan"),
            "{requests:?}"
        );
        assert!(!requests[0].contains("limit="), "{requests:?}");
    }

    #[tokio::test]
    async fn a_relist_reads_quorum_pages_and_deletes_what_is_gone() {
        let mut feed = KindFeed::new(ObjectKind::Queue, Responsibility::default());
        let first = vec![("resourceVersion=0", queue_list(&["a", "gone"], "10", ""))];
        list_queues(first, ListFrom::WatchCache, &mut feed)
            .await
            .0
            .unwrap();
        let pages = vec![
            ("continue=p2", queue_list(&["c"], "12", "")),
            ("limit=500", queue_list(&["a", "b"], "12", "p2")),
        ];
        let (version, fed, requests) = list_queues(pages, ListFrom::Quorum, &mut feed).await;
        assert_eq!(version.unwrap(), "12");
        assert_eq!(fed, ["a", "b", "c", "-gone"]);
        assert!(
            requests.iter().all(|r| !r.contains("resourceVersion=")),
            "{requests:?}"
        );
    }

    #[tokio::test]
    async fn objects_are_fed_while_the_rest_of_the_list_is_on_the_wire() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (release, released) = tokio::sync::oneshot::channel::<()>();
        let body = queue_list(&["a", "b"], "10", "");
        let split = body.find(&queue("b")).unwrap();
        let server = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut buf = [0u8; 4096];
            let _ = conn.read(&mut buf).await.unwrap();
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\nTransfer-Encoding: chunked\r\n\r\n";
            let chunk = |part: &str| format!("{:x}\r\n{part}\r\n", part.len());
            let first = format!("{head}{}", chunk(&body[..split]));
            conn.write_all(first.as_bytes()).await.unwrap();
            released.await.unwrap();
            let rest = format!("{}0\r\n\r\n", chunk(&body[split..]));
            conn.write_all(rest.as_bytes()).await.unwrap();
        });
        let config = kube::Config::new(format!("http://{addr}").parse().unwrap());
        let client = Client::try_from(config).unwrap();
        let (tx, mut rx) = mpsc::channel(64);
        let listing = tokio::spawn(async move {
            let mut feed = KindFeed::new(ObjectKind::Queue, Responsibility::default());
            let path = WatchedObject::url_path(&api_resource(ObjectKind::Queue), None);
            list(&client, &path, ListFrom::WatchCache, &mut feed, &tx).await
        });
        let first = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("an object fed before the list's end was sent")
            .unwrap();
        assert_eq!(
            upserted(&[first]),
            ["a"],
            "fed before the list's end was sent"
        );
        release.send(()).unwrap();
        assert_eq!(listing.await.unwrap().unwrap(), "10");
        server.await.unwrap();
        let mut rest = Vec::new();
        while let Some(f) = rx.recv().await {
            rest.push(f);
        }
        assert_eq!(upserted(&rest), ["b", "synced Queue"]);
    }

    #[tokio::test]
    async fn a_list_cut_short_fails_and_feeds_no_sync() {
        let mut feed = KindFeed::new(ObjectKind::Queue, Responsibility::default());
        let whole = queue_list(&["a", "b"], "10", "");
        let cut = whole[..whole.len() - 20].to_string();
        let (version, fed, _) = list_queues(
            vec![("resourceVersion=0", cut)],
            ListFrom::WatchCache,
            &mut feed,
        )
        .await;
        assert!(matches!(version, Err(Failure::Answer(_))), "{version:?}");
        assert_eq!(fed, ["a"]);
        assert!(!feed.is_synced());
    }

    fn api_error(code: u16) -> kube::Error {
        kube::Error::Api(Box::new(
            kube::core::Status::failure("gone", "Expired").with_code(code),
        ))
    }

    #[test]
    fn only_a_404_on_the_list_means_not_served() {
        assert!(is_not_served(&Failure::from(api_error(404))));
        assert!(!is_not_served(&Failure::from(api_error(403))));
        assert!(!is_not_served(&Failure::Answer("404".to_string())));
    }

    #[test]
    fn a_410_on_a_request_is_an_expired_version() {
        assert!(matches!(Failure::from(api_error(410)), Failure::Relist(m) if m == "gone"));
        assert!(matches!(Failure::from(api_error(500)), Failure::Request(_)));
    }

    #[test]
    fn back_off_doubles_to_its_ceiling_and_resets() {
        let mut b = Backoff::new();
        let waits: Vec<Duration> = (0..8).map(|_| b.advance()).collect();
        assert_eq!(waits[0], BACKOFF_FIRST);
        assert_eq!(waits[1], BACKOFF_FIRST * 2);
        assert_eq!(waits[6], BACKOFF_MAX);
        assert_eq!(waits[7], BACKOFF_MAX);
        b.reset();
        assert_eq!(b.advance(), BACKOFF_FIRST);
    }
}
