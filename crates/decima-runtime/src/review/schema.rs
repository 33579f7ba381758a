//! The reviewer's answer as a JSON schema, so that a server that can constrain its decoding
//! (OpenAI's strict `json_schema`, llama.cpp's and vLLM's grammars, Ollama's `format`, an
//! Anthropic tool forced to be called) only ever writes an answer of the right shape. A small
//! local model does not write valid JSON on its own; under the schema it cannot do otherwise.
//! The answer is still checked field by field afterwards ([`super::answer::parse`]): the schema
//! holds the shape, not the rules between fields (a finding's severity and the risk level).

use std::collections::BTreeSet;

use decima_core::{RiskLevel, Severity};
use decima_llm::JsonSchemaFormat;
use serde_json::{Value, json};

/// The most findings a quick review reports; the prompt says the same.
pub const QUICK_FINDINGS: usize = 3;
/// The most findings a full review reports.
pub const FULL_FINDINGS: usize = 10;
/// Characters of JSON an output token holds, at the least: what a small model's tokenizer
/// gives on English prose with punctuation (about 3.5), rounded down.
const CHARS_PER_TOKEN: u32 = 3;
/// What an answer's fixed parts cost in characters: keys, quotes and brackets.
const FRAME_CHARS: u32 = 200;
/// What a finding's keys, severity and seqs cost in characters.
const FINDING_FRAME_CHARS: u32 = 120;
/// The open questions an answer may list.
const QUESTIONS: u32 = 3;
/// The least room a finding's texts get, in characters; fewer findings are allowed below it.
const LEAST_FINDING_CHARS: u32 = 300;

/// The schema of an answer with at most `max_findings` findings that fits `output` tokens even
/// when every string is written to its bound: every field required and no other allowed (strict
/// mode wants both), and each string bounded, so that a small model cannot spend the whole
/// output inside one string (it does, and the answer then ends mid-string). Strict hosted APIs
/// are sent the schema without the bounds.
pub fn review_format(
    max_findings: usize,
    output: u32,
    open_ids: &BTreeSet<String>,
    evidence_through: Option<i64>,
) -> JsonSchemaFormat {
    let chars = output
        .saturating_mul(CHARS_PER_TOKEN)
        .saturating_sub(FRAME_CHARS);
    let summary = (chars / 6).clamp(80, 800);
    let question = (chars / 24).clamp(60, 300);
    let rest = chars.saturating_sub(summary + QUESTIONS * question);
    let findings = u32::try_from(max_findings)
        .unwrap_or(u32::MAX)
        .min(rest / LEAST_FINDING_CHARS)
        .max(1);
    let each = (rest / findings)
        .saturating_sub(FINDING_FRAME_CHARS)
        .max(180);
    let text = |most: u32| json!({ "type": "string", "minLength": 1, "maxLength": most });
    let finding = json!({
        "type": "object",
        "properties": {
            "title": text((each / 10).clamp(40, 120)),
            "severity": { "type": "string", "enum": Severity::names_list() },
            "argument": text((each * 6 / 10).clamp(100, 1_200)),
            "evidence_seqs": evidence(evidence_through),
            "recommendation": text((each * 3 / 10).clamp(60, 500)),
        },
        "required": ["title", "severity", "argument", "evidence_seqs", "recommendation"],
        "additionalProperties": false,
    });
    // Only the open findings shown may be closed: their ids are the only ones the schema
    // allows, and with none open the list stays empty (servers refuse an empty enum).
    let id = if open_ids.is_empty() {
        json!({ "type": "string", "maxLength": 64 })
    } else {
        json!({ "type": "string", "enum": open_ids.iter().collect::<Vec<_>>() })
    };
    let closed = json!({
        "type": "array",
        "items": {
            "type": "object",
            "properties": {
                "id": id,
                "reason": text(question)
            },
            "required": ["id", "reason"],
            "additionalProperties": false,
        },
        "maxItems": open_ids.len(),
    });
    JsonSchemaFormat {
        name: "tenth_man_review".into(),
        schema: json!({
            "type": "object",
            "properties": {
                "risk_level": { "type": "string", "enum": RiskLevel::names_list() },
                "summary": text(summary),
                "findings": { "type": "array", "items": finding, "maxItems": findings },
                "open_questions": {
                    "type": "array",
                    "items": text(question),
                    "maxItems": QUESTIONS
                },
                "closed_findings": closed,
            },
            "required": ["risk_level", "summary", "findings", "open_questions", "closed_findings"],
            "additionalProperties": false,
        }),
        strict: true,
    }
}

