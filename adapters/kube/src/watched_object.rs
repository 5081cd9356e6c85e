//! The object a watch decodes: its JSON decoded for the conversion into cluster objects, its
//! bytes as the API server sent them for the writes that send it back (`raw::Raw`), and its
//! metadata typed beside them for the list-and-watch loop (resource versions to resume from,
//! names of deletions).
//!
//! The managed fields are dropped from both (nothing here reads them, and they are most of an
//! object's metadata): from the bytes by cutting them out, so nothing decoded is encoded again.
//! kube's `DynamicObject` would decode through serde's flattening, which buffers every field
//! before placing it, and need encoding back to JSON. A watch's first list is most of start-up
//! on a large cluster (50,000 pods).

use std::borrow::Cow;

use kube::api::ApiResource;
use kube::core::{DynamicResourceScope, ObjectMeta, Resource};
use serde::{Deserialize, Deserializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::managed_fields::without_managed_fields;
use crate::raw::Raw;

/// One object of a watched kind, `metadata.managedFields` left out.
#[derive(Debug, Clone)]
pub struct WatchedObject {
    pub metadata: ObjectMeta,
    /// The whole object, decoded.
    pub json: Value,
    /// The whole object as it came.
    pub raw: Raw,
}

impl WatchedObject {
    /// Decodes one object's JSON (a list's item, a watch event's object).
    pub fn from_json(bytes: &[u8]) -> Result<WatchedObject, serde_json::Error> {
        let mut json: Value = serde_json::from_slice(bytes)?;
        let metadata = match json.get_mut("metadata") {
            Some(meta) => {
                if let Some(fields) = meta.as_object_mut() {
                    fields.remove("managedFields");
                }
                ObjectMeta::deserialize(&*meta)?
            }
            None => ObjectMeta::default(),
        };
        let raw = Raw::new(without_managed_fields(bytes), &metadata);
        Ok(WatchedObject {
            metadata,
            json,
            raw,
        })
    }
}

/// A watch event's object, taken as its bytes first. The API server writes an event's `type`
/// before its `object` (metav1.WatchEvent's field order), so kube's adjacently tagged
/// `WatchEvent` hands the object to this straight from the JSON decoder, which can give bytes.
impl<'de> Deserialize<'de> for WatchedObject {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bytes = <Box<RawValue>>::deserialize(deserializer)?;
        WatchedObject::from_json(bytes.get().as_bytes()).map_err(serde::de::Error::custom)
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
    fn decoding_keeps_the_json_and_its_bytes_and_types_the_metadata_without_managed_fields() {
        let o = WatchedObject::from_json(
            json!({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "ns", "resourceVersion": "7", "uid": "u",
                    "managedFields": [{"manager": "kubectl", "operation": "Update"}]},
                "spec": {"nodeName": "n1"}
            })
            .to_string()
            .as_bytes(),
        )
        .unwrap();
        assert_eq!(o.metadata.name.as_deref(), Some("p"));
        assert_eq!(o.metadata.resource_version.as_deref(), Some("7"));
        assert_eq!(o.metadata.managed_fields, None);
        assert_eq!(o.json["spec"]["nodeName"], "n1");
        assert_eq!(o.json["metadata"].get("managedFields"), None);
        assert_eq!(o.raw.value().unwrap(), o.json);
        assert_eq!(o.raw, Raw::of_value(&o.json));
    }

    #[test]
    fn a_watch_event_hands_its_object_over_as_bytes() {
        let line = r#"{"type":"MODIFIED","object":{"kind":"Pod","metadata":{"name":"p","resourceVersion":"9","managedFields":[{}]}}}"#;
        let event: kube::core::WatchEvent<WatchedObject> = serde_json::from_str(line).unwrap();
        let kube::core::WatchEvent::Modified(o) = event else {
            panic!("{event:?}")
        };
        assert_eq!(o.metadata.resource_version.as_deref(), Some("9"));
        assert_eq!(
            o.raw.value().unwrap(),
            json!({"kind": "Pod", "metadata": {"name": "p", "resourceVersion": "9"}})
        );
    }

    #[test]
    fn malformed_metadata_is_a_decoding_error() {
        let e =
            WatchedObject::from_json(br#"{"kind": "Pod", "metadata": {"name": 3}}"#).unwrap_err();
        assert!(e.to_string().contains("string"), "{e}");
    }
}
