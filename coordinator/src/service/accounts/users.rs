//! Users: listed, added and changed by admins (approvers trust
//! developers), signed up, and their passwords.

use super::{Accounts, User, at_least, user_of};
use crate::access::UserRole;
use crate::events::{Actor, EventKind};
use crate::store::{StoreError, events, now_ms, sessions, users};

/// A user to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewUser {
    pub name: String,
    pub role: UserRole,
    /// `None`: the user cannot sign in until a password is set.
    pub password_hash: Option<String>,
    /// Approvers and admins are trusted whatever this says.
    pub trusted: bool,
}

/// A change of a user; `None` keeps what is stored.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UserChange {
    pub role: Option<UserRole>,
    pub trusted: Option<bool>,
}

fn trust(trusted: bool) -> &'static str {
    if trusted { ", trusted" } else { "" }
}

impl Accounts {
    /// Every user, by name.
    pub async fn users(&self) -> Result<Vec<User>, StoreError> {
        self.store.call(|conn| users::list(conn)).await
    }

    /// How many users have a password, so can sign in and get a personal
    /// token.
    pub async fn users_who_sign_in(&self) -> Result<usize, StoreError> {
        Ok(self
            .users()
            .await?
            .iter()
            .filter(|u| u.has_password)
            .count())
    }

    /// Every user, by name, for `actor`, an admin.
    pub async fn users_for(&self, actor: Actor) -> Result<Vec<User>, StoreError> {
        self.store
            .call(move |conn| {
                at_least(conn, &actor, UserRole::Admin)?;
                users::list(conn)
            })
            .await
    }

    /// The user the command line on the database file acts for: `name`
    /// (who must exist), else the administrator `admin`, made (role admin,
    /// no password) when missing.
    pub async fn named_or_admin(&self, name: Option<String>) -> Result<u64, StoreError> {
        self.store
            .call(move |conn| users::named_or_admin(conn, name.as_deref(), now_ms()))
            .await
    }

    /// The user named `name`, if any.
    pub async fn user_named(&self, name: String) -> Result<Option<User>, StoreError> {
        self.store
            .call(move |conn| users::by_name(conn, &name))
            .await
    }

    /// The id of the user `name`, made as a trusted `role` without a
    /// password (so without an event: nobody can sign in as it) when
    /// missing: the user local mode's ephemeral tokens act as.
    pub async fn ensure_user(&self, name: String, role: UserRole) -> Result<u64, StoreError> {
        self.store
            .call(move |conn| users::ensure(conn, &name, role, now_ms()))
            .await
    }

