//! Telling a stream that runs in a loop. A small local model that misses its end of sequence
//! often repeats the same run of text ("I'm sorry. I'm sorry. …", one table row again and
//! again) until the output cap or the window ends it: minutes of tokens that are no answer.
//! The guard watches the text as it streams and says when its tail has become one short run
//! repeated many times, so the caller can end the stream early and mark the answer.

/// The longest repeated run looked for, in bytes: a sentence or a paragraph.
const MAX_PERIOD: usize = 1024;
/// The least length of the repeated tail, in bytes, whatever the run's length: a row of dashes
/// or a short list that repeats a word is not a loop until it goes on this long.
const MIN_SPAN: usize = 800;
/// The least number of times the run must repeat back to back.
const MIN_REPEATS: usize = 6;
/// The text is checked after this many new bytes, not after every delta.
const CHECK_EVERY: usize = 64;

/// Watches streamed text for a tail that repeats one run over and over.
#[derive(Debug, Default)]
pub struct RepetitionGuard {
    text: String,
    unchecked: usize,
}

/// Where a loop was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Loop {
    /// The length of the repeated run, in bytes.
    pub period: usize,
    /// Where the repetition starts in the text seen so far: the text up to here, plus one
    /// run, is what the model meant to say.
    pub start: usize,
}

impl RepetitionGuard {
    /// Feeds a delta; returns the loop once the tail has become one.
    pub fn push(&mut self, delta: &str) -> Option<Loop> {
        self.text.push_str(delta);
        self.unchecked += delta.len();
        if self.unchecked < CHECK_EVERY {
            return None;
        }
        self.unchecked = 0;
        find_loop(self.text.as_bytes())
    }

    /// Where the text should be cut once a loop is found: after the first occurrence of the
    /// run, on a character boundary.
    pub fn keep_until(&self, found: Loop) -> usize {
        let mut end = (found.start + found.period).min(self.text.len());
        while !self.text.is_char_boundary(end) {
            end += 1;
        }
        end
    }
}

/// The shortest period whose repetition makes up the tail of `text`, if the repeated tail is
/// long enough and repeats often enough to be a loop.
pub fn find_loop(text: &[u8]) -> Option<Loop> {
    let n = text.len();
    if n < MIN_SPAN {
        return None;
    }
    (1..=MAX_PERIOD.min(n / MIN_REPEATS)).find_map(|period| {
        let needed = MIN_SPAN.max(period * MIN_REPEATS);
        if needed > n {
            return None;
        }
        // How far back the tail keeps this period.
        let mut run = 0;
        while run + period < n && text[n - 1 - run] == text[n - 1 - run - period] {
            run += 1;
        }
        let span = run + period;
        (span >= needed).then(|| Loop {
            period,
            start: n - span,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(guard: &mut RepetitionGuard, text: &str) -> Option<Loop> {
        // In deltas of a few bytes, as a server streams them.
        let mut found = None;
        let mut rest = text;
        while !rest.is_empty() && found.is_none() {
            let mut cut = rest.len().min(7);
            while !rest.is_char_boundary(cut) {
                cut += 1;
            }
            found = guard.push(&rest[..cut]);
            rest = &rest[cut..];
        }
        found
    }

    #[test]
    fn a_sentence_said_over_and_over_is_a_loop_and_the_kept_text_says_it_once() {
        let mut guard = RepetitionGuard::default();
        let intro = "The ledger balances for the first quarter. ";
        let run = "I'm sorry, but I cannot help with that request. ";
        let text = format!("{intro}{}", run.repeat(40));
        let found = feed(&mut guard, &text).expect("a loop");
        assert_eq!(found.period, run.len());
        let kept = &guard.text[..guard.keep_until(found)];
        assert!(kept.starts_with(intro), "{kept}");
        assert_eq!(kept.matches("I'm sorry").count(), 1, "{kept}");
        // Found long before the whole text was streamed.
        assert!(guard.text.len() < text.len() / 2, "{}", guard.text.len());
    }

    #[test]
    fn a_table_row_repeated_by_a_small_model_is_a_loop() {
        let mut guard = RepetitionGuard::default();
        let text = format!(
            "| region | revenue |\n|---|---|\n{}",
            "| North | 1,204 |\n".repeat(60)
        );
        assert!(feed(&mut guard, &text).is_some());
    }

    #[test]
    fn chinese_text_repeated_is_cut_on_a_character_boundary() {
        let mut guard = RepetitionGuard::default();
        let text = format!("结论如下：{}", "收入增长了百分之十二。".repeat(40));
        let found = feed(&mut guard, &text).expect("a loop");
        let kept = &guard.text[..guard.keep_until(found)];
        assert!(kept.starts_with("结论如下："));
        assert!(
            kept.matches("收入增长了百分之十二。").count() <= 2,
            "{kept}"
        );
    }

    #[test]
    fn long_ordinary_answers_are_not_loops() {
        let mut guard = RepetitionGuard::default();
        let mut answer = String::new();
        for i in 0..200 {
            answer.push_str(&format!(
                "Row {i}: the account {} moved by {}.{:02} this month.\n",
                1000 + i * 7,
                i * 13 % 97,
                i % 100
            ));
        }
        assert_eq!(feed(&mut guard, &answer), None);
        // A separator line and a short repeated word do not reach the span.
        let mut guard = RepetitionGuard::default();
        let text = format!("{}\n{}", "-".repeat(120), "very ".repeat(20));
        assert_eq!(feed(&mut guard, &text), None);
    }

    #[test]
    fn a_paragraph_quoted_a_few_times_is_not_a_loop_but_many_times_is() {
        let paragraph = "The quarterly figures were restated after the audit, and the \
                         restatement moved revenue from the third quarter to the fourth. ";
        let thrice = paragraph.repeat(3);
        assert_eq!(find_loop(format!("Summary. {thrice}").as_bytes()), None);
        let many = paragraph.repeat(12);
        let text = format!("Summary. {many}");
        let found = find_loop(text.as_bytes()).expect("a loop");
        assert_eq!(found.period, paragraph.len());
        // The repetition may reach back into the words before it that end as the run ends.
        let kept = &text[..found.start + found.period];
        assert!(kept.starts_with("Summary"), "{kept}");
        assert_eq!(kept.matches("restated").count(), 1, "{kept}");
    }
}
