//! Which tool calls are risky enough for a review before they run: shell commands that delete,
//! overwrite or reach the network, and writes over files that exist. The command words are a
//! list the analyst can replace.

use serde::{Deserialize, Serialize};

/// The command words that make a shell call risky, and whether a write over an existing file
/// is. Stored with the execution's options.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RiskyCalls {
    /// Review before a risky call at all (off by default: it costs a model call each time).
    pub enabled: bool,
    /// Words that, as a command in a shell line, make it risky.
    pub commands: Vec<String>,
    /// Whether writing over an existing file with write_file is risky.
    pub overwrites: bool,
}

impl Default for RiskyCalls {
    fn default() -> Self {
        Self {
            enabled: false,
            commands: [
                // Deleting and overwriting.
                "rm",
                "rmdir",
                "shred",
                "unlink",
                "truncate",
                "dd",
                "mkfs",
                "mv",
                "cp",
                "tee",
                "chmod",
                "chown",
                "find -delete",
                "git reset",
                "git clean",
                "git push",
                "sed -i", // Reaching the network.
                "curl",
                "wget",
                "ssh",
                "scp",
                "rsync",
                "nc",
                "ncat",
                "telnet",
                "ftp",
                "pip install",
                "npm install",
                "apt",
                "apt-get",
            ]
            .into_iter()
            .map(str::to_owned)
            .collect(),
            overwrites: true,
        }
    }
}

/// Whether a call is risky under `rules`. `exists` tells whether a workspace file exists (for
/// write_file); it is only asked for writes.
pub fn is_risky(
    rules: &RiskyCalls,
    tool: &str,
    arguments: &serde_json::Value,
    exists: impl FnOnce(&str) -> bool,
) -> Option<String> {
    match tool {
        "shell" => {
            let command = arguments.get("command")?.as_str()?;
            if let Some(word) = rules.commands.iter().find(|w| mentions(command, w)) {
                return Some(format!("the command runs `{word}`"));
            }
            // `>` that is not `>>`, `2>&1` or a comparison inside [[ ]]: an overwrite.
            if overwrites_by_redirect(command) {
                return Some("the command overwrites a file with `>`".into());
            }
            None
        }
        "write_file" if rules.overwrites => {
            let path = arguments.get("path")?.as_str()?;
            exists(path).then(|| format!("it writes over the existing file {path}"))
        }
        _ => None,
    }
}

/// Whether `command` runs `word` (possibly two words) as a command: at the start of the line or
/// after a separator (`;`, `&&`, `||`, `|`, `(`, `$(`, a backtick, `sudo`, `xargs`).
fn mentions(command: &str, word: &str) -> bool {
    let words: Vec<&str> = word.split_whitespace().collect();
    let Some(first) = words.first() else {
        return false;
    };
    let tokens: Vec<&str> = command
        .split(|c: char| c.is_whitespace())
        .filter(|t| !t.is_empty())
        .collect();
    for (i, token) in tokens.iter().enumerate() {
        let bare = token.trim_start_matches(['(', '`', '$', '{']);
        let name = bare.rsplit('/').next().unwrap_or(bare);
        if name != *first {
            continue;
        }
        let at_command = i == 0
            || matches!(
                tokens[i - 1],
                ";" | "&&" | "||" | "|" | "sudo" | "xargs" | "exec" | "then" | "do"
            )
            || tokens[i - 1].ends_with([';', '|', '&'])
            || bare.len() != token.len();
        // The rest of a two-word entry (`git push`, `sed -i`) must follow anywhere after it.
        let rest_follows = words[1..]
            .iter()
            .all(|w| tokens[i + 1..].iter().any(|t| t == w));
        if at_command && rest_follows {
            return true;
        }
    }
    false
}

fn overwrites_by_redirect(command: &str) -> bool {
    let bytes = command.as_bytes();
    for (i, b) in bytes.iter().enumerate() {
        if *b != b'>' {
            continue;
        }
        let prev = i.checked_sub(1).map(|p| bytes[p]);
        let next = bytes.get(i + 1).copied();
        if prev == Some(b'>') || next == Some(b'>') || next == Some(b'&') || prev == Some(b'&') {
            continue;
        }
        // `2>` to /dev/null is harmless.
        let target = command[i + 1..].trim_start();
        if target.starts_with("/dev/null") {
            continue;
        }
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn shell(command: &str) -> Option<String> {
        is_risky(
            &RiskyCalls::default(),
            "shell",
            &json!({ "command": command }),
            |_| false,
        )
    }

    #[test]
    fn deleting_overwriting_and_network_commands_are_risky() {
        assert!(shell("rm -rf build").is_some());
        assert!(shell("cd out && /bin/rm data.csv").is_some());
        assert!(shell("ls | xargs rm").is_some());
        assert!(shell("curl -s https://example.com").is_some());
        assert!(shell("git push origin main").is_some());
        assert!(shell("echo total > report.txt").is_some());
        assert!(shell("sed -i 's/a/b/' f.txt").is_some());
    }

    #[test]
    fn reading_appending_and_words_inside_arguments_are_not() {
        assert!(shell("grep -n rm notes.txt").is_none());
        assert!(shell("echo total >> report.txt").is_none());
        assert!(shell("python3 transform.py 2>&1").is_none());
        assert!(shell("ls 2>/dev/null").is_none());
        assert!(shell("git status").is_none());
        assert!(shell("sed 's/a/b/' f.txt").is_none());
    }

    #[test]
    fn a_write_is_risky_only_over_an_existing_file() {
        let rules = RiskyCalls::default();
        let args = json!({ "path": "out.csv", "content": "x" });
        assert!(is_risky(&rules, "write_file", &args, |_| true).is_some());
        assert!(is_risky(&rules, "write_file", &args, |_| false).is_none());
    }
}