    /// Adds `new` (approvers and admins are always trusted), by `actor`, an
    /// admin; the user's id.
    pub async fn add_user(&self, actor: Actor, new: NewUser) -> Result<u64, StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                at_least(&tx, &actor, UserRole::Admin)?;
                let now = now_ms();
                let trusted = new.trusted || new.role >= UserRole::Approver;
                let hash = new.password_hash.as_deref();
                let id = users::insert(&tx, &new.name, new.role, hash, trusted, now)?;
                let detail = format!(
                    "added {} ({}{})",
                    new.name,
                    new.role.as_str(),
                    trust(trusted)
                );
                events::log(&tx, &actor, EventKind::User, None, &detail, now)?;
                tx.commit()?;
                Ok(id)
            })
            .await
    }

    /// Changes the user `name` as `change` says (approvers and admins are
    /// always trusted), by `actor`: an admin sets roles and trust, an
    /// approver trusts or distrusts a developer, and nobody changes their
    /// own role.
    pub async fn set_user(
        &self,
        actor: Actor,
        name: String,
        change: UserChange,
    ) -> Result<(), StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let mine = at_least(&tx, &actor, UserRole::Approver)?;
                let user = users::by_name(&tx, &name)?.ok_or_else(|| {
                    StoreError::NotFound(format!("no user named {}", xq_proto::quote(&name)))
                })?;
                let role = change.role.unwrap_or(user.role);
                if role != user.role && mine < UserRole::Admin {
                    return Err(StoreError::Forbidden(
                        "only an admin changes roles".to_owned(),
                    ));
                }
                if role != user.role && actor.user == Some(user.id) {
                    return Err(StoreError::Forbidden(
                        "nobody changes their own role (ask another admin)".to_owned(),
                    ));
                }
                if mine < UserRole::Admin && user.role > UserRole::Developer {
                    return Err(StoreError::Forbidden(
                        "an approver trusts developers only".to_owned(),
                    ));
                }
                let trusted = change.trusted.unwrap_or(user.trusted) || role >= UserRole::Approver;
                users::set_role(&tx, &user.name, role, trusted)?;
                let detail = format!("set {} to {}{}", user.name, role.as_str(), trust(trusted));
                events::log(&tx, &actor, EventKind::User, None, &detail, now_ms())?;
                tx.commit()?;
                Ok(())
            })
            .await
    }

    /// A new untrusted developer `name` with the password `password_hash`,
    /// who signed up themselves (open to anyone where the door offers
    /// sign-up: the web view's setting decides); their id.
    pub async fn sign_up(&self, name: String, password_hash: String) -> Result<u64, StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                let role = UserRole::Developer;
                let id = users::insert(&tx, &name, role, Some(&password_hash), false, now)?;
                let detail = format!("{name} signed up (developer, untrusted)");
                let actor = Actor::user(id, &name);
                events::log(&tx, &actor, EventKind::User, None, &detail, now)?;
                tx.commit()?;
                Ok(id)
            })
            .await
    }

    /// Sets the password of `actor`'s own user (checked against the
    /// current one by the caller) and ends every session of theirs; how
    /// many ended.
    pub async fn change_password(
        &self,
        actor: Actor,
        password_hash: String,
    ) -> Result<usize, StoreError> {
        let id = user_of(&actor)?;
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let now = now_ms();
                let user = users::by_id(&tx, id)?;
                users::set_password(&tx, id, &password_hash)?;
                let ended = sessions::delete_for_user(&tx, id)?;
                let detail = format!("{} changed their password", user.name);
                events::log(&tx, &actor, EventKind::User, None, &detail, now)?;
                tx.commit()?;
                Ok(ended)
            })
            .await
    }

    /// The user `name` and their password's hash, for signing in; `None`
    /// for an unknown name or a user without a password.
    pub async fn password_of(&self, name: String) -> Result<Option<(User, String)>, StoreError> {
        self.store
            .call(move |conn| {
                let Some(user) = users::by_name(conn, &name)? else {
                    return Ok(None);
                };
                Ok(users::password_hash(conn, &name)?.map(|hash| (user, hash)))
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::EventFilter;
    use crate::store::Store;

    fn new(name: &str, role: UserRole) -> NewUser {
        NewUser {
            name: name.to_owned(),
            role,
            password_hash: None,
            trusted: false,
        }
    }

    #[tokio::test]
    async fn admins_add_and_change_users_approvers_trust_developers() {
        let store = Store::open_in_memory().unwrap();
        let accounts = Accounts::new(store.clone());
        let root = accounts
            .add_user(Actor::cli(), new("root", UserRole::Admin))
            .await
            .unwrap();
        let root = Actor::user(root, "root");
        let bo = accounts
            .add_user(root.clone(), new("bo", UserRole::Approver))
            .await
            .unwrap();
        let bo = Actor::user(bo, "bo");
        let ana = accounts
            .add_user(root.clone(), new("ana", UserRole::Developer))
            .await
            .unwrap();
        let ana = Actor::user(ana, "ana");
        let err = accounts
            .add_user(ana.clone(), new("eve", UserRole::Admin))
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "this needs the admin role; you are developer"
        );
        let trust = UserChange {
            role: None,
            trusted: Some(true),
        };
        accounts
            .set_user(bo.clone(), "ana".to_owned(), trust)
            .await
            .unwrap();
        let promote = UserChange {
            role: Some(UserRole::Approver),
            trusted: None,
        };
        let err = accounts
            .set_user(bo.clone(), "ana".to_owned(), promote)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "only an admin changes roles");
        let err = accounts
            .set_user(bo.clone(), "root".to_owned(), trust)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "an approver trusts developers only");
        let demote = UserChange {
            role: Some(UserRole::Developer),
            trusted: None,
        };
        let err = accounts
            .set_user(root.clone(), "root".to_owned(), demote)
            .await
            .unwrap_err();
        assert!(
            err.to_string().contains("nobody changes their own role"),
            "{err}"
        );
        let err = accounts
            .set_user(Actor::cli(), "nobody".to_owned(), demote)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "no user named \"nobody\"");
        accounts
            .set_user(Actor::cli(), "ana".to_owned(), promote)
            .await
            .unwrap();
        let ana_now = accounts
            .user_named("ana".to_owned())
            .await
            .unwrap()
            .unwrap();
        assert_eq!((ana_now.role, ana_now.trusted), (UserRole::Approver, true));

        let filter = EventFilter {
            kind: Some(EventKind::User),
            limit: 10,
            ..Default::default()
        };
        let logged: Vec<(String, String)> = store
            .call(move |conn| events::list(conn, &filter))
            .await
            .unwrap()
            .into_iter()
            .map(|e| (e.actor, e.detail))
            .collect();
        assert_eq!(
            logged,
            [
                ("cli", "set ana to approver, trusted"),
                ("bo", "set ana to developer, trusted"),
                ("root", "added ana (developer)"),
                ("root", "added bo (approver, trusted)"),
                ("cli", "added root (admin, trusted)"),
            ]
            .map(|(a, d)| (a.to_owned(), d.to_owned()))
        );
    }
}
