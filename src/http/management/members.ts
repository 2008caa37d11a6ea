/**
 * `/v0/orgs/:org/members`: who may see an organisation on the dashboard (admin only).
 * An operator of an invite-only Engram, or of orgs made with the CLI (which have no
 * members), gives people access here; the logic is `accounts/invitations.ts`.
 */
import type { FastifyPluginAsync } from 'fastify';
import { z } from 'zod';
import type { User } from '../../domain/account-records.js';
import type { Deps } from '../../deps.js';
import { findOrg, type OrgParams } from './access.js';
import { parseBody } from './validate.js';
import { isoTime, Time } from './wire.js';

interface MemberParams extends OrgParams {
  user: string;
}

export const MemberBody = z
  .strictObject({ email: z.string().min(1).max(320).describe('Their email; an account is invited when none has it') })
  .meta({ id: 'NewMember' });

export const MemberJson = z
  .object({
    user_id: z.string(),
    email: z.string(),
    invited: z.boolean().describe('Invited and not yet accepted (no password chosen)'),
    created_at: Time,
  })
  .meta({ id: 'Member' });

const Added = { user_id: z.string(), email: z.string(), org_id: z.string() };

export const MemberAddedJson = z.object({ ...Added, invited: z.literal(false) }).meta({ id: 'MemberAdded' });

export const MemberInvitedJson = z
  .object({
    ...Added,
    invited: z.literal(true),
    invite_url: z.string().describe('Opens the page where they choose a password; shown only in this answer'),
    expires_at: Time,
  })
  .meta({ id: 'MemberInvited' });

export const MemberRemovedJson = z.object({ ...Added, removed: z.literal(true) }).meta({ id: 'MemberRemoved' });

function memberWire(user: User): z.output<typeof MemberJson> {
  return { user_id: user.id, email: user.email, invited: user.invitation !== undefined, created_at: isoTime(user.createdAt) };
}

export const memberRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  const { control } = deps;

  app.post<{ Params: OrgParams }>('/v0/orgs/:org/members', async (request, reply) => {
    const org = await findOrg(control, request.params.org);
    const { email } = parseBody(MemberBody, request.body);
    const { user, invitation } = await deps.accounts.invitations.addMember(org.id, email);
    const added = { user_id: user.id, email: user.email, org_id: org.id };
    if (!invitation) return { ...added, invited: false } satisfies z.output<typeof MemberAddedJson>;
    request.log.info({ user: user.id, org: org.id }, 'a user was invited');
    return reply.code(201).send({
      ...added,
      invited: true,
      invite_url: `${deps.publicUrl()}/invite/${invitation.token}`,
      expires_at: isoTime(invitation.expiresAt),
    } satisfies z.output<typeof MemberInvitedJson>);
  });

  app.get<{ Params: OrgParams }>('/v0/orgs/:org/members', async (request) => {
    const org = await findOrg(control, request.params.org);
    return { data: (await deps.accounts.invitations.listMembers(org.id)).map(memberWire) };
  });

  app.delete<{ Params: MemberParams }>('/v0/orgs/:org/members/:user', async (request) => {
    const org = await findOrg(control, request.params.org);
    const user = await deps.accounts.invitations.removeMember(org.id, request.params.user);
    return { user_id: user.id, email: user.email, org_id: org.id, removed: true } satisfies z.output<typeof MemberRemovedJson>;
  });
};
