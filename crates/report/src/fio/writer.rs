//! A JSON document written the way fio's json.c writes it: keys in insertion
//! order, `"key" : value` pairs one per line, two spaces per level, floats as
//! `%f` (six decimals), and a pair whose string value is empty left out.
//!
//! Two deliberate differences: control characters in strings are escaped
//! (fio writes them raw, which is not JSON), and a float that is not finite is
//! written as 0.000000 (fio would write `nan`).

use std::fmt::Write as _;

pub enum Value {
    Int(u64),
    Float(f64),
    Str(String),
    Obj(Obj),
    Arr(Vec<Value>),
}

/// An object whose keys keep the order they were added in.
#[derive(Default)]
pub struct Obj(Vec<(String, Value)>);

impl Obj {
    pub fn new() -> Obj {
        Obj::default()
    }
    pub fn int(&mut self, key: &str, v: u64) -> &mut Obj {
        self.put(key, Value::Int(v))
    }
    pub fn float(&mut self, key: &str, v: f64) -> &mut Obj {
        self.put(key, Value::Float(v))
    }
    /// fio drops a pair whose string is empty (json.c `strdup_escape`).
    pub fn str(&mut self, key: &str, v: &str) -> &mut Obj {
        if v.is_empty() {
            return self;
        }
        self.put(key, Value::Str(v.to_string()))
    }
    pub fn obj(&mut self, key: &str, v: Obj) -> &mut Obj {
        self.put(key, Value::Obj(v))
    }
    pub fn arr(&mut self, key: &str, v: Vec<Value>) -> &mut Obj {
        self.put(key, Value::Arr(v))
    }
    fn put(&mut self, key: &str, v: Value) -> &mut Obj {
        self.0.push((key.to_string(), v));
        self
    }
    /// An object of floats under the given keys (fio's percentage maps).
    pub fn floats<'a>(pairs: impl IntoIterator<Item = (&'a str, f64)>) -> Obj {
        let mut o = Obj::new();
        for (k, v) in pairs {
            o.float(k, v);
        }
        o
    }

    /// The whole document, with the newline fio ends it with.
    pub fn render(&self) -> String {
        let mut s = String::new();
        object(self, 0, &mut s);
        s.push('\n');
        s
    }
}

fn indent(level: usize, out: &mut String) {
    for _ in 0..level {
        out.push_str("  ");
    }
}

/// json.c `json_print_object`: pairs one level deeper than the object.
fn object(o: &Obj, level: usize, out: &mut String) {
    out.push_str("{\n");
    for (i, (k, v)) in o.0.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(level + 1, out);
        string(k, out);
        out.push_str(" : ");
        value(v, level + 1, out);
    }
    out.push('\n');
    indent(level, out);
    out.push('}');
}

/// json.c `json_print_array`: elements one level deeper than the pair.
fn array(a: &[Value], level: usize, out: &mut String) {
    out.push_str("[\n");
    for (i, v) in a.iter().enumerate() {
        if i > 0 {
            out.push_str(",\n");
        }
        indent(level + 1, out);
        value(v, level + 1, out);
    }
    out.push('\n');
    indent(level, out);
    out.push(']');
}

fn value(v: &Value, level: usize, out: &mut String) {
    match v {
        Value::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Value::Float(f) => out.push_str(&percent_f(*f)),
        Value::Str(s) => string(s, out),
        Value::Obj(o) => object(o, level, out),
        Value::Arr(a) => array(a, level, out),
    }
}

/// C's `%f`; 0.000000 for a value that is not finite.
pub fn percent_f(f: f64) -> String {
    if f.is_finite() {
        format!("{f:.6}")
    } else {
        "0.000000".into()
    }
}

fn string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_fios() {
        // Shaped like the start of a real fio 3.33 document (/tmp/fx/r1.json).
        let mut slat = Obj::new();
        slat.int("min", 0).int("max", 0).float("mean", 0.0).float("stddev", 0.0).int("N", 0);
        let mut read = Obj::new();
        read.float("iops", 24258.370815).obj("slat_ns", slat);
        let mut job = Obj::new();
        job.str("jobname", "t").str("desc", "").obj("read", read).obj("empty", Obj::new());
        let mut root = Obj::new();
        root.str("fio version", "fio-3.33").arr("jobs", vec![Value::Obj(job)]).arr("none", vec![]);
        let expected = r#"{
  "fio version" : "fio-3.33",
  "jobs" : [
    {
      "jobname" : "t",
      "read" : {
        "iops" : 24258.370815,
        "slat_ns" : {
          "min" : 0,
          "max" : 0,
          "mean" : 0.000000,
          "stddev" : 0.000000,
          "N" : 0
        }
      },
      "empty" : {

      }
    }
  ],
  "none" : [

  ]
}
"#;
        assert_eq!(root.render(), expected);
    }

    #[test]
    fn strings_stay_valid_json() {
        let mut o = Obj::new();
        o.str("desc", "a \"q\" \\ b\nc");
        let text = o.render();
        assert!(text.contains(r#""desc" : "a \"q\" \\ b\u000ac""#), "{text}");
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["desc"], "a \"q\" \\ b\nc");
        assert_eq!(percent_f(f64::NAN), "0.000000");
        assert_eq!(percent_f(99.126944444), "99.126944");
    }
}
