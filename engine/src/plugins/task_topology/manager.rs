//! One job's task topology worked out for a session: which task names attract or repel which,
//! and the buckets its tasks fall into (Volcano: pkg/scheduler/plugins/task-topology/manager.go).

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use super::annotations::TaskTopology;
use super::bucket::Bucket;
use crate::model::{Resource, TaskId};

/// How strongly a task name's strongest relation orders it: self anti-affinity first, then
/// inter-task affinity, self affinity, inter-task anti-affinity.
const SELF_ANTI_AFFINITY: i32 = 4;
const INTER_AFFINITY: i32 = 3;
const SELF_AFFINITY: i32 = 2;
const INTER_ANTI_AFFINITY: i32 = 1;

/// A task as the bucket builder reads it.
#[derive(Debug, Clone)]
pub struct BucketTask<'a> {
    pub id: TaskId,
    /// Its `volcano.sh/task-spec` annotation.
    pub name: &'a str,
    /// The pod's name, the last tie-break of the build order.
    pub pod_name: &'a str,
    /// The node it is on, if any.
    pub node: Option<&'a str>,
    pub request: &'a Resource,
}

/// One job's relations and buckets.
#[derive(Debug, Clone, Default)]
pub struct JobManager {
    pub buckets: Vec<Bucket>,
    /// The bucket of each task in one; a task missing here is outside every bucket.
    bucket_of: BTreeMap<TaskId, usize>,
    /// The task name of each bucketed task.
    name_of: BTreeMap<TaskId, String>,
    /// Per task name, the rank of its strongest relation.
    relation_rank: BTreeMap<String, i32>,
    /// Per task name, its place in the job's task order counted from the end (first = highest).
    order_rank: BTreeMap<String, i32>,
    inter_affinity: BTreeSet<(String, String)>,
    self_affinity: BTreeSet<String>,
    inter_anti_affinity: BTreeSet<(String, String)>,
    self_anti_affinity: BTreeSet<String>,
    /// The largest bucket's size when the buckets were built and as tasks were added.
    pub max_bucket_size: usize,
    /// Task names allocated on each node this session, by node name.
    node_task_names: BTreeMap<String, BTreeMap<String, i64>>,
}

impl JobManager {
    /// A manager holding the relations `topology` states (Volcano: manager.go,
    /// ApplyTaskTopology).
    pub fn new(topology: &TaskTopology) -> JobManager {
        let mut m = JobManager::default();
        for group in &topology.affinity {
            m.relate(group, true);
        }
        for group in &topology.anti_affinity {
            m.relate(group, false);
        }
        let n = topology.task_order.len() as i32;
        for (i, name) in topology.task_order.iter().enumerate() {
            m.order_rank.insert(name.clone(), n - i as i32);
        }
        m
    }

    /// Records one affinity (`attract`) or anti-affinity group: a lone name relates to itself,
    /// the names of a longer group to each other.
    fn relate(&mut self, group: &[String], attract: bool) {
        if let [name] = group {
            let (set, rank) = if attract {
                (&mut self.self_affinity, SELF_AFFINITY)
            } else {
                (&mut self.self_anti_affinity, SELF_ANTI_AFFINITY)
            };
            set.insert(name.clone());
            self.rank(name, rank);
            return;
        }
        for (i, src) in group.iter().enumerate() {
            for dst in &group[..i] {
                let pairs = if attract {
                    &mut self.inter_affinity
                } else {
                    &mut self.inter_anti_affinity
                };
                pairs.insert((src.clone(), dst.clone()));
                pairs.insert((dst.clone(), src.clone()));
            }
            self.rank(
                src,
                if attract {
                    INTER_AFFINITY
                } else {
                    INTER_ANTI_AFFINITY
                },
            );
        }
    }

    fn rank(&mut self, name: &str, rank: i32) {
        let r = self.relation_rank.entry(name.to_string()).or_default();
        *r = (*r).max(rank);
    }

    /// How two task names order: by the job's task order, then by their strongest relation;
    /// `Greater` = `l` ranks higher (Volcano: manager.go, taskAffinityOrder).
    fn name_order(&self, l: &str, r: &str) -> Ordering {
        if l == r {
            return Ordering::Equal;
        }
        let get = |m: &BTreeMap<String, i32>, k: &str| m.get(k).copied().unwrap_or(0);
        get(&self.order_rank, l)
            .cmp(&get(&self.order_rank, r))
            .then(get(&self.relation_rank, l).cmp(&get(&self.relation_rank, r)))
    }

