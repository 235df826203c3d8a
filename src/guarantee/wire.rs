//! The guarantee result's wire form: serde implementations that hold its invariants.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, DeserializeOwned, MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::fields::{CONTRACT_FIELDS, is_problem_member};
use super::flat::Flat;
use super::impact::Impact;
use super::instant::{self, Rfc3339};
use super::policy::{Policy, PolicyCode};
use super::result::{GuaranteeResult, Recovery, SCHEMA_VERSION};
use super::state::{PolicyDecision, SettlementState};
use crate::breach::{self, Breach, Object};
use crate::object::{FieldName, ObjectOf, fields, read_once, required};
use crate::strict::Integral;
use crate::{JsonObject, ParseError, Rule};

/// A guarantee result, whose other keys are the tool's own fields.
pub(crate) const GUARANTEE: Object = Object::new(
    "a guarantee result",
    CONTRACT_FIELDS,
    &["schemaVersion", "settlement", "policy"],
);

fields! {
    /// The settlement's fields.
    pub(crate) enum SettlementField for "settlement" requires ["state"] { State = "state" }
}

fields! {
    /// The policy's fields.
    pub(crate) enum PolicyField for "policy" requires ["decision"] {
        Decision = "decision",
        Code = "code",
        RetryAt = "retryAt",
    }
}

fields! {
    /// The impact's fields.
    pub(crate) enum ImpactField for "impact" requires [] {
        Requested = "requested",
        Committed = "committed",
        Deferred = "deferred",
        Denied = "denied",
        Failed = "failed",
    }
}

fields! {
    /// The recovery's fields.
    pub(crate) enum RecoveryField for "recovery" requires [] { SuggestedNextTool = "suggestedNextTool" }
}

impl<T: Serialize> Serialize for GuaranteeResult<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(None)?;
        out.serialize_entry("schemaVersion", &SCHEMA_VERSION)?;
        out.serialize_entry("settlement", &SettlementWire(self.settlement))?;
        out.serialize_entry("policy", &self.policy)?;
        if !self.impact.is_empty() {
            out.serialize_entry("impact", &self.impact)?;
        }
        if let Some(tool) = &self.recovery.suggested_next_tool {
            out.serialize_entry("recovery", &RecoveryWire(tool))?;
        }
        // Straight into this map, as `#[serde(flatten)]` writes, refusing a contract name.
        if let Some(fields) = &self.fields {
            fields.serialize(Flat { map: &mut out })?;
        }
        out.end()
    }
}

struct SettlementWire(SettlementState);

impl Serialize for SettlementWire {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(Some(1))?;
        out.serialize_entry("state", &self.0)?;
        out.end()
    }
}

struct RecoveryWire<'a>(&'a str);

impl Serialize for RecoveryWire<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(Some(1))?;
        out.serialize_entry("suggestedNextTool", self.0)?;
        out.end()
    }
}

impl Serialize for Policy {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(None)?;
        out.serialize_entry("decision", &self.decision)?;
        if let Some(code) = &self.code {
            out.serialize_entry("code", code.as_str())?;
        }
        if let Some(retry_at) = self.retry_at {
            out.serialize_entry("retryAt", &Rfc3339(retry_at))?;
        }
        out.end()
    }
}

impl Serialize for Impact {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut out = serializer.serialize_map(None)?;
        for (name, count) in [
            ("requested", self.requested),
            ("committed", self.committed),
            ("deferred", self.deferred),
            ("denied", self.denied),
            ("failed", self.failed),
        ] {
            if let Some(count) = count {
                out.serialize_entry(name, &count)?;
            }
        }
        out.end()
    }
}

impl Serialize for PolicyCode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for PolicyCode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CodeVisitor;
        impl Visitor<'_> for CodeVisitor {
            type Value = PolicyCode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a policy code string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<PolicyCode, E> {
                PolicyCode::new(v.to_owned())
                    .map_err(|err| breach::fail(Rule::GuaranteePolicyCodeForm, err))
            }
        }
        deserializer.deserialize_str(CodeVisitor)
    }
}

/// `retryAt`, read.
struct RetryAt(std::time::SystemTime);

impl<'de> Deserialize<'de> for RetryAt {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RetryAtVisitor;
        impl Visitor<'_> for RetryAtVisitor {
            type Value = RetryAt;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an RFC 3339 UTC instant")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RetryAt, E> {
                instant::parse(v).map(RetryAt).ok_or_else(|| {
                    let shown: String = v.chars().take(64).collect();
                    breach::fail(
                        Rule::GuaranteeRetryAtForm,
                        format_args!(
                            "retryAt `{shown}` is not an RFC 3339 instant in UTC \
                             (2026-12-01T09:00:00Z)"
                        ),
                    )
                })
            }
        }
        deserializer.deserialize_str(RetryAtVisitor)
    }
}