/// A finding's evidence: the seqs of messages, at least one when the review reads a history
/// (`through` its last seq), none required for given content.
fn evidence(through: Option<i64>) -> Value {
    match through {
        Some(last) => json!({
            "type": "array",
            "items": { "type": "integer", "minimum": 1, "maximum": last.max(1) },
            "minItems": 1,
            "maxItems": 8
        }),
        None => json!({
            "type": "array",
            "items": { "type": "integer", "minimum": 1 },
            "maxItems": 8
        }),
    }
}

/// The names of a level enum as JSON strings.
trait NamesList {
    fn names_list() -> Value;
}

impl NamesList for RiskLevel {
    fn names_list() -> Value {
        json!(
            RiskLevel::ALL
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
        )
    }
}

impl NamesList for Severity {
    fn names_list() -> Value {
        json!(Severity::ALL.iter().map(|s| s.as_str()).collect::<Vec<_>>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The longest answer a schema allows, in characters, every string at its bound.
    fn longest(schema: &Value) -> u64 {
        let bound = |v: &Value| v["maxLength"].as_u64().unwrap_or(0);
        let p = &schema["properties"];
        let f = &p["findings"]["items"]["properties"];
        let finding = bound(&f["title"]) + bound(&f["argument"]) + bound(&f["recommendation"]);
        bound(&p["summary"])
            + p["findings"]["maxItems"].as_u64().unwrap() * (finding + 120)
            + p["open_questions"]["maxItems"].as_u64().unwrap()
                * bound(&p["open_questions"]["items"])
            + 200
    }

    #[test]
    fn an_answer_written_to_every_bound_still_fits_the_output_room() {
        for output in [256_u32, 512, 1_024, 2_048, 8_192] {
            for max in [QUICK_FINDINGS, FULL_FINDINGS] {
                let format = review_format(max, output, &BTreeSet::new(), Some(40));
                let most = longest(&format.schema);
                assert!(
                    most <= u64::from(output) * 3 + 600,
                    "{output} tokens, {max} findings: {most} characters"
                );
                let findings = format.schema["properties"]["findings"]["maxItems"]
                    .as_u64()
                    .unwrap();
                assert!((1..=max as u64).contains(&findings));
            }
        }
        // A roomy output keeps every finding the prompt asks for.
        let full = review_format(FULL_FINDINGS, 8_192, &BTreeSet::new(), None);
        assert_eq!(full.schema["properties"]["findings"]["maxItems"], 10);
    }

    #[test]
    fn an_answer_of_the_schemas_shape_is_one_the_reviewer_parser_accepts() {
        let open = BTreeSet::from(["f-1".to_owned()]);
        let format = review_format(QUICK_FINDINGS, 4_096, &open, Some(6));
        let evidence =
            &format.schema["properties"]["findings"]["items"]["properties"]["evidence_seqs"];
        assert_eq!(
            (
                evidence["minItems"].as_u64(),
                evidence["items"]["maximum"].as_i64()
            ),
            (Some(1), Some(6))
        );
        let closed = &format.schema["properties"]["closed_findings"];
        assert_eq!(closed["items"]["properties"]["id"]["enum"], json!(["f-1"]));
        assert_eq!(closed["maxItems"], 1);
        let none = review_format(QUICK_FINDINGS, 4_096, &BTreeSet::new(), None);
        let none = &none.schema["properties"]["closed_findings"];
        assert_eq!(none["maxItems"], 0);
        assert!(none["items"]["properties"]["id"].get("enum").is_none());
        let schema = &format.schema;
        assert_eq!(schema["properties"]["findings"]["maxItems"], 3);
        assert_eq!(
            schema["properties"]["risk_level"]["enum"],
            json!(["none", "low", "medium", "high", "critical"])
        );
        // Every property is required, as strict mode wants.
        let required: BTreeSet<&str> = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let properties: BTreeSet<&str> = schema["properties"]
            .as_object()
            .into_iter()
            .flat_map(|o| o.keys().map(String::as_str))
            .collect();
        assert_eq!(required, properties);
        let answer = json!({
            "risk_level": "medium",
            "summary": "The total omits the refunds.",
            "findings": [{
                "title": "Refunds left out",
                "severity": "medium",
                "argument": "Message 4 lists refunds that the sum in message 6 ignores.",
                "evidence_seqs": [4, 6],
                "recommendation": "Subtract the refunds."
            }],
            "open_questions": [],
            "closed_findings": []
        });
        let checks = crate::review::answer::Checks {
            evidence_required: true,
            open_ids: &BTreeSet::new(),
        };
        assert!(crate::review::answer::parse(&answer.to_string(), &checks).is_ok());
    }
}
