//! A user's own tokens through the wire: made at sign-in or on request,
//! listed and revoked. Each change is one transaction on the write store
//! together with its `token` event, and who may make it is decided inside
//! that transaction (an admin's role read there, not from a cache).

use crate::access::tokens::TokenHash;
use crate::access::{Role, UserRole, may_revoke};
use crate::events::Actor;
use crate::store::tokens::{self as token_rows, TokenRow};
use crate::store::{Store, StoreError, now_ms, users};

/// The write store, for token changes.
#[derive(Debug, Clone)]
pub struct Accounts {
    store: Store,
}

impl Accounts {
    pub fn new(store: Store) -> Self {
        Accounts { store }
    }

    /// Stores the token with `hash` under `name` with `role` for the user
    /// `owner`, made by `actor`; returns its row.
    pub async fn create(
        &self,
        actor: Actor,
        owner: u64,
        name: String,
        role: Role,
        hash: TokenHash,
    ) -> Result<TokenRow, StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let row = token_rows::add(&tx, &actor, &name, role, owner, &hash, now_ms())?;
                tx.commit()?;
                Ok(row)
            })
            .await
    }

    /// The tokens of the user `caller`, oldest first; with `all_users`,
    /// every user's, which only an admin may ask for.
    pub async fn list(&self, caller: u64, all_users: bool) -> Result<Vec<TokenRow>, StoreError> {
        self.store
            .call(move |conn| {
                if !all_users {
                    return token_rows::of_user(conn, caller);
                }
                let user = users::by_id(conn, caller)?;
                if user.role != UserRole::Admin {
                    return Err(StoreError::Forbidden(format!(
                        "a {} may list only their own tokens",
                        user.role.as_str()
                    )));
                }
                token_rows::list(conn)
            })
            .await
    }

    /// Revokes the token `name` for the user `caller` (by `actor`): their
    /// own, or, for an admin, anyone's. False if it was revoked already.
    pub async fn revoke(
        &self,
        actor: Actor,
        caller: u64,
        name: String,
    ) -> Result<bool, StoreError> {
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let token = token_rows::by_name(&tx, &name)?.ok_or_else(|| {
                    StoreError::NotFound(format!("no token named {}", xq_proto::quote(&name)))
                })?;
                let user = users::by_id(&tx, caller)?;
                if !may_revoke(user.role, caller, token.user_id) {
                    return Err(StoreError::Forbidden(format!(
                        "token {} is not yours; a {} may revoke only their own tokens",
                        xq_proto::quote(&name),
                        user.role.as_str()
                    )));
                }
                let revoked = token_rows::revoke_as(&tx, &actor, &name, now_ms())?;
                tx.commit()?;
                Ok(revoked)
            })
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::tokens::hash;

    async fn two_users(store: &Store) -> (u64, u64, u64) {
        store
            .call(|conn| {
                let ana = users::insert(conn, "ana", UserRole::Developer, None, false, 1)?;
                let bo = users::insert(conn, "bo", UserRole::Approver, None, true, 1)?;
                let root = users::insert(conn, "root", UserRole::Admin, None, true, 1)?;
                Ok((ana, bo, root))
            })
            .await
            .unwrap()
    }

    fn actor(user: u64) -> Actor {
        Actor {
            user: Some(user),
            name: "t".to_owned(),
        }
    }

    #[tokio::test]
    async fn users_revoke_their_own_tokens_and_admins_anyones() {
        let store = Store::open_in_memory().unwrap();
        let (ana, bo, root) = two_users(&store).await;
        let accounts = Accounts::new(store);
        let a = |n: &str, user: u64, role: Role| {
            accounts.create(actor(user), user, n.to_owned(), role, hash(n))
        };
        a("ana-1", ana, Role::Personal).await.unwrap();
        a("ana-box", ana, Role::Worker).await.unwrap();
        a("bo-1", bo, Role::Personal).await.unwrap();
        let mine: Vec<String> = accounts
            .list(ana, false)
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(mine, ["ana-1", "ana-box"]);
        let err = accounts.list(bo, true).await.unwrap_err();
        assert!(matches!(err, StoreError::Forbidden(_)), "{err}");
        assert_eq!(accounts.list(root, true).await.unwrap().len(), 3);

        let err = accounts
            .revoke(actor(bo), bo, "ana-1".to_owned())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("is not yours"), "{err}");
        let err = accounts
            .revoke(actor(ana), ana, "nobody".to_owned())
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::NotFound(_)), "{err}");
        assert!(
            accounts
                .revoke(actor(ana), ana, "ana-box".to_owned())
                .await
                .unwrap()
        );
        assert!(
            !accounts
                .revoke(actor(ana), ana, "ana-box".to_owned())
                .await
                .unwrap()
        );
        assert!(
            accounts
                .revoke(actor(root), root, "bo-1".to_owned())
                .await
                .unwrap()
        );
        let err = a("ana-1", ana, Role::Personal).await.unwrap_err();
        assert!(err.to_string().contains("exists already"), "{err}");
    }
}
