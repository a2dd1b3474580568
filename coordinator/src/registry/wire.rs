//! The registry's messages to and from the wire: a registration as a
//! request, entries as listed. Requests become domain types with
//! `TryFrom<pb::X>` (`Error = Invalid`, naming the field), destructuring
//! every field.

use xq_proto::{EngineRef, Invalid, pb, required};

use crate::spin_options::SpinOption;
use crate::store::assets::Asset;
use crate::store::engines::{Entry, NewEngine};

/// Most spin options one registration carries.
pub const MAX_SPIN_OPTIONS: usize = 1024;
/// Longest spin option name, in bytes.
pub const MAX_SPIN_NAME: usize = 128;
/// Most `UCI_Variant` values one registration carries.
pub const MAX_VARIANTS: usize = 256;
/// Longest `UCI_Variant` value, in bytes.
pub const MAX_VARIANT: usize = 64;

impl TryFrom<pb::AddEngineRequest> for NewEngine {
    type Error = Invalid;

    fn try_from(r: pb::AddEngineRequest) -> Result<Self, Invalid> {
        let pb::AddEngineRequest {
            engine,
            spin_options,
            variants,
        } = r;
        let engine = EngineRef::try_from(required("engine", engine)?)?;
        if spin_options.len() > MAX_SPIN_OPTIONS {
            return Err(Invalid::new(
                "spin_options",
                format!("{} entries, at most {MAX_SPIN_OPTIONS}", spin_options.len()),
            ));
        }
        let spins = spin_options
            .into_iter()
            .map(SpinOption::try_from)
            .collect::<Result<Vec<_>, _>>()?;
        let variants = match variants {
            None => None,
            Some(pb::OfferedVariants { values }) => {
                if values.len() > MAX_VARIANTS {
                    return Err(Invalid::new(
                        "variants.values",
                        format!("{} entries, at most {MAX_VARIANTS}", values.len()),
                    ));
                }
                if let Some(bad) = values
                    .iter()
                    .find(|v| v.is_empty() || v.len() > MAX_VARIANT)
                {
                    return Err(Invalid::new(
                        "variants.values",
                        format!("{} must be 1 to {MAX_VARIANT} bytes", xq_proto::quote(bad)),
                    ));
                }
                Some(values)
            }
        };
        Ok(NewEngine {
            engine,
            spins,
            variants,
        })
    }
}

impl From<NewEngine> for pb::AddEngineRequest {
    fn from(n: NewEngine) -> Self {
        let NewEngine {
            engine,
            spins,
            variants,
        } = n;
        pb::AddEngineRequest {
            engine: Some(engine.into()),
            spin_options: spins.into_iter().map(Into::into).collect(),
            variants: variants.map(|values| pb::OfferedVariants { values }),
        }
    }
}

impl TryFrom<pb::EngineSpinOption> for SpinOption {
    type Error = Invalid;

    fn try_from(o: pb::EngineSpinOption) -> Result<Self, Invalid> {
        let pb::EngineSpinOption {
            name,
            default_value,
            min,
            max,
        } = o;
        if name.is_empty() || name.len() > MAX_SPIN_NAME {
            return Err(Invalid::new(
                "spin_options.name",
                format!(
                    "{} must be 1 to {MAX_SPIN_NAME} bytes",
                    xq_proto::quote(&name)
                ),
            ));
        }
        if min > max {
            return Err(Invalid::new(
                "spin_options",
                format!(
                    "option {}: min {min} is above max {max}",
                    xq_proto::quote(&name)
                ),
            ));
        }
        Ok(SpinOption {
            name,
            default: default_value,
            min,
            max,
        })
    }
}

impl From<SpinOption> for pb::EngineSpinOption {
    fn from(o: SpinOption) -> Self {
        let SpinOption {
            name,
            default,
            min,
            max,
        } = o;
        pb::EngineSpinOption {
            name,
            default_value: default,
            min,
            max,
        }
    }
}

impl From<Entry> for pb::RegisteredEngine {
    fn from(e: Entry) -> Self {
        let Entry {
            engine,
            owner,
            created_ms,
        } = e;
        pb::RegisteredEngine {
            engine: Some(engine.into()),
            owner: owner.unwrap_or_default(),
            created_unix_ms: created_ms,
        }
    }
}

