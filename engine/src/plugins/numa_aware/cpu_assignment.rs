//! Choosing CPUs by topology, whole sockets first, then whole cores, then single CPUs, as
//! Volcano's copy of the kubelet's static-policy accumulator does, quirks included (Volcano:
//! pkg/scheduler/plugins/numaaware/provider/cpumanager/cpu_assignment.go, takeByTopology).

use super::cpu_set::CpuSet;
use super::cpu_topology::{CpuDetails, CpuTopology};
use super::go_sort::sort_slice;

/// Too few CPUs for the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotEnoughCpus;

/// What is taken so far and what is still free.
struct Accumulator<'a> {
    topo: &'a CpuTopology,
    free: CpuDetails,
    needed: i64,
    taken: CpuSet,
}

impl Accumulator<'_> {
    fn take(&mut self, cpus: &CpuSet) {
        self.taken.extend(cpus);
        self.free = self
            .free
            .keep_only(&self.free.cpus().difference(&self.taken).copied().collect());
        self.needed -= cpus.len() as i64;
    }

    fn needs(&self, n: usize) -> bool {
        self.needed >= n as i64
    }

    fn satisfied(&self) -> bool {
        self.needed < 1
    }

    /// Socket ids that are also free CPU ids: Volcano intersects the two sets.
    fn free_sockets(&self) -> Vec<i32> {
        let cpus = self.free.cpus();
        self.free
            .sockets()
            .into_iter()
            .filter(|s| cpus.contains(s))
            .collect()
    }

    /// Core ids (intersected with the free CPU ids, as Volcano does) socket by socket, sockets
    /// ordered by Volcano's comparator. Volcano starts from a set's unordered list; tephra from
    /// the ids ascending.
    fn free_cores(&self) -> Vec<i32> {
        let cpus = self.free.cpus();
        let cores_of = |s: i32| -> Vec<i32> {
            self.free
                .cores_in_socket(s)
                .into_iter()
                .filter(|c| cpus.contains(c))
                .collect()
        };
        let mut sockets: Vec<i32> = self.free.sockets().into_iter().collect();
        sort_slice(&mut sockets, |&i, &j| {
            cores_of(i).len() < cores_of(j).len() || i < j
        });
        sockets.into_iter().flat_map(cores_of).collect()
    }

    /// Free CPUs core by core, cores ordered by Volcano's comparator (sockets already used
    /// first, then fuller sockets, fuller cores, lower ids).
    fn free_cpus(&self) -> Vec<i32> {
        let all = &self.topo.details;
        let mut cores: Vec<i32> = self.free.cores().into_iter().collect();
        let socket_of = |core: i32| {
            all.cpus_in_core(core)
                .first()
                .map_or(0, |cpu| all.0[cpu].socket)
        };
        sort_slice(&mut cores, |&i, &j| {
            let (si, sj) = (socket_of(i), socket_of(j));
            let colocated = |s| all.cpus_in_socket(s).intersection(&self.taken).count();
            let free_in_socket = |s| self.free.cpus_in_socket(s).len();
            let free_in_core = |c| self.free.cpus_in_core(c).len();
            colocated(si) > colocated(sj)
                || free_in_socket(si) < free_in_socket(sj)
                || free_in_core(i) < free_in_core(j)
                || si < sj
                || i < j
        });
        cores
            .into_iter()
            .flat_map(|c| self.free.cpus_in_core(c))
            .collect()
    }
}

/// `n` CPUs of `available`, chosen by `topo`.
pub fn take_by_topology(
    topo: &CpuTopology,
    available: &CpuSet,
    n: usize,
) -> Result<CpuSet, NotEnoughCpus> {
    let mut acc = Accumulator {
        topo,
        free: topo.details.keep_only(available),
        needed: n as i64,
        taken: CpuSet::new(),
    };
    if acc.satisfied() {
        return Ok(acc.taken);
    }
    if acc.needed > acc.free.0.len() as i64 {
        return Err(NotEnoughCpus);
    }
    if acc.needs(topo.cpus_per_socket()) {
        for s in acc.free_sockets() {
            let cpus = acc.free.cpus_in_socket(s);
            acc.take(&cpus);
            if acc.satisfied() {
                return Ok(acc.taken);
            }
            if !acc.needs(topo.cpus_per_socket()) {
                break;
            }
        }
    }
    if acc.needs(topo.cpus_per_core()) {
        for c in acc.free_cores() {
            let cpus = acc.free.cpus_in_core(c);
            acc.take(&cpus);
            if acc.satisfied() {
                return Ok(acc.taken);
            }
            if !acc.needs(topo.cpus_per_core()) {
                break;
            }
        }
    }
    for cpu in acc.free_cpus() {
        if acc.needs(1) {
            acc.take(&CpuSet::from([cpu]));
        }
        if acc.satisfied() {
            return Ok(acc.taken);
        }
    }
    Err(NotEnoughCpus)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::CpuInfo;

    /// Two sockets (one NUMA node each) of two cores with two hyperthreads: socket 0 holds
    /// CPUs 0, 1 (core 0) and 2, 3 (core 1); socket 1 holds 4, 5 (core 2) and 6, 7 (core 3).
    fn topology() -> CpuTopology {
        let details = (0..8)
            .map(|cpu| {
                let info = CpuInfo {
                    numa: cpu / 4,
                    socket: cpu / 4,
                    core: cpu / 2,
                };
                (cpu, info)
            })
            .collect();
        CpuTopology::new(CpuDetails(details))
    }

    #[test]
    fn whole_cores_go_before_single_threads() {
        let t = topology();
        let all: CpuSet = (0..8).collect();
        assert_eq!(take_by_topology(&t, &all, 2), Ok(CpuSet::from([0, 1])));
        let odd: CpuSet = [1, 2, 3, 5].into();
        assert_eq!(take_by_topology(&t, &odd, 2), Ok(CpuSet::from([2, 3])));
    }

    #[test]
    fn a_request_beyond_the_free_cpus_fails_and_zero_takes_nothing() {
        let t = topology();
        let some: CpuSet = [0, 1, 2].into();
        assert_eq!(take_by_topology(&t, &some, 4), Err(NotEnoughCpus));
        assert_eq!(take_by_topology(&t, &some, 0), Ok(CpuSet::new()));
    }
}
