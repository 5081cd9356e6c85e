//! Volcano's `Resource` arithmetic: cpu in millicores, memory in bytes, scalars (incl. `pods`).
//!
//! Every comparison tolerates `EPSILON` (Volcano's `minResource`, 0.1) unless its doc says it is
//! strict, and the missing-dimension rules (`DimDefault::Zero` / `DimDefault::Infinity`) follow
//! Volcano exactly, including the difference between "no scalar map" and "an empty one".

use std::fmt;

use smallvec::SmallVec;

use super::dim::Dim;
use super::scalar_map::ScalarMap;
use crate::api::ResourceList;

/// Volcano's `minResource`.
pub const EPSILON: f64 = 0.1;

/// How a dimension present on one side only is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DimDefault {
    /// Missing counts as 0.
    Zero,
    /// Missing counts as unlimited.
    Infinity,
}

/// The name of one resource dimension, as reported in fit errors.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ResourceName {
    Cpu,
    Memory,
    Scalar(Dim),
}

impl ResourceName {
    /// Parses a Kubernetes resource name.
    pub fn of(name: &str) -> ResourceName {
        match name {
            "cpu" => ResourceName::Cpu,
            "memory" => ResourceName::Memory,
            other => ResourceName::Scalar(Dim::of(other)),
        }
    }
}

impl fmt::Display for ResourceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResourceName::Cpu => f.write_str("cpu"),
            ResourceName::Memory => f.write_str("memory"),
            ResourceName::Scalar(d) => f.write_str(d.name()),
        }
    }
}

impl fmt::Debug for ResourceName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A resource vector. A nil scalar map is Go's nil map, which several operations treat
/// differently from an empty map.
#[derive(Clone, Default, PartialEq)]
pub struct Resource {
    pub milli_cpu: f64,
    pub memory: f64,
    scalars: ScalarMap,
}

fn le_eps(l: f64, r: f64) -> bool {
    l < r || (l - r).abs() < EPSILON
}

/// True for names Kubernetes calls scalar resources: extended (`vendor/name`), prefixed native,
/// `hugepages-*` and `attachable-volumes-*`.
pub fn is_scalar_resource_name(name: &str) -> bool {
    name.contains('/') && !name.starts_with("requests.")
        || name.starts_with("hugepages-")
        || name.starts_with("attachable-volumes-")
}

impl Resource {
    /// The empty resource (no scalar map).
    pub fn empty() -> Resource {
        Resource::default()
    }

    /// cpu and memory only.
    pub fn cpu_mem(milli_cpu: f64, memory: f64) -> Resource {
        Resource {
            milli_cpu,
            memory,
            scalars: ScalarMap::Nil,
        }
    }

    /// Volcano's `InfiniteResource()`.
    pub fn infinite() -> Resource {
        Resource::cpu_mem(f64::MAX, f64::MAX)
    }

    /// `NewResource(ResourceList)`.
    pub fn from_list(list: &ResourceList) -> Resource {
        let mut r = Resource::empty();
        for (name, q) in list {
            match name.as_str() {
                "cpu" => r.milli_cpu += q.milli_value() as f64,
                "memory" => r.memory += q.value() as f64,
                "pods" => r.add_scalar(Dim::PODS, q.value() as f64),
                "ephemeral-storage" => r.add_scalar(Dim::of(name), q.milli_value() as f64),
                n if n.starts_with("count/") => {}
                n if is_scalar_resource_name(n) => r.add_scalar(Dim::of(n), q.milli_value() as f64),
                _ => {}
            }
        }
        r
    }

    /// True when adding or subtracting this value leaves any resource as it was: zero CPU and
    /// memory, and no scalar entry (an entry, even a zero one, would appear in the sum).
    pub fn adds_nothing(&self) -> bool {
        self.milli_cpu == 0.0 && self.memory == 0.0 && self.scalars.as_slice().is_empty()
    }

