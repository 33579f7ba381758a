//! Import tests with small handmade cards and presets.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::png::build_png;
use super::*;
use crate::prompt::preset::{Anchor, Position, SkeletonEntry};
use crate::prompt::{AssembleInput, Layer, assemble};
use crate::{EstimateCounter, NewMessage, Role};

pub(crate) const V2_CARD: &str = r#"{
  "spec": "chara_card_v2", "spec_version": "2.0",
  "data": {
    "name": "Ada", "description": "{{char}} is a mathematician.", "personality": "curious",
    "scenario": "A salon in London.", "first_mes": "Hello, {{user}}.",
    "mes_example": "<START>\n{{user}}: hi\n{{char}}: hello",
    "system_prompt": "You are {{char}}. Talk to {{user}}.",
    "post_history_instructions": "Stay in character.",
    "extensions": {"depth_prompt": {"prompt": "Ada is tired.", "depth": 2, "role": "system"}},
    "character_book": {"scan_depth": 3, "entries": [
      {"keys": ["engine"], "content": "The Analytical Engine is Babbage's.", "enabled": true,
       "insertion_order": 10, "position": "before_char", "constant": false},
      {"keys": ["x"], "content": "Always here.", "constant": true, "enabled": true,
       "insertion_order": 5, "position": "after_char"},
      {"keys": ["Lovelace"], "content": "Case matters.", "case_sensitive": true,
       "enabled": true, "insertion_order": 1, "position": "after_char"},
      {"keys": ["engine"], "content": "Deep lore.", "enabled": true, "insertion_order": 1,
       "extensions": {"position": 4, "depth": 1, "role": 1}},
      {"keys": ["engine"], "content": "Disabled.", "enabled": false}
    ]}
  }
}"#;

pub(crate) const ST_PRESET: &str = r#"{
  "temperature": 1,
  "prompts": [
    {"identifier": "main", "name": "Main", "role": "system", "content": "Main for {{char}}.", "system_prompt": true},
    {"identifier": "worldInfoBefore", "name": "WI before", "marker": true, "system_prompt": true},
    {"identifier": "charDescription", "name": "Char", "marker": true, "system_prompt": true},
    {"identifier": "chatHistory", "name": "History", "marker": true, "system_prompt": true},
    {"identifier": "dialogueExamples", "name": "Examples", "marker": true},
    {"identifier": "jailbreak", "name": "PHI", "role": "system", "content": "Post-history."},
    {"identifier": "nsfw", "name": "Aux", "role": "system", "content": "Aux off."},
    {"identifier": "deep", "name": "Deep", "role": "user", "content": "At depth 1.",
     "injection_position": 1, "injection_depth": 1, "injection_order": 50}
  ],
  "prompt_order": [
    {"character_id": 100000, "order": [{"identifier": "main", "enabled": true}]},
    {"character_id": 100001, "order": [
      {"identifier": "main", "enabled": true},
      {"identifier": "nsfw", "enabled": false},
      {"identifier": "worldInfoBefore", "enabled": true},
      {"identifier": "charDescription", "enabled": true},
      {"identifier": "dialogueExamples", "enabled": false},
      {"identifier": "chatHistory", "enabled": false},
      {"identifier": "missing", "enabled": true},
      {"identifier": "jailbreak", "enabled": true},
      {"identifier": "deep", "enabled": true}
    ]}
  ]
}"#;

fn text_chunk(key: &str, value: &[u8]) -> Vec<u8> {
    let mut v = key.as_bytes().to_vec();
    v.push(0);
    v.extend_from_slice(value);
    v
}

/// A PNG card with the given chunks, each `(keyword, json)` base64-encoded.
pub(crate) fn png_card(cards: &[(&str, &str)]) -> Vec<u8> {
    let chunks: Vec<(&[u8; 4], Vec<u8>)> = cards
        .iter()
        .map(|(k, json)| (b"tEXt", text_chunk(k, STANDARD.encode(json).as_bytes())))
        .collect();
    build_png(&chunks)
}

