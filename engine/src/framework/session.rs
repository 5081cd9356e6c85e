//! A scheduling session: the state of one cycle plus the plugins opened on it, tier by tier.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use super::{PluginRegistry, PluginTiming, SessionOptions, SessionState};
use crate::config::{Action, ConfigError, PluginOption, Point, SchedulerConfig};
use crate::model::{NodeId, TaskId};
use crate::snapshot::Snapshot;

use super::Plugin;

/// One configured plugin instance.
pub(crate) struct Slot {
    pub option: PluginOption,
    pub plugin: Box<dyn Plugin>,
}

/// An open session.
pub struct Session {
    pub state: SessionState,
    pub(crate) slots: Vec<Slot>,
    pub(crate) tiers: Vec<Range<usize>>,
    /// Per point (`point as usize`), its enabled slots in tier order with their tier: worked
    /// out once, as a node's re-rank alone dispatches three points over every plugin.
    enabled: Vec<Vec<(usize, usize)>>,
    /// Binds issued by statement commits and `allocate_and_dispatch`, in order.
    pub binds: Vec<(TaskId, NodeId)>,
    /// Evictions issued, with their reason.
    pub evictions: Vec<(TaskId, String)>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field(
                "plugins",
                &self
                    .slots
                    .iter()
                    .map(|s| &s.option.name)
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl Session {
    /// `OpenSession`: builds the session state, then each plugin in tier order and calls its
    /// `on_session_open`, timing each call (Volcano: framework/framework.go, OpenSession).
    pub fn open(
        snap: Arc<Snapshot>,
        config: Arc<SchedulerConfig>,
        registry: &PluginRegistry,
        options: SessionOptions,
    ) -> Result<Session, ConfigError> {
        let mut state = SessionState::new(snap, config.clone(), options);
        super::topology::open_hyper_nodes(&mut state);
        let mut slots = Vec::new();
        let mut tiers = Vec::new();
        for (ti, tier) in config.tiers.iter().enumerate() {
            let start = slots.len();
            for p in &tier.plugins {
                let builder = registry
                    .get(&p.name)
                    .ok_or_else(|| ConfigError::UnknownPlugin(p.name.clone(), ti))?;
                let mut plugin = builder(&p.arguments).map_err(|error| ConfigError::Argument {
                    plugin: p.name.clone(),
                    error,
                })?;
                let started = Instant::now();
                plugin.on_session_open(&state);
                state.metrics.plugin_open.push(PluginTiming {
                    plugin: p.name.clone(),
                    took: started.elapsed(),
                });
                slots.push(Slot {
                    option: p.clone(),
                    plugin,
                });
            }
            tiers.push(start..slots.len());
        }
        let enabled = Point::ALL
            .iter()
            .map(|&point| {
                let slots = &slots;
                tiers
                    .iter()
                    .enumerate()
                    .flat_map(|(ti, r)| r.clone().map(move |si| (ti, si)))
                    .filter(|&(_, si)| slots[si].option.enabled(point))
                    .collect()
            })
            .collect();
        Ok(Session {
            state,
            slots,
            tiers,
            enabled,
            binds: Vec::new(),
            evictions: Vec::new(),
        })
    }

    /// True when `action` is configured (allocate's auto-admission looks).
    pub fn action_configured(&self, action: Action) -> bool {
        self.state.config.actions.contains(&action)
    }

    /// Slots whose plugin's function for `point` is enabled, with their tier index.
    pub(crate) fn enabled(&self, point: Point) -> impl Iterator<Item = (usize, &dyn Plugin)> {
        self.enabled[point as usize]
            .iter()
            .map(|&(ti, si)| (ti, self.slots[si].plugin.as_ref()))
    }

    /// Plugins of each tier whose `point` is enabled, tier by tier.
    pub(crate) fn enabled_by_tier(
        &self,
        point: Point,
    ) -> impl Iterator<Item = impl Iterator<Item = &dyn Plugin>> {
        (0..self.tiers.len()).map(move |tier| {
            self.enabled(point)
                .filter(move |&(ti, _)| ti == tier)
                .map(|(_, p)| p)
        })
    }

    /// Every plugin, tier by tier (for points without an enable flag).
    pub(crate) fn all_by_tier(&self) -> impl Iterator<Item = impl Iterator<Item = &dyn Plugin>> {
        self.tiers
            .iter()
            .map(move |r| self.slots[r.clone()].iter().map(|s| s.plugin.as_ref()))
    }

    /// Runs the allocate event handlers of every plugin; the first error is returned.
    pub(crate) fn fire_allocate(&mut self, t: TaskId) -> Result<(), String> {
        let mut first = Ok(());
        for s in &mut self.slots {
            if let Err(e) = s.plugin.on_allocate(&self.state, t)
                && first.is_ok()
            {
                first = Err(e);
            }
        }
        first
    }

    /// Runs the deallocate event handlers of every plugin.
    pub(crate) fn fire_deallocate(&mut self, t: TaskId) {
        for s in &mut self.slots {
            s.plugin.on_deallocate(&self.state, t);
        }
    }

    /// Calls `on_session_close` of every plugin, in tier order, timing each.
    pub(crate) fn close_plugins(&mut self) {
        for s in &mut self.slots {
            let started = Instant::now();
            s.plugin.on_session_close(&mut self.state);
            self.state.metrics.plugin_close.push(PluginTiming {
                plugin: s.option.name.clone(),
                took: started.elapsed(),
            });
        }
    }

    /// JobEnqueued: notifies every plugin whose `enableJobEnqueued` is set.
    pub fn job_enqueued(&mut self, job: crate::model::JobId) {
        for s in &mut self.slots {
            if s.option.enabled(Point::JobEnqueued) {
                s.plugin.job_enqueued(&self.state, job);
            }
        }
    }
}
