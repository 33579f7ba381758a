//! Numbers written in Chinese numerals: 三千五百, 一百二十万, 两亿, 百分之十五.

/// Whether `c` can be part of a number written in Chinese numerals.
pub(crate) fn is_numeral(c: char) -> bool {
    digit(c).is_some() || place(c).is_some() || section(c).is_some()
}

fn digit(c: char) -> Option<u64> {
    Some(match c {
        '零' | '〇' => 0,
        '一' | '壹' => 1,
        '二' | '两' | '贰' => 2,
        '三' | '叁' => 3,
        '四' | '肆' => 4,
        '五' | '伍' => 5,
        '六' | '陆' => 6,
        '七' | '柒' => 7,
        '八' | '捌' => 8,
        '九' | '玖' => 9,
        _ => return None,
    })
}

fn place(c: char) -> Option<u64> {
    Some(match c {
        '十' | '拾' => 10,
        '百' | '佰' => 100,
        '千' | '仟' => 1000,
        _ => return None,
    })
}

fn section(c: char) -> Option<u64> {
    Some(match c {
        '万' => 10_000,
        '亿' => 100_000_000,
        _ => return None,
    })
}

/// A run of Chinese numerals starting at `start`: its value and where it ends. A run is a
/// number only when it has a digit and a place ("三十", "一千"), so that words that merely hold
/// a numeral ("一些", "统一", "十分") are not read as figures.
pub(crate) fn read(text: &str, start: usize) -> Option<(f64, usize)> {
    let run: Vec<(usize, char)> = text[start..]
        .char_indices()
        .take_while(|(_, c)| is_numeral(*c))
        .collect();
    let has_digit = run.iter().any(|(_, c)| digit(*c).is_some());
    let has_place = run
        .iter()
        .any(|(_, c)| place(*c).is_some() || section(*c).is_some());
    let leads_with_section = run.first().is_some_and(|(_, c)| section(*c).is_some());
    if !has_digit || !has_place || leads_with_section {
        return None;
    }
    let (last_at, last) = *run.last()?;
    let end = start + last_at + last.len_utf8();
    Some((value(run.iter().map(|(_, c)| *c)), end))
}

/// The value of a run of numerals: digits times places inside a section, sections times 万 or
/// 亿. A place with no digit before it counts one (十五 is 15).
fn value(chars: impl Iterator<Item = char>) -> f64 {
    let mut total: u64 = 0;
    let mut sect: u64 = 0;
    let mut pending: Option<u64> = None;
    for c in chars {
        if let Some(d) = digit(c) {
            pending = Some(d);
        } else if let Some(p) = place(c) {
            sect = sect.saturating_add(pending.take().unwrap_or(1).saturating_mul(p));
        } else if let Some(s) = section(c) {
            sect = sect.saturating_add(pending.take().unwrap_or(0));
            let sect_value = if sect == 0 { 1 } else { sect };
            total = if total != 0 && total < s {
                total.saturating_add(sect_value).saturating_mul(s)
            } else {
                total.saturating_add(sect_value.saturating_mul(s))
            };
            sect = 0;
        }
    }
    let sum = total
        .saturating_add(sect)
        .saturating_add(pending.unwrap_or(0));
    #[allow(clippy::cast_precision_loss)]
    let as_float = sum as f64;
    as_float
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_usual_forms() {
        for (text, want) in [
            ("三千五百", 3500.0),
            ("十五", 15.0),
            ("一百二十万", 1_200_000.0),
            ("两亿", 200_000_000.0),
            ("一千零五", 1005.0),
            ("三万五千", 35_000.0),
            ("一亿二千万", 120_000_000.0),
        ] {
            assert_eq!(read(text, 0).map(|r| r.0), Some(want), "{text}");
        }
    }

    #[test]
    fn words_holding_a_numeral_are_not_numbers() {
        for text in ["一些", "统一", "十分", "万一", "一"] {
            assert_eq!(read(text, 0), None, "{text}");
        }
    }
}