/// `schemaVersion`: the number 1 and nothing else.
struct Version;

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct VersionVisitor;
        impl VersionVisitor {
            fn refuse<E: de::Error>(found: &dyn fmt::Display) -> E {
                breach::fail(
                    Rule::GuaranteeSchemaVersion,
                    format_args!("{}, not {found}", Breach::SchemaVersion),
                )
            }
        }
        impl<'de> Visitor<'de> for VersionVisitor {
            type Value = Version;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("schemaVersion 1")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Version, E> {
                if v == SCHEMA_VERSION {
                    Ok(Version)
                } else {
                    Err(Self::refuse(&v))
                }
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Version, E> {
                if v == 1 {
                    Ok(Version)
                } else {
                    Err(Self::refuse(&v))
                }
            }
            #[allow(clippy::float_cmp)]
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Version, E> {
                if v == 1.0 {
                    Ok(Version)
                } else {
                    Err(Self::refuse(&v))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Version, E> {
                Err(Self::refuse(&format_args!("the string {v:?}")))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Version, E> {
                Err(Self::refuse(&v))
            }
            fn visit_unit<E: de::Error>(self) -> Result<Version, E> {
                Err(Self::refuse(&"null"))
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, _: A) -> Result<Version, A::Error> {
                Err(Self::refuse(&"an array"))
            }
            fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<Version, A::Error> {
                Err(Self::refuse(&"an object"))
            }
        }
        deserializer.deserialize_any(VersionVisitor)
    }
}

struct SettlementRead(SettlementState);

impl<'de> Deserialize<'de> for SettlementRead {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SettlementVisitor;
        impl<'de> Visitor<'de> for SettlementVisitor {
            type Value = SettlementRead;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a settlement object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<SettlementRead, A::Error> {
                let mut state = None;
                while let Some(SettlementField::State) = map.next_key::<SettlementField>()? {
                    read_once(&mut map, &mut state, "state", PhantomData)?;
                }
                Ok(SettlementRead(required(
                    state,
                    SettlementField::OBJECT,
                    "state",
                )?))
            }
        }
        deserializer.deserialize_map(SettlementVisitor)
    }
}

impl<'de> Deserialize<'de> for Policy {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct PolicyVisitor;
        impl<'de> Visitor<'de> for PolicyVisitor {
            type Value = Policy;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a policy object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Policy, A::Error> {
                let (mut decision, mut code, mut retry_at) = (None, None, None::<RetryAt>);
                while let Some(field) = map.next_key::<PolicyField>()? {
                    match field {
                        PolicyField::Decision => {
                            read_once(&mut map, &mut decision, "decision", PhantomData)?;
                        }
                        PolicyField::Code => read_once(&mut map, &mut code, "code", PhantomData)?,
                        PolicyField::RetryAt => {
                            read_once(&mut map, &mut retry_at, "retryAt", PhantomData)?;
                        }
                    }
                }
                Ok(Policy {
                    decision: required::<PolicyDecision, _>(
                        decision,
                        PolicyField::OBJECT,
                        "decision",
                    )?,
                    code,
                    retry_at: retry_at.map(|r| r.0),
                })
            }
        }
        deserializer.deserialize_map(PolicyVisitor)
    }
}

impl<'de> Deserialize<'de> for Impact {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ImpactVisitor;
        impl<'de> Visitor<'de> for ImpactVisitor {
            type Value = Impact;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an impact object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Impact, A::Error> {
                let mut impact = Impact::new();
                while let Some(field) = map.next_key::<ImpactField>()? {
                    let (slot, name) = match field {
                        ImpactField::Requested => (&mut impact.requested, "requested"),
                        ImpactField::Committed => (&mut impact.committed, "committed"),
                        ImpactField::Deferred => (&mut impact.deferred, "deferred"),
                        ImpactField::Denied => (&mut impact.denied, "denied"),
                        ImpactField::Failed => (&mut impact.failed, "failed"),
                    };
                    read_once(&mut map, slot, name, Integral::new())?;
                }
                Ok(impact)
            }
        }
        deserializer.deserialize_map(ImpactVisitor)
    }
}

impl<'de> Deserialize<'de> for Recovery {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct RecoveryVisitor;
        impl<'de> Visitor<'de> for RecoveryVisitor {
            type Value = Recovery;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a recovery object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Recovery, A::Error> {
                let mut tool = None;
                while let Some(RecoveryField::SuggestedNextTool) =
                    map.next_key::<RecoveryField>()?
                {
                    read_once(&mut map, &mut tool, "suggestedNextTool", PhantomData)?;
                }
                Ok(Recovery {
                    suggested_next_tool: tool,
                })
            }
        }
        deserializer.deserialize_map(RecoveryVisitor)
    }
}