fn v3(name: &str) -> String {
    format!(r#"{{"spec":"chara_card_v3","spec_version":"3.0","data":{{"name":"{name}"}}}}"#)
}

fn err(result: Result<crate::prompt::Preset, crate::CoreError>) -> String {
    result.unwrap_err().to_string()
}

#[test]
fn v2_json_card_maps_every_field() {
    let p = import(V2_CARD.as_bytes()).unwrap();
    let c = p.character.as_ref().unwrap();
    assert_eq!(c.name, "Ada");
    assert_eq!(c.first_mes, "Hello, {{user}}.");
    assert_eq!(c.personality, "curious");
    let dp = c.depth_prompt.as_ref().unwrap();
    assert_eq!((dp.depth, dp.role), (-2, Role::System));
    let SkeletonEntry::Message(main) = &p.skeleton[0] else {
        panic!()
    };
    assert_eq!(main.content, "You are {{char}}. Talk to {{user}}.");
    let book = p.lorebook.as_ref().unwrap();
    assert_eq!(book.scan_depth, 3);
    assert_eq!(book.entries.len(), 5);
    assert_eq!(
        book.entries[0].position,
        Position::After(Anchor::named("world_info_before"))
    );
    assert_eq!(
        book.entries[1].position,
        Position::After(Anchor::named("world_info_after"))
    );
    assert_eq!(book.entries[3].position, Position::Depth(-1));
    assert_eq!(book.entries[3].role, Role::User);
    assert!(!book.entries[4].enabled);
    assert!(book.entries[2].case_sensitive);
}

#[test]
fn imported_card_assembles_in_sillytavern_order() {
    let p = import(V2_CARD.as_bytes()).unwrap();
    let history = vec![
        NewMessage::new(Role::User, "a"),
        NewMessage::new(Role::Assistant, "b"),
        NewMessage::new(Role::User, "tell me about the engine, lovelace"),
    ]
    .into_iter()
    .map(std::sync::Arc::new)
    .collect::<Vec<_>>();
    let mut input = AssembleInput::new(&history);
    input.user_name = "Bob";
    let out = assemble(&p, &input, &EstimateCounter);
    let texts: Vec<&str> = out
        .messages
        .iter()
        .map(|m| m.message.content.as_str())
        .collect();
    assert_eq!(
        texts,
        vec![
            "You are Ada. Talk to Bob.",
            "The Analytical Engine is Babbage's.",
            "Ada is a mathematician.",
            "curious",
            "A salon in London.",
            "Always here.",
            "<START>\nBob: hi\nAda: hello",
            "a",
            "Ada is tired.",
            "b",
            "Deep lore.",
            "tell me about the engine, lovelace",
            "Stay in character.",
        ]
    );
    assert_eq!(out.messages[10].message.role, Role::User);
    assert_eq!(out.messages[7].layer, Layer::WorkingContext);
}

#[test]
fn v1_flat_cards_are_accepted() {
    let p = import(br#"{"name":"Old","description":"flat","first_mes":"hi"}"#).unwrap();
    assert_eq!(p.character.unwrap().description, "flat");
}

#[test]
fn png_prefers_ccv3_and_falls_back_to_chara() {
    let both = png_card(&[("chara", V2_CARD), ("ccv3", &v3("Three"))]);
    assert_eq!(import(&both).unwrap().name, "Three");
    let v2 = png_card(&[("chara", V2_CARD)]);
    assert_eq!(import_card(&v2).unwrap().name, "Ada");
}

#[test]
fn st_preset_maps_prompts_markers_and_depths() {
    let p = import(ST_PRESET.as_bytes()).unwrap();
    let names: Vec<String> = p
        .skeleton
        .iter()
        .map(|e| match e {
            SkeletonEntry::Message(m) => format!("{}:{}", m.id, m.enabled),
            SkeletonEntry::Anchor { name } => format!("@{name}"),
        })
        .collect();
    assert_eq!(
        names,
        vec![
            "main:true",
            "nsfw:false",
            "@world_info_before",
            "@char_description",
            "@chat_history",
            "jailbreak:true"
        ]
    );
    assert_eq!(p.injections.len(), 1);
    assert_eq!(p.injections[0].position, Position::Depth(-1));
    assert_eq!(p.injections[0].order, 50);
    assert_eq!(p.injections[0].message.role, Role::User);
    assert_eq!(import_st_preset(ST_PRESET.as_bytes()).unwrap(), p);
}

#[test]
fn st_preset_without_order_uses_prompt_order_of_the_array() {
    let p = import(
        br#"{"prompts":[{"identifier":"main","content":"M"},
                        {"identifier":"chatHistory","marker":true}]}"#,
    )
    .unwrap();
    assert_eq!(p.skeleton.len(), 2);
    assert_eq!(
        p.skeleton[1],
        SkeletonEntry::Anchor {
            name: Anchor::ChatHistory
        }
    );
}

