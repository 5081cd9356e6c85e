//! Actions.
