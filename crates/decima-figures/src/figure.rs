//! A figure as its text writes it: the value, and what the text says about how to read it (the
//! unit, the scale, how many digits it was rounded to).

use serde::{Deserialize, Serialize};

/// What a figure counts in, as far as its text says: a figure with no unit is compatible with
/// any, two different currencies never are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// No unit written.
    Plain,
    /// A percentage (`%`, "percent", `％`, 百分之): compared as the fraction it stands for.
    Percent,
    /// A currency, by its symbol or code.
    Currency(Currency),
}

/// The currencies analysts write most, by symbol or ISO code. `¥` serves both the yen and the
/// yuan: the symbol alone does not say which.
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
    strum::Display,
    strum::EnumString,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Currency {
    /// `$`, USD.
    Dollar,
    /// `€`, EUR.
    Euro,
    /// `£`, GBP.
    Pound,
    /// `¥`, `￥`, `円`, `元`, JPY, CNY, RMB.
    Yen,
    /// `₹`, INR.
    Rupee,
    /// CHF.
    Franc,
}

/// The scale word or letter after a figure ("1.2M", "3 bn", "4.5万"): kept so that a figure's
/// precision is read in its own scale (1.2M is rounded to 50,000, not to 0.05).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scale {
    /// None written.
    One,
    /// k, thousand, 千.
    Thousand,
    /// 万: ten thousand.
    TenThousand,
    /// M, mn, million.
    Million,
    /// 亿: a hundred million.
    HundredMillion,
    /// bn, B, billion.
    Billion,
    /// tn, trillion, 万亿.
    Trillion,
}

impl Scale {
    /// The multiplier the scale stands for.
    #[must_use]
    pub fn factor(self) -> f64 {
        match self {
            Self::One => 1.0,
            Self::Thousand => 1e3,
            Self::TenThousand => 1e4,
            Self::Million => 1e6,
            Self::HundredMillion => 1e8,
            Self::Billion => 1e9,
            Self::Trillion => 1e12,
        }
    }
}

/// Why a number in a text is not a claim about the world: the matcher leaves these alone.
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
    strum::Display,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum NotClaim {
    /// A year (1900-2100, bare).
    Year,
    /// A date or a month's day.
    Date,
    /// A time of day.
    Time,
    /// The number of a list item or heading.
    ListNumber,
    /// An identifier: after `#`, glued to letters, a ticket, a row, a port.
    Id,
    /// A version (v1.2, 1.2.3).
    Version,
    /// An ordinal (1st, 第3).
    Ordinal,
    /// A footnote or citation mark ([1]).
    Reference,
    /// A quarter, half or fiscal year (Q3, H1, FY24).
    Period,
}

/// One number found in a text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// Byte offsets into the text it was read from, the whole figure with its sign, currency,
    /// scale and unit.
    pub start: usize,
    /// End of the span (exclusive).
    pub end: usize,
    /// The number as written, scale applied, sign kept: "(1,234)" is -1234, "1.2M" is 1.2e6,
    /// "12.5%" is 12.5.
    pub value: f64,
    /// The unit its text gives.
    pub unit: Unit,
    /// The scale its text gives.
    pub scale: Scale,
    /// The power of ten of its last written digit, before the scale: 1.25 is -2, 1,200 is 0,
    /// "about 1,200" is 2. Rounding to that digit is what the figure claims.
    pub place: i32,
    /// Why it is not a claim, when it is not.
    pub not_claim: Option<NotClaim>,
}

impl Figure {
    /// The value a figure stands for in plain numbers, so that 12.5% and 0.125, 1.2M and
    /// 1,200,000 compare equal.
    #[must_use]
    pub fn magnitude(&self) -> f64 {
        match self.unit {
            Unit::Percent => self.value / 100.0,
            _ => self.value,
        }
    }

    /// Half a unit of the last written digit, in the figure's magnitude: how far a true value
    /// may sit from what the text wrote and still round to it.
    #[must_use]
    pub fn half_unit(&self) -> f64 {
        let unit = 10f64.powi(self.place) * self.scale.factor();
        let unit = match self.unit {
            Unit::Percent => unit / 100.0,
            _ => unit,
        };
        unit / 2.0
    }

    /// Whether the text makes a claim with this number.
    #[must_use]
    pub fn is_claim(&self) -> bool {
        self.not_claim.is_none()
    }
}

/// Whether two units may describe the same quantity: a plain number matches a percentage as its
/// fraction and a currency it does not name; a percentage never matches money, nor two
/// currencies each other.
#[must_use]
pub fn units_compatible(a: Unit, b: Unit) -> bool {
    match (a, b) {
        (Unit::Plain, _) | (_, Unit::Plain) => true,
        (Unit::Percent, Unit::Percent) => true,
        (Unit::Currency(x), Unit::Currency(y)) => x == y,
        _ => false,
    }
}

/// Whether a value worked out again agrees with a figure as written: units that may describe
/// the same quantity, and values within the precision of the coarser of the two (1.23M agrees
/// with 1,234,567, 64.8% with 0.6481). A plain number set against a percentage is read as a
/// fraction or as the percentage written without its sign, whichever is nearer.
#[must_use]
pub fn agrees(claimed: &Figure, recomputed: &Figure) -> bool {
    if !units_compatible(claimed.unit, recomputed.unit) {
        return false;
    }
    let tolerance = claimed.half_unit().max(recomputed.half_unit());
    let close = |value: f64| {
        let scale = claimed.magnitude().abs().max(value.abs());
        (claimed.magnitude() - value).abs() <= tolerance + scale * 1e-12
    };
    let percent_unsigned = claimed.unit == Unit::Percent && recomputed.unit == Unit::Plain && {
        let as_percent = Figure {
            unit: Unit::Percent,
            ..recomputed.clone()
        };
        let tolerance = claimed.half_unit().max(as_percent.half_unit());
        (claimed.magnitude() - as_percent.magnitude()).abs() <= tolerance
    };
    close(recomputed.magnitude()) || percent_unsigned
}

#[cfg(test)]
mod tests {
    use super::agrees;
    use crate::scan;

    fn first(text: &str) -> super::Figure {
        scan(text)
            .into_iter()
            .find(super::Figure::is_claim)
            .unwrap_or_else(|| panic!("no figure in {text:?}"))
    }

    #[test]
    fn a_recomputed_value_agrees_within_the_coarser_precision_and_a_compatible_unit() {
        for (claimed, recomputed) in [
            ("$1.23M", "1234567"),
            ("1,234,567", "1.23M"),
            ("64.8%", "0.6481"),
            ("64.8%", "64.81"),
            ("3,580,245", "3580245.0"),
            ("(1,234)", "-1234"),
            ("12.5万", "125000"),
        ] {
            assert!(
                agrees(&first(claimed), &first(recomputed)),
                "{claimed} vs {recomputed}"
            );
        }
        for (claimed, recomputed) in [
            ("3,580,245", "3580254"),
            ("$1.23M", "1250000"),
            ("64.8%", "0.658"),
            ("$1,200", "€1,200"),
            ("1,234", "-1234"),
            ("2.5%", "$2.5"),
            ("2.5%", "25.5"),
        ] {
            assert!(
                !agrees(&first(claimed), &first(recomputed)),
                "{claimed} vs {recomputed}"
            );
        }
    }
}