#[test]
fn hostile_and_malformed_inputs_get_clear_errors() {
    assert!(err(import(b"")).contains("empty"));
    assert!(err(import(b"hello")).contains("not valid JSON"));
    assert!(err(import(b"[1,2]")).contains("not a JSON object"));
    assert!(err(import(b"{\"x\":1}")).contains("neither a character card"));
    assert!(err(import(br#"{"spec":"chara_card_v9","data":{}}"#)).contains("unknown card spec"));
    assert!(err(import(br#"{"spec":"chara_card_v2"}"#)).contains("no 'data'"));
    assert!(
        err(import(br#"{"spec":"chara_card_v2","data":{"name":" "}}"#))
            .contains("no character name")
    );
    assert!(err(import(br#"{"prompts":[]}"#)).contains("no 'prompts'"));
    assert!(err(import(br#"{"prompts":[1]}"#)).contains("prompt 1 is not an object"));
    assert!(
        err(import(
            br#"{"prompts":[{"identifier":"a"}],"prompt_order":[{"order":[{"identifier":"b"}]}]}"#
        ))
        .contains("names none")
    );
    let no_card = build_png(&[(b"tEXt", text_chunk("Comment", b"hi"))]);
    assert!(err(import(&no_card)).contains("no 'chara' or 'ccv3'"));
    let bad_b64 = build_png(&[(b"tEXt", text_chunk("chara", b"!!!not base64"))]);
    assert!(err(import(&bad_b64)).contains("not valid base64"));
    let not_json = build_png(&[(
        b"tEXt",
        text_chunk("chara", STANDARD.encode("nope").as_bytes()),
    )]);
    assert!(err(import(&not_json)).contains("not valid JSON"));
    let big = vec![b' '; MAX_INPUT_BYTES + 1];
    assert!(err(import(&big)).contains("MiB limit"));
    let deep = "[".repeat(100_000);
    assert!(err(import(deep.as_bytes())).contains("not valid JSON"));
    let long_spec = format!(r#"{{"spec":"{}","data":{{}}}}"#, "\u{7}x".repeat(1000));
    let e = err(import(long_spec.as_bytes()));
    assert!(e.len() < 300 && !e.contains('\u{7}'), "{e}");
    let many = format!(
        r#"{{"name":"A","character_book":{{"entries":[{}]}}}}"#,
        vec!["{}"; MAX_LIST_LEN + 1].join(",")
    );
    assert!(err(import(many.as_bytes())).contains("more than the limit"));
}

#[test]
fn sloppy_cards_are_tolerated() {
    let p = import(
        br#"{"spec":"chara_card_v2","data":{"name":"S","description":null,"personality":7,
            "extensions":{"depth_prompt":{"prompt":"dp","depth":"3","role":9}},
            "character_book":{"scan_depth":-4,"entries":[
              {"keys":"a, b ,","content":"c","insertion_order":1e12,"position":2},
              {"keys":[1,"k"],"secondary_keys":["s"],"content":"d","selective":false}]}}}"#,
    )
    .unwrap();
    let c = p.character.unwrap();
    assert_eq!(c.description, "");
    assert_eq!(c.depth_prompt.unwrap().depth, -3);
    let book = p.lorebook.unwrap();
    assert_eq!(book.scan_depth, crate::prompt::preset::DEFAULT_SCAN_DEPTH);
    assert_eq!(book.entries[0].keys, vec!["a", "b"]);
    assert_eq!(book.entries[0].order, 1_000_000, "clamped");
    assert_eq!(book.entries[1].keys, vec!["k"]);
    assert!(book.entries[1].secondary_keys.is_empty());
}
