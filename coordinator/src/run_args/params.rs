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
//!
//!   or fishtest's and OpenBench's lines, as pasted from their pages or
//!   printed by `xq-engine params --format spsa` (and by `report` for a
//!   finished tune), one parameter per line, `#` comments and blank lines
//!   ignored; `c_end` and `r_end` may be left out as in TOML:
//!
//!   ```text
//!   chariot_value, int, 900, 300, 1500, 50, 0.002
//!   KingSafety, float, 1.25, 0.5, 2.0
//!   ```

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Context, bail};
use xq_proto::pb;

use super::Files;

fn read_table(path: &Path, files: &dyn Files) -> anyhow::Result<toml::Table> {
    let text = files
        .read(path)
        .with_context(|| format!("cannot read parameter file {}", path.display()))?;
    text.parse::<toml::Table>()
        .with_context(|| format!("invalid toml in {}", path.display()))
}

/// Reads `name = integer` overrides; `None` = no file = defaults.
pub fn overrides(path: Option<&Path>, files: &dyn Files) -> anyhow::Result<HashMap<String, i64>> {
    let Some(path) = path else {
        return Ok(HashMap::new());
    };
    read_table(path, files)?
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

/// Reads SPSA parameters, in file order, from TOML tables or from
/// `name, int|float, start, min, max[, c_end, r_end]` lines.
pub fn spsa(path: &Path, files: &dyn Files) -> anyhow::Result<Vec<pb::SpsaParam>> {
    let text = files
        .read(path)
        .with_context(|| format!("cannot read parameter file {}", path.display()))?;
    if is_lines(&text) {
        return spsa_lines(&text).with_context(|| format!("invalid spsa file {}", path.display()));
    }
    spsa_toml(path, &text)
}

/// Whether the first meaningful line is a comma-separated parameter line
/// rather than TOML.
fn is_lines(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .is_some_and(|l| l.contains(',') && !l.starts_with('[') && !l.contains('='))
}

/// Reads `name, int|float, start, min, max[, c_end, r_end]` lines; missing
/// `c_end`/`r_end` come from the built-in engine's table.
pub fn spsa_lines(text: &str) -> anyhow::Result<Vec<pb::SpsaParam>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let n = i + 1;
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != 5 && fields.len() != 7 {
            bail!(
                "line {n}: expected `name, int|float, start, min, max[, c_end, r_end]`, got {} fields",
                fields.len()
            );
        }
        let name = fields[0];
        if name.is_empty() {
            bail!("line {n}: empty parameter name");
        }
        let is_float = match fields[1] {
            "int" => false,
            "float" => true,
            other => bail!("line {n}: {name}: type {other:?} is neither int nor float"),
        };
        let number = |k: usize, what: &str| -> anyhow::Result<f64> {
            fields[k]
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .with_context(|| {
                    format!("line {n}: {name}: {what} {:?} is not a number", fields[k])
                })
        };
        let table = xq_engine::params::spec(name);
        let default = |k: usize, what: &str, d: Option<f64>| -> anyhow::Result<f64> {
            if fields.len() == 7 {
                return number(k, what);
            }
            d.with_context(|| {
                format!(
                    "line {n}: {name} gives no {what} and the built-in engine has no such parameter"
                )
            })
        };
        out.push(pb::SpsaParam {
            name: name.to_owned(),
            start: number(2, "start")?,
            min: number(3, "min")?,
            max: number(4, "max")?,
            c_end: default(5, "c_end", table.map(|t| t.c_end))?,
            r_end: default(6, "r_end", table.map(|t| t.r_end))?,
            is_float,
        });
    }
    if out.is_empty() {
        bail!("no parameters");
    }
    Ok(out)
}

