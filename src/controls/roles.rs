//! Changes to roles' permissions (the roles matrix) as a control of the
//! approval gate.

use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::access::store as access;
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};
use crate::audit::Event;
use crate::audit::{self, outcome, NewRecord};

pub struct PermissionsChangeAction;

/// One role's new permissions, and what changes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoleDiff {
    pub role_id: Uuid,
    pub role_name: String,
    pub permissions: Vec<String>,
    pub added: Vec<String>,
    pub removed: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PermissionsChange {
    pub roles: Vec<RoleDiff>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Applied {}

impl Action for PermissionsChangeAction {
    type Payload = PermissionsChange;
    type Progress = Applied;

    const KIND: Kind = Kind {
        key: "role_permissions",
        label: "Role permission changes",
        read_permission: Permission::RolesManage,
        request_permission: Permission::RolesManage,
        approve_permission: Permission::RolesManage,
    };
    const CONTROL: bool = true;

    fn default_policy(&self) -> Policy {
        Policy::four_eyes()
    }

    fn describe(&self, c: &PermissionsChange) -> Vec<Fact> {
        c.roles
            .iter()
            .map(|r| {
                let mut parts = Vec::new();
                if !r.added.is_empty() {
                    parts.push(format!("adds {}", r.added.join(", ")));
                }
                if !r.removed.is_empty() {
                    parts.push(format!("removes {}", r.removed.join(", ")));
                }
                Fact::new(&r.role_name, parts.join("; "))
            })
            .collect()
    }

    async fn execute(
        &self,
        run: &mut Run<'_, Applied>,
        c: &PermissionsChange,
    ) -> Result<Step<PermissionsChange>, ExecError> {
        let request = run.request;
        let mut tx = run.pool.begin().await?;
        let mut records = Vec::new();
        for r in &c.roles {
            if access::role(run.pool, request.tenant_id, r.role_id)
                .await?
                .is_none()
            {
                return Ok(Step::Failed(format!(
                    "The role '{}' was deleted meanwhile.",
                    r.role_name
                )));
            }
            access::set_permissions(
                &mut tx,
                request.tenant_id,
                r.role_id,
                &r.permissions,
                &r.added,
                run.grant_authors().await?,
            )
            .await?;
            records.push(
                NewRecord::new(
                    &crate::approvals::gate_actor(),
                    Some(request.tenant_id),
                    Event::RolesPermissionsChanged,
                    format!("role:{}", r.role_id),
                    outcome::SUCCESS,
                )
                .with_details(
                    json!({"role": r.role_name, "added": r.added, "removed": r.removed,
                                     "requested_by": request.requester_email, "request": request.id}),
                ),
            );
        }
        audit::store::append_in(&mut tx, &records).await?;
        tx.commit().await?;
        Ok(Step::Done(format!(
            "Permissions of {} role(s) changed.",
            c.roles.len()
        )))
    }
}