    /// True when the resource has a scalar map (possibly empty).
    pub fn has_scalar_map(&self) -> bool {
        !self.scalars.is_nil()
    }

    /// The scalar entries, in dimension order.
    pub fn scalars(&self) -> impl Iterator<Item = (Dim, f64)> + '_ {
        self.scalars.as_slice().iter().copied()
    }

    /// The scalar value if present.
    pub fn scalar(&self, d: Dim) -> Option<f64> {
        self.scalars.get(d)
    }

    /// Sets a scalar, creating the map.
    pub fn set_scalar(&mut self, d: Dim, value: f64) {
        self.scalars.set(d, value);
    }

    /// Adds to a scalar, creating it at 0.
    pub fn add_scalar(&mut self, d: Dim, value: f64) {
        let cur = self.scalar(d).unwrap_or(0.0);
        self.set_scalar(d, cur + value);
    }

    /// `Get(name)`: 0 when absent.
    pub fn get(&self, name: ResourceName) -> f64 {
        match name {
            ResourceName::Cpu => self.milli_cpu,
            ResourceName::Memory => self.memory,
            ResourceName::Scalar(d) => self.scalar(d).unwrap_or(0.0),
        }
    }

    /// Sets one dimension.
    pub fn set(&mut self, name: ResourceName, value: f64) {
        match name {
            ResourceName::Cpu => self.milli_cpu = value,
            ResourceName::Memory => self.memory = value,
            ResourceName::Scalar(d) => self.set_scalar(d, value),
        }
    }

    /// `ResourceNames()`: dimensions whose value is at least ε (includes `pods`). An iterator:
    /// scorers ask for it once per task and node, where a vector would be an allocation each.
    pub fn resource_names(&self) -> impl Iterator<Item = ResourceName> + '_ {
        let cpu = (self.milli_cpu >= EPSILON).then_some(ResourceName::Cpu);
        let memory = (self.memory >= EPSILON).then_some(ResourceName::Memory);
        cpu.into_iter().chain(memory).chain(
            self.scalars()
                .filter(|&(_, v)| v >= EPSILON)
                .map(|(d, _)| ResourceName::Scalar(d)),
        )
    }

    /// `IsEmpty()`: cpu, memory and every scalar but `pods` below ε.
    pub fn is_empty(&self) -> bool {
        if !(self.milli_cpu < EPSILON && self.memory < EPSILON) {
            return false;
        }
        self.scalars().all(|(d, v)| d == Dim::PODS || v < EPSILON)
    }

    /// `IsZero(name)`: value below ε (absent scalars count as zero).
    pub fn is_zero(&self, name: ResourceName) -> bool {
        self.get(name) < EPSILON
    }

    /// `Add`.
    pub fn add(&mut self, rr: &Resource) -> &mut Self {
        self.milli_cpu += rr.milli_cpu;
        self.memory += rr.memory;
        self.scalars.add_scaled(&rr.scalars, 1.0);
        self
    }

    /// `a + b` as a new value.
    pub fn plus(&self, rr: &Resource) -> Resource {
        let mut r = self.clone();
        r.add(rr);
        r
    }

    /// `Sub` without the assertion (`SubWithoutAssert`): Volcano panics when `rr` is not
    /// `≤ self`; tephra never panics on cluster data, callers that care check `less_equal`
    /// first.
    pub fn sub(&mut self, rr: &Resource) -> &mut Self {
        self.milli_cpu -= rr.milli_cpu;
        self.memory -= rr.memory;
        if !self.scalars.is_nil() {
            self.scalars.add_scaled(&rr.scalars, -1.0);
        }
        self
    }

    /// `a - b` as a new value.
    pub fn minus(&self, rr: &Resource) -> Resource {
        let mut r = self.clone();
        r.sub(rr);
        r
    }

    /// `Multi(ratio)`.
    pub fn multi(&mut self, ratio: f64) -> &mut Self {
        self.milli_cpu *= ratio;
        self.memory *= ratio;
        for e in self.scalars.as_mut_slice() {
            e.1 *= ratio;
        }
        self
    }

    /// `SetMaxResource(rr)`: per-dimension max; a missing scalar map copies rr's scalars.
    pub fn set_max(&mut self, rr: &Resource) {
        self.milli_cpu = self.milli_cpu.max(rr.milli_cpu);
        self.memory = self.memory.max(rr.memory);
        if rr.scalars.is_nil() {
            return;
        }
        if self.scalars.is_nil() {
            self.scalars = rr.scalars.clone();
            return;
        }
        for (d, q) in rr.scalars() {
            match self.scalar(d) {
                Some(cur) if cur >= q => {}
                _ => self.set_scalar(d, q),
            }
        }
    }

    /// `Less(rr, dv)`: every dimension strictly less.
    pub fn less(&self, rr: &Resource, dv: DimDefault) -> bool {
        if !(self.milli_cpu < rr.milli_cpu && self.memory < rr.memory) {
            return false;
        }
        if dv == DimDefault::Infinity && rr.scalars().any(|(d, _)| self.scalar(d).is_none()) {
            return false;
        }
        for (d, l) in self.scalars() {
            let r = match rr.scalar(d) {
                Some(r) => r,
                None if dv == DimDefault::Infinity => continue,
                None => 0.0,
            };
            if l >= r {
                return false;
            }
        }
        true
    }

    /// `LessPartly(rr, dv)`: some dimension strictly less. Under `Zero` a scalar only `rr` has
    /// counts as less; under `Infinity` one only `self` has does.
    pub fn less_partly(&self, rr: &Resource, dv: DimDefault) -> bool {
        if self.milli_cpu < rr.milli_cpu || self.memory < rr.memory {
            return true;
        }
        if dv == DimDefault::Zero && rr.scalars().any(|(d, _)| self.scalar(d).is_none()) {
            return true;
        }
        self.scalars().any(|(d, l)| match rr.scalar(d) {
            Some(r) => l < r,
            None => dv == DimDefault::Infinity || l < 0.0,
        })
    }

    /// `LessEqual(rr, dv)`: every dimension `l < r` or within ε.
    pub fn less_equal(&self, rr: &Resource, dv: DimDefault) -> bool {
        if !le_eps(self.milli_cpu, rr.milli_cpu) || !le_eps(self.memory, rr.memory) {
            return false;
        }
        if dv == DimDefault::Infinity && rr.scalars().any(|(d, _)| self.scalar(d).is_none()) {
            return false;
        }
        for (d, l) in self.scalars() {
            let r = match rr.scalar(d) {
                Some(r) => r,
                None if dv == DimDefault::Infinity => continue,
                None => 0.0,
            };
            if !le_eps(l, r) {
                return false;
            }
        }
        true
    }

    /// `LessEqualWithResourcesName(rr, dv)`: like `less_equal` (the right-only scalar rule is
    /// not applied) and returns the failing dimensions (inline: a class's ranking asks this of
    /// every node that turns out full).
    pub fn less_equal_with_names(
        &self,
        rr: &Resource,
        dv: DimDefault,
    ) -> Result<(), SmallVec<[ResourceName; 4]>> {
        let mut bad = SmallVec::new();
        if !le_eps(self.milli_cpu, rr.milli_cpu) {
            bad.push(ResourceName::Cpu);
        }
        if !le_eps(self.memory, rr.memory) {
            bad.push(ResourceName::Memory);
        }
        for (d, l) in self.scalars() {
            let r = match rr.scalar(d) {
                Some(r) => r,
                None if dv == DimDefault::Infinity => continue,
                None => 0.0,
            };
            if !le_eps(l, r) {
                bad.push(ResourceName::Scalar(d));
            }
        }
        if bad.is_empty() { Ok(()) } else { Err(bad) }
    }

    /// `LessEqualWithDimensionAndResourcesName(rr, req)`: strict `l > r` fails, only on
    /// dimensions `req` asks for (> 0), `pods` ignored; no scalar map on the left means only
    /// cpu and memory are checked.
    pub fn less_equal_with_dimension(
        &self,
        rr: &Resource,
        req: &Resource,
    ) -> Result<(), Vec<ResourceName>> {
        let mut bad = Vec::new();
        if req.milli_cpu > 0.0 && self.milli_cpu > rr.milli_cpu {
            bad.push(ResourceName::Cpu);
        }
        if req.memory > 0.0 && self.memory > rr.memory {
            bad.push(ResourceName::Memory);
        }
        if !self.scalars.is_nil() {
            for (d, q) in req.scalars() {
                if d == Dim::PODS {
                    continue;
                }
                let l = self.scalar(d).unwrap_or(0.0);
                let r = rr.scalar(d).unwrap_or(0.0);
                if q > 0.0 && l > r {
                    bad.push(ResourceName::Scalar(d));
                }
            }
        }
        if bad.is_empty() { Ok(()) } else { Err(bad) }
    }

    /// `(self + req).less_equal_with_dimension(limit, req).is_ok()` without building the sum
    /// (proportion asks it for every task allocate considers): the same additions, compared the
    /// same way.
    pub fn plus_fits_with_dimension(&self, req: &Resource, limit: &Resource) -> bool {
        if req.milli_cpu > 0.0 && self.milli_cpu + req.milli_cpu > limit.milli_cpu {
            return false;
        }
        if req.memory > 0.0 && self.memory + req.memory > limit.memory {
            return false;
        }
        req.scalars().all(|(d, q)| {
            let over =
                q > 0.0 && self.scalar(d).unwrap_or(0.0) + q > limit.scalar(d).unwrap_or(0.0);
            d == Dim::PODS || !over
        })
    }

    /// `LessEqualPartlyWithDimension(rr, req)`: some requested dimension (`pods` ignored) is
    /// `≤` within ε.
    pub fn less_equal_partly_with_dimension(&self, rr: &Resource, req: &Resource) -> bool {
        if req.milli_cpu > 0.0 && le_eps(self.milli_cpu, rr.milli_cpu) {
            return true;
        }
        if req.memory > 0.0 && le_eps(self.memory, rr.memory) {
            return true;
        }
        req.scalars().any(|(d, q)| {
            d != Dim::PODS
                && q > 0.0
                && le_eps(
                    self.get(ResourceName::Scalar(d)),
                    rr.get(ResourceName::Scalar(d)),
                )
        })
    }

    /// `LessEqualPartlyWithDimensionZeroFiltered`: as above after dropping dimensions that are
    /// below ε on both sides.
    pub fn less_equal_partly_with_dimension_zero_filtered(
        &self,
        rr: &Resource,
        req: &Resource,
    ) -> bool {
        let mut filtered = Resource::empty();
        if req.milli_cpu > 0.0 && !(self.milli_cpu < EPSILON && rr.milli_cpu < EPSILON) {
            filtered.milli_cpu = req.milli_cpu;
        }
        if req.memory > 0.0 && !(self.memory < EPSILON && rr.memory < EPSILON) {
            filtered.memory = req.memory;
        }
        for (d, q) in req.scalars() {
            let n = ResourceName::Scalar(d);
            if q > 0.0 && !(self.get(n) < EPSILON && rr.get(n) < EPSILON) {
                filtered.set_scalar(d, q);
            }
        }
        self.less_equal_partly_with_dimension(rr, &filtered)
    }

    /// `GreaterPartlyWithDimension(rr, req)`: some requested dimension (`pods` ignored) is
    /// strictly greater.
    pub fn greater_partly_with_dimension(&self, rr: &Resource, req: &Resource) -> bool {
        if req.milli_cpu > 0.0 && self.milli_cpu > rr.milli_cpu {
            return true;
        }
        if req.memory > 0.0 && self.memory > rr.memory {
            return true;
        }
        req.scalars().any(|(d, q)| {
            d != Dim::PODS
                && q > 0.0
                && self.get(ResourceName::Scalar(d)) > rr.get(ResourceName::Scalar(d))
        })
    }

    /// `GreaterPartlyWithRelevantDimensions(rr, req)`: as above, ignoring cpu/memory where
    /// `rr < ε` and scalars absent from `rr`.
    pub fn greater_partly_with_relevant_dimensions(&self, rr: &Resource, req: &Resource) -> bool {
        let mut filtered = Resource::empty();
        if req.milli_cpu > 0.0 && rr.milli_cpu >= EPSILON {
            filtered.milli_cpu = req.milli_cpu;
        }
        if req.memory > 0.0 && rr.memory >= EPSILON {
            filtered.memory = req.memory;
        }
        for (d, q) in req.scalars() {
            if q > 0.0 && rr.scalar(d).is_some() {
                filtered.set_scalar(d, q);
            }
        }
        self.greater_partly_with_dimension(rr, &filtered)
    }

    /// `Equal(rr)`: all dimensions within ε (scalars of `self` only).
    pub fn equal(&self, rr: &Resource) -> bool {
        let eq = |l: f64, r: f64| l == r || (l - r).abs() < EPSILON;
        eq(self.milli_cpu, rr.milli_cpu)
            && eq(self.memory, rr.memory)
            && self
                .scalars()
                .all(|(d, l)| eq(l, rr.scalar(d).unwrap_or(0.0)))
    }

    /// `Diff(rr, dv)`: (increase, decrease) per dimension after filling missing scalars.
    pub fn diff(&self, rr: &Resource, dv: DimDefault) -> (Resource, Resource) {
        let fill = match dv {
            DimDefault::Zero => 0.0,
            DimDefault::Infinity => -1.0,
        };
        let mut inc = Resource::empty();
        let mut dec = Resource::empty();
        if self.milli_cpu > rr.milli_cpu {
            inc.milli_cpu = self.milli_cpu - rr.milli_cpu;
        } else {
            dec.milli_cpu = rr.milli_cpu - self.milli_cpu;
        }
        if self.memory > rr.memory {
            inc.memory = self.memory - rr.memory;
        } else {
            dec.memory = rr.memory - self.memory;
        }
        inc.scalars = ScalarMap::empty();
        dec.scalars = ScalarMap::empty();
        // Inline: called per job at every session open (elastic resources), where a heap vector
        // would be an allocation per job.
        let mut names: SmallVec<[Dim; 8]> = self
            .scalars()
            .map(|e| e.0)
            .chain(rr.scalars().map(|e| e.0))
            .collect();
        names.sort();
        names.dedup();
        for d in names {
            let l = self.scalar(d).unwrap_or(fill);
            let r = rr.scalar(d).unwrap_or(fill);
            if l == -1.0 && dv == DimDefault::Infinity {
                inc.set_scalar(d, l);
            } else if r == -1.0 && dv == DimDefault::Infinity {
                dec.set_scalar(d, r);
            } else if l > r {
                inc.set_scalar(d, l - r);
            } else {
                dec.set_scalar(d, r - l);
            }
        }
        (inc, dec)
    }

    /// Adds `over.diff(floor, DimDefault::Zero).0`, what `over` holds beyond `floor` in each
    /// dimension, without building it: the same values added, dimension by dimension.
    pub fn add_excess(&mut self, over: &Resource, floor: &Resource) -> &mut Self {
        if over.milli_cpu > floor.milli_cpu {
            self.milli_cpu += over.milli_cpu - floor.milli_cpu;
        }
        if over.memory > floor.memory {
            self.memory += over.memory - floor.memory;
        }
        for (d, l) in over.scalars() {
            let r = floor.scalar(d).unwrap_or(0.0);
            if l > r {
                self.add_scalar(d, l - r);
            }
        }
        for (d, r) in floor.scalars() {
            if over.scalar(d).is_none() && 0.0 > r {
                self.add_scalar(d, -r);
            }
        }
        self
    }

    /// `MinDimensionResource(rr, dv)`: per-dimension min in place.
    pub fn min_dimension(&mut self, rr: &Resource, dv: DimDefault) -> &mut Self {
        self.milli_cpu = self.milli_cpu.min(rr.milli_cpu);
        self.memory = self.memory.min(rr.memory);
        for e in self.scalars.as_mut_slice() {
            match rr.scalar(e.0) {
                Some(q) => e.1 = e.1.min(q),
                None if dv == DimDefault::Infinity => {}
                None => e.1 = 0.0,
            }
        }
        self
    }

    /// `ExceededPart(self, rr)`: per-dimension `max(l − r, 0)`.
    pub fn exceeded_part(&self, rr: &Resource) -> Resource {
        self.diff(rr, DimDefault::Zero).0
    }

    /// `helpers.Max(l, r)`: per-dimension max; scalars are the union, negatives dropped.
    pub fn max_of(l: &Resource, r: &Resource) -> Resource {
        let mut out = Resource::cpu_mem(l.milli_cpu.max(r.milli_cpu), l.memory.max(r.memory));
        if l.scalars.is_nil() && r.scalars.is_nil() {
            return out;
        }
        out.scalars = ScalarMap::empty();
        for (d, v) in l.scalars().chain(r.scalars()) {
            if v < 0.0 {
                continue;
            }
            match out.scalar(d) {
                Some(cur) if cur >= v => {}
                _ => out.set_scalar(d, v),
            }
        }
        out
    }

    /// `helpers.Min(l, r)`: per-dimension min; scalars only from `l` and only when both have maps.
    pub fn min_of(l: &Resource, r: &Resource) -> Resource {
        let mut out = Resource::cpu_mem(l.milli_cpu.min(r.milli_cpu), l.memory.min(r.memory));
        if l.scalars.is_nil() || r.scalars.is_nil() {
            return out;
        }
        out.scalars = ScalarMap::empty();
        for (d, v) in l.scalars() {
            out.set_scalar(d, v.min(r.scalar(d).unwrap_or(0.0)));
        }
        out
    }
}

