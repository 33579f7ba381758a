use super::*;

#[test]
fn deterministic_exact_length_and_valid() {
    for language in [Language::English, Language::Chinese] {
        let a = AnalystConversationBuilder::new(11, 1_500, language).build();
        let b = AnalystConversationBuilder::new(11, 1_500, language).build();
        assert_eq!(a.messages, b.messages);
        assert_eq!(a.facts, b.facts);
        assert_eq!(a.messages.len(), 1_500);
        for (i, m) in a.messages.iter().enumerate() {
            m.validate().unwrap();
            for call in &m.tool_calls {
                assert_eq!(
                    a.messages[i + 1].tool_call_id.as_deref(),
                    Some(call.id.as_str())
                );
            }
        }
    }
}
