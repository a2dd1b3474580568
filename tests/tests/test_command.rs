//! The README's test command is the one CI runs: the last command of the
//! README's set-up block is the last line of `.ci/run`, and it is an
//! executable script that ends by running the whole workspace's tests.

use std::path::Path;

fn read(relative: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    std::fs::read_to_string(root.join(relative)).unwrap_or_else(|e| panic!("{relative}: {e}"))
}

/// The commands of the README's first `sh` block (comments and continuation
/// lines joined), in order.
fn readme_commands() -> Vec<String> {
    let readme = read("README.md");
    let block = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README.md has a sh block");
    let mut commands: Vec<String> = Vec::new();
    let mut continued = false;
    for line in block.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let text = line.trim_end_matches('\\').trim();
        match commands.last_mut() {
            Some(last) if continued => {
                last.push(' ');
                last.push_str(text);
            }
            _ => commands.push(text.to_owned()),
        }
        continued = line.ends_with('\\');
    }
    commands
}

#[test]
fn ci_runs_exactly_the_readme_test_command() {
    let commands = readme_commands();
    assert_eq!(
        commands.len(),
        2,
        "two commands set everything up: {commands:?}"
    );
    let test_command = &commands[1];
    let ci = read(".ci/run");
    let last = ci
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('#'))
        .expect(".ci/run has commands");
    assert_eq!(last, test_command, "the last line of .ci/run");

    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(test_command);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&script)
            .unwrap_or_else(|e| panic!("{test_command}: {e}"))
            .permissions()
            .mode();
        assert_ne!(mode & 0o111, 0, "{test_command} is executable");
    }
    let text = read(test_command);
    let final_line = text
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty() && !l.starts_with('#'))
        .expect("the test command has commands");
    assert!(
        final_line.starts_with("cargo test --workspace"),
        "{test_command} ends with the whole suite, not {final_line:?}"
    );
}
