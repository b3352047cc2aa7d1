//! Who could approve: the tenant's members with their permissions and ties,
//! and who approved a request.

use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use crate::access::ties::Ties;
use crate::approvals::quorum::{Candidate, Colleagues};

/// Active members with their role's permissions and the grants behind
/// their membership and their role, and the ties those grants make.
pub async fn candidates(pool: &PgPool, tenant: Uuid) -> Result<Colleagues, sqlx::Error> {
    let mut members: Vec<Candidate> = sqlx::query!(
        r#"SELECT u.id AS user_id, u.email, r.id AS role_id, r.name AS role_name,
                  COALESCE((SELECT array_agg(permission) FROM role_permissions WHERE role_id = r.id), '{}')
                    AS "permissions!"
           FROM memberships m JOIN users u ON u.id = m.user_id JOIN roles r ON r.id = m.role_id
           WHERE m.tenant_id = $1 AND u.disabled_at IS NULL"#,
        tenant,
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| Candidate {
        user_id: r.user_id,
        email: r.email,
        role_id: r.role_id,
        role_name: r.role_name,
        permissions: r.permissions,
        grants: Vec::new(),
    })
    .collect();
    let grants = crate::access::store::grants(pool, tenant).await?;
    for m in &mut members {
        m.grants = grants
            .iter()
            .filter(|g| match g.user_id {
                Some(user) => user == m.user_id,
                None => g.role_id == m.role_id,
            })
            .cloned()
            .collect();
    }
    let roles = members.iter().map(|m| (m.user_id, m.role_id)).collect();
    Ok(Colleagues {
        ties: Ties::new(&grants, &roles),
        members,
    })
}

/// The members whose approval a request holds, earliest first.
pub async fn approvers<'e>(db: impl PgExecutor<'e>, request: Uuid) -> Result<Vec<Uuid>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT approver_id FROM approval_decisions WHERE request_id = $1 AND decision = 'approve' \
         ORDER BY created_at",
        request,
    )
    .fetch_all(db)
    .await
}

/// The current roles of the members whose approvals count.
pub async fn approver_role_names<'e>(
    db: impl PgExecutor<'e>,
    request: Uuid,
) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT ro.name FROM approval_decisions d JOIN action_requests r ON r.id = d.request_id \
         JOIN memberships m ON m.user_id = d.approver_id AND m.tenant_id = r.tenant_id \
         JOIN roles ro ON ro.id = m.role_id \
         WHERE d.request_id = $1 AND d.decision = 'approve' AND d.digest = r.digest",
        request,
    )
    .fetch_all(db)
    .await
}
