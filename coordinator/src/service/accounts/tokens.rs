//! A user's own tokens, made at sign-in or on request, listed and revoked;
//! and the token a request carries, looked up.

use super::{Accounts, FoundToken, TokenRow, user_of};
use crate::access::tokens::TokenHash;
use crate::access::{Role, UserRole, may_revoke};
use crate::events::Actor;
use crate::store::tokens as token_rows;
use crate::store::{StoreError, now_ms, users, workers};

impl Accounts {
    /// Stores the token with `hash` under `name` with `role` for `actor`'s
    /// own user (a token without a user makes none); its row.
    pub async fn create_token(
        &self,
        actor: Actor,
        name: String,
        role: Role,
        hash: TokenHash,
    ) -> Result<TokenRow, StoreError> {
        let owner = user_of(&actor)?;
        token_rows::check_name(&name)?;
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let row = token_rows::add(&tx, &actor, &name, role, owner, &hash, now_ms())?;
                tx.commit()?;
                Ok(row)
            })
            .await
    }

    /// The tokens of `actor`'s user, oldest first; with `all_users`,
    /// every user's, which only an admin may ask for.
    pub async fn tokens(
        &self,
        actor: &Actor,
        all_users: bool,
    ) -> Result<Vec<TokenRow>, StoreError> {
        // The database file's administrator holds no token: it sees everyone's.
        if actor.is_local_admin() && (all_users || actor.owner().is_none()) {
            return self.store.call(|conn| token_rows::list(conn)).await;
        }
        let caller = user_of(actor)?;
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

    /// Revokes the token `name` for `actor`: their own, or, for an admin,
    /// anyone's. False if it was revoked already.
    pub async fn revoke_token(&self, actor: Actor, name: String) -> Result<bool, StoreError> {
        // The database file's administrator revokes anyone's token.
        let caller = match actor.is_local_admin() {
            true => None,
            false => Some(user_of(&actor)?),
        };
        self.store
            .call(move |conn| {
                let tx = conn.savepoint()?;
                let token = token_rows::by_name(&tx, &name)?.ok_or_else(|| {
                    StoreError::NotFound(format!("no token named {}", xq_proto::quote(&name)))
                })?;
                if let Some(caller) = caller {
                    let user = users::by_id(&tx, caller)?;
                    if !may_revoke(user.role, caller, token.user_id) {
                        return Err(StoreError::Forbidden(format!(
                            "token {} is not yours; a {} may revoke only their own tokens",
                            xq_proto::quote(&name),
                            user.role.as_str()
                        )));
                    }
                }
                let revoked = token_rows::revoke_as(&tx, &actor, &name, now_ms())?;
                tx.commit()?;
                Ok(revoked)
            })
            .await
    }

    /// The working (unrevoked) stored token with `hash`, for the auth
    /// layer (which has checked nothing yet: this is how it learns who
    /// calls).
    pub async fn token(&self, hash: TokenHash) -> Result<Option<FoundToken>, StoreError> {
        self.store
            .call(move |conn| token_rows::lookup(conn, &hash))
            .await
    }

    /// How many stored tokens are not revoked (a server without any, and
    /// without ephemeral ones, refuses every call).
    pub async fn working_tokens(&self) -> Result<usize, StoreError> {
        let all = self.store.call(|conn| token_rows::list(conn)).await?;
        Ok(all.iter().filter(|t| t.revoked_ms.is_none()).count())
    }

    /// The key of the token that registered `worker_id`: `None` for an
    /// unknown worker, `Some(None)` for one registered before tokens
    /// existed.
    pub async fn worker_token(&self, worker_id: u64) -> Result<Option<Option<i64>>, StoreError> {
        self.store
            .call(move |conn| workers::token_key(conn, worker_id))
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::access::tokens::hash;
    use crate::store::Store;

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
        Actor::user(user, "t")
    }

    #[tokio::test]
    async fn users_revoke_their_own_tokens_and_admins_anyones() {
        let store = Store::open_in_memory().unwrap();
        let (ana, bo, root) = two_users(&store).await;
        let accounts = Accounts::new(store);
        let a = |n: &str, user: u64, role: Role| {
            accounts.create_token(actor(user), n.to_owned(), role, hash(n))
        };
        a("ana-1", ana, Role::Personal).await.unwrap();
        a("ana-box", ana, Role::Worker).await.unwrap();
        a("bo-1", bo, Role::Personal).await.unwrap();
        let mine: Vec<String> = accounts
            .tokens(&actor(ana), false)
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(mine, ["ana-1", "ana-box"]);
        let err = accounts.tokens(&actor(bo), true).await.unwrap_err();
        assert!(matches!(err, StoreError::Forbidden(_)), "{err}");
        assert_eq!(accounts.tokens(&actor(root), true).await.unwrap().len(), 3);

        let err = accounts
            .revoke_token(actor(bo), "ana-1".to_owned())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("is not yours"), "{err}");
        let err = accounts
            .revoke_token(actor(ana), "nobody".to_owned())
            .await
            .unwrap_err();
        assert!(matches!(err, StoreError::NotFound(_)), "{err}");
        assert!(
            accounts
                .revoke_token(actor(ana), "ana-box".to_owned())
                .await
                .unwrap()
        );
        assert!(
            !accounts
                .revoke_token(actor(ana), "ana-box".to_owned())
                .await
                .unwrap()
        );
        assert!(
            accounts
                .revoke_token(actor(root), "bo-1".to_owned())
                .await
                .unwrap()
        );
        let err = a("ana-1", ana, Role::Personal).await.unwrap_err();
        assert!(err.to_string().contains("exists already"), "{err}");
    }
}
