//! The object a watch decodes: its JSON as the API server sent it, with its metadata typed
//! beside it for the list-and-watch loop (resource versions to resume from, names of deletions).
//!
//! The conversion into cluster objects reads JSON, so the JSON is decoded once and kept, the
//! managed fields dropped (nothing here reads them, and they are most of an object's metadata),
//! and only the metadata typed from it. kube's `DynamicObject` would decode through serde's
//! flattening, which buffers every field before placing it, and need encoding back to JSON. A
//! watch's first list is most of start-up on a large cluster (50,000 pods).

use std::borrow::Cow;

use kube::api::ApiResource;
use kube::core::{DynamicResourceScope, ObjectMeta, Resource};
use serde::{Deserialize, Deserializer};
use serde_json::Value;

/// One object of a watched kind.
#[derive(Debug, Clone)]
pub struct WatchedObject {
    pub metadata: ObjectMeta,
    /// The whole object, `metadata.managedFields` left out.
    pub json: Value,
}

impl<'de> Deserialize<'de> for WatchedObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut json = Value::deserialize(deserializer)?;
        let metadata = match json.get_mut("metadata") {
            Some(meta) => {
                if let Some(fields) = meta.as_object_mut() {
                    fields.remove("managedFields");
                }
                ObjectMeta::deserialize(&*meta).map_err(serde::de::Error::custom)?
            }
            None => ObjectMeta::default(),
        };
        Ok(WatchedObject { metadata, json })
    }
}

impl Resource for WatchedObject {
    type DynamicType = ApiResource;
    type Scope = DynamicResourceScope;

    fn group(dt: &ApiResource) -> Cow<'_, str> {
        dt.group.as_str().into()
    }

    fn version(dt: &ApiResource) -> Cow<'_, str> {
        dt.version.as_str().into()
    }

    fn kind(dt: &ApiResource) -> Cow<'_, str> {
        dt.kind.as_str().into()
    }

    fn api_version(dt: &ApiResource) -> Cow<'_, str> {
        dt.api_version.as_str().into()
    }

    fn plural(dt: &ApiResource) -> Cow<'_, str> {
        dt.plural.as_str().into()
    }

    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn decoding_keeps_the_json_and_types_the_metadata_without_managed_fields() {
        let o: WatchedObject = serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7",
                "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
            "spec": {"nodeName": "n1"}
        }))
        .unwrap();
        assert_eq!(o.metadata.name.as_deref(), Some("p"));
        assert_eq!(o.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(o.metadata.managed_fields, None);
        assert_eq!(o.json["spec"]["nodeName"], "n1");
        assert_eq!(o.json["metadata"].get("managedFields"), None);
    }

    #[test]
    fn malformed_metadata_is_a_decoding_error() {
        let e = serde_json::from_value::<WatchedObject>(json!({
            "kind": "Pod", "metadata": {"name": 3}
        }))
        .unwrap_err();
        assert!(e.to_string().contains("string"), "{e}");
    }
}
