//! Parameter files.
//!
//! * Overrides (`--dev`, `--base`): TOML `name = value` lines with integer
//!   values in engine units; an empty file means the engine's defaults.
//! * SPSA (`--params`): one TOML table per tuned parameter with the keys
//!   `start`, `min`, `max` (numbers, required) and `c_end`, `r_end`
//!   (numbers; when left out, the engine's parameter table gives them, as
//!   `xq-engine params` prints them):
//!
//!   ```toml
//!   [chariot_value]
//!   start = 900
//!   min = 300
//!   max = 1500
//!   c_end = 50     # perturbation at the end of the run, parameter units
//!   r_end = 0.002  # learning rate at the end of the run
//!   ```

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, bail};
use xq_proto::pb;

fn read_table(path: &Path) -> anyhow::Result<toml::Table> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read parameter file {}", path.display()))?;
    text.parse::<toml::Table>()
        .with_context(|| format!("invalid toml in {}", path.display()))
}

/// Reads `name = integer` overrides; `None` = no file = defaults.
pub fn overrides(path: Option<&Path>) -> anyhow::Result<HashMap<String, i64>> {
    let Some(path) = path else {
        return Ok(HashMap::new());
    };
    read_table(path)?
        .into_iter()
        .map(|(name, value)| match value {
            toml::Value::Integer(v) => Ok((name, v)),
            other => bail!(
                "invalid parameter file {}: {name} = {other} is not an integer",
                path.display()
            ),
        })
        .collect()
}

/// Reads SPSA parameter tables, in file order.
pub fn spsa(path: &Path) -> anyhow::Result<Vec<pb::SpsaParam>> {
    let table = read_table(path)?;
    if table.is_empty() {
        bail!("invalid spsa file {}: no parameters", path.display());
    }
    table
        .into_iter()
        .map(|(name, value)| {
            let toml::Value::Table(fields) = value else {
                bail!(
                    "invalid spsa file {}: {name:?} must be a table like [{name}] with start, min, max, c_end, r_end",
                    path.display()
                );
            };
            let table = xq_engine::params::spec(&name);
            let get = |key: &str, default: Option<f64>| -> anyhow::Result<f64> {
                match (fields.get(key), default) {
                    (Some(toml::Value::Integer(v)), _) => Ok(*v as f64),
                    (Some(toml::Value::Float(v)), _) => Ok(*v),
                    (Some(other), _) => bail!(
                        "invalid spsa file {}: [{name}] {key} = {other} is not a number",
                        path.display()
                    ),
                    (None, Some(d)) => Ok(d),
                    (None, None) => {
                        bail!("invalid spsa file {}: [{name}] has no {key}", path.display())
                    }
                }
            };
            let param = pb::SpsaParam {
                start: get("start", None)?,
                min: get("min", None)?,
                max: get("max", None)?,
                c_end: get("c_end", table.map(|t| t.c_end))?,
                r_end: get("r_end", table.map(|t| t.r_end))?,
                name: name.clone(),
            };
            if let Some(key) = fields
                .keys()
                .find(|k| !["start", "min", "max", "c_end", "r_end"].contains(&k.as_str()))
            {
                bail!("invalid spsa file {}: [{name}] has unknown key {key:?}", path.display());
            }
            Ok(param)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(tag: &str, text: &str) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("xq-params-{}-{tag}.toml", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn overrides_need_integers() {
        let ok = file("ok", "chariot_value = 900\n");
        assert_eq!(overrides(Some(&ok)).unwrap()["chariot_value"], 900);
        let empty = file("empty", "");
        assert!(overrides(Some(&empty)).unwrap().is_empty());
        let bad = file("bad", "chariot_value = \"nine\"\n");
        let err = format!("{:#}", overrides(Some(&bad)).unwrap_err());
        assert!(
            err.contains("chariot_value") && err.contains("not an integer"),
            "{err}"
        );
    }

    #[test]
    fn spsa_tables_are_read_and_checked() {
        let ok = file(
            "spsa",
            "[chariot_value]\nstart = 900\nmin = 300\nmax = 1500\nc_end = 50\nr_end = 0.002\n",
        );
        let params = spsa(&ok).unwrap();
        assert_eq!(params[0].name, "chariot_value");
        assert_eq!(params[0].r_end, 0.002);
        let missing = file("missing", "[x]\nstart = 1\n");
        let err = format!("{:#}", spsa(&missing).unwrap_err());
        assert!(err.contains("[x] has no min"), "{err}");
        let defaults = file(
            "defaults",
            "[chariot_value]\nstart = 900\nmin = 300\nmax = 1500\n",
        );
        let spec = xq_engine::params::spec("chariot_value").unwrap();
        let params = spsa(&defaults).unwrap();
        assert_eq!((params[0].c_end, params[0].r_end), (spec.c_end, spec.r_end));
        let unknown = file("unknown", "[nope]\nstart = 1\nmin = 0\nmax = 2\n");
        let err = format!("{:#}", spsa(&unknown).unwrap_err());
        assert!(err.contains("[nope] has no c_end"), "{err}");
        let flat = file("flat", "x = 1\n");
        assert!(format!("{:#}", spsa(&flat).unwrap_err()).contains("must be a table"));
    }
}
