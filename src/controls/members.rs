//! A member's role change as a control of the approval gate.

use serde::{Deserialize, Serialize};
use serde_json::json;
use uuid::Uuid;

use crate::access::permissions::Permission;
use crate::access::{permissions, store as access};
use crate::approvals::{Action, ExecError, Fact, Run, Step};
use crate::approvals::{Kind, Policy};
use crate::audit::Event;
use crate::audit::{self, outcome, NewRecord};

pub struct RoleChangeAction;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RoleChange {
    pub user_id: Uuid,
    pub email: String,
    pub from_role: String,
    pub to_role_id: Uuid,
    pub to_role: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Applied {}

impl Action for RoleChangeAction {
    type Payload = RoleChange;
    type Progress = Applied;

    const KIND: Kind = Kind {
        key: "member_role",
        label: "Member role changes",
        read_permission: Permission::MembersManage,
        request_permission: Permission::MembersManage,
        approve_permission: Permission::MembersManage,
    };
    const CONTROL: bool = true;

    fn default_policy(&self) -> Policy {
        Policy::four_eyes()
    }

    fn describe(&self, c: &RoleChange) -> Vec<Fact> {
        vec![
            Fact::new("Member", c.email.clone()),
            Fact::new("Role now", c.from_role.clone()),
            Fact::new("New role", c.to_role.clone()),
        ]
    }

    async fn execute(
        &self,
        run: &mut Run<'_, Applied>,
        c: &RoleChange,
    ) -> Result<Step<RoleChange>, ExecError> {
        let request = run.request;
        let mut tx = run.pool.begin().await?;
        let Some(current) = access::member(run.pool, request.tenant_id, c.user_id).await? else {
            return Ok(Step::Failed(format!("{} is no longer a member.", c.email)));
        };
        if current.role_name == permissions::OWNER
            && c.to_role != permissions::OWNER
            && access::other_owners(&mut tx, request.tenant_id, c.user_id).await? == 0
        {
            return Ok(Step::Failed(format!(
                "{} is the last owner. Make someone else an owner first.",
                c.email
            )));
        }
        access::set_member_role(
            &mut tx,
            request.tenant_id,
            c.user_id,
            c.to_role_id,
            run.grant_authors().await?,
        )
        .await?;
        audit::store::append_in(
            &mut tx,
            &[NewRecord::new(
                &crate::approvals::gate_actor(),
                Some(request.tenant_id),
                Event::MembersRoleChanged,
                format!("user:{}", c.user_id),
                outcome::SUCCESS,
            )
            .with_details(
                json!({"email": c.email, "from": current.role_name, "to": c.to_role,
                                 "requested_by": request.requester_email, "request": request.id}),
            )],
        )
        .await?;
        tx.commit().await?;
        Ok(Step::Done(format!("{} now has the {} role.", c.email, c.to_role)))
    }
}
