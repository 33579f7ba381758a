//! The literal recogniser's classifier per word: which [`LiteralKind`] a word (or a string listed
//! verbatim) is, if any.

use super::LiteralKind;

const UNITS: &[&str] = &[
    "%", "eur", "usd", "cny", "rmb", "gbp", "jpy", "chf", "ms", "µs", "us", "ns", "s", "sec",
    "secs", "second", "seconds", "min", "mins", "minute", "minutes", "h", "hr", "hrs", "hour",
    "hours", "d", "day", "days", "week", "weeks", "month", "months", "year", "years", "b", "bytes",
    "kb", "mb", "gb", "tb", "pb", "kib", "mib", "gib", "tib", "k", "m", "bn", "rows", "lines",
    "tokens", "files", "records", "items", "users", "requests", "req/s", "rps", "qps", "cores",
    "vcpu", "vcpus", "nodes", "pods", "replicas", "ops/s", "px", "km", "kg", "mbps", "gbps", "hz",
    "mhz", "ghz", "°c", "pct", "percent", "元", "万", "亿",
];
const MAGNITUDE_SUFFIX: &[&str] = &["k", "m", "b", "bn", "kb", "mb", "gb", "tb"];
const FILE_EXTS: &[&str] = &[
    "csv", "tsv", "json", "jsonl", "yaml", "yml", "toml", "xml", "txt", "md", "log", "sql", "py",
    "rs", "js", "ts", "go", "java", "sh", "ps1", "bat", "xlsx", "xls", "docx", "pdf", "parquet",
    "avro", "orc", "gz", "zip", "tar", "tgz", "png", "jpg", "ipynb", "html", "css", "ini", "cfg",
    "conf", "env", "lock", "db", "sqlite", "bak", "pem", "key", "crt",
];

/// The kind of a whole string, for literals listed verbatim.
pub(super) fn classify_whole(s: &str) -> Option<LiteralKind> {
    let first = s.chars().next()?;
    if matches!(first, '"' | '\'' | '`' | '“' | '‘' | '「' | '『' | '«') {
        return Some(LiteralKind::Quoted);
    }
    if let Some((head, tail)) = s.split_once(' ') {
        if is_plain_int(head) && is_unit(tail) {
            return Some(LiteralKind::Number);
        }
        return classify(head).map(|(k, _)| k);
    }
    match classify(s) {
        Some((k, (0, e))) if e == s.len() => Some(k),
        _ => None,
    }
}

/// Classifies one word; returns its kind and the sub-span that is the literal.
pub(super) fn classify(w: &str) -> Option<(LiteralKind, (usize, usize))> {
    let whole = (0, w.len());
    if w.len() < 2 || w.len() > 300 || w.bytes().all(|b| b.is_ascii_alphabetic()) {
        return None;
    }
    if w.contains("://") {
        let (scheme, rest) = w.split_once("://")?;
        let scheme_ok = !scheme.is_empty()
            && scheme.len() <= 20
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'.' | b'-' | b':'));
        return (scheme_ok && rest.len() >= 2).then_some((LiteralKind::Url, whole));
    }
    if let Some((k, v)) = w.split_once('=') {
        // key=value: the value is the literal; so is "=6%" after a key in Chinese ("增值税率=6%"),
        // where the word starts at the sign.
        if !v.is_empty() && !v.contains('=') {
            let off = k.len() + 1;
            return classify(v).map(|(kind, (s, e))| (kind, (s + off, e + off)));
        }
        return None;
    }
    if w.contains('@') {
        return is_email(w).then_some((LiteralKind::Email, whole));
    }
    if let Some(rest) = w.strip_prefix('#') {
        return (rest.len() >= 2 && rest.bytes().all(|b| b.is_ascii_digit()))
            .then_some((LiteralKind::Ticket, whole));
    }
    if is_windows_path(w) {
        return Some((LiteralKind::Path, whole));
    }
    if is_date(w) || is_datetime(w) || is_time(w) {
        return Some((LiteralKind::Time, whole));
    }
    if is_ipv4_like(w) || is_ipv6(w) {
        return Some((LiteralKind::Address, whole));
    }
    if w.contains('/') {
        return is_path(w).then_some((LiteralKind::Path, whole));
    }
    if is_host_port(w) {
        return Some((LiteralKind::Address, whole));
    }
    if let Some((algo, hex)) = w.split_once(':') {
        let ok = !algo.is_empty()
            && algo.len() <= 10
            && algo.bytes().all(|b| b.is_ascii_alphanumeric())
            && hex.len() >= 16
            && hex.bytes().all(|b| b.is_ascii_hexdigit());
        return ok.then_some((LiteralKind::Hash, whole));
    }
    if is_version(w) {
        return Some((LiteralKind::Version, whole));
    }
    if let Some(lit) = number_literal(w) {
        return lit.then_some((LiteralKind::Number, whole));
    }
    if is_uuid(w) {
        return Some((LiteralKind::Id, whole));
    }
    if is_hash(w) {
        return Some((LiteralKind::Hash, whole));
    }
    if is_ticket(w) {
        return Some((LiteralKind::Ticket, whole));
    }
    if w.contains('.') {
        return dotted_name(w);
    }
    is_ident(w).then_some((LiteralKind::Id, whole))
}

