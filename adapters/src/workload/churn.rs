//! The churn between two benchmark cycles (`docs/workloads.md`, "steady-state cycle"):
//! 1% of the running pods finish and as many new pending pods arrive, so the cluster keeps its
//! size. Which pods finish is drawn from the seed; arrivals are the family's next jobs.

use tephra_cache::{ClusterEvent, ClusterState};
use tephra_engine::api::ClusterObject;

use super::gang_mixed::pending_job;
use super::rng::SplitMix64;
use super::to_object;

/// Running pods that finish per cycle, in per mille of the running pods.
const FINISH_PER_MILLE: usize = 10;

/// What one churn step did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChurnStep {
    pub finished: usize,
    pub arrived: usize,
}

/// The churn of one benchmark run; each step continues the random sequence and the job index.
#[derive(Debug, Clone)]
pub struct Churn {
    rng: SplitMix64,
    next_job: u64,
}

impl Churn {
    /// Churn drawn from `seed`; the first arriving job has index `next_job`.
    pub fn new(seed: u64, next_job: u64) -> Churn {
        Churn {
            rng: SplitMix64::new(seed),
            next_job,
        }
    }

    /// Finishes 1% of the running pods (phase `Succeeded`: they stop using their node, and
    /// their gang still counts them, as for a finished batch pod that is not yet cleaned up)
    /// and adds pending jobs until as many pods arrived.
    pub fn step(&mut self, state: &mut ClusterState) -> ChurnStep {
        let mut running: Vec<(String, String)> = state
            .pods()
            .filter(|p| p.status.phase == "Running")
            .map(|p| (p.metadata.namespace.clone(), p.metadata.name.clone()))
            .collect();
        let finishing = running.len() * FINISH_PER_MILLE / 1000;
        // Partial Fisher-Yates: the first `finishing` slots end up a uniform sample.
        for i in 0..finishing {
            let k = i + self.rng.below(running.len() - i);
            running.swap(i, k);
        }
        for (ns, name) in &running[..finishing] {
            if let Some(pod) = state.pod(ns, name) {
                let mut pod = pod.clone();
                pod.status.phase = "Succeeded".into();
                state.apply_event(ClusterEvent::Upsert(ClusterObject::Pod(Box::new(pod))));
            }
        }
        let mut arrived = 0;
        while arrived < finishing {
            pending_job(self.next_job, &mut |value| {
                let object = to_object(value);
                if matches!(object, ClusterObject::Pod(_)) {
                    arrived += 1;
                }
                state.apply_event(ClusterEvent::Upsert(object));
            });
            self.next_job += 1;
        }
        ChurnStep {
            finished: finishing,
            arrived,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::{GangMixed, generate_state};

    fn phases(s: &ClusterState) -> (usize, usize, usize) {
        let count = |phase: &str| s.pods().filter(|p| p.status.phase == phase).count();
        (count("Running"), count("Succeeded"), count("Pending"))
    }

    #[test]
    fn one_percent_finish_and_as_many_arrive() {
        let g = GangMixed {
            nodes: 100,
            pending: 0,
            seed: 3,
        };
        let mut state = generate_state(&g);
        let (running, _, _) = phases(&state);
        let step = Churn::new(g.seed, 0).step(&mut state);
        assert_eq!(step.finished, running / 100);
        assert!(step.arrived >= step.finished);
        assert_eq!(
            phases(&state),
            (running - step.finished, step.finished, step.arrived)
        );
        assert!(state.pod_group("default", "job-000000").is_some());
    }

    #[test]
    fn the_seed_decides_which_pods_finish() {
        let g = GangMixed {
            nodes: 100,
            pending: 0,
            seed: 1,
        };
        let finished = |seed| {
            let mut state = generate_state(&g);
            Churn::new(seed, 0).step(&mut state);
            state
                .pods()
                .filter(|p| p.status.phase == "Succeeded")
                .map(|p| p.metadata.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(finished(1), finished(1));
        assert_ne!(finished(1), finished(2));
    }
}
