//! Small text helpers: one item per line, truncation, prefixes and first lines.

/// One item per line: a newline inside would break parsing back.
pub(super) fn one_line(s: &str) -> String {
    if s.contains(['\n', '\r']) {
        s.split(['\n', '\r'])
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    } else {
        s.to_string()
    }
}

pub(super) fn item_line(s: &str) -> String {
    format!("- {}\n", one_line(s))
}

pub(super) fn truncate(s: &str, max_chars: usize) -> String {
    match s.char_indices().nth(max_chars) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a character boundary.
pub(super) fn prefix_bytes(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

pub(super) fn first_lines(text: &str, n: usize) -> Vec<&str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(n)
        .collect()
}

/// A hash map for the builder's lookup tables, with foldhash: several times faster than SipHash
/// on short strings, and seeded per process, so a conversation cannot be crafted to collide. The
/// tables are never iterated, so their order cannot show in the output.
pub(super) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// A hash set, as [`FastMap`].
pub(super) type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;