fn is_email(w: &str) -> bool {
    let w = w.strip_prefix("mailto:").unwrap_or(w);
    let Some((local, domain)) = w.split_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.contains('@')
        && local
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'%' | b'+' | b'-'))
        && domain.contains('.')
        && domain
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-'))
        && domain
            .rsplit('.')
            .next()
            .is_some_and(|tld| tld.len() >= 2 && tld.bytes().all(|b| b.is_ascii_alphabetic()))
}

fn is_windows_path(w: &str) -> bool {
    let b = w.as_bytes();
    let drive = b.len() > 3 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\';
    drive || w.starts_with("\\\\") || (w.starts_with('%') && w.contains("%\\"))
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// YYYY-MM-DD, YYYY/MM/DD, DD.MM.YYYY, DD/MM/YYYY.
pub(super) fn is_date(w: &str) -> bool {
    // "2026-1-3" to "2026-11-03": most words are ruled out by their length alone.
    if !(8..=10).contains(&w.len()) {
        return false;
    }
    ['-', '/', '.'].into_iter().any(|sep| {
        let mut parts = w.split(sep);
        let (Some(a), Some(b), Some(c), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return false;
        };
        if !(digits(a) && digits(b) && digits(c)) {
            return false;
        }
        let short = |p: &str| (1..=2).contains(&p.len());
        (a.len() == 4 && short(b) && short(c)) || (short(a) && short(b) && c.len() == 4)
    })
}

/// hh:mm, hh:mm:ss, hh:mm:ss.fff, with an optional attached zone (Z, +08:00).
pub(super) fn is_time(w: &str) -> bool {
    let (t, _) = split_zone(w);
    let mut parts = t.split(':');
    let (Some(h), Some(m)) = (parts.next(), parts.next()) else {
        return false;
    };
    let s = parts.next();
    if parts.next().is_some() || !digits(h) || h.len() > 2 || m.len() != 2 || !digits(m) {
        return false;
    }
    let ok_hm = h.parse::<u32>().is_ok_and(|h| h <= 24) && m.parse::<u32>().is_ok_and(|m| m < 60);
    let ok_s = s.is_none_or(|s| {
        let (sec, frac) = s.split_once('.').unwrap_or((s, "0"));
        sec.len() == 2 && digits(sec) && digits(frac)
    });
    ok_hm && ok_s
}

/// Splits a trailing zone (Z, +08:00, -0500) off a time.
fn split_zone(w: &str) -> (&str, &str) {
    if let Some(t) = w.strip_suffix('Z') {
        return (t, "Z");
    }
    if let Some(p) = w.rfind(['+', '-'])
        && p > 0
    {
        let z = &w[p + 1..];
        let zd: String = z.chars().filter(|&c| c != ':').collect();
        if (zd.len() == 2 || zd.len() == 4) && digits(&zd) {
            return (&w[..p], &w[p..]);
        }
    }
    (w, "")
}

pub(super) fn ends_with_zone(w: &str) -> bool {
    !split_zone(w).1.is_empty()
}

/// 2026-11-03T14:05:00Z and friends.
fn is_datetime(w: &str) -> bool {
    match w.split_once(['T', 't']) {
        Some((d, t)) => is_date(d) && is_time(t),
        None => false,
    }
}

pub(super) fn is_zone(w: &str) -> bool {
    if matches!(w, "UTC" | "GMT" | "Z") {
        return true;
    }
    if let Some(off) = w.strip_prefix("UTC").or_else(|| w.strip_prefix("GMT")) {
        return off.starts_with(['+', '-'])
            && off[1..].chars().all(|c| c.is_ascii_digit() || c == ':');
    }
    if w.starts_with(['+', '-']) {
        let d: String = w[1..].chars().filter(|&c| c != ':').collect();
        return (d.len() == 2 || d.len() == 4) && digits(&d);
    }
    (3..=5).contains(&w.len())
        && w.bytes().all(|b| b.is_ascii_uppercase())
        && (w.ends_with('T') || w.ends_with("ST"))
}

/// Four dotted octets, with an optional port or prefix length.
fn is_ipv4_like(w: &str) -> bool {
    let (ip, rest) = match w.find([':', '/']) {
        Some(p) => (&w[..p], &w[p + 1..]),
        None => (w, ""),
    };
    let parts: Vec<&str> = ip.split('.').collect();
    let ok = parts.len() == 4
        && parts
            .iter()
            .all(|p| digits(p) && p.len() <= 3 && p.parse::<u32>().is_ok_and(|n| n <= 255));
    ok && (w.len() == ip.len() || digits(rest))
}

fn is_ipv6(w: &str) -> bool {
    let w = w.split('%').next().unwrap_or(w);
    let colons = w.matches(':').count();
    if !(w.contains("::") || colons == 7) || !(2..=7).contains(&colons) {
        return false;
    }
    let groups_ok = w
        .split(':')
        .all(|g| g.len() <= 4 && g.bytes().all(|b| b.is_ascii_hexdigit()));
    groups_ok && w.bytes().any(|b| b.is_ascii_digit()) && w.len() >= 3
}

fn is_hostname(h: &str) -> bool {
    !h.is_empty()
        && h.split('.').all(|l| {
            !l.is_empty()
                && l.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
                && l.as_bytes()[0].is_ascii_alphanumeric()
        })
        && h.bytes().any(|b| b.is_ascii_alphabetic())
}

fn is_host_port(w: &str) -> bool {
    let Some((host, port)) = w.rsplit_once(':') else {
        return false;
    };
    digits(port)
        && port.len() <= 5
        && port.parse::<u32>().is_ok_and(|p| (1..=65_535).contains(&p))
        && is_hostname(host)
}

fn is_path(w: &str) -> bool {
    if !w.bytes().any(|b| b.is_ascii_alphanumeric()) {
        return false;
    }
    let rooted =
        w.starts_with('/') || w.starts_with("./") || w.starts_with("../") || w.starts_with("~/");
    if rooted {
        return w.len() >= 2;
    }
    let last = w.rsplit('/').next().unwrap_or("");
    let with_ext = last.rsplit_once('.').is_some_and(|(stem, ext)| {
        !stem.is_empty()
            && !ext.is_empty()
            && ext.len() <= 10
            && ext.bytes().all(|b| b.is_ascii_alphanumeric())
    });
    let dir = w.ends_with('/') && w.len() > 2;
    let segments_ok = w.split('/').all(|s| {
        s.bytes().all(|b| {
            b.is_ascii_alphanumeric()
                || matches!(
                    b,
                    b'.' | b'_' | b'-' | b'~' | b'*' | b'@' | b'+' | b'#' | b':'
                )
        })
    });
    segments_ok && (with_ext || dir)
}

fn is_version(w: &str) -> bool {
    let (v, prefixed) = match w.strip_prefix(['v', 'V']) {
        Some(v) => (v, true),
        None => (w, false),
    };
    let core_end = v.find(['-', '+']).unwrap_or(v.len());
    let (core, tail) = v.split_at(core_end);
    let parts: Vec<&str> = core.split('.').collect();
    let core_ok = parts.iter().all(|p| digits(p) && p.len() <= 6);
    let tail_ok = tail.is_empty()
        || (tail.len() > 1
            && tail[1..]
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+')));
    core_ok && tail_ok && (parts.len() == 3 || (prefixed && parts.len() >= 2 && parts.len() <= 4))
}

pub(super) fn is_plain_int(w: &str) -> bool {
    digits(w.trim_start_matches(['-', '+']))
}

pub(super) fn is_unit(w: &str) -> bool {
    let lower = w.to_lowercase();
    UNITS.contains(&lower.as_str())
}

/// `Some(true)` for a number worth keeping exactly, `Some(false)` for a number that is not
/// (a small plain integer), `None` for something that is not a number.
fn number_literal(w: &str) -> Option<bool> {
    let mut s = w.trim_start_matches(['+', '-', '−', '~', '≈']);
    let mut currency = false;
    for c in ['$', '€', '£', '¥'] {
        if let Some(r) = s.strip_prefix(c) {
            s = r;
            currency = true;
        }
    }
    let num_end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == ','))
        .map_or(s.len(), |(i, _)| i);
    let (num, suffix) = s.split_at(num_end);
    if num.is_empty() || !num.starts_with(|c: char| c.is_ascii_digit()) || num.ends_with(['.', ','])
    {
        return None;
    }
    let dots = num.matches('.').count();
    if let Some((int, frac)) = num.rsplit_once(',')
        && (1..=2).contains(&frac.len())
    {
        // A decimal comma, with dots (or nothing) grouping the thousands: `567,89`,
        // `1.234.567,89`.
        let groups: Vec<&str> = int.split('.').collect();
        let grouped = groups[0].len() <= 3 && groups[1..].iter().all(|g| g.len() == 3);
        return (frac.bytes().all(|b| b.is_ascii_digit())
            && !int.contains(',')
            && (groups.len() == 1 || grouped)
            && (suffix.is_empty() || is_unit(suffix) || suffix == "%"))
            .then_some(true);
    }
    if dots > 1 {
        return None;
    }
    let thousands = num.contains(',');
    if thousands {
        let int = num.split('.').next().unwrap_or(num);
        let groups: Vec<&str> = int.split(',').collect();
        if groups[0].len() > 3 || groups[1..].iter().any(|g| g.len() != 3) {
            return None;
        }
    }
    let lower = suffix.to_lowercase();
    let percent = lower == "%";
    let unit = !lower.is_empty()
        && (UNITS.contains(&lower.as_str()) || MAGNITUDE_SUFFIX.contains(&lower.as_str()));
    if !lower.is_empty() && !percent && !unit {
        return None;
    }
    let int_digits = num
        .split('.')
        .next()
        .map_or(0, |i| i.bytes().filter(u8::is_ascii_digit).count());
    Some(dots == 1 || currency || percent || unit || thousands || int_digits >= 5)
}

