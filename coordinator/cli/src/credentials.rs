//! The credentials file `login` writes and every remote command reads:
//! `credentials.toml` in `$XQ_CONFIG_DIR`, else
//! `$XDG_CONFIG_HOME/xq-coordinator`, else `~/.config/xq-coordinator`.
//!
//! It holds one login per coordinator (its URL, the user, the token's name
//! and text), the newest last; a token is sent only to the coordinator it
//! was made by. The file is private: it is written to a new file created
//! with mode 0600 in the same directory (made with mode 0700 if missing),
//! synced, and renamed over the old one, so a reader never sees half a
//! file and the token is never readable by others, not even for a moment.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde::{Deserialize, Serialize};
use xq_proto::atomic_file;

/// The environment variable that names the directory of the credentials
/// file, before the XDG rules (for tests and several identities).
pub const DIR_VAR: &str = "XQ_CONFIG_DIR";

/// The file's name in its directory.
pub const FILE_NAME: &str = "credentials.toml";

/// One coordinator's login.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Login {
    /// The coordinator's URL as given to `login`, without a trailing `/`.
    pub coordinator: String,
    pub user: String,
    /// The token's name on the coordinator (for `logout`).
    pub token_name: String,
    /// The personal token's text.
    pub token: String,
}

/// Every login, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    #[serde(default, rename = "login")]
    pub logins: Vec<Login>,
}

/// A coordinator URL as the file keys it: without trailing slashes.
pub fn key(url: &str) -> &str {
    url.trim_end_matches('/')
}

impl Credentials {
    /// The login for the coordinator at `url`.
    pub fn for_coordinator(&self, url: &str) -> Option<&Login> {
        self.logins.iter().find(|l| key(&l.coordinator) == key(url))
    }

    /// The newest login: the coordinator a command talks to when none is given.
    pub fn newest(&self) -> Option<&Login> {
        self.logins.last()
    }

    /// Adds `login`, replacing (and returning) the login for the same
    /// coordinator; it becomes the newest.
    pub fn insert(&mut self, login: Login) -> Option<Login> {
        let old = self.remove(&login.coordinator);
        self.logins.push(login);
        old
    }

    /// Removes the login for the coordinator at `url`.
    pub fn remove(&mut self, url: &str) -> Option<Login> {
        let at = self
            .logins
            .iter()
            .position(|l| key(&l.coordinator) == key(url))?;
        Some(self.logins.remove(at))
    }
}

/// The credentials file's path from the environment: `$XQ_CONFIG_DIR`,
/// `$XDG_CONFIG_HOME/xq-coordinator` or `$HOME/.config/xq-coordinator`
/// (empty variables count as unset).
pub fn path() -> anyhow::Result<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let dir = if let Some(dir) = var(DIR_VAR) {
        PathBuf::from(dir)
    } else if let Some(config) = var("XDG_CONFIG_HOME") {
        PathBuf::from(config).join("xq-coordinator")
    } else if let Some(home) = var("HOME") {
        PathBuf::from(home).join(".config").join("xq-coordinator")
    } else {
        bail!("no configuration directory: set {DIR_VAR}, XDG_CONFIG_HOME or HOME");
    };
    Ok(dir.join(FILE_NAME))
}

/// The credentials in `file`; none if it does not exist.
pub fn load(file: &Path) -> anyhow::Result<Credentials> {
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Credentials::default()),
        Err(e) => return Err(e).with_context(|| format!("cannot read {}", file.display())),
    };
    warn_if_shared(file);
    toml::from_str(&text).with_context(|| format!("{} is not a credentials file", file.display()))
}

/// Warns when others may read `file` (a token in it is then as good as
/// theirs).
fn warn_if_shared(file: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(file)
            && meta.permissions().mode() & 0o077 != 0
        {
            eprintln!(
                "warning: {} may be read by others (mode {:o}); `chmod 600` it",
                file.display(),
                meta.permissions().mode() & 0o777
            );
        }
    }
}

/// Writes `credentials` to `file` privately and atomically (see the module
/// docs); with no logins left, removes the file.
pub fn save(file: &Path, credentials: &Credentials) -> anyhow::Result<()> {
    if credentials.logins.is_empty() {
        return match std::fs::remove_file(file) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(e).with_context(|| format!("cannot remove {}", file.display()))
            }
            _ => Ok(()),
        };
    }
    let dir = file
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    private_dir(dir)?;
    let text = format!(
        "# Written by `xq-coordinator login`: personal tokens, keep private.\n{}",
        toml::to_string(credentials).context("cannot write the credentials")?
    );
    atomic_file::write_private(file, text.as_bytes())
        .with_context(|| format!("cannot write {}", file.display()))
}

/// Creates `dir` (mode 0700) and its parents if missing.
fn private_dir(dir: &Path) -> anyhow::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn login(url: &str, user: &str) -> Login {
        Login {
            coordinator: url.to_owned(),
            user: user.to_owned(),
            token_name: format!("{user}-login"),
            token: format!("xqt_{user}"),
        }
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xq-cred-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn one_login_per_coordinator_the_newest_last() {
        let mut c = Credentials::default();
        assert!(c.insert(login("http://a:1/", "ana")).is_none());
        c.insert(login("http://b:2", "bo"));
        assert_eq!(c.newest().unwrap().user, "bo");
        let old = c.insert(login("http://a:1", "cy")).unwrap();
        assert_eq!(old.user, "ana");
        assert_eq!(c.logins.len(), 2);
        assert_eq!(c.newest().unwrap().user, "cy");
        assert_eq!(c.for_coordinator("http://b:2/").unwrap().user, "bo");
        assert!(c.for_coordinator("http://c:3").is_none());
        assert_eq!(c.remove("http://b:2").unwrap().user, "bo");
        assert!(c.remove("http://b:2").is_none());
    }

    #[test]
    fn the_file_is_private_round_trips_and_goes_when_empty() {
        let dir = temp_dir("save");
        let file = dir.join("nested").join(FILE_NAME);
        let mut c = Credentials::default();
        c.insert(login("http://a:1", "ana"));
        save(&file, &c).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&file), 0o600);
            assert_eq!(mode(file.parent().unwrap()), 0o700);
        }
        assert_eq!(load(&file).unwrap(), c);
        c.insert(login("http://b:2", "bo"));
        save(&file, &c).unwrap();
        assert_eq!(load(&file).unwrap(), c);
        let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers, [FILE_NAME], "no temporary file is left");
        save(&file, &Credentials::default()).unwrap();
        assert!(!file.exists());
        assert_eq!(load(&file).unwrap(), Credentials::default());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_garbled_file_is_an_error_naming_it() {
        let dir = temp_dir("garbled");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join(FILE_NAME);
        std::fs::write(&file, "login = 3").unwrap();
        let err = load(&file).unwrap_err();
        assert!(
            format!("{err:#}").contains("not a credentials file"),
            "{err:#}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