/// `helpers.Share(a, t)`: `a / t`, with `0/0 = 0` and `a/0 = 1`.
pub fn share(allocated: f64, total: f64) -> f64 {
    if total == 0.0 {
        if allocated == 0.0 { 0.0 } else { 1.0 }
    } else {
        allocated / total
    }
}

fn fmt_amount(v: f64) -> String {
    if v == f64::MAX {
        "maxFloat".to_string()
    } else if v == i64::MAX as f64 {
        "maxInt".to_string()
    } else {
        format!("{v:.2}")
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cpu {}, memory {}",
            fmt_amount(self.milli_cpu),
            fmt_amount(self.memory)
        )?;
        let mut names: Vec<(&str, f64)> = self.scalars().map(|(d, v)| (d.name(), v)).collect();
        names.sort_by(|a, b| a.0.cmp(b.0));
        for (n, v) in names {
            write!(f, ", {n} {}", fmt_amount(v))?;
        }
        Ok(())
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Resource({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Quantity;

    fn list(items: &[(&str, &str)]) -> ResourceList {
        items
            .iter()
            .map(|(k, v)| (k.to_string(), Quantity::parse(v).unwrap()))
            .collect()
    }

    #[test]
    fn less_partly_needs_one_smaller_dimension_and_reads_missing_scalars_by_default() {
        let gpu = Dim::of("nvidia.com/gpu");
        let mut with_gpu = Resource::cpu_mem(1000.0, 0.0);
        with_gpu.set_scalar(gpu, 1000.0);
        let cpu_only = Resource::cpu_mem(2000.0, 0.0);
        assert!(Resource::cpu_mem(1000.0, 5.0).less_partly(&cpu_only, DimDefault::Zero));
        assert!(!cpu_only.less_partly(&Resource::cpu_mem(1000.0, 0.0), DimDefault::Zero));
        assert!(
            cpu_only.less_partly(&with_gpu, DimDefault::Zero),
            "gpu missing = 0 < 1"
        );
        assert!(!cpu_only.less_partly(&with_gpu, DimDefault::Infinity));
        assert!(with_gpu.less_partly(&Resource::cpu_mem(1000.0, 0.0), DimDefault::Infinity));
    }

    #[test]
    fn from_list_uses_milli_for_cpu_and_scalars_and_units_for_memory_and_pods() {
        let r = Resource::from_list(&list(&[
            ("cpu", "1.5"),
            ("memory", "1Gi"),
            ("pods", "110"),
            ("nvidia.com/gpu", "2"),
            ("ephemeral-storage", "1"),
            ("count/pods", "3"),
            ("foo", "1"),
        ]));
        assert_eq!(r.milli_cpu, 1500.0);
        assert_eq!(r.memory, 1_073_741_824.0);
        assert_eq!(r.scalar(Dim::PODS), Some(110.0));
        assert_eq!(r.scalar(Dim::of("nvidia.com/gpu")), Some(2000.0));
        assert_eq!(r.scalar(Dim::of("ephemeral-storage")), Some(1000.0));
        assert_eq!(r.scalars().count(), 3);
    }

    #[test]
    fn less_equal_tolerates_epsilon() {
        let a = Resource::cpu_mem(1000.05, 10.0);
        let b = Resource::cpu_mem(1000.0, 10.0);
        assert!(a.less_equal(&b, DimDefault::Zero));
        assert!(!Resource::cpu_mem(1000.2, 10.0).less_equal(&b, DimDefault::Zero));
    }

    #[test]
    fn missing_scalar_rules_follow_zero_and_infinity() {
        let gpu = Dim::of("nvidia.com/gpu");
        let mut l = Resource::cpu_mem(1.0, 1.0);
        l.set_scalar(gpu, 1000.0);
        let r = Resource::cpu_mem(2.0, 2.0);
        assert!(
            !l.less_equal(&r, DimDefault::Zero),
            "missing right scalar is zero"
        );
        assert!(
            l.less_equal(&r, DimDefault::Infinity),
            "missing right scalar is unlimited"
        );
        assert!(
            !r.less_equal(&l, DimDefault::Infinity),
            "missing left scalar is unlimited"
        );
        assert!(Resource::cpu_mem(1.0, 1.0).less_equal(&l, DimDefault::Zero));
    }

    #[test]
    fn is_empty_ignores_pods() {
        let mut r = Resource::empty();
        r.set_scalar(Dim::PODS, 1.0);
        assert!(r.is_empty());
        r.milli_cpu = 1.0;
        assert!(!r.is_empty());
    }

    #[test]
    fn dimension_checks_are_strict_and_only_on_requested_dims() {
        let alloc = Resource::cpu_mem(1000.05, 0.0);
        let deserved = Resource::cpu_mem(1000.0, 0.0);
        let req = Resource::cpu_mem(0.0, 5.0);
        assert!(alloc.less_equal_with_dimension(&deserved, &req).is_ok());
        let req = Resource::cpu_mem(1.0, 0.0);
        assert_eq!(
            alloc.less_equal_with_dimension(&deserved, &req),
            Err(vec![ResourceName::Cpu])
        );
    }

    #[test]
    fn diff_and_exceeded_part() {
        let a = Resource::cpu_mem(5.0, 1.0);
        let b = Resource::cpu_mem(2.0, 3.0);
        let (inc, dec) = a.diff(&b, DimDefault::Zero);
        assert_eq!((inc.milli_cpu, inc.memory), (3.0, 0.0));
        assert_eq!((dec.milli_cpu, dec.memory), (0.0, 2.0));
        assert_eq!(a.exceeded_part(&b).milli_cpu, 3.0);
    }

    #[test]
    fn adding_the_excess_adds_what_diff_increases_dimension_by_dimension() {
        let (gpu, npu, fpga) = (
            Dim::of("nvidia.com/gpu"),
            Dim::of("x.com/npu"),
            Dim::of("y.com/fpga"),
        );
        let mut over = Resource::cpu_mem(5.0, 1.0);
        over.set_scalar(gpu, 4.0);
        over.set_scalar(npu, 1.0);
        let mut floor = Resource::cpu_mem(2.0, 3.0);
        floor.set_scalar(npu, 2.0);
        floor.set_scalar(fpga, -1.0);
        let mut sum = Resource::cpu_mem(1.0, 1.0);
        sum.set_scalar(npu, 7.0);
        let mut expected = sum.clone();
        expected.add(&over.diff(&floor, DimDefault::Zero).0);
        sum.add_excess(&over, &floor);
        assert_eq!(sum, expected);
        assert_eq!(
            (
                sum.milli_cpu,
                sum.memory,
                sum.scalar(gpu),
                sum.scalar(npu),
                sum.scalar(fpga)
            ),
            (4.0, 1.0, Some(4.0), Some(7.0), Some(1.0))
        );
    }

    #[test]
    fn min_dimension_with_infinity_keeps_unbounded_scalars() {
        let gpu = Dim::of("nvidia.com/gpu");
        let mut a = Resource::cpu_mem(5.0, 5.0);
        a.set_scalar(gpu, 4.0);
        let cap = Resource::cpu_mem(3.0, 10.0);
        a.min_dimension(&cap, DimDefault::Infinity);
        assert_eq!(
            (a.milli_cpu, a.memory, a.scalar(gpu)),
            (3.0, 5.0, Some(4.0))
        );
        a.min_dimension(&cap, DimDefault::Zero);
        assert_eq!(
            a.scalar(gpu),
            Some(0.0),
            "with Zero a scalar missing on the right becomes 0"
        );
    }

    #[test]
    fn share_handles_zero_totals() {
        assert_eq!(share(0.0, 0.0), 0.0);
        assert_eq!(share(1.0, 0.0), 1.0);
        assert_eq!(share(1.0, 4.0), 0.25);
    }

    #[test]
    fn plus_fits_with_dimension_answers_as_the_built_sum_would() {
        let gpu = Dim::of("nvidia.com/gpu");
        let other = Dim::of("example.com/fpga");
        let with = |cpu: f64, mem: f64, scalars: &[(Dim, f64)]| {
            let mut r = Resource::empty();
            r.milli_cpu = cpu;
            r.memory = mem;
            for &(d, v) in scalars {
                r.set_scalar(d, v);
            }
            r
        };
        let resources = [
            Resource::empty(),
            with(1000.0, 1e9, &[]),
            with(500.0, 0.0, &[(gpu, 1000.0)]),
            with(0.0, 2e9, &[(gpu, 0.0), (Dim::PODS, 5.0)]),
            with(
                4000.0,
                8e9,
                &[(gpu, 2000.0), (other, 1.0), (Dim::PODS, 110.0)],
            ),
            with(f64::NAN, 1e9, &[(gpu, f64::NAN)]),
        ];
        for a in &resources {
            for req in &resources {
                for limit in &resources {
                    let built = a.plus(req).less_equal_with_dimension(limit, req).is_ok();
                    assert_eq!(
                        a.plus_fits_with_dimension(req, limit),
                        built,
                        "{a:?} {req:?} {limit:?}"
                    );
                }
            }
        }
    }
}