fn is_uuid(w: &str) -> bool {
    let parts: Vec<&str> = w.split('-').collect();
    parts.len() == 5
        && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
        && parts
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_hash(w: &str) -> bool {
    w.len() >= 7
        && w.bytes().all(|b| b.is_ascii_hexdigit())
        && w.bytes().any(|b| b.is_ascii_digit())
        && w.bytes().any(|b| b.is_ascii_alphabetic())
        && (w.bytes().all(|b| !b.is_ascii_uppercase())
            || w.bytes().all(|b| !b.is_ascii_lowercase()))
}

/// ABC-1234.
fn is_ticket(w: &str) -> bool {
    let Some((p, n)) = w.split_once('-') else {
        return false;
    };
    p.len() >= 2
        && p.len() <= 10
        && p.as_bytes()[0].is_ascii_uppercase()
        && p.bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && digits(n)
}

/// Host names, file names and dotted keys: `db-2.corp.internal`, `q3_report.xlsx`,
/// `retry.backoff_ms`.
fn dotted_name(w: &str) -> Option<(LiteralKind, (usize, usize))> {
    let segs: Vec<&str> = w.split('.').collect();
    let ok = segs.len() >= 2
        && segs.iter().all(|s| {
            !s.is_empty()
                && s.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        })
        && segs
            .iter()
            .any(|s| s.len() >= 2 && s.bytes().any(|b| b.is_ascii_alphabetic()))
        && segs.iter().filter(|s| s.len() >= 2).count() >= 2 - usize::from(segs.len() > 2);
    if !ok {
        return None;
    }
    let ext = segs
        .last()
        .map(|s| s.to_ascii_lowercase())
        .unwrap_or_default();
    let kind = if FILE_EXTS.contains(&ext.as_str()) {
        LiteralKind::Path
    } else {
        LiteralKind::Id
    };
    Some((kind, (0, w.len())))
}

/// Identifiers with letters and digits (`ACC-12345`, `x86_64`, `2024Q3`), or snake_case.
fn is_ident(w: &str) -> bool {
    if !w
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        || !w.as_bytes()[0].is_ascii_alphanumeric() && w.as_bytes()[0] != b'_'
    {
        return false;
    }
    let letters = w.bytes().any(|b| b.is_ascii_alphabetic());
    let has_digits = w.bytes().any(|b| b.is_ascii_digit());
    if letters && has_digits && w.len() >= 4 {
        let lower = w.to_ascii_lowercase();
        let d = lower.trim_start_matches(|c: char| c.is_ascii_digit());
        let ordinal_or_factor =
            d.len() < lower.len() && matches!(d, "st" | "nd" | "rd" | "th" | "x");
        return !ordinal_or_factor;
    }
    letters && w.contains('_') && w.trim_matches('_').len() >= 3
}