    /// `name_order` of two bucketed tasks.
    pub fn task_order(&self, l: TaskId, r: TaskId) -> Ordering {
        let name = |t| self.name_of.get(&t).map_or("", String::as_str);
        self.name_order(name(l), name(r))
    }

    /// The attraction of a task named `name` to tasks counted by name in `names`: + for each
    /// it is attracted to (unless `only_anti`), - for each it repels (Volcano: manager.go,
    /// checkTaskSetAffinity).
    fn affinity_to(&self, name: &str, names: &BTreeMap<String, i64>, only_anti: bool) -> i64 {
        if name.is_empty() {
            return 0;
        }
        let mut score = 0;
        for (other, &count) in names {
            let pair = (name.to_string(), other.clone());
            let same = other == name;
            if !only_anti
                && (if same {
                    self.self_affinity.contains(name)
                } else {
                    self.inter_affinity.contains(&pair)
                })
            {
                score += count;
            }
            let repels = if same {
                self.self_anti_affinity.contains(name)
            } else {
                self.inter_anti_affinity.contains(&pair)
            };
            if repels {
                score -= count;
            }
        }
        score
    }

    /// The repulsion a task named `name` meets on node `node` from this session's allocations
    /// (never positive).
    pub fn repulsion_on(&self, name: &str, node: &str) -> i64 {
        self.node_task_names
            .get(node)
            .map_or(0, |names| self.affinity_to(name, names, true).min(0))
    }

    /// Puts the job's tasks into buckets (Volcano: manager.go, ConstructBucket). Tasks without
    /// a task name, or whose name has no affinity or anti-affinity, stay outside. The others go
    /// in order: tasks on a node first (by node name), one bucket per node; then pending tasks,
    /// highest `name_order` first, then by pod name, each to the bucket it is most attracted
    /// to (the lightest on a tie), or a new one when it repels every bucket.
    pub fn build_buckets(&mut self, tasks: &[BucketTask]) {
        let mut placed: Vec<&BucketTask> = tasks
            .iter()
            .filter(|t| !t.name.is_empty() && self.relation_rank.contains_key(t.name))
            .collect();
        for t in &placed {
            self.name_of.insert(t.id, t.name.to_string());
        }
        placed.sort_by(|l, r| match (l.node, r.node) {
            (Some(a), Some(b)) => a.cmp(b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => self
                .name_order(r.name, l.name)
                .then_with(|| l.pod_name.cmp(r.pod_name)),
        });
        let mut node_bucket: BTreeMap<&str, usize> = BTreeMap::new();
        for t in placed {
            let (mut chosen, mut best) = (None, i64::from(i32::MIN));
            match t.node {
                Some(node) => {
                    best = 0;
                    chosen = node_bucket.get(node).copied();
                }
                None => {
                    for b in &self.buckets {
                        let score = self.affinity_to(t.name, &b.task_names, false);
                        let lighter = chosen.is_some_and(|c: usize| {
                            b.request_score < self.buckets[c].request_score
                        });
                        if score > best || (score == best && lighter) {
                            best = score;
                            chosen = Some(b.index);
                        }
                    }
                }
            }
            let index = match chosen {
                Some(i) if best >= 0 => i,
                _ => {
                    let i = self.buckets.len();
                    self.buckets.push(Bucket::new(i));
                    if let Some(node) = t.node {
                        node_bucket.insert(node, i);
                    }
                    i
                }
            };
            self.bucket_of.insert(t.id, index);
            let bucket = &mut self.buckets[index];
            bucket.add(t.id, t.name, t.node, t.request);
            self.max_bucket_size = self.max_bucket_size.max(bucket.size());
        }
    }

    /// The bucket `task` is in, if any.
    pub fn bucket(&self, task: TaskId) -> Option<&Bucket> {
        self.bucket_of.get(&task).map(|&i| &self.buckets[i])
    }

    /// Records that `task`, named `name`, was allocated to `node` (Volcano: manager.go,
    /// TaskBound).
    pub fn task_bound(&mut self, task: TaskId, name: &str, node: &str, req: &Resource) {
        if !name.is_empty() {
            *self
                .node_task_names
                .entry(node.to_string())
                .or_default()
                .entry(name.to_string())
                .or_default() += 1;
        }
        if let Some(&i) = self.bucket_of.get(&task) {
            self.buckets[i].task_bound(task, node, req);
        }
    }
}