/// A top-level key: one of the contract's, or one of the tool's own.
enum TopKey {
    Version,
    Settlement,
    Policy,
    Impact,
    Recovery,
    Own(String),
}

impl<'de> Deserialize<'de> for TopKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = TopKey;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a field name")
            }
            fn visit_str<E>(self, v: &str) -> Result<TopKey, E> {
                Ok(match v {
                    "schemaVersion" => TopKey::Version,
                    "settlement" => TopKey::Settlement,
                    "policy" => TopKey::Policy,
                    "impact" => TopKey::Impact,
                    "recovery" => TopKey::Recovery,
                    own => TopKey::Own(own.to_owned()),
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for GuaranteeResult<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer
            .deserialize_map(GuaranteeVisitor(PhantomData))
            .map_err(|err| breach::tag(Rule::EnvelopeIsObject, err))
    }
}

struct GuaranteeVisitor<T>(PhantomData<T>);

impl<'de, T: DeserializeOwned> Visitor<'de> for GuaranteeVisitor<T> {
    type Value = GuaranteeResult<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a guarantee result object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<GuaranteeResult<T>, A::Error> {
        let (mut version, mut settlement, mut policy) = (None::<Version>, None, None);
        let (mut impact, mut recovery) = (None, None);
        let mut own = JsonObject::new();
        while let Some(key) = map.next_key::<TopKey>()? {
            match key {
                TopKey::Version => read_once(&mut map, &mut version, "schemaVersion", PhantomData)?,
                TopKey::Settlement => {
                    let seed = ObjectOf::<SettlementRead> {
                        field: "settlement",
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut settlement, "settlement", seed)?;
                }
                TopKey::Policy => {
                    let seed = ObjectOf::<Policy> {
                        field: "policy",
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut policy, "policy", seed)?;
                }
                TopKey::Impact => {
                    let seed = ObjectOf::<Impact> {
                        field: "impact",
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut impact, "impact", seed)?;
                }
                TopKey::Recovery => {
                    let seed = ObjectOf::<Recovery> {
                        field: "recovery",
                        marker: PhantomData,
                    };
                    read_once(&mut map, &mut recovery, "recovery", seed)?;
                }
                TopKey::Own(key) => {
                    if own.contains_key(&key) {
                        return Err(breach::raise(Breach::DuplicateKey { key: &key }));
                    }
                    if is_problem_member(&key) {
                        return Err(breach::raise(Breach::ProblemMemberField { key: &key }));
                    }
                    let value: Value = map
                        .next_value()
                        .map_err(|err| breach::tag(Rule::FieldType, err))?;
                    own.insert(key, value);
                }
            }
        }
        required(version, GUARANTEE, "schemaVersion")?;
        let result = GuaranteeResult {
            settlement: required(settlement, GUARANTEE, "settlement")?.0,
            policy: required(policy, GUARANTEE, "policy")?,
            impact: impact.unwrap_or_default(),
            recovery: recovery.unwrap_or_default(),
            fields: None::<()>,
        };
        if let Some(breach) = result.breach() {
            return Err(breach::raise(breach));
        }
        // No member of the tool's own: no fields (a deny's, say), whatever their type.
        let fields = if own.is_empty() {
            None
        } else {
            Some(
                T::deserialize(Value::Object(own))
                    .map_err(|err| breach::retag(Rule::ToolResultType, de::Error::custom(err)))?,
            )
        };
        Ok(GuaranteeResult {
            settlement: result.settlement,
            policy: result.policy,
            impact: result.impact,
            recovery: result.recovery,
            fields,
        })
    }
}

impl<T: DeserializeOwned> GuaranteeResult<T> {
    /// Reads a guarantee result from JSON text, enforcing the contract; errors name the
    /// [`Rule`], the JSON Pointer, the line and the column.
    ///
    /// # Errors
    ///
    /// A [`ParseError`] when the text is not JSON or breaks a rule.
    pub fn from_json(json: &str) -> Result<Self, ParseError> {
        serde_json::from_str(json)
            .map_err(|first| ParseError::locate::<Self>(json.as_bytes(), &first))
    }

    /// Reads a guarantee result from an already parsed value.
    ///
    /// # Errors
    ///
    /// A [`ParseError`] (without a line and column) when the value breaks a rule.
    pub fn from_value(value: &Value) -> Result<Self, ParseError> {
        GuaranteeResult::deserialize(value).map_err(|_| ParseError::locate_in_value::<Self>(value))
    }
}

impl<T: Serialize> GuaranteeResult<T> {
    /// Writes the compact wire form: `schemaVersion`, `settlement`, `policy`, `impact`,
    /// `recovery`, then the tool's own fields.
    ///
    /// # Errors
    ///
    /// When the tool's fields do not serialize to an object, or use a contract field's name.
    pub fn to_json(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(self)
    }
}
