//! Finding which field of a document a typed deserialization chokes on.
//!
//! serde_json's errors from a `Value` say what is wrong but not where. Every field of the
//! object types has a default, so removing the offending subtree makes deserialization
//! succeed: descend into the first subtree whose removal does, down to the smallest one.

use serde::de::DeserializeOwned;
use serde_json::Value;

#[derive(Debug, Clone)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path (`spec.containers[0].resources.requests.cpu`) of the smallest subtree whose removal
/// lets `value` deserialize as `T`; `None` when no single subtree is to blame.
pub fn failing_field<T: DeserializeOwned>(value: &Value) -> Option<String> {
    if serde_json::from_value::<T>(value.clone()).is_ok() {
        return None;
    }
    let mut path: Vec<Step> = Vec::new();
    while let Some(node) = lookup(value, &path) {
        let children: Vec<Step> = match node {
            Value::Object(m) => m.keys().cloned().map(Step::Key).collect(),
            Value::Array(a) => (0..a.len()).map(Step::Index).collect(),
            _ => Vec::new(),
        };
        let culprit = children.into_iter().find(|child| {
            let mut trial = value.clone();
            remove(&mut trial, &path, child);
            serde_json::from_value::<T>(trial).is_ok()
        });
        match culprit {
            Some(step) => path.push(step),
            None => break,
        }
    }
    (!path.is_empty()).then(|| render(&path))
}

fn lookup<'a>(value: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, step| match step {
        Step::Key(k) => v.get(k),
        Step::Index(i) => v.get(i),
    })
}

fn remove(value: &mut Value, parent: &[Step], child: &Step) {
    let node = parent.iter().try_fold(value, |v, step| match step {
        Step::Key(k) => v.get_mut(k),
        Step::Index(i) => v.get_mut(i),
    });
    match (node, child) {
        (Some(Value::Object(m)), Step::Key(k)) => {
            m.remove(k);
        }
        (Some(Value::Array(a)), Step::Index(i)) if *i < a.len() => {
            a.remove(*i);
        }
        _ => {}
    }
}

fn render(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Key(k)
                if !k.is_empty()
                    && k.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Step::Key(k) => s.push_str(&format!("[{k:?}]")),
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tephra_engine::api::{Pod, PodGroup};

    #[test]
    fn finds_a_bad_quantity_deep_in_a_list() {
        let v = json!({"metadata": {"name": "p"}, "spec": {"containers": [
            {"name": "ok", "resources": {"requests": {"cpu": "1"}}},
            {"name": "bad", "resources": {"requests": {"cpu": "lots", "memory": "1Gi"}}}
        ]}});
        assert_eq!(
            failing_field::<Pod>(&v).as_deref(),
            Some("spec.containers[1].resources.requests.cpu")
        );
    }

    #[test]
    fn finds_a_wrongly_typed_scalar() {
        let v = json!({"metadata": {"name": "pg"}, "spec": {"minMember": "three", "queue": "q"}});
        assert_eq!(
            failing_field::<PodGroup>(&v).as_deref(),
            Some("spec.minMember")
        );
    }

    #[test]
    fn a_container_of_the_wrong_shape_is_named_itself() {
        let v = json!({"spec": {"containers": "c0"}});
        assert_eq!(failing_field::<Pod>(&v).as_deref(), Some("spec.containers"));
    }

    #[test]
    fn keys_that_are_not_identifiers_are_quoted() {
        let v = json!({"spec": {"nodeSelector": {"kubernetes.io/os": 5}}});
        assert_eq!(
            failing_field::<Pod>(&v).as_deref(),
            Some("spec.nodeSelector[\"kubernetes.io/os\"]")
        );
    }

    #[test]
    fn errors_in_two_places_are_blamed_on_their_common_parent() {
        let v = json!({"spec": {"priority": "high", "nodeName": 7}});
        assert_eq!(failing_field::<Pod>(&v).as_deref(), Some("spec"));
    }

    #[test]
    fn a_valid_value_has_no_failing_field() {
        assert_eq!(
            failing_field::<Pod>(&json!({"metadata": {"name": "p"}})),
            None
        );
    }
}
