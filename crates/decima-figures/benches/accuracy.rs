//! How often the matcher flags a made-up figure, and how often it wrongly flags a real one,
//! over generated runs (benches/support): `cargo bench -p decima-figures --bench accuracy`.
//! Prints a table; it times nothing.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::cast_precision_loss)]

mod support;

use std::collections::HashMap;

use decima_figures::{Status, check_answer};
use support::{Kind, run, sentence};

const KINDS: [Kind; 5] = [
    Kind::Real,
    Kind::Reformatted,
    Kind::Derived,
    Kind::FabricatedDigit,
    Kind::FabricatedUnit,
];

fn main() {
    // DECIMA_FIGURES_SHOW=Real (a kind) prints the sentences the matcher got wrong.
    let show = std::env::var("DECIMA_FIGURES_SHOW").ok();
    let mut shown;
    println!("ledger entries | kind | sentences | flagged (unlinked) | rate");
    for (tables, runs) in [(3, 40), (60, 10), (540, 4)] {
        let mut rng = fastrand::Rng::with_seed(0x5eed_0045 + tables as u64);
        let mut tally: HashMap<Kind, (usize, usize)> = HashMap::new();
        shown = 0;
        let mut entries = 0;
        for _ in 0..runs {
            let r = run(&mut rng, tables);
            let ledger = support::ledger_builder(&r).build();
            entries = ledger.len();
            let mut answer = String::new();
            let mut targets = Vec::new();
            for k in 0..100 {
                let kind = KINDS[k % KINDS.len()];
                let s = sentence(&mut rng, &r, kind);
                let base = answer.len();
                answer.push_str(&s.text);
                targets.push((base + s.target.0, s.kind));
            }
            let checks = check_answer(&answer, &ledger);
            for (start, kind) in targets {
                let check = checks.iter().find(|c| c.figure.start == start);
                let flagged = check.is_some_and(|c| c.status == Status::Unlinked);
                if show.as_deref() == Some(format!("{kind:?}").as_str())
                    && flagged != kind.fabricated()
                    && shown < 12
                {
                    shown += 1;
                    let sentence =
                        &answer[start.saturating_sub(90)..(start + 30).min(answer.len())];
                    let entry = check.and_then(|c| c.entry).and_then(|e| ledger.entry(e));
                    let derivation = check
                        .and_then(|c| c.derivation.as_ref())
                        .map(|d| d.describe(&ledger));
                    println!(
                        "  {kind:?}: {:?} -> {:?} {:?} {:?}",
                        sentence,
                        check.map(|c| (&c.text, c.status)),
                        entry.map(|e| (e.value, &e.subject)),
                        derivation
                    );
                }
                let t = tally.entry(kind).or_default();
                t.0 += 1;
                t.1 += usize::from(flagged);
            }
        }
        for kind in KINDS {
            let (n, flagged) = tally[&kind];
            println!(
                "{entries:>14} | {kind:?} | {n} | {flagged} | {:.1}%",
                flagged as f64 / n as f64 * 100.0
            );
        }
        let fabricated: (usize, usize) = KINDS
            .iter()
            .filter(|k| k.fabricated())
            .map(|k| tally[k])
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        let real: (usize, usize) = KINDS
            .iter()
            .filter(|k| !k.fabricated())
            .map(|k| tally[k])
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
        println!(
            "{entries:>14} | fabricated flagged {:.1}% | real wrongly flagged {:.1}%",
            fabricated.1 as f64 / fabricated.0 as f64 * 100.0,
            real.1 as f64 / real.0 as f64 * 100.0
        );
    }
}
