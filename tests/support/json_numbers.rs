//! Every number of a JSON value, by its path, for the tests that corrupt
//! serialized snapshots one number at a time. Shared, by `#[path]`,
//! between the persistent crate's serde tests and the plugin's.

use serde_json::Value;

/// One step of a path into a JSON value.
#[derive(Clone, Debug)]
pub(crate) enum Step {
    Key(String),
    At(usize),
}

/// The path of every number in `value`, in document order.
pub(crate) fn number_paths(value: &Value) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    collect(value, &mut Vec::new(), &mut out);
    out
}

fn collect(value: &Value, at: &mut Vec<Step>, out: &mut Vec<Vec<Step>>) {
    match value {
        Value::Number(_) => out.push(at.clone()),
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                at.push(Step::At(i));
                collect(item, at, out);
                at.pop();
            }
        }
        Value::Object(fields) => {
            for (k, item) in fields {
                at.push(Step::Key(k.clone()));
                collect(item, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The value at `path` in `value`.
pub(crate) fn at_path<'a>(value: &'a mut Value, path: &[Step]) -> &'a mut Value {
    path.iter().fold(value, |v, step| match step {
        Step::Key(k) => &mut v[k.as_str()],
        Step::At(i) => &mut v[*i],
    })
}
