//! Beats carried by artifacts: a labelled value in a tool's output, a table cell, a value in a
//! code block, and literals with inner spaces.

mod code;
mod labels;
mod spaced;
mod tables;

use decima_core::Role;

use super::FactKind;
use super::generator::Gen;

/// How many tool-output templates there are.
pub(super) const LABEL_COUNT: usize = 15;
/// How many table templates there are.
pub(super) const TABLE_COUNT: usize = 8;
/// How many code-block templates there are.
pub(super) const CODE_COUNT: usize = 10;
/// How many spaced-literal templates there are.
pub(super) const SPACED_COUNT: usize = 11;

/// Formats `n` with `,` between thousands.
pub(super) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Formats `n` with `sep` between thousands (`1 234 567`).
fn grouped(n: u64, sep: char) -> String {
    thousands(n).replace(',', &sep.to_string())
}

impl Gen {
    /// Records a fact whose subject differs by language.
    fn fact_lang(
        &mut self,
        kind: FactKind,
        en: &[&str],
        zh: &[&str],
        value: &str,
        by: Role,
        pos: usize,
    ) {
        let subject = if self.zh { zh } else { en };
        self.fact(kind, subject, value, by, pos);
    }

    /// Sometimes the assistant moves on after a result without repeating it.
    fn after_result(&mut self) {
        match self.rng.u8(0..3) {
            0 => {
                let t = if self.zh {
                    self.pick(&[
                        "和预期差不多，继续。",
                        "这个我记一下，后面备忘录要用。",
                        "嗯，先往下走。",
                    ])
                } else {
                    self.pick(&[
                        "Roughly what I expected; moving on.",
                        "Noting that for the memo.",
                        "OK, continuing.",
                    ])
                };
                self.say(Role::Assistant, t.to_string());
            }
            1 => {
                let n = self.rng.usize(1..3);
                let t = self.prose(n);
                self.say(Role::Assistant, t);
            }
            _ => {}
        }
    }
}