/// Reads SPSA parameter tables, in file order.
fn spsa_toml(path: &Path, text: &str) -> anyhow::Result<Vec<pb::SpsaParam>> {
    let table = text
        .parse::<toml::Table>()
        .with_context(|| format!("invalid toml in {}", path.display()))?;
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
                is_float: false,
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
    use super::super::Disk;
    use super::*;
    use crate::runs::spsa::{param_of_wire, paste_back};

    fn file(tag: &str, text: &str) -> std::path::PathBuf {
        let path =
            std::env::temp_dir().join(format!("xq-params-{}-{tag}.toml", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn overrides_need_integers() {
        let ok = file("ok", "chariot_value = 900\n");
        assert_eq!(overrides(Some(&ok), &Disk).unwrap()["chariot_value"], 900);
        let empty = file("empty", "");
        assert!(overrides(Some(&empty), &Disk).unwrap().is_empty());
        let bad = file("bad", "chariot_value = \"nine\"\n");
        let err = format!("{:#}", overrides(Some(&bad), &Disk).unwrap_err());
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
        let params = spsa(&ok, &Disk).unwrap();
        assert_eq!(params[0].name, "chariot_value");
        assert_eq!(params[0].r_end, 0.002);
        let missing = file("missing", "[x]\nstart = 1\n");
        let err = format!("{:#}", spsa(&missing, &Disk).unwrap_err());
        assert!(err.contains("[x] has no min"), "{err}");
        let defaults = file(
            "defaults",
            "[chariot_value]\nstart = 900\nmin = 300\nmax = 1500\n",
        );
        let spec = xq_engine::params::spec("chariot_value").unwrap();
        let params = spsa(&defaults, &Disk).unwrap();
        assert_eq!((params[0].c_end, params[0].r_end), (spec.c_end, spec.r_end));
        let unknown = file("unknown", "[nope]\nstart = 1\nmin = 0\nmax = 2\n");
        let err = format!("{:#}", spsa(&unknown, &Disk).unwrap_err());
        assert!(err.contains("[nope] has no c_end"), "{err}");
        let flat = file("flat", "x = 1\n");
        assert!(format!("{:#}", spsa(&flat, &Disk).unwrap_err()).contains("must be a table"));
    }

    #[test]
    fn fishtest_and_openbench_lines_are_read_and_round_trip() {
        let printed = xq_engine::params::Params::default().to_spsa();
        let path = file("printed", &printed);
        let params = spsa(&path, &Disk).unwrap();
        assert_eq!(params.len(), xq_engine::params::SPECS.len());
        let theta: Vec<f64> = params.iter().map(|p| p.start).collect();
        let to_spsa_lines = |params: &[pb::SpsaParam], theta: &[f64]| {
            let params: Vec<_> = params.iter().cloned().map(param_of_wire).collect();
            paste_back(&params, theta)
        };
        assert_eq!(to_spsa_lines(&params, &theta), printed);

        let pasted = "# from the tuning page\nchariot_value,int,300,100,2000,30,0.002\n\n\
                      KingSafety, float, 1.25, 0.5, 2.0, 0.1, 0.002\nhorse_value, int, 400, 50, 1000\n";
        let params = spsa_lines(pasted).unwrap();
        assert_eq!(params[0].start, 300.0);
        assert!(params[1].is_float && !params[0].is_float);
        let horse = xq_engine::params::spec("horse_value").unwrap();
        assert_eq!(
            (params[2].c_end, params[2].r_end),
            (horse.c_end, horse.r_end)
        );
        assert_eq!(
            to_spsa_lines(&params[1..2], &[1.5]),
            "KingSafety, float, 1.5, 0.5, 2, 0.1, 0.002\n"
        );

        let err = |text: &str| format!("{:#}", spsa_lines(text).unwrap_err());
        assert!(err("x, int, 1, 0, 2\n").contains("x gives no c_end"));
        assert!(err("x, bool, 1, 0, 2, 1, 0.1\n").contains("neither int nor float"));
        assert!(err("x, int, one, 0, 2, 1, 0.1\n").contains("start \"one\""));
        assert!(err("x, int, 1, 0\n").contains("line 1"));
        assert!(err("# nothing\n").contains("no parameters"));
    }
}