impl TryFrom<pb::RegisteredEngine> for Entry {
    type Error = Invalid;

    fn try_from(e: pb::RegisteredEngine) -> Result<Self, Invalid> {
        let pb::RegisteredEngine {
            engine,
            owner,
            created_unix_ms,
        } = e;
        Ok(Entry {
            engine: EngineRef::try_from(required("engine", engine)?)?,
            owner: (!owner.is_empty()).then_some(owner),
            created_ms: created_unix_ms,
        })
    }
}

impl From<Asset> for pb::AssetInfo {
    fn from(a: Asset) -> Self {
        let Asset {
            name,
            sha256,
            size,
            owner,
            created_ms,
        } = a;
        pb::AssetInfo {
            name,
            sha256,
            size,
            owner: owner.unwrap_or_default(),
            created_unix_ms: created_ms,
        }
    }
}

impl TryFrom<pb::AssetInfo> for Asset {
    type Error = Invalid;

    fn try_from(a: pb::AssetInfo) -> Result<Self, Invalid> {
        let pb::AssetInfo {
            name,
            sha256,
            size,
            owner,
            created_unix_ms,
        } = a;
        if !xq_proto::is_sha256_hex(&sha256) {
            return Err(Invalid::new(
                "asset.sha256",
                format!(
                    "{} is not 64 lowercase hex digits",
                    xq_proto::quote(&sha256)
                ),
            ));
        }
        Ok(Asset {
            name,
            sha256,
            size,
            owner: (!owner.is_empty()).then_some(owner),
            created_ms: created_unix_ms,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use xq_proto::Protocol;

    fn engine() -> EngineRef {
        EngineRef {
            name: "fsf".to_owned(),
            sha256: "ab".repeat(32),
            size: 12,
            signature: Some(xq_proto::Signature::Bench(77)),
            protocol: Protocol::Uci,
            options: [("Hash".to_owned(), "16".to_owned())].into(),
            coords: None,
            binaries: Vec::new(),
            source: None,
        }
    }

    #[test]
    fn a_registration_round_trips_and_bad_parts_are_named() {
        let new = NewEngine {
            engine: engine(),
            spins: crate::spin_options::parse(
                "option name Hash type spin default 16 min 1 max 512",
            ),
            variants: Some(vec!["xiangqi".to_owned(), "manchu".to_owned()]),
        };
        let wire = pb::AddEngineRequest::from(new.clone());
        assert_eq!(NewEngine::try_from(wire.clone()).unwrap(), new);
        let none = NewEngine {
            variants: None,
            ..new.clone()
        };
        assert_eq!(
            NewEngine::try_from(pb::AddEngineRequest::from(none.clone())).unwrap(),
            none
        );
        let field = |r: pb::AddEngineRequest| NewEngine::try_from(r).unwrap_err().field;
        assert_eq!(
            field(pb::AddEngineRequest {
                engine: None,
                ..wire.clone()
            }),
            "engine"
        );
        let mut inverted = wire.clone();
        inverted.spin_options[0].min = 1000;
        assert_eq!(field(inverted), "spin_options");
        let mut many = wire.clone();
        many.spin_options = vec![wire.spin_options[0].clone(); MAX_SPIN_OPTIONS + 1];
        assert_eq!(field(many), "spin_options");
        let mut long = wire.clone();
        long.variants = Some(pb::OfferedVariants {
            values: vec!["v".repeat(MAX_VARIANT + 1)],
        });
        assert_eq!(field(long), "variants.values");
        let mut unnamed = wire;
        unnamed.engine.as_mut().unwrap().name = String::new();
        assert_eq!(field(unnamed), "engine.name");
    }

    #[test]
    fn entries_round_trip() {
        let entry = Entry {
            engine: engine(),
            owner: Some("ana".to_owned()),
            created_ms: 5,
        };
        assert_eq!(
            Entry::try_from(pb::RegisteredEngine::from(entry.clone())).unwrap(),
            entry
        );
        let asset = Asset {
            name: "nn.bin".to_owned(),
            sha256: "cd".repeat(32),
            size: 3,
            owner: None,
            created_ms: 6,
        };
        assert_eq!(
            Asset::try_from(pb::AssetInfo::from(asset.clone())).unwrap(),
            asset
        );
    }
}
