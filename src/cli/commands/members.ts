/**
 * `engram org member ...`: who may see an organisation on the dashboard. How an operator
 * of an invite-only Engram lets people in, and gives an org made with the CLI (which has
 * no members) to its users.
 */
import { JSON_OPTION, positional, seg, type Command, type CommandContext, type Io } from '../command.js';
import { printResult, printTable, shortTime } from '../output.js';

interface AddedJson {
  user_id: string;
  email: string;
  org_id: string;
  invited: boolean;
  invite_url?: string;
  expires_at?: string;
}

interface MemberJson {
  user_id: string;
  email: string;
  invited: boolean;
  created_at: string;
}

const membersPath = (org: string) => `/v0/orgs/${seg(org)}/members`;

/** Gives `email`'s user the organisation (idempotent), or invites an email without an account. */
export async function addMember(context: CommandContext, org: string, email: string): Promise<AddedJson> {
  return context.api().post<AddedJson>(membersPath(org), { email });
}

/** What `addMember` did, in words: added, or the invitation link (shown once). */
export function sayAdded(io: Io, added: AddedJson, orgName: string): void {
  if (!added.invited) {
    io.out(`Added ${added.email} (user ${added.user_id}) to organisation "${orgName}"; they see it when they log in.`);
    return;
  }
  io.out(`Invited ${added.email} (user ${added.user_id}) to organisation "${orgName}". Send them this link to choose a password:`);
  io.out(`  ${added.invite_url}`);
  io.out(`It is shown only now and expires in 7 days (${shortTime(added.expires_at)} UTC); running this again makes a new one.`);
}

export const memberCommands: Command[] = [
  {
    path: ['org', 'member', 'add'],
    synopsis: 'ORG EMAIL [--json]',
    summary: 'Give a user an organisation; an email without an account gets an invitation link (shown once)',
    positionals: 2,
    remote: true,
    options: JSON_OPTION,
    async run(context) {
      const org = positional(context, 0, 'ORG');
      const email = positional(context, 1, 'EMAIL');
      const added = await addMember(context, org, email);
      printResult(context, added, () => sayAdded(context.io, added, org));
    },
  },
  {
    path: ['org', 'member', 'list'],
    synopsis: 'ORG [--json]',
    summary: "List an organisation's members, invited ones included",
    positionals: 1,
    remote: true,
    options: JSON_OPTION,
    async run(context) {
      const org = positional(context, 0, 'ORG');
      const { data } = await context.api().get<{ data: MemberJson[] }>(membersPath(org));
      printResult(context, data, () => {
        const rows = data.map((member) => [member.user_id, member.email, member.invited ? 'invited' : 'member', shortTime(member.created_at)]);
        printTable(context.io, ['USER ID', 'EMAIL', 'STATE', 'SINCE'], rows, `No members yet: engram org member add ${org} EMAIL`);
      });
    },
  },
  {
    path: ['org', 'member', 'remove'],
    synopsis: 'ORG USER_OR_EMAIL [--json]',
    summary: 'Take an organisation from a user; they no longer see it',
    positionals: 2,
    remote: true,
    options: JSON_OPTION,
    async run(context) {
      const org = positional(context, 0, 'ORG');
      const who = positional(context, 1, 'USER_OR_EMAIL');
      const removed = await context.api().delete<{ user_id: string; email: string }>(`${membersPath(org)}/${seg(who)}`);
      printResult(context, removed, () => context.io.out(`Removed ${removed.email} (user ${removed.user_id}) from organisation "${org}".`));
    },
  },
];
