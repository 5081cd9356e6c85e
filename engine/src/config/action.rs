//! The actions a configuration may list, as a closed set: every action Volcano registers
//! (pkg/scheduler/actions/factory.go), parsed once from `actions`.

use std::fmt;

/// One action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Action {
    Enqueue,
    Allocate,
    Backfill,
    Preempt,
    Reclaim,
    Shuffle,
    GangPreempt,
    GangReclaim,
}

impl Action {
    /// Every action, in Volcano's registration order.
    pub const ALL: [Action; 8] = [
        Action::Enqueue,
        Action::Allocate,
        Action::Backfill,
        Action::Preempt,
        Action::Reclaim,
        Action::Shuffle,
        Action::GangPreempt,
        Action::GangReclaim,
    ];

    /// Volcano's name of the action.
    pub fn name(self) -> &'static str {
        match self {
            Action::Enqueue => "enqueue",
            Action::Allocate => "allocate",
            Action::Backfill => "backfill",
            Action::Preempt => "preempt",
            Action::Reclaim => "reclaim",
            Action::Shuffle => "shuffle",
            Action::GangPreempt => "gangpreempt",
            Action::GangReclaim => "gangreclaim",
        }
    }

    /// The action called `name`, if Volcano has one.
    pub fn parse(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.name() == name)
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Compares with a name, so lists of actions read as the configuration wrote them.
impl PartialEq<&str> for Action {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_action_parses_back_from_its_name_and_others_do_not() {
        for a in Action::ALL {
            assert_eq!(Action::parse(a.name()), Some(a));
        }
        assert_eq!(Action::parse("alocate"), None);
        assert_eq!(Action::parse("Allocate"), None, "names are case-sensitive");
    }
}
