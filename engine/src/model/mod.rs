//! Scheduling values: quantities, resources, task statuses, dense ids.

mod dim;
mod duration;
mod ids;
mod quantity;
mod resource;
mod scalar_map;
mod status;

pub use dim::Dim;
pub use duration::{DurationError, parse_go_duration};
pub use ids::{HyperNodeId, JobId, NodeId, QueueId, RowId, SubJobId, TaskId};
pub use quantity::{Quantity, QuantityError};
pub use resource::{DimDefault, EPSILON, Resource, ResourceName, is_scalar_resource_name, share};
pub use status::{StatusCounts, TaskStatus};
