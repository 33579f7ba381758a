//! Derived figures: a sum, difference, ratio, percentage change or mean of up to three figures
//! the ledger holds, within the rounding the derived figure's digits imply.

use serde::{Deserialize, Serialize};

use crate::figure::{Figure, Unit, units_compatible};
use crate::ledger::{Entry, Ledger};
use crate::matching::{Pool, tolerance};

/// How a derived figure is computed from its operands.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumString,
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Operation {
    /// a + b (+ c).
    Sum,
    /// a − b.
    Difference,
    /// a ÷ b.
    Ratio,
    /// (b − a) ÷ a.
    PercentChange,
    /// The mean of two or three.
    Mean,
}

impl Operation {
    /// The operation on `values`, in its operands' order: what a derived figure becomes when
    /// its operands change (a rerun on new data). `None` for the wrong number of operands.
    #[must_use]
    pub fn apply(self, values: &[f64]) -> Option<f64> {
        #[allow(clippy::cast_precision_loss)]
        match (self, values) {
            (Self::Sum, [_, _, ..]) => Some(values.iter().sum()),
            (Self::Difference, [a, b]) => Some(a - b),
            (Self::Ratio, [a, b]) => Some(a / b),
            (Self::PercentChange, [a, b]) => Some((b - a) / a),
            (Self::Mean, [_, _, ..]) => Some(values.iter().sum::<f64>() / values.len() as f64),
            _ => None,
        }
    }
}

/// A derived figure's recipe: the operation, its operands (ledger entries, in order) and the
/// value it gives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Derivation {
    /// The operation.
    pub operation: Operation,
    /// The operands, as ledger entry indices.
    pub operands: Vec<u32>,
    /// What the operation gives, in plain numbers.
    pub result: f64,
}

impl Derivation {
    /// The derivation written out ("(150 − 120) ÷ 120 = 0.25"), for a tooltip, a footnote, a
    /// finding.
    #[must_use]
    pub fn describe(&self, ledger: &Ledger) -> String {
        let v: Vec<String> = self
            .operands
            .iter()
            .map(|i| {
                ledger
                    .entry(*i)
                    .map_or_else(|| "?".to_owned(), |e| plain(e.magnitude()))
            })
            .collect();
        let body = match (self.operation, v.as_slice()) {
            (Operation::Sum, _) => v.join(" + "),
            (Operation::Difference, [a, b]) => format!("{a} − {b}"),
            (Operation::Ratio, [a, b]) => format!("{a} ÷ {b}"),
            (Operation::PercentChange, [a, b]) => format!("({b} − {a}) ÷ {a}"),
            (Operation::Mean, _) => format!("mean({})", v.join(", ")),
            _ => v.join(", "),
        };
        format!("{body} = {}", plain(self.result))
    }
}

fn plain(x: f64) -> String {
    let s = format!("{x:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    s.to_owned()
}

/// Operands taken three at a time: the first few of the pool only.
const MAX_TRIPLE_POOL: usize = 8;

/// The first derivation of `figure` from the pool: pairs with at least one operand the
/// sentence itself names, triples of the sentence's own figures.
#[must_use]
pub(crate) fn derive(figure: &Figure, pool: &Pool, ledger: &Ledger) -> Option<Derivation> {
    let entry = |i: &u32| ledger.entry(*i).map(|e| (*i, e));
    let direct: Vec<(u32, &Entry)> = pool.direct.iter().filter_map(entry).collect();
    let neighbours: Vec<(u32, &Entry)> = pool.neighbours.iter().filter_map(entry).collect();
    let target = figure.magnitude().abs();
    let tol = tolerance(figure);
    let hit = |r: f64| r.is_finite() && (r.abs() - target).abs() <= tol;
    for (x, &a) in direct.iter().enumerate() {
        let partners = direct[x + 1..].iter().chain(neighbours.iter());
        for &b in partners {
            if let Some(d) = pair(figure, a, b, &hit) {
                return Some(d);
            }
        }
    }
    triples(figure, &direct, &hit)
}

/// Sum, difference and mean of two figures in the same unit; ratio and percentage change where
/// the derived figure is a plain number or a percentage.
fn pair(
    figure: &Figure,
    (i, a): (u32, &Entry),
    (j, b): (u32, &Entry),
    hit: &dyn Fn(f64) -> bool,
) -> Option<Derivation> {
    let (va, vb) = (a.magnitude(), b.magnitude());
    let same_unit = a.unit == b.unit;
    let found = |operation, operands: [u32; 2], result| {
        Some(Derivation {
            operation,
            operands: operands.to_vec(),
            result,
        })
    };
    if same_unit && units_compatible(figure.unit, a.unit) {
        for (op, r) in [
            (Operation::Sum, va + vb),
            (Operation::Difference, va - vb),
            (Operation::Mean, f64::midpoint(va, vb)),
        ] {
            if hit(r) {
                return found(op, [i, j], r);
            }
        }
    }
    if matches!(figure.unit, Unit::Percent | Unit::Plain) && same_unit {
        for (op, p, q, r) in [
            (Operation::Ratio, i, j, va / vb),
            (Operation::Ratio, j, i, vb / va),
            (Operation::PercentChange, i, j, (vb - va) / va),
            (Operation::PercentChange, j, i, (va - vb) / vb),
        ] {
            if hit(r) {
                return found(op, [p, q], r);
            }
        }
    }
    None
}

fn triples(
    figure: &Figure,
    operands: &[(u32, &Entry)],
    hit: &dyn Fn(f64) -> bool,
) -> Option<Derivation> {
    let few = &operands[..operands.len().min(MAX_TRIPLE_POOL)];
    for (x, &(i, a)) in few.iter().enumerate() {
        for (y, &(j, b)) in few.iter().enumerate().skip(x + 1) {
            for &(k, c) in &few[y + 1..] {
                if a.unit != b.unit || b.unit != c.unit || !units_compatible(figure.unit, a.unit) {
                    continue;
                }
                let sum = a.magnitude() + b.magnitude() + c.magnitude();
                for (op, r) in [(Operation::Sum, sum), (Operation::Mean, sum / 3.0)] {
                    if hit(r) {
                        return Some(Derivation {
                            operation: op,
                            operands: vec![i, j, k],
                            result: r,
                        });
                    }
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod operation_tests {
    use super::Operation;

    #[test]
    fn an_operation_gives_what_its_derivation_wrote() {
        assert_eq!(Operation::Sum.apply(&[1.0, 2.0, 3.0]), Some(6.0));
        assert_eq!(Operation::Difference.apply(&[5.0, 2.0]), Some(3.0));
        assert_eq!(Operation::Ratio.apply(&[3.0, 4.0]), Some(0.75));
        assert_eq!(Operation::PercentChange.apply(&[120.0, 150.0]), Some(0.25));
        assert_eq!(Operation::Mean.apply(&[1.0, 2.0]), Some(1.5));
        assert_eq!(Operation::Difference.apply(&[1.0]), None);
    }
}
